"""Complex dtypes: promotion, creation, the IR text, torch's gradients, and the one rule
that every op without complex support rejects complex tensors.

The op database (tests/opdb/) runs the generic checks on every op that takes complex
tensors (forward, finite differences along the real and imaginary parts, interpreter vs
jax); this file holds what is specific to complex numbers.  Gradients below are
torch 2.13's (``out.backward(grad)`` on complex128 inputs), hard-coded.
"""
from __future__ import annotations

import os
import sys
import warnings

import numpy as np
import pytest

import tracegrad as tg
from tracegrad.ir import parse, print_graph, verify
from tracegrad.ir import types as T
from tracegrad.ir.builder import Builder
from tracegrad.ir.errors import IRError
from tracegrad.ir.graph import Graph, Node
from tracegrad.ir.registry import COMPLEX, REGISTRY, check_complex

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from opdb import OPS  # noqa: E402
from opdb.core import complexify  # noqa: E402

C64, C128, F16, F32, F64 = tg.complex64, tg.complex128, tg.float16, tg.float32, tg.float64
Z = [1 + 2j, -0.5 + 0.3j, 0.7 - 1.1j]
W = [0.3 - 0.4j, 1.2 + 0.5j, -0.8 + 0.9j]
G = [1 - 0.5j, 0.3 + 0.2j, -0.7 + 1.0j]      # the cotangent of a complex result
G_REAL = [1.0, -2.0, 0.5]                    # ... of a real result


@pytest.fixture(autouse=True)
def _interpreter(monkeypatch):
    """Backward programs on the interpreter alone: these tests check values (the executors'
    agreement on complex programs is test_ops.py's test_executors_agree)."""
    monkeypatch.setenv("TRACEGRAD_CROSSCHECK", "0")
    tg.set_executor("interpreter")
    yield
    tg.set_executor("auto")


# ---- dtypes and promotion ------------------------------------------------------------------
def test_complex_dtypes():
    assert (tg.cfloat, tg.cdouble) == (C64, C128)
    assert (C64.short, C128.short, C64.itemsize, C128.itemsize) == ("c64", "c128", 8, 16)
    assert C64.is_complex and C64.is_differentiable and not C64.is_floating_point   # as torch
    assert not F32.is_complex and F32.is_differentiable and not tg.int64.is_differentiable
    assert T.as_dtype("cfloat") is C64 and T.as_dtype(complex) is C64
    assert T.from_numpy(np.complex128) is C128
    assert (C64.to_real(), C128.to_real(), F32.to_complex(), F64.to_complex()) == (
        F32, F64, C64, C128)
    z = tg.zeros(2, dtype=C64)
    assert z.is_complex() and not z.is_floating_point()


# torch 2.13: torch.promote_types(a, b) for a complex b
PROMOTE = [(F16, C64, C64), (tg.bfloat16, C64, C64), (F32, C64, C64), (F64, C64, C128),
           (tg.int64, C64, C64), (tg.bool, C64, C64), (C64, C128, C128), (F32, C128, C128)]


@pytest.mark.parametrize("a,b,want", PROMOTE)
def test_promote_types_matches_torch(a, b, want):
    assert T.promote_types(a, b) is want and T.promote_types(b, a) is want


# torch 2.13: dtype of x * y for (shape and dtype of x, of y); () is a 0-d tensor, a Python
# number has no shape
RESULT = [(((3,), F64), ((), C64), C128),     # a 0-d complex keeps the tensor's float64
          (((3,), F32), ((), C128), C64),
          (((3,), tg.int64), ((), C128), C128),
          (((3,), tg.bfloat16), ((), C64), C64),
          (((3,), C64), ((), F64), C64),
          (((3,), C64), ((3,), F64), C128),
          (((), F64), ((), C64), C128),
          (((3,), F32), 1j, C64), (((3,), F64), 1j, C128), (((3,), tg.int64), 1j, C64),
          (((3,), tg.bool), 1j, C64), (((3,), C64), 2.5, C64), (((), C64), 1j, C64)]


@pytest.mark.parametrize("x,y,want", RESULT)
def test_result_type_matches_torch(x, y, want):
    a = tg.ones(x[0], dtype=x[1])
    b = tg.ones(y[0], dtype=y[1]) if isinstance(y, tuple) else y
    assert (a * b).dtype is want
    assert (b * a).dtype is want


def test_float16_with_complex_is_rejected():
    # torch makes complex32 here, which tracegrad does not have
    with pytest.raises(TypeError, match="complex32"):
        tg.ones(3, dtype=F16) * 1j
    with pytest.raises(TypeError, match="complex32"):
        tg.ones(3, dtype=F16) + tg.ones((), dtype=C64)


# ---- creation ------------------------------------------------------------------------------
def test_tensor_of_complex_data():
    assert tg.tensor([1 + 2j, 3]).dtype is C64            # torch: the default complex dtype
    assert tg.tensor(1j).dtype is C64
    assert tg.tensor(np.array([1j])).dtype is C128         # NumPy keeps its dtype
    assert tg.tensor([1.0, 2.0], dtype=C128).dtype is C128
    np.testing.assert_array_equal(tg.tensor([1 + 2j]).numpy(), np.array([1 + 2j], np.complex64))
    assert complex(tg.tensor([2 - 1j])) == 2 - 1j
    z = tg.tensor(Z, requires_grad=True)
    assert z.requires_grad and z.dtype is C64
    with pytest.raises(RuntimeError, match="floating point and complex"):
        tg.tensor([1, 2]).requires_grad_()


def test_full_zeros_ones_complex():
    np.testing.assert_array_equal(tg.full((2,), 1 - 2j).numpy(), [1 - 2j, 1 - 2j])
    assert tg.full((2,), 1 - 2j).dtype is C64
    assert tg.zeros(2, 3, dtype=C128).dtype is C128
    np.testing.assert_array_equal(tg.ones(2, dtype=C64).numpy(), [1, 1])
    with pytest.raises(TypeError, match="full: a complex fill_value"):
        tg.full((2,), 1j, dtype=F32)


def test_complex_and_polar_values():
    re, im = tg.tensor([1.0, -2.0]), tg.tensor([0.5, 3.0])
    np.testing.assert_array_equal(tg.complex(re, im).numpy(), [1 + 0.5j, -2 + 3j])
    assert tg.complex(re, im).dtype is C64
    assert tg.complex(re.double(), im.double()).dtype is C128
    inf = tg.complex(tg.tensor([np.inf]), tg.tensor([0.0])).numpy()
    assert inf[0].real == np.inf and inf[0].imag == 0.0       # not nan + 0j (1j * inf)
    np.testing.assert_allclose(tg.polar(tg.tensor([2.0]), tg.tensor([np.pi / 2])).numpy(),
                               [2j], atol=1e-6)
    np.testing.assert_array_equal(tg.view_as_real(tg.tensor([1 + 2j, 3j])).numpy(),
                                  [[1, 2], [0, 3]])
    np.testing.assert_array_equal(tg.view_as_complex(tg.tensor([[1.0, 2.0]])).numpy(), [1 + 2j])
    with pytest.raises(TypeError, match="same dtype"):
        tg.complex(re, im.double())


