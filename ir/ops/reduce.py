"""Reductions over dims (with keepdim) and their composites; scans along a dim: scans.py.

Gradient conventions at non-differentiable points follow torch: amax/amin and
max()/min() without dim split the gradient evenly among tied extremes;
max/min with dim send it all to the index returned; prod and cumprod are exact
at zeros (products of the other factors, no division; cumprod likewise, scans.py); std and norm(p=2) give
0 where the result is 0.
"""
from __future__ import annotations

import math

from .. import attr_kinds as K
from .. import types as T
from ..builder import with_location
from ..errors import DTypeError
from ..registry import (AUTOCAST_FP32, CHEAP, COMPLEX, DTYPE_ARG, INTERNAL, LINEAR, NONDIFF, REDUCTION,
                        REQUIRED, TO_FLOAT, Fusion, defcomposite, defop)
from ._common import (accumulate_dtype, accumulate_np_dtype, canon_reduce, mul_conj, norm_dim,
                      norm_dims, reduce_shape)
from .scans import _exclusive_cumprod, _flip   # prod's VJP: exact at zeros, as cumprod's
from .sort import RETURN_TYPES, scatter_values

RED = REDUCTION | CHEAP


def _sum_infer(types, *, dim, keepdim):
    t = types[0]
    return T.TensorType(reduce_shape(t.shape, dim, keepdim), accumulate_dtype(t))


def _keep(b, v, x, dim, keepdim):
    """A reduced value reshaped to keepdim form, so it broadcasts against x."""
    return v if keepdim else b.reshape(v, reduce_shape(x.shape, dim, True))


def _unreduce(b, ct, x, dim, keepdim):
    """Bring a reduced cotangent back to x's shape (reshape to keepdim, then expand)."""
    return b.expand(_keep(b, ct, x, dim, keepdim), x.shape)


def _sum_kernel(xp, x, *, dim, keepdim):
    return xp.sum(x, axis=dim, keepdims=keepdim, dtype=accumulate_np_dtype(x, None))


def _sum_over_no_dims(b, n, ins):
    """A sum over no dims keeping the type is the identity."""
    return ins[0] if not n.attrs["dim"] and ins[0].type == n.outputs[0].type else None


defop("sum", "input", attrs=(("dim", None, K.DIMS_OPT), ("keepdim", False, K.BOOL)), canon=canon_reduce("sum"),
      infer=_sum_infer, kernel=_sum_kernel, flags=DTYPE_ARG | RED | COMPLEX, ref="torch.sum",
      vjp=lambda b, ct, x, out, *, dim, keepdim: [_unreduce(b, ct, x, dim, keepdim)], jvp=LINEAR,
      fusion=Fusion.REDUCE_SUM, autocast={"cuda": AUTOCAST_FP32}, simplify=_sum_over_no_dims)


# ---- prod ---------------------------------------------------------------------
def _canon_prod(types, *, dim, keepdim, dtype):
    return {"dim": norm_dims("prod", dim, types[0].ndim), "keepdim": bool(keepdim),
            "dtype": None if dtype is None else T.as_dtype(dtype)}


def _prod_vjp(b, ct, x, out, *, dim, keepdim, dtype):
    # d prod/d x_i is the product of the other entries, taken exactly (exclusive products
    # from both sides, no division): zeros get torch's gradient, and its derivative too
    if not dim:
        return [ct]
    nd, n = len(x.shape), math.prod(x.shape[d] for d in dim)
    perm = tuple(d for d in range(nd) if d not in dim) + tuple(dim)
    xt = x if perm == tuple(range(nd)) else b.permute(x, perm)
    flat = b.reshape(xt, xt.shape[:nd - len(dim)] + (n,))
    last = nd - len(dim)
    left = _exclusive_cumprod(b, flat, last)
    right = _flip(b, _exclusive_cumprod(b, _flip(b, flat, last), last), last)
    others = b.reshape(b.mul(left, right), xt.shape)
    if xt is not x:
        others = b.permute(others, tuple(perm.index(d) for d in range(nd)))
    return [mul_conj(b, _unreduce(b, ct, x, dim, keepdim), others)]


