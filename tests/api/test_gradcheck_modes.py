"""gradcheck's check_forward_ad / check_batched_grad / fast_mode, gradgradcheck's
check_fwd_over_rev, ``autograd.grad(..., is_grads_batched=True)`` and forward-AD edge cases
(issue 14).

Every expected value and message was printed by the same program under torch 2.13.
"""
import numpy as np
import pytest

import tracegrad as tg
import tracegrad.autograd.forward_ad as fwAD
from tracegrad.autograd import Function, GradcheckError, gradcheck, gradgradcheck


def _x():
    return tg.tensor([1.0, 2.0, 3.0], dtype=tg.float64, requires_grad=True)


class WrongJvp(Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, g):
        return g * 2

    @staticmethod
    def jvp(ctx, t):
        return t * 3


class WrongBackward(Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, g):
        return g * 3


def test_check_forward_ad_passes_and_catches_a_wrong_jvp():
    f = lambda t: t.exp() * t   # noqa: E731
    assert gradcheck(f, (_x(),), check_forward_ad=True)                            # torch 2.13
    assert gradcheck(f, (_x(),), check_forward_ad=True, check_backward_ad=False)   # torch 2.13
    assert gradcheck(f, (_x(),), check_forward_ad=True, fast_mode=True)            # torch 2.13
    for fast in (False, True):
        with pytest.raises(GradcheckError) as e:
            gradcheck(WrongJvp.apply, (_x(),), check_forward_ad=True, fast_mode=fast)
        # torch 2.13 (first line)
        assert str(e.value).splitlines()[0] == ("Jacobian computed with forward mode mismatch "
                                                "for output 0 with respect to input 0,")
    # the backward is right: without the forward check it passes
    assert gradcheck(WrongJvp.apply, (_x(),))


def test_check_forward_ad_without_a_jvp_raises_torch_error():
    class NoJvp(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2

    with pytest.raises(NotImplementedError, match="You must implement the jvp function for "
                                                  "custom autograd.Function"):   # torch 2.13
        gradcheck(NoJvp.apply, (_x(),), check_forward_ad=True)


def test_nothing_to_check_is_torch_assertion():
    with pytest.raises(AssertionError) as e:
        gradcheck(lambda t: t * 2, (_x(),), check_backward_ad=False)
    # torch 2.13
    assert str(e.value) == "Expected at least one of check_forward_ad or check_backward_ad to be True"
    with pytest.raises(AssertionError) as e:
        gradgradcheck(lambda t: (t ** 3).sum(), (_x(),), check_fwd_over_rev=True,
                      check_rev_over_rev=False)
    # torch 2.13
    assert str(e.value) == "Setting check_undefined_grad=True requires check_rev_over_rev to be True"


def test_fast_mode_catches_a_wrong_backward():
    assert gradcheck(lambda t: t.exp() * t, (_x(),), fast_mode=True)   # torch 2.13
    with pytest.raises(GradcheckError) as e:
        gradcheck(WrongBackward.apply, (_x(),), fast_mode=True)
    # torch 2.13
    assert str(e.value).splitlines()[0] == "Jacobian mismatch for output 0 with respect to input 0,"
    assert gradcheck(WrongBackward.apply, (_x(),), fast_mode=True, raise_exception=False) is False


def test_check_batched_grad():
    assert gradcheck(lambda t: (t.sin() * t).sum(0, keepdim=True) * t, (_x(),),
                     check_batched_grad=True)   # torch 2.13
    y = tg.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=tg.float64, requires_grad=True)
    assert gradcheck(lambda a, b: (a.sum() * b, b.exp()), (_x(), y),
                     check_batched_grad=True)   # torch 2.13: two outputs, two inputs

    calls = {"n": 0}

    class Drifting(Function):   # a backward that changes in the batched call
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            # calls 1-6: the Jacobian twice (reentrancy), 7: zero cotangent, 8-9: the
            # single VJPs of the batched check; from 10 on, its batched rows
            calls["n"] += 1
            return g * (2 if calls["n"] <= 9 else 5)

    with pytest.raises(GradcheckError, match="For output 0 and input 0:"):
        gradcheck(Drifting.apply, (_x(),), check_batched_grad=True, check_undefined_grad=False)


def test_gradgradcheck_batched_and_forward_over_reverse():
    f = lambda t: (t.sin() * t ** 2).sum()   # noqa: E731
    assert gradgradcheck(f, (_x(),), check_batched_grad=True)    # torch 2.13
    assert gradgradcheck(f, (_x(),), check_fwd_over_rev=True)    # torch 2.13


