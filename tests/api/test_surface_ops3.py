"""issue 16's third batch of torch functions (cov, corrcoef, gcd, lcm, rot90, take,
tensor_split, block_diag, combinations) against torch 2.13.

The cases are tests/surface_ops3_cases.py's, run here on tracegrad and recorded from the same
calls under torch 2.13.0+cpu by tools/record_torch_surface_cases.py (values below): outputs,
and for the differentiable ones the gradients of sum(out * (1, 2, 3, ...)).
"""
import math
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

import tracegrad as tg

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import surface_more_cases as helpers  # noqa: E402
from surface_ops3_cases import GRAD_CASES, VALUE_CASES  # noqa: E402

nan = math.nan

# torch 2.13.0+cpu
TORCH_GRAD = {'cov': ([[[2.138, -0.9169666666666666, -0.5042333333333334],
           [-0.9169666666666666, 0.511825, 0.001675000000000056],
           [-0.5042333333333334, 0.001675000000000056, 0.5804916666666666]]],
         [[[-2.963333333333334, 2.0633333333333335, -0.2233333333333334, 1.1233333333333333],
           [-3.163333333333333, 1.090000000000001, -0.09000000000000005, 2.163333333333332],
           [-3.3633333333333333, 0.1166666666666667, 0.04333333333333311, 3.203333333333333]]]),
 'cov_1d': ([1.8952300000000002],
            [[-0.20200000000000004, -0.34700000000000003, -0.8119999999999999, 0.408,
              0.9530000000000001]]),
 'cov_correction0': ([[[1.6035, -0.6877249999999999, -0.37817500000000004],
                       [-0.6877249999999999, 0.38386875, 0.001256250000000042],
                       [-0.37817500000000004, 0.001256250000000042, 0.43536874999999997]]],
                     [[[-2.2225, 1.5475000000000003, -0.16750000000000004, 0.8424999999999999],
                       [-2.3724999999999996, 0.8175000000000002, -0.0675, 1.6224999999999998],
                       [-2.5225, 0.08750000000000069, 0.03249999999999981, 2.4024999999999994]]]),
 'cov_fweights': ([[[2.5463999999999998, -1.2444, -0.2549200000000001],
                    [-1.2444, 0.6774, -0.041179999999999925],
                    [-0.2549200000000001, -0.041179999999999925, 0.42213666666666666]]],
                  [[[-2.231333333333333, 1.5693333333333335, 0.0, 0.6619999999999995],
                    [-2.4486666666666665, 0.20666666666666653, 0.0, 2.242],
                    [-2.6660000000000004, -1.1559999999999995, 0.0, 3.8219999999999996]]]),
 'cov_aweights': ([[[2.0474285714285716, -0.7052, -0.6883714285714286],
                    [-0.7052, 0.3135314285714286, 0.14538000000000006],
                    [-0.6883714285714286, 0.14538000000000006, 0.4231757142857144]]],
                  [[[-1.9762857142857144, 2.5102857142857147, -0.8594285714285717,
                     0.3254285714285714],
                    [-2.0111428571428576, 1.446285714285715, -0.14171428571428585,
                     0.7065714285714284],
                    [-2.046, 0.3822857142857152, 0.5759999999999993, 1.0877142857142856]]]),
 'cov_both_weights': ([[[4.213556043956045, -1.922479120879121, -0.7487736263736265],
                        [-1.922479120879121, 0.9560175824175825, 0.15292747252747257],
                        [-0.7487736263736265, 0.15292747252747257, 0.5845956043956043]]],
                      [[[-3.4597802197802197, 3.3951648351648354, 0.0, 0.06461538461538409],
                        [-3.297142857142857, 1.3942857142857155, 0.0, 1.9028571428571415],
                        [-3.1345054945054946, -0.6065934065934058, 0.0, 3.741098901098901]]]),
 'cov_method': ([[[0.2972333333333333, 0.6681666666666667],
                  [0.6681666666666667, 2.096033333333333]]],
                [[[1.6300000000000001, -4.654999999999999, 3.0249999999999995],
                  [2.5300000000000007, -7.8950000000000005, 5.364999999999999]]]),
 'corrcoef': ([[[1.0, -0.8765747380786134, -0.4526157965104168],
                [-0.8765747380786134, 1.0, 0.0030729540695779993],
                [-0.4526157965104167, 0.0030729540695779997, 1.0]]],
              [[[-1.7297074972727646, 0.00836138310695883, -0.10319713028298123,
                 1.8245432444487872],
                [-7.035878891428908, 3.4776334213591342, -1.0423861561219705, 4.600631626191744],
                [-1.2281096712557584, 2.0822007767017294, 1.9481062403403233,
                 -2.8021973457862943]]]),
 'corrcoef_method': ([[[1.0, 0.8465194818086902], [0.8465194818086902, 1.0]]],
                     [[[2.7919600539746403, -1.7320492927435254, -1.0599107612311147],
                       [-0.9678068655757545, 0.10631211780945826, 0.8614947477662962]]]),
 'rot90': ([[[0.41, 1.4], [-0.67, -1.24], [-0.26, 1.11]]], [[[5.0, 3.0, 1.0], [6.0, 4.0, 2.0]]]),
 'rot90_k2': ([[[1.4, -1.24, 1.11], [0.41, -0.67, -0.26]]], [[[6.0, 5.0, 4.0], [3.0, 2.0, 1.0]]]),
 'rot90_k3_dims': ([[[[-1.11, 0.47], [0.22, -1.0], [0.14, 0.91]],
                     [[-0.95, 1.12], [-0.05, 1.21], [-0.41, -0.48]],
                     [[0.67, 1.33], [-0.52, 1.28], [0.57, 0.55]],
                     [[-0.31, 1.55], [0.37, 0.13], [0.59, 1.58]]]],
                   [[[[19.0, 13.0, 7.0, 1.0], [21.0, 15.0, 9.0, 3.0], [23.0, 17.0, 11.0, 5.0]],
                     [[20.0, 14.0, 8.0, 2.0], [22.0, 16.0, 10.0, 4.0], [24.0, 18.0, 12.0, 6.0]]]]),
 'rot90_k4': ([[[-0.26, -0.67, 0.41], [1.11, -1.24, 1.4]]], [[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]]),
 'take': ([[[-0.26, 1.4], [1.4, 0.41], [0.41, 0.41]]], [[[1.0, 0.0, 15.0], [0.0, 0.0, 5.0]]]),
 'take_method': ([[0.22, -0.31, -0.31]],
                 [[[[5.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 1.0], [0.0, 0.0, 0.0, 0.0]],
                   [[0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0]]]]),
 'tensor_split_sections': ([[[1.23, -1.89], [-1.01, 0.01], [0.03, 1.55]], [[0.27], [-0.52], [0.75]],
                            [[1.19], [-1.67], [1.66]]],
                           [[[1.0, 2.0, 1.0, 1.0], [3.0, 4.0, 2.0, 2.0], [5.0, 6.0, 3.0, 3.0]]]),
 'tensor_split_indices': ([[-0.44], [-0.73, -1.66, 0.78], [], [-1.66, 0.78, 1.87]],
                          [[1.0, 1.0, 3.0, 5.0, 3.0]]),
 'tensor_split_tensor': ([[[1.23], [-1.01], [0.03]], [[-1.89, 0.27], [0.01, -0.52], [1.55, 0.75]],
                          [[1.19], [-1.67], [1.66]]],
                         [[[1.0, 1.0, 2.0, 1.0], [2.0, 3.0, 4.0, 2.0], [3.0, 5.0, 6.0, 3.0]]]),
 'tensor_split_kw': ([[-0.44, -0.73, -1.66], [0.78, 1.87]], [[1.0, 2.0, 3.0, 1.0, 2.0]]),
 'block_diag': ([[[-0.26, -0.67, 0.41, 0.0, 0.0, 0.0, 0.0], [1.11, -1.24, 1.4, 0.0, 0.0, 0.0, 0.0],
                  [0.0, 0.0, 0.0, -1.21, 1.61, 1.76, 0.0], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, -0.44]]],
                [[[1.0, 2.0, 3.0], [8.0, 9.0, 10.0]],
                 [[18.0, 19.0, 20.0], [0.0, 0.0, 0.0], [0.0, 0.0, 0.0]],
                 [28.0, 0.0, 0.0, 0.0, 0.0]]),
 'block_diag_one': ([[[-0.26, -0.67, 0.41], [1.11, -1.24, 1.4]]],
                    [[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]]),
 'combinations': ([[[-0.44, -0.73], [-0.44, -1.66], [-0.44, 0.78], [-0.73, -1.66], [-0.73, 0.78],
                    [-1.66, 0.78]]],
                  [[9.0, 18.0, 23.0, 28.0]]),
 'combinations_r3_repl': ([[[-0.44, -0.44, -0.44], [-0.44, -0.44, -0.73], [-0.44, -0.44, -1.66],
                            [-0.44, -0.73, -0.73], [-0.44, -0.73, -1.66], [-0.44, -1.66, -1.66],
                            [-0.73, -0.73, -0.73], [-0.73, -0.73, -1.66], [-0.73, -1.66, -1.66],
                            [-1.66, -1.66, -1.66]]],
                          [[69.0, 173.0, 223.0]])}
