"""torch's ``dtype=`` keyword on sum, mean, softmax and log_softmax (registry flag DTYPE_ARG):
the input is cast first and the result has that dtype.  Values from torch 2.13.0 (CPU)."""
import numpy as np
import pytest

import tracegrad as tg
import tracegrad.nn.functional as F


def _ints():
    return tg.tensor([[1, 2, 3], [4, 5, 6]], dtype=tg.int32)


def test_sum_in_a_given_dtype():
    r = tg.sum(_ints(), dtype=tg.float64)
    assert r.dtype is tg.float64 and r.item() == 21.0                      # torch 2.13
    assert _ints().sum(1, dtype=tg.int32).dtype is tg.int32               # torch: int32, not int64
    assert tg.sum(_ints(), dtype=tg.int32).dtype is tg.int32
    np.testing.assert_array_equal(_ints().sum(1, dtype=tg.int32).numpy(), [6, 15])


def test_mean_softmax_log_softmax_in_a_given_dtype():
    assert tg.mean(_ints(), dtype=tg.float64).item() == 3.5                # torch 2.13
    s = tg.softmax(_ints().float(), 1, dtype=tg.float64)
    assert s.dtype is tg.float64
    np.testing.assert_allclose(s.numpy()[0], [0.09003057, 0.24472847, 0.66524096], rtol=1e-7)
    ls = F.log_softmax(_ints().float(), dim=1, dtype=tg.float64)
    np.testing.assert_allclose(ls.numpy()[1], [-2.40760596, -1.40760596, -0.40760596], rtol=1e-7)


def test_gradient_comes_back_in_the_input_dtype():
    y = tg.tensor([1.0, 2.0], requires_grad=True)
    (y.sum(dtype=tg.float64) * tg.tensor([3.0], dtype=tg.float64)).sum().backward()
    assert y.grad.dtype is tg.float32
    np.testing.assert_array_equal(y.grad.numpy(), [3.0, 3.0])              # torch 2.13


def test_compiled_sum_in_a_given_dtype():
    f = tg.compile(lambda a: a.sum(dtype=tg.float64))
    r = f(tg.ones(3))
    assert r.dtype is tg.float64 and r.item() == 3.0


def test_mean_in_an_integer_dtype_is_refused():
    # torch 2.13: "mean(): could not infer output dtype. Optional dtype must be either a
    # floating point or complex dtype. Got: Long"
    with pytest.raises(tg.TracegradError, match="mean"):
        tg.mean(_ints(), dtype=tg.int64)
