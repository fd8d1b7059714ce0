"""Elementwise binary and ternary ops (broadcasting; operands promoted to one dtype)."""
from __future__ import annotations

from .. import types as T
from ..registry import CHEAP, ELEMENTWISE, NONDIFF, PROMOTE, TO_FLOAT, defop
from ._common import broadcast_infer

EW = ELEMENTWISE | CHEAP | PROMOTE


def _binary(name, kernel, vjp, flags=EW, ref=None):
    return defop(name, "input, other", infer=broadcast_infer(name), kernel=kernel, vjp=vjp,
                 flags=flags, ref=ref or f"torch.{name}")


# The autodiff pass reduces each cotangent to its input's shape (sum over
# broadcast dims), so rules here are written at the broadcast output shape.
_binary("add", lambda xp, x, y: xp.add(x, y), lambda b, ct, x, y, out: [ct, ct])
_binary("sub", lambda xp, x, y: xp.subtract(x, y), lambda b, ct, x, y, out: [ct, b.neg(ct)])
# rsub(x, y) = y - x: lets rules write "1 - x" without a constant tensor.
_binary("rsub", lambda xp, x, y: xp.subtract(y, x), lambda b, ct, x, y, out: [b.neg(ct), ct])
_binary("mul", lambda xp, x, y: xp.multiply(x, y),
        lambda b, ct, x, y, out: [b.mul(ct, y), b.mul(ct, x)])
_binary("div", lambda xp, x, y: xp.true_divide(x, y),
        lambda b, ct, x, y, out: [b.div(ct, y), b.neg(b.div(b.mul(ct, out), y))],
        flags=EW | TO_FLOAT)


def _pow_vjp(b, ct, x, y, out):
    # d/dx x**y = y * x**(y-1), 0 where y == 0 (torch; else 0 * 0**-1 = nan at x == 0);
    # d/dy x**y = x**y * log(x)  (torch: 0 where x == 0 and y >= 0)
    dx = b.mul(ct, b.where(b.eq(y, 0.0), 0.0, b.mul(y, b.pow(x, b.sub(y, 1.0)))))
    dy = b.mul(ct, b.where(b.logical_and(b.eq(x, 0.0), b.ge(y, 0.0)), 0.0, b.mul(out, b.log(x))))
    return [dx, dy]


_binary("pow", lambda xp, x, y: xp.power(x, y), _pow_vjp)


def _minmax_vjp(strict_cmp):
    # torch.maximum/minimum: the winner gets the gradient, a tie splits it in half.
    def vjp(b, ct, x, y, out):
        half = b.mul(ct, 0.5)
        tie = b.eq(x, y)
        dx = b.where(tie, half, b.where(strict_cmp(b, x, y), ct, 0.0))
        dy = b.where(tie, half, b.where(strict_cmp(b, y, x), ct, 0.0))
        return [dx, dy]
    return vjp


_binary("maximum", lambda xp, x, y: xp.maximum(x, y), _minmax_vjp(lambda b, p, q: b.gt(p, q)))
_binary("minimum", lambda xp, x, y: xp.minimum(x, y), _minmax_vjp(lambda b, p, q: b.lt(p, q)))

for _name, _fn in (("eq", "equal"), ("ne", "not_equal"), ("lt", "less"), ("le", "less_equal"),
                   ("gt", "greater"), ("ge", "greater_equal")):
    defop(_name, "input, other", infer=broadcast_infer(_name, out_dtype=T.bool_), vjp=NONDIFF,
          kernel=(lambda f: lambda xp, x, y: getattr(xp, f)(x, y))(_fn), flags=EW,
          ref=f"torch.{_name}")

defop("logical_and", "input, other", infer=broadcast_infer("logical_and", out_dtype=T.bool_),
      kernel=lambda xp, x, y: xp.logical_and(x, y), vjp=NONDIFF,
      flags=ELEMENTWISE | CHEAP, ref="torch.logical_and")


def _where_infer(types, **_):
    cond, x, y = types
    if cond.dtype is not T.bool_:
        from ..errors import DTypeError
        raise DTypeError(f"where: condition must be bool, got {cond}")
    return broadcast_infer("where")([T.TensorType(cond.shape, x.dtype), x, y])


defop("where", "condition, input, other", infer=_where_infer, flags=EW,
      promote_inputs=(1, 2), ref="torch.where",
      kernel=lambda xp, c, x, y: xp.where(c, x, y),
      vjp=lambda b, ct, c, x, y, out: [None, b.where(c, ct, 0.0), b.where(c, 0.0, ct)])