def test_randn_complex_parts_are_normal_with_variance_half():
    tg.manual_seed(0)
    z = tg.randn(20000, dtype=C64).numpy()
    assert z.dtype == np.complex64
    # torch: real and imaginary parts each N(0, 1/2), so E|z|^2 = 1
    for part in (z.real, z.imag):
        assert abs(part.mean()) < 0.02 and abs(part.var() - 0.5) < 0.03
    assert tg.rand(3, dtype=C128).dtype is C128


def test_real_imag_conj_angle_values():
    z = tg.tensor([3 + 4j, -1 + 0j, 0j], dtype=C128)
    np.testing.assert_array_equal(z.real.numpy(), [3, -1, 0])
    np.testing.assert_array_equal(z.imag.numpy(), [4, 0, 0])
    assert z.real.dtype is F64 and z.abs().dtype is F64 and z.angle().dtype is F64
    np.testing.assert_array_equal(z.conj().numpy(), [3 - 4j, -1, 0])
    np.testing.assert_array_equal(z.abs().numpy(), [5, 1, 0])
    np.testing.assert_allclose(z.angle().numpy(), [np.arctan2(4, 3), np.pi, 0.0])
    np.testing.assert_allclose(z.sgn().numpy(), [0.6 + 0.8j, -1, 0])
    # torch.angle of a real tensor: pi where x < 0, 0 elsewhere (-0.0 too), nan stays nan
    x = tg.tensor([np.nan, -0.0, 0.0, -2.0, 3.0])
    np.testing.assert_array_equal(x.angle().numpy(), [np.nan, 0, 0, np.float32(np.pi), 0])
    assert tg.tensor([1, -2]).angle().dtype is F32
    # torch: a RuntimeError for Tensor.imag of a real tensor
    with pytest.raises(RuntimeError, match="imag: is not implemented for tensors with non-comp"):
        tg.tensor([1.0]).imag


# ---- gradients: torch 2.13's values --------------------------------------------------------
def _grads(fn, n):
    args = [tg.tensor(np.array(v), requires_grad=True) for v in (Z, W)[:n]]
    out = fn(*args)
    g = G if out.dtype.is_complex else G_REAL
    out.backward(tg.tensor(np.array(g[:out.numel()]).reshape(out.shape)))
    return [a.grad.numpy() for a in args]