TORCH_VALUES = {'gcd': [([2, 5, 3, 0, 6, 7], 'int64')],
 'lcm': [([12, 0, 18, 0, 36, 21], 'int64')],
 'gcd_broadcast_int8': [([[2, 1], [3, 3]], 'int64')],
 'lcm_int8_wraps': [([44], 'int8')],
 'lcm_int32': [([12, 12], 'int32')],
 'gcd_inplace': [([2, 3], 'int64')],
 'lcm_inplace': [([12], 'int16')],
 'cov_int': [([[1.0, 1.5], [1.5, 4.333333492279053]], 'float32')],
 'cov_one_row': [(2.3333334922790527, 'float32')],
 'corrcoef_constant_row': [([[1.0, 0.7205767035484314, nan], [0.7205767035484314, 1.0, nan],
                             [nan, nan, nan]],
                            'float32')],
 'corrcoef_1d': [(1.0, 'float32')],
 'corrcoef_int': [([[1.0, 0.7205767035484314], [0.7205767035484314, 1.0]], 'float32')],
 'tensor_split_int': [([0], 'int64'), ([1, 2, 3, 4, 5, 6], 'int64'), ([], 'int64'),
                      ([3, 4, 5, 6], 'int64')],
 'tensor_split_empty_dim': [([], 'float32'), ([], 'float32'), ([], 'float32')],
 'block_diag_promote': [([[1.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0], [1.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0],
                          [0.0, 0.0, 1.5, 0.0, 0.0, 0.0, 0.0],
                          [0.0, 0.0, 0.0, 7.0, 0.0, 0.0, 0.0]],
                         'float32')],
 'block_diag_int': [([[1, 2, 0], [0, 0, 3]], 'int64')],
 'block_diag_none': [([[]], 'float32')],
 'combinations_r0': [([], 'float32')],
 'combinations_r_too_big': [([], 'int64')],
 'combinations_r1': [([[1], [2], [3]], 'int64')],
 'rot90_int': [([[[1, 3], [0, 2]], [[5, 7], [4, 6]]], 'int64')],
 'take_int': [(4, 'int64')]}


