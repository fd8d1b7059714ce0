"""Complex dtypes: promotion, creation, the IR text, torch's gradients, and the one rule
that every op without complex support rejects complex tensors.

The op database (tests/opdb/) runs the generic checks on every op that takes complex
tensors (forward, finite differences along the real and imaginary parts, interpreter vs
jax); this file holds what is specific to complex numbers.  torch 2.13's gradients
(``out.backward(grad)`` on complex128 inputs) are recorded in the entries' `point_checks`.
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
from opdb import OPS, point_checks  # noqa: E402
from opdb.core import (ComplexEdgeGrad, ComplexForwardAD, ComplexSecondOrder,  # noqa: E402
                       ComplexTorchGrad, complexify)
# the complex points and cotangents of the recorded gradients (tests/opdb/core.py)
from opdb.core import G, G_REAL, W, Z  # noqa: E402

C64, C128, F16, F32, F64 = tg.complex64, tg.complex128, tg.float16, tg.float32, tg.float64


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
# torch 2.13 gives these gradients (out.backward(G or G_REAL) at Z, W in complex128): each
# declared with its op's entry in tests/opdb/
TORCH_GRADS = point_checks(ComplexTorchGrad)


@pytest.mark.parametrize("name", sorted(TORCH_GRADS))
def test_gradient_matches_torch(name):
    r = TORCH_GRADS[name]
    fn, n, want = r.fn, r.n, r.grads
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


SECOND_ORDER = point_checks(ComplexSecondOrder)   # f(z, w), declared with the ops


@pytest.mark.parametrize("name", sorted(SECOND_ORDER))
def test_second_order_matches_finite_differences(name):
    """h(z) = Re <v, grad_z Re <u, f(z, w)>> is real: its gradient (a double backward through
    the complex rules) against central differences along Re z and Im z."""
    f = SECOND_ORDER[name].fn
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


FORWARD_AD = point_checks(ComplexForwardAD)   # (f, its NumPy reference), declared with the ops


@pytest.mark.parametrize("name", sorted(FORWARD_AD))
def test_forward_ad_tangents_match_finite_differences(name):
    """A JVP is f's derivative along the tangent, complex or not: (f(z + e t) - f(z - e t)) / 2e."""
    import tracegrad.autograd.forward_ad as fwAD
    f, ref = FORWARD_AD[name].fn, FORWARD_AD[name].ref
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
    with pytest.raises(RuntimeError, match="result type ComplexFloat can't be cast to the "
                                           "desired output type Float"):
        x.add_(1j)                                      # torch 2.13's words
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


def test_gradcheck_takes_complex_inputs():
    # torch 2.13: gradcheck(torch.exp, (z,)) is True (more in tests/api/test_gradcheck_complex.py)
    z = tg.tensor(np.array(Z), requires_grad=True)
    assert tg.autograd.gradcheck(tg.exp, (z,))


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
        # (dropout, a function without a registry op of its own yet, names itself)
        assert op in REGISTRY or op in ("gradcheck",) or (op == info.name and op not in REGISTRY), msg


def test_error_kind_follows_torch():
    z = tg.tensor(Z)
    with pytest.raises(tg.DTypeError, match=r"maximum: not supported for complex tensors, got "
                                            r"\(c64\[3\], c64\[3\]\)"):
        tg.maximum(z, z)
    with pytest.raises(tg.DTypeError, match=r"floor: not supported for complex"):
        check_complex(REGISTRY["floor"], [T.TensorType((3,), C64)])   # the verifier's path
    with pytest.raises(tg.DTypeError, match="relu6"):       # a composite names itself
        F.relu6(z)


def test_every_complex_op_has_complex_samples():
    covered = {op for info in OPS if info.complex_samples is not None
               for op in (info.covers or (info.name,))}
    flagged = {name for name, op in REGISTRY.items() if op.flags & COMPLEX}
    # ops no user call runs alone: their entries name the tests (complex ones included)
    elsewhere = {op for info in OPS if info.exercised_by for op in (info.covers or (info.name,))}
    missing = flagged - covered - elsewhere
    assert not missing, f"ops flagged COMPLEX without complex samples in tests/opdb: {missing}"
    unflagged = covered - flagged
    assert not unflagged, f"complex samples for ops not flagged COMPLEX: {unflagged}"


# ---- adversarial edge cases of the complex reductions, norms and linalg ----------------------
def _grad_at(fn, z):
    z = tg.tensor(np.array(z, np.complex128), requires_grad=True)
    fn(z).backward()
    return z.grad.numpy()


# torch 2.13 (complex128): the subgradient at a zero or tied point, or the value where a
# division by zero or an infinity is involved; declared with the ops
TORCH_EDGE_GRADS = point_checks(ComplexEdgeGrad)


@pytest.mark.parametrize("name", sorted(TORCH_EDGE_GRADS))
def test_edge_gradients_match_torch(name):
    r = TORCH_EDGE_GRADS[name]
    fn, z, want = r.fn, r.z, r.grads
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