F = tg.nn.functional
# torch 2.13 gives these gradients (out.backward(G or G_REAL) at Z, W in complex128)
TORCH_GRADS = {
    "abs_squared": (lambda z: (z * z.conj()).real.sum().reshape(1), 1,
                    [[2 + 4j, -1 + 0.6j, 1.4 - 2.2j]]),       # |z|^2 -> 2z (with G_REAL[0] = 1)
    "abs": (tg.abs, 1, [[0.4472135955 + 0.894427191j, 1.714985851425 - 1.028991510855j,
                         0.268437746097 - 0.421830743866j]]),
    "angle": (tg.angle, 1, [[-0.4 + 0.2j, 1.764705882353 + 2.941176470588j,
                             0.323529411765 + 0.205882352941j]]),
    "sgn": (tg.sgn, 1, [[0.4472135955 - 0.22360679775j, 0.287512333915 + 0.479187223192j,
                         -0.034739002436 - 0.022106637914j]]),
    "real": (lambda z: z.real, 1, [[1, -2, 0.5]]),
    "imag": (lambda z: z.imag, 1, [[1j, -2j, 0.5j]]),
    "conj": (tg.conj, 1, [[1 + 0.5j, 0.3 - 0.2j, -0.7 - 1j]]),
    "exp": (tg.exp, 1, [[-2.367067719759 - 1.906124480126j, 0.20968067448 + 0.062115554428j,
                         -2.434072526575 - 0.34283944635j]]),
    "log": (tg.log, 1, [[0.4 + 0.3j, -0.617647058824 - 0.029411764706j,
                         0.358823529412 + 0.864705882353j]]),
    "sqrt": (tg.sqrt, 1, [[0.372326636566 + 0.033572671876j, -0.07377024805 + 0.224265446901j,
                           -0.057982196019 + 0.531349718444j]]),
    "sigmoid": (tg.sigmoid, 1, [[0.351247947423 + 0.35027387592j,
                                 0.075365039753 + 0.042553231973j,
                                 -0.072345906069 + 0.349771184962j]]),
    "tanh": (tg.tanh, 1, [[-0.586053108682 - 0.417102221774j, 0.290505997831 + 0.091147549445j,
                           1.413867100893 + 0.665219223035j]]),
    "sin": (tg.sin, 1, [[3.558671906596 + 2.035536295642j, 0.304410216522 + 0.139675728544j,
                         -0.032859641993 + 1.878466787148j]]),
    "reciprocal": (tg.reciprocal, 1, [[0.04 - 0.22j, -0.934256055363 + 0.501730103806j,
                                       -0.707266435986 - 0.123875432526j]]),
    "acosh": (tg.acosh, 1, [[0.35512030998 + 0.307994211894j, -0.262872872224 + 0.276845850757j,
                             0.450258641684 + 0.66532533208j]]),
    "asin": (tg.asin, 1, [[0.307994211894 - 0.35512030998j, 0.276845850757 + 0.262872872224j,
                           -0.66532533208 + 0.450258641684j]]),
    "mul": (lambda a, b: a * b, 2, [[0.5 + 0.25j, 0.46 + 0.09j, 1.46 - 0.17j],
                                    [-2.5j, -0.09 - 0.19j, -1.59 - 0.07j]]),
    "div": (lambda a, b: a / b, 2,
            [[0.4 - 2.2j, 0.153846153846 + 0.230769230769j, -0.234482758621 - 0.986206896552j],
             [9.6 - 2.8j, -0.042330450614 + 0.116977696859j, -0.080618311534 - 1.094649227111j]]),
    "pow": (lambda a, b: a ** b, 2,
            [[0.005083128307 + 0.495557547635j, 0.114422513148 - 0.006565974927j,
              -1.254518635029 - 1.86870861723j],
             [0.467134307639 - 2.997299119633j, -0.085169147122 + 0.106750616685j,
              -1.952571246474 + 1.610363783789j]]),
    "pow_scalar": (lambda a: a ** 2.5, 1, [[-4.913446110984 - 7.950122809463j,
                                            -0.395414368792 + 0.068756985445j,
                                            -3.88265692635 - 2.359321895744j]]),
    "dot": (lambda a, b: tg.dot(a, b).reshape(1), 2,          # no conjugation
            [[0.5 + 0.25j, 0.95 - 1.1j, -1.25 - 0.5j], [-2.5j, -0.65 - 0.05j, 1.25 + 0.75j]]),
    "vdot": (lambda a, b: tg.vdot(a, b).reshape(1), 2,        # conj(a) . b
             [[0.5 - 0.25j, 0.95 + 1.1j, -1.25 + 0.5j], [2 + 1.5j, -0.35 + 0.55j, 0.15 - 1.45j]]),
    "matmul": (lambda a, b: (a.reshape(3, 1) @ b.reshape(1, 3)).sum(0), 2,
               [[2.42 + 0.17j] * 3, [0.6 - 1.8j, 0.6 - 0.12j, 0.36 + 2.04j]]),
    "prod": (lambda a: a.prod().reshape(1), 1, [[-0.4 - 0.75j, 2.75 - 1.75j, -0.75 + 1.25j]]),
    "mean": (lambda a: a.mean().reshape(1), 1, [[1 / 3 - 1j / 6] * 3]),
    "cumprod": (lambda a: a.cumprod(0), 1, [[1.684 - 0.178j, -1.03 + 2.71j, 0.07 - 1.59j]]),
    "sum_abs": (lambda a: a.abs().sum().reshape(1), 1,
                [[0.4472135955 + 0.894427191j, -0.857492925713 + 0.514495755428j,
                  0.536875492193 - 0.843661487732j]]),
    # reductions whose result is real (var, std, norms, l1_loss): G_REAL[0] = 1 on it
    "var": (lambda z: z.var().reshape(1), 1, [[0.6 + 1.6j, -0.9 - 0.1j, 0.3 - 1.5j]]),
    "std": (lambda z: z.std(correction=0).reshape(1), 1,
            [[0.140487871737 + 0.374634324633j, -0.210731807606 - 0.02341464529j,
              0.070243935869 - 0.351219679343j]]),
    "std_mean": (lambda z: (lambda s, m: s + m)(*tg.std_mean(z)).reshape(1), 1,
                 [[0.505395133736 + 0.292164801074j, 0.075240632729 - 0.1953436334j,
                   0.419364233535 - 0.596821167674j]]),
    "logsumexp": (lambda z: z.logsumexp(0).reshape(1), 1,
                  [[0.89823626753 - 3.143685505256j, 0.669780845108 + 0.289131139353j,
                    -0.568017112639 + 2.354554365904j]]),
    "norm": (lambda z: z.norm().reshape(1), 1,
             [[0.376889180722 + 0.753778361444j, -0.188444590361 + 0.113066754217j,
               0.263822426506 - 0.414578098794j]]),
    "norm_p1": (lambda z: z.norm(1).reshape(1), 1,
                [[0.4472135955 + 0.894427191j, -0.857492925713 + 0.514495755428j,
                  0.536875492193 - 0.843661487732j]]),
    "norm_p3": (lambda z: z.norm(3).reshape(1), 1,
                [[0.392551175775 + 0.785102351551j, -0.051182411386 + 0.030709446831j,
                  0.160226291555 - 0.251784172443j]]),
    "vector_norm": (lambda z: tg.linalg.vector_norm(z, 3).reshape(1), 1,
                    [[0.392551175775 + 0.785102351551j, -0.051182411386 + 0.030709446831j,
                      0.160226291555 - 0.251784172443j]]),
    "matrix_norm": (lambda a, b: tg.linalg.matrix_norm(tg.outer(a, b), 1).reshape(1), 2,
                    [[0.58137767415 + 1.1627553483j, -1.114740803426 + 0.668844482056j,
                      0.697938139851 - 1.096759934052j], [0j, 3.805849521254 + 1.585770633856j,
                                                          0j]]),
    "l1_loss": (lambda a, b: F.l1_loss(a, b).reshape(1), 2,
                [[0.093333333333 + 0.32j, -0.331050201441 - 0.038947082522j,
                  0.2 - 0.266666666667j], [-0.093333333333 - 0.32j,
                                           0.331050201441 + 0.038947082522j,
                                           -0.2 + 0.266666666667j]]),
    "logaddexp": (tg.logaddexp, 2,
                  [[0.906404206245 - 1.268545160091j, 0.040580377902 + 0.038356291054j,
                    -0.969697148496 + 0.885477444679j],
                   [0.093595793755 + 0.768545160091j, 0.259419622098 + 0.161643708946j,
                    0.269697148496 + 0.114522555321j]]),
    "lerp": (lambda a, b: tg.lerp(a, b, a * b), 2,
             [[-0.95 + 1.275j, 1.303 + 0.444j, -4.439 - 3.152j],
              [7 + 1j, -0.394 - 0.488j, 3.454 + 4.772j]]),
    "addcmul": (lambda a, b: tg.addcmul(a, a, b, value=0.5 - 1j), 2,
                [[1 + 0.125j, 0.44 + 0.705j, 0.2 + 2.375j],
                 [2.5 - 1.25j, 0.145 - 0.185j, -0.725 - 1.625j]]),
    "addcdiv": (lambda a, b: tg.addcdiv(a, a, b, value=2.0), 2,
                [[1.8 - 4.9j, 0.607692307692 + 0.661538461538j, -1.168965517241 - 0.972413793103j],
                 [19.2 - 5.6j, -0.084660901229 + 0.233955393719j,
                  -0.161236623068 - 2.189298454221j]]),
    "normalize": (lambda a: F.normalize(a, dim=0), 1,
                  [[0.466828644304 - 0.008565663198j, 0.068097022426 + 0.102359675219j,
                    -0.200864801999 + 0.277955770783j]]),
    "conv1d": (lambda a, b: F.conv1d(a.reshape(1, 1, 3), b[:2].reshape(1, 1, 2)).reshape(2), 2,
               [[0.5 + 0.25j, 0.96 - 0.92j, 0.46 + 0.09j], [-0.09 - 2.69j, -0.66 + 0.42j, 0j]]),
    "conv_transpose2d": (lambda a, b: F.conv_transpose2d(a.reshape(1, 1, 1, 3),
                                                         b[:2].reshape(1, 1, 1, 2)).reshape(4)[:3],
                         2, [[0.96 + 0.34j, -0.33 + 1.73j, -0.61 + 0.02j],
                             [-1.68 - 2.76j, 1.35 - 0.69j, 0j]]),
}