@pytest.mark.parametrize("name", sorted(GRAD_CASES))
def test_values_and_gradients_match_torch(name):
    helpers.check_grad_case(tg, GRAD_CASES[name], TORCH_GRAD[name])


@pytest.mark.parametrize("name", sorted(VALUE_CASES))
def test_values_and_dtypes_match_torch(name):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        helpers.check_value_case(tg, VALUE_CASES[name], TORCH_VALUES[name])


def test_empty_pieces_keep_their_shapes():
    # torch 2.13: three (0, 2) pieces; combinations r 4 of 3 is (0, 4); block_diag() (1, 0)
    assert [tuple(p.shape) for p in tg.tensor_split(tg.ones(0, 2), 3)] == [(0, 2)] * 3
    assert tuple(tg.combinations(tg.tensor([1, 2, 3]), r=4).shape) == (0, 4)
    assert tuple(tg.block_diag().shape) == (1, 0)
    assert tuple(tg.combinations(tg.tensor([1., 2.]), r=3, with_replacement=True).shape) == (4, 3)


# the op database's gradcheck covers the registry composites; these are the weighted cov and
# the surface functions (combinations' index_select, tensor_split of a tensor's indices)
@pytest.mark.parametrize("name", ["cov_both_weights", "tensor_split_tensor", "combinations"])
def test_gradients_match_finite_differences(name):
    fn, inputs = GRAD_CASES[name]
    xs = [tg.tensor(a, requires_grad=True) for a in inputs]
    assert tg.autograd.gradcheck(lambda *t: fn(tg, *t), xs)


def test_cov_warns_on_no_degrees_of_freedom():
    # torch 2.13: "cov(): degrees of freedom is <= 0 ..." and nan (0/0), inf (0.5/0)
    with pytest.warns(UserWarning, match=r"degrees of freedom is <= 0") as caught:
        assert math.isnan(tg.cov(tg.tensor([[0.]])).item())
    assert caught[0].filename == __file__   # the user's line
    with pytest.warns(UserWarning, match=r"degrees of freedom is <= 0"):
        assert tg.cov(tg.tensor([0., 1.]), correction=3).item() == math.inf


def test_compiled_ops_match_eager():
    def f(x, i, a, b):
        return (tg.cov(x, aweights=tg.ones(4) / 2), tg.corrcoef(x), tg.rot90(x, 3), tg.take(x, i),
                *tg.tensor_split(x, [1, 3], dim=1), tg.block_diag(x, x[0]),
                tg.combinations(x[0]), tg.gcd(a, b), tg.lcm(a, b))
    x = tg.tensor(X34_F32)
    i, a, b = tg.tensor([0, -1, 5]), tg.tensor([4, 9, 0]), tg.tensor([6, -6, 0])
    compiled = tg.compile(f, fullgraph=True)
    for got, want in zip(compiled(x, i, a, b), f(x, i, a, b)):
        assert got.dtype is want.dtype and got.shape == want.shape
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5, atol=1e-6)
    # torch 2.13: gcd [2, 3, 0], lcm [12, 18, 0]
    assert f(x, i, a, b)[-2].tolist() == [2, 3, 0] and f(x, i, a, b)[-1].tolist() == [12, 18, 0]


