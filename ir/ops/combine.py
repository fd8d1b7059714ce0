"""torch functions that combine tensors, written as registry composites of existing ops:
atleast_1d/2d/3d, hstack / vstack / dstack / column_stack, meshgrid, cartesian_prod, kron, diff, the scaled
products addmm / addmv / baddbmm / addbmm, and cdist.

Every one is differentiable through the ops it emits and traces into one static program.
"""
from __future__ import annotations

from .. import types as T
from ..errors import DTypeError, ShapeError
from ..registry import COMPLEX, VIEW, defcomposite
from ._common import norm_dim
from ._matrix import _fail, _need_tensors, _ty


def _tensor_list(ops, name: str, tensors) -> None:
    if not tensors:
        raise _fail(ops, ValueError(f"{name} expects a non-empty TensorList"))
    for i, t in enumerate(tensors):
        if not ops.is_operand(t):
            raise _fail(ops, TypeError(f"{name}(): expected a list of tensors, got "
                                       f"{type(t).__name__} at entry {i}"))


def _at_least(ops, t, nd: int):
    """torch.atleast_{1,2,3}d of one operand: 0-d -> (1,)*nd, 1-d (n,) -> (1, n) / (1, n, 1),
    2-d (m, n) -> (m, n, 1)."""
    shape = tuple(t.shape)
    if len(shape) >= nd:
        return t
    if len(shape) == 0:
        return ops.reshape(t, (1,) * nd)
    if len(shape) == 1:
        return ops.reshape(t, (1, shape[0]) if nd == 2 else (1, shape[0], 1))
    return ops.reshape(t, shape + (1,))


def _hstack(ops, *tensors):
    """Concatenate along dim 1 (dim 0 for 1-D inputs) after atleast_1d (torch.hstack)."""
    _tensor_list(ops, "hstack", tensors)
    ts = [_at_least(ops, t, 1) for t in tensors]
    return ops.cat(ts, 0 if len(ts[0].shape) == 1 else 1)


def _vstack(ops, *tensors):
    """Concatenate along dim 0 after atleast_2d (torch.vstack, torch.row_stack)."""
    _tensor_list(ops, "vstack", tensors)
    return ops.cat([_at_least(ops, t, 2) for t in tensors], 0)


def _dstack(ops, *tensors):
    """Concatenate along dim 2 after atleast_3d (torch.dstack)."""
    _tensor_list(ops, "dstack", tensors)
    return ops.cat([_at_least(ops, t, 3) for t in tensors], 2)


def _column_stack(ops, *tensors):
    """Concatenate along dim 1; 0-d and 1-d inputs become columns (torch.column_stack)."""
    _tensor_list(ops, "column_stack", tensors)
    cols = [ops.reshape(t, (max(1, _numel(t)), 1)) if len(t.shape) <= 1 else t for t in tensors]
    return ops.cat(cols, 1)


def _numel(t) -> int:
    n = 1
    for s in t.shape:
        n *= s
    return n


def _meshgrid(ops, *tensors, indexing=None):
    """Coordinate grids of 0-d / 1-d tensors (torch.meshgrid): with ``indexing="ij"`` output i
    has shape ``(len(t0), len(t1), ...)``; ``"xy"`` swaps the first two dims.  Leaving
    `indexing` out means "ij" (tg.meshgrid adds torch's UserWarning).

    Returns:
        A tuple of expanded views, one per input, all of one dtype (they must share it).
    Raises:
        RuntimeError: indexing not "ij"/"xy", an input of more than one dim, dtypes differ.
    """
    _tensor_list(ops, "meshgrid", tensors)
    if indexing is None:   # tg.meshgrid warns at the user's line first, as torch
        indexing = "ij"
    if indexing not in ("ij", "xy"):
        raise _fail(ops, RuntimeError(f'torch.meshgrid: indexing must be one of "xy" or "ij", '
                                      f"but received: {indexing}"))
    for t in tensors:
        if len(t.shape) > 1:
            raise _fail(ops, RuntimeError(f"torch.meshgrid: Expected 0D or 1D tensor in the "
                                          f"tensor list but got {_ty(t)}"))
        if t.dtype is not tensors[0].dtype:
            raise _fail(ops, DTypeError(f"meshgrid expects all tensors to have the same dtype, "
                                        f"got {_ty(tensors[0])} and {_ty(t)}"))
    flat = [ops.reshape(t, (_numel(t),)) for t in tensors]
    swap = indexing == "xy" and len(flat) >= 2
    if swap:
        flat[0], flat[1] = flat[1], flat[0]
    shape = tuple(f.shape[0] for f in flat)
    grids = []
    for i, f in enumerate(flat):
        view = (1,) * i + (shape[i],) + (1,) * (len(shape) - i - 1)
        grids.append(ops.expand(ops.reshape(f, view), shape))
    if swap:   # the grids of (t1, t0, ...) by "ij" are those of (t0, t1, ...) by "xy"
        grids[0], grids[1] = grids[1], grids[0]
    return tuple(grids)