# dim: an int as torch (a tuple also works); dtype: accumulate in it (ints default to int64).
defop("prod", "input", attrs=(("dim", None, K.DIMS_OPT), ("keepdim", False, K.BOOL), ("dtype", None, K.DTYPE_OPT)),
      canon=_canon_prod, flags=RED | COMPLEX, ref="torch.prod",
      infer=lambda types, *, dim, keepdim, dtype: T.TensorType(
          reduce_shape(types[0].shape, dim, keepdim), accumulate_dtype(types[0], dtype)),
      kernel=lambda xp, x, *, dim, keepdim, dtype: xp.prod(
          x, axis=dim, keepdims=keepdim, dtype=accumulate_np_dtype(x, dtype)),
      vjp=_prod_vjp,
      autocast={"cpu": AUTOCAST_FP32, "cuda": AUTOCAST_FP32})


# ---- amax / amin, max / min -------------------------------------------------------
def _extreme_infer(name):
    def infer(types, *, dim, keepdim):
        t = types[0]
        for d in dim:
            if t.shape[d] == 0:
                raise ValueError(f"{name}: cannot reduce over dimension {d} of size 0 in {t}")
        return T.TensorType(reduce_shape(t.shape, dim, keepdim), t.dtype)
    return infer


def _amax_vjp(b, ct, x, out, *, dim, keepdim):
    # torch.amax/amin: the gradient is split evenly among all extremal elements; a slice
    # holding a NaN (its result NaN, no element equal to it) gets NaN everywhere, as torch's
    # ct / count * mask gives there.  Written with `where` so no inf * 0 is ever formed:
    # XLA folds inf * convert(false) to 0 where NumPy gives NaN, and both executors must
    # agree bit for bit.
    mask = b.eq(x, _keep(b, out, x, dim, keepdim))
    count = b.sum(b.convert(mask, ct.dtype), dim, True)
    empty = b.eq(count, 0.0)
    share = b.div(_keep(b, ct, x, dim, keepdim), b.where(empty, 1.0, count))
    return [b.where(empty, math.nan, b.where(mask, share, 0.0))]


def _extreme_all_vjp(b, ct, x, out):
    # torch.max()/min() without dim (evenly_distribute_backward): the gradient is split
    # evenly among the elements equal to the result, or among the NaNs when it is NaN.
    nan_out = b.ne(out, out)
    mask = b.where(nan_out, b.ne(x, x), b.eq(x, out))
    count = b.sum(b.convert(mask, ct.dtype), tuple(range(len(x.shape))), False)
    return [b.where(mask, b.div(ct, count), 0.0)]   # count >= 1: the input is not empty


defop("amax", "input", attrs=(("dim", None, K.DIMS_OPT), ("keepdim", False, K.BOOL)), canon=canon_reduce("amax"),
      infer=_extreme_infer("amax"), flags=RED, ref="torch.amax",
      kernel=lambda xp, x, *, dim, keepdim: xp.max(x, axis=dim, keepdims=keepdim),
      vjp=_amax_vjp,
      fusion=Fusion.REDUCE_MAX)

defop("amin", "input", attrs=(("dim", None, K.DIMS_OPT), ("keepdim", False, K.BOOL)), canon=canon_reduce("amin"),
      infer=_extreme_infer("amin"), flags=RED, ref="torch.amin",
      kernel=lambda xp, x, *, dim, keepdim: xp.min(x, axis=dim, keepdims=keepdim),
      vjp=_amax_vjp)


def _canon_one_dim(name):
    return lambda types, *, dim, keepdim: {"dim": norm_dim(name, dim, types[0].ndim),
                                           "keepdim": bool(keepdim)}


def _with_indices_infer(name):
    def infer(types, *, dim, keepdim):
        t = types[0]
        if t.ndim and t.shape[dim] == 0:
            raise ValueError(f"{name}(): Expected reduction dim {dim} to have non-zero size, "
                             f"got {t}")
        shape = reduce_shape(t.shape, (dim,), keepdim) if t.ndim else ()
        return T.TensorType(shape, t.dtype), T.TensorType(shape, T.int64)
    return infer


def _with_indices_kernel(arg):
    def kernel(xp, x, *, dim, keepdim):
        if x.ndim == 0:
            return x, xp.zeros((), dtype=xp.int64)
        idx = getattr(xp, arg)(x, axis=dim, keepdims=True).astype(xp.int64)  # first of ties
        values = xp.take_along_axis(x, idx, axis=dim)
        if not keepdim:
            values, idx = xp.squeeze(values, axis=dim), xp.squeeze(idx, axis=dim)
        return values, idx
    return kernel


