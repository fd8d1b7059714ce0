"""tg.scatter_reduce / Tensor.scatter_reduce / Tensor.scatter_reduce_ against torch 2.13.

The values below were recorded with torch 2.13 running the same calls (comment "torch 2.13");
the op database (tests/opdb/scatter_reduce.py) checks random samples against a dense
reference, finite differences, jax.vjp and both executors.  Here: the exact values and
gradients of every reduction with and without the input's own value, ties, zeros, the
integer, bool and complex forms, and torch's errors.
"""
import math

import numpy as np
import pytest

import tracegrad as tg

from helpers import tiered

NAN = math.nan

# torch 2.13: x.scatter_reduce(1, idx, src, reduce, include_self=...) with x = [[1, 2, 3],
# [4, 5, 6]], idx = [[0, 1, 0], [1, 1, 2]], src = [[2, 0, 3], [4, 5, 3]] (float64), backward
# of the cotangent [[1, 2, 3], [4, 5, 6]]: (result, x.grad, src.grad)
TORCH = {
    ('sum', True): ([[6.0, 2.0, 3.0], [4.0, 14.0, 9.0]], [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], [[1.0, 2.0, 1.0], [5.0, 5.0, 6.0]]),
    ('sum', False): ([[5.0, 0.0, 3.0], [4.0, 9.0, 3.0]], [[0.0, 0.0, 3.0], [4.0, 0.0, 0.0]], [[1.0, 2.0, 1.0], [5.0, 5.0, 6.0]]),
    ('prod', True): ([[6.0, 0.0, 3.0], [4.0, 100.0, 18.0]], [[6.0, 0.0, 3.0], [4.0, 100.0, 18.0]], [[3.0, 4.0, 2.0], [125.0, 100.0, 36.0]]),
    ('prod', False): ([[6.0, 0.0, 3.0], [4.0, 20.0, 3.0]], [[0.0, 0.0, 3.0], [4.0, 0.0, 0.0]], [[3.0, 2.0, 2.0], [25.0, 20.0, 6.0]]),
    ('mean', True): ([[2.0, 1.0, 3.0], [4.0, 4.666666666666667, 4.5]], [[0.3333333333333333, 1.0, 3.0], [4.0, 1.6666666666666667, 3.0]], [[0.3333333333333333, 1.0, 0.3333333333333333], [1.6666666666666667, 1.6666666666666667, 3.0]]),
    ('mean', False): ([[2.5, 0.0, 3.0], [4.0, 4.5, 3.0]], [[0.0, 0.0, 3.0], [4.0, 0.0, 0.0]], [[0.5, 2.0, 0.5], [2.5, 2.5, 6.0]]),
    ('amax', True): ([[3.0, 2.0, 3.0], [4.0, 5.0, 6.0]], [[0.0, 2.0, 3.0], [4.0, 2.5, 6.0]], [[0.0, 0.0, 1.0], [0.0, 2.5, 0.0]]),
    ('amax', False): ([[3.0, 0.0, 3.0], [4.0, 5.0, 3.0]], [[0.0, 0.0, 3.0], [4.0, 0.0, 0.0]], [[0.0, 2.0, 1.0], [0.0, 2.5, 6.0]]),
    ('amin', True): ([[1.0, 0.0, 3.0], [4.0, 4.0, 3.0]], [[1.0, 0.0, 3.0], [4.0, 0.0, 0.0]], [[0.0, 2.0, 0.0], [5.0, 0.0, 6.0]]),
    ('amin', False): ([[2.0, 0.0, 3.0], [4.0, 4.0, 3.0]], [[0.0, 0.0, 3.0], [4.0, 0.0, 0.0]], [[1.0, 2.0, 0.0], [5.0, 0.0, 6.0]]),
}

# torch 2.13: (x, index, src, reduce, cotangent, kwargs) -> (result, x.grad, src.grad): ties
# share the gradient evenly (the input's own value counted), zeros of prod
TORCH_POINTS = {
    'ties_amax': (([[1.0, 2, 3]], [[0, 0, 1]], [[1.0, 1, 2]], 'amax', [[6.0, 4, 2]], {}),
                  ([[1.0, 2.0, 3.0]], [[2.0, 2.0, 2.0]], [[2.0, 2.0, 2.0]])),
    'ties_amin': (([[1.0, 2, 3]], [[0, 0, 1]], [[1.0, 1, 2]], 'amin', [[6.0, 4, 2]], {}),
                  ([[1.0, 2.0, 3.0]], [[2.0, 2.0, 2.0]], [[2.0, 2.0, 2.0]])),
    'prod_zeros': (([[0.0, 2, 3]], [[0, 1, 1, 0]], [[0.0, 4, 0, 5]], 'prod', [[1.0, 2, 3]], {}),
                   ([[0.0, 0.0, 3.0]], [[0.0, 0.0, 3.0]], [[0.0, 0.0, 16.0, 0.0]])),
    'prod_zeros_excl': (([[0.0, 2, 3]], [[0, 1, 1, 0]], [[0.0, 4, 0, 5]], 'prod', [[1.0, 2, 3]],
                         {"include_self": False}),
                        ([[0.0, 0.0, 3.0]], [[0.0, 0.0, 3.0]], [[5.0, 0.0, 8.0, 0.0]])),
    'prod_two_zeros': (([[0.0, 2, 3]], [[2, 1, 1, 2]], [[0.0, 4, 0, 5]], 'prod', [[1.0, 2, 3]], {}),
                       ([[0.0, 0.0, 0.0]], [[1.0, 0.0, 0.0]], [[45.0, 0.0, 16.0, 0.0]])),
}

