"""In-place ops follow torch's cast rule for their result (the one `out=` follows,
tracegrad/_out.py `check_cast`): a result the tensor's dtype cannot hold without changing
kind (float into an integer tensor, an integer into bool, complex into a real one) raises;
a narrower dtype of the same kind is fine.

Messages and values are torch 2.13's (recorded with the same calls, "torch 2.13").
"""
import numpy as np
import pytest

import tracegrad as tg


def _i():
    return tg.tensor([1, 2, 3])


def _f():
    return tg.tensor([1.0, 2, 3])


def _b():
    return tg.tensor([True, False])


def _setitem(t, key, value):
    t[key] = value
    return t


def _iadd(t, v):
    t += v
    return t


# torch 2.13: RuntimeError "result type X can't be cast to the desired output type Y"
REFUSED = [
    ("int.add_(1.5)", lambda: _i().add_(1.5), "Float", "Long"),
    ("int.sub_(0.5)", lambda: _i().sub_(0.5), "Float", "Long"),
    ("int.mul_(float tensor)", lambda: _i().mul_(_f()), "Float", "Long"),
    ("int.mul_(0-d float tensor)", lambda: _i().mul_(tg.tensor(2.0)), "Float", "Long"),
    ("int += 1.5", lambda: _iadd(_i(), 1.5), "Float", "Long"),
    ("bool.add_(1)", lambda: _b().add_(1), "Long", "Bool"),
    ("float.add_(1j)", lambda: _f().add_(1j), "ComplexFloat", "Float"),
    ("float.add_(complex tensor)", lambda: _f().add_(tg.tensor([1j, 2, 3])), "ComplexFloat",
     "Float"),
    ("float.mul_(0-d complex)", lambda: _f().mul_(tg.tensor(1j)), "ComplexFloat", "Float"),
    ("int.div_(2)", lambda: _i().div_(2), "Float", "Long"),
    ("int.true_divide_(2)", lambda: _i().true_divide_(2), "Float", "Long"),
    ("int.sqrt_()", lambda: _i().sqrt_(), "Float", "Long"),
    ("int.exp_()", lambda: _i().exp_(), "Float", "Long"),
    ("int.sigmoid_()", lambda: _i().sigmoid_(), "Float", "Long"),
    ("int.pow_(0.5)", lambda: _i().pow_(0.5), "Float", "Long"),
    ("int.remainder_(1.5)", lambda: _i().remainder_(1.5), "Float", "Long"),
    ("int.fmod_(1.5)", lambda: _i().fmod_(1.5), "Float", "Long"),
    ("int.atan2_(int)", lambda: _i().atan2_(_i()), "Float", "Long"),
    ("int.xlogy_(int)", lambda: _i().xlogy_(_i()), "Float", "Long"),
    ("int.addcmul_(float, float)", lambda: _i().addcmul_(_f(), _f()), "Float", "Long"),
]


@pytest.mark.parametrize("case,call,result,target", REFUSED, ids=[c[0] for c in REFUSED])
def test_refused(case, call, result, target):
    with pytest.raises(RuntimeError) as info:
        call()
    message = str(info.value)
    assert f"result type {result} can't be cast to the desired output type {target}" in message
    assert "test_inplace_casts.py" in message   # the user's line


def test_refused_write_leaves_the_tensor_unchanged():
    t = _i()
    with pytest.raises(RuntimeError, match="^add_: result type Float"):   # named as the op
        t.add_(1.5)
    np.testing.assert_array_equal(t.numpy(), [1, 2, 3])
    assert t._version == 0 and t.dtype is tg.int64


# torch 2.13: (call, dtype, values) of the ones it accepts
ACCEPTED = [
    ("bool.add_(True)", lambda: _b().add_(True), tg.bool, [True, True]),
    ("int.floor_divide_(2)", lambda: _i().floor_divide_(2), tg.int64, [0, 1, 1]),
    ("int.add_(2, alpha=2)", lambda: _i().add_(2, alpha=2), tg.int64, [5, 6, 7]),
    ("int.pow_(2)", lambda: _i().pow_(2), tg.int64, [1, 4, 9]),
    ("float.add_(double tensor)", lambda: _f().add_(tg.tensor([1.0, 2, 3], dtype=tg.float64)),
     tg.float32, [2, 4, 6]),
    ("half.add_(double tensor)", lambda: _f().half().add_(tg.tensor([1.0, 2, 3], dtype=tg.float64)),
     tg.float16, [2, 4, 6]),
    ("int32.add_(int64 tensor)", lambda: _i().int().add_(_i()), tg.int32, [2, 4, 6]),
    ("int.lt_(2)", lambda: _i().lt_(2), tg.int64, [1, 0, 0]),
    ("bool.lt_(2)", lambda: _b().lt_(2), tg.bool, [True, True]),
    ("float.lt_(2)", lambda: _f().lt_(2), tg.float32, [1, 0, 0]),
    ("int.copy_(float)", lambda: _i().copy_(_f()), tg.int64, [1, 2, 3]),
    ("int.fill_(1.5)", lambda: _i().fill_(1.5), tg.int64, [1, 1, 1]),
    ("int.masked_fill_(1.5)", lambda: _i().masked_fill_(tg.tensor([True, False, True]), 1.5),
     tg.int64, [1, 2, 1]),
    ("int[0] = 1.5", lambda: _setitem(_i(), 0, 1.5), tg.int64, [1, 2, 3]),
    ("int.abs_()", lambda: _i().abs_(), tg.int64, [1, 2, 3]),
    ("int.neg_()", lambda: _i().neg_(), tg.int64, [-1, -2, -3]),
    ("int.round_()", lambda: _i().round_(), tg.int64, [1, 2, 3]),
    ("complex.add_(1)", lambda: tg.tensor([1j]).add_(1), tg.complex64, [1 + 1j]),
    ("complex64.add_(double tensor)",
     lambda: tg.tensor([1j]).add_(tg.tensor([1.0], dtype=tg.float64)), tg.complex64, [1 + 1j]),
]


@pytest.mark.parametrize("case,call,dtype,values", ACCEPTED, ids=[c[0] for c in ACCEPTED])
def test_accepted(case, call, dtype, values):
    out = call()
    assert out.dtype is dtype
    np.testing.assert_array_equal(out.numpy(), values)


def test_out_and_inplace_share_one_rule():
    # the same message from out= (torch 2.13: identical)
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired "
                                           "output type Long"):
        tg.add(_i(), 1.5, out=tg.zeros(3, dtype=tg.int64))
    from tracegrad import _inplace, _out
    assert _inplace.check_cast is _out.check_cast
