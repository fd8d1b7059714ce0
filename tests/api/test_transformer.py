"""nn.MultiheadAttention and the transformer modules against torch 2.13 (eval mode).

The cases live in tests/transformer_cases.py; tools/record_torch_transformer.py ran them
under torch 2.13 and printed `TORCH` below (state_dict keys, output shapes, random
projections of every output and gradient, float64).
"""
from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import tracegrad as tg
import tracegrad.nn as nn
from transformer_cases import CASES, run_case

# torch 2.13 (tools/record_torch_transformer.py)
TORCH = {'mha_kdim_vdim_bias_kv_zero_attn': {'keys': ['q_proj_weight', 'k_proj_weight', 'v_proj_weight',
                                              'in_proj_bias', 'bias_k', 'bias_v', 'out_proj.weight',
                                              'out_proj.bias'],
                                     'shapes': {'out': [3, 2, 4], 'weights': [2, 2, 3, 6]},
                                     'fp': {'out': [1.0272014241430283, 0.42170864256661406],
                                            'weights': [0.5597962832915369, 0.35992154460104975],
                                            'grad_q': [0.9396032618694888, -0.0003640231762030155],
                                            'grad_k': [0.46545062518937685, 0.32950723802046766],
                                            'grad_v': [-0.32611557349168385, 0.7099956780358662],
                                            'grad_q_proj_weight': [0.11354268807697832,
                                                                   -0.7102642337642695],
                                            'grad_k_proj_weight': [0.33531319126765624,
                                                                   -0.16267993587406837],
                                            'grad_v_proj_weight': [0.25111038191487195,
                                                                   -0.9547324005278526],
                                            'grad_in_proj_bias': [-2.1420960393977304,
                                                                  1.4045052567863698],
                                            'grad_bias_k': [-0.39934703820847844,
                                                            0.8237436599134159],
                                            'grad_bias_v': [0.5930450621710409,
                                                            -0.2691507807050202],
                                            'grad_out_proj.weight': [2.0090693300488076,
                                                                     -0.5147003270250006],
                                            'grad_out_proj.bias': [-1.8040014188891704,
                                                                   -1.3828078510101987]}},
 'mha_batch_first_float_masks': {'keys': ['in_proj_weight', 'in_proj_bias', 'out_proj.weight',
                                          'out_proj.bias'],
                                 'shapes': {'out': [2, 3, 6], 'weights': [2, 3, 4]},
                                 'fp': {'out': [-0.0592893954200675, 3.2001279879474467],
                                        'weights': [2.942338625063362, 0.7352981854348548],
                                        'grad_q': [0.3589157227590863, -1.3257632904499734],
                                        'grad_k': [-0.1533652559623781, 0.1520908527543682],
                                        'grad_v': [0.36796623408995877, -0.26035420090445255],
                                        'grad_in_proj_weight': [14.336830016218165,
                                                                -4.697254405594687],
                                        'grad_in_proj_bias': [0.5777151747601781,
                                                              2.661811788948434],
                                        'grad_out_proj.weight': [1.1825712421599588,
                                                                 2.334184534677046],
                                        'grad_out_proj.bias': [-0.3909054936208633,
                                                               2.632897059252038]}},
 'mha_no_bias_unbatched': {'keys': ['in_proj_weight', 'out_proj.weight'],
                           'shapes': {'out': [3, 4], 'weights': [3, 5]},
                           'fp': {'out': [0.7543717258736159, -0.8332965877007718],
                                  'weights': [1.3298819929184864, -0.04678454655187356],
                                  'grad_q': [-0.893466633769478, 0.3388853215667837],
                                  'grad_k': [0.11811594606757203, 0.23026369385813777],
                                  'grad_v': [-0.35097725439168087, 0.32518946345614336],
                                  'grad_in_proj_weight': [-6.548530399987737, -0.6017186368905467],
                                  'grad_out_proj.weight': [-7.589389869845707,
                                                           1.7968900113553836]}},
 'encoder_layer_post_relu': {'keys': ['self_attn.in_proj_weight', 'self_attn.in_proj_bias',
                                      'self_attn.out_proj.weight', 'self_attn.out_proj.bias',
                                      'linear1.weight', 'linear1.bias', 'linear2.weight',
                                      'linear2.bias', 'norm1.weight', 'norm1.bias', 'norm2.weight',
                                      'norm2.bias'],
                             'shapes': {'out': [5, 2, 4]},
                             'fp': {'out': [1.57419830310109, 1.1475803533436593],
                                    'grad_src': [-1.9350272390738523, -1.2105564773530189],
                                    'grad_self_attn.in_proj_weight': [-0.288500840562804,
                                                                      0.9417762223725886],
                                    'grad_self_attn.in_proj_bias': [1.0913251098970638,
                                                                    -0.6074545766139032],
                                    'grad_self_attn.out_proj.weight': [4.988138998737848,
                                                                       -8.115652919922638],
                                    'grad_self_attn.out_proj.bias': [0.2626300247726632,
                                                                     -0.1767410296410561],
                                    'grad_linear1.weight': [0.3646255901270661, -4.100227132630739],
                                    'grad_linear1.bias': [1.4197559085253748, 0.1324746162243287],
                                    'grad_linear2.weight': [2.976402868587278, -0.566449210869707],
                                    'grad_linear2.bias': [0.8317157482954194, 1.7322263406657878],
                                    'grad_norm1.weight': [4.232520593544736, -1.6743914872531327],
                                    'grad_norm1.bias': [-0.6194375878805152, 0.6767316743748444],
                                    'grad_norm2.weight': [6.611335029748327, 3.1979232446398638],
                                    'grad_norm2.bias': [4.077036350340787, 0.7583697067419415]}},
 'encoder_layer_pre_gelu_bf_nobias': {'keys': ['self_attn.in_proj_weight',
                                               'self_attn.out_proj.weight', 'linear1.weight',
                                               'linear2.weight', 'norm1.weight', 'norm2.weight'],
                                      'shapes': {'out': [2, 4, 6]},
                                      'fp': {'out': [1.258257513684151, -3.8703052574074963],
                                             'grad_src': [-4.558289811407093, 0.8541138128239023],
                                             'grad_self_attn.in_proj_weight': [0.26034557674661524,
                                                                               0.5533144430327014],
                                             'grad_self_attn.out_proj.weight': [0.7117525321476391,
                                                                                0.02512170667272238],
                                             'grad_linear1.weight': [-0.3160103619850993,
                                                                     0.14749313489904922],
                                             'grad_linear2.weight': [0.4074906106846222,
                                                                     -1.4394093078918702],
                                             'grad_norm1.weight': [1.7508432145298851,
                                                                   1.22652026698005],
                                             'grad_norm2.weight': [0.5837227214975704,
                                                                   4.447004803182963]}},
 'encoder_layer_callable_unbatched': {'keys': ['self_attn.in_proj_weight', 'self_attn.in_proj_bias',
                                               'self_attn.out_proj.weight',
                                               'self_attn.out_proj.bias', 'linear1.weight',
                                               'linear1.bias', 'linear2.weight', 'linear2.bias',
                                               'norm1.weight', 'norm1.bias', 'norm2.weight',
                                               'norm2.bias'],
                                      'shapes': {'out': [3, 4]},
                                      'fp': {'out': [-1.8624045021945757, 1.0327370266712124],
                                             'grad_src': [1.4998458945734896, -0.31284134554562126],
                                             'grad_self_attn.in_proj_weight': [1.2118707227132792,
                                                                               -1.1759415725459728],
                                             'grad_self_attn.in_proj_bias': [0.781042109889954,
                                                                             0.6861418234641518],
                                             'grad_self_attn.out_proj.weight': [1.0044473397090752,
                                                                                1.1640650883691923],
                                             'grad_self_attn.out_proj.bias': [-1.0086796887284792,
                                                                              -0.7192951088098762],
                                             'grad_linear1.weight': [-0.24414382954468627,
                                                                     0.40343116596075085],
                                             'grad_linear1.bias': [0.8390936028419052,
                                                                   0.3203704309110087],
                                             'grad_linear2.weight': [-1.219512649434715,
                                                                     -2.3397143591200167],
                                             'grad_linear2.bias': [0.7787897783337141,
                                                                   2.6228318205422925],
                                             'grad_norm1.weight': [0.2278993197850604,
                                                                   -0.9600116799972667],
                                             'grad_norm1.bias': [-2.3538597073102117,
                                                                 0.2181553698062922],
                                             'grad_norm2.weight': [-4.417384141218345,
                                                                   -0.9573431520340645],
                                             'grad_norm2.bias': [-2.3799859518609363,
                                                                 9.78373277333869]}},
 'encoder_2l_norm': {'keys': ['layers.0.self_attn.in_proj_weight',
                              'layers.0.self_attn.in_proj_bias',
                              'layers.0.self_attn.out_proj.weight',
                              'layers.0.self_attn.out_proj.bias', 'layers.0.linear1.weight',
                              'layers.0.linear1.bias', 'layers.0.linear2.weight',
                              'layers.0.linear2.bias', 'layers.0.norm1.weight',
                              'layers.0.norm1.bias', 'layers.0.norm2.weight', 'layers.0.norm2.bias',
                              'layers.1.self_attn.in_proj_weight',
                              'layers.1.self_attn.in_proj_bias',
                              'layers.1.self_attn.out_proj.weight',
                              'layers.1.self_attn.out_proj.bias', 'layers.1.linear1.weight',
                              'layers.1.linear1.bias', 'layers.1.linear2.weight',
                              'layers.1.linear2.bias', 'layers.1.norm1.weight',
                              'layers.1.norm1.bias', 'layers.1.norm2.weight', 'layers.1.norm2.bias',
                              'norm.weight', 'norm.bias'],
                     'shapes': {'out': [2, 5, 4]},
                     'fp': {'out': [-0.5663840488048235, -1.0751474068571314],
                            'grad_src': [0.07466959476294548, 0.014310814830791573],
                            'grad_layers.0.self_attn.in_proj_weight': [-0.19900917343588873,
                                                                       0.1797835752536651],
                            'grad_layers.0.self_attn.in_proj_bias': [-0.06898280765739503,
                                                                     -0.39090103859612124],
                            'grad_layers.0.self_attn.out_proj.weight': [0.14044669946309,
                                                                        -0.13284663592718782],
                            'grad_layers.0.self_attn.out_proj.bias': [-0.0406263607631612,
                                                                      -0.34155797267303456],
                            'grad_layers.0.linear1.weight': [0.0836368548942345,
                                                             0.3811383032037452],
                            'grad_layers.0.linear1.bias': [0.2153803243476894,
                                                           -0.09845436971505486],
                            'grad_layers.0.linear2.weight': [0.3653950671947921,
                                                             0.17354394837943937],
                            'grad_layers.0.linear2.bias': [-0.7489203369326357,
                                                           0.26880508650632773],
                            'grad_layers.0.norm1.weight': [0.34125020439205583,
                                                           -0.6993166674360792],
                            'grad_layers.0.norm1.bias': [-0.18584817874770582,
                                                         -0.28698790160469323],
                            'grad_layers.0.norm2.weight': [-1.2491810476257936,
                                                           -3.5406960207846025],
                            'grad_layers.0.norm2.bias': [-0.03459213358084795, 0.5126032164333721],
                            'grad_layers.1.self_attn.in_proj_weight': [-0.6088872738351527,
                                                                       -0.36523327471713896],
                            'grad_layers.1.self_attn.in_proj_bias': [-0.6534382662054276,
                                                                     -0.3554540401562232],
                            'grad_layers.1.self_attn.out_proj.weight': [-0.6668781159348647,
                                                                        -0.6777539993771993],
                            'grad_layers.1.self_attn.out_proj.bias': [-1.2716129563313165,
                                                                      -0.5391370913077222],
                            'grad_layers.1.linear1.weight': [-0.18158974482652304,
                                                             -0.2118395170139592],
                            'grad_layers.1.linear1.bias': [0.24778441439343904,
                                                           0.049049350155008054],
                            'grad_layers.1.linear2.weight': [-0.027576548625883088,
                                                             0.6320419092525944],
                            'grad_layers.1.linear2.bias': [0.36997826594928496,
                                                           -0.00158187344370464],
                            'grad_layers.1.norm1.weight': [-1.4091843776489024,
                                                           0.009808851138974228],
                            'grad_layers.1.norm1.bias': [-0.42369147573289234, -0.4414595423369214],
                            'grad_layers.1.norm2.weight': [0.7065705917849042, -0.8342683560116737],
                            'grad_layers.1.norm2.bias': [-0.7924156605076024, -0.4524521353693398],
                            'grad_norm.weight': [-2.4119229904212025, -0.2181717399115013],
                            'grad_norm.bias': [-2.480786062622991, 1.5928554889036235]}},
 'decoder_layer_post': {'keys': ['self_attn.in_proj_weight', 'self_attn.in_proj_bias',
                                 'self_attn.out_proj.weight', 'self_attn.out_proj.bias',
                                 'multihead_attn.in_proj_weight', 'multihead_attn.in_proj_bias',
                                 'multihead_attn.out_proj.weight', 'multihead_attn.out_proj.bias',
                                 'linear1.weight', 'linear1.bias', 'linear2.weight', 'linear2.bias',
                                 'norm1.weight', 'norm1.bias', 'norm2.weight', 'norm2.bias',
                                 'norm3.weight', 'norm3.bias'],
                        'shapes': {'out': [3, 2, 4]},
                        'fp': {'out': [0.918461022091326, -0.10563928796148475],
                               'grad_tgt': [0.016930805450336497, 0.018435801553317258],
                               'grad_memory': [0.04809349152535971, -0.059753460430202784],
                               'grad_self_attn.in_proj_weight': [0.029018614426381626,
                                                                 -0.009279594680546814],
                               'grad_self_attn.in_proj_bias': [0.005694822078644732,
                                                               -0.0052991631171594505],
                               'grad_self_attn.out_proj.weight': [-0.07668715269423465,
                                                                  -0.0038056669737637633],
                               'grad_self_attn.out_proj.bias': [-0.013192880627500125,
                                                                0.0012895661412599038],
                               'grad_multihead_attn.in_proj_weight': [-0.21243147120463549,
                                                                      0.057487751774373694],
                               'grad_multihead_attn.in_proj_bias': [0.25421340101184714,
                                                                    -0.14644925507245807],
                               'grad_multihead_attn.out_proj.weight': [-0.2736683406920545,
                                                                       0.21585296535875334],
                               'grad_multihead_attn.out_proj.bias': [-0.1660256938220777,
                                                                     -0.19966411264075226],
                               'grad_linear1.weight': [0.04320820931463215, -0.11018479193406472],
                               'grad_linear1.bias': [-0.1176041509509641, 0.0069023472782803515],
                               'grad_linear2.weight': [-0.33687804924399356, 0.0562356297711978],
                               'grad_linear2.bias': [0.04022608845736636, 0.04119760856100767],
                               'grad_norm1.weight': [-0.20701110408497836, 0.5098459014884562],
                               'grad_norm1.bias': [0.02908569826731741, -0.032267498159525565],
                               'grad_norm2.weight': [0.2993642892651799, -0.014152109553141827],
                               'grad_norm2.bias': [-0.05344143442050793, 0.13125195142122897],
                               'grad_norm3.weight': [-0.36303480909825936, -3.18054160442432],
                               'grad_norm3.bias': [-0.9660006249676621, 3.7301464740291967]}},
 'decoder_2l_pre_norm_bf': {'keys': ['layers.0.self_attn.in_proj_weight',
                                     'layers.0.self_attn.in_proj_bias',
                                     'layers.0.self_attn.out_proj.weight',
                                     'layers.0.self_attn.out_proj.bias',
                                     'layers.0.multihead_attn.in_proj_weight',
                                     'layers.0.multihead_attn.in_proj_bias',
                                     'layers.0.multihead_attn.out_proj.weight',
                                     'layers.0.multihead_attn.out_proj.bias',
                                     'layers.0.linear1.weight', 'layers.0.linear1.bias',
                                     'layers.0.linear2.weight', 'layers.0.linear2.bias',
                                     'layers.0.norm1.weight', 'layers.0.norm1.bias',
                                     'layers.0.norm2.weight', 'layers.0.norm2.bias',
                                     'layers.0.norm3.weight', 'layers.0.norm3.bias',
                                     'layers.1.self_attn.in_proj_weight',
                                     'layers.1.self_attn.in_proj_bias',
                                     'layers.1.self_attn.out_proj.weight',
                                     'layers.1.self_attn.out_proj.bias',
                                     'layers.1.multihead_attn.in_proj_weight',
                                     'layers.1.multihead_attn.in_proj_bias',
                                     'layers.1.multihead_attn.out_proj.weight',
                                     'layers.1.multihead_attn.out_proj.bias',
                                     'layers.1.linear1.weight', 'layers.1.linear1.bias',
                                     'layers.1.linear2.weight', 'layers.1.linear2.bias',
                                     'layers.1.norm1.weight', 'layers.1.norm1.bias',
                                     'layers.1.norm2.weight', 'layers.1.norm2.bias',
                                     'layers.1.norm3.weight', 'layers.1.norm3.bias', 'norm.weight',
                                     'norm.bias'],
                            'shapes': {'out': [2, 3, 4]},
                            'fp': {'out': [1.4801687977222868, 3.2632296201309203],
                                   'grad_tgt': [-0.39282296762452407, 3.5475792116508558],
                                   'grad_memory': [1.2429900055475978, -0.9181838101746492],
                                   'grad_layers.0.self_attn.in_proj_weight': [-0.7507599865944832,
                                                                              0.21160518800098144],
                                   'grad_layers.0.self_attn.in_proj_bias': [0.17337818372253372,
                                                                            1.4487440544281929],
                                   'grad_layers.0.self_attn.out_proj.weight': [0.5571212657649947,
                                                                               0.261824938568484],
                                   'grad_layers.0.self_attn.out_proj.bias': [-1.9755728024335693,
                                                                             0.8669104870195966],
                                   'grad_layers.0.multihead_attn.in_proj_weight': [1.080578378823922,
                                                                                   -1.1557178193334763],
                                   'grad_layers.0.multihead_attn.in_proj_bias': [-0.3168404797090833,
                                                                                 0.09872717752778803],
                                   'grad_layers.0.multihead_attn.out_proj.weight': [-0.3546750682623556,
                                                                                    -0.703778012595417],
                                   'grad_layers.0.multihead_attn.out_proj.bias': [-0.21701169680852123,
                                                                                  0.8850082453413832],
                                   'grad_layers.0.linear1.weight': [0.5003926968873404,
                                                                    -1.0631643436591303],
                                   'grad_layers.0.linear1.bias': [0.02216508844961179,
                                                                  0.3323551638530629],
                                   'grad_layers.0.linear2.weight': [-0.6784478045562902,
                                                                    -0.6069104621676034],
                                   'grad_layers.0.linear2.bias': [3.8242506208173292,
                                                                  1.5497142477298071],
                                   'grad_layers.0.norm1.weight': [-0.3591734891592037,
                                                                  0.3385131124951751],
                                   'grad_layers.0.norm1.bias': [-0.13301593764338973,
                                                                -1.1513215923238354],
                                   'grad_layers.0.norm2.weight': [-0.16390727219161644,
                                                                  -0.030178619107030957],
                                   'grad_layers.0.norm2.bias': [-0.1122004063324799,
                                                                0.1540390165543111],
                                   'grad_layers.0.norm3.weight': [-0.08483838007579696,
                                                                  -0.06039415343366554],
                                   'grad_layers.0.norm3.bias': [1.089649378748902,
                                                                -0.3140454718961708],
                                   'grad_layers.1.self_attn.in_proj_weight': [-0.8424905966450179,
                                                                              0.2553109980441056],
                                   'grad_layers.1.self_attn.in_proj_bias': [-0.9901826858770951,
                                                                            -0.29182056788303046],
                                   'grad_layers.1.self_attn.out_proj.weight': [-0.5261636265752915,
                                                                               -0.7533542196304961],
                                   'grad_layers.1.self_attn.out_proj.bias': [-1.3716586650260172,
                                                                             -1.0919178761841555],
                                   'grad_layers.1.multihead_attn.in_proj_weight': [-1.2045896324681407,
                                                                                   1.430749704671472],
                                   'grad_layers.1.multihead_attn.in_proj_bias': [0.9361101690814534,
                                                                                 -0.03732019054041491],
                                   'grad_layers.1.multihead_attn.out_proj.weight': [1.5550277655117806,
                                                                                    1.1140353142454984],
                                   'grad_layers.1.multihead_attn.out_proj.bias': [1.6040576256983503,
                                                                                  0.04880147255002398],
                                   'grad_layers.1.linear1.weight': [-0.0824691366766197,
                                                                    -0.18591296389985396],
                                   'grad_layers.1.linear1.bias': [-0.4578930029711776,
                                                                  -1.3677109100932825],
                                   'grad_layers.1.linear2.weight': [-1.0873557034626937,
                                                                    2.0636191745675636],
                                   'grad_layers.1.linear2.bias': [1.0411735794559112,
                                                                  -3.1172792670320253],
                                   'grad_layers.1.norm1.weight': [0.14296029409806818,
                                                                  -0.18591930439486287],
                                   'grad_layers.1.norm1.bias': [-0.17198817581924908,
                                                                0.15440362038062017],
                                   'grad_layers.1.norm2.weight': [0.00337406314648894,
                                                                  0.06010628510494814],
                                   'grad_layers.1.norm2.bias': [0.1456562519078088,
                                                                -0.14011817921320704],
                                   'grad_layers.1.norm3.weight': [-0.25788930180126035,
                                                                  -0.04196690746788499],
                                   'grad_layers.1.norm3.bias': [-0.45320593019506356,
                                                                0.0049317235561765],
                                   'grad_norm.weight': [2.2518909669499925, -1.081545936665698],
                                   'grad_norm.bias': [-0.4835107880374656, -0.8645417731444511]}},
 'transformer_bf': {'keys': ['encoder.layers.0.self_attn.in_proj_weight',
                             'encoder.layers.0.self_attn.in_proj_bias',
                             'encoder.layers.0.self_attn.out_proj.weight',
                             'encoder.layers.0.self_attn.out_proj.bias',
                             'encoder.layers.0.linear1.weight', 'encoder.layers.0.linear1.bias',
                             'encoder.layers.0.linear2.weight', 'encoder.layers.0.linear2.bias',
                             'encoder.layers.0.norm1.weight', 'encoder.layers.0.norm1.bias',
                             'encoder.layers.0.norm2.weight', 'encoder.layers.0.norm2.bias',
                             'encoder.layers.1.self_attn.in_proj_weight',
                             'encoder.layers.1.self_attn.in_proj_bias',
                             'encoder.layers.1.self_attn.out_proj.weight',
                             'encoder.layers.1.self_attn.out_proj.bias',
                             'encoder.layers.1.linear1.weight', 'encoder.layers.1.linear1.bias',
                             'encoder.layers.1.linear2.weight', 'encoder.layers.1.linear2.bias',
                             'encoder.layers.1.norm1.weight', 'encoder.layers.1.norm1.bias',
                             'encoder.layers.1.norm2.weight', 'encoder.layers.1.norm2.bias',
                             'encoder.norm.weight', 'encoder.norm.bias',
                             'decoder.layers.0.self_attn.in_proj_weight',
                             'decoder.layers.0.self_attn.in_proj_bias',
                             'decoder.layers.0.self_attn.out_proj.weight',
                             'decoder.layers.0.self_attn.out_proj.bias',
                             'decoder.layers.0.multihead_attn.in_proj_weight',
                             'decoder.layers.0.multihead_attn.in_proj_bias',
                             'decoder.layers.0.multihead_attn.out_proj.weight',
                             'decoder.layers.0.multihead_attn.out_proj.bias',
                             'decoder.layers.0.linear1.weight', 'decoder.layers.0.linear1.bias',
                             'decoder.layers.0.linear2.weight', 'decoder.layers.0.linear2.bias',
                             'decoder.layers.0.norm1.weight', 'decoder.layers.0.norm1.bias',
                             'decoder.layers.0.norm2.weight', 'decoder.layers.0.norm2.bias',
                             'decoder.layers.0.norm3.weight', 'decoder.layers.0.norm3.bias',
                             'decoder.norm.weight', 'decoder.norm.bias'],
                    'shapes': {'out': [2, 3, 4]},
                    'fp': {'out': [-0.4795925927241908, -1.4673232417267679],
                           'grad_src': [-0.042386406729898, 0.0032929065486780543],
                           'grad_tgt': [-1.3911627004696125, -1.5909058057521093],
                           'grad_encoder.layers.0.self_attn.in_proj_weight': [0.013293921509044529,
                                                                              -0.07816595055268555],
                           'grad_encoder.layers.0.self_attn.in_proj_bias': [-0.0013965525824372162,
                                                                            0.05698694324350237],
                           'grad_encoder.layers.0.self_attn.out_proj.weight': [-0.03487027165903735,
                                                                               -0.024568091867590316],
                           'grad_encoder.layers.0.self_attn.out_proj.bias': [-0.05657975586935085,
                                                                             0.0022423735689195944],
                           'grad_encoder.layers.0.linear1.weight': [-0.03561063054037933,
                                                                    0.00495718897331165],
                           'grad_encoder.layers.0.linear1.bias': [0.04803514140857735,
                                                                  -0.030892625557246232],
                           'grad_encoder.layers.0.linear2.weight': [-0.026980286924973267,
                                                                    -0.01724244014990608],
                           'grad_encoder.layers.0.linear2.bias': [-0.1449377941575965,
                                                                  -0.09406030285839062],
                           'grad_encoder.layers.0.norm1.weight': [-0.15095726375145768,
                                                                  0.088798390787278],
                           'grad_encoder.layers.0.norm1.bias': [0.1592644547833007,
                                                                -0.049762647440317],
                           'grad_encoder.layers.0.norm2.weight': [0.06516348265174593,
                                                                  0.2556236763711018],
                           'grad_encoder.layers.0.norm2.bias': [0.31424909993255024,
                                                                -0.17658905676490072],
                           'grad_encoder.layers.1.self_attn.in_proj_weight': [0.030121687855093372,
                                                                              0.14684118026356316],
                           'grad_encoder.layers.1.self_attn.in_proj_bias': [-0.050435863599566616,
                                                                            0.02268642596057035],
                           'grad_encoder.layers.1.self_attn.out_proj.weight': [0.1401345356956661,
                                                                               0.177346444443732],
                           'grad_encoder.layers.1.self_attn.out_proj.bias': [-0.012400356451359507,
                                                                             0.10891483592015166],
                           'grad_encoder.layers.1.linear1.weight': [-0.4861929626137055,
                                                                    0.231380080898975],
                           'grad_encoder.layers.1.linear1.bias': [-0.14957797107589424,
                                                                  0.1430399578422128],
                           'grad_encoder.layers.1.linear2.weight': [-0.07602291020219878,
                                                                    -0.6054270501829925],
                           'grad_encoder.layers.1.linear2.bias': [0.04036496957502666,
                                                                  0.09138049201837967],
                           'grad_encoder.layers.1.norm1.weight': [0.011717422596021557,
                                                                  -0.25122200306668474],
                           'grad_encoder.layers.1.norm1.bias': [0.1992425146856,
                                                                -0.21727664073941355],
                           'grad_encoder.layers.1.norm2.weight': [-0.014593939857972416,
                                                                  -0.01031768858628962],
                           'grad_encoder.layers.1.norm2.bias': [-0.904325080254978,
                                                                -0.5359585789413751],
                           'grad_encoder.norm.weight': [-0.35161434917456086, 0.7480562816982665],
                           'grad_encoder.norm.bias': [-0.18130378898973906, 1.0126577769111098],
                           'grad_decoder.layers.0.self_attn.in_proj_weight': [-4.2141996649346,
                                                                              1.473340630322834],
                           'grad_decoder.layers.0.self_attn.in_proj_bias': [-0.8696184170488331,
                                                                            1.8224747856366996],
                           'grad_decoder.layers.0.self_attn.out_proj.weight': [2.4291920020821363,
                                                                               -2.260553755242583],
                           'grad_decoder.layers.0.self_attn.out_proj.bias': [-1.5490463961693086,
                                                                             -0.21948446025183982],
                           'grad_decoder.layers.0.multihead_attn.in_proj_weight': [0.15875760805724248,
                                                                                   1.4000212141852006],
                           'grad_decoder.layers.0.multihead_attn.in_proj_bias': [0.046207940906247615,
                                                                                 -2.2211677536460304],
                           'grad_decoder.layers.0.multihead_attn.out_proj.weight': [0.8473389605604897,
                                                                                    2.078146552271874],
                           'grad_decoder.layers.0.multihead_attn.out_proj.bias': [2.385466466524287,
                                                                                  -1.3225780920811157],
                           'grad_decoder.layers.0.linear1.weight': [-0.728527759587811,
                                                                    -0.9788432620387334],
                           'grad_decoder.layers.0.linear1.bias': [-0.5647721843171445,
                                                                  -0.5601303098552275],
                           'grad_decoder.layers.0.linear2.weight': [-0.4269661670415261,
                                                                    -0.18664718146697545],
                           'grad_decoder.layers.0.linear2.bias': [3.4921064274931353,
                                                                  -0.47676499742340694],
                           'grad_decoder.layers.0.norm1.weight': [-5.036907962960806,
                                                                  0.7482655085748902],
                           'grad_decoder.layers.0.norm1.bias': [0.8397408498529378,
                                                                3.362658512066166],
                           'grad_decoder.layers.0.norm2.weight': [-5.269132206225111,
                                                                  3.7352280292829145],
                           'grad_decoder.layers.0.norm2.bias': [4.313175512588317,
                                                                -2.6687792803079633],
                           'grad_decoder.layers.0.norm3.weight': [0.02886756148163272,
                                                                  -1.5465983506205816],
                           'grad_decoder.layers.0.norm3.bias': [1.0949232914485214,
                                                                -2.2300775849300534],
                           'grad_decoder.norm.weight': [0.6092231369672458, -7.732193298253461],
                           'grad_decoder.norm.bias': [0.7767850443575409, -2.967178336729765]}}}


