"""issue 16's top-level torch functions (hstack ... cdist as registry composites; searchsorted,
bucketize, histc; eager-only unique and bincount; tril/triu_indices; nn.utils'
parameters_to_vector) against torch 2.13.

The cases are tests/surface_more_cases.py's, run here on tracegrad and recorded from the same
calls under torch 2.13.0+cpu by tools/record_torch_surface_cases.py (values below): outputs,
and for the differentiable ones the gradients of sum(out * (1, 2, 3, ...)).  The compile
tests check that the static ones trace into one program with the eager values and that the
value-dependent ones break the graph with a clear error.
"""
import math
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

import tracegrad as tg

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from surface_more_cases import (GRAD_CASES, VALUE_CASES, check_grad_case,  # noqa: E402
                                check_value_case)

nan = math.nan

# torch 2.13.0+cpu
TORCH_GRAD = {'atleast_2d': ([[[-1.38, 0.77, 1.83]], [[0.27, -0.28, -1.62], [-0.61, 0.49, -1.91]]],
                [[1.0, 2.0, 3.0], [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]]),
 'atleast_3d': ([[[[-1.38], [0.77], [1.83]]],
                 [[[0.27], [-0.28], [-1.62]], [[-0.61], [0.49], [-1.91]]]],
                [[1.0, 2.0, 3.0], [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]]),
 'atleast_1d_0d': ([[1.2200000000000002]], [[1.0, 1.0, 1.0]]),
 'hstack': ([[[0.27, -0.28, -1.62, 1.5, 1.42, -1.82], [-0.61, 0.49, -1.91, 1.21, -1.26, 0.78]]],
            [[[1.0, 2.0, 3.0], [7.0, 8.0, 9.0]], [[4.0, 5.0, 6.0], [10.0, 11.0, 12.0]]]),
 'hstack_1d': ([[-1.38, 0.77, 1.83, 1.94, 0.65]], [[1.0, 2.0, 3.0], [4.0, 5.0]]),
 'vstack': ([[[0.27, -0.28, -1.62], [-0.61, 0.49, -1.91], [1.5, 1.42, -1.82]]],
            [[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], [[7.0, 8.0, 9.0], [0.0, 0.0, 0.0]]]),
 'dstack': ([[[[0.27, 1.5], [-0.28, 1.42], [-1.62, -1.82]],
              [[-0.61, 1.21], [0.49, -1.26], [-1.91, 0.78]]]],
            [[[1.0, 3.0, 5.0], [7.0, 9.0, 11.0]], [[2.0, 4.0, 6.0], [8.0, 10.0, 12.0]]]),
 'column_stack': ([[[-1.38, 0.27, -0.61], [0.77, -0.28, 0.49], [1.83, -1.62, -1.91]]],
                  [[1.0, 4.0, 7.0], [[2.0, 3.0], [5.0, 6.0], [8.0, 9.0]]]),
 'meshgrid_ij': ([[[-1.38, -1.38], [0.77, 0.77], [1.83, 1.83]],
                  [[1.94, 0.65], [1.94, 0.65], [1.94, 0.65]]],
                 [[3.0, 7.0, 11.0], [9.0, 12.0]]),
 'meshgrid_xy': ([[[-1.38, 0.77, 1.83], [-1.38, 0.77, 1.83]],
                  [[1.94, 1.94, 1.94], [0.65, 0.65, 0.65]]],
                 [[5.0, 7.0, 9.0], [6.0, 15.0]]),
 'cartesian_prod': ([[[-1.38, 1.94], [-1.38, 0.65], [0.77, 1.94], [0.77, 0.65], [1.83, 1.94],
                      [1.83, 0.65]]],
                    [[4.0, 12.0, 20.0], [18.0, 24.0]]),
 'kron': ([[[0.5238, 0.17550000000000002, -0.5432, -0.18200000000000002, -3.1428000000000003,
             -1.0530000000000002],
            [-1.1834, -0.3965, 0.9506, 0.3185, -3.7053999999999996, -1.2415]]],
          [[[3.24, 8.42, 13.6], [18.78, 23.96, 29.14]], [-29.54, -33.2]]),
 'kron_2d': ([[[0.405, 0.3834, -0.42000000000000004, -0.3976, -2.43, -2.3004000000000002],
               [0.3267, -0.3402, -0.33880000000000005, 0.35280000000000006, -1.9602000000000002,
                2.0412000000000003],
               [-0.915, -0.8662, 0.735, 0.6958, -2.8649999999999998, -2.7121999999999997],
               [-0.7381, 0.7686, 0.5929, -0.6174, -2.3110999999999997, 2.4066]]],
             [[[2.7299999999999986, 8.47, 14.209999999999997], [37.169999999999995, 42.91, 48.65]],
              [[-41.72, -45.379999999999995, 0.0], [-63.68000000000001, -67.34, 0.0]]]),
 'diff': ([[[-0.55, -1.34], [1.1, -2.4]]], [[[-1.0, -1.0, 2.0], [-3.0, -1.0, 4.0]]]),
 'diff_n2_dim0': ([[[2.9899999999999998, 0.15999999999999992, 0.37999999999999967],
                    [-2.4, -3.6099999999999994, 2.5100000000000002]]],
                  [[[1.0, 2.0, 3.0], [2.0, 1.0, 0.0], [-7.0, -8.0, -9.0], [4.0, 5.0, 6.0]]]),
 'diff_prepend_append': ([[[-0.08000000000000007, -3.24, 2.09, -0.55, -1.34, 3.12,
                            -0.08000000000000007, -3.24],
                           [-2.4699999999999998, 2.04, -1.3900000000000001, 1.1, -2.4, 3.12,
                            -2.4699999999999998, 2.04]]],
                         [[[-1.0, -1.0, -1.0], [-1.0, -1.0, -1.0]],
                          [[-2.0, -2.0, 7.0], [-10.0, -2.0, 15.0]]]),
 'addmm': ([[[0.099799999999999, -11.7632, -4.3386],
             [1.0702000000000003, 9.0496, -0.9635999999999998]]],
           [[[0.5, 1.0, 1.5], [2.0, 2.5, 3.0]],
            [[11.899999999999999, 13.620000000000001, 13.5, -3.380000000000001],
             [28.88, 25.44, 37.14, -12.379999999999999]],
            [[-3.54, -4.98, -6.419999999999999], [2.86, 1.3999999999999995, -0.05999999999999872],
             [1.7200000000000002, 1.4600000000000002, 1.1999999999999997],
             [-11.36, -12.579999999999998, -13.8]]]),
 'addmm_bcast': ([[[-0.9626000000000005, -6.1966, -2.8367999999999998],
                   [-1.2698999999999998, 4.3048, -1.4317999999999997]]],
                 [[[5.0, 7.0, 9.0], [0.0, 0.0, 0.0]],
                  [[5.949999999999999, 6.8100000000000005, 6.75, -1.6900000000000004],
                   [14.44, 12.72, 18.57, -6.1899999999999995]],
                  [[-1.77, -2.49, -3.2099999999999995],
                   [1.43, 0.6999999999999997, -0.02999999999999936],
                   [0.8600000000000001, 0.7300000000000001, 0.5999999999999999],
                   [-5.68, -6.289999999999999, -6.9]]]),
 'addmv': ([[3.4926000000000004, 1.2199]],
           [[2.0, 4.0], [[-0.92, 1.4, -1.61, 0.52], [-1.84, 2.8, -3.22, 1.04]],
            [[1.0699999999999998, 0.0, 0.0], [0.010000000000000009, 0.0, 0.0], [-0.2, 0.0, 0.0],
             [2.3, 0.0, 0.0]]]),
 'baddbmm': ([[[[9.529, 7.5212], [-0.8815999999999997, -8.742799999999999],
                [-3.3312000000000004, -2.193]],
               [[7.3988, -0.5801999999999998], [4.262999999999999, 0.6518000000000005],
                [4.398999999999999, -4.510800000000001]]]],
             [[[[0.5, 1.0], [1.5, 2.0], [2.5, 3.0]], [[3.5, 4.0], [4.5, 5.0], [5.5, 6.0]]],
              [[[1.4, 1.26, -9.16, 1.94], [0.08000000000000007, 1.3399999999999999, -21.72, 6.9],
                [-1.240000000000002, 1.4200000000000008, -34.28, 11.86]],
               [[6.059999999999999, -42.0, 6.9, -12.02], [6.82, -53.040000000000006, 8.7, -15.86],
                [7.579999999999998, -64.08, 10.5, -19.699999999999996]]],
              [[[-0.7400000000000002, -0.3999999999999999],
                [1.4800000000000004, 1.3600000000000012], [19.92, 22.32],
                [15.899999999999999, 22.68]],
               [[-29.46, -32.99999999999999], [-8.099999999999998, -9.799999999999997],
                [46.68, 51.36], [-47.89999999999999, -53.11999999999999]]]]),
 'addbmm': ([[[26.5217, 9.9815], [5.4571000000000005, -12.031500000000001],
              [0.6716999999999986, -10.4707]]],
            [[[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], [[0.0, 0.0], [0.0, 0.0], [0.0, 0.0]]],
             [[[2.0999999999999996, 1.8900000000000001, -13.74, 2.91],
               [0.1200000000000001, 2.01, -32.58, 10.350000000000001],
               [-1.860000000000003, 2.1300000000000012, -51.42, 17.79]],
              [[5.67, -13.319999999999999, 2.25, -0.75],
               [6.809999999999999, -29.880000000000003, 4.949999999999999, -6.51],
               [7.949999999999998, -46.44, 7.6499999999999995, -12.27]]],
             [[[-1.1100000000000003, -0.5999999999999999], [2.2200000000000006, 2.040000000000002],
               [29.880000000000003, 33.480000000000004], [23.849999999999998, 34.019999999999996]],
              [[-12.330000000000002, -17.64], [3.150000000000002, 0.6000000000000032],
               [27.9, 34.92], [-24.869999999999997, -32.699999999999996]]]]),
 'cdist_p2': ([[[0.0, 2.8284271247461903], [2.23606797749979, 1.0],
                [3.1622776601683795, 1.4142135623730951]]],
              [[[-1.414213562373095, -1.414213562373095], [-2.658359213500126, 2.6832815729997477],
                [8.986057177371855, -2.6615018570350952]],
               [[-6.085057276752443, -4.264420403083937], [1.1715728752538102, 5.65685424949238]]]),
 'cdist_p2_mm': ([[[0.0, 2.8284271247461903], [2.23606797749979, 1.0],
                   [3.1622776601683795, 1.4142135623730951]]],
                 [[[-1.414213562373095, -1.414213562373095],
                   [-2.658359213500126, 2.683281572999748],
                   [8.986057177371853, -2.661501857035095]],
                  [[-6.085057276752443, -4.264420403083937],
                   [1.171572875253812, 5.656854249492383]]]),
 'cdist_p1': ([[[0.0, 4.0], [3.0, 1.0], [4.0, 2.0]]],
              [[[-2.0, -2.0], [-1.0, 3.0], [11.0, -1.0]], [[-8.0, -8.0], [0.0, 8.0]]]),
 'cdist_p0': ([[[0.0, 2.0], [2.0, 1.0], [2.0, 2.0]]],
              [[[0.0, 0.0], [0.0, 0.0], [0.0, 0.0]], [[0.0, 0.0], [0.0, 0.0]]]),
 'cdist_p3': ([[[0.0, 2.5198420997897464], [2.080083823051904, 1.0],
                [3.0365889718756622, 1.2599210498948732]]],
              [[[-1.259921049894873, -1.259921049894873], [-3.3066387256493655, 2.7734450974025386],
                [8.659995425913364, -3.237515118992537]],
               [[-5.573593550579379, -3.3156931280946216],
                [1.4801579002102532, 5.039684199579492]]]),
 'cdist_inf': ([[[0.0, 2.0], [2.0, 1.0], [3.0, 1.0]]],
               [[[-2.0, -2.0], [-4.0, 3.0], [11.0, -6.0]], [[-5.0, -3.0], [0.0, 8.0]]]),
 'cdist_batched': ([[[[3.1467353452876274, 1.666945476690921, 2.1186952354568453,
                       3.8208105427225725, 2.4319344360228214],
                      [4.00377922110551, 4.522203541520247, 5.471260028630287, 2.7723546314458023,
                       4.386332141202941],
                      [1.9720849251144013, 2.3561885209178683, 4.658453690433303,
                       1.1122774756868274, 2.8995340784199923]],
                     [[3.309984378028745, 4.073587201303127, 2.7886870514117965, 4.084511346281246,
                       4.083820742980156],
                      [3.5933504190689702, 3.3320709018872265, 1.4778946047318868,
                       4.654023458236721, 5.2350514900304805],
                      [3.027795138123032, 3.8518898557874315, 5.279037474422065, 3.8889978470071016,
                       3.50427866401903]]]],
                   [[[[-3.48476414310319, 2.250531929844464, -11.264429198124578,
                       5.904738269881319],
                      [-16.306516484700303, -29.395417556708367, 26.629512839424166,
                       -10.68962096940638],
                      [-9.485998930568408, 23.957493381570075, 32.08704526712582,
                       -35.15126101566411]],
                     [[-28.553512665551242, -39.42259253482908, 40.699086187651744,
                       -39.95417701662894],
                      [-60.04295591127698, -55.57554285543024, 20.954997025477603,
                       35.8232718878178],
                      [-14.491637142199753, 3.863558766587543, 103.905722891808,
                       -76.66756295069321]]],
                    [[[-8.691601757613952, 8.933215181672004, -9.6952179517731, 11.879012532643674],
                      [8.812979727574794, 0.8195530472626134, -15.27608121709496,
                       -0.27293087142001093],
                      [15.885198455352807, -5.409358580625909, -16.498097890705395,
                       4.990883705385962],
                      [-7.501815585921371, 2.0599880952804384, 7.294500698411992,
                       13.880163082764263],
                      [20.772518718979626, -3.216005498295316, -13.277232547263944,
                       9.459015265815287]],
                     [[43.08064914922345, 7.745222171149445, 9.535716170425635, 32.028756376518494],
                      [14.245928114442002, 36.6301653625431, -17.41951153394095, 49.60104770348593],
                      [-18.7713098789286, -46.203597512548896, -49.92241420132169,
                       8.227877718243555],
                      [21.050537771437703, 45.492333236552206, -56.013411497583306,
                       4.506319075271531],
                      [43.48230056285341, 47.47045336597592, -51.740185042517034,
                       -13.565532794015162]]]]),
 'cdist_big': ([[81.59601048038093, 62.26546529995068, 49.27433973889512, 53.24794768219365,
                 51.75269441834139, 58.74711340942607, 85.0121119185122, 70.67702379638479,
                 84.26124690657736, 62.170383072124594, 98.66416821705795, 88.45389471046514,
                 82.2860942657585, 85.12803011383478, 73.90057384994796, 57.681378259924074,
                 62.29114899838953, 87.0282873423596, 85.92636091487032, 62.876872772491524,
                 69.8851773916101, 68.08257748904904, 95.5528905012417, 63.73313281720633,
                 84.44729450794298, 56.37806153539981, 52.68253184983752, 80.18437527282883,
                 63.56884533163801, 89.03080609881914]],
               [[[-4.273268698301916, 18.405275385130185, 10.359319570272223],
                 [17.4172189268095, 25.30815520871883, -13.473241449081625],
                 [3.152250153500468, 3.2153484315474383, -17.396652564822126],
                 [-1.6722107800034394, 41.2689192902922, 6.53382712759925],
                 [-12.858079978357992, 43.55383449944232, -3.7133714224779695],
                 [37.15524942796385, 62.842939427460884, 37.365363418413104],
                 [151.6150296037847, -19.71222251415572, 33.030270181568156],
                 [154.95008853809645, -23.26362487817876, -30.21914797639518],
                 [61.89699132638402, 149.71666121353317, -122.65860000453257],
                 [130.46471283267226, 5.703863478591224, 100.46858942161194],
                 [191.98832004732662, -127.61186787856812, 126.41535439967413],
                 [252.2940656272452, -26.454079898464336, 100.38046284550366],
                 [276.08317778172227, 43.33222273745887, -58.83760988596937],
                 [309.2683728035934, 11.098278173874213, -49.59859316142364],
                 [219.20992953369517, 50.43342269917057, -216.74916605026908],
                 [-224.17641773726962, 95.25134240760666, 4.423649745752009],
                 [234.00543691045283, -100.45552106627605, 136.7307097625247],
                 [347.3952826270648, -196.79581419396152, -110.87625186960415],
                 [345.70892206205684, 157.54258685090815, -194.37212085981068],
                 [240.0413035363781, 220.83057777467027, 32.302222945024646],
                 [98.4807624254652, -356.6802317026362, -215.12567031102733],
                 [414.73727038906895, 55.22779758390047, -53.632490084210644],
                 [431.29194527321397, -171.9115510634314, -296.503861935902],
                 [48.164990282056095, -360.82863561076584, -249.12596237237977],
                 [332.19112703928863, -277.6445037867852, 354.3582951984728],
                 [60.027935885609025, -316.8764435500068, -171.65097733759],
                 [-231.76936085605, 27.520542471679192, -176.638522830232],
                 [488.9449109839936, 353.19670224547593, 21.80929765324087],
                 [-31.926598359588183, 282.91418667914456, -442.02943773240554],
                 [536.1991068115015, -133.23636690930346, -427.6912744394453]],
                [[-269.4860229842134, -160.34048093615377, -181.5948408346329],
                 [-285.77908056629025, 177.81180833260694, 12.44773887423284],
                 [-130.97739625791803, -234.74976429342996, 161.48310002105833],
                 [-317.45120619932476, -3.3475437138641695, -166.5602355618616],
                 [-25.169687248690195, -210.1642951362442, -222.4298891162228],
                 [-207.6519527171111, 75.14673886076146, -86.157283049346],
                 [-265.2034017796815, -188.74319451560237, 181.80704351922515],
                 [-276.770549033794, -129.4934437103545, -172.18906914188977],
                 [-279.90813700198413, 245.0696619180356, -160.9794072665631],
                 [-348.83351164027084, 2.9537409353058024, 101.56133649115571],
                 [-338.3566617917986, 53.39204040751944, -205.33985669068198],
                 [-286.61447996779276, -184.85910874305222, -38.94760867993588],
                 [164.84958465896, -255.4433169894979, 113.96714023097908],
                 [-26.06973860208113, -112.24761786639516, -53.78571093548311],
                 [-257.8420593704802, 66.42672659900057, 275.0209399652829],
                 [-168.2740592606762, 46.66008738339434, 338.1197475828826],
                 [-94.89690617075343, 238.56939829203424, 320.25398743467167],
                 [-157.5568029097794, -151.0842240500859, 165.5067450912939],
                 [-272.14325569317816, -146.99344776649866, 279.3270214745675],
                 [-214.21489096190484, 192.620311157259, -12.571489399143871],
                 [-237.39976544093363, 264.50041606356257, 231.28272664343305],
                 [-69.57340720992838, 350.7209902998622, 121.75608832682171],
                 [-160.8916500708844, 69.35557125885163, 321.7941010138414],
                 [-177.54297190810334, -45.479963277762494, 17.13041255263866],
                 [-104.721800491308, 334.7672728307318, 49.48210784310585],
                 [-47.25354427437568, 165.91471504316192, 348.30945536752154],
                 [-20.27510952507589, 3.145128110782153, 147.42128826097078]]])}
