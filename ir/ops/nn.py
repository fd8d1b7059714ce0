"""Neural-network ops: softmax, log_softmax, and losses built on them."""
from __future__ import annotations

from .. import types as T
from ..errors import DTypeError, ShapeError
from ..registry import defop
from ._common import norm_dim, require_float


def _float_infer(name):
    def infer(types, **_):
        require_float(name, types[0])
        return types[0]
    return infer


def _canon_dim(name):
    return lambda types, *, dim: {"dim": norm_dim(name, dim, types[0].ndim)}


def _softmax_kernel(xp, x, *, dim):
    z = x - xp.max(x, axis=dim, keepdims=True)
    e = xp.exp(z)
    return e / xp.sum(e, axis=dim, keepdims=True)


def _log_softmax_kernel(xp, x, *, dim):
    z = x - xp.max(x, axis=dim, keepdims=True)
    return z - xp.log(xp.sum(xp.exp(z), axis=dim, keepdims=True))


# d softmax: y * (ct - sum(ct * y));  d log_softmax: ct - exp(y) * sum(ct)
defop("softmax", "input", attrs=(("dim", -1),), canon=_canon_dim("softmax"),
      infer=_float_infer("softmax"), kernel=_softmax_kernel, ref="torch.softmax",
      vjp=lambda b, ct, x, out, *, dim: [
          b.mul(out, b.sub(ct, b.sum(b.mul(ct, out), (dim,), True)))])

defop("log_softmax", "input", attrs=(("dim", -1),), canon=_canon_dim("log_softmax"),
      infer=_float_infer("log_softmax"), kernel=_log_softmax_kernel, ref="torch.log_softmax",
      vjp=lambda b, ct, x, out, *, dim: [
          b.sub(ct, b.mul(b.exp(out), b.sum(ct, (dim,), True)))])


def _cross_entropy(ops, input, target):
    """Mean negative log-likelihood of class indices (torch.nn.functional.cross_entropy)."""
    if len(input.shape) != 2 or len(target.shape) != 1 or target.shape[0] != input.shape[0]:
        raise ShapeError(f"cross_entropy: expected input (N, C) and target (N,), got "
                         f"{tuple(input.shape)} and {tuple(target.shape)}")
    if target.dtype.category != T.INT:
        raise DTypeError(f"cross_entropy: target must hold class indices (int64), got "
                         f"{target.dtype.name}; probabilities as targets are not supported yet")
    n, c = input.shape
    known = ops.known_value(target)
    if known is not None and known.size and (known.min() < 0 or known.max() >= c):
        bad = known.min() if known.min() < 0 else known.max()
        raise IndexError(f"cross_entropy: Target {bad} is out of bounds for {c} classes "
                         f"(input {tuple(input.shape)})")
    logp = ops.log_softmax(input, 1)
    # logp[i, target[i]] via one flat take: row offset i*C plus the class index.
    flat = ops.add(ops.mul(ops.arange(0, n, 1, target.dtype), c), target)
    picked = ops.index_take(ops.reshape(logp, (n * c,)), flat, 0)
    return ops.neg(ops.mean(picked))


defop("cross_entropy", "input, target", decomp=_cross_entropy,
      ref="torch.nn.functional.cross_entropy (class indices, reduction='mean')")


def _mse_loss(ops, input, target):
    if T.broadcast_shapes(tuple(input.shape), tuple(target.shape)) is None:
        ti = T.TensorType(tuple(input.shape), input.dtype)
        tt = T.TensorType(tuple(target.shape), target.dtype)
        raise ShapeError(f"mse_loss: input {ti} and target {tt} do not broadcast"
                         ).add_location(ops.location())
    diff = ops.sub(input, target)
    return ops.mean(ops.mul(diff, diff))


defop("mse_loss", "input, target", decomp=_mse_loss,
      ref="torch.nn.functional.mse_loss (reduction='mean')")
