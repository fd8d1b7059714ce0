"""view_dtype: a tensor's bytes read as another dtype (torch.Tensor.view(dtype)).

A view, as torch's: writes through it change the input's bits, and writes to the input show
through it (tracegrad/_views.py replays it; its inverse reads the bits back).  Not
differentiable: the result never requires grad, as torch 2.13.  Element sizes may differ:
the last dim then shrinks or grows by their ratio (torch's rule), which needs a last dim
of stride 1 (Tensor.view checks the strides; in the IR every value is row-major).

Bool reads as a byte (NumPy and torch agree that a nonzero byte is True); complex reads as
its (real, imag) pairs.
"""
from __future__ import annotations

from .. import attr_kinds as K
from .. import types as T
from ..errors import ShapeError
from ..registry import CHEAP, COMPLEX, NONDIFF, VIEW, defop
from .index import located
from .index_more import torch_dtype_name


def out_shape(shape: tuple, src: T.DType, dst: T.DType) -> tuple:
    """torch's shape for ``view(dst)`` of a `src` tensor of `shape`: the last dim scaled by
    the ratio of the element sizes (ShapeError with torch's text where it cannot be)."""
    if src.itemsize == dst.itemsize:
        return shape
    sizes = f"to view {torch_dtype_name(src)} as {torch_dtype_name(dst)} (different element sizes)"
    if not shape:
        raise ShapeError(f"view: self.dim() cannot be 0 {sizes}")
    if src.itemsize > dst.itemsize:
        return shape[:-1] + (shape[-1] * (src.itemsize // dst.itemsize),)
    ratio = dst.itemsize // src.itemsize
    if shape[-1] % ratio:
        raise ShapeError(f"view: self.size(-1) must be divisible by {ratio} {sizes}, but got "
                         f"{shape[-1]}")
    return shape[:-1] + (shape[-1] // ratio,)


def _infer(types, *, dtype):
    return T.TensorType(out_shape(tuple(types[0].shape), types[0].dtype, dtype), dtype)


def _kernel_np(xp, x, *, dtype):
    shape = out_shape(x.shape, T.from_numpy(x.dtype), dtype)
    flat = xp.ascontiguousarray(x).reshape(-1)
    if dtype is T.bool_:   # a nonzero byte is True (NumPy's raw view would keep the byte)
        return (flat.view(xp.uint8) != 0).reshape(shape)
    return flat.view(dtype.numpy).reshape(shape)


def _as_bits(xp, x):
    """`x` as unsigned integers of its element size, with a trailing dim of 2 for complex."""
    import jax.lax as lax  # noqa: PLC0415 (jax loads on first use)
    if x.dtype == bool:
        return x.astype(xp.uint8)
    if xp.iscomplexobj(x):
        x = xp.stack([xp.real(x), xp.imag(x)], axis=-1)
    return lax.bitcast_convert_type(x, xp.dtype(f"uint{x.dtype.itemsize * 8}"))


def _kernel_jax(xp, x, *, dtype):
    import jax.lax as lax  # noqa: PLC0415
    shape = out_shape(x.shape, T.from_numpy(x.dtype), dtype)
    bits = _as_bits(xp, x).reshape(-1)                       # unsigned words, row-major
    want = dtype.numpy
    size = want.itemsize // 2 if dtype.is_complex else want.itemsize
    word = xp.dtype(f"uint{size * 8}")
    have = bits.dtype.itemsize
    if have > size:                                          # each word splits into parts
        bits = lax.bitcast_convert_type(bits, word).reshape(-1)
    elif have < size:                                        # parts join into one word
        bits = lax.bitcast_convert_type(bits.reshape(-1, size // have), word)
    if dtype is T.bool_:
        return (bits != 0).reshape(shape)
    if dtype.is_complex:
        real = lax.bitcast_convert_type(bits, xp.dtype(want.type(0).real.dtype)).reshape(-1, 2)
        return lax.complex(real[:, 0], real[:, 1]).reshape(shape)
    return lax.bitcast_convert_type(bits, want).reshape(shape)


def _inverse(ops, parent, child, *, dtype):
    if getattr(parent, "requires_grad", False):
        # torch writes the bits and keeps the input's history as it was (its gradient flows
        # as if nothing changed); recorded functionally, the write would cut that gradient
        raise located(ops, NotImplementedError(
            "view(dtype): writing through a dtype view of a tensor that requires grad is not "
            "supported (torch keeps the old history); write into `t.detach().view(dtype)` "
            "or clone() first"))
    return ops.view_dtype(child, parent.dtype)


defop("view_dtype", "input", attrs=(("dtype", None, K.DTYPE),), infer=_infer,
      flags=VIEW | CHEAP | COMPLEX, kernel=_kernel_np, kernels={"jax": _kernel_jax},
      vjp=NONDIFF, view_inverse=_inverse,
      ref="torch.Tensor.view(dtype) (the bytes reinterpreted; not differentiable)")
