"""Copies that move or repeat elements: flip, roll, repeat, tile."""
from __future__ import annotations

from .. import attr_kinds as K
from .. import types as T
from ..errors import ShapeError
from ..registry import CHEAP, COMPLEX, LINEAR, REQUIRED, defcomposite, defop
from ._common import as_shape, norm_dim, same_as_first


# ---- flip / roll / repeat / tile -------------------------------------------------------------
def _canon_flip(types, *, dims):
    nd = types[0].ndim
    given = (dims,) if isinstance(dims, int) else tuple(dims)
    out = tuple(norm_dim("flip", d, nd) for d in given)
    if len(set(out)) != len(out):
        raise ValueError(f"flip: a dim appears multiple times in the list of dims {list(given)}")
    return {"dims": tuple(sorted(out)) if nd else ()}


defop("flip", "input", attrs=(("dims", REQUIRED, K.DIMS),), canon=_canon_flip, infer=same_as_first,
      flags=CHEAP | COMPLEX, ref="torch.flip",
      kernel=lambda xp, x, *, dims: x[tuple(slice(None, None, -1) if d in dims else slice(None)
                                            for d in range(x.ndim))],
      vjp=lambda b, ct, x, out, *, dims: [b.flip(ct, dims)], jvp=LINEAR)


def _canon_roll(types, *, shifts, dims):
    nd = types[0].ndim
    shifts = (shifts,) if isinstance(shifts, int) else tuple(shifts)
    if not shifts:
        raise ValueError("roll: `shifts` required")
    if dims is not None:
        dims = (dims,) if isinstance(dims, int) else tuple(dims)
        if nd == 0:
            raise IndexError("roll: dimension specified as 0 but tensor has no dimensions")
    if len(shifts) != (1 if dims is None else len(dims)):
        raise ValueError(f"roll: shifts and dimensions must align. shifts: {len(shifts)}, "
                         f"dims: {0 if dims is None else len(dims)}")
    return {"shifts": tuple(int(s) for s in shifts),
            "dims": None if dims is None else tuple(norm_dim("roll", d, nd) for d in dims)}


# dims=None rolls the flattened tensor, as torch
defop("roll", "input", attrs=(("shifts", REQUIRED, K.INTS), ("dims", None, K.DIMS_OPT)), canon=_canon_roll,
      infer=same_as_first, flags=CHEAP | COMPLEX, ref="torch.roll",
      kernel=lambda xp, x, *, shifts, dims: xp.roll(x, shifts[0] if dims is None else shifts,
                                                    axis=dims),
      vjp=lambda b, ct, x, out, *, shifts, dims: [b.roll(ct, tuple(-s for s in shifts), dims)],
      jvp=LINEAR)


def _canon_repeat(types, *, repeats):
    repeats, t = as_shape("repeat", repeats), types[0]
    if len(repeats) < t.ndim:
        raise ShapeError(f"repeat: number of repeat dims ({len(repeats)}) can not be smaller "
                         f"than the number of dimensions of the tensor {t}")
    if any(r < 0 for r in repeats):
        raise ValueError(f"repeat: repeats must be non-negative, got {list(repeats)}")
    return {"repeats": repeats}


def _repeat_infer(types, *, repeats):
    t = types[0]
    shape = (1,) * (len(repeats) - t.ndim) + t.shape
    return T.TensorType(tuple(r * s for r, s in zip(repeats, shape)), t.dtype)


def _repeat_vjp(b, ct, x, out, *, repeats):
    # the output seen as (r0, s0, r1, s1, ...): x's cotangent sums over every r_i
    shape = (1,) * (len(repeats) - len(x.shape)) + tuple(x.shape)
    split = tuple(v for r, s in zip(repeats, shape) for v in (r, s))
    summed = b.sum(b.reshape(ct, split), tuple(range(0, len(split), 2)))
    return [b.reshape(summed, x.shape)]


# torch.Tensor.repeat (a copy; tracegrad also exports it as tg.repeat)
defop("repeat", "input", attrs=(("repeats", REQUIRED, K.INTS),), canon=_canon_repeat,
      infer=_repeat_infer, flags=CHEAP | COMPLEX, ref="torch.Tensor.repeat (numpy.tile)",
      kernel=lambda xp, x, *, repeats: xp.tile(x, repeats), vjp=_repeat_vjp, jvp=LINEAR)


def _tile(ops, x, dims):
    dims = as_shape("tile", dims)
    return ops.repeat(x, (1,) * (len(x.shape) - len(dims)) + dims)


defcomposite("tile", "input: Tensor, dims", _tile, ref="torch.tile", flags=COMPLEX,
             node_name="RepeatBackward0")