def _max_min(name, full, binary):
    def decomp(ops, x, dim=None, keepdim=False, other=None):
        if other is None and ops.is_operand(dim):   # torch.max(a, b): elementwise
            other, dim = dim, None
        if other is not None:
            return getattr(ops, binary)(x, other)
        if dim is None:
            if keepdim:
                raise with_location(TypeError(f"{name}(): keepdim=True needs dim"), ops.location())
            if math.prod(x.shape) == 0:
                raise with_location(ValueError(
                    f"{name}(): Expected reduction dim to be specified for input.numel() == 0, "
                    f"got {T.TensorType(tuple(x.shape), x.dtype)}"), ops.location())
            return getattr(ops, full)(x)
        return RETURN_TYPES[name](*getattr(ops, f"{name}_with_indices")(x, dim, keepdim))
    return decomp


def _extreme_all_infer(name):
    def infer(types):
        t = types[0]
        if t.numel == 0:
            raise ValueError(f"{name}(): Expected reduction dim to be specified for "
                             f"input.numel() == 0, got {t}")
        return T.TensorType((), t.dtype)
    return infer


for _name in ("max", "min"):   # torch.max(x) / min(x): its own gradient rule (not amax's)
    defop(f"{_name}_all", "input", infer=_extreme_all_infer(_name), flags=RED | INTERNAL,
          kernel=(lambda fn: lambda xp, x: getattr(xp, fn)(x))(_name), vjp=_extreme_all_vjp,
          ref=f"torch.{_name}() (no dim)", aten_name=f"aten::{_name}")


for _name, _arg, _binary in (("max", "argmax", "maximum"), ("min", "argmin", "minimum")):
    # with dim: (values, indices), the whole gradient to the index returned (first of ties)
    defop(f"{_name}_with_indices", "input", attrs=(("dim", 0, K.DIM), ("keepdim", False, K.BOOL)),
          canon=_canon_one_dim(_name), infer=_with_indices_infer(_name),
          kernel=_with_indices_kernel(_arg), flags=RED | INTERNAL, ref=f"torch.{_name}(dim)",
          aten_name=f"aten::{_name}",
          vjp=lambda b, ct, x, values, indices, *, dim, keepdim: [
              scatter_values(b, ct[0], x, indices, dim, keepdim)])
    # torch.max(x) -> amax over all dims (ties share the gradient); max(x, dim) -> (values,
    # indices); max(x, other) -> maximum
    defcomposite(_name,
                 "input: Tensor, dim: Tensor | int | None = None, keepdim=False, "
                 "other: Tensor | None = None",
                 _max_min(_name, f"{_name}_all", _binary), ref=f"torch.{_name}")


def _canon_arg(name):
    def canon(types, *, dim, keepdim):
        return {"dim": None if dim is None else norm_dim(name, dim, types[0].ndim),
                "keepdim": bool(keepdim)}
    return canon


def _arg_infer(name):
    def infer(types, *, dim, keepdim):
        t = types[0]
        if dim is None and math.prod(t.shape) == 0:
            raise ValueError(f"{name}(): Expected reduction dim to be specified for "
                             f"input.numel() == 0, got {t}")
        if dim is None or not t.ndim:
            return T.TensorType((1,) * t.ndim if keepdim else (), T.int64)
        if t.shape[dim] == 0:
            raise ValueError(f"{name}(): Expected reduction dim {dim} to have non-zero size, "
                             f"got {t}")
        return T.TensorType(reduce_shape(t.shape, (dim,), keepdim), T.int64)
    return infer


def _arg_kernel(fn):
    def kernel(xp, x, *, dim, keepdim):
        if dim is None or x.ndim == 0:   # index into the flattened input
            out = getattr(xp, fn)(xp.reshape(x, (-1,)))
            return xp.reshape(out, (1,) * x.ndim if keepdim else ()).astype(xp.int64)
        return getattr(xp, fn)(x, axis=dim, keepdims=keepdim).astype(xp.int64)
    return kernel


for _name in ("argmax", "argmin"):   # ties: the first index, as torch
    defop(_name, "input", attrs=(("dim", None, K.DIM_OPT), ("keepdim", False, K.BOOL)), canon=_canon_arg(_name),
          infer=_arg_infer(_name), kernel=_arg_kernel(_name), vjp=NONDIFF, flags=RED,
          ref=f"torch.{_name}")


