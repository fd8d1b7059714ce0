"""Triangles and diagonals: tril, triu, diagonal, diagonal_scatter, diag_embed, diag."""
from __future__ import annotations

import operator

from .. import attr_kinds as K
from .. import types as T
from ..errors import ShapeError
from ..registry import CHEAP, COMPLEX, INTERNAL, LINEAR, defcomposite, defop
from ._common import norm_dim
from .index import located, write_at
from .shape import SHAPE


def _diagonal_inverse(ops, parent, child, **attrs):   # writes through the view (view_inverse)
    return ops.diagonal_scatter(parent, child, **attrs)


# ---- triangles and diagonals -----------------------------------------------------------------
def _tri(name):
    def infer(types, *, diagonal):
        if types[0].ndim < 2:
            raise ShapeError(f"{name}: input tensor must have at least 2 dimensions, got "
                             f"{types[0]}")
        return types[0]
    defop(name, "input", attrs=(("diagonal", 0, K.INT),), infer=infer, flags=CHEAP | COMPLEX,
          ref=f"torch.{name}",
          canon=lambda types, *, diagonal: {"diagonal": operator.index(diagonal)},
          kernel=lambda xp, x, *, diagonal: getattr(xp, name)(x, diagonal),
          vjp=lambda b, ct, x, out, *, diagonal: [b.call(name, ct, diagonal)], jvp=LINEAR)


_tri("tril")
_tri("triu")


def _canon_diagonal(name):
    def canon(types, *, offset, dim1, dim2):
        nd = types[0].ndim
        d1, d2 = norm_dim(name, dim1, nd), norm_dim(name, dim2, nd)
        if d1 == d2:
            raise ShapeError(f"{name}: diagonal dimensions cannot be identical {dim1}, {dim2}")
        return {"offset": operator.index(offset), "dim1": d1, "dim2": d2}
    return canon


def _diagonal_type(t, offset, dim1, dim2):
    n1, n2 = t.shape[dim1], t.shape[dim2]
    k = max(0, min(n1, n2 - offset) if offset >= 0 else min(n1 + offset, n2))
    rest = tuple(s for i, s in enumerate(t.shape) if i not in (dim1, dim2))
    return T.TensorType(rest + (k,), t.dtype)


def _diagonal_scatter_infer(types, *, offset, dim1, dim2):
    x, src = types
    want = _diagonal_type(x, offset, dim1, dim2)
    if src != want:
        raise ShapeError(f"diagonal_scatter: src must be {want} to fill diagonal {offset} of "
                         f"{x} over dims ({dim1}, {dim2}), got {src}")
    return x


def _diagonal_scatter_kernel(xp, x, src, *, offset, dim1, dim2):
    k = src.shape[-1]
    key = [slice(None)] * x.ndim
    key[dim1], key[dim2] = xp.arange(k) + max(-offset, 0), xp.arange(k) + max(offset, 0)
    # NumPy puts the diagonal axis of x[key] at the first of two adjacent dims, else first
    lo, hi = sorted((dim1, dim2))
    return write_at(xp, x, tuple(key), xp.moveaxis(src, -1, lo if hi - lo == 1 else 0))


DIAG_ATTRS = (("offset", 0, K.INT), ("dim1", 0, K.DIM), ("dim2", 1, K.DIM))

defop("diagonal", "input", attrs=DIAG_ATTRS, canon=_canon_diagonal("diagonal"), flags=SHAPE,
      infer=lambda types, **a: _diagonal_type(types[0], a["offset"], a["dim1"], a["dim2"]),
      kernel=lambda xp, x, *, offset, dim1, dim2: xp.diagonal(x, offset, dim1, dim2),
      vjp=lambda b, ct, x, out, **a: [b.diagonal_scatter(b.full(x.shape, 0, ct.dtype), ct, **a)],
      ref="torch.diagonal", jvp=LINEAR,
      view_inverse=_diagonal_inverse)

# out = x with diagonal(out, offset, dim1, dim2) = src
defop("diagonal_scatter", "input, src", attrs=DIAG_ATTRS, canon=_canon_diagonal("diagonal_scatter"),
      infer=_diagonal_scatter_infer, kernel=_diagonal_scatter_kernel,
      flags=CHEAP | INTERNAL | COMPLEX,
      ref="torch.diagonal_scatter",
      vjp=lambda b, ct, x, src, out, **a: [
          b.diagonal_scatter(ct, b.full(src.shape, 0, ct.dtype), **a), b.diagonal(ct, **a)],
          jvp=LINEAR)


def _diag_embed(ops, x, offset=0, dim1=-2, dim2=-1):
    nd = len(x.shape) + 1
    d1, d2 = norm_dim("diag_embed", dim1, nd), norm_dim("diag_embed", dim2, nd)
    if d1 == d2:
        raise located(ops, ShapeError(f"diag_embed: diagonal dimensions cannot be identical "
                                      f"{dim1}, {dim2}"))
    n = x.shape[-1] + abs(offset)
    shape = list(x.shape[:-1])
    for d in sorted((d1, d2)):
        shape.insert(d, n)
    return ops.diagonal_scatter(ops.full(tuple(shape), 0, x.dtype), x, offset, d1, d2)


def _diag(ops, x, diagonal=0):
    if len(x.shape) == 1:
        return _diag_embed(ops, x, diagonal, 0, 1)
    if len(x.shape) != 2:
        raise located(ops, ShapeError(f"diag: supports 1-D or 2-D tensors, got {ops.type_of(x)}"))
    m, n = x.shape
    k = _diagonal_type(ops.type_of(x), diagonal, 0, 1).shape[-1]
    start = diagonal if diagonal >= 0 else -diagonal * n
    # a copy, as torch.diag (not a view): every (n+1)-th element of the flattened matrix
    idx = ops.arange(start, start + k * (n + 1), n + 1, T.int64)
    return ops.index_take(ops.reshape(x, (m * n,)), idx, 0)


defcomposite("diag_embed", "input: Tensor, offset=0, dim1=-2, dim2=-1", _diag_embed,
             ref="torch.diag_embed", flags=COMPLEX, node_inputs=("input",))
defcomposite("diag", "input: Tensor, diagonal=0", _diag, ref="torch.diag", flags=COMPLEX,
             node_name="DiagEmbedBackward0", node_inputs=("input",))
