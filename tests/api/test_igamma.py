"""tg.igamma / tg.igammac and tg.special.gammainc / gammaincc against torch 2.13.

Values, gradients and messages below were recorded with torch 2.13 running the same calls
(comment "torch 2.13").  The op database entries (tests/opdb/elementwise.py) check random
samples against scipy.special / jax.scipy.special, finite differences in x, jax.vjp and
both executors.
"""
import math

import numpy as np
import pytest

import tracegrad as tg
import tracegrad.autograd.forward_ad as fwAD

INF, NAN = math.inf, math.nan
F64 = tg.float64

A = [0.5, 1.0, 2.0, 3.0]
X = [0.3, 1.0, 2.5, 0.5]
# torch 2.13: igamma(A, X), igammac(A, X) and d/dx igamma(A, X) (float64)
IGAMMA = [0.5614219739190003, 0.6321205588285577, 0.7127025048163542, 0.014387677966970687]
DX = [0.763090578768186, 0.36787944117144233, 0.205212496559747, 0.07581633246407919]


def test_values_and_gradient_in_x(executor):
    a = tg.tensor(A, dtype=F64)
    x = tg.tensor(X, dtype=F64, requires_grad=True)
    y = tg.igamma(a, x)
    assert y.grad_fn.name() == "IgammaBackward0"
    np.testing.assert_allclose(y.detach().numpy(), IGAMMA, rtol=1e-13)
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), DX, rtol=1e-13)
    x.grad = None
    q = tg.igammac(a, x)
    assert q.grad_fn.name() == "IgammacBackward0"
    np.testing.assert_allclose(q.detach().numpy(), 1 - np.array(IGAMMA), rtol=1e-12)
    q.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), -np.array(DX), rtol=1e-13)


@pytest.mark.parametrize("fn,name", [(tg.igamma, "igamma"), (tg.igammac, "igammac"),
                                     (tg.special.gammainc, "igamma"),
                                     (tg.special.gammaincc, "igammac")])
def test_gradient_for_input_raises_torchs_error(fn, name):
    # torch 2.13: NotImplementedError "the derivative for 'igamma: input' is not implemented."
    # at backward, before any gradient is accumulated; a gradient asked for x alone works
    a = tg.tensor(A, dtype=F64, requires_grad=True)
    x = tg.tensor(X, dtype=F64, requires_grad=True)
    with pytest.raises(NotImplementedError,
                       match=f"the derivative for '{name}: input' is not implemented."):
        fn(a, x).sum().backward()
    assert a.grad is None and x.grad is None
    with pytest.raises(NotImplementedError, match=f"the derivative for '{name}: input'"):
        tg.autograd.grad(fn(a, x).sum(), [a])
    (gx,) = tg.autograd.grad(fn(a, x).sum(), [x])
    np.testing.assert_allclose(np.abs(gx.numpy()), DX, rtol=1e-13)
    # a computed from a leaf that requires grad: the same error (torch 2.13)
    w = tg.tensor(2.0, dtype=F64, requires_grad=True)
    with pytest.raises(NotImplementedError, match=f"the derivative for '{name}: input'"):
        fn(w * tg.ones(2, dtype=F64), tg.tensor([1.0, 2.0], dtype=F64)).sum().backward()


def test_edge_values(executor):
    # torch 2.13 (float64): a = 0 and x > 0 gives P = 1; a < 0 or x < 0 NaN; x = 0 gives 0;
    # a = inf: 0 for finite x, NaN at x = inf; NaN in, NaN out; (0, 0) is NaN
    a = [0.0, -1, 1, 1, 1, INF, 2.0, NAN, INF, INF, INF, 0.0, 0.0, 1.0, 5.0, -INF]
    x = [1.0, 1, -1, 0, INF, 1, NAN, 1, INF, 0.0, 1e300, INF, -0.0, -0.0, 1e-300, 1.0]
    p = [1.0, NAN, NAN, 0.0, 1.0, 0.0, NAN, NAN, NAN, 0.0, 0.0, 1.0, NAN, 0.0, 0.0, NAN]
    q = [0.0, NAN, NAN, 1.0, 0.0, 1.0, NAN, NAN, NAN, 1.0, 1.0, 0.0, NAN, 1.0, 1.0, NAN]

    @tg.compile   # on the executor under test (jax: jax.scipy.special's kernel)
    def both(a, x):
        return tg.igamma(a, x), tg.igammac(a, x)
    for fn in (lambda a, x: (tg.igamma(a, x), tg.igammac(a, x)), both):
        got_p, got_q = fn(tg.tensor(a, dtype=F64), tg.tensor(x, dtype=F64))
        np.testing.assert_array_equal(got_p.numpy(), p)
        np.testing.assert_array_equal(got_q.numpy(), q)
    # torch 2.13: far in the tails, and for a large a (where torch's series is off by 3e-10:
    # mpmath gives 0.817896084022545, which is what SciPy's kernel returns)
    np.testing.assert_allclose(tg.igammac(tg.tensor([0.5, 30.0], dtype=F64),
                                          tg.tensor([40.0, 25.0], dtype=F64)).numpy(),
                               [3.7440973842028864e-19, 0.8178960842434135], rtol=1e-9)


