"""Bad input gives clear errors: what was wrong (shapes, dtypes) and where (the user's line).

torch 2.13 raises RuntimeError for most of these; tracegrad raises its own
`ShapeError` (a ValueError) for shape problems, as docs/architecture.md says,
with the same information plus the source location.
"""
import sys

import numpy as np
import pytest

import tracegrad as tg
from tracegrad import DTypeError, ShapeError


def _next_line() -> int:
    """The line number after the caller's current line."""
    return sys._getframe(1).f_lineno + 1


def _assert_located(exc, line):
    msg = str(exc.value)
    assert f"{__file__}:{line}" in msg, msg


# ---- mismatched shapes in an op -----------------------------------------------------------------

@pytest.mark.parametrize("op, name", [
    (lambda a, b: a + b, "add"),
    (lambda a, b: a - b, "sub"),
    (lambda a, b: a * b, "mul"),
    (lambda a, b: a / b, "div"),
    (lambda a, b: tg.maximum(a, b), "maximum"),
])
def test_broadcast_mismatch_names_op_both_shapes_and_line(op, name):
    a, b = tg.ones(2, 3), tg.ones(2, 4)
    with pytest.raises(ShapeError) as exc:
        op(a, b)
    msg = str(exc.value)
    assert msg.startswith(f"{name}:"), msg
    assert "f32[2,3]" in msg and "f32[2,4]" in msg
    assert "broadcast" in msg
    assert f"{__file__}:" in msg   # the lambda's line in the parametrize list above


def test_broadcast_mismatch_points_at_the_users_line():
    x = tg.ones(2, 3, requires_grad=True)
    y = tg.ones(4)
    with pytest.raises(ShapeError) as exc:
        line = _next_line()
        x * y
    _assert_located(exc, line)
    msg = str(exc.value)
    assert "f32[2,3]" in msg and "f32[4]" in msg
    assert "test_broadcast_mismatch_points_at_the_users_line" in msg   # the function name
    assert isinstance(exc.value, ValueError)


def _helper_that_adds(a, b):
    return a + b   # HELPER-LINE


def test_location_is_innermost_user_frame():
    with pytest.raises(ShapeError) as exc:
        _helper_that_adds(tg.ones(3), tg.ones(2))
    helper_line = _helper_that_adds.__code__.co_firstlineno + 1
    _assert_located(exc, helper_line)


def test_location_skips_library_frames():
    # the op fails inside tracegrad.nn; the message names the line of this file
    layer = tg.nn.Linear(3, 2)
    with pytest.raises(ShapeError) as exc:
        line = _next_line()
        layer(tg.ones(4, 5))
    _assert_located(exc, line)
    assert "matmul" in str(exc.value)


def test_location_is_added_once():
    with pytest.raises(ShapeError) as exc:
        tg.ones(2) + tg.ones(3)
    assert str(exc.value).count(" at ") == 1


# ---- backward() of a non-scalar without gradient ------------------------------------------------

def test_backward_non_scalar_without_gradient():
    x = tg.ones(3, requires_grad=True)
    y = x * 2
    with pytest.raises(RuntimeError, match="grad can be implicitly created only for scalar "
                                           "outputs") as exc:
        y.backward()
    assert "[3]" in str(exc.value) and "gradient=" in str(exc.value)
    assert x.grad is None
    # with a gradient of the output's shape it works
    y.backward(tg.ones(3))
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, 2.0, 2.0])


def test_autograd_grad_non_scalar_without_grad_outputs():
    x = tg.ones(2, 2, requires_grad=True)
    with pytest.raises(RuntimeError, match="only for scalar outputs.*\\[2, 2\\]"):
        tg.autograd.grad(x * 2, x)


def test_backward_gradient_of_wrong_shape():
    x = tg.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match=r"Mismatch in shape: grad_output\[0\] has a shape of "
                                           r"\[3\] and output\[0\] has a shape of \[2\]"):
        (x * 2).backward(tg.ones(3))


def test_backward_of_tensor_without_grad():
    with pytest.raises(RuntimeError, match="does not require grad and does not have a grad_fn"):
        tg.ones(()).backward()


