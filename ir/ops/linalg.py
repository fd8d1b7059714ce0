"""Matrix multiplication: the batched primitive and torch.matmul's 1-D cases on top."""
from __future__ import annotations

from .. import types as T
from ..errors import DTypeError, ShapeError
from ..registry import INTERNAL, defop
from ._common import fmt_types, require_float


def _bmm_infer(types, **_):
    a, b = types
    if a.ndim < 2 or b.ndim < 2:
        raise ShapeError(f"batched_matmul: operands must be at least 2-D, got {fmt_types(types)}")
    if a.shape[-1] != b.shape[-2]:
        raise ShapeError(f"matmul: inner dimensions differ, got {a} @ {b} "
                         f"({a.shape[-1]} != {b.shape[-2]})")
    batch = T.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    if batch is None:
        raise ShapeError(f"matmul: batch dimensions do not broadcast, got {a} @ {b}")
    if a.dtype is not b.dtype:
        raise DTypeError(f"matmul: expected both operands to have the same dtype, got {a} @ {b} "
                         "(cast one with .to(dtype), as torch requires)")
    return T.TensorType(batch + (a.shape[-2], b.shape[-1]), a.dtype)


def _mT(b, x):
    nd = x.type.ndim
    return b.permute(x, tuple(range(nd - 2)) + (nd - 1, nd - 2))


# dA = ct @ B^T, dB = A^T @ ct; the autodiff pass sums broadcast batch dims away.
defop("batched_matmul", "input, other", infer=_bmm_infer, flags=INTERNAL,
      kernel=lambda xp, a, b: xp.matmul(a, b), ref="torch.matmul (both operands >= 2-D)",
      vjp=lambda b, ct, x, y, out: [b.batched_matmul(ct, _mT(b, y)),
                                    b.batched_matmul(_mT(b, x), ct)])


def _matmul(ops, a, b):
    """torch.matmul: a 1-D left operand gains a leading 1, a 1-D right one a trailing 1."""
    if len(a.shape) == 0 or len(b.shape) == 0:
        raise ShapeError(f"matmul: both arguments need at least 1 dimension, got "
                         f"{tuple(a.shape)} and {tuple(b.shape)}")
    k_a, k_b = a.shape[-1], b.shape[0 if len(b.shape) == 1 else -2]
    if k_a != k_b:  # checked here so the message shows the user's shapes, not the 2-D views
        ta, tb = T.TensorType(tuple(a.shape), a.dtype), T.TensorType(tuple(b.shape), b.dtype)
        raise ShapeError(f"matmul: inner dimensions differ, got {ta} @ {tb} ({k_a} != {k_b})"
                         ).add_location(ops.location())
    a2 = ops.unsqueeze(a, 0) if len(a.shape) == 1 else a
    b2 = ops.unsqueeze(b, -1) if len(b.shape) == 1 else b
    out = ops.batched_matmul(a2, b2)
    if len(b.shape) == 1:
        out = ops.squeeze(out, -1)
    if len(a.shape) == 1:
        out = ops.squeeze(out, -2 if len(b.shape) > 1 else -1)
    return out


defop("matmul", "input, other", decomp=_matmul, ref="torch.matmul")