TORCH_VALUES = {'searchsorted': [([[1, 3, 4], [0, 5, 2]], 'int64')],
 'searchsorted_right': [([[2, 3, 5], [0, 5, 3]], 'int64')],
 'searchsorted_side': [([[2, 3, 5], [0, 5, 3]], 'int64')],
 'searchsorted_scalar': [(2, 'int64')],
 'searchsorted_int32': [([[1, 3, 4], [0, 5, 2]], 'int32')],
 'searchsorted_batched': [([[1, 3], [0, 2]], 'int64')],
 'searchsorted_sorter': [([1, 2], 'int64')],
 'bucketize': [([[1, 3, 4], [0, 5, 2]], 'int64')],
 'bucketize_right': [([[2, 3, 5], [0, 5, 3]], 'int64')],
 'histc': [([0.0, 2.0, 1.0, 1.0], 'float32')],
 'histc_data_range': [([2.0, 1.0, 0.0, 1.0], 'float32')],
 'histc_constant': [([0.0, 0.0, 2.0, 0.0], 'float32')],
 'histc_equal_bounds': [([3.0, 0.0, 1.0], 'float32')],
 'histc_edges': [([0.0, 1.0, 1.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 2.0], 'float32')],
 'histc_f64': [([5.0, 3.0, 3.0, 4.0, 4.0], 'float64')],
 'unique': [([1, 2, 3, 5], 'int64')],
 'unique_all': [([1, 2, 3, 5], 'int64'), ([2, 0, 1, 2, 0, 3], 'int64'), ([2, 1, 2, 1], 'int64')],
 'unique_2d_inverse': [([0, 1, 2, 5], 'int64'), ([[1, 2], [1, 2], [0, 3]], 'int64')],
 'unique_dim0': [([[0, 5], [1, 2]], 'int64'), ([1, 1, 0], 'int64'), ([1, 2], 'int64')],
 'unique_float_nan': [([1.0, 2.5, nan], 'float32')],
 'unique_method': [([0, 4], 'int64'), ([1, 2], 'int64')],
 'unique_consecutive': [([1, 2, 3, 1, 2], 'int64'), ([0, 0, 1, 1, 2, 3, 3, 4], 'int64'),
                        ([2, 2, 1, 2, 1], 'int64')],
 'unique_consecutive_dim1': [([[1, 2, 1], [3, 0, 3]], 'int64'), ([2, 1, 1], 'int64')],
 'unique_consecutive_2d': [([1, 5], 'int64'), ([[0, 0], [0, 1]], 'int64')],
 'bincount': [([1, 2, 0, 1], 'int64')],
 'bincount_minlength': [([1, 2, 0, 1, 0, 0], 'int64')],
 'bincount_weights': [([0.5, 3.0, 0.0, 3.0], 'float32')],
 'bincount_int_weights': [([1.0, 0.0, 2.0], 'float64')],
 'bincount_empty': [([], 'int64')],
 'bincount_method': [([1, 0, 2], 'int64')],
 'tril_indices': [([[0, 1, 1, 2, 2, 2], [0, 0, 1, 0, 1, 2]], 'int64')],
 'tril_indices_offset': [([[0, 0, 1, 1, 1, 2, 2, 2, 2], [0, 1, 0, 1, 2, 0, 1, 2, 3]], 'int64')],
 'triu_indices': [([[0, 0, 0, 1, 1, 2], [0, 1, 2, 1, 2, 2]], 'int64')],
 'triu_indices_offset': [([[0, 0, 0, 1, 1, 1, 2, 2, 3], [0, 1, 2, 0, 1, 2, 1, 2, 2]], 'int64')],
 'triu_indices_int32': [([[0, 0, 1], [0, 1, 1]], 'int32')],
 'tril_indices_empty': [([[], []], 'int64')]}