# torch 2.13: integer x = [[1, 2, 3], [4, 5, 6]], src [[-2, 0, -3], [-4, 5, 3]], the index
# above: (include_self=True, include_self=False); mean divides with floor
TORCH_INT = {
    'sum': ([[-4, 2, 3], [4, 6, 9]], [[-5, 0, 3], [4, 1, 3]]),
    'prod': ([[6, 0, 3], [4, -100, 18]], [[6, 0, 3], [4, -20, 3]]),
    'mean': ([[-2, 1, 3], [4, 2, 4]], [[-3, 0, 3], [4, 0, 3]]),
    'amax': ([[1, 2, 3], [4, 5, 6]], [[-2, 0, 3], [4, 5, 3]]),
    'amin': ([[-3, 0, 3], [4, -4, 3]], [[-3, 0, 3], [4, -4, 3]]),
}

IDX = [[0, 1, 0], [1, 1, 2]]


@pytest.mark.parametrize("reduce,include_self", list(TORCH))
def test_values_and_gradients_are_torchs(reduce, include_self, executor):
    out_want, gx_want, gs_want = TORCH[(reduce, include_self)]
    x = tg.tensor([[1.0, 2, 3], [4, 5, 6]], dtype=tg.float64, requires_grad=True)
    src = tg.tensor([[2.0, 0, 3], [4, 5, 3]], dtype=tg.float64, requires_grad=True)
    out = x.scatter_reduce(1, tg.tensor(IDX), src, reduce, include_self=include_self)
    assert out.grad_fn.name() == "ScatterReduceBackward0"
    out.backward(tg.tensor([[1.0, 2, 3], [4, 5, 6]], dtype=tg.float64))
    np.testing.assert_allclose(out.detach().numpy(), out_want, rtol=1e-15)
    np.testing.assert_allclose(x.grad.numpy(), gx_want, rtol=1e-15)
    np.testing.assert_allclose(src.grad.numpy(), gs_want, rtol=1e-15)


@pytest.mark.parametrize("name", list(TORCH_POINTS))
def test_ties_and_zeros_are_torchs(name, executor):
    (x, idx, src, reduce, ct, kw), (out_want, gx_want, gs_want) = TORCH_POINTS[name]
    x = tg.tensor(x, dtype=tg.float64, requires_grad=True)
    src = tg.tensor(src, dtype=tg.float64, requires_grad=True)
    out = tg.scatter_reduce(x, 1, tg.tensor(idx), src, reduce, **kw)
    out.backward(tg.tensor(ct, dtype=tg.float64))
    np.testing.assert_allclose(out.detach().numpy(), out_want)
    np.testing.assert_allclose(x.grad.numpy(), gx_want)
    np.testing.assert_allclose(src.grad.numpy(), gs_want)


@pytest.mark.parametrize("reduce", list(TORCH_INT))
def test_integer_inputs(reduce):
    x, src = tg.tensor([[1, 2, 3], [4, 5, 6]]), tg.tensor([[-2, 0, -3], [-4, 5, 3]])
    for include_self, want in zip((True, False), TORCH_INT[reduce]):
        out = x.scatter_reduce(1, tg.tensor(IDX), src, reduce, include_self=include_self)
        assert out.dtype is tg.int64
        np.testing.assert_array_equal(out.numpy(), want)