def _cartesian_prod(ops, *tensors):
    """Every combination of the elements of 1-D tensors, as rows ``(prod(len), n)`` (torch.
    cartesian_prod, itertools.product's order); one tensor is returned as it is."""
    _tensor_list(ops, "cartesian_prod", tensors)
    for t in tensors:
        if len(t.shape) != 1:
            raise _fail(ops, ShapeError(f"cartesian_prod: Expect a 1D vector, but got {_ty(t)}"))
    if len(tensors) == 1:
        return tensors[0]
    grids = _meshgrid(ops, *tensors, indexing="ij")
    return ops.stack([ops.reshape(g, (-1,)) for g in grids], 1)


def _kron(ops, input, other):
    """The Kronecker product (torch.kron): the operands padded with leading 1-dims to one
    rank r; the result has shape ``input.shape[k] * other.shape[k]`` for each k < r."""
    _need_tensors(ops, "kron", input=input, other=other)
    r = max(len(input.shape), len(other.shape))
    a_shape = (1,) * (r - len(input.shape)) + tuple(input.shape)
    b_shape = (1,) * (r - len(other.shape)) + tuple(other.shape)
    # interleave: a as (a0, 1, a1, 1, ...), b as (1, b0, 1, b1, ...), so their product puts
    # a's index before b's in each merged dim
    a = ops.reshape(input, tuple(x for s in a_shape for x in (s, 1)))
    b = ops.reshape(other, tuple(x for s in b_shape for x in (1, s)))
    return ops.reshape(ops.mul(a, b), tuple(p * q for p, q in zip(a_shape, b_shape)))


def _diff(ops, input, n=1, dim=-1, prepend=None, append=None):
    """The n-th forward difference along `dim` (torch.diff): ``out[i] = x[i+1] - x[i]``,
    `prepend` / `append` concatenated first; bool inputs give ``x[i+1] != x[i]``.  Each order
    shortens `dim` by one (an empty result when `n` reaches its length).

    Raises:
        RuntimeError: a 0-d input or a negative `n` (torch's messages).
    """
    _need_tensors(ops, "diff", input=input)
    if len(input.shape) == 0:
        raise _fail(ops, RuntimeError("diff expects input to be at least one-dimensional"))
    if n < 0:
        raise _fail(ops, RuntimeError(f"order must be non-negative but got {n}"))
    d = norm_dim("diff", dim, len(input.shape))
    parts = [p for p in (prepend, input, append) if p is not None]
    x = ops.cat(parts, d) if len(parts) > 1 else input
    for _ in range(n):
        length = max(0, x.shape[d] - 1)
        hi, lo = ops.narrow(x, d, min(1, x.shape[d]), length), ops.narrow(x, d, 0, length)
        x = ops.ne(hi, lo) if x.dtype is T.bool_ else ops.sub(hi, lo)
        if length == 0:
            break
    return x


