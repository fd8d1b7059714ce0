"""Shared pieces of op declarations: type inference and attribute canonicalizers."""
from __future__ import annotations

from .. import types as T
from ..errors import DTypeError, ShapeError
from ..registry import get


def fmt_types(types) -> str:
    return ", ".join(str(t) for t in types)


def same_as_first(types, **_):
    return types[0]


def broadcast_infer(name: str, out_dtype=None):
    """Infer for elementwise ops: operands broadcast and share one dtype."""
    def infer(types, **_):
        shape = T.broadcast_shapes(*(t.shape for t in types))
        if shape is None:
            raise ShapeError(f"{name}: shapes {fmt_types(types)} do not broadcast "
                             "(trailing dimensions must be equal or 1)")
        dtypes = {t.dtype for t in types}
        if len(dtypes) != 1:
            raise DTypeError(f"{name}: operands must share one dtype in the IR, got {fmt_types(types)}")
        return T.TensorType(shape, out_dtype or types[0].dtype)
    return infer


def require_float(name: str, t: T.TensorType) -> None:
    if not t.dtype.is_floating_point:
        raise DTypeError(f"{name}: expected a floating-point tensor, got {t}")


def norm_dim(name: str, dim: int, ndim: int) -> int:
    """A dim in [-ndim, ndim) made non-negative; IndexError like torch's otherwise."""
    if not isinstance(dim, int) or isinstance(dim, bool):
        raise TypeError(f"{name}: dim must be an int, got {type(dim).__name__}")
    lo, hi = (-1, 0) if ndim == 0 else (-ndim, ndim - 1)
    if not lo <= dim <= hi:
        raise IndexError(f"{name}: dimension out of range (expected to be in range of "
                         f"[{lo}, {hi}], but got {dim})")
    return dim % max(ndim, 1)


def norm_dims(name: str, dim, ndim: int) -> tuple[int, ...]:
    """None -> all dims; int or sequence -> sorted unique non-negative tuple.

    A 0-d tensor accepts dim 0 / -1 as torch does, and has no dim to reduce: ().
    """
    if dim is None:
        return tuple(range(ndim))
    if isinstance(dim, int):
        dim = (dim,)
    out = tuple(sorted({norm_dim(name, d, ndim) for d in dim}))
    if len(out) != len(tuple(dim)):
        raise ValueError(f"{name}: dim {tuple(dim)} names a dimension twice")
    return out if ndim else ()


def canon_reduce(name: str):
    """Canonicalizer of (dim, keepdim) for the reduction `name`."""
    def canon(types, *, dim=None, keepdim=False):
        return {"dim": norm_dims(name, dim, types[0].ndim), "keepdim": bool(keepdim)}
    return canon


def reduce_shape(shape, dims, keepdim):
    if keepdim:
        return tuple(1 if i in dims else s for i, s in enumerate(shape))
    return tuple(s for i, s in enumerate(shape) if i not in dims)


def as_shape(name: str, shape) -> tuple[int, ...]:
    if isinstance(shape, int):
        shape = (shape,)
    try:
        out = tuple(int(s) for s in shape)
    except TypeError:
        raise TypeError(f"{name}: expected a shape (sequence of ints), got {shape!r}") from None
    return out


# ---- complex: torch's conjugate Wirtinger convention ---------------------------------------
# For a holomorphic op y = f(z) torch's gradient is ct * conj(f'(z)) (the gradient of a
# real loss L is dL/dx + i dL/dy, so |z|^2 has gradient 2z); for real dtypes conj is the
# identity and these emit nothing extra.
def conj_if_complex(b, v):
    """conj(v) for a complex value, `v` itself for a real one."""
    return b.conj(v) if v.dtype.is_complex else v


def mul_conj(b, ct, d):
    """ct * conj(d): the cotangent times the conjugate of a derivative."""
    return b.mul(ct, conj_if_complex(b, d))


def div_conj(b, ct, d):
    """ct / conj(d)."""
    return b.div(ct, conj_if_complex(b, d))


# ---- JVP rules (forward-mode AD; see tracegrad/autograd/forward_ad.py) -----------------------
def tangent_sum(b, *terms):
    """The sum of the tangent terms that are not None (None when all are)."""
    out = None
    for t in terms:
        if t is not None:
            out = t if out is None else b.add(out, t)
    return out


def tmul(b, t, d):
    """t * d, or None when the tangent `t` is None."""
    return None if t is None else b.mul(t, d)


def bilinear_jvp(name: str):
    """JVP of an op linear in each of its two operands (matmul, conv): op(tx, y) + op(x, ty)."""

    def jvp(b, t, x, y, out, **attrs):
        op = get(name)

        def app(u, v):
            return b.apply(op, [u, v], dict(attrs), (out.type,), [u.type, v.type])[0]
        return tangent_sum(b, None if t[0] is None else app(t[0], y),
                           None if t[1] is None else app(x, t[1]))
    return jvp


def accumulate_dtype(t: T.TensorType, dtype=None) -> T.DType:
    """torch.sum/prod/cumsum: bool and integer inputs accumulate in int64, or in `dtype`."""
    if dtype is not None:
        return dtype
    return t.dtype if t.dtype.is_differentiable else T.int64


def accumulate_np_dtype(x, dtype):
    """The NumPy dtype a sum/prod/scan kernel accumulates `x` in (torch: int64 for bool and
    integers, unless `dtype` is given)."""
    if dtype is not None:
        return dtype.numpy
    return x.dtype if x.dtype.kind in "fc" or x.dtype.name == "bfloat16" else "int64"


def zero_slope_dep(b, g, x):
    """`g` (a gradient built from the cotangent and masks of `x`), recorded as a function of
    `x` whose derivative is 0: ``where(True, g, x)`` is exactly `g`.  torch's backward
    formulas of piecewise-linear ops (``threshold_backward``, ``leaky_relu_backward``,
    ``hardtanh_backward``, ``max_pool2d_with_indices_backward``) take the input itself, so
    under ``create_graph=True`` the gradient requires grad (its second derivative is 0);
    masks from comparisons carry no history, so without this the gradient would not."""
    return b.where(True, g, x)