@pytest.mark.parametrize("name", sorted(TORCH_GRADS))
def test_gradient_matches_torch(name):
    fn, n, want = TORCH_GRADS[name]
    for i, (got, w) in enumerate(zip(_grads(fn, n), want)):
        np.testing.assert_allclose(got, np.array(w), rtol=1e-9, atol=1e-11,
                                   err_msg=f"{name}: gradient of argument {i}")


def test_logaddexp_and_logsumexp_values_match_torch():
    # torch 2.13 (complex128): logsumexp is the principal log of the sum (shifted by the
    # largest real part); logaddexp is max + log1p(exp(min - max)) with the operands ordered
    # by real part (ties: the first is max), so its imaginary part may leave (-pi, pi]
    inf = np.inf

    def c(*v):
        return tg.tensor(np.array(v, np.complex128))

    def check(got, want):
        np.testing.assert_allclose(got.numpy().reshape(-1), np.array(want, complex),
                                   rtol=1e-9, atol=1e-12)

    check(tg.logsumexp(c(3j, 3.5j), 0), [0.661566129312 - 3.033185307180j])
    check(tg.logsumexp(c(1000 + 1j, 1000 + 2j), 0), [1000.562562940116 + 1.5j])
    check(tg.logsumexp(c(complex(inf, 1), 1j), 0), [complex(inf, np.pi / 4)])
    check(tg.logaddexp(c(3j), c(3.5j)), [0.661566129312 + 3.25j])
    check(tg.logaddexp(c(1 + 3j), c(1 - 3j)), [1.683089265486 + 1j * np.pi])
    check(tg.logaddexp(c(1 - 3j), c(1 + 3j)), [1.683089265486 - 1j * np.pi])
    check(tg.logaddexp(c(complex(-inf, 3)), c(complex(-inf, 2))), [complex(-inf, 2)])
    check(tg.logaddexp(c(complex(inf, 3)), c(complex(inf, 2))), [complex(inf, 3 * np.pi / 4)])
    check(tg.logaddexp(c(complex(inf, 1)), c(complex(-inf, 2))), [complex(inf, 1)])


def test_complex_dtype_rules_match_torch():
    z, r = tg.tensor(np.array(Z)), tg.tensor(G_REAL, dtype=F64)
    # results: var/std/norms/l1_loss real; var_mean's mean and normalize complex
    assert (z.var().dtype, z.norm().dtype, tg.linalg.vector_norm(z.to(C64)).dtype) == (
        F64, F64, F32)
    assert [t.dtype for t in tg.var_mean(z)] == [F64, C128]
    assert F.l1_loss(z, r).dtype is F64 and F.normalize(z, dim=0).dtype is C128
    assert tg.logsumexp(z, 0).dtype is C128
    # dtype= of a norm: complex for a complex input (the result is its real dtype)
    assert tg.linalg.vector_norm(z.to(C64), dtype=C128).dtype is F64
    assert z.to(C64).norm(dtype=C128).dtype is F64
    with pytest.raises(TypeError, match="dtype should be complex for complex inputs"):
        tg.linalg.vector_norm(z, dtype=F64)
    with pytest.raises(TypeError, match="dtype should be real for real inputs"):
        tg.linalg.vector_norm(r, dtype=C128)
    with pytest.raises(TypeError, match="norm: dtype must be a complex dtype"):
        z.norm(dtype=F64)
    # complex values where the result dtype is real are refused (torch: "cannot be converted")
    with pytest.raises(TypeError, match="lerp: the complex weight"):
        tg.lerp(r, r, 0.5j)
    with pytest.raises(TypeError, match="addcmul: value=1j"):
        tg.addcmul(r, r, r, value=1j)
    assert tg.lerp(z, z, 0.5j).dtype is C128 and tg.addcmul(r, z, z).dtype is C128
    # all / any / count_nonzero: an element is true when either part is nonzero
    w = tg.tensor([0j, 1j, 1, 0])
    assert (tg.count_nonzero(w).item(), tg.all(w).item(), tg.any(w).item()) == (2, False, True)


def test_nan_to_num_complex_forward_only():
    # torch 2.13: each part on its own; no gradient for a complex result (an error)
    z = tg.tensor(np.array([complex(np.nan, 1), complex(np.inf, -np.inf), complex(1, np.nan),
                            complex(-np.inf, 2)], np.complex64))
    big = np.finfo(np.float32).max
    np.testing.assert_array_equal(tg.nan_to_num(z).numpy(),
                                  [1j, complex(big, -big), 1, complex(-big, 2)])
    np.testing.assert_array_equal(tg.nan_to_num(z, nan=5.0, posinf=7.0, neginf=-7.0).numpy(),
                                  [5 + 1j, 7 - 7j, 1 + 5j, -7 + 2j])
    with pytest.raises(TypeError, match="nan_to_num.*'nan' must be a real number"):
        tg.nan_to_num(z, nan=1j)
    x = tg.tensor(np.array(Z), requires_grad=True)
    with tg.no_grad():
        assert not tg.nan_to_num(x).requires_grad
    with pytest.raises(RuntimeError, match="nan_to_num: does not support automatic "
                                           "differentiation for outputs with complex dtype"):
        tg.nan_to_num(x).abs().sum().backward()


def test_casts_between_real_and_complex_match_torch():
    # real -> complex keeps the gradient's real part (torch 2.13: [0.5, 0.46, 1.46])
    x = tg.tensor(G_REAL, dtype=F64, requires_grad=True)
    (x.to(C128) * tg.tensor(np.array(W))).backward(tg.tensor(np.array(G)))
    np.testing.assert_allclose(x.grad.numpy(), [0.5, 0.46, 1.46], rtol=1e-12)
    assert x.grad.dtype is F64
    # complex -> real warns and drops the imaginary part; the gradient is real + 0j (torch)
    z = tg.tensor(np.array(Z), requires_grad=True)
    with pytest.warns(UserWarning, match="Casting complex values to real discards the imag"):
        r = z.to(F64)
    np.testing.assert_array_equal(r.detach().numpy(), [1, -0.5, 0.7])
    r.backward(tg.tensor(G_REAL, dtype=F64))
    np.testing.assert_array_equal(z.grad.numpy(), [1, -2, 0.5])
    assert z.grad.dtype is C128
    with warnings.catch_warnings():
        warnings.simplefilter("error")   # to bool tests both parts, no warning (torch)
        np.testing.assert_array_equal(tg.tensor([1j, 0j]).bool().numpy(), [True, False])