@pytest.mark.parametrize("name", sorted(GRAD_CASES))
def test_values_and_gradients_match_torch(name):
    check_grad_case(tg, GRAD_CASES[name], TORCH_GRAD[name])


@pytest.mark.parametrize("name", sorted(VALUE_CASES))
def test_values_and_dtypes_match_torch(name):
    check_value_case(tg, VALUE_CASES[name], TORCH_VALUES[name])


@pytest.mark.parametrize("name", ["cdist_p2", "cdist_p3", "cdist_batched", "kron_2d", "diff",
                                  "baddbmm"])
def test_gradients_match_finite_differences(name):
    fn, inputs = GRAD_CASES[name]
    xs = [tg.tensor(a, requires_grad=True) for a in inputs]
    assert tg.autograd.gradcheck(lambda *t: fn(tg, *t), xs)


def test_no_gradient_where_torch_has_none():
    x = tg.tensor([1., 2., 2., 7.], requires_grad=True)
    assert not tg.histc(x, bins=3).requires_grad                     # torch 2.13: False
    assert tg.searchsorted(x, x).dtype is tg.int64
    assert not tg.unique(x).requires_grad       # torch 2.13 marks it, but has no backward
    # a cdist of p 0 counts coordinates: torch 2.13 keeps a grad_fn and gives zeros
    y = tg.tensor([[0., 1.]], requires_grad=True)
    d = tg.cdist(y, tg.tensor([[0., 3.], [0., 1.]]), p=0.0)
    assert d.tolist() == [[1.0, 0.0]]
    (g,) = tg.autograd.grad(d.sum(), [y])
    assert g.tolist() == [[0.0, 0.0]]