def test_one_element_non_scalar_backward_is_allowed():
    # torch allows implicit gradients for any one-element tensor
    x = tg.ones(1, 1, requires_grad=True)
    (x * 3).backward()
    np.testing.assert_array_equal(x.grad.numpy(), [[3.0]])


# ---- .item() ------------------------------------------------------------------------------------

def test_item_on_many_elements():
    with pytest.raises(RuntimeError, match="a Tensor with 6 elements cannot be converted to "
                                           "Scalar") as exc:
        tg.ones(2, 3).item()
    assert "(2, 3)" in str(exc.value)
    with pytest.raises(RuntimeError, match="0 elements"):
        tg.ones(0).item()


def test_item_on_one_element():
    assert tg.tensor([[2.5]]).item() == 2.5
    assert isinstance(tg.tensor([2]).item(), int)
    assert tg.tensor(True).item() is True


def test_bool_of_many_elements():
    with pytest.raises(RuntimeError, match="Boolean value of Tensor with 2 elements is ambiguous"):
        bool(tg.ones(2))


# ---- matmul -------------------------------------------------------------------------------------

def test_matmul_inner_dim_mismatch():
    a, b = tg.ones(2, 3), tg.ones(2, 3)
    with pytest.raises(ShapeError) as exc:
        line = _next_line()
        a @ b
    msg = str(exc.value)
    assert msg.startswith("matmul:") and "inner dimensions" in msg
    assert "f32[2,3] @ f32[2,3]" in msg and "3 != 2" in msg
    _assert_located(exc, line)


def test_batched_matmul_mismatch():
    with pytest.raises(ShapeError, match=r"inner dimensions differ.*f32\[5,2,3\] @ f32\[5,4,2\]"):
        tg.matmul(tg.ones(5, 2, 3), tg.ones(5, 4, 2))
    with pytest.raises(ShapeError, match="batch dimensions do not broadcast"):
        tg.ones(5, 2, 3) @ tg.ones(4, 3, 2)


def test_matmul_vector_mismatch_names_users_shapes():
    # the user's shapes, not the 2-D views matmul's decomposition makes of 1-D operands
    with pytest.raises(ShapeError) as exc:
        line = _next_line()
        tg.ones(3) @ tg.ones(4)
    msg = str(exc.value)
    assert "f32[3] @ f32[4]" in msg and "3 != 4" in msg
    _assert_located(exc, line)
    with pytest.raises(ShapeError, match=r"f32\[2,3\] @ f32\[4\]"):
        tg.ones(2, 3) @ tg.ones(4)


# ---- reshape / view -----------------------------------------------------------------------------

@pytest.mark.parametrize("shape", [(4, 2), (7,), (-1, 4)])
def test_reshape_to_wrong_size(shape):
    x = tg.ones(2, 3)
    with pytest.raises(ShapeError) as exc:
        line = _next_line()
        x.reshape(*shape)
    msg = str(exc.value)
    assert msg.startswith("reshape:")
    assert f"{list(shape)}" in msg and "size 6" in msg and "f32[2,3]" in msg
    _assert_located(exc, line)


def test_view_to_wrong_size():
    with pytest.raises(ShapeError,
                       match=r"shape '\[7\]' is invalid for input f32\[2,3\] of size 6"):
        tg.ones(2, 3).view(7)


def test_reshape_two_inferred_dims():
    with pytest.raises(ShapeError, match="only one dimension can be inferred"):
        tg.ones(2, 3).reshape(-1, -1)


# ---- requires_grad ------------------------------------------------------------------------------

@pytest.mark.parametrize("make", [
    lambda: tg.tensor([1, 2], requires_grad=True),
    lambda: tg.ones(2, dtype=tg.int64, requires_grad=True),
    lambda: tg.zeros(2, dtype=tg.int32).requires_grad_(),
    lambda: tg.tensor([True, False]).requires_grad_(True),
    lambda: tg.arange(3).requires_grad_(),
])
def test_requires_grad_on_non_float_tensor(make):
    with pytest.raises(RuntimeError, match="only Tensors of floating point and complex dtype "
                                           "can require gradients, got (int64|int32|bool)"):
        make()