# ---- var / std -------------------------------------------------------------------
def _canon_var(name):
    """torch's overloads: (dim, *, correction, keepdim), (dim, unbiased, keepdim), (unbiased)."""
    def canon(types, *, dim=None, unbiased=None, keepdim=False, correction=None):
        if isinstance(dim, bool):        # var(x, True): the legacy (input, unbiased) overload
            if unbiased is not None:
                raise TypeError(f"{name}(): got unbiased twice ({dim!r} and {unbiased!r})")
            dim, unbiased = None, dim
        if unbiased is not None and correction is not None:
            raise TypeError(f"{name}(): pass either unbiased or correction, not both")
        if correction is None:
            correction = 1 if unbiased is None or unbiased else 0
        return {"dim": norm_dims(name, dim, types[0].ndim), "unbiased": None,
                "keepdim": bool(keepdim), "correction": correction}
    return canon


def _var_infer(name):
    def infer(types, *, dim, unbiased, keepdim, correction):
        t = types[0]
        if not t.dtype.is_differentiable:
            raise DTypeError(f"{name}: only floating-point and complex tensors are supported, "
                             f"got {t}")
        # complex: the mean of |x - mean|^2, real (complex64 -> float32), as torch
        return T.TensorType(reduce_shape(t.shape, dim, keepdim), t.dtype.to_real())
    return infer


def _var_kernel(xp, x, *, dim, unbiased, keepdim, correction):
    return xp.var(x, axis=dim, ddof=correction, keepdims=keepdim)


def _centered(b, x, dim, correction):
    """(x - mean) / (N - correction), the shared factor of var's and std's gradients (complex
    too: the gradient of |x - mean|^2 is 2 (x - mean), torch's convention)."""
    n = math.prod(x.shape[d] for d in dim) - correction
    return b.mul(b.sub(x, b.mean(x, dim, True)), 1.0 / n if n > 0 else math.inf)


def _std_vjp(b, ct, x, out, *, dim, unbiased, keepdim, correction):
    # torch: 0 where std == 0 (a constant slice), not 0 * inf
    ct_k, out_k = _keep(b, ct, x, dim, keepdim), _keep(b, out, x, dim, keepdim)
    return [b.mul(b.where(b.eq(out_k, 0.0), 0.0, b.div(ct_k, out_k)),
                  _centered(b, x, dim, correction))]


_VAR_ATTRS = (("dim", None, K.DIMS_OPT), ("unbiased", None, K.BOOL_OPT), ("keepdim", False, K.BOOL), ("correction", None, K.FLOAT_OPT))

defop("var", "input", attrs=_VAR_ATTRS, canon=_canon_var("var"), infer=_var_infer("var"),
      kernel=_var_kernel, flags=RED | COMPLEX, ref="torch.var",
      vjp=lambda b, ct, x, out, *, dim, unbiased, keepdim, correction: [
          b.mul(_keep(b, ct, x, dim, keepdim), b.mul(_centered(b, x, dim, correction), 2.0))])

defop("std", "input", attrs=_VAR_ATTRS, canon=_canon_var("std"), infer=_var_infer("std"),
      kernel=lambda xp, x, **a: xp.sqrt(_var_kernel(xp, x, **a)), flags=RED | COMPLEX,
      ref="torch.std",
      vjp=_std_vjp)


def _with_mean(name):
    def decomp(ops, x, dim=None, unbiased=None, keepdim=False, correction=None):
        t = T.TensorType(tuple(x.shape), x.dtype)
        try:
            a = _canon_var(name)([t], dim=dim, unbiased=unbiased, keepdim=keepdim,
                                 correction=correction)
            _var_infer(name)([t], **a)
        except (IndexError, TypeError, ValueError) as e:
            raise with_location(e, ops.location()) from None
        spread = getattr(ops, name[:3])(x, a["dim"], None, a["keepdim"], a["correction"])
        return spread, ops.mean(x, a["dim"], a["keepdim"])
    return decomp


defcomposite("var_mean", "input: Tensor, dim=None, unbiased=None, keepdim=False, correction=None",
             _with_mean("var_mean"), flags=COMPLEX, ref="torch.var_mean", node_inputs=("input",))
defcomposite("std_mean", "input: Tensor, dim=None, unbiased=None, keepdim=False, correction=None",
             _with_mean("std_mean"), flags=COMPLEX, ref="torch.std_mean", node_inputs=("input",))


# ---- logsumexp / norm ------------------------------------------------------------
def _logsumexp_kernel(xp, x, *, dim, keepdim):
    # complex: shifted by the largest real part only, so the result is the principal log of
    # the sum (imaginary part in (-pi, pi]), as torch
    m = xp.max(xp.real(x) if x.dtype.kind == "c" else x, axis=dim, keepdims=True,
               initial=-xp.inf)
    m = xp.where(xp.isfinite(m), m, xp.zeros_like(m))   # all -inf (or an inf): no shift
    out = xp.log(xp.sum(xp.exp(x - m), axis=dim, keepdims=True)) + m
    return out if keepdim else xp.squeeze(out, axis=dim)