def test_meshgrid_without_indexing_warns_as_torch():
    a, b = tg.tensor([1., 2., 3.]), tg.tensor([4., 5.])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        g = tg.meshgrid(a, b)
    # torch 2.13: "torch.meshgrid: in an upcoming release, it will be required to pass the
    # indexing argument." and "ij" grids
    assert [w.filename for w in caught
            if "it will be required to pass the indexing argument" in str(w.message)] == \
        [__file__]
    assert [tuple(t.shape) for t in g] == [(3, 2), (3, 2)]
    assert g[0].tolist() == [[1., 1.], [2., 2.], [3., 3.]]


def test_compiled_static_ops_match_eager():
    def f(x, y, s, m):
        gx, gy = tg.meshgrid(x, y, indexing="xy")
        return (tg.hstack([x, y]), tg.vstack([x, x]), gx * gy, tg.kron(x, y), tg.diff(x, 2),
                tg.addmm(m, x.reshape(3, 1), y.reshape(1, 2), beta=0.5, alpha=2),
                tg.cdist(x.reshape(3, 1), y.reshape(2, 1)), tg.searchsorted(s, x),
                tg.bucketize(y, s, right=True), tg.histc(x, bins=4), tg.cartesian_prod(x, y),
                tg.tril_indices(3, 3), tg.column_stack([x, x]), tg.dstack([x, x]))
    x, y = tg.tensor([1., 4., 9.]), tg.tensor([2., 3.])
    s, m = tg.tensor([0., 2., 5.]), tg.ones(3, 2)
    compiled = tg.compile(f, fullgraph=True)
    for got, want in zip(compiled(x, y, s, m), f(x, y, s, m)):
        assert got.dtype is want.dtype
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6)
    # histc's data range and searchsorted's sums trace: torch 2.13 gives these values
    assert f(x, y, s, m)[9].tolist() == [1.0, 1.0, 0.0, 1.0]
    assert f(x, y, s, m)[7].tolist() == [1, 2, 3]


