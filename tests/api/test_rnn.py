"""nn.RNN / LSTM / GRU, their cells and nn.utils.rnn against torch 2.13.

The module cases live in tests/rnn_cases.py (pure NumPy: parameters, inputs and the loss
from seeds); tools/record_torch_rnn.py ran them under torch 2.13 and printed `TORCH`
below: state_dict keys, output shapes, and two random projections of every output and of
every gradient (input, initial states, each parameter).  The same function runs here with
tracegrad, in float64.
"""
from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import tracegrad as tg
import tracegrad.nn as nn
from tracegrad.nn.utils import rnn as R
from rnn_cases import CASES, run_case

# torch 2.13 (tools/record_torch_rnn.py)
TORCH = {'rnn_tanh': {'keys': ['weight_ih_l0', 'weight_hh_l0', 'bias_ih_l0', 'bias_hh_l0'],
              'shapes': {'out': [5, 2, 4], 'h_n': [1, 2, 4]},
              'fp': {'out': [-0.9644601245023714, -4.723039834271543],
                     'h_n': [0.13978758112488998, 3.3915157057178753],
                     'grad_x': [0.11441965687277192, -2.0523287345280203],
                     'grad_weight_ih_l0': [3.38546864858753, -4.467124251800358],
                     'grad_weight_hh_l0': [4.882521956823329, 2.304446339030033],
                     'grad_bias_ih_l0': [3.4169814037222643, -0.3426725478145171],
                     'grad_bias_hh_l0': [-4.406696589718268, 1.4724298431888034]}},
 'rnn_relu_2l_bi_bf': {'keys': ['weight_ih_l0', 'weight_hh_l0', 'bias_ih_l0', 'bias_hh_l0',
                                'weight_ih_l0_reverse', 'weight_hh_l0_reverse',
                                'bias_ih_l0_reverse', 'bias_hh_l0_reverse', 'weight_ih_l1',
                                'weight_hh_l1', 'bias_ih_l1', 'bias_hh_l1', 'weight_ih_l1_reverse',
                                'weight_hh_l1_reverse', 'bias_ih_l1_reverse',
                                'bias_hh_l1_reverse'],
                       'shapes': {'out': [3, 4, 8], 'h_n': [4, 3, 4]},
                       'fp': {'out': [1.7399532802073976, -1.4761337538820491],
                              'h_n': [2.297591641684769, -3.161185795186161],
                              'grad_x': [1.8529580693795848, 3.223546348930493],
                              'grad_h0': [1.282157605247592, 0.6608357655049466],
                              'grad_weight_ih_l0': [-6.2747801704227015, -5.397329338995068],
                              'grad_weight_hh_l0': [1.361125000634606, -0.8215941016832176],
                              'grad_bias_ih_l0': [11.050473292039959, -15.224763771731755],
                              'grad_bias_hh_l0': [-15.682771221066295, 4.413398283640581],
                              'grad_weight_ih_l0_reverse': [2.1639303392165017, 1.4414630778155342],
                              'grad_weight_hh_l0_reverse': [2.717116104855018, -0.6859906257094361],
                              'grad_bias_ih_l0_reverse': [-1.6813867019122823, 2.577048906922337],
                              'grad_bias_hh_l0_reverse': [2.0048132698559273, 1.8991251143951786],
                              'grad_weight_ih_l1': [12.308569558406155, -7.651074631926226],
                              'grad_weight_hh_l1': [1.471208449094168, 1.0642898399840468],
                              'grad_bias_ih_l1': [-3.2557450736436806, 4.379482499232144],
                              'grad_bias_hh_l1': [6.125333836402509, -16.808782136546572],
                              'grad_weight_ih_l1_reverse': [5.635686449351196, -4.113959996237934],
                              'grad_weight_hh_l1_reverse': [2.567773626050273, -0.9534348247350695],
                              'grad_bias_ih_l1_reverse': [7.620559022789684, 9.111159916059233],
                              'grad_bias_hh_l1_reverse': [7.036956413810918, -18.270201835766226]}},
 'lstm': {'keys': ['weight_ih_l0', 'weight_hh_l0', 'bias_ih_l0', 'bias_hh_l0'],
          'shapes': {'out': [5, 2, 4], 'h_n': [1, 2, 4], 'c_n': [1, 2, 4]},
          'fp': {'out': [-0.8327058585462987, 0.09355531006529172],
                 'h_n': [0.024399813000547575, -0.49550305475466255],
                 'c_n': [-0.17282532724836688, -0.6100791326622041],
                 'grad_x': [1.040699388234949, -2.5160590869613553],
                 'grad_h0': [-0.23099001704781233, -0.17166415748464067],
                 'grad_h1': [0.7247724389634234, 0.15533514019217312],
                 'grad_weight_ih_l0': [6.918590036373383, 2.704207898361569],
                 'grad_weight_hh_l0': [-1.157837980235151, 0.8203352287522828],
                 'grad_bias_ih_l0': [0.3874896822100936, -2.70465042630656],
                 'grad_bias_hh_l0': [4.8623481234022154, 2.1484571321925876]}},
 'lstm_2l_bi': {'keys': ['weight_ih_l0', 'weight_hh_l0', 'bias_ih_l0', 'bias_hh_l0',
                         'weight_ih_l0_reverse', 'weight_hh_l0_reverse', 'bias_ih_l0_reverse',
                         'bias_hh_l0_reverse', 'weight_ih_l1', 'weight_hh_l1', 'bias_ih_l1',
                         'bias_hh_l1', 'weight_ih_l1_reverse', 'weight_hh_l1_reverse',
                         'bias_ih_l1_reverse', 'bias_hh_l1_reverse'],
                'shapes': {'out': [4, 2, 8], 'h_n': [4, 2, 4], 'c_n': [4, 2, 4]},
                'fp': {'out': [0.6177195295928426, -0.15833608543850547],
                       'h_n': [1.2567017458594032, -0.6788210304654745],
                       'c_n': [0.39041715057358944, 1.1890853406921043],
                       'grad_x': [-0.975127066707324, 1.8628101761065303],
                       'grad_h0': [-0.14187888237323779, 0.15934050783365988],
                       'grad_h1': [0.9532760874857551, -3.2243481553674673],
                       'grad_weight_ih_l0': [2.7515521878632354, -1.8674786589189343],
                       'grad_weight_hh_l0': [1.3493537617113107, 0.5025509346666902],
                       'grad_bias_ih_l0': [-0.6185886469807429, -1.6638616197056766],
                       'grad_bias_hh_l0': [1.8825820517435925, 1.5380471553044404],
                       'grad_weight_ih_l0_reverse': [0.32626553442548933, -1.1594119446888085],
                       'grad_weight_hh_l0_reverse': [0.23570480235487407, 0.4214531510983175],
                       'grad_bias_ih_l0_reverse': [1.1365074376988105, -1.2468261040219353],
                       'grad_bias_hh_l0_reverse': [3.8151158204437654, -0.4351585370050613],
                       'grad_weight_ih_l1': [-0.7406828177687044, -0.6313279294427765],
                       'grad_weight_hh_l1': [-1.5713600925996278, -0.582883452432916],
                       'grad_bias_ih_l1': [1.2836705816426672, 0.33121684298808685],
                       'grad_bias_hh_l1': [3.456548390750867, 2.0088929035177667],
                       'grad_weight_ih_l1_reverse': [-1.2074047646885067, -0.3796928798486461],
                       'grad_weight_hh_l1_reverse': [0.714886082263857, -0.35337906718476025],
                       'grad_bias_ih_l1_reverse': [1.486539534917899, -0.34888591528524404],
                       'grad_bias_hh_l1_reverse': [-2.1252880178983724, 0.2760651773227869]}},
 'lstm_proj_nobias': {'keys': ['weight_ih_l0', 'weight_hh_l0', 'weight_hr_l0', 'weight_ih_l1',
                               'weight_hh_l1', 'weight_hr_l1'],
                      'shapes': {'out': [3, 2, 2], 'h_n': [2, 2, 2], 'c_n': [2, 2, 5]},
                      'fp': {'out': [0.21318892743011741, 0.003885415837661511],
                             'h_n': [0.0630798787883712, 0.15622944255512256],
                             'c_n': [1.1846787481969947, 0.7151764218703104],
                             'grad_x': [-0.16472655453040402, 0.4128252995104176],
                             'grad_h0': [0.6752292833200952, 0.4406819533139763],
                             'grad_h1': [0.9944200887352044, 0.5500859162401056],
                             'grad_weight_ih_l0': [0.156098605407268, 2.2209233096174876],
                             'grad_weight_hh_l0': [-0.012971969967089695, 0.1391864509883962],
                             'grad_weight_hr_l0': [0.0776756302390163, 1.308421224943962],
                             'grad_weight_ih_l1': [-0.008646558471784867, 0.15404310278939587],
                             'grad_weight_hh_l1': [0.07873529805317742, -0.4345686991418435],
                             'grad_weight_hr_l1': [1.9472042850053908, -0.04222298382058934]}},
 'lstm_unbatched': {'keys': ['weight_ih_l0', 'weight_hh_l0', 'bias_ih_l0', 'bias_hh_l0'],
                    'shapes': {'out': [4, 4], 'h_n': [1, 4], 'c_n': [1, 4]},
                    'fp': {'out': [-0.07758734037104581, 0.18433484215126836],
                           'h_n': [0.3866470280338185, 0.03846726620955075],
                           'c_n': [1.7565770776868657, -0.3114617023192056],
                           'grad_x': [-0.1190416546664859, -0.45878022831882725],
                           'grad_h0': [0.004486807567092944, -0.17869963369990435],
                           'grad_h1': [0.6646254435465697, 0.19242600088904954],
                           'grad_weight_ih_l0': [-1.771697069199531, 0.07840964654812221],
                           'grad_weight_hh_l0': [0.09618291143261269, 0.3220472748328512],
                           'grad_bias_ih_l0': [-1.332911580014558, 0.17750963913520257],
                           'grad_bias_hh_l0': [-0.06135645760568903, -0.511383457617653]}},
 'gru': {'keys': ['weight_ih_l0', 'weight_hh_l0', 'bias_ih_l0', 'bias_hh_l0'],
         'shapes': {'out': [5, 2, 4], 'h_n': [1, 2, 4]},
         'fp': {'out': [0.9277040856560059, -1.3756495916683442],
                'h_n': [0.9439450797609635, -0.7103298013831442],
                'grad_x': [0.5968845925514016, 0.4478395074804775],
                'grad_h0': [1.9031013345756271, 0.8770137930531768],
                'grad_weight_ih_l0': [-8.286824155353422, -8.251773090452321],
                'grad_weight_hh_l0': [-3.505777481804224, 0.2889315308226392],
                'grad_bias_ih_l0': [1.8271163319982333, -6.191885118059189],
                'grad_bias_hh_l0': [2.635601245778378, -0.07564344247871913]}},
 'gru_2l_bi_bf': {'keys': ['weight_ih_l0', 'weight_hh_l0', 'bias_ih_l0', 'bias_hh_l0',
                           'weight_ih_l0_reverse', 'weight_hh_l0_reverse', 'bias_ih_l0_reverse',
                           'bias_hh_l0_reverse', 'weight_ih_l1', 'weight_hh_l1', 'bias_ih_l1',
                           'bias_hh_l1', 'weight_ih_l1_reverse', 'weight_hh_l1_reverse',
                           'bias_ih_l1_reverse', 'bias_hh_l1_reverse'],
                  'shapes': {'out': [3, 4, 6], 'h_n': [4, 3, 3]},
                  'fp': {'out': [0.8904658758884041, 0.4458412862966985],
                         'h_n': [0.8858907063150022, -2.2372492669098163],
                         'grad_x': [-1.5797455668231077, -1.9489545775128212],
                         'grad_weight_ih_l0': [-1.171262411965113, -3.6451729849290686],
                         'grad_weight_hh_l0': [0.7010500077363666, -1.705977972015574],
                         'grad_bias_ih_l0': [2.534281869179489, 0.8241297469276626],
                         'grad_bias_hh_l0': [0.08149514299510097, -5.326580392723669],
                         'grad_weight_ih_l0_reverse': [-3.293986481346701, -3.714882962444524],
                         'grad_weight_hh_l0_reverse': [-0.12320752674254823, -0.0746410197646212],
                         'grad_bias_ih_l0_reverse': [-0.587620939291187, 0.1588933487293171],
                         'grad_bias_hh_l0_reverse': [0.08566409599724759, -0.48973044261253357],
                         'grad_weight_ih_l1': [-4.090115017982841, -3.192247319258403],
                         'grad_weight_hh_l1': [1.3324221896331696, 0.7069526419180368],
                         'grad_bias_ih_l1': [7.283151752637246, 3.6159979514460354],
                         'grad_bias_hh_l1': [3.2568278244432207, 0.2136469114549291],
                         'grad_weight_ih_l1_reverse': [-0.2700940085876907, 0.7998932856089248],
                         'grad_weight_hh_l1_reverse': [0.5650026258879253, -0.9814526401036935],
                         'grad_bias_ih_l1_reverse': [0.6916014108987549, 0.17063012808709443],
                         'grad_bias_hh_l1_reverse': [1.516773656193178, 2.40656781195845]}},
 'lstm_packed_bi': {'keys': ['weight_ih_l0', 'weight_hh_l0', 'bias_ih_l0', 'bias_hh_l0',
                             'weight_ih_l0_reverse', 'weight_hh_l0_reverse', 'bias_ih_l0_reverse',
                             'bias_hh_l0_reverse', 'weight_ih_l1', 'weight_hh_l1', 'bias_ih_l1',
                             'bias_hh_l1', 'weight_ih_l1_reverse', 'weight_hh_l1_reverse',
                             'bias_ih_l1_reverse', 'bias_hh_l1_reverse'],
                    'shapes': {'out': [5, 4, 8], 'h_n': [4, 4, 4], 'c_n': [4, 4, 4]},
                    'fp': {'out': [-0.19069717633428251, -0.19733800011326333],
                           'h_n': [0.9509348344777941, 0.07825484879950084],
                           'c_n': [-6.362156812992323, -0.1331012095809601],
                           'grad_x': [1.4218672276478976, -0.1105319799991511],
                           'grad_h0': [-0.5677543460781163, -0.08118790021214406],
                           'grad_h1': [6.028972329529852, -0.3500855627715706],
                           'grad_weight_ih_l0': [2.9579635821321073, 0.18820884695493195],
                           'grad_weight_hh_l0': [1.6392507202802773, 3.8145561115058912],
                           'grad_bias_ih_l0': [-0.18891097463506878, 1.8930484867961277],
                           'grad_bias_hh_l0': [3.788267401620185, 1.4064754723120367],
                           'grad_weight_ih_l0_reverse': [-6.792362336623277, 2.44783535090211],
                           'grad_weight_hh_l0_reverse': [-0.8540429420156073, 0.1684257191348978],
                           'grad_bias_ih_l0_reverse': [1.1221901029047647, -1.5078578785382595],
                           'grad_bias_hh_l0_reverse': [-1.8983217810653348, -3.382580496188907],
                           'grad_weight_ih_l1': [0.8669321740181739, 2.488976462329732],
                           'grad_weight_hh_l1': [-2.0218285203506206, 1.7052196047910346],
                           'grad_bias_ih_l1': [3.5310286431806777, -2.224979368952771],
                           'grad_bias_hh_l1': [-2.8977371234442733, 1.3214521771405632],
                           'grad_weight_ih_l1_reverse': [-1.2017295644205142, -2.7064894035506613],
                           'grad_weight_hh_l1_reverse': [-0.06659525059667437,
                                                         -0.05075781579726739],
                           'grad_bias_ih_l1_reverse': [2.8245936134853213, -3.3631977070380854],
                           'grad_bias_hh_l1_reverse': [4.434666315760075, -0.8861933982182231]}},
 'gru_packed_bf': {'keys': ['weight_ih_l0', 'weight_hh_l0', 'bias_ih_l0', 'bias_hh_l0',
                            'weight_ih_l0_reverse', 'weight_hh_l0_reverse', 'bias_ih_l0_reverse',
                            'bias_hh_l0_reverse'],
                   'shapes': {'out': [3, 4, 6], 'h_n': [2, 3, 3]},
                   'fp': {'out': [-0.8164577859096764, 4.0447765862053515],
                          'h_n': [1.8690429821625734, 1.1505294308764875],
                          'grad_x': [0.5491229081476515, 0.6208506330791288],
                          'grad_weight_ih_l0': [-5.632247941611258, -5.355528607002588],
                          'grad_weight_hh_l0': [-0.9748409855380383, 0.7485093175987545],
                          'grad_bias_ih_l0': [3.2202690732588954, 3.5171181408778525],
                          'grad_bias_hh_l0': [-0.10975896004142982, -5.897206899944829],
                          'grad_weight_ih_l0_reverse': [0.9226982121705894, -2.6641845839369065],
                          'grad_weight_hh_l0_reverse': [0.3060128935273218, -0.2345059592853353],
                          'grad_bias_ih_l0_reverse': [-1.306691936855842, 2.0675133598022137],
                          'grad_bias_hh_l0_reverse': [-0.3126957266856865, 1.0368493381769144]}},
 'rnn_packed': {'keys': ['weight_ih_l0', 'weight_hh_l0', 'bias_ih_l0', 'bias_hh_l0'],
                'shapes': {'out': [3, 3, 3], 'h_n': [1, 3, 3]},
                'fp': {'out': [1.5788819174255497, 0.6776669928126351],
                       'h_n': [0.2629958155393402, 4.499978932559393],
                       'grad_x': [0.6953072771892075, 1.2753067339699125],
                       'grad_h0': [1.288674764375577, 2.2125415601771823],
                       'grad_weight_ih_l0': [3.7163280670378294, -2.546800015196439],
                       'grad_weight_hh_l0': [-2.645238933373217, -9.17824613827932],
                       'grad_bias_ih_l0': [4.721514425791401, -6.107052846105173],
                       'grad_bias_hh_l0': [-5.385990431932574, -0.9581573938528634]}},
 'rnncell': {'keys': ['weight_ih', 'weight_hh', 'bias_ih', 'bias_hh'],
             'shapes': {'h': [2, 4]},
             'fp': {'h': [-0.6585788691026332, -2.3069971808270533],
                    'grad_x': [0.1269586442566386, 0.17318818546065184],
                    'grad_h0': [0.5235526712796512, -1.3629560334148663],
                    'grad_weight_ih': [-1.1646978765418972, -0.6033548226275514],
                    'grad_weight_hh': [-0.2588001841332187, 0.41206398680035217],
                    'grad_bias_ih': [1.4244371160143976, -1.6920036146282404],
                    'grad_bias_hh': [-0.5974695580669929, 0.6173127956533303]}},
 'rnncell_relu_nobias': {'keys': ['weight_ih', 'weight_hh'],
                         'shapes': {'h': [2, 4]},
                         'fp': {'h': [1.2790882220749085, -0.9490848168088988],
                                'grad_x': [-0.2359727936397401, 0.8441024783673315],
                                'grad_h0': [-0.6234049171939751, -1.2806150666536302],
                                'grad_weight_ih': [-1.2983888796126346, 1.8802482982793913],
                                'grad_weight_hh': [-1.410892715351491, -0.48827332726582884]}},
 'lstmcell': {'keys': ['weight_ih', 'weight_hh', 'bias_ih', 'bias_hh'],
              'shapes': {'h': [2, 4], 'c': [2, 4]},
              'fp': {'h': [0.1413423980518661, -0.2151590042556927],
                     'c': [-1.2264198800071364, -2.484429787319323],
                     'grad_x': [-0.6694759982885817, 0.19572030841238297],
                     'grad_h0': [-0.002725274568123104, -0.7831735270074867],
                     'grad_h1': [-0.23190927414293738, 0.0386046364218533],
                     'grad_weight_ih': [-0.11665711999800775, -1.6357184892352812],
                     'grad_weight_hh': [-0.01419527263744208, -0.8753209806474324],
                     'grad_bias_ih': [-1.027707132539599, 1.9875097595818758],
                     'grad_bias_hh': [-0.3667064027030416, -0.31743795986648593]}},
 'grucell': {'keys': ['weight_ih', 'weight_hh', 'bias_ih', 'bias_hh'],
             'shapes': {'h': [2, 4]},
             'fp': {'h': [0.3695417501063663, 0.06831619743985728],
                    'grad_x': [-0.4150847494977805, -0.3223561158215443],
                    'grad_h0': [-0.3376283421812736, 0.9412050852531073],
                    'grad_weight_ih': [-1.0164537038029335, 2.2321252453288034],
                    'grad_weight_hh': [0.10009346130268529, -0.2262150116128987],
                    'grad_bias_ih': [-0.4214616007177344, -0.3239045455431261],
                    'grad_bias_hh': [-0.3331527551895259, -0.10362299956715382]}},
 'grucell_unbatched': {'keys': ['weight_ih', 'weight_hh', 'bias_ih', 'bias_hh'],
                       'shapes': {'h': [4]},
                       'fp': {'h': [0.5809588133907531, 1.2630288624083998],
                              'grad_x': [0.19894552850703384, 0.11428823428787141],
                              'grad_weight_ih': [-0.23495762300493112, -1.1865880363945895],
                              'grad_weight_hh': [0.0, 0.0],
                              'grad_bias_ih': [-0.19331108086027143, -0.16732533268871264],
                              'grad_bias_hh': [-0.21860302553603356, -0.11810869874122551]}}}


