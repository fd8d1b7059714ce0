"""More of torch's top-level functions (issue 16, third batch): the integer primitives gcd and
lcm, and registry composites of existing ops for cov / corrcoef, rot90, take, tensor_split and
block_diag.

gcd and lcm are elementwise primitives of integer tensors only (torch has no float or bool
kernel), with no gradient.  The composites are differentiable through the ops they emit and
trace into one static program: their output shapes follow from shapes and attributes alone.
"""
from __future__ import annotations

import math
import warnings

from .. import types as T
from ..errors import DTypeError
from ..registry import CHEAP, COMPLEX, ELEMENTWISE, NONDIFF, PROMOTE, VIEW, defcomposite, defop
from ._common import broadcast_infer, conj_if_complex, norm_dim
from ._matrix import _fail, _need_tensors, _ty
from .index import checked_index, require_index


# ---- gcd / lcm ------------------------------------------------------------------------------
def _integer_infer(name):
    infer = broadcast_infer(name)

    def checked(types, **attrs):
        for t in types:
            if t.dtype.category != T.INT:   # torch: "gcd_cpu" not implemented for 'Float'/'Bool'
                raise DTypeError(f"{name}: only integer tensors are supported, got {t} (torch: "
                                 f"\"{name}_cpu\" not implemented for '{t.dtype.name}')")
        return infer(types, **attrs)
    return checked


# both kernels give non-negative results (gcd(-4, 6) = 2, lcm(-4, 6) = 12) and gcd(0, 0) = 0,
# as torch; lcm wraps in the operands' dtype as torch's does (int8 lcm(100, 3) is 44)
for _name in ("gcd", "lcm"):
    defop(_name, "input, other", infer=_integer_infer(_name),
          kernel=(lambda f: lambda xp, x, y: getattr(xp, f)(x, y))(_name), vjp=NONDIFF,
          flags=ELEMENTWISE | CHEAP | PROMOTE, ref=f"torch.{_name} (integer tensors only)")


# ---- cov / corrcoef -------------------------------------------------------------------------
def _weights(ops, w, name, n, integral):
    """torch.cov's checks of fweights / aweights (the sign check only where values are known:
    a traced program cannot raise on them)."""
    _need_tensors(ops, "cov", **{name: w})
    if len(w.shape) > 1:
        raise _fail(ops, RuntimeError(f"cov(): expected {name} to have one or fewer dimensions "
                                      f"but got {name} with {len(w.shape)} dimensions"))
    numel = w.shape[0] if w.shape else 1
    if numel != n:
        raise _fail(ops, RuntimeError(f"cov(): expected {name} to have the same numel as there "
                                      f"are observations in the input but got {numel} != {n}"))
    kind = T.INT if integral else T.FLOAT
    if w.dtype.category != kind:
        raise _fail(ops, RuntimeError(f"cov(): expected {name} to have "
                                      f"{'integral' if integral else 'floating point'} dtype "
                                      f"but got {name} with {w.dtype.name} dtype"))
    known = ops.known_value(w)
    if known is not None and (known < 0).any():
        raise _fail(ops, RuntimeError(f"cov(): {name} cannot be negative"))
    return ops.reshape(w, (n,))


def _cov(ops, input, correction=1, fweights=None, aweights=None):
    """The covariance matrix of the variables in the rows of `input` (torch.cov; a 1-D input is
    one variable, its columns the observations): ``sum_i w_i (x_i - avg)(x_i - avg)^H /
    (sum w - correction * sum(w * aweights) / sum w)``, with w = fweights * aweights (1 when
    both are None).  A degrees-of-freedom count <= 0 warns and divides by 0, as torch.

    Returns:
        (V, V), squeezed (one variable gives a 0-d tensor); integer inputs give float32.
    Raises:
        RuntimeError: over 2 dims, weights of the wrong dtype, rank, length or sign (torch's
        messages).
    """
    _need_tensors(ops, "cov", input=input)
    if len(input.shape) > 2:
        raise _fail(ops, RuntimeError(f"cov(): expected input to have two or fewer dimensions "
                                      f"but got an input with {len(input.shape)} dimensions "
                                      f"({_ty(input)})"))
    x = input if len(input.shape) == 2 else ops.reshape(input, (1, -1))
    if x.dtype.category in (T.INT, T.BOOL):
        x = ops.convert(x, T.DEFAULT_FLOAT)
    n = x.shape[1]
    w = None
    if fweights is not None:
        w = _weights(ops, fweights, "fweights", n, True)
    if aweights is not None:
        aw = _weights(ops, aweights, "aweights", n, False)
        w = aw if w is None else ops.mul(w, aw)
    if w is not None:
        w = ops.convert(w, x.dtype if not x.dtype.is_complex else x.dtype.to_real())
        w_sum = ops.sum(w, (0,))
        avg = ops.div(ops.sum(ops.mul(x, w), (1,)), w_sum)
        if correction == 0:
            norm = w_sum
        elif aweights is None:
            norm = ops.sub(w_sum, correction)
        else:
            aw = ops.convert(ops.reshape(aweights, (n,)), w.dtype)
            norm = ops.sub(w_sum, ops.div(ops.mul(ops.sum(ops.mul(w, aw), (0,)), correction),
                                          w_sum))
        known = ops.known_value(norm)
        if known is not None and known <= 0:
            _warn_dof(ops)
        norm = ops.where(ops.le(norm, 0.0), 0.0, norm)
    else:
        avg = ops.mean(x, (1,))
        norm = n - correction
        if norm <= 0:
            _warn_dof(ops)
            norm = 0
    xc = ops.sub(x, ops.unsqueeze(avg, 1))
    right = xc if w is None else ops.mul(xc, w)
    c = ops.matmul(xc, conj_if_complex(ops, ops.transpose(right, 0, 1)))
    out = ops.div(c, norm if ops.is_operand(norm) else ops.full((), float(norm), c.dtype.to_real()
                                                                if c.dtype.is_complex
                                                                else c.dtype))
    keep = tuple(s for s in out.shape if s != 1)
    return out if keep == tuple(out.shape) else ops.reshape(out, keep)