def test_requires_grad_attribute_on_int_tensor():
    t = tg.tensor([1, 2])
    with pytest.raises(RuntimeError, match="got int64"):
        t.requires_grad = True
    assert not t.requires_grad
    t.requires_grad = False   # turning it off is always allowed


def test_setting_requires_grad_on_non_leaf():
    x = tg.ones(2, requires_grad=True)
    y = x * 2
    with pytest.raises(RuntimeError, match="you can only change requires_grad flags of leaf "
                                           "variables.*detach"):
        y.requires_grad = False
    with pytest.raises(RuntimeError, match="leaf variables"):
        y.requires_grad_(False)
    assert y.requires_grad   # unchanged
    d = y.detach()
    d.requires_grad = True   # a detached tensor is a leaf
    assert d.requires_grad and d.is_leaf


# ---- other user mistakes ------------------------------------------------------------------------

def test_numpy_of_tensor_requiring_grad():
    with pytest.raises(RuntimeError, match=r"Can't call numpy\(\) on Tensor that requires grad"):
        tg.ones(2, requires_grad=True).numpy()


def test_unsupported_operand_type():
    # torch 2.13: TypeError: unsupported operand type(s) for +: 'Tensor' and 'str'
    with pytest.raises(TypeError, match="unsupported operand type"):
        tg.ones(2) + "a"
    with pytest.raises(TypeError, match="unsupported operand type"):
        tg.ones(2) * None
    assert (tg.ones(2) == "a") is False   # as torch


def test_numpy_scalars_are_python_scalars():
    # torch 2.13: float32 results for all three
    for s in (np.float32(2), np.int64(2), np.float64(2)):
        r = tg.ones(2) * s
        assert r.dtype is tg.float32
        np.testing.assert_array_equal(r.numpy(), [2.0, 2.0])
        assert (s * tg.ones(2)).dtype is tg.float32


def test_mean_of_int_tensor():
    with pytest.raises(DTypeError, match="mean.*floating point.*int64"):
        tg.tensor([1, 2]).mean()


def test_index_out_of_bounds():
    with pytest.raises(IndexError, match="index 5 is out of bounds for dimension 0 with size 2"):
        tg.ones(2, 3)[5]
    with pytest.raises(IndexError, match="too many indices"):
        tg.ones(2, 3)[0, 0, 0]


def test_dim_out_of_range_names_op_and_line():
    with pytest.raises(IndexError) as exc:
        line = _next_line()
        tg.ones(2, 3).sum(dim=5)
    assert str(exc.value).startswith("sum:")
    _assert_located(exc, line)


def test_ragged_and_string_data():
    with pytest.raises(TypeError, match="rectangular"):
        tg.tensor([[1, 2], [3]])
    with pytest.raises(TypeError, match="could not infer a dtype"):
        tg.tensor("abc")


def test_grad_of_input_without_requires_grad():
    x = tg.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="does not require grad"):
        tg.autograd.grad((x * 2).sum(), tg.ones(2))


def test_grad_of_unused_input_without_allow_unused():
    a = tg.tensor(1.0, requires_grad=True)
    b = tg.tensor(2.0, requires_grad=True)
    with pytest.raises(RuntimeError, match="appears to not have been used in the graph"):
        tg.autograd.grad(a * 3, [a, b])


def test_backward_inputs_empty():
    x = tg.ones((), requires_grad=True)
    with pytest.raises(RuntimeError, match="cannot be empty"):
        (x * 2).backward(inputs=[])


def test_a_kernel_error_whose_type_takes_other_arguments_still_names_the_op():
    # NumPy's _UFuncNoLoopError(ufunc, dtypes) cannot be built from a message: the error
    # naming the op came out as a TypeError about _UFuncNoLoopError.__init__ (issue 18,
    # sign(bool) before it returned the bool)
    from tracegrad.dispatch.kernels import kernel_error

    class Op:
        name = "sign"
    try:
        np.sign(np.array([True]))
    except TypeError as e:
        raised = e
    err = kernel_error(Op, [], raised)
    assert type(err) is TypeError and isinstance(raised, TypeError)
    assert str(err).startswith("sign: failed on operands (): ufunc 'sign' did not contain")