def test_bool_and_complex_forward():
    # torch 2.13: bool sum is or, prod and; complex sum / prod / mean
    b, bi, bs = tg.tensor([[True, False, True]]), tg.tensor([[0, 0, 1]]), tg.tensor([[False, True, False]])
    for reduce, want in (("sum", [[True, False, True]]), ("prod", [[False, False, True]]),
                         ("amax", [[True, False, True]]), ("amin", [[False, False, True]])):
        np.testing.assert_array_equal(b.scatter_reduce(1, bi, bs, reduce).numpy(), want)
    c, ci, cs = tg.tensor([1 + 1j, 2, 3]), tg.tensor([0, 0]), tg.tensor([1j, 2])
    for reduce, want in (("sum", [3 + 2j, 2, 3]), ("prod", [-2 + 2j, 2, 3]),
                         ("mean", [1 + 0.6666666865348816j, 2, 3])):
        np.testing.assert_allclose(c.scatter_reduce(0, ci, cs, reduce).numpy(), want, rtol=1e-6)


def test_complex_has_no_gradient():
    # torch 2.13: "scatter_reduce does not support automatic differentiation for outputs with
    # complex dtype." (here when a backward reaches it)
    c = tg.tensor([1 + 1j, 2, 3], requires_grad=True)
    out = c.scatter_reduce(0, tg.tensor([0, 0]), tg.tensor([1j, 2]), "sum")
    with pytest.raises(RuntimeError, match="scatter_reduce does not support automatic "
                                           "differentiation for outputs with complex dtype"):
        out.backward(tg.ones(3, dtype=tg.complex64))


def test_forward_forms():
    # torch 2.13: src larger than index (read over the index's extent), NaN propagates through
    # amax, 0-d tensors, an empty index, "max"/"min" accepted as amax/amin
    out = tg.tensor([[1.0, 0, 3], [4, 5, 6]]).scatter_reduce(
        1, tg.tensor([[0, 1, 0], [1, 1, 1]]), tg.ones(3, 4), "sum")
    np.testing.assert_array_equal(out.numpy(), [[3, 1, 3], [4, 8, 6]])
    out = tg.tensor([[1.0, 2, 3]]).scatter_reduce(1, tg.tensor([[0, 0]]), tg.tensor([[NAN, 1.0]]),
                                                 "amax")
    np.testing.assert_array_equal(out.numpy(), [[NAN, 2, 3]])
    assert tg.tensor(1.0).scatter_reduce(0, tg.tensor(0), tg.tensor(5.0), "sum").item() == 6.0
    out = tg.tensor([[1.0, 2, 3]]).scatter_reduce(1, tg.zeros(1, 0, dtype=tg.int64), tg.ones(1, 2),
                                                 "amax")
    np.testing.assert_array_equal(out.numpy(), [[1, 2, 3]])
    x = tg.tensor([[1.0, 2, 3]])
    np.testing.assert_array_equal(
        x.scatter_reduce(1, tg.tensor([[0, 0]]), tg.tensor([[5.0, 1]]), "max").numpy(), [[5, 2, 3]])
    np.testing.assert_array_equal(
        x.scatter_reduce(1, tg.tensor([[0, 0]]), tg.tensor([[5.0, -1]]), "min").numpy(),
        [[-1, 2, 3]])


def test_max_min_aliases_have_no_backward():
    # torch 2.13: the forward takes "max", its backward raises RuntimeError
    # "Expected 'reduce' to be one of 'sum', 'prod', 'mean', 'amax', 'amin' but got max."
    x = tg.tensor([[1.0, 2, 3]], requires_grad=True)
    out = x.scatter_reduce(1, tg.tensor([[0, 0]]), tg.tensor([[5.0, 1]]), "max")
    with pytest.raises(RuntimeError, match="Expected 'reduce' to be one of 'sum', 'prod', "
                                           "'mean', 'amax', 'amin' but got max."):
        out.sum().backward()
    assert x.grad is None


def test_inplace():
    # torch 2.13: y.scatter_reduce_(1, [[0, 0]], [[5, 1]], "amax") returns y, now [[5, 2, 3]]
    y = tg.tensor([[1.0, 2, 3]])
    assert y.scatter_reduce_(1, tg.tensor([[0, 0]]), tg.tensor([[5.0, 1]]), "amax") is y
    np.testing.assert_array_equal(y.numpy(), [[5, 2, 3]])
    assert y._version == 1
    w = tg.tensor([[1.0, 2, 3]], requires_grad=True)
    s = tg.tensor([[4.0, 0.5]], requires_grad=True)
    z = w * 1
    z.scatter_reduce_(1, tg.tensor([[0, 2]]), s, "prod")
    (z * tg.tensor([[1.0, 2, 3]])).sum().backward()
    np.testing.assert_allclose(w.grad.numpy(), [[4, 2, 1.5]])
    np.testing.assert_allclose(s.grad.numpy(), [[1, 9]])