_DOF_WARNING = ("cov(): degrees of freedom is <= 0. Correction should be strictly less than the "
                "number of observations.")


def _warn_dof(ops) -> None:
    """torch's warning, attributed to the user's line (the decomposition runs below it)."""
    loc = ops.location()
    if loc is None:
        warnings.warn(_DOF_WARNING, UserWarning, stacklevel=3)
    else:
        warnings.warn_explicit(_DOF_WARNING, UserWarning, loc.file, loc.line)


def _corrcoef(ops, input):
    """Pearson's correlation coefficients of the rows of `input` (torch.corrcoef):
    ``cov(x) / sqrt(diag ⊗ diag)``, clipped to [-1, 1] for real dtypes.  A constant row gives
    NaNs (0 / 0), as torch.

    Returns:
        (V, V); a 1-D input gives a 0-d tensor.  Integer inputs give float32.
    """
    _need_tensors(ops, "corrcoef", input=input)
    if len(input.shape) > 2:
        raise _fail(ops, RuntimeError(f"corrcoef(): expected input to have two or fewer "
                                      f"dimensions but got an input with {len(input.shape)} "
                                      f"dimensions ({_ty(input)})"))
    c = _cov(ops, input)
    if len(c.shape) == 0:
        return ops.div(c, c)
    d = ops.diagonal(c, 0, 0, 1)
    std = ops.sqrt(ops.real(d) if d.dtype.is_complex else d)
    c = ops.div(ops.div(c, ops.unsqueeze(std, 1)), ops.unsqueeze(std, 0))
    return c if c.dtype.is_complex else ops.clamp(c, -1.0, 1.0)


# ---- rot90 / take / tensor_split / block_diag -------------------------------------------------
def _rot90(ops, input, k=1, dims=(0, 1)):
    """`input` rotated by 90 degrees `k` times in the plane of `dims`, from the first dim
    towards the second (torch.rot90); k may be any int (taken mod 4).  A copy.

    Raises:
        RuntimeError: not two dims, equal dims, an input under 2-D (torch's messages).
        IndexError: a dim out of range.
    """
    _need_tensors(ops, "rot90", input=input)
    dims, nd = tuple(dims), len(input.shape)
    if len(dims) != 2:
        raise _fail(ops, RuntimeError(f"rot90: expected total rotation dims == 2, but got dims = "
                                      f"{len(dims)}"))
    if nd < 2:
        raise _fail(ops, RuntimeError(f"rot90: expected total dims >= 2, but got total dims = {nd} "
                                      f"({_ty(input)})"))
    if dims[0] == dims[1] or abs(dims[0] - dims[1]) == nd:
        raise _fail(ops, RuntimeError(f"rot90: expected rotation dims to be different, but got dim0 = "
                                      f"{dims[0]} and dim1 = {dims[1]}"))
    d0, d1 = norm_dim("rot90", dims[0], nd), norm_dim("rot90", dims[1], nd)
    k %= 4
    if k == 1:
        return ops.transpose(ops.flip(input, (d1,)), d0, d1)
    if k == 2:
        return ops.flip(input, (d0, d1))
    if k == 3:
        return ops.transpose(ops.flip(input, (d0,)), d0, d1)
    return ops.clone(input)


def _take(ops, input, index):
    """The elements of `input` read as 1-D at `index` (torch.take): the result has `index`'s
    shape; negative indices count from the end.

    Raises:
        RuntimeError: an index that is not int64.  IndexError: one out of [-numel, numel).
    """
    _need_tensors(ops, "take", input=input)
    require_index(ops, "take", index)
    if index.dtype is not T.int64:
        raise _fail(ops, RuntimeError(f"take(): Expected a long tensor for index, but got "
                                      f"{index.dtype.name} ({_ty(index)})"))
    n = math.prod(input.shape)
    out = ops.index_take(ops.reshape(input, (n,)), flat_storage_index(ops, "take", index, n), 0)
    return ops.reshape(out, tuple(index.shape))