def test_grad_is_grads_batched():
    x = tg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    g, = tg.autograd.grad(x * x, x, tg.eye(3), is_grads_batched=True)
    assert g.tolist() == [[2.0, 0.0, 0.0], [0.0, 4.0, 0.0], [0.0, 0.0, 6.0]]   # torch 2.13
    g2, = tg.autograd.grad((x ** 3).sum(), x, tg.tensor([1.0, 2.0]), is_grads_batched=True)
    assert g2.tolist() == [[3.0, 12.0, 27.0], [6.0, 24.0, 54.0]]   # torch 2.13

    x = tg.tensor([1.0, 2.0], requires_grad=True)
    g, = tg.autograd.grad(x ** 3, x, tg.eye(2), is_grads_batched=True, create_graph=True)
    assert g.tolist() == [[3.0, 0.0], [0.0, 12.0]] and g.requires_grad   # torch 2.13
    g.sum().backward()
    assert x.grad.tolist() == [6.0, 12.0]   # torch 2.13

    with pytest.raises(RuntimeError) as e:
        tg.autograd.grad(x * 2, x, tg.ones(3, 3), is_grads_batched=True)
    # torch 2.13's text (it prints the row shape as torch.Size([]); we print the real one)
    assert str(e.value).startswith(
        "If `is_grads_batched=True`, we interpret the first dimension of each grad_output as "
        "the batch dimension. The sizes of the remaining dimensions are expected to match the "
        "shape of corresponding output, but a mismatch was detected: grad_output[0] has a "
        "shape of torch.Size([3]) and output[0] has a shape of torch.Size([2]).")


def test_forward_ad_copy_set_twice_and_level_errors():
    with fwAD.dual_level():
        d = fwAD.make_dual(tg.tensor([1.0, 2.0]), tg.tensor([3.0, 4.0]))
        x = tg.zeros(2)
        x.copy_(d)
        assert fwAD.unpack_dual(x).tangent.tolist() == [3.0, 4.0]   # torch 2.13
        with pytest.raises(RuntimeError) as e:
            fwAD.make_dual(d, tg.tensor([5.0, 6.0]))
        assert str(e.value) == ("Making a dual Tensor based on a Tensor that already has a "
                                "forward gradient at the same level 0 is not supported.")
        with pytest.raises(RuntimeError, match="^Nested forward mode AD is not supported at "
                                               "the moment$"):   # torch 2.13
            with fwAD.dual_level():
                pass
    with pytest.raises(RuntimeError, match="^Dual level must be a positive number.$"):
        fwAD.exit_dual_level()   # torch 2.13
    with pytest.raises(RuntimeError) as e:
        fwAD.make_dual(tg.ones(1), tg.ones(1))
    assert str(e.value) == ("Trying to create a dual Tensor for forward AD but no level exists, "
                            "make sure to enter_dual_level() first.")   # torch 2.13
    level = fwAD.enter_dual_level()
    try:
        with pytest.raises(RuntimeError) as e:
            fwAD.exit_dual_level(level=level + 1)
        assert str(e.value) == ("Trying to exit a forward AD level that was not the last one "
                                "that was created. This is not supported.")   # torch 2.13
    finally:
        fwAD.exit_dual_level(level=level)
    assert fwAD.unpack_dual(tg.ones(1)).tangent is None   # torch 2.13
    np.testing.assert_array_equal(tg.ones(1).numpy(), [1.0])


@pytest.fixture
def auto_executor_without_crosscheck(monkeypatch):
    """The user's default set-up: "auto" executor, no cross-checking (the suite's conftest
    turns it on, and it hides the executor a program runs on)."""
    from tracegrad import _state
    from tracegrad.backends import crosscheck
    monkeypatch.setattr(crosscheck, "enabled", lambda: False)
    saved = _state.get_executor()
    tg.set_executor("auto")
    yield
    tg.set_executor(saved)


def test_gradgradcheck_is_reentrant_under_the_auto_executor(auto_executor_without_crosscheck):
    # torch 2.13: gradgradcheck(lambda t: t.sin() * t, (x,)) and with check_batched_grad=True
    # both return True.  Before, the third run of the double-backward program moved to XLA
    # and differed from the NumPy runs by 2.8e-17: "Backward is not reentrant"
    x = tg.tensor([1.0, 2.0], dtype=tg.float64, requires_grad=True)
    assert gradgradcheck(lambda t: t.sin() * t, (x,))
    assert gradgradcheck(lambda t: t.sin() * t, (x,), check_batched_grad=True)
    assert gradcheck(lambda t: (t.sin() * t).cumsum(0), (x,), check_batched_grad=True)
    from tracegrad import _state
    assert _state.get_executor() == "auto"   # the pin ends with the check