# d/dx = exp(x - out) (conjugated for complex): nan where the result is infinite, as torch
defop("logsumexp", "input", attrs=(("dim", REQUIRED, K.DIMS), ("keepdim", False, K.BOOL)),
      canon=canon_reduce("logsumexp"), flags=RED | TO_FLOAT | COMPLEX, ref="torch.logsumexp",
      infer=lambda types, *, dim, keepdim: T.TensorType(
          reduce_shape(types[0].shape, dim, keepdim), types[0].dtype),
      kernel=_logsumexp_kernel,
      vjp=lambda b, ct, x, out, *, dim, keepdim: [
          mul_conj(b, _keep(b, ct, x, dim, keepdim),
                   b.exp(b.sub(x, _keep(b, out, x, dim, keepdim))))])


def _canon_norm(types, *, p, dim, keepdim, dtype):
    if isinstance(p, str):
        if p != "fro":
            raise NotImplementedError(f"norm: p={p!r} is not supported; only vector norms "
                                      "(a number, inf, -inf or 'fro')")
        if dim is not None and not isinstance(dim, int) and len(dim) > 2:
            raise ValueError(f"norm: p='fro' takes at most 2 dims, got dim={dim}")
        p = 2.0
    elif p is None:
        p = 2.0
    elif isinstance(p, bool) or not isinstance(p, (int, float)):
        raise TypeError(f"norm: p must be a number or 'fro', got {p!r}")
    return {"p": float(p), "dim": norm_dims("norm", dim, types[0].ndim),
            "keepdim": bool(keepdim), "dtype": None if dtype is None else T.as_dtype(dtype)}


def _norm_infer(types, *, p, dim, keepdim, dtype):
    t = types[0]
    if not t.dtype.is_differentiable:
        raise DTypeError(f"norm: expected a floating-point or complex tensor, got {t}")
    # torch: a complex input takes a complex dtype (and gives its real dtype), a real one a
    # real dtype
    if dtype is not None and (not dtype.is_differentiable
                              or dtype.is_complex != t.dtype.is_complex):
        kind = "complex" if t.dtype.is_complex else "floating-point"
        raise DTypeError(f"norm: dtype must be a {kind} dtype for {t}, got {dtype.name}")
    if (p < 0 or p == math.inf) and math.prod(t.shape[d] for d in dim) == 0:
        raise ValueError(f"norm: cannot compute the {p} norm over an empty dimension of {t} "
                         "(the operation has no identity)")
    return T.TensorType(reduce_shape(t.shape, dim, keepdim), (dtype or t.dtype).to_real())


def _norm_kernel(xp, x, *, p, dim, keepdim, dtype):
    a = xp.abs(x if dtype is None else x.astype(dtype.numpy))
    if p == math.inf:
        return xp.max(a, axis=dim, keepdims=keepdim)
    if p == -math.inf:
        return xp.min(a, axis=dim, keepdims=keepdim)
    if p == 0:
        return xp.sum(a != 0, axis=dim, keepdims=keepdim, dtype=a.dtype)
    if p == 1:
        return xp.sum(a, axis=dim, keepdims=keepdim)
    if p == 2:
        return xp.sqrt(xp.sum(a * a, axis=dim, keepdims=keepdim))
    return xp.sum(a ** p, axis=dim, keepdims=keepdim) ** (1.0 / p)


def _norm_vjp(b, ct, x, out, *, p, dim, keepdim, dtype):
    """torch's linalg_vector_norm_backward: 0 where the norm is 0, ties share an inf norm.

    Complex: d|z|/dz is sgn(z) = z / |z| (0 at 0) where real inputs have sign(x)."""
    ct, out = _keep(b, ct, x, dim, keepdim), _keep(b, out, x, dim, keepdim)
    sign = b.sgn if x.dtype.is_complex else b.sign
    if p == 0:
        return [None]
    if p == 1:
        return [b.mul(ct, sign(x))]
    if p == 2:
        return [b.mul(ct, b.where(b.eq(out, 0.0), 0.0, b.div(x, out)))]
    if math.isinf(p):   # amax/amin of |x|; a NaN counts as an extreme
        a = b.abs(x)
        mask = b.add(b.convert(b.eq(a, out), ct.dtype), b.convert(b.ne(a, a), ct.dtype))
        return [b.mul(sign(x), b.mul(b.div(ct, b.sum(mask, dim, True)), mask))]
    scaled = b.mul(sign(x), b.pow(b.abs(x), p - 1))
    if p < 1:
        scaled = b.where(b.eq(x, 0.0), 0.0, scaled)
        return [b.mul(b.mul(scaled, ct), b.pow(out, 1 - p))]
    return [b.mul(scaled, b.where(b.eq(out, 0.0), 0.0, b.div(ct, b.pow(out, p - 1))))]


