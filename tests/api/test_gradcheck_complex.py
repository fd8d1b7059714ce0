"""gradcheck / gradgradcheck with complex inputs and outputs (gradcheck.py `_realified`:
complex numbers checked as pairs of real tensors).

Every expected result was recorded by running the same program under torch 2.13.
"""
import pytest

import tracegrad as tg
from tracegrad.autograd import Function, GradcheckError, gradcheck, gradgradcheck


def _z():
    return tg.tensor([1 + 1j, 2 - 0.5j, -0.3 + 2j], dtype=tg.complex128, requires_grad=True)


CASES = {   # torch 2.13: gradcheck and gradgradcheck True in slow and fast mode, each
    "abs2 (real out)": lambda t: (t * t.conj()).real,
    "exp(t) * t (complex out)": lambda t: t.exp() * t,
    "abs": lambda t: t.abs(),
    "sum of squares (0-d complex out)": lambda t: (t ** 2).sum(),
}


@pytest.mark.parametrize("fast_mode", [False, True])
@pytest.mark.parametrize("name", list(CASES))
def test_complex_functions_pass_as_in_torch(name, fast_mode):
    assert gradcheck(CASES[name], (_z(),), fast_mode=fast_mode)
    assert gradgradcheck(CASES[name], (_z(),), fast_mode=fast_mode)


def test_real_and_complex_inputs_together():
    # torch 2.13: True, True
    x = tg.tensor([0.5, -1.0, 2.0], dtype=tg.float64, requires_grad=True)
    assert gradcheck(lambda a, t: a * t.sin(), (x, _z()))
    assert gradgradcheck(lambda a, t: a * t.sin(), (x, _z()))


def test_forward_ad_of_a_complex_function():
    # torch 2.13: True
    assert gradcheck(lambda t: t.exp() * t, (_z(),), check_forward_ad=True)


class Square(Function):
    @staticmethod
    def forward(ctx, t):
        ctx.save_for_backward(t)
        return t * t

    @staticmethod
    def backward(ctx, g):   # torch's convention: g * conj(d out / d t)
        t, = ctx.saved_tensors
        return g * (2 * t).conj()


class SquareNoConj(Square):
    @staticmethod
    def backward(ctx, g):   # the conjugate forgotten: a wrong complex gradient
        t, = ctx.saved_tensors
        return g * 2 * t


def test_a_custom_function_with_the_right_convention_passes():
    assert gradcheck(Square.apply, (_z(),))   # torch 2.13: True


def test_a_forgotten_conjugate_is_caught():
    # torch 2.13: GradcheckError "While considering the imaginary part of complex outputs
    # only, Jacobian mismatch for output 0 with respect to input 0,"; raise_exception=False
    # returns False.  Ours names the real pair and says which part each position is.
    with pytest.raises(GradcheckError, match=r"(?s)Jacobian mismatch for output 0 with respect "
                       r"to input 1.*the imaginary part of input 0"):
        gradcheck(SquareNoConj.apply, (_z(),))
    assert gradcheck(SquareNoConj.apply, (_z(),), raise_exception=False) is False