def test_complex_polar_view_gradients_match_torch():
    re = tg.tensor(G_REAL, dtype=F64, requires_grad=True)
    im = tg.tensor([0.3, 0.1, -1.0], dtype=F64, requires_grad=True)
    tg.complex(re, im).backward(tg.tensor(np.array(G)))
    np.testing.assert_allclose(re.grad.numpy(), [1.0, 0.3, -0.7])    # Re G (torch 2.13)
    np.testing.assert_allclose(im.grad.numpy(), [-0.5, 0.2, 1.0])    # Im G
    re.grad = im.grad = None
    tg.polar(re.abs() + 0.1, im).backward(tg.tensor(np.array(G)))
    np.testing.assert_allclose(re.grad.numpy(), [0.8075763857949362, -0.31846793291277337,
                                                 -1.2196825989155944], rtol=1e-12)
    np.testing.assert_allclose(im.grad.numpy(), [-0.8505072963465569, 0.35500669692926917,
                                                 -0.02923643009843265], rtol=1e-12)
    z = tg.tensor(np.array(Z), requires_grad=True)
    tg.view_as_real(z).backward(tg.tensor([[1.0, -2.0], [0.5, 0.25], [3.0, -1.0]], dtype=F64))
    np.testing.assert_array_equal(z.grad.numpy(), [1 - 2j, 0.5 + 0.25j, 3 - 1j])
    x = tg.tensor([[1.0, -2.0], [0.5, 0.25], [3.0, -1.0]], dtype=F64, requires_grad=True)
    tg.view_as_complex(x).backward(tg.tensor(np.array(G)))
    np.testing.assert_array_equal(x.grad.numpy(), [[1.0, -0.5], [0.3, 0.2], [-0.7, 1.0]])


def test_acosh_left_half_plane():
    # 1 / (sqrt(z - 1) sqrt(z + 1)), not 1 / sqrt(z^2 - 1) (the sign differs for Re z < 0);
    # torch 2.13 gives -0.6566553524938089+0.35143127957889675j at -1.5+0.5j
    z = tg.tensor([-1.5 + 0.5j], dtype=C128, requires_grad=True)
    tg.acosh(z).backward(tg.tensor([1 + 0j], dtype=C128))
    np.testing.assert_allclose(z.grad.numpy(), [-0.6566553524938089 + 0.35143127957889675j],
                               rtol=1e-12)


def test_implicit_gradient_of_a_complex_scalar_is_an_error():
    z = tg.tensor(Z, requires_grad=True)
    with pytest.raises(RuntimeError, match="only for real scalar outputs but got complex64"):
        z.sum().backward()
    z.sum().abs().backward()        # a real scalar is fine
    np.testing.assert_allclose(z.grad.numpy(), np.full(3, np.sum(Z) / abs(np.sum(Z))),
                               rtol=1e-6)


def test_second_derivative_of_abs_squared():
    # d/dz of the gradient 2z of |z|^2 (real part summed): 2 (as torch: grad(grad) = 2)
    z = tg.tensor(np.array(Z), requires_grad=True)
    (g,) = tg.autograd.grad((z * z.conj()).real.sum(), [z], create_graph=True)
    np.testing.assert_allclose(g.detach().numpy(), 2 * np.array(Z))
    (gg,) = tg.autograd.grad(g.real.sum(), [z])
    np.testing.assert_allclose(gg.numpy(), [2, 2, 2])


SECOND_ORDER = {
    "exp": lambda z, w: tg.exp(z) * w, "div": lambda z, w: w / z, "pow": lambda z, w: z ** w,
    "abs": lambda z, w: z.abs() * w, "angle": lambda z, w: z.angle() * w.real,
    "sgn": lambda z, w: z.sgn() * w, "sqrt": lambda z, w: tg.sqrt(z) * w,
    "sigmoid": lambda z, w: tg.sigmoid(z * w), "matmul": lambda z, w: z.reshape(3, 1) @ z[None],
    "prod": lambda z, w: (z * w).prod(0, keepdim=True), "cumprod": lambda z, w: (z + w).cumprod(0),
    "conj_real_imag": lambda z, w: z.conj() * z.real + z.imag * w,
    "var": lambda z, w: (z * w).var().reshape(1), "norm_p3": lambda z, w: (z * w).norm(3)[None],
    "logsumexp": lambda z, w: (z * w).logsumexp(0, keepdim=True),
    "logaddexp": lambda z, w: tg.logaddexp(z, z * w),
    "conv1d": lambda z, w: F.conv1d(z.reshape(1, 1, 3), (z * w)[:2].reshape(1, 1, 2)),
}


@pytest.mark.parametrize("name", sorted(SECOND_ORDER))
def test_second_order_matches_finite_differences(name):
    """h(z) = Re <v, grad_z Re <u, f(z, w)>> is real: its gradient (a double backward through
    the complex rules) against central differences along Re z and Im z."""
    f = SECOND_ORDER[name]
    rng = np.random.default_rng(1)
    z0 = np.array(Z) + 0.5          # off the branch cuts of sqrt/pow (Re z > 0)
    w = tg.tensor(np.array(W))
    probe = f(tg.tensor(z0), w)
    out_shape, out_dtype = probe.shape, probe.dtype
    u = rng.standard_normal(out_shape) + 1j * rng.standard_normal(out_shape)
    u = tg.tensor(u if out_dtype.is_complex else u.real)
    v = rng.standard_normal(3) + 1j * rng.standard_normal(3)

    def h(zv, create_graph):
        z = tg.tensor(zv, requires_grad=True)
        out = f(z, w)
        (g,) = tg.autograd.grad(out, [z], grad_outputs=u, create_graph=create_graph)
        return z, (g * tg.tensor(v.conj())).real.sum()

    z, hz = h(z0, True)
    (gg,) = tg.autograd.grad(hz, [z])
    eps = 1e-6
    for d in (np.ones(3), 1j * np.ones(3)):
        for k in range(3):
            e = np.zeros(3, complex)
            e[k] = d[k] * eps
            numeric = (h(z0 + e, False)[1].item() - h(z0 - e, False)[1].item()) / (2 * eps)
            analytic = np.real(np.conj(gg.numpy()[k]) * d[k])
            np.testing.assert_allclose(analytic, numeric, rtol=1e-5, atol=1e-6,
                                       err_msg=f"{name}: element {k}, direction {d[k]}")