X34_F32 = np.array(GRAD_CASES["cov"][1][0], np.float32)

# torch 2.13's messages (the part after our "op:" prefix), and the error types
ERRORS = [
    (lambda: tg.gcd(tg.tensor([1., 2.]), tg.tensor([1., 2.])), TypeError,
     "gcd: only integer tensors are supported"),
    (lambda: tg.lcm(tg.tensor([True]), tg.tensor([True])), TypeError,
     "lcm: only integer tensors are supported"),
    (lambda: tg.ones(2).gcd_(tg.ones(2)), TypeError, "gcd: only integer tensors"),
    (lambda: tg.take(tg.ones(2, 3), tg.tensor([6])), IndexError,
     "out of range: tried to access index 6 on a tensor of 6 elements."),
    (lambda: tg.take(tg.ones(2, 3), tg.tensor([-7])), IndexError,
     "out of range: tried to access index -7 on a tensor of 6 elements."),
    (lambda: tg.take(tg.ones(2, 3), tg.tensor([1.])), TypeError,
     "expected an int64 or int32 index"),
    (lambda: tg.take(tg.ones(2, 3), tg.tensor([1], dtype=tg.int32)), RuntimeError,
     "take\\(\\): Expected a long tensor for index"),
    (lambda: tg.rot90(tg.ones(2, 3), 1, [0]), RuntimeError,
     "expected total rotation dims == 2, but got dims = 1"),
    (lambda: tg.rot90(tg.ones(2, 3), 1, [0, 0]), RuntimeError,
     "expected rotation dims to be different, but got dim0 = 0 and dim1 = 0"),
    (lambda: tg.rot90(tg.ones(2, 3), 1, [0, 5]), IndexError, "dimension out of range"),
    (lambda: tg.rot90(tg.ones(3)), RuntimeError, "expected total dims >= 2, but got total dims = 1"),
    (lambda: tg.tensor_split(tg.arange(7), 0), RuntimeError,
     "number of sections must be larger than 0, got 0"),
    (lambda: tg.tensor_split(tg.tensor(1), 2), RuntimeError,
     "tensor_split expected at least a 1-dimensional tensor, but got a tensor with 0 dims"),
    (lambda: tg.tensor_split(tg.arange(7), tg.tensor([[2, 3]])), RuntimeError,
     "zero-dimensional or one-dimensional tensor, but got a tensor with 2 dims"),
    (lambda: tg.tensor_split(tg.arange(7), tg.tensor([2.])), RuntimeError,
     "to have dtype of long, but got float32"),
    (lambda: tg.tensor_split(tg.arange(7), 2.5), TypeError, "must be an int, a tuple of ints"),
    (lambda: tg.cov(tg.ones(2, 2, 2)), RuntimeError,
     "expected input to have two or fewer dimensions but got an input with 3 dimensions"),
    (lambda: tg.cov(tg.ones(1, 3), fweights=tg.tensor([1., 2, 3])), RuntimeError,
     "expected fweights to have integral dtype"),
    (lambda: tg.cov(tg.ones(1, 3), fweights=tg.tensor([1, -2, 3])), RuntimeError,
     "fweights cannot be negative"),
    (lambda: tg.cov(tg.ones(1, 3), aweights=tg.tensor([1., -2, 3])), RuntimeError,
     "aweights cannot be negative"),
    (lambda: tg.cov(tg.ones(1, 3), aweights=tg.tensor([1., 2])), RuntimeError,
     "same numel as there are observations in the input but got 2 != 3"),
    (lambda: tg.cov(tg.ones(1, 3), fweights=tg.tensor([[1, 2, 3]])), RuntimeError,
     "expected fweights to have one or fewer dimensions but got fweights with 2 dimensions"),
    (lambda: tg.corrcoef(tg.ones(2, 2, 2)), RuntimeError, "two or fewer dimensions"),
    (lambda: tg.block_diag(tg.ones(2, 2, 2)), RuntimeError,
     "Input tensors must have 2 or fewer dimensions. Input 0 has 3 dimensions"),
    (lambda: tg.combinations(tg.ones(2, 2)), RuntimeError,
     r"Expect a 1D vector, but got shape \[2, 2\]"),
    (lambda: tg.combinations(tg.ones(3), r=-1), RuntimeError,
     "Expect a non-negative number, but got -1"),
]


@pytest.mark.parametrize("call, kind, message", ERRORS)
def test_errors_name_the_op_and_the_line(call, kind, message):
    with pytest.raises(kind, match=message) as info:
        call()
    assert "test_surface_ops3.py" in str(info.value)   # the user's line