def flat_storage_index(ops, name: str, index, n: int):
    """`index` flattened into positions of a tensor of `n` elements read as 1-D (take, put):
    negative ones count from the end.  An index known now that is outside [-n, n) raises
    torch's IndexError; a traced one is checked when the program runs."""
    known = ops.known_value(index)
    if known is not None and known.size:
        bad = known[(known >= n) | (known < -n)]
        if bad.size:
            raise _fail(ops, IndexError(f"{name}: out of range: tried to access index "
                                        f"{int(bad.flat[0])} on a tensor of {n} elements."))
    flat = ops.reshape(index, (-1,))
    flat = ops.where(ops.lt(flat, 0), ops.add(flat, n), flat)
    return checked_index(ops, name, flat, n, 0)


def _tensor_split(ops, input, indices_or_sections, dim=0):
    """Views of `input` split along `dim` (torch.tensor_split): an int n gives n pieces (the
    first ``size % n`` one longer), a list of indices cuts before each (as Python slices:
    clamped, an index below the previous one gives an empty piece).

    Raises:
        RuntimeError: a 0-d input, sections < 1 (torch's messages).  IndexError: a bad dim.
    """
    _need_tensors(ops, "tensor_split", input=input)
    if not input.shape:
        raise _fail(ops, RuntimeError("tensor_split expected at least a 1-dimensional tensor, "
                                      "but got a tensor with 0 dims"))
    d = norm_dim("tensor_split", dim, len(input.shape))
    n = input.shape[d]
    s = indices_or_sections
    if isinstance(s, int):
        if s <= 0:
            raise _fail(ops, RuntimeError(f"tensor_split: number of sections must be larger than 0, got {s}"))
        small, extra = divmod(n, s)
        sizes = [small + 1] * extra + [small] * (s - extra)
        bounds, start = [], 0
        for size in sizes:
            bounds.append((start, start + size))
            start += size
    else:
        cuts = [0] + [_clamp_index(int(i), n) for i in s] + [n]
        bounds = [(a, max(a, b)) for a, b in zip(cuts, cuts[1:])]
    nd = len(input.shape)
    out = []
    for start, stop in bounds:
        starts, stops = [0] * nd, list(input.shape)
        starts[d], stops[d] = start, stop
        out.append(ops.slice(input, tuple(starts), tuple(stops), (1,) * nd))
    return tuple(out)


def _clamp_index(i: int, n: int) -> int:
    """A slice bound as Python reads it: negative counts from the end, clamped to [0, n]."""
    if i < 0:
        i += n
    return min(max(i, 0), n)


def _block_diag(ops, *tensors):
    """The tensors (0-d, 1-d as one row, or 2-d) placed along the diagonal of one matrix
    (torch.block_diag), zeros elsewhere; of the tensors' promoted dtype.

    Raises:
        RuntimeError: a tensor of over 2 dims (torch's message).
    """
    for i, t in enumerate(tensors):
        if not ops.is_operand(t):
            raise _fail(ops, TypeError(f"block_diag(): expected a list of tensors, got "
                                       f"{type(t).__name__} at entry {i}"))
        if len(t.shape) > 2:
            raise _fail(ops, RuntimeError(f"torch.block_diag: Input tensors must have 2 or fewer "
                                          f"dimensions. Input {i} has {len(t.shape)} dimensions"))
    dtype = tensors[0].dtype
    for t in tensors[1:]:
        dtype = T.promote_types(dtype, t.dtype)
    blocks = []
    for t in tensors:
        b = ops.reshape(t, (1, 1) if not t.shape else (1, t.shape[0]) if len(t.shape) == 1
                        else tuple(t.shape))
        blocks.append(b if b.dtype is dtype else ops.convert(b, dtype))
    width = sum(b.shape[1] for b in blocks)
    rows, left = [], 0
    for b in blocks:
        right = width - left - b.shape[1]
        rows.append(ops.pad(b, (left, right)) if left or right else b)
        left += b.shape[1]
    return ops.cat(rows, 0) if len(rows) > 1 else ops.clone(rows[0])


defcomposite("cov", "input: Tensor, *, correction=1, fweights: Tensor | None = None, "
             "aweights: Tensor | None = None", _cov, ref="torch.cov", flags=COMPLEX)
defcomposite("corrcoef", "input: Tensor", _corrcoef, ref="torch.corrcoef", flags=COMPLEX)
defcomposite("rot90", "input: Tensor, k=1, dims=(0, 1)", _rot90, ref="torch.rot90",
             flags=COMPLEX, node_inputs=("input",))
defcomposite("take", "input: Tensor, index: Tensor", _take, ref="torch.take", flags=COMPLEX,
             node_inputs=("input",))
defcomposite("tensor_split", "input: Tensor, indices_or_sections, dim=0", _tensor_split,
             ref="torch.tensor_split (sections, or indices; a tensor of them: tg.tensor_split)",
             flags=COMPLEX | VIEW, node_name="SliceBackward0")   # torch: each piece a slice
defcomposite("block_diag", "*tensors: Tensor", _block_diag, ref="torch.block_diag",
             flags=COMPLEX, node_inputs=("tensors",))