FORWARD_AD = {
    "mul": (lambda z: z * tg.tensor(np.array(W)), lambda z: z * np.array(W)),
    "exp": (tg.exp, np.exp), "sqrt": (tg.sqrt, np.sqrt), "abs": (tg.abs, np.abs),
    "angle": (tg.angle, np.angle), "sgn": (tg.sgn, lambda z: z / np.abs(z)),
    "real": (lambda z: z.real, np.real), "conj": (tg.conj, np.conj),
    "matmul": (lambda z: z[None] @ z[:, None], lambda z: np.array([[np.dot(z, z)]])),
    "var": (lambda z: z.var().reshape(1), lambda z: np.var(z, ddof=1).reshape(1)),
    "logsumexp": (lambda z: z.logsumexp(0), lambda z: np.log(np.exp(z).sum())),
    "conv1d": (lambda z: F.conv1d(z.reshape(1, 1, 3), z[:2].reshape(1, 1, 2)).reshape(2),
               lambda z: np.array([z[0] * z[0] + z[1] * z[1], z[1] * z[0] + z[2] * z[1]])),
}


@pytest.mark.parametrize("name", sorted(FORWARD_AD))
def test_forward_ad_tangents_match_finite_differences(name):
    """A JVP is f's derivative along the tangent, complex or not: (f(z + e t) - f(z - e t)) / 2e."""
    import tracegrad.autograd.forward_ad as fwAD
    f, ref = FORWARD_AD[name]
    z0, t0 = np.array(Z), np.array(G)
    with fwAD.dual_level():
        out = f(fwAD.make_dual(tg.tensor(z0), tg.tensor(t0)))
        tangent = fwAD.unpack_dual(out).tangent.numpy()
    eps = 1e-7
    numeric = (ref(z0 + eps * t0) - ref(z0 - eps * t0)) / (2 * eps)
    np.testing.assert_allclose(tangent, numeric, rtol=1e-6, atol=1e-7)


