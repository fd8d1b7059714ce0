"""Elementwise unary ops. VJP rules emit IR through the builder `b`."""
from __future__ import annotations

from .. import types as T
from ..errors import DTypeError
from ..registry import CHEAP, ELEMENTWISE, INTERNAL, NONDIFF, TO_FLOAT, defop
from ._common import same_as_first

EW = ELEMENTWISE | CHEAP


def _no_bool(name):
    def infer(types, **_):
        if types[0].dtype is T.bool_:
            raise DTypeError(f"{name}: not supported for bool tensors, got {types[0]}")
        return types[0]
    return infer


defop("neg", "input", infer=_no_bool("neg"), flags=EW, ref="torch.neg",
      kernel=lambda xp, x: xp.negative(x),
      vjp=lambda b, ct, x, out: [b.neg(ct)])

defop("exp", "input", infer=same_as_first, flags=EW | TO_FLOAT, ref="torch.exp",
      kernel=lambda xp, x: xp.exp(x),
      vjp=lambda b, ct, x, out: [b.mul(ct, out)])

defop("log", "input", infer=same_as_first, flags=EW | TO_FLOAT, ref="torch.log",
      kernel=lambda xp, x: xp.log(x),
      vjp=lambda b, ct, x, out: [b.div(ct, x)])

defop("sqrt", "input", infer=same_as_first, flags=EW | TO_FLOAT, ref="torch.sqrt",
      kernel=lambda xp, x: xp.sqrt(x),
      vjp=lambda b, ct, x, out: [b.div(ct, b.mul(out, 2.0))])

defop("tanh", "input", infer=same_as_first, flags=EW | TO_FLOAT, ref="torch.tanh",
      kernel=lambda xp, x: xp.tanh(x),
      vjp=lambda b, ct, x, out: [b.mul(ct, b.rsub(b.mul(out, out), 1.0))])

# 0.5 * (tanh(x/2) + 1) is exact and never overflows, unlike 1 / (1 + exp(-x)).
defop("sigmoid", "input", infer=same_as_first, flags=EW | TO_FLOAT, ref="torch.sigmoid",
      kernel=lambda xp, x: (xp.tanh(x * x.dtype.type(0.5)) + x.dtype.type(1)) * x.dtype.type(0.5),
      vjp=lambda b, ct, x, out: [b.mul(ct, b.mul(out, b.rsub(out, 1.0)))])

# Gradient 0 at x == 0, as torch.relu.
defop("relu", "input", infer=_no_bool("relu"), flags=EW, ref="torch.relu",
      kernel=lambda xp, x: xp.maximum(x, x.dtype.type(0)),
      vjp=lambda b, ct, x, out: [b.where(b.gt(out, 0), ct, 0.0)])

defop("sign", "input", infer=same_as_first, flags=EW, ref="torch.sign",
      kernel=lambda xp, x: xp.sign(x),
      vjp=lambda b, ct, x, out: [b.mul(ct, 0.0)])

# d|x|/dx = sign(x), 0 at 0 as torch.abs.
defop("abs", "input", infer=same_as_first, flags=EW, ref="torch.abs",
      kernel=lambda xp, x: xp.abs(x),
      vjp=lambda b, ct, x, out: [b.mul(ct, b.sign(x))])


def _convert_infer(types, *, dtype):
    return T.TensorType(types[0].shape, dtype)


def _convert_vjp(b, ct, x, out, *, dtype):
    if not (x.dtype.is_floating_point and dtype.is_floating_point):  # no gradient across ints
        return [None]
    return [b.convert(ct, x.dtype)]


defop("convert", "input", attrs=(("dtype", None),), flags=EW | INTERNAL,
      canon=lambda types, *, dtype: {"dtype": T.as_dtype(dtype)},
      infer=_convert_infer, ref="torch.Tensor.to(dtype)",
      kernel=lambda xp, x, *, dtype: xp.asarray(x).astype(dtype.numpy),
      vjp=_convert_vjp)

defop("logical_not", "input", infer=lambda types, **_: T.TensorType(types[0].shape, T.bool_),
      flags=EW, ref="torch.logical_not",
      kernel=lambda xp, x: xp.logical_not(x), vjp=NONDIFF)