# torch.norm for vector norms (torch.linalg.vector_norm); p='fro' is the 2-norm
defop("norm", "input", attrs=(("p", "fro", K.NORM_P), ("dim", None, K.DIMS_OPT), ("keepdim", False, K.BOOL), ("dtype", None, K.DTYPE_OPT)),
      canon=_canon_norm, infer=_norm_infer, kernel=_norm_kernel, vjp=_norm_vjp,
      flags=RED | COMPLEX, ref="torch.norm (vector norms, as torch.linalg.vector_norm)",
      autocast={"cuda": AUTOCAST_FP32},
      node_name="LinalgVectorNormBackward0")   # torch 2.13's x.norm(...) node, every p and dim


# ---- all / any / count_nonzero ---------------------------------------------------
def _bool_infer(types, *, dim, keepdim):   # torch: uint8 in, uint8 out; else bool
    t = types[0]
    return T.TensorType(reduce_shape(t.shape, dim, keepdim),
                        T.uint8 if t.dtype is T.uint8 else T.bool_)


def _bool_kernel(fn):
    def kernel(xp, x, *, dim, keepdim):
        out = getattr(xp, fn)(x, axis=dim, keepdims=keepdim)
        return out.astype("uint8" if x.dtype.name == "uint8" else "bool")
    return kernel


# complex: an element is true (nonzero) when either part is, as torch
for _name in ("all", "any"):
    defop(_name, "input", attrs=(("dim", None, K.DIMS_OPT), ("keepdim", False, K.BOOL)), canon=canon_reduce(_name),
          infer=_bool_infer, kernel=_bool_kernel(_name), vjp=NONDIFF, flags=RED | COMPLEX,
          ref=f"torch.{_name}")

defop("count_nonzero", "input", attrs=(("dim", None, K.DIMS_OPT),), flags=RED | COMPLEX, vjp=NONDIFF,
      canon=lambda types, *, dim: {"dim": norm_dims("count_nonzero", dim, types[0].ndim)},
      infer=lambda types, *, dim: T.TensorType(reduce_shape(types[0].shape, dim, False), T.int64),
      kernel=lambda xp, x, *, dim: xp.sum(x != 0, axis=dim, dtype="int64"),
      ref="torch.count_nonzero")


# ---- composites -------------------------------------------------------------------
def _mean(ops, x, dim=None, keepdim=False):
    if not x.dtype.is_differentiable:
        raise DTypeError("mean(): could not infer output dtype. Input dtype must be a "
                         f"floating point dtype, got {x.dtype.name} (use .float() first)")
    dims = canon_reduce("mean")([T.TensorType(tuple(x.shape), x.dtype)], dim=dim)["dim"]
    n = 1
    for d in dims:
        n *= x.shape[d]
    return ops.div(ops.sum(x, dims, keepdim), float(n))


defcomposite("mean", "input: Tensor, dim=None, keepdim=False", _mean, flags=COMPLEX | DTYPE_ARG,
             ref="torch.mean", node_inputs=("input",))


def _sum_to_size(ops, x, size):
    """Sum a broadcast value back down to `size` (torch.Tensor.sum_to_size)."""
    size = tuple(size)
    shape = tuple(x.shape)
    if shape == size:
        return x
    lead = len(shape) - len(size)
    if lead < 0 or any(s != 1 and s != shape[i + lead] for i, s in enumerate(size)):
        raise RuntimeError(f"size {{{list(size)}}} is not expandable to size "   # torch 2.13
                           f"{{{list(shape)}}}.")
    dims = tuple(range(lead)) + tuple(i + lead for i, s in enumerate(size)
                                      if s == 1 and shape[i + lead] != 1)
    out = ops.sum(x, dims, True) if dims else x
    return ops.reshape(out, size)


defcomposite("sum_to_size", "input: Tensor, size=None", _sum_to_size, flags=COMPLEX,
             ref="torch.Tensor.sum_to_size")