# the two slowest cases (batch_first twins of cases that run; ~15 s) run in `make test-all`
_SLOW_CASES = ("transformer_bf", "decoder_2l_pre_norm_bf")


@pytest.mark.parametrize("case", [
    pytest.param(c, marks=[pytest.mark.slow] * (c in _SLOW_CASES)) for c in CASES])
def test_values_and_gradients_match_torch(case):
    got, want = run_case(tg, case), TORCH[case]
    assert got["keys"] == want["keys"]
    assert got["shapes"] == want["shapes"]
    assert set(got["fp"]) == set(want["fp"])
    for key, value in want["fp"].items():
        np.testing.assert_allclose(got["fp"][key], value, rtol=1e-9, atol=1e-11, err_msg=key)


def _patterned_encoder(nested=True):
    enc = nn.TransformerEncoder(nn.TransformerEncoderLayer(4, 2, 8, batch_first=True), 1,
                                enable_nested_tensor=nested).double().eval()
    enc.load_state_dict({k: tg.tensor(((np.arange(p.numel()) * 7 + i) % 11 - 5)
                                      .reshape(p.shape) * 0.1)
                         for i, (k, p) in enumerate(enc.state_dict().items())})
    return enc


# torch 2.13: the encoder above on sin(arange(24)).reshape(2, 3, 4), the last step of
# sequence 0 padded
_ENCODED = [[[0.20700039, 0.12668118, 0.13746212, 0.67762445],
             [-0.46337669, 0.12839347, 0.08747203, 1.14042352],
             [0.33928006, 0.10558949, -0.12069873, 0.311953]],
            [[-0.09548708, 0.15717896, 0.22996808, 0.92096458],
             [0.25056818, 0.11128999, 0.07835728, 0.62552854],
             [0.34760357, 0.11181119, -0.04988919, 0.37482012]]]