@pytest.mark.parametrize("call,exc,message", [
    (lambda x, i: x.scatter_reduce(1, i, x, "foo"), RuntimeError,
     "reduce argument must be either sum, prod, mean, amax or amin, got foo"),
    (lambda x, i: x.scatter_reduce(1, i, x, "add"), RuntimeError,
     "reduce argument must be either sum, prod, mean, amax or amin, got add"),
    (lambda x, i: x.scatter_reduce(1, i, x, "Sum"), RuntimeError, "got Sum"),
    (lambda x, i: x.scatter_reduce(1, i, 2.0, "sum"), TypeError,
     "scatter_reduce(): argument 'src' (position 3) must be Tensor, not float"),
    (lambda x, i: tg.scatter_reduce(x, 1, i, 2.0, "sum"), TypeError,
     "scatter_reduce(): argument 'src' (position 4) must be Tensor, not float"),
    (lambda x, i: x.scatter_reduce(1, i, x, 3), TypeError,
     "scatter_reduce(): argument 'reduce' (position 4) must be str, not int"),
    (lambda x, i: tg.scatter_reduce(x, 1, i, x, 5), TypeError,
     "scatter_reduce(): argument 'reduce' (position 5) must be str, not int"),
    (lambda x, i: x.scatter_reduce_(1, i, x, 3), TypeError,
     "scatter_reduce_(): argument 'reduce' (position 4) must be str, not int"),
    (lambda x, i: x.scatter_reduce(1, i, x, "sum", include_self=1), TypeError,
     "scatter_reduce(): argument 'include_self' must be bool, not int"),
    (lambda x, i: x.scatter_reduce(1, i, x, "sum", include_self=None), TypeError,
     "scatter_reduce(): argument 'include_self' must be bool, not NoneType"),
    (lambda x, i: x.scatter_reduce(1, i, x), TypeError,
     'scatter_reduce() missing 1 required positional arguments: "reduce"'),
    (lambda x, i: x.bool().scatter_reduce(1, i, x.bool(), "mean"), TypeError,
     '"scatter_gather_tensor_cpu_reduce_mean" not implemented for \'Bool\''),
    (lambda x, i: x.to(tg.complex64).scatter_reduce(1, i, x.to(tg.complex64), "amin"),
     TypeError, '"scatter_gather_tensor_cpu_reduce_amin" not implemented for \'ComplexFloat\''),
    (lambda x, i: x.scatter_reduce(1, i + 5, x, "sum"), IndexError,
     "index 5 is out of bounds for dimension 1 with size 3"),
    (lambda x, i: x.scatter_reduce(1, i - 5, x, "sum"), IndexError,
     "index -5 is out of bounds for dimension 1 with size 3"),
    (lambda x, i: x.scatter_reduce(2, i, x, "sum"), IndexError,
     "expected to be in range of [-2, 1], but got 2"),
])
def test_errors(call, exc, message):
    with pytest.raises(exc) as info:
        call(tg.ones(2, 3), tg.zeros(2, 3, dtype=tg.int64))
    assert message in str(info.value)
    assert "test_scatter_reduce.py" in str(info.value)   # the user's line


_REDUCES = ["sum", "prod", "mean", "amax", "amin"]


# `make test`: each reduction once, include_self taking turns; `make test-all`: both
@pytest.mark.parametrize("include_self,reduce", tiered(
    [True, False], _REDUCES, keep=[(k % 2 == 0, r) for k, r in enumerate(_REDUCES)]))
def test_gradcheck(reduce, include_self):
    rng = np.random.default_rng(0)
    vals = rng.permutation(np.linspace(0.5, 2.5, 24)).reshape(2, 3, 4)   # no ties, no zeros
    x = tg.tensor(vals[0], requires_grad=True)
    src = tg.tensor(vals[1], requires_grad=True)
    idx = tg.tensor(rng.integers(0, 4, (3, 4)))

    def f(x, src):
        return x.scatter_reduce(1, idx, src, reduce, include_self=include_self)
    assert tg.autograd.gradcheck(f, (x, src))
    assert tg.autograd.gradgradcheck(f, (x, src))


def test_compiled_equals_eager():
    idx = tg.tensor([[0, 1, 0, 3], [2, 2, 2, 0]])

    def step(x, s):
        return sum((x.scatter_reduce(1, idx, s, r, include_self=i) ** 2).sum()
                   for r in ("sum", "prod", "mean", "amax", "amin") for i in (True, False))
    x = tg.rand(2, 4, requires_grad=True)
    s = tg.rand(2, 4, requires_grad=True)
    x2, s2 = (t.detach().clone().requires_grad_() for t in (x, s))
    tg.compile(step)(x, s).backward()
    step(x2, s2).backward()
    np.testing.assert_allclose(x.grad.numpy(), x2.grad.numpy(), rtol=1e-5)
    np.testing.assert_allclose(s.grad.numpy(), s2.grad.numpy(), rtol=1e-5)
