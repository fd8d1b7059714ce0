"""A Python number meets an integer tensor: torch's two conversion rules (ir/scalars.py).

The operand of arithmetic, comparison and bitwise ops is a *wrapped number* whose integer
keeps its low bits (``uint8 + 300`` adds 44); a *Scalar argument* (fill values, where and
masked_fill values, clamp bounds, a pow exponent, alpha, tensor() data) is converted with
an overflow check, a negative value in an unsigned dtype's range wrapping.

Every expected value and message below was recorded from torch 2.13 with the same
expression (``torch`` for ``tg``).
"""
import pytest

import tracegrad as tg


def u8(*v):
    return tg.tensor(list(v), dtype=tg.uint8)


def i8(*v):
    return tg.tensor(list(v), dtype=tg.int8)


MASK = [True, False, True]

# (expression, expected values, expected dtype): torch 2.13's results
WRAPPED = [
    ("u8(1, 2, 3) + (-1)", lambda: u8(1, 2, 3) + (-1), [0, 1, 2], tg.uint8),
    ("u8 + 300", lambda: u8(1, 2, 3) + 300, [45, 46, 47], tg.uint8),
    ("i8 * -200", lambda: i8(1, 2, 3) * -200, [56, 112, -88], tg.int8),
    ("int32 + 2**40", lambda: tg.tensor([1, 2, 3], dtype=tg.int32) + 2 ** 40, [1, 2, 3], tg.int32),
    ("int32 - 2**31", lambda: tg.tensor([1, 2, 3], dtype=tg.int32) - 2 ** 31,
     [-2147483647, -2147483646, -2147483645], tg.int32),
    ("int64 + 2**63", lambda: tg.tensor([1, 2, 3]) + 2 ** 63,
     [-9223372036854775807, -9223372036854775806, -9223372036854775805], tg.int64),
    ("int64 + (2**64 - 1)", lambda: tg.tensor([1, 2, 3]) + (2 ** 64 - 1), [0, 1, 2], tg.int64),
    ("i8 + 2**63", lambda: i8(1, 2, 3) + 2 ** 63, [1, 2, 3], tg.int8),
    ("u8 - 256", lambda: u8(1, 2, 3) - 256, [1, 2, 3], tg.uint8),
    ("int16 + 40000", lambda: tg.tensor([1, 2, 3], dtype=tg.int16) + 40000,
     [-25535, -25534, -25533], tg.int16),
    ("int16 * 40000", lambda: tg.tensor([1, 2, 3], dtype=tg.int16) * 40000,
     [-25536, 14464, -11072], tg.int16),
    ("u8.add_(300)", lambda: u8(1, 2, 3).add_(300), [45, 46, 47], tg.uint8),
    ("i8.mul_(-200)", lambda: i8(1, 2, 3).mul_(-200), [56, 112, -88], tg.int8),
    ("i8.sub_(300)", lambda: i8(1, 2, 3).sub_(300), [-43, -42, -41], tg.int8),
    ("u8 == 257", lambda: u8(1, 2, 3) == 257, [True, False, False], tg.bool),
    ("u8 < -1", lambda: u8(1, 2, 3) < -1, [True, True, True], tg.bool),
    ("i8.ne(257)", lambda: i8(1, 2, 3).ne(257), [False, True, True], tg.bool),
    ("u8 // -1", lambda: u8(1, 2, 3) // -1, [0, 0, 0], tg.uint8),
    ("300 // u8", lambda: 300 // u8(1, 2, 3), [44, 22, 14], tg.uint8),
    ("i8 % 200", lambda: i8(1, 2, 3) % 200, [-55, -54, -53], tg.int8),
    ("remainder(300, i8)", lambda: tg.remainder(300, i8(1, 2, 3)), [0, 0, 2], tg.int8),
    ("i8 & 300", lambda: i8(1, 2, 3) & 300, [0, 0, 0], tg.int8),
    ("i8 | 256", lambda: i8(1, 2, 3) | 256, [1, 2, 3], tg.int8),
    ("300 + u8", lambda: 300 + u8(1, 2, 3), [45, 46, 47], tg.uint8),
    ("300 - u8", lambda: 300 - u8(1, 2, 3), [43, 42, 41], tg.uint8),
    ("300 ** i8", lambda: 300 ** i8(1, 2, 3), [44, -112, -64], tg.int8),
    ("tensor(5, uint8) + (-6)", lambda: tg.tensor(5, dtype=tg.uint8) + (-6), 255, tg.uint8),
    ("float(int8) + 1000", lambda: tg.tensor([1.0, 2.0]).to(tg.int8) + 1000, [-23, -22], tg.int8),
    ("u8.cumsum(dtype=uint8) + 300", lambda: u8(1, 2, 3).cumsum(0, dtype=tg.uint8) + 300,
     [45, 47, 50], tg.uint8),
    ("int32.add(2**40, alpha=1)", lambda: tg.tensor([1, 2, 3], dtype=tg.int32).add(2 ** 40, alpha=1),
     [1, 2, 3], tg.int32),
    ("u8.add(1, alpha=-1)", lambda: u8(1, 2, 3).add(1, alpha=-1), [0, 1, 2], tg.uint8),
    ("i8.add(1, alpha=-128)", lambda: i8(1, 2, 3).add(1, alpha=-128), [-127, -126, -125], tg.int8),
    # Scalar arguments a checked conversion lets in: a negative value in uint8's range wraps
    ("u8.fill_(-1)", lambda: u8(1, 2, 3).fill_(-1), [255, 255, 255], tg.uint8),
    ("u8.fill_(-255)", lambda: u8(1, 2, 3).fill_(-255), [1, 1, 1], tg.uint8),
    ("int32.fill_(2.7)", lambda: tg.tensor([1, 2, 3], dtype=tg.int32).fill_(2.7), [2, 2, 2], tg.int32),
    ("full(-1, uint8)", lambda: tg.full((2,), -1, dtype=tg.uint8), [255, 255], tg.uint8),
    ("full_like(u8, -1)", lambda: tg.full_like(tg.zeros(3, dtype=tg.uint8), -1), [255, 255, 255],
     tg.uint8),
    ("tensor([-1], uint8)", lambda: tg.tensor([-1], dtype=tg.uint8), [255], tg.uint8),
    ("u8.masked_fill(-1)", lambda: u8(1, 2, 3).masked_fill(tg.tensor(MASK), -1), [255, 2, 255],
     tg.uint8),
    ("where(c, u8, -1)", lambda: tg.where(tg.tensor([True, False]), u8(1, 2), -1), [1, 255], tg.uint8),
    ("u8.clamp(min=-1)", lambda: u8(1, 2, 3).clamp(min=-1), [255, 255, 255], tg.uint8),
    ("i8.pow(3)", lambda: i8(1, 2, 3).pow(3), [1, 8, 27], tg.int8),
    # shifts (torch.bitwise_left_shift / right_shift): out-of-range amounts are 0 / the sign
    ("i8 << 9", lambda: i8(1, 2, 3) << 9, [0, 0, 0], tg.int8),
    ("i8 << 300", lambda: i8(1, 2, 3) << 300, [0, 0, 0], tg.int8),
    ("i8 << -1", lambda: i8(1, 2, 3) << -1, [0, 0, 0], tg.int8),
    ("i8(64) << 1", lambda: i8(64, 2, 3) << 1, [-128, 4, 6], tg.int8),
    ("i8 >> 1", lambda: i8(1, 2, 3) >> 1, [0, 1, 1], tg.int8),
    ("i8(-128) >> 9", lambda: i8(-128, 2, 3) >> 9, [-1, 0, 0], tg.int8),
    ("int64.bitwise_left_shift(2)", lambda: tg.tensor([1, 2, 3]).bitwise_left_shift(2),
     [4, 8, 12], tg.int64),
    ("bitwise_left_shift(2, int64)", lambda: tg.bitwise_left_shift(2, tg.tensor([1, 2, 3])),
     [4, 8, 16], tg.int64),
    ("i8 >> i8", lambda: i8(1, 2, 3).bitwise_right_shift(i8(1, 2, 3)), [0, 0, 0], tg.int8),
    ("bool << 1", lambda: tg.tensor([True, False]) << 1, [2, 0], tg.int64),
    # promotion leaves the integer dtype: nothing wraps
    ("bool + 300", lambda: tg.tensor([True, False]) + 300, [301, 300], tg.int64),
    ("u8.sum() + 300", lambda: u8(1, 2, 3).sum() + 300, 306, tg.int64),
]


@pytest.mark.parametrize("what,fn,values,dtype", WRAPPED, ids=[w[0] for w in WRAPPED])
def test_values_follow_torch(what, fn, values, dtype):
    out = fn()
    assert out.dtype is dtype
    assert out.tolist() == values


# (expression, error type, torch 2.13's message): ours puts the op first and the value after
REFUSED = [
    ("u8.fill_(300)", lambda: u8(1, 2, 3).fill_(300), RuntimeError,
     "value cannot be converted to type uint8_t without overflow"),
    ("u8.fill_(-256)", lambda: u8(1, 2, 3).fill_(-256), RuntimeError,
     "value cannot be converted to type uint8_t without overflow"),
    ("u8.fill_(-1.5)", lambda: u8(1, 2, 3).fill_(-1.5), RuntimeError,
     "value cannot be converted to type uint8_t without overflow"),
    ("i8.fill_(128)", lambda: i8(1, 2, 3).fill_(128), RuntimeError,
     "value cannot be converted to type int8_t without overflow"),
    ("i8.fill_(-129)", lambda: i8(1, 2, 3).fill_(-129), RuntimeError,
     "value cannot be converted to type int8_t without overflow"),
    ("int16.fill_(2**15)", lambda: tg.tensor([1], dtype=tg.int16).fill_(2 ** 15), RuntimeError,
     "value cannot be converted to type int16_t without overflow"),
    ("int32.fill_(1e10)", lambda: tg.tensor([1], dtype=tg.int32).fill_(1e10), RuntimeError,
     "value cannot be converted to type int without overflow"),
    ("int64.fill_(2**63)", lambda: tg.tensor([1]).fill_(2 ** 63), RuntimeError,
     "value cannot be converted to type int64_t without overflow"),
    ("full(300, uint8)", lambda: tg.full((2,), 300, dtype=tg.uint8), RuntimeError,
     "value cannot be converted to type uint8_t without overflow"),
    ("full(2**31, int32)", lambda: tg.full((2,), 2 ** 31, dtype=tg.int32), RuntimeError,
     "value cannot be converted to type int without overflow"),
    ("full(1e40)", lambda: tg.full((2,), 1e40), RuntimeError,
     "value cannot be converted to type float without overflow"),
    ("full(2**200)", lambda: tg.full((2,), 2 ** 200), OverflowError, "int too big to convert"),
    ("new_full(300)", lambda: tg.zeros(3, dtype=tg.uint8).new_full((2,), 300), RuntimeError,
     "value cannot be converted to type uint8_t without overflow"),
    ("full_like(300)", lambda: tg.full_like(tg.zeros(3, dtype=tg.uint8), 300), RuntimeError,
     "value cannot be converted to type uint8_t without overflow"),
    ("masked_fill(-256)", lambda: u8(1, 2, 3).masked_fill(tg.tensor(MASK), -256), RuntimeError,
     "value cannot be converted to type uint8_t without overflow"),
    ("masked_fill_(200)", lambda: i8(1, 2, 3).masked_fill_(tg.tensor(MASK), 200), RuntimeError,
     "value cannot be converted to type int8_t without overflow"),
    ("where(c, i8, 128)", lambda: tg.where(tg.tensor([True, False]), i8(1, 2), 128), RuntimeError,
     "value cannot be converted to type int8_t without overflow"),
    ("where(c, 300, u8)", lambda: tg.where(tg.tensor([True, False]), 300, u8(1, 2)), RuntimeError,
     "value cannot be converted to type uint8_t without overflow"),
    ("u8.clamp(-1, 300)", lambda: u8(1, 2, 3).clamp(-1, 300), RuntimeError,
     "value cannot be converted to type uint8_t without overflow"),
    ("i8.clamp(max=200)", lambda: i8(1, 2, 3).clamp(max=200), RuntimeError,
     "value cannot be converted to type int8_t without overflow"),
    ("i8.clamp_(max=200)", lambda: i8(1, 2, 3).clamp_(max=200), RuntimeError,
     "value cannot be converted to type int8_t without overflow"),
    ("i8.clamp_min(200)", lambda: i8(1, 2, 3).clamp_min(200), RuntimeError,
     "value cannot be converted to type int8_t without overflow"),
    ("u8 ** 300", lambda: u8(1, 2, 3) ** 300, RuntimeError,
     "value cannot be converted to type uint8_t without overflow"),
    ("int32.add(1, alpha=2**40)", lambda: tg.tensor([1], dtype=tg.int32).add(1, alpha=2 ** 40),
     RuntimeError, "value cannot be converted to type int without overflow"),
    ("i8.add(i8, alpha=200)", lambda: i8(1, 2, 3).add(i8(1, 2, 3), alpha=200), RuntimeError,
     "value cannot be converted to type int8_t without overflow"),
    ("u8.sub(1, alpha=300)", lambda: u8(1, 2, 3).sub(1, alpha=300), RuntimeError,
     "value cannot be converted to type uint8_t without overflow"),
    ("u8.add_(1, alpha=300)", lambda: u8(1, 2, 3).add_(1, alpha=300), RuntimeError,
     "value cannot be converted to type uint8_t without overflow"),
    ("tensor([300], uint8)", lambda: tg.tensor([300], dtype=tg.uint8), RuntimeError,
     "value cannot be converted to type uint8 without overflow"),
    ("tensor([True, 300], uint8)", lambda: tg.tensor([True, 300], dtype=tg.uint8), RuntimeError,
     "value cannot be converted to type uint8 without overflow"),
    ("tensor([2**31], int32)", lambda: tg.tensor([2 ** 31], dtype=tg.int32), RuntimeError,
     "value cannot be converted to type int32 without overflow"),
    ("tensor([1e10], int32)", lambda: tg.tensor([1e10], dtype=tg.int32), RuntimeError,
     "value cannot be converted to type int32 without overflow"),
    ("tensor(2**63)", lambda: tg.tensor(2 ** 63), ValueError, "Overflow when unpacking long long"),
    # ints beyond 64 bits in tensor() data (torch 2.13: ValueError for an integer result)
    ("tensor([2**64])", lambda: tg.tensor([2 ** 64]), ValueError, "Overflow when unpacking long long"),
    ("tensor(2**64)", lambda: tg.tensor(2 ** 64), ValueError, "Overflow when unpacking long long"),
    ("tensor([-2**63 - 1])", lambda: tg.tensor([-2 ** 63 - 1]), ValueError,
     "Overflow when unpacking long long"),
    ("tensor([[1], [2**70]])", lambda: tg.tensor([[1], [2 ** 70]]), ValueError,
     "Overflow when unpacking long long"),
    ("tensor([True, 2**64])", lambda: tg.tensor([True, 2 ** 64]), ValueError,
     "Overflow when unpacking long long"),
    ("tensor([2**64], int64)", lambda: tg.tensor([2 ** 64], dtype=tg.int64), ValueError,
     "Overflow when unpacking long long"),
    ("as_tensor([2**64])", lambda: tg.as_tensor([2 ** 64]), ValueError,
     "Overflow when unpacking long long"),
    ("tensor([2**1100], float32)", lambda: tg.tensor([2 ** 1100], dtype=tg.float32), OverflowError,
     "int too large to convert to float"),
    # beyond 64 bits, even as a wrapped number
    ("int64 + 2**64", lambda: tg.tensor([1, 2, 3]) + 2 ** 64, OverflowError, "int too big to convert"),
    ("float + 2**200", lambda: tg.tensor([1.0]) + 2 ** 200, OverflowError, "int too big to convert"),
    ("int64 + (-2**63 - 1)", lambda: tg.tensor([1]) + (-2 ** 63 - 1), OverflowError,
     "can't convert negative int to unsigned"),
]


@pytest.mark.parametrize("what,fn,exc,message", REFUSED, ids=[r[0] for r in REFUSED])
def test_errors_follow_torch(what, fn, exc, message):
    with pytest.raises(exc, match=message) as info:
        fn()
    assert "test_scalar_wrap.py" in str(info.value)   # the user's line


def test_ints_beyond_64_bits_become_floats_in_a_floating_tensor():
    # torch 2.13: [1.5, 2**64] -> float32 [1.5, 1.8446744073709552e+19]; with dtype= too
    t = tg.tensor([1.5, 2 ** 64])
    assert t.dtype is tg.float32 and t.tolist() == [1.5, 1.8446744073709552e+19]
    t = tg.tensor([[2 ** 64], [3]], dtype=tg.float64)
    assert t.dtype is tg.float64 and t.tolist() == [[1.8446744073709552e+19], [3.0]]
    assert tg.tensor(2 ** 64, dtype=tg.complex64).tolist() == 1.8446744073709552e+19 + 0j
    with pytest.raises(TypeError, match="could not infer a dtype"):
        tg.tensor([2 ** 64, "a"])


def test_error_names_the_op():
    with pytest.raises(RuntimeError, match=r"^clamp: value cannot be converted"):
        i8(1, 2, 3).clamp(max=200)
    with pytest.raises(RuntimeError, match=r"^fill_: value cannot be converted"):
        u8(1).fill_(300)


def test_wrapping_is_the_same_when_traced():
    # tg.compile makes a scalar operand a literal `full` node (Builder.constant): same rule
    f = tg.compile(lambda x: x + 300)
    assert f(u8(1, 2, 3)).tolist() == [45, 46, 47]
    assert f(u8(1, 2, 3)).tolist() == [45, 46, 47]


def test_float_scalars_into_half_still_overflow_to_inf():
    # torch 2.13: tensor([1., 2.], dtype=float16) + 70000 -> [inf, inf] (a wrapped number)
    out = tg.tensor([1.0, 2.0], dtype=tg.float16) + 70000
    assert out.tolist() == [float("inf")] * 2


def test_shift_of_a_float_tensor_is_refused():
    # torch 2.13: NotImplementedError "lshift_cpu" not implemented for 'Float'; ours is the
    # DTypeError (a TypeError) every bitwise op raises for floats
    with pytest.raises(TypeError, match=r"bitwise_left_shift: only integer tensors.*f32\[2\]"):
        tg.tensor([1.0, 2.0]) << 1
