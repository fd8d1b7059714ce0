"""inference_mode, inference tensors, detach_() and clone() (values: torch 2.13, by hand)."""
import numpy as np
import pytest

import tracegrad as tg

SAVED = "Inference tensors cannot be saved for backward"


def test_inference_mode_context():
    with tg.inference_mode():
        x = tg.ones(3)
        w = tg.ones(3, requires_grad=True)
        y = w * 2
        assert not tg.is_grad_enabled() and tg.is_inference_mode_enabled()
        assert x.is_inference() and not x.requires_grad
        assert y.grad_fn is None and not y.requires_grad and y.is_inference()
        with tg.inference_mode(False):
            assert tg.is_grad_enabled() and not tg.is_inference_mode_enabled()
            assert not tg.ones(1).is_inference()
    assert tg.is_grad_enabled() and not tg.is_inference_mode_enabled()
    assert not tg.ones(1).is_inference()
    with tg.no_grad():
        assert not tg.ones(2).is_inference()      # no_grad makes normal tensors


def test_inference_mode_as_decorator():
    w = tg.ones(3, requires_grad=True)

    @tg.inference_mode()
    def f(a):
        return a * 2

    @tg.inference_mode
    def g(a):
        return a * 2

    assert not f(w).requires_grad and f(w).is_inference()
    assert not g(w).requires_grad and tg.is_grad_enabled()


def test_inference_tensor_cannot_be_saved_for_backward(executor):
    with tg.inference_mode():
        x = tg.ones(3)
    w = tg.ones(3, requires_grad=True)
    y = x + w                    # add saves nothing: allowed (torch 2.13: AddBackward0)
    assert y.grad_fn.name() == "AddBackward0"
    y.sum().backward()
    assert w.grad.numpy().tolist() == [1.0, 1.0, 1.0]
    with pytest.raises(RuntimeError, match=SAVED) as info:
        x * w                    # mul must save x for w's gradient
    assert "clone" in str(info.value) and "mul" in str(info.value)
    assert not x.exp().is_inference()    # an op outside inference mode makes a normal tensor
    c = x.clone()                # the workaround torch suggests
    assert not c.is_inference()
    (c * w).sum().backward()
    assert w.grad.numpy().tolist() == [2.0, 2.0, 2.0]


def test_inference_tensor_cannot_require_grad():
    with tg.inference_mode():
        x = tg.ones(3)
    with pytest.raises(RuntimeError, match="Setting requires_grad=True on inference tensor "
                                           "outside InferenceMode is not allowed."):
        x.requires_grad_()


def test_function_cannot_save_an_inference_tensor():
    class Save(tg.autograd.Function):
        @staticmethod
        def forward(ctx, x, k):
            ctx.save_for_backward(k)
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2, None

    with tg.inference_mode():
        k = tg.ones(2)
    with pytest.raises(RuntimeError, match=SAVED):
        Save.apply(tg.ones(2, requires_grad=True), k)


# ---- detach_ and clone ---------------------------------------------------------------------

def test_detach_in_place_makes_a_leaf():
    a = tg.ones(2, requires_grad=True)
    b = a * 2
    assert b.detach_() is b
    assert not b.requires_grad and b.grad_fn is None and b.is_leaf
    with pytest.raises(RuntimeError, match="Can't detach views in-place. Use detach\\(\\) "
                                           "instead."):
        (a * 1)[0:1].detach_()


def test_clone_is_a_differentiable_copy(executor):
    a = tg.tensor([1.0, 2.0], requires_grad=True)
    b = a.clone()
    assert b.grad_fn.name() == "CloneBackward0" and b is not a
    assert not np.shares_memory(b.detach().numpy(), a.detach().numpy())
    (b * b).sum().backward()
    assert a.grad.numpy().tolist() == [2.0, 4.0]
    c = tg.tensor([1, 2])
    assert tg.clone(c).dtype is tg.int64 and tg.clone(c).tolist() == [1, 2]


def test_inplace_on_inference_tensor_outside_inference_mode_raises():
    # torch 2.13: "Inplace update to inference tensor outside InferenceMode is not allowed"
    with tg.inference_mode():
        t = tg.ones(3)
        t.add_(1)                      # inside: allowed
    with pytest.raises(RuntimeError, match="Inplace update to inference tensor outside "
                                           "InferenceMode is not allowed"):
        t.add_(1)
    c = t.clone()
    c.add_(1)                          # a clone is a normal tensor
    np.testing.assert_array_equal(c.numpy(), [3.0, 3.0, 3.0])


def test_enable_grad_inside_inference_mode_does_not_record():
    # torch 2.13 prints: a True / b False / c True False / d True True / e False, and the
    # product made under enable_grad inside inference mode is an inference tensor, no grad_fn
    x = tg.ones(2, requires_grad=True)
    with tg.no_grad():
        with tg.inference_mode(False):
            assert tg.is_grad_enabled()
    with tg.inference_mode():
        assert not tg.is_grad_enabled()
        with tg.enable_grad():
            with tg.inference_mode(False):
                assert tg.is_grad_enabled() and not tg.is_inference_mode_enabled()
            assert tg.is_grad_enabled() and tg.is_inference_mode_enabled()
            y = x * 2
        with tg.set_grad_enabled(True):
            z = x * 3
    assert tg.is_grad_enabled() and not tg.is_inference_mode_enabled()
    for t in (y, z):
        assert not t.requires_grad and t.grad_fn is None and t.is_inference()
    np.testing.assert_array_equal(y.numpy(), [2.0, 2.0])