def test_gradient_edges(executor):
    # torch 2.13: d/dx at (a, x) = (1, 0), (1, inf), (0.5, 0), (2, inf), (0, 1), (-1, 1),
    # (inf, 1) is nan, nan, inf, nan, 0, 0, nan (its formula exp((a-1) log x - x - lgamma a))
    a = tg.tensor([1.0, 1.0, 0.5, 2.0, 0.0, -1.0, INF], dtype=F64)
    x = tg.tensor([0.0, INF, 0.0, INF, 1.0, 1.0, 1.0], dtype=F64, requires_grad=True)
    tg.igamma(a, x).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [NAN, NAN, INF, NAN, 0.0, 0.0, NAN])


def test_dtypes_and_broadcasting():
    # torch 2.13: float32 with int64 -> float32; float32 with float64 -> float64; half and
    # bfloat16 computed in their dtypes (values within their precision of torch's);
    # broadcasting (1,) with (2, 1)
    assert tg.igamma(tg.tensor([1.0, 2.0]), tg.tensor([1, 2])).dtype is tg.float32
    assert tg.igamma(tg.tensor([1.0, 2.0]), tg.tensor([1.0, 2.0], dtype=F64)).dtype is F64
    h = tg.igamma(tg.tensor([0.7, 2.5, 4.0]).half(), tg.tensor([1.0, 2, 3]).half())
    assert h.dtype is tg.float16
    np.testing.assert_allclose(h.float().numpy(), [0.76123046875, 0.45068359375, 0.352783203125],
                               atol=1e-3)
    b = tg.igammac(tg.tensor([0.7, 2.5, 4.0]).bfloat16(), tg.tensor([1.0, 2, 3]).bfloat16())
    assert b.dtype is tg.bfloat16
    np.testing.assert_allclose(b.float().numpy(), [0.23828125, 0.55078125, 0.6484375], atol=8e-3)
    np.testing.assert_allclose(tg.igamma(tg.tensor([2.0]), tg.tensor([[1.0], [3.0]])).numpy(),
                               [[0.26424112915992737], [0.8008517026901245]], rtol=1e-6)


def test_errors():
    # torch 2.13: NotImplementedError '"igamma_cpu" not implemented for 'Long'' (here a
    # TypeError, as the other float-only ops' dtype errors), complex likewise
    with pytest.raises(TypeError, match="\"igamma_cpu\" not implemented for 'Long'"):
        tg.igamma(tg.tensor([1, 2]), tg.tensor([1, 2]))
    with pytest.raises(TypeError, match="\"igammac_cpu\" not implemented for 'Bool'"):
        tg.igammac(tg.tensor([True]), tg.tensor([True]))
    with pytest.raises(TypeError, match="complex"):
        tg.igamma(tg.tensor([1.0, 2]), tg.tensor([1j, 2]))
    with pytest.raises(ValueError, match="broadcast"):
        tg.igamma(tg.tensor([1.0, 2]), tg.tensor([1.0, 2, 3]))


def test_methods_inplace_and_out():
    # torch 2.13: t.igamma(o) = t.igamma_(o) = [0.6321204305, 0.2642411292]; out= writes
    want = [0.6321204305, 0.2642411292]
    t, o = tg.tensor([1.0, 2.0]), tg.tensor([1.0, 1.0])
    np.testing.assert_allclose(t.igamma(o).numpy(), want, rtol=1e-6)
    assert t.igamma_(o) is t
    np.testing.assert_allclose(t.numpy(), want, rtol=1e-6)
    t = tg.tensor([1.0, 2.0])
    np.testing.assert_allclose(t.igammac_(o).numpy(), [1 - w for w in want], rtol=1e-6)
    out = tg.empty(2)
    assert tg.special.gammainc(tg.tensor([1.0, 2.0]), o, out=out) is out
    np.testing.assert_allclose(out.numpy(), want, rtol=1e-6)


def test_gradcheck_in_x():
    a = tg.tensor([0.7, 1.5, 3.0], dtype=F64)
    x = tg.tensor([0.4, 2.0, 1.5], dtype=F64, requires_grad=True)
    assert tg.autograd.gradcheck(lambda x: tg.igamma(a, x), (x,))
    assert tg.autograd.gradgradcheck(lambda x: tg.igammac(a, x), (x,))


def test_forward_ad():
    # the tangent through x is d/dx igamma (torch 2.13 has no forward AD for igamma at all);
    # a tangent on a raises the backward's NotImplementedError
    a = tg.tensor(A, dtype=F64)
    x = tg.tensor(X, dtype=F64)
    with fwAD.dual_level():
        y = fwAD.unpack_dual(tg.igamma(a, fwAD.make_dual(x, tg.ones(4, dtype=F64))))
        np.testing.assert_allclose(y.tangent.numpy(), DX, rtol=1e-12)
        with pytest.raises(NotImplementedError, match="the derivative for 'igamma: input'"):
            tg.igamma(fwAD.make_dual(a, tg.ones(4, dtype=F64)), x)


def test_compiled_equals_eager():
    a = tg.tensor(A)

    def step(x):
        return (tg.igamma(a, x) * tg.igammac(a, x * 2)).sum()
    x = tg.tensor(X, requires_grad=True)
    x2 = tg.tensor(X, requires_grad=True)
    tg.compile(step)(x).backward()
    step(x2).backward()
    np.testing.assert_allclose(x.grad.numpy(), x2.grad.numpy(), rtol=1e-5)