def test_encoder_in_inference_zeroes_padded_positions_as_torchs_nested_path():
    enc = _patterned_encoder()
    x = tg.tensor(np.sin(np.arange(24.0)).reshape(2, 3, 4))
    kpm = tg.tensor([[False, False, True], [False, False, False]])
    want = np.array(_ENCODED)
    np.testing.assert_allclose(enc(x, src_key_padding_mask=kpm).detach().numpy(), want,
                               rtol=1e-7, atol=1e-8)                # parameters need grad
    with tg.no_grad():
        got = enc(x, src_key_padding_mask=kpm).numpy()
    want[0, 2] = 0.0                                                 # torch 2.13's nested path
    np.testing.assert_allclose(got, want, rtol=1e-7, atol=1e-8)
    with tg.no_grad():    # enable_nested_tensor=False: the padded position is computed
        off = _patterned_encoder(nested=False)(x, src_key_padding_mask=kpm).numpy()
    np.testing.assert_allclose(off, np.array(_ENCODED), rtol=1e-7, atol=1e-8)


def test_float32_encoder_layer_matches_float64_to_1e5():
    tg.manual_seed(0)
    layer = nn.TransformerEncoderLayer(16, 4, 32, dropout=0.0)
    x = tg.randn(7, 3, 16)
    out32 = layer(x).detach().numpy()
    out64 = layer.double()(x.double()).detach().numpy()
    np.testing.assert_allclose(out32, out64, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("make,exc,message", [
    (lambda: nn.TransformerEncoderLayer(4, 2, 8, activation="silu"), RuntimeError,
     "activation should be relu/gelu, not silu"),
    (lambda: nn.Transformer(4, 2, 1, 1, 8)(tg.zeros(3, 2, 4), tg.zeros(3, 3, 4)), RuntimeError,
     "the batch number of src and tgt must be equal"),
    (lambda: nn.Transformer(4, 2, 1, 1, 8)(tg.zeros(3, 2, 4), tg.zeros(3, 2, 5)), RuntimeError,
     "the feature number of src and tgt must be equal to d_model"),
    (lambda: nn.MultiheadAttention(4, 2)(tg.zeros(3, 2, 4), tg.zeros(5, 2, 4), tg.zeros(5, 2, 4),
                                         attn_mask=tg.zeros(3, 4)), RuntimeError,
     "The shape of the 2D attn_mask is (3, 4), but should be (3, 5)."),   # torch: torch.Size
])
def test_errors_are_torchs(make, exc, message):
    with pytest.raises(exc) as info, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        make()
    assert str(info.value) == message   # torch 2.13


def test_nested_tensor_warnings_are_torchs():
    layer = lambda **k: nn.TransformerEncoderLayer(4, 2, 8, **k)   # noqa: E731
    with pytest.warns(UserWarning) as record:
        nn.TransformerEncoder(layer(), 2)
    assert str(record[0].message) == (   # torch 2.13
        "enable_nested_tensor is True, but self.use_nested_tensor is False because "
        "encoder_layer.self_attn.batch_first was not True(use batch_first for better "
        "inference performance)")
    with pytest.warns(UserWarning, match="because encoder_layer.norm_first was True"):
        nn.TransformerEncoder(layer(batch_first=True, norm_first=True), 2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        enc = nn.TransformerEncoder(layer(batch_first=True), 2)
        nn.TransformerEncoder(layer(), 2, enable_nested_tensor=False)
    assert enc.use_nested_tensor and len(enc.layers) == 2
    assert enc.layers[0].linear1.weight is not enc.layers[1].linear1.weight   # deep copies


def test_generate_square_subsequent_mask_is_torchs():
    mask = nn.Transformer.generate_square_subsequent_mask(3)
    assert mask.dtype is tg.float32
    assert mask.tolist() == [[0.0, -math.inf, -math.inf], [0.0, 0.0, -math.inf],
                             [0.0, 0.0, 0.0]]   # torch 2.13
    assert nn.Transformer.generate_square_subsequent_mask(2, dtype=tg.float64).dtype is tg.float64


def test_transformer_init_is_xavier_uniform_for_matrices():
    tg.manual_seed(1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t = nn.Transformer(32, 4, 1, 1, 64)
    w = t.encoder.layers[0].linear1.weight.detach().numpy()        # (64, 32)
    bound = math.sqrt(6 / (32 + 64))
    assert np.abs(w).max() <= bound and w.std() > 0.8 * bound / math.sqrt(3)
    np.testing.assert_array_equal(t.decoder.norm.weight.detach().numpy(), 1.0)
    assert t.d_model == 32 and t.nhead == 4 and not t.batch_first


def test_dropout_is_active_in_training_only():
    tg.manual_seed(2)
    layer = nn.TransformerEncoderLayer(8, 2, 16, dropout=0.5)
    x = tg.randn(4, 2, 8)
    a, b = layer(x).detach().numpy(), layer(x).detach().numpy()
    assert not np.allclose(a, b)
    layer.eval()
    np.testing.assert_array_equal(layer(x).detach().numpy(), layer(x).detach().numpy())


def test_compiled_transformer_training_step_is_one_program_and_matches_eager():
    runs = []
    rng = np.random.default_rng(0)
    src, tgt = tg.tensor(rng.standard_normal((2, 5, 8))), tg.tensor(rng.standard_normal((2, 3, 8)))
    mask = nn.Transformer.generate_square_subsequent_mask(3, dtype=tg.float64)
    for compiled in (False, True):
        tg.manual_seed(3)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = nn.Transformer(8, 2, 1, 1, 16, dropout=0.0, batch_first=True).double()
        opt = tg.optim.SGD(model.parameters(), lr=0.1)

        def step(src, tgt):
            opt.zero_grad()
            loss = (model(src, tgt, tgt_mask=mask) ** 2).mean()
            loss.backward()
            opt.step()
            return loss
        step(src, tgt)
        fn = tg.compile(step, fullgraph=True) if compiled else step
        losses = [fn(src, tgt).item() for _ in range(3)]
        if compiled:
            assert fn.traces == 1
        runs.append(losses)
    np.testing.assert_allclose(runs[1], runs[0], rtol=1e-9)
    assert runs[0][2] < runs[0][0]