def test_compiled_training_step_through_cdist_and_addmm():
    w = tg.tensor([[0.5, -1.0], [2.0, 0.25]], requires_grad=True)
    x = tg.tensor([[1., 2.], [0., 1.], [3., -1.]])

    def step(x):
        h = tg.addmm(tg.ones(2), x, w, alpha=0.5)
        loss = tg.cdist(h, x).sum()
        loss.backward()
        return loss

    eager = step(x).item()
    g_eager = w.grad.numpy().copy()
    w.grad = None
    compiled = tg.compile(step)
    assert abs(compiled(x).item() - eager) < 1e-5
    np.testing.assert_allclose(w.grad.numpy(), g_eager, rtol=1e-5)


@pytest.mark.parametrize("call, what", [
    (lambda x: tg.unique(x), "unique"),
    (lambda x: tg.bincount(x.long()), "bincount"),
    (lambda x: tg.unique_consecutive(x), "unique_consecutive"),
])
def test_value_dependent_ops_refuse_to_trace(call, what):
    f = tg.compile(call, fullgraph=True)
    with pytest.raises(tg.TraceError, match=f"{what}: the result's shape depends on the values"):
        f(tg.tensor([1., 2., 2.]))
    # without fullgraph: a graph break, and the eager values
    with pytest.warns(UserWarning, match="graph break"):
        out = tg.compile(call)(tg.tensor([1., 2., 2.]))
    assert out.tolist() == ([0, 1, 2] if what == "bincount" else [1.0, 2.0])


