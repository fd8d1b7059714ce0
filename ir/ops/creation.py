"""Creation ops with no tensor operand: full, arange."""
from __future__ import annotations

import math

from .. import attr_kinds as K
from .. import types as T
from ..registry import CHEAP, CREATION, INTERNAL, REQUIRED, defop
from ._common import as_shape


# ---- creation --------------------------------------------------------------
def _canon_full(types, *, size, fill_value, dtype):
    dtype = T.as_dtype(dtype)
    if isinstance(fill_value, complex):   # NumPy complex scalars too: plain Python complex
        if not dtype.is_complex:
            raise TypeError(f"full: a complex fill_value {fill_value!r} does not fit dtype "
                            f"{dtype.name} (pass a complex dtype)")
        fill_value = complex(fill_value)
    return {"size": as_shape("full", size), "fill_value": fill_value, "dtype": dtype}


defop("full", (), attrs=(("size", (), K.SHAPE), ("fill_value", 0.0, K.NUMBER), ("dtype", T.float32, K.DTYPE)),
      canon=_canon_full,
      infer=lambda types, *, size, fill_value, dtype: T.TensorType(size, dtype),
      kernel=lambda xp, *, size, fill_value, dtype: xp.full(size, fill_value, dtype=dtype.numpy),
      vjp=lambda b, ct, out, **_: [], flags=CREATION | CHEAP | INTERNAL, ref="torch.full")


def _arange_infer(types, *, start, end, step, dtype):
    if step == 0:
        raise ValueError("arange: step must be nonzero")
    return T.TensorType((max(0, math.ceil((end - start) / step)),), dtype)


defop("arange", (), attrs=(("start", 0, K.FLOAT), ("end", REQUIRED, K.FLOAT), ("step", 1, K.FLOAT),
                           ("dtype", T.int64, K.DTYPE)),
      infer=_arange_infer, flags=CREATION | CHEAP | INTERNAL, ref="torch.arange",
      kernel=lambda xp, *, start, end, step, dtype: xp.arange(start, end, step, dtype=dtype.numpy),
      vjp=lambda b, ct, out, **_: [])


def constant_value(v):
    """The fill value when IR value `v` is produced by `full` (a uniform constant), else None.

    The one test of "this value is a constant" that passes and VJP rules read
    (simplify's identity rules and constant folding, the zeros autodiff materializes
    for an output no gradient reached).
    """
    n = getattr(v, "node", None)
    return n.attrs["fill_value"] if n is not None and n.op == "full" else None


def is_zero(v) -> bool:
    """`v` is a `full` of zeros: how the autodiff pass fills the cotangent of an output
    no gradient reached (torch leaves it undefined)."""
    value = constant_value(v)
    return value is not None and value == 0
