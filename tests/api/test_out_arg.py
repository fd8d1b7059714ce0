"""torch's ``out=`` argument on the registry's functions (tracegrad/_out.py).

Every expected value and message was recorded from torch 2.13.0 (CPU) running the same
call; the numbers are small enough to check by hand.
"""
import warnings

import numpy as np
import pytest

import tracegrad as tg


def test_out_is_written_in_place_and_returned():
    out = tg.empty(3)
    version = out._version
    r = tg.add(tg.ones(3), 2, out=out)
    assert r is out
    np.testing.assert_array_equal(out.numpy(), [3.0, 3.0, 3.0])   # torch 2.13
    assert out._version > version


def test_out_of_a_wider_dtype_takes_the_converted_result():
    out = tg.empty(3, dtype=tg.float64)
    tg.add(tg.ones(3), 1, out=out)
    assert out.dtype is tg.float64
    np.testing.assert_array_equal(out.numpy(), [2.0, 2.0, 2.0])   # torch 2.13: float64 [2, 2, 2]


@pytest.mark.parametrize("fn, out_dtype, message", [
    (lambda o: tg.exp(tg.ones(3), out=o), tg.int64,
     "result type Float can't be cast to the desired output type Long"),           # torch 2.13
    (lambda o: tg.add(tg.ones(3, dtype=tg.int64), 1.5, out=o), tg.int64,
     "result type Float can't be cast to the desired output type Long"),           # torch 2.13
    (lambda o: tg.mul(tg.ones(3), 2, out=o), tg.bool,
     "result type Float can't be cast to the desired output type Bool"),
])
def test_a_result_that_cannot_be_cast_is_refused(fn, out_dtype, message):
    with pytest.raises(RuntimeError, match=message):
        fn(tg.empty(3, dtype=out_dtype))


def test_an_out_of_another_shape_is_resized_with_torchs_warning():
    out = tg.empty(2)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        tg.mul(tg.ones(3), 2, out=out)
    np.testing.assert_array_equal(out.numpy(), [2.0, 2.0, 2.0])
    # torch 2.13's UserWarning, first sentence
    assert any("An output with one or more elements was resized since it had shape [2], which "
               "does not match the required output shape [3]." in str(w.message) for w in caught)


def test_an_empty_out_is_resized_silently():
    out = tg.empty(0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        tg.exp(tg.zeros(2, 2), out=out)
    assert tuple(out.shape) == (2, 2)                                     # torch 2.13
    np.testing.assert_array_equal(out.numpy(), np.ones((2, 2)))


@pytest.mark.parametrize("x_grad, out_grad", [(True, False), (False, True)])
def test_out_with_grad_mode_on_and_a_tensor_that_requires_grad_is_refused(x_grad, out_grad):
    x = tg.ones(3, requires_grad=x_grad)
    out = tg.empty(3, requires_grad=out_grad)
    with pytest.raises(RuntimeError, match=r"mul\(\): functions with out=\.\.\. arguments don't "
                       r"support automatic differentiation, but one of the arguments requires "
                       r"grad\."):                                           # torch 2.13
        tg.mul(x, 2, out=out)


def test_out_under_no_grad_is_a_plain_write():
    x = tg.ones(3, requires_grad=True)
    with tg.no_grad():
        out = tg.mul(x, 2, out=tg.empty(3))
    assert not out.requires_grad
    np.testing.assert_array_equal(out.numpy(), [2.0, 2.0, 2.0])             # torch 2.13


def test_out_a_view_writes_through_to_its_base():
    base = tg.zeros(2, 3)
    tg.add(tg.ones(2), 1, out=base[:, 1])
    np.testing.assert_array_equal(base.numpy(), [[0, 2, 0], [0, 2, 0]])   # torch 2.13


def test_reductions_matmul_and_cat_take_out():
    o = tg.empty(3)
    tg.sum(tg.ones(2, 3), 0, out=o)
    np.testing.assert_array_equal(o.numpy(), [2, 2, 2])                     # torch 2.13
    o = tg.empty(3)
    tg.matmul(tg.ones(3, 2), tg.ones(2), out=o)
    np.testing.assert_array_equal(o.numpy(), [2, 2, 2])                     # torch 2.13
    o = tg.empty(2, 2)
    tg.cat([tg.ones(1, 2), tg.zeros(1, 2)], out=o)
    np.testing.assert_array_equal(o.numpy(), [[1, 1], [0, 0]])              # torch 2.13


def test_an_op_with_two_results_takes_a_tuple():
    values, indices = tg.empty(2), tg.empty(2, dtype=tg.int64)
    r = tg.max(tg.tensor([[1.0, 3.0], [4.0, 2.0]]), 1, out=(values, indices))
    assert r.values is values and r.indices is indices
    np.testing.assert_array_equal(values.numpy(), [3.0, 4.0])               # torch 2.13
    np.testing.assert_array_equal(indices.numpy(), [1, 0])
    with pytest.raises(TypeError, match=r"max\(\): argument 'out' must be tuple of 2 Tensors"):
        tg.max(tg.ones(2, 2), 1, out=values)


def test_out_must_be_a_tensor():
    with pytest.raises(TypeError, match=r"add\(\): argument 'out' must be Tensor, not list"):
        tg.add(tg.ones(3), 1, out=[1])                                      # torch 2.13's words


@pytest.mark.parametrize("call", [
    lambda: tg.transpose(tg.ones(2, 3), 0, 1, out=tg.empty(3, 2)),
    lambda: tg.unsqueeze(tg.ones(2), 0, out=tg.empty(1, 2)),
    lambda: tg.permute(tg.ones(2, 3), (1, 0), out=tg.empty(3, 2)),
])
def test_view_functions_have_no_out(call):
    # torch 2.13: "transpose() got an unexpected keyword argument 'out'"
    with pytest.raises(TypeError, match="out"):
        call()