# the slowest case (~8 s; packed sequences run in gru_packed_bf and rnn_packed, two
# bidirectional layers in lstm_2l_bi) runs in `make test-all`
@pytest.mark.parametrize("case", [
    pytest.param(c, marks=[pytest.mark.slow] * (c == "lstm_packed_bi")) for c in CASES])
def test_values_and_gradients_match_torch(case):
    got, want = run_case(tg, case), TORCH[case]
    assert got["keys"] == want["keys"]
    assert got["shapes"] == want["shapes"]
    assert set(got["fp"]) == set(want["fp"])
    for key, value in want["fp"].items():
        np.testing.assert_allclose(got["fp"][key], value, rtol=1e-9, atol=1e-11, err_msg=key)


def test_lstm_output_values_match_torch_in_float32():
    # torch 2.13: LSTM(2, 3) with every parameter 0.1 * (index % 7 - 3), x = arange / 10
    m = nn.LSTM(2, 3)
    for i, (name, p) in enumerate(m.named_parameters()):
        n = p.numel()
        p.data.copy_(tg.tensor(((np.arange(n) + i) % 7 - 3).reshape(p.shape) * 0.1,
                               dtype=tg.float32))
    x = tg.tensor(np.arange(8, dtype=np.float32).reshape(2, 2, 2) / 10)
    out, (h, c) = m(x)
    np.testing.assert_allclose(out.detach().numpy(), [
        [[-0.07142072, -0.03853215, 0.02869381], [-0.04443752, -0.06899299, 0.02285794]],
        [[-0.07372193, -0.1093786, 0.02576365], [-0.03055489, -0.14801358, 0.0166456]]],
        rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(c.detach().numpy(), [
        [[-0.12055139, -0.1795155, 0.05562277], [-0.04867101, -0.24555735, 0.03673461]]],
        rtol=1e-5, atol=1e-7)
    np.testing.assert_array_equal(h.detach().numpy(), out.detach().numpy()[1:])


# ---- constructor and forward errors: torch 2.13's types and messages -----------------------
_ERRORS = [
    (lambda: nn.LSTM(3, 4, dropout=1.5), ValueError,
     "dropout should be a number in range [0, 1] representing the probability of an element "
     "being zeroed"),
    (lambda: nn.GRU(3, 0), ValueError, "hidden_size must be greater than zero"),
    (lambda: nn.GRU(3, 4, 0), ValueError, "num_layers must be greater than zero"),
    (lambda: nn.LSTM(3, 4, proj_size=4), ValueError, "proj_size has to be smaller than hidden_size"),
    (lambda: nn.GRU(3, 4, proj_size=2), ValueError,
     "proj_size argument is only supported for LSTM, not RNN or GRU"),
    (lambda: nn.RNN(3, 4, nonlinearity="sigmoid"), ValueError,
     "Unknown nonlinearity 'sigmoid'. Select from 'tanh' or 'relu'."),
    (lambda: nn.RNN(3, 4, bias=1), TypeError, "bias should be of type bool, got: int"),
    (lambda: nn.RNN(3.0, 4), TypeError, "input_size should be of type int, got: float"),
    (lambda: nn.LSTM(3, 4)(tg.zeros(1, 2, 3, 3)), ValueError,
     "LSTM: Expected input to be 2D or 3D, got 4D instead"),
    (lambda: nn.RNN(3, 4)(tg.zeros(1, 2, 3, 3)), ValueError,
     "RNN: Expected input to be 2D or 3D, got 4D tensor instead"),
    (lambda: nn.GRU(3, 4)(tg.zeros(5, 2, 2)), RuntimeError,
     "input.size(-1) must be equal to input_size. Expected 3, got 2"),
    (lambda: nn.GRU(3, 4)(tg.zeros(5, 2, 3), tg.zeros(1, 3, 4)), RuntimeError,
     "Expected hidden size (1, 2, 4), got [1, 3, 4]"),
    (lambda: nn.LSTM(3, 4)(tg.zeros(5, 2, 3), (tg.zeros(1, 2, 4), tg.zeros(1, 2, 5))),
     RuntimeError, "Expected hidden[1] size (1, 2, 4), got [1, 2, 5]"),
    (lambda: nn.RNN(3, 4)(tg.zeros(5, 3), tg.zeros(1, 1, 4)), RuntimeError,
     "For unbatched 2-D input, hx should also be 2-D but got 3-D tensor"),
    (lambda: nn.RNN(3, 4)(tg.zeros(5, 2, 3), tg.zeros(2, 4)), RuntimeError,
     "For batched 3-D input, hx should also be 3-D but got 2-D tensor"),
    (lambda: nn.LSTM(3, 4)(tg.zeros(5, 3), (tg.zeros(1, 1, 4), tg.zeros(1, 4))), RuntimeError,
     "For unbatched 2-D input, hx and cx should also be 2-D but got (3-D, 2-D) tensors"),
    (lambda: nn.RNNCell(3, 4)(tg.zeros(5, 2, 3)), ValueError,
     "RNNCell: Expected input to be 1D or 2D, got 3D instead"),
    (lambda: nn.LSTMCell(3, 4)(tg.zeros(2, 3), (tg.zeros(2, 4), tg.zeros(1, 2, 4))), ValueError,
     "LSTMCell: Expected hx[1] to be 1D or 2D, got 3D instead"),
    (lambda: nn.GRUCell(3, 4)(tg.zeros(2, 2)), RuntimeError,
     "input has inconsistent input_size: got 2 expected 3"),
    (lambda: nn.GRUCell(3, 4)(tg.zeros(2, 3), tg.zeros(3, 4)), RuntimeError,
     "Input batch size 2 doesn't match hidden0 batch size 3"),
    (lambda: nn.GRUCell(3, 4)(tg.zeros(2, 3), tg.zeros(2, 5)), RuntimeError,
     "hidden0 has inconsistent hidden_size: got 5, expected 4"),
]


@pytest.mark.parametrize("make,exc,message", _ERRORS)
def test_errors_are_torchs(make, exc, message):
    with pytest.raises(exc) as info:
        make()
    assert str(info.value) == message   # torch 2.13


def test_dtype_mismatch_names_both_dtypes():
    with pytest.raises(ValueError, match=r"RNN input dtype \(tracegrad.float64\) does not match "
                       r"weight dtype \(tracegrad.float32\)"):
        nn.RNN(3, 4)(tg.zeros(5, 2, 3, dtype=tg.float64))


def test_dropout_with_one_layer_warns_as_torch():
    with pytest.warns(UserWarning, match="non-zero dropout expects num_layers greater than 1, "
                      "but got dropout=0.5 and num_layers=1"):
        nn.LSTM(3, 4, dropout=0.5)


@pytest.mark.parametrize("make,text", [
    (lambda: nn.LSTM(3, 4, 2, dropout=0.1, bidirectional=True, batch_first=True, proj_size=2),
     "LSTM(3, 4, proj_size=2, num_layers=2, batch_first=True, dropout=0.1, bidirectional=True)"),
    (lambda: nn.RNN(3, 4, nonlinearity="relu", bias=False), "RNN(3, 4, bias=False)"),
    (lambda: nn.GRU(2, 3), "GRU(2, 3)"),
    (lambda: nn.RNNCell(3, 4, nonlinearity="relu", bias=False),
     "RNNCell(3, 4, bias=False, nonlinearity=relu)"),
    (lambda: nn.LSTMCell(2, 3), "LSTMCell(2, 3)"),
    (lambda: nn.GRUCell(2, 3, False), "GRUCell(2, 3, bias=False)"),
])
def test_repr_is_torchs(make, text):
    assert repr(make()) == text   # torch 2.13


def test_init_is_uniform_in_one_over_sqrt_hidden():
    tg.manual_seed(0)
    m = nn.LSTM(64, 100, num_layers=2, bidirectional=True)
    bound = 1 / math.sqrt(100)
    w = np.concatenate([p.detach().numpy().ravel() for p in m.parameters()])
    assert np.abs(w).max() <= bound
    np.testing.assert_allclose(w.std(), bound / math.sqrt(3), rtol=0.02)
    assert [list(p.shape) for p in m.all_weights[2]] == [[400, 200], [400, 100], [400], [400]]
    cell = nn.GRUCell(10, 25)
    assert np.abs(cell.weight_hh.detach().numpy()).max() <= 1 / 5
    assert cell.weight_ih.shape == (75, 10) and cell.bias_hh.shape == (75,)


def test_flatten_parameters_is_accepted_and_positional_nonlinearity():
    m = nn.RNN(3, 4, 2, "relu")
    assert m.nonlinearity == "relu" and m.num_layers == 2
    assert m.flatten_parameters() is None
    x = tg.randn(5, 2, 3)
    out, h = m(x)
    assert (out.detach().numpy() >= 0).all()


def test_dropout_runs_between_layers_in_training_only():
    tg.manual_seed(1)
    m = nn.GRU(3, 4, num_layers=2, dropout=1.0)
    x = tg.randn(5, 2, 3)
    ref = nn.GRU(4, 4)
    ref.load_state_dict({k[:-1] + "0": v for k, v in m.state_dict().items() if k.endswith("l1")})
    out, h = m(x)                      # training: layer 2 sees an all-zero input
    ref_out, _ = ref(tg.zeros(5, 2, 4), h[1:].detach() * 0)
    np.testing.assert_allclose(out.detach().numpy(), ref_out.detach().numpy(), rtol=1e-6)
    m.eval()
    out_eval, _ = m(x)
    assert not np.allclose(out_eval.detach().numpy(), out.detach().numpy())


def test_states_default_to_zeros_and_batch_first_is_a_transpose():
    tg.manual_seed(2)
    m = nn.LSTM(3, 4, 2, bidirectional=True)
    mb = nn.LSTM(3, 4, 2, bidirectional=True, batch_first=True)
    mb.load_state_dict(m.state_dict())
    x = tg.randn(6, 2, 3)
    zeros = (tg.zeros(4, 2, 4), tg.zeros(4, 2, 4))
    a, (h, c) = m(x)
    b, (hb, cb) = mb(x.transpose(0, 1), zeros)
    np.testing.assert_allclose(b.transpose(0, 1).detach().numpy(), a.detach().numpy(),
                               rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(hb.detach().numpy(), h.detach().numpy(), rtol=1e-6, atol=1e-7)
    # the reverse direction's h_n is its state after step 0: the reverse half of output[0]
    np.testing.assert_allclose(h[3].detach().numpy(), a[0, :, 4:].detach().numpy(), rtol=1e-6)
    np.testing.assert_allclose(h[2].detach().numpy(), a[-1, :, :4].detach().numpy(), rtol=1e-6)


def test_packed_input_equals_running_each_sequence_alone():
    tg.manual_seed(3)
    m = nn.GRU(2, 3, bidirectional=True)
    seqs = [tg.randn(n, 2) for n in (2, 5, 3)]
    out, h = m(R.pack_sequence(seqs, enforce_sorted=False))
    padded, lengths = R.pad_packed_sequence(out)
    assert lengths.tolist() == [2, 5, 3] and lengths.dtype is tg.int64
    for i, s in enumerate(seqs):
        alone, h_alone = m(s)
        np.testing.assert_allclose(padded[:len(s), i].detach().numpy(),
                                   alone.detach().numpy(), rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(h[:, i].detach().numpy(), h_alone.detach().numpy(),
                                   rtol=1e-5, atol=1e-6)
        np.testing.assert_array_equal(padded[len(s):, i].detach().numpy(), 0.0)


# ---- nn.utils.rnn: torch 2.13's values -----------------------------------------------------
def _abc():
    a = tg.tensor(np.arange(6.0).reshape(3, 2))
    b = tg.tensor(np.arange(2.0).reshape(1, 2) + 10)
    c = tg.tensor(np.arange(4.0).reshape(2, 2) + 20)
    return a, b, c


def test_pad_sequence_matches_torch():
    a, b, c = _abc()
    # torch 2.13
    assert R.pad_sequence([a, b, c], padding_value=-1).tolist() == [
        [[0.0, 1.0], [10.0, 11.0], [20.0, 21.0]], [[2.0, 3.0], [-1.0, -1.0], [22.0, 23.0]],
        [[4.0, 5.0], [-1.0, -1.0], [-1.0, -1.0]]]
    assert R.pad_sequence([a, b, c], batch_first=True, padding_side="left").tolist() == [
        [[0.0, 1.0], [2.0, 3.0], [4.0, 5.0]], [[0.0, 0.0], [0.0, 0.0], [10.0, 11.0]],
        [[0.0, 0.0], [20.0, 21.0], [22.0, 23.0]]]
    with pytest.raises(RuntimeError, match="Expected padding_side to be one of left or right, "
                       "but got mid."):
        R.pad_sequence([a], padding_side="mid")
    with pytest.raises(RuntimeError, match="received an empty list of sequences"):
        R.pad_sequence([])
    with pytest.raises(RuntimeError, match="Expected iterable for input sequences"):
        R.pad_sequence(3)


def test_pack_and_pad_packed_match_torch():
    a, b, c = _abc()
    p = R.pack_sequence([a, b, c], enforce_sorted=False)
    # torch 2.13
    assert p.data.tolist() == [[0.0, 1.0], [20.0, 21.0], [10.0, 11.0], [2.0, 3.0],
                               [22.0, 23.0], [4.0, 5.0]]
    assert p.batch_sizes.tolist() == [3, 2, 1] and p.batch_sizes.dtype is tg.int64
    assert p.sorted_indices.tolist() == [0, 2, 1] and p.unsorted_indices.tolist() == [0, 2, 1]
    x, lengths = R.pad_packed_sequence(p, batch_first=True, padding_value=9, total_length=4)
    assert x.tolist() == [[[0.0, 1.0], [2.0, 3.0], [4.0, 5.0], [9.0, 9.0]],
                          [[10.0, 11.0], [9.0, 9.0], [9.0, 9.0], [9.0, 9.0]],
                          [[20.0, 21.0], [22.0, 23.0], [9.0, 9.0], [9.0, 9.0]]]
    assert lengths.tolist() == [3, 1, 2]
    assert [t.tolist() for t in R.unpack_sequence(p)] == [a.tolist(), b.tolist(), c.tolist()]
    sorted_pack = R.pack_sequence([a, c, b])
    assert sorted_pack.sorted_indices is None and sorted_pack.unsorted_indices is None
    ties = R.pack_padded_sequence(tg.zeros(3, 4, 1), [2, 3, 3, 2], enforce_sorted=False)
    assert ties.sorted_indices.tolist() == [1, 2, 0, 3]      # torch 2.13
    assert isinstance(p, tuple) and p._fields == ("data", "batch_sizes", "sorted_indices",
                                                  "unsorted_indices")
    assert p.double().data.dtype is tg.float64 and not p.is_cuda


def test_pack_errors_are_torchs():
    x = tg.zeros(3, 2, 1)
    with pytest.raises(RuntimeError, match="`lengths` array must be sorted in decreasing order "
                       "when `enforce_sorted` is True"):
        R.pack_padded_sequence(x, [2, 3])
    with pytest.raises(RuntimeError, match="Length of all samples has to be greater than 0, but "
                       "found an element in 'lengths' that is <= 0"):
        R.pack_padded_sequence(x, [2, 0])
    with pytest.raises(RuntimeError, match=r"Expected `len\(lengths\)` to be equal to "
                       r"batch_size, but got 3 \(batch_size=2\)"):
        R.pack_padded_sequence(x, [2, 2, 1])
    with pytest.raises(ValueError, match="Expected total_length to be at least the length of "
                       "the longest sequence in input, but got total_length=1 and max "
                       "sequence length being 3"):
        R.pad_packed_sequence(R.pack_padded_sequence(x, [3, 1]), total_length=1)


def test_gradients_flow_through_pack_and_pad():
    x = tg.tensor(np.arange(12.0).reshape(3, 2, 2), requires_grad=True)
    p = R.pack_padded_sequence(x, tg.tensor([1, 3]), enforce_sorted=False)
    y, _ = R.pad_packed_sequence(p)
    (y * y).sum().backward()
    want = 2 * np.arange(12.0).reshape(3, 2, 2)
    want[1:, 0] = 0.0          # steps past sequence 0's length are padding
    np.testing.assert_array_equal(x.grad.numpy(), want)


# ---- tg.compile --------------------------------------------------------------------------
def _lm(seed=0):
    tg.manual_seed(seed)
    emb, lstm, head = nn.Embedding(11, 6), nn.LSTM(6, 8, num_layers=2), nn.Linear(8, 11)
    model = nn.ModuleList([emb, lstm, head])
    opt = tg.optim.SGD(model.parameters(), lr=0.5)

    def step(tokens, targets):
        opt.zero_grad()
        out, _ = lstm(emb(tokens))
        loss = nn.functional.cross_entropy(head(out).reshape(-1, 11), targets.reshape(-1))
        loss.backward()
        opt.step()
        return loss
    return model, step


def test_compiled_lstm_training_step_is_one_program_and_matches_eager():
    rng = np.random.default_rng(0)
    batches = [(tg.tensor(rng.integers(0, 11, (7, 3))), tg.tensor(rng.integers(0, 11, (7, 3))))
               for _ in range(3)]
    batches.append(batches[0])
    runs = []
    for compiled in (False, True):
        model, step = _lm()
        step(*batches[0])          # eagerly first: .grad exists, so the trace is final
        fn = tg.compile(step, fullgraph=True) if compiled else step
        losses = [fn(x, y).item() for x, y in batches]
        if compiled:
            assert fn.traces == 1 and len(fn.programs) == 1
        runs.append((losses, [p.detach().numpy().copy() for p in model.parameters()]))
    np.testing.assert_allclose(runs[1][0], runs[0][0], rtol=1e-5)
    assert runs[0][0][3] < runs[0][0][0]       # batch 0 again, after three steps
    for a, b in zip(runs[0][1], runs[1][1]):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-6)