def _scaled_sum(ops, name, input, product, beta, alpha):
    """``beta * input + alpha * product`` with `input` expanded to the product's shape, as
    torch: beta 0 ignores `input` (its NaNs too), a float beta/alpha is refused for integers."""
    if product.dtype.category in (T.INT, T.BOOL):
        for arg, v in (("beta", beta), ("alpha", alpha)):
            if isinstance(v, float):
                raise _fail(ops, RuntimeError(f"{name}: for integral input tensors, argument "
                                              f"{arg} must not be a floating point number"))
    if T.broadcast_shapes(tuple(input.shape), tuple(product.shape)) != tuple(product.shape):
        raise _fail(ops, ShapeError(f"{name}: input {_ty(input)} does not broadcast to the "
                                    f"product's shape {_ty(product)} (torch: 'The expanded "
                                    f"size of the tensor must match the existing size')"))
    base = ops.expand(input, tuple(product.shape))
    scaled = product if alpha == 1 else ops.mul(product, alpha)
    if beta == 0:
        return scaled
    return ops.add(base if beta == 1 else ops.mul(base, beta), scaled)


def _addmm(ops, input, mat1, mat2, beta=1, alpha=1):
    """``beta * input + alpha * (mat1 @ mat2)`` (torch.addmm): mat1 (n, m), mat2 (m, p), input
    broadcastable to (n, p).  Raises mm's errors, and ShapeError for an input that does not
    broadcast."""
    return _scaled_sum(ops, "addmm", input, ops.mm(mat1, mat2), beta, alpha)


def _addmv(ops, input, mat, vec, beta=1, alpha=1):
    """``beta * input + alpha * (mat @ vec)`` (torch.addmv): mat (n, m), vec (m,)."""
    return _scaled_sum(ops, "addmv", input, ops.mv(mat, vec), beta, alpha)


def _baddbmm(ops, input, batch1, batch2, beta=1, alpha=1):
    """``beta * input + alpha * bmm(batch1, batch2)`` (torch.baddbmm): (b, n, m) @ (b, m, p)."""
    return _scaled_sum(ops, "baddbmm", input, ops.bmm(batch1, batch2), beta, alpha)


def _addbmm(ops, input, batch1, batch2, beta=1, alpha=1):
    """``beta * input + alpha * sum_b batch1[b] @ batch2[b]`` (torch.addbmm): result (n, p)."""
    return _scaled_sum(ops, "addbmm", input, ops.sum(ops.bmm(batch1, batch2), (0,)), beta, alpha)


_CDIST_MODES = ("use_mm_for_euclid_dist_if_necessary", "use_mm_for_euclid_dist",
                "donot_use_mm_for_euclid_dist")


def _safe_root(ops, s, p):
    """``s ** (1/p)`` with a zero gradient where s is 0 (torch's cdist backward there)."""
    zero = ops.eq(s, 0.0)
    root = ops.sqrt(ops.where(zero, 1.0, s)) if p == 2 else ops.pow(ops.where(zero, 1.0, s),
                                                                     1.0 / p)
    return ops.where(zero, 0.0, root)