def test_hooks_and_custom_functions_see_complex_gradients():
    seen = []
    z = tg.tensor(np.array(Z), requires_grad=True)
    y = z * 2
    y.register_hook(lambda g: seen.append(g.numpy().copy()))

    class Conj(tg.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x.conj()

        @staticmethod
        def backward(ctx, g):
            return g.conj()

    Conj.apply(y).real.sum().backward()
    np.testing.assert_array_equal(seen[0], np.ones(3))     # d Re(conj y) -> 1 + 0j
    np.testing.assert_array_equal(z.grad.numpy(), np.full(3, 2 + 0j))


def test_compile_a_complex_step_matches_eager():
    def step(z, w):
        loss = ((z @ w).abs() ** 2).sum() + (z.conj() * 1j).real.mean()
        loss.backward()
        return loss

    rng = np.random.default_rng(0)
    data = [(rng.standard_normal((2, 3)) + 1j * rng.standard_normal((2, 3))).astype(np.complex64),
            (rng.standard_normal((3, 2)) + 1j * rng.standard_normal((3, 2))).astype(np.complex64)]
    eager = [tg.tensor(a, requires_grad=True) for a in data]
    compiled = [tg.tensor(a, requires_grad=True) for a in data]
    want = step(*eager)
    got = tg.compile(step)(*compiled)
    np.testing.assert_allclose(got.numpy(), want.detach().numpy(), rtol=1e-5)
    for a, e in zip(compiled, eager):
        assert a.grad.dtype is C64
        np.testing.assert_allclose(a.grad.numpy(), e.grad.numpy(), rtol=1e-5, atol=1e-6)


def test_optimizers_with_complex_parameters():
    p = tg.nn.Parameter(tg.tensor([1 + 1j, 2 - 1j]))
    opt = tg.optim.SGD([p], lr=0.1)
    (p.abs() ** 2).sum().backward()
    opt.step()
    np.testing.assert_allclose(p.detach().numpy(), [0.8 + 0.8j, 1.6 - 0.8j])   # torch 2.13
    # torch's Adam treats real and imaginary parts as two real parameters: its first step
    # moves each by lr (tests/api/test_optim.py checks every optimizer)
    q = tg.nn.Parameter(tg.tensor([1 + 1j, 2 - 1j]))
    opt = tg.optim.Adam([q], lr=0.1)
    (q.abs() ** 2).sum().backward()
    opt.step()
    np.testing.assert_allclose(q.detach().numpy(), [0.9 + 0.9j, 1.9 - 0.9j], rtol=1e-6)


def test_in_place_ops_and_printing():
    x = tg.ones(2)
    with pytest.raises(RuntimeError, match="result type complex64 can't be cast to the "
                                           "desired output type float32"):
        x.add_(1j)                                      # torch 2.13 refuses too
    z = tg.tensor([1 + 2j, 3j])
    z.mul_(2)
    np.testing.assert_array_equal(z.numpy(), [2 + 4j, 6j])
    assert "dtype" not in repr(z) and "dtype=tracegrad.complex128" in repr(z.to(C128))


def test_complex128_program_runs_on_jax():
    """complex128 needs jax's x64 mode: the lowering turns it on for its programs."""
    grads = {}
    for executor in ("interpreter", "jax"):
        tg.set_executor(executor)
        z = tg.tensor(np.array(Z), requires_grad=True)
        (tg.exp(z) * z.conj() / (z + 2)).abs().sum().backward()
        grads[executor] = z.grad.numpy()
    assert grads["jax"].dtype == np.complex128
    np.testing.assert_allclose(grads["jax"], grads["interpreter"], rtol=1e-12)


def test_gradcheck_rejects_complex_clearly():
    z = tg.tensor(np.array(Z), requires_grad=True)
    with pytest.raises(NotImplementedError, match="gradcheck: input #0 is complex128"):
        tg.autograd.gradcheck(tg.exp, (z,))


# ---- the IR text ---------------------------------------------------------------------------
def test_ir_prints_and_parses_complex_types_and_attributes():
    g = Graph(name="c")
    b = Builder(g)
    x = g.add_input(T.TensorType((2,), C64))
    y = b.mul(x, b.full((2,), complex(1.5, -0.25), C64))
    z = b.add(b.convert(y, C128), b.full((), complex(float("nan"), -0.0), C128))
    g.outputs = [b.abs(z)]
    text = print_graph(g)
    assert "c64[2]" in text and "c128[]" in text and "f64[2]" in text
    assert "fill_value=complex(1.5, -0.25)" in text and "complex(nan, -0.0)" in text
    back = parse(text)
    assert back == g and print_graph(back) == text
    verify(back)


def test_verifier_rejects_complex_operands_of_real_only_ops():
    g = Graph(name="bad")
    x = g.add_input(T.TensorType((2,), C64))
    node = Node("relu", [x], {}, (T.TensorType((2,), C64),), None, None)   # hand-written IR
    g.nodes.append(node)
    g.outputs = list(node.outputs)
    with pytest.raises(IRError, match=r"relu: not supported for complex tensors, got \(c64"):
        verify(g)


# ---- the one rule: ops without complex support reject complex tensors -----------------------
def _complex_flagged(info) -> bool:
    return all(REGISTRY[op].flags & COMPLEX for op in (info.covers or (info.name,))
               if op in REGISTRY)


REJECTING = [info for info in OPS if info.complex_samples is None and not _complex_flagged(info)]


@pytest.mark.parametrize("info", REJECTING, ids=[i.name for i in REJECTING])
def test_ops_without_complex_support_reject_complex_inputs(info):
    """Each op's first float32 samples with their floating arrays made complex64: a clear
    error naming an op and the dtype (DTypeError, a TypeError, as torch rejects complex
    there too), never a result."""
    rng = np.random.default_rng(0)
    samples = [s for s in complexify(info.sample_inputs, 3)(rng, C64)
               if any(isinstance(a, np.ndarray) and a.dtype.kind == "c" for a in s.args)]
    if not samples:
        pytest.skip(f"{info.name}: no floating sample to make complex")
    for s in samples:
        args = [tg.tensor(a) if isinstance(a, np.ndarray) else a for a in s.args]
        with pytest.raises(TypeError) as err:
            info.fn(*args, **s.kwargs)
        msg = str(err.value)
        assert "complex" in msg and "c64" in msg, msg
        op = msg.split(":")[0].split("(")[0].strip()
        assert op in REGISTRY or op in ("gradcheck",), msg


def test_error_kind_follows_torch():
    z = tg.tensor(Z)
    with pytest.raises(tg.DTypeError, match=r"maximum: not supported for complex tensors, got "
                                            r"\(c64\[3\], c64\[3\]\)"):
        tg.maximum(z, z)
    with pytest.raises(tg.DTypeError, match=r"floor: not supported for complex"):
        check_complex(REGISTRY["floor"], [T.TensorType((3,), C64)])   # the verifier's path
    with pytest.raises(tg.DTypeError, match="relu6"):       # a composite names itself
        F.relu6(z)


# Registry ops that take complex tensors without a complex-sample OpInfo of their own, and why.
COMPLEX_NOT_IN_OPDB = {
    "slice_backward": "backward-only: every complex getitem backward runs it",
    "index_take_backward": "backward-only: every complex integer-array getitem backward runs it",
    "tensor_hooks": "test_hooks_and_custom_functions_see_complex_gradients",
    "node_hooks": "test_hooks_and_custom_functions_see_complex_gradients",
    "host_call": "test_hooks_and_custom_functions_see_complex_gradients",
    "custom_function": "test_hooks_and_custom_functions_see_complex_gradients",
    "gauge_check": "backward-only (complex eigh / svd): tests/ops/test_linalg.py",
    "stop_gradient": "internal, no gradient: isclose's complex samples run it",
    "allclose": "returns a Python bool: test_tensor_api.py::test_is_tensor_equal_allclose_isclose",
    "equal": "returns a Python bool: test_tensor_api.py::test_is_tensor_equal_allclose_isclose",
}


def test_every_complex_op_has_complex_samples():
    covered = {op for info in OPS if info.complex_samples is not None
               for op in (info.covers or (info.name,))}
    flagged = {name for name, op in REGISTRY.items() if op.flags & COMPLEX}
    missing = flagged - covered - set(COMPLEX_NOT_IN_OPDB)
    assert not missing, f"ops flagged COMPLEX without complex samples in tests/opdb: {missing}"
    unflagged = covered - flagged
    assert not unflagged, f"complex samples for ops not flagged COMPLEX: {unflagged}"


# ---- adversarial edge cases of the complex reductions, norms and linalg ----------------------
def _grad_at(fn, z):
    z = tg.tensor(np.array(z, np.complex128), requires_grad=True)
    fn(z).backward()
    return z.grad.numpy()


_Z00 = [0j, 0j]
# torch 2.13 (complex128): the subgradient at a zero or tied point, or the value where a
# division by zero or an infinity is involved
TORCH_EDGE_GRADS = {
    "norm_at_0": (lambda z: z.norm(), _Z00, [0, 0]),
    "vector_norm_1_at_0": (lambda z: tg.linalg.vector_norm(z, 1), _Z00, [0, 0]),
    "vector_norm_inf_at_0": (lambda z: tg.linalg.vector_norm(z, float("inf")), _Z00, [0, 0]),
    "vector_norm_-1_at_0": (lambda z: tg.linalg.vector_norm(z, -1), _Z00, [0, 0]),
    "vector_norm_3_one_0": (lambda z: tg.linalg.vector_norm(z, 3), [0j, 3 + 4j], [0, 0.6 + 0.8j]),
    "vector_norm_half_one_0": (lambda z: tg.linalg.vector_norm(z, 0.5), [0j, 3 + 4j],
                               [0, 0.6 + 0.8j]),
    "vector_norm_inf_tie": (lambda z: tg.linalg.vector_norm(z, float("inf")),
                            [3 + 4j, 4 - 3j, 1j], [0.3 + 0.4j, 0.4 - 0.3j, 0]),   # split evenly
    "std_at_0": (lambda z: z.std(), _Z00, [0, 0]),
    "std_constant": (lambda z: z.std(), [1 + 1j, 1 + 1j], [0, 0]),
    "std_rows_one_constant": (lambda z: z.reshape(2, 2).std(dim=1).sum(), [1 + 1j, 1 + 1j, 1j, 2],
                              [0, 0, -0.632455532034 + 0.316227766017j,
                               0.632455532034 - 0.316227766017j]),
    "var_at_0": (lambda z: z.var(), _Z00, [0, 0]),
    "nuclear_norm_at_0": (lambda z: tg.linalg.matrix_norm(z.reshape(2, 2), "nuc"), [0j] * 4,
                          [1, 0, 0, 1]),                                 # U V^H of eye's SVD
    "fro_norm_at_0": (lambda z: tg.linalg.matrix_norm(z.reshape(2, 2)), [0j] * 4, [0] * 4),
    "normalize_at_0_abs": (lambda z: F.normalize(z.reshape(1, 2), dim=1).abs().sum(), _Z00,
                           [0, 0]),
    "normalize_at_0_real": (lambda z: F.normalize(z.reshape(1, 2), dim=1).real.sum(), _Z00,
                            [1e12, 1e12]),                               # 1 / eps
    "l1_loss_equal": (lambda z: F.l1_loss(z, tg.tensor(np.array([1 + 1j, 2j]))), [1 + 1j, 2j],
                      [0, 0]),
    "sgn_at_0": (lambda z: z.sgn().real.sum(), _Z00, [0, 0]),
    "logsumexp_all_-inf": (lambda z: tg.logsumexp(z, 0).real, [complex(-np.inf, 0)] * 2,
                           [complex(np.nan, np.nan)] * 2),
    "logsumexp_+inf": (lambda z: tg.logsumexp(z, 0).real, [complex(np.inf, 0), 1j],
                       [complex(np.nan, np.nan), 0]),
    "logsumexp_large": (lambda z: tg.logsumexp(z, 0).real, [1000 + 1j, 999 - 1j],
                        [1.021415364229 - 0.403438706142j, -0.021415364229 + 0.403438706142j]),
    "logaddexp_large": (lambda z: tg.logaddexp(z[0], z[1]).real, [1000 + 1j, 999 - 1j],
                        [1.021415364229 - 0.403438706142j, -0.021415364229 + 0.403438706142j]),
    "logaddexp_large_imag": (lambda z: tg.logaddexp(z[0], z[1]).imag, [1000 + 1j, 999 - 1j],
                             [0.403438706142 + 1.021415364229j,
                              -0.403438706142 - 0.021415364229j]),
}


@pytest.mark.parametrize("name", sorted(TORCH_EDGE_GRADS))
def test_edge_gradients_match_torch(name):
    fn, z, want = TORCH_EDGE_GRADS[name]
    np.testing.assert_allclose(_grad_at(fn, z), np.array(want, complex), rtol=1e-9, atol=1e-12)


def test_reduction_shapes_and_mixed_dtypes_match_torch():
    z = tg.tensor((np.arange(12).reshape(2, 3, 2) * (1 + 1j)).astype(np.complex64))
    n = tg.linalg.norm(z, dim=(0, 2))
    np.testing.assert_allclose(n.numpy(), np.linalg.norm(z.numpy(), axis=(0, 2)), rtol=1e-6)
    assert tg.linalg.vector_norm(z, dim=None, keepdim=True).shape == (1, 1, 1)
    assert tg.linalg.norm(z, "fro", dim=(1, 2), keepdim=True).shape == (2, 1, 1)
    s = z.std(dim=None, keepdim=True)
    assert s.shape == (1, 1, 1) and s.dtype is F32
    np.testing.assert_allclose(s.item(), np.sqrt(np.sum(np.abs(z.numpy() - z.numpy().mean())
                                                        ** 2) / 11), rtol=1e-6)
    v, m = tg.var_mean(z, dim=1)
    assert (v.dtype, m.dtype, v.shape) == (F32, C64, (2, 2))
    # torch 2.13 result dtypes with mixed real / complex operands
    c64 = tg.tensor([1 + 1j, 2j], dtype=C64)
    r32, r64 = tg.tensor([1.0, 2.0]), tg.tensor([1.0, 2.0], dtype=F64)
    assert tg.logaddexp(c64, r64).dtype is C128
    assert tg.addcmul(c64, r64, r64).dtype is C128
    assert tg.addcdiv(r32, c64, r32).dtype is C64
    assert F.l1_loss(c64, r32).dtype is F32 and F.l1_loss(c64, r64).dtype is F64
    np.testing.assert_allclose(tg.logaddexp(c64, r64).numpy(),
                               np.log(np.exp(c64.numpy().astype(complex)) + np.exp([1.0, 2.0])))
    np.testing.assert_allclose(F.l1_loss(c64, r32).item(), np.mean(np.abs(c64.numpy() - [1, 2])),
                               rtol=1e-6)


def _fd_complex_grad(f, arrays, k, eps=1e-6):
    """Central differences of the real function f along the real and imaginary parts of
    arrays[k]: torch's gradient dL/dx + i dL/dy."""
    base = [np.array(a, np.complex128) for a in arrays]
    out = np.zeros_like(base[k])
    for idx in np.ndindex(base[k].shape):
        for unit in (1, 1j):
            plus = [a.copy() for a in base]
            minus = [a.copy() for a in base]
            plus[k][idx] += eps * unit
            minus[k][idx] -= eps * unit
            d = (f(*plus) - f(*minus)) / (2 * eps)
            out[idx] += d * (1 if unit == 1 else 1j)
    return out


def test_linalg_solve_broadcasting_and_batched_det_match_numpy():
    rng = np.random.default_rng(7)
    a = rng.standard_normal((2, 3, 3)) + 1j * rng.standard_normal((2, 3, 3)) + 3 * np.eye(3)
    # torch's rules for B: (n,) a vector, (*batch, n) a batch of vectors when it matches A's
    # batch, else matrices broadcast against A's batch
    for b_shape, want in (((3,), (2, 3)), ((2, 3), (2, 3)), ((3, 2), (2, 3, 2)),
                          ((1, 3, 2), (2, 3, 2))):
        b = rng.standard_normal(b_shape) + 1j * rng.standard_normal(b_shape)
        A, B = tg.tensor(a, requires_grad=True), tg.tensor(b, requires_grad=True)
        x = tg.linalg.solve(A, B)
        assert x.shape == want
        vec = len(b_shape) == 1 or b_shape == (2, 3)
        ref = np.linalg.solve(a, b[..., None])[..., 0] if vec else np.linalg.solve(a, b)
        np.testing.assert_allclose(x.detach().numpy(), ref, rtol=1e-10)

        def loss(a_, b_):
            x_ = (np.linalg.solve(a_, b_[..., None])[..., 0] if vec
                  else np.linalg.solve(a_, b_))
            return np.sum(np.real(x_) * 2 - np.imag(x_))

        (x.real * 2 - x.imag).sum().backward()
        np.testing.assert_allclose(A.grad.numpy(), _fd_complex_grad(loss, [a, b], 0),
                                   rtol=1e-5, atol=1e-7)
        np.testing.assert_allclose(B.grad.numpy(), _fd_complex_grad(loss, [a, b], 1),
                                   rtol=1e-5, atol=1e-7)
    # a batch holding an exactly singular matrix: det 0 and gradient 0 there (torch 2.13's
    # answer, docs/ops_linalg.md; the cofactor matrix is the true one); for the regular one
    # Re(d) + Im(d) = Re((1 - i) d) has torch's gradient conj((1 - i) det(A) A^-T) (Jacobi)
    s = np.array([[[1 + 1j, 2 + 2j], [2 + 2j, 4 + 4j]], [[1 + 1j, 0.5], [0, 1 - 2j]]])
    A = tg.tensor(s, requires_grad=True)
    d = tg.linalg.det(A)
    np.testing.assert_allclose(d.detach().numpy(), np.linalg.det(s), atol=1e-12)
    (d.real + d.imag).sum().backward()
    regular = np.conj((1 - 1j) * np.linalg.det(s[1]) * np.linalg.inv(s[1]).T)
    np.testing.assert_allclose(A.grad.numpy(), [np.zeros((2, 2)), regular], atol=1e-12)
