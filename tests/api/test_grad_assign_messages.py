"""`x.grad = g` of a wrong size or dtype: torch 2.13's RuntimeError texts (dtype checked first)."""
import re

import pytest

import tracegrad as tg

_DTYPE_TAIL = ("The gradient must match the tensor's grad_dtype (defaults to the tensor's "
               "dtype). You can set the tensor's grad_dtype attribute with a specific dtype, or "
               "None to allow any dtype. Set grad_dtype with caution. Diverging the dtypes of a "
               "tensor and its gradient may break downstream systems that assume they match.")


@pytest.mark.parametrize("grad_shape, shape, text", [   # torch 2.13's messages
    ((3,), (2,), "'[3]' to a tensor of size '[2]'"),
    ((2, 1), (2,), "'[2, 1]' to a tensor of size '[2]'"),
    ((3, 2), (2, 3), "'[3, 2]' to a tensor of size '[2, 3]'"),
    ((1,), (), "'[1]' to a tensor of size '[]'"),
])
def test_wrong_size(grad_shape, shape, text):
    x = tg.zeros(shape, requires_grad=True)
    with pytest.raises(RuntimeError) as e:
        x.grad = tg.zeros(grad_shape)
    assert str(e.value) == (f"attempting to assign a gradient of size {text}. Please ensure "
                            "that the gradient and the tensor are the same size")


@pytest.mark.parametrize("grad_dtype, dtype, cpp, scalar", [   # torch 2.13's names
    (tg.float64, tg.float32, "double", "Float"),
    (tg.int64, tg.float32, "long int", "Float"),
    (tg.float32, tg.float16, "float", "Half"),
    (tg.int8, tg.float64, "signed char", "Double"),
    (tg.int8, tg.bfloat16, "signed char", "BFloat16"),
    (tg.complex64, tg.float32, "c10::complex<float>", "Float"),
    (tg.float32, tg.complex128, "float", "ComplexDouble"),
    (tg.bool, tg.float32, "bool", "Float"),
    (tg.float16, tg.float32, "c10::Half", "Float"),
])
def test_wrong_dtype(grad_dtype, dtype, cpp, scalar):
    x = tg.zeros(2, dtype=dtype, requires_grad=True)
    with pytest.raises(RuntimeError) as e:
        x.grad = tg.zeros(2, dtype=grad_dtype)
    assert str(e.value) == (f"attempting to assign a gradient with dtype '{cpp}' to a tensor "
                            f"with grad_dtype '{scalar}'. " + _DTYPE_TAIL)


def test_dtype_is_checked_before_size():
    x = tg.zeros(2, requires_grad=True)
    with pytest.raises(RuntimeError, match=re.escape("with dtype 'double'")):   # torch 2.13
        x.grad = tg.zeros(3, dtype=tg.float64)


def test_not_a_tensor_and_good_assignments():
    x = tg.zeros(2, requires_grad=True)
    with pytest.raises(TypeError) as e:
        x.grad = [1.0, 2.0]
    # torch 2.13
    assert str(e.value) == "assigned grad expected to be a Tensor or None but got grad of type list"
    x.grad = tg.ones(2)
    assert x.grad.tolist() == [1.0, 1.0]
    x.grad = None
    assert x.grad is None
    y = tg.zeros(2, 3)   # no requires_grad: the same checks (torch 2.13)
    with pytest.raises(RuntimeError, match=re.escape("size '[3, 2]' to a tensor of size '[2, 3]'")):
        y.grad = tg.zeros(3, 2)