def _cdist(ops, x1, x2, p=2.0, compute_mode="use_mm_for_euclid_dist_if_necessary"):
    """p-norm distances between the rows of x1 (*B, P, M) and x2 (*B, R, M): (*B, P, R)
    (torch.cdist).  p 0 counts the differing coordinates, inf takes the largest.  For p 2 the
    matrix-product form ``|a|^2 + |b|^2 - 2 a.b`` is used when P or R exceeds 25 (torch's
    default rule) or `compute_mode` asks for it; it saves memory and rounds like torch's.
    The gradient is 0 where a distance is 0, as torch's.

    Raises:
        RuntimeError: inputs under 2-D, column counts differ, p negative (torch's messages).
        ValueError: an unknown compute_mode.
    """
    _need_tensors(ops, "cdist", x1=x1, x2=x2)
    if compute_mode not in _CDIST_MODES:
        raise _fail(ops, ValueError(f"{compute_mode} is not a valid value for compute_mode"))
    for arg, x in (("X1", x1), ("X2", x2)):
        if len(x.shape) < 2:
            raise _fail(ops, RuntimeError(f"cdist only supports at least 2D tensors, {arg} got: "
                                          f"{len(x.shape)}D ({_ty(x)})"))
    if x1.shape[-1] != x2.shape[-1]:
        raise _fail(ops, RuntimeError(f"cdist: X1 and X2 must have the same number of columns. "
                                      f"X1: {x1.shape[-1]} X2: {x2.shape[-1]} ({_ty(x1)}, "
                                      f"{_ty(x2)})"))
    if p < 0:
        raise _fail(ops, RuntimeError(f"cdist only supports non-negative p values, got {p}"))
    big = x1.shape[-2] > 25 or x2.shape[-2] > 25
    if p == 2 and (compute_mode == "use_mm_for_euclid_dist"
                   or (compute_mode == _CDIST_MODES[0] and big)):
        sq1 = ops.sum(ops.mul(x1, x1), (-1,), True)
        sq2 = ops.transpose(ops.sum(ops.mul(x2, x2), (-1,), True), -1, -2)
        cross = ops.matmul(x1, ops.transpose(x2, -1, -2))
        return _safe_root(ops, ops.clamp_min(ops.add(ops.sub(sq1, ops.mul(cross, 2.0)), sq2),
                                             0.0), 2)
    diff = ops.abs(ops.sub(ops.unsqueeze(x1, -2), ops.unsqueeze(x2, -3)))   # (*B, P, R, M)
    if p == 0:   # a count: torch's gradient is 0, which `+ 0 * sum(diff)` gives it too
        count = ops.sum(ops.convert(ops.ne(diff, 0.0), diff.dtype), (-1,))
        return ops.add(count, ops.mul(ops.sum(diff, (-1,)), 0.0))
    if p == float("inf"):
        # torch gives every tied largest coordinate the whole gradient (amax would split it):
        # the value of amax plus a zero whose gradient is the tie mask
        top = ops.amax(ops.stop_gradient(diff), (-1,), True)
        ties = ops.convert(ops.eq(ops.stop_gradient(diff), top), diff.dtype)
        moving = ops.mul(ties, ops.sub(diff, ops.stop_gradient(diff)))
        return ops.add(ops.squeeze(top, -1), ops.sum(moving, (-1,)))
    if p == 1:
        return ops.sum(diff, (-1,))
    return _safe_root(ops, ops.sum(ops.mul(diff, diff) if p == 2 else ops.pow(diff, p), (-1,)), p)


for _nd in (1, 2, 3):
    defcomposite(f"atleast_{_nd}d", "input: Tensor",
                 lambda ops, input, _nd=_nd: _at_least(ops, input, _nd),
                 ref=f"torch.atleast_{_nd}d (one tensor; tg.atleast_{_nd}d(a, b) gives a tuple)",
                 flags=COMPLEX | VIEW)
_STACK = {"hstack": _hstack, "vstack": _vstack, "dstack": _dstack,
          "column_stack": _column_stack}
for _name, _fn in _STACK.items():
    defcomposite(_name, "*tensors: Tensor", _fn, ref=f"torch.{_name}", flags=COMPLEX)
defcomposite("meshgrid", "*tensors: Tensor, indexing=None", _meshgrid, ref="torch.meshgrid",
             flags=COMPLEX)
defcomposite("cartesian_prod", "*tensors: Tensor", _cartesian_prod, ref="torch.cartesian_prod",
             flags=COMPLEX)
defcomposite("kron", "input: Tensor, other: Tensor", _kron, ref="torch.kron", flags=COMPLEX)
defcomposite("diff", "input: Tensor, n=1, dim=-1, prepend: Tensor | None = None, "
             "append: Tensor | None = None", _diff, ref="torch.diff", flags=COMPLEX)
_PRODUCTS = {"addmm": ("mat1", "mat2", _addmm), "addmv": ("mat", "vec", _addmv),
             "baddbmm": ("batch1", "batch2", _baddbmm), "addbmm": ("batch1", "batch2", _addbmm)}
for _name, (_a, _b, _fn) in _PRODUCTS.items():
    defcomposite(_name, f"input: Tensor, {_a}: Tensor, {_b}: Tensor, *, beta=1, alpha=1", _fn,
                 ref=f"torch.{_name}", flags=COMPLEX, node_inputs=("input", _a, _b))
defcomposite("cdist", "x1: Tensor, x2: Tensor, p=2.0, "
             "compute_mode='use_mm_for_euclid_dist_if_necessary'", _cdist, ref="torch.cdist",
             node_inputs=("x1", "x2"))