# torch 2.13's messages (the part after our "op:" prefix), and the error types
ERRORS = [
    (lambda: tg.hstack([]), ValueError, "hstack expects a non-empty TensorList"),
    (lambda: tg.meshgrid(tg.ones(2), indexing="foo"), RuntimeError,
     'indexing must be one of "xy" or "ij", but received: foo'),
    (lambda: tg.meshgrid(tg.ones(3, 1), tg.ones(2), indexing="ij"), RuntimeError,
     "Expected 0D or 1D tensor in the tensor list"),
    (lambda: tg.meshgrid(tg.ones(2), tg.ones(2, dtype=tg.int64), indexing="ij"), TypeError,
     "meshgrid expects all tensors to have the same dtype"),
    (lambda: tg.addmm(tg.ones(3, 3), tg.ones(2, 4), tg.ones(4, 3)), tg.ShapeError,
     r"addmm: input f32\[3,3\] does not broadcast to the product's shape f32\[2,3\]"),
    (lambda: tg.addmm(tg.ones(2, 3), tg.ones(2, 4), tg.ones(2, 4)), ValueError,
     "cannot be multiplied"),
    (lambda: tg.addmm(*[tg.ones(2, 2, dtype=tg.int64)] * 3, alpha=0.5), RuntimeError,
     "argument alpha must not be a floating point number"),
    (lambda: tg.diff(tg.tensor(1.)), RuntimeError,
     "diff expects input to be at least one-dimensional"),
    (lambda: tg.diff(tg.ones(2), n=-1), RuntimeError, "order must be non-negative but got -1"),
    (lambda: tg.cdist(tg.ones(3, 2), tg.ones(2, 3)), RuntimeError,
     "X1 and X2 must have the same number of columns. X1: 2 X2: 3"),
    (lambda: tg.cdist(tg.ones(3, 2), tg.ones(2, 2), p=-1), RuntimeError,
     "cdist only supports non-negative p values"),
    (lambda: tg.cdist(tg.ones(3, 2), tg.ones(2, 2), compute_mode="foo"), ValueError,
     "foo is not a valid value for compute_mode"),
    (lambda: tg.cdist(tg.ones(3), tg.ones(3)), RuntimeError,
     "cdist only supports at least 2D tensors, X1 got: 1D"),
    (lambda: tg.searchsorted(tg.ones(2, 3), tg.ones(3, 3)), RuntimeError,
     r"boundaries tensor \[2, 3\] and input value tensor \[3, 3\]"),
    (lambda: tg.searchsorted(tg.ones(3), tg.ones(2), right=True, side="left"), RuntimeError,
     "side and right can't be set to opposites"),
    (lambda: tg.bucketize(tg.ones(2), tg.ones(2, 2)), RuntimeError,
     "boundaries tensor must be 1 dimension"),
    (lambda: tg.histc(tg.tensor([1, 2])), TypeError, "histc: expects a floating-point input"),
    (lambda: tg.histc(tg.ones(2), bins=0), RuntimeError, "bins must be > 0, but got 0"),
    (lambda: tg.histc(tg.ones(2), min=3, max=1), RuntimeError, "max must be larger than min"),
    (lambda: tg.bincount(tg.tensor([-1, 2])), RuntimeError,
     "bincount only supports 1-d non-negative integral inputs"),
    (lambda: tg.bincount(tg.tensor([[1, 2]])), RuntimeError,
     "bincount only supports 1-d non-negative integral inputs"),
    (lambda: tg.bincount(tg.tensor([1., 2.])), TypeError, "bincount: expects an integer input"),
    (lambda: tg.bincount(tg.tensor([0, 1]), weights=tg.ones(3)), RuntimeError,
     "weights should be 1-d and have the same length as input"),
    (lambda: tg.tril_indices(-1, 2), RuntimeError, "row must be non-negative"),
    (lambda: tg.unique(tg.ones(3), dim=2), IndexError, "Dimension out of range"),
    (lambda: tg.cartesian_prod(tg.ones(2, 2)), tg.ShapeError, "Expect a 1D vector"),
]


@pytest.mark.parametrize("call, kind, message", ERRORS)
def test_errors_name_the_op_and_the_line(call, kind, message):
    with pytest.raises(kind, match=message) as info:
        call()
    assert "test_surface_ops_more.py" in str(info.value)   # the user's line


def test_parameters_to_vector_and_back():
    lin = tg.nn.Linear(2, 3)
    vec = tg.nn.utils.parameters_to_vector(lin.parameters())
    assert vec.shape == (9,) and vec.grad_fn is not None      # torch 2.13: CatBackward0
    (vec * tg.arange(9.)).sum().backward()
    assert lin.weight.grad.tolist() == [[0., 1.], [2., 3.], [4., 5.]]
    assert lin.bias.grad.tolist() == [6., 7., 8.]
    tg.nn.utils.vector_to_parameters(tg.arange(9.) / 2, lin.parameters())
    # torch 2.13: weight [[0, .5], [1, 1.5], [2, 2.5]], bias [3, 3.5, 4], still leaves
    assert lin.weight.tolist() == [[0., .5], [1., 1.5], [2., 2.5]]
    assert lin.bias.tolist() == [3., 3.5, 4.] and lin.weight.is_leaf
    with pytest.raises(TypeError, match="expected torch.Tensor, but got: list"):
        tg.nn.utils.vector_to_parameters([1.], lin.parameters())
    with pytest.raises(RuntimeError, match=r"9 in all\), got f32\[3\]"):
        tg.nn.utils.vector_to_parameters(tg.ones(3), lin.parameters())


def test_inplace_scaled_products():
    x = tg.ones(2, 2)
    # torch 2.13: ones(2, 2).addmm_(ones, ones, alpha=2) is all 5; baddbmm_ with beta 0 all 2
    assert x.addmm_(tg.ones(2, 2), tg.ones(2, 2), alpha=2).tolist() == [[5., 5.], [5., 5.]]
    b = tg.full((1, 2, 2), float("nan"))
    assert b.baddbmm_(tg.ones(1, 2, 1), tg.ones(1, 1, 2), beta=0, alpha=2).tolist() == \
        [[[2., 2.], [2., 2.]]]
