"""Linear algebra: matrix products and torch.linalg's solves, factorizations and norms.

Products (matmul, mm, bmm, mv, dot, outer, tensordot, einsum) are decompositions onto
`batched_matmul`, so their gradients come from its VJP.  The torch.linalg ops are
primitives with a numpy.linalg kernel (a jax.numpy.linalg one where it differs) and a VJP
written in IR ops, itself differentiable; each rule names its source.  The ops behind
`tg.linalg.*` are named ``linalg_<name>`` and flagged INTERNAL so they stay out of
`tg.*` / Tensor methods; tracegrad/linalg.py is their user API.  Where gradients are
undefined (repeated eigenvalues or singular values, rank-deficient QR): docs/ops_linalg.md.
"""
from __future__ import annotations

import math

import numpy as np

from .. import types as T
from ..builder import with_location
from ..errors import DTypeError, LinAlgError, ShapeError
from ..registry import COMPLEX, INTERNAL, REQUIRED, defop
from ._common import conj_if_complex, fmt_types, mul_conj, norm_dim, norm_dims, reduce_shape
from ._common import bilinear_jvp


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
    nd = len(x.shape)
    return b.permute(x, tuple(range(nd - 2)) + (nd - 1, nd - 2))


def _mH(b, x):
    """The conjugate transpose of the last two dims (the transpose for a real dtype)."""
    return conj_if_complex(b, _mT(b, x))


def _bmm_kernel(xp, a, b):
    if xp is np and b.ndim == 2 and a.ndim > 2:
        # one 2-D GEMM instead of NumPy's loop of one BLAS call per batch matrix
        out = xp.matmul(a.reshape(-1, a.shape[-1]), b).reshape(a.shape[:-1] + b.shape[-1:])
    else:
        out = xp.matmul(a, b)
    # NumPy's bfloat16 matmul (ml_dtypes) returns float32
    return out if out.dtype == a.dtype else out.astype(a.dtype)


def _bmm_vjp(b, ct, x, y, out):
    """dA = ct @ B^H, dB = A^H @ ct (^H: conjugate transpose; plain transpose for real dtypes);
    the autodiff pass sums broadcast batch dims away. A 2-D B shared by a batch of A (a linear
    layer) gets dB as one GEMM over the flattened batch, not a batch of products then a sum."""
    dx = b.batched_matmul(ct, conj_if_complex(b, _mT(b, y)))
    if len(y.shape) == 2 and len(x.shape) > 2:
        k, n = y.shape
        x2, ct2 = b.reshape(x, (-1, k)), b.reshape(ct, (-1, n))
        return [dx, b.batched_matmul(conj_if_complex(b, _mT(b, x2)), ct2)]
    return [dx, b.batched_matmul(conj_if_complex(b, _mT(b, x)), ct)]


defop("batched_matmul", "input, other", infer=_bmm_infer, flags=INTERNAL | COMPLEX,
      kernel=_bmm_kernel, ref="torch.matmul (both operands >= 2-D)", vjp=_bmm_vjp,
      jvp=bilinear_jvp("batched_matmul"))


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


defop("matmul", "input, other", decomp=_matmul, ref="torch.matmul", flags=COMPLEX,
      node_name="MmBackward0")


# ---- helpers: errors in decompositions, and small matrices built from IR ops ----------------
def _ty(x) -> T.TensorType:
    return T.TensorType(tuple(x.shape), x.dtype)


def _fail(ops, err: Exception) -> Exception:
    """`err` with the user's line: decompositions raise outside Frontend.call's handler."""
    return with_location(err, ops.location())


def _need_tensors(ops, name, **named) -> None:
    for arg, x in named.items():
        if not ops.is_operand(x):
            raise _fail(ops, TypeError(f"{name}(): argument '{arg}' must be a tensor, got "
                                       f"{type(x).__name__}"))


def _same_dtype(ops, name, a, b, what="expected both operands to have the same dtype") -> None:
    if a.dtype is not b.dtype:
        raise _fail(ops, DTypeError(f"{name}: {what}, got {_ty(a)} and {_ty(b)} "
                                    "(cast one with .to(dtype), as torch requires)"))


def _mm(b, x, y):
    return b.batched_matmul(x, y)


def _index_grid(b, n, m, k=0):
    """(rows + k, cols) as int64 (n, 1) and (1, m) grids."""
    rows = b.reshape(b.arange(k, n + k, 1, T.int64), (n, 1))
    return rows, b.reshape(b.arange(0, m, 1, T.int64), (1, m))


def _eye_mask(b, n):
    return b.eq(*_index_grid(b, n, n))


def _eye(b, n, dtype):
    return b.convert(_eye_mask(b, n), dtype)


def _tril(b, x, k=0):
    """torch.tril on the last two dims: keep entries with col <= row + k."""
    rows, cols = _index_grid(b, x.shape[-2], x.shape[-1], k)
    return b.where(b.ge(rows, cols), x, 0.0)


def _diag_embed(b, v):
    return b.mul(b.unsqueeze(v, -1), _eye(b, v.shape[-1], v.dtype))


def _narrow(b, x, dim, start, stop):
    nd = len(x.shape)
    dim %= nd
    starts = tuple(start if i == dim else 0 for i in range(nd))
    stops = tuple(stop if i == dim else s for i, s in enumerate(x.shape))
    return b.slice(x, starts, stops, (1,) * nd)


def _as_matrix_batch(b, v):
    """(*) -> (*, 1, 1), to scale a batch of matrices."""
    return b.reshape(v, tuple(v.shape) + (1, 1))


def _is_zero(ct) -> bool:
    """A cotangent the autodiff pass filled with zeros (an unused output of a multi-output op).

    eigh/svd skip the terms of such a cotangent: they would be 0 * inf at repeated
    eigenvalues / singular values, where torch leaves the term out (undefined gradient).
    """
    node = getattr(ct, "node", None)
    return node is not None and node.op == "full" and node.attrs.get("fill_value") == 0


# ---- mm, bmm, mv, dot, outer: torch's shape rules on top of batched_matmul -------------------
def _mm_decomp(ops, input, mat2):
    _need_tensors(ops, "mm", input=input, mat2=mat2)
    for arg, x in (("self", input), ("mat2", mat2)):
        if len(x.shape) != 2:
            raise _fail(ops, ShapeError(f"mm: {arg} must be a matrix, got {_ty(x)}"))
    (n, k), (k2, m) = input.shape, mat2.shape
    if k != k2:
        raise _fail(ops, ShapeError(f"mm: mat1 and mat2 shapes cannot be multiplied ({n}x{k} and "
                                    f"{k2}x{m}), got {_ty(input)} @ {_ty(mat2)}"))
    _same_dtype(ops, "mm", input, mat2)
    return ops.batched_matmul(input, mat2)


def _bmm_decomp(ops, input, mat2):
    _need_tensors(ops, "bmm", input=input, mat2=mat2)
    for arg, x in (("batch1", input), ("batch2", mat2)):
        if len(x.shape) != 3:
            raise _fail(ops, ShapeError(f"bmm: {arg} must be a 3D tensor, got {_ty(x)}"))
    want = [input.shape[0], input.shape[2]]
    if list(mat2.shape[:2]) != want:
        raise _fail(ops, ShapeError(f"bmm: Expected size for first two dimensions of batch2 tensor "
                                    f"to be: {want} but got: {list(mat2.shape[:2])}, got "
                                    f"{_ty(input)} @ {_ty(mat2)}"))
    _same_dtype(ops, "bmm", input, mat2)
    return ops.batched_matmul(input, mat2)


def _mv_decomp(ops, input, vec):
    _need_tensors(ops, "mv", input=input, vec=vec)
    if len(input.shape) != 2 or len(vec.shape) != 1:
        raise _fail(ops, ShapeError(f"mv: expected a matrix (2-D) and a vector (1-D), got "
                                    f"{_ty(input)} and {_ty(vec)}"))
    if input.shape[1] != vec.shape[0]:
        raise _fail(ops, ShapeError(f"mv: size mismatch, got mat ({input.shape[0]}x"
                                    f"{input.shape[1]}), vec ({vec.shape[0]})"))
    _same_dtype(ops, "mv", input, vec)
    return ops.squeeze(ops.batched_matmul(input, ops.unsqueeze(vec, 1)), -1)


def _dot_decomp(ops, input, tensor):
    _need_tensors(ops, "dot", input=input, tensor=tensor)
    if len(input.shape) != 1 or len(tensor.shape) != 1:
        raise _fail(ops, ShapeError(f"dot: 1D tensors expected, but got {len(input.shape)}D and "
                                    f"{len(tensor.shape)}D tensors ({_ty(input)}, {_ty(tensor)})"))
    if input.shape != tensor.shape:
        raise _fail(ops, ShapeError(f"dot: inconsistent tensor size, expected tensor "
                                    f"{list(input.shape)} and src {list(tensor.shape)} to have "
                                    f"the same number of elements"))
    _same_dtype(ops, "dot", input, tensor, "expected both vectors to have same dtype")
    n = input.shape[0]
    out = ops.batched_matmul(ops.reshape(input, (1, n)), ops.reshape(tensor, (n, 1)))
    return ops.reshape(out, ())


def _outer_decomp(ops, input, vec2):
    _need_tensors(ops, "outer", input=input, vec2=vec2)
    for arg, x in (("self", input), ("vec2", vec2)):
        if len(x.shape) != 1:
            raise _fail(ops, ShapeError(f"outer: Expected 1-D argument {arg}, but got "
                                        f"{len(x.shape)}-D ({_ty(x)})"))
    return ops.mul(ops.unsqueeze(input, 1), vec2)   # promotes as torch.outer does


def _vdot_decomp(ops, input, other):
    _need_tensors(ops, "vdot", input=input, other=other)
    if len(input.shape) != 1 or len(other.shape) != 1:
        raise _fail(ops, ShapeError(f"vdot: 1D tensors expected, but got {len(input.shape)}D and "
                                    f"{len(other.shape)}D tensors ({_ty(input)}, {_ty(other)})"))
    _same_dtype(ops, "vdot", input, other, "expected both vectors to have same dtype")
    conj = ops.conj(input) if input.dtype.is_complex else input
    return _dot_decomp(ops, conj, other)


# dot does not conjugate (sum x * y, also for complex); vdot conjugates its first argument
defop("mm", "input, mat2", decomp=_mm_decomp, ref="torch.mm", flags=COMPLEX)
defop("bmm", "input, mat2", decomp=_bmm_decomp, ref="torch.bmm", flags=COMPLEX)
defop("mv", "input, vec", decomp=_mv_decomp, ref="torch.mv", flags=COMPLEX,
      node_name="MvBackward0")
defop("dot", "input, tensor", decomp=_dot_decomp, ref="torch.dot", flags=COMPLEX)
defop("vdot", "input, other", decomp=_vdot_decomp, ref="torch.vdot (sum conj(x) * y)",
      flags=COMPLEX)
defop("outer", "input, vec2", decomp=_outer_decomp, ref="torch.outer", flags=COMPLEX,
      node_name="MulBackward0")


# ---- tensordot --------------------------------------------------------------------------------
def _tensordot_dims(ops, a, b, dims):
    na, nb = len(a.shape), len(b.shape)
    if isinstance(dims, bool) or not isinstance(dims, (int, list, tuple)):
        raise _fail(ops, NotImplementedError(
            f"tensordot: dims of type {type(dims).__name__} is not supported; pass an int or "
            "two lists of dims"))
    if isinstance(dims, int):
        if dims < 0:
            raise _fail(ops, ValueError(f"tensordot expects dims >= 0, but got dims={dims}"))
        if dims > na or dims > nb:
            raise _fail(ops, ValueError(f"tensordot expects dims < ndim_a or ndim_b, but got "
                                        f"dims={dims} ({_ty(a)}, {_ty(b)})"))
        return list(range(na - dims, na)), list(range(dims))
    if len(dims) != 2 or not all(isinstance(d, (list, tuple)) for d in dims):
        raise _fail(ops, TypeError(f"tensordot: dims must be an int or a pair of lists of dims, "
                                   f"got {dims!r}"))
    da, db = list(dims[0]), list(dims[1])
    if len(da) != len(db):
        raise _fail(ops, ValueError(f"tensordot: both dimension lists should have same length, "
                                    f"got {da} and {db}"))
    try:
        da = [norm_dim("tensordot", d, na) for d in da]
        db = [norm_dim("tensordot", d, nb) for d in db]
    except (IndexError, TypeError) as e:
        raise _fail(ops, e) from None
    for lst in (da, db):
        if len(set(lst)) != len(lst):
            raise _fail(ops, ValueError(f"tensordot: a dim appears multiple times in the list of "
                                        f"dims {lst}"))
    return da, db


def _tensordot(ops, a, b, dims=2):
    _need_tensors(ops, "tensordot", a=a, b=b)
    da, db = _tensordot_dims(ops, a, b, dims)
    for i, j in zip(da, db):
        if a.shape[i] != b.shape[j]:
            raise _fail(ops, ShapeError(
                f"tensordot: contracted dimensions need to match, but first has size "
                f"{a.shape[i]} in dim {i} and second has size {b.shape[j]} in dim {j} "
                f"({_ty(a)}, {_ty(b)})"))
    _same_dtype(ops, "tensordot", a, b, "both inputs should have same dtype")
    free_a = [i for i in range(len(a.shape)) if i not in da]
    free_b = [j for j in range(len(b.shape)) if j not in db]
    k = math.prod(a.shape[i] for i in da)
    a2 = ops.reshape(ops.permute(a, tuple(free_a + da)),
                     (math.prod(a.shape[i] for i in free_a), k))
    b2 = ops.reshape(ops.permute(b, tuple(db + free_b)),
                     (k, math.prod(b.shape[j] for j in free_b)))
    return ops.reshape(ops.batched_matmul(a2, b2),
                       tuple(a.shape[i] for i in free_a) + tuple(b.shape[j] for j in free_b))


defop("tensordot", "a, b", attrs=(("dims", 2),), decomp=_tensordot, ref="torch.tensordot",
      flags=COMPLEX,
      node_name="ViewBackward0")


# ---- einsum: labels -> diagonals, early sums, then pairwise batched matmuls ------------------
def _einsum_parse(ops, equation, operands):
    """Label lists per operand and for the output; an ellipsis dim is the label ("...", j)."""
    eq = equation.replace(" ", "")
    lhs, arrow, rhs = eq.partition("->")
    terms = lhs.split(",")
    if len(terms) > len(operands):
        raise _fail(ops, ValueError("einsum(): fewer operands were provided than specified in "
                                    f"the equation {equation!r}"))
    if len(terms) < len(operands):
        raise _fail(ops, ValueError("einsum(): more operands were provided than specified in "
                                    f"the equation {equation!r}"))

    def letters(term, what):
        body = term.replace("...", "", 1)
        if "." in body:
            raise _fail(ops, ValueError(f"einsum(): found '.' for {what} that is not part of any "
                                        "ellipsis (one '...' at most)"))
        for c in body:
            if not ("a" <= c <= "z" or "A" <= c <= "Z"):
                raise _fail(ops, ValueError(
                    f"einsum(): invalid subscript {c!r} given in the equation string "
                    f"{equation!r}, subscripts must be in [a-zA-Z]"))
        return term.partition("...")

    n_ell = 0
    for i, (term, x) in enumerate(zip(terms, operands)):
        before, ell, after = letters(term, f"operand {i}")
        nd, named = len(x.shape), len(before) + len(after)
        if (named != nd and not ell) or named > nd:
            raise _fail(ops, ShapeError(
                f"einsum(): the number of subscripts in the equation ({named}) does not match "
                f"the number of dimensions ({nd}) for operand {i} ({_ty(x)})"
                + ("" if ell else " and no ellipsis was given")))
        n_ell = max(n_ell, nd - named if ell else 0)
    labels = []
    for term, x in zip(terms, operands):
        before, ell, after = term.partition("...")
        k = len(x.shape) - len(before) - len(after)
        labels.append(list(before) + [("...", n_ell - k + j) for j in range(k if ell else 0)]
                      + list(after))
    ell_labels = [("...", j) for j in range(n_ell)]
    if arrow:
        before, ell, after = letters(rhs, "the output")
        out = list(before) + (ell_labels if ell else []) + list(after)
        for c in before + after:
            if (before + after).count(c) > 1:
                raise _fail(ops, ValueError(f"einsum(): output subscript {c} appears more than "
                                            "once in the output"))
            if not any(c in ls for ls in labels):
                raise _fail(ops, ValueError(f"einsum(): output subscript {c} does not appear in "
                                            "the equation for any input operand"))
    else:   # implicit output: the ellipsis, then the letters used once, in ASCII order
        flat = [c for ls in labels for c in ls if isinstance(c, str)]
        out = ell_labels + sorted(c for c in set(flat) if flat.count(c) == 1)
    return labels, out


def _take_diagonals(ops, i, x, labels):
    """A label repeated in one operand ('ii->i') takes the diagonal: mask with eye, sum one."""
    labels = list(labels)
    while len(set(labels)) != len(labels):
        p = next(k for k, c in enumerate(labels) if labels.count(c) > 1)
        q = labels.index(labels[p], p + 1)
        n = x.shape[p]
        if x.shape[q] != n:
            raise _fail(ops, ShapeError(f"einsum(): subscript {labels[p]} is repeated for operand "
                                        f"{i} but the sizes don't match, {x.shape[q]} != {n} "
                                        f"({_ty(x)})"))
        shape = [1] * len(x.shape)
        shape[p] = shape[q] = n
        x = ops.sum(ops.mul(x, ops.reshape(_eye(ops, n, x.dtype), tuple(shape))), (q,))
        labels.pop(q)
    return x, labels


def _contract(ops, a, la, b, lb, keep, sizes):
    """Contract two labelled operands over their shared labels not in `keep` (one bmm)."""
    batch = [c for c in la if c in lb and c in keep]
    summed = [c for c in la if c in lb and c not in keep]
    only_a = [c for c in la if c not in lb]
    only_b = [c for c in lb if c not in la]

    shared = set(batch) | set(summed)   # size-1 dims broadcast against the other operand

    def arrange(x, lx, groups):
        flat = [c for g in groups for c in g]
        x = ops.permute(x, tuple(lx.index(c) for c in flat))
        full = tuple(sizes[c] if c in shared else x.shape[k] for k, c in enumerate(flat))
        if tuple(x.shape) != full:
            x = ops.expand(x, full)
        size = dict(zip(flat, full))
        return ops.reshape(x, tuple(math.prod(size[c] for c in g) for g in groups))

    a3 = arrange(a, la, (batch, only_a, summed))
    b3 = arrange(b, lb, (batch, summed, only_b))
    out = ops.batched_matmul(a3, b3)
    shape = ([sizes[c] for c in batch] + [a.shape[la.index(c)] for c in only_a]
             + [b.shape[lb.index(c)] for c in only_b])
    return ops.reshape(out, tuple(shape)), batch + only_a + only_b


def _einsum(ops, *operands, equation):
    if not isinstance(equation, str):
        raise _fail(ops, TypeError(f"einsum(): the equation must be a string, got "
                                   f"{type(equation).__name__}"))
    for i, x in enumerate(operands):
        _need_tensors(ops, "einsum", **{f"operands[{i}]": x})
    for x in operands[1:]:
        _same_dtype(ops, "einsum()", operands[0], x, "operands must share one dtype")
    labels, out = _einsum_parse(ops, equation, operands)
    sizes: dict = {}
    terms = []
    for i, (x, ls) in enumerate(zip(operands, labels)):
        x, ls = _take_diagonals(ops, i, x, ls)
        for c, s in zip(ls, x.shape):
            seen = sizes.get(c, s)
            if s != seen and 1 not in (s, seen):
                name = "the ellipsis" if isinstance(c, tuple) else f"subscript {c}"
                raise _fail(ops, ShapeError(
                    f"einsum(): {name} has size {s} for operand {i} which does not broadcast "
                    f"with previously seen size {seen} ({_ty(operands[i])})"))
            sizes[c] = max(s, seen)
        terms.append((x, ls))

    def presum(x, ls, later):
        """Sum labels that no later operand and not the output use."""
        drop = [k for k, c in enumerate(ls) if c not in out and not any(c in o for o in later)]
        if drop:
            x = ops.sum(x, tuple(drop))
            ls = [c for k, c in enumerate(ls) if k not in drop]
        return x, ls

    later = [ls for _, ls in terms]
    x, ls = presum(*terms[0], later[1:])
    for k in range(1, len(terms)):
        y, ly = presum(terms[k][0], terms[k][1], [ls] + later[k + 1:])
        keep = set(out).union(*map(set, later[k + 1:]))
        x, ls = _contract(ops, x, ls, y, ly, keep, sizes)
    x, ls = presum(x, ls, [])
    target = tuple(sizes[c] for c in out)
    x = ops.permute(x, tuple(ls.index(c) for c in out))
    return x if tuple(x.shape) == target else ops.expand(x, target)


# torch.einsum(equation, *operands) takes the equation first; tracegrad/linalg.py's `einsum`
# gives that signature (this op is INTERNAL: a variadic registry op takes its list first).
defop("einsum", "*operands", attrs=(("equation", REQUIRED),), decomp=_einsum,
      flags=INTERNAL | COMPLEX,
      ref="torch.einsum (contracted left to right)",
      node_name="ViewBackward0")


# ---- torch.linalg: type inference and kernels ----------------------------------------------
def _require_float(name: str, t: T.TensorType, low_precision=False) -> None:
    if not t.dtype.is_floating_point:
        raise DTypeError(f"{name}: Expected a floating point tensor as input. Got {t}")
    if not low_precision and t.dtype not in (T.float32, T.float64):
        raise DTypeError(f"{name}: Low precision dtypes not supported. Got {t}")


def _require_matrix(name: str, t: T.TensorType, square=False) -> None:
    """At least 2-D (square if asked), float32/float64/complex64/complex128."""
    if t.ndim < 2:
        raise ShapeError(f"{name}: The input tensor A must have at least 2 dimensions, got {t}")
    if square and t.shape[-1] != t.shape[-2]:
        raise ShapeError(f"{name}: A must be batches of square matrices, but they are "
                         f"{t.shape[-2]} by {t.shape[-1]} matrices ({t})")
    if not t.dtype.is_complex:   # complex64/complex128 are the only complex dtypes
        _require_float(name, t)


def _square_infer(name, out=lambda t: t):
    def infer(types, **_):
        _require_matrix(name, types[0], square=True)
        return out(types[0])
    return infer


def _batch_element(a: np.ndarray, probe) -> str:
    if a.ndim <= 2:
        return ""
    for i, m in enumerate(a.reshape((-1,) + a.shape[-2:])):
        try:
            probe(m)
        except np.linalg.LinAlgError:
            return f"(Batch element {i}): "
    return ""


def _array_type(a: np.ndarray) -> T.TensorType:
    return T.TensorType(a.shape, T.from_numpy(a.dtype))


def _inv_np(xp, a):
    try:
        return np.linalg.inv(a)
    except np.linalg.LinAlgError:
        raise LinAlgError(f"linalg.inv: {_batch_element(a, np.linalg.inv)}the inversion could not "
                          f"be completed because the input matrix is singular "
                          f"({_array_type(a)})") from None


def _broadcast_batch(xp, a, b):
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    return (xp.broadcast_to(a, batch + a.shape[-2:]), xp.broadcast_to(b, batch + b.shape[-2:]))


def _solve_np(xp, a, b):
    a, b = _broadcast_batch(np, a, b)
    try:
        return np.linalg.solve(a, b)
    except np.linalg.LinAlgError:
        raise LinAlgError(f"linalg.solve: {_batch_element(a, np.linalg.inv)}The solver failed "
                          f"because the input matrix is singular ({_array_type(a)})") from None


def _cholesky_np(xp, a, *, upper):
    try:
        return np.linalg.cholesky(a, upper=upper)
    except np.linalg.LinAlgError:
        where = _batch_element(a, lambda m: np.linalg.cholesky(m, upper=upper))
        raise LinAlgError(f"linalg.cholesky: {where}The factorization could not be completed "
                          f"because the input is not positive-definite ({_array_type(a)})"
                          ) from None


def _cholesky_jax(xp, a, *, upper):
    # jax reads the lower triangle only; torch/numpy with upper=True read the upper one
    if not upper:
        return xp.linalg.cholesky(a, symmetrize_input=False)
    return xp.swapaxes(xp.linalg.cholesky(xp.swapaxes(a, -1, -2), symmetrize_input=False), -1, -2)


def _svd_np(xp, a, **kw):
    try:
        return np.linalg.svd(a, **kw)
    except np.linalg.LinAlgError:
        raise LinAlgError(f"linalg.svd: the algorithm failed to converge ({_array_type(a)}; "
                          "does it hold NaN or Inf?)") from None


# ---- torch.linalg: VJP rules -------------------------------------------------------------------
# One rule per op for real and complex A: ^H is the conjugate transpose (`_mH`, the transpose
# for a real dtype, so real programs are unchanged), and a complex rule adds the terms torch's
# has for the phases of complex factors (torch's conjugate Wirtinger convention: the gradient
# of a real loss is dL/dRe A + i dL/dIm A; docs/autograd.md, "Complex numbers").
def _inv_vjp(b, ct, a, out):
    # d(A^-1) = -A^-1 dA A^-1, so gA = -A^-H ct A^-H (torch derivatives.yaml, linalg_inv_ex)
    t = _mH(b, out)
    return [b.neg(_mm(b, _mm(b, t, ct), t))]


def _solve_vjp(b, ct, a, rhs, x):
    # X = A^-1 B: gB = A^-H ct (a solve with the conjugate-transposed matrix), gA = -gB X^H
    # (torch linalg_solve_backward); the autodiff pass sums broadcast batch dims.
    g_rhs = b.batched_solve(_mH(b, a), ct)
    return [b.neg(_mm(b, g_rhs, _mH(b, x))), g_rhs]


def _det_vjp(b, ct, a, det):
    # Jacobi's formula: d det(A) = det(A) tr(A^-1 dA), so gA = ct conj(det(A)) A^-H.  At an
    # exactly singular A (det == 0) the inverse is taken of the identity instead, giving gA = 0
    # as torch does (the true gradient there is the cofactor matrix; see docs/ops_linalg.md).
    singular = _as_matrix_batch(b, b.eq(det, 0.0))
    safe = b.where(singular, _eye(b, a.shape[-1], a.dtype), a)
    return [b.mul(_as_matrix_batch(b, mul_conj(b, ct, det)), _mH(b, b.linalg_inv(safe)))]


def _slogdet_vjp(b, ct, a, sign, logabsdet):
    # d log|det A| = Re tr(A^-1 dA), so gA = g A^-H for the logabsdet cotangent g.  A real sign
    # is piecewise constant; a complex one, e^{i theta}, turns: d sign = i sign Im tr(A^-1 dA),
    # which puts -i Im(conj(g_sign) sign) into g (torch slogdet_backward).
    g_sign, g = ct
    if a.dtype.is_complex:
        if _is_zero(g_sign):
            g = b.convert(g, a.dtype)
        else:
            g = b.complex(g, b.neg(b.imag(b.mul(b.conj(g_sign), sign))))
    return [b.mul(_as_matrix_batch(b, g), _mH(b, b.linalg_inv(a)))]


def _cholesky_vjp(b, ct, a, out, *, upper):
    # torch cholesky_backward (I. Murray 2016, "Differentiation of the Cholesky decomposition",
    # arXiv:1602.07527): P = tril(L^H gL), gA = L^-H (P + tril(P, -1)^H) L^-1 / 2.  Symmetric
    # for real A.  For complex A, as torch's, Hermitian but for i L^-H Im(diag P) L^-1 / 2: a
    # skew-Hermitian term that no Hermitian change of A sees (L's diagonal is real).
    l, gl = (_mH(b, out), _mH(b, ct)) if upper else (out, ct)
    p = _tril(b, _mm(b, _mH(b, l), gl))
    phi = b.mul(b.add(p, _mH(b, _tril(b, p, -1))), 0.5)
    linv = b.linalg_inv(l)
    return [_mm(b, _mm(b, _mH(b, linv), phi), linv)]


def _copyltu(b, m):
    """tril(M) + tril(M, -1)^H; for complex M with Re diag(M) on the diagonal: R's diagonal is
    real (LAPACK's QR, as torch's and jax's), which fixes the phases of Q's columns, so the
    imaginary part of diag(M) moves nothing."""
    if m.dtype.is_complex:
        m = b.where(_eye_mask(b, m.shape[-1]), b.real(m), m)
    return b.add(_tril(b, m), _mH(b, _tril(b, m, -1)))


def _qr_backward_tall(b, gq, gr, q, r):
    # m >= n (H.-J. Liao, J.-G. Liu, L. Wang, T. Xiang 2019, "Differentiable Programming Tensor
    # Networks", arXiv:1903.09650, eq. 10): M = R gR^H - gQ^H Q, gA = (gQ + Q copyltu(M)) R^-H.
    m = b.sub(_mm(b, r, _mH(b, gr)), _mm(b, _mH(b, gq), q))
    lhs = b.add(gq, _mm(b, q, _copyltu(b, m)))
    return _mH(b, b.batched_solve(r, _mH(b, lhs)))    # lhs R^-H = (R^-1 lhs^H)^H


def _qr_vjp(b, ct, a, q, r, *, mode):
    m, n = a.shape[-2:]
    if mode == "r":
        raise RuntimeError("linalg.qr: The derivative of linalg.qr depends on Q, which is not "
                           "computed when mode='r'. Please use linalg.qr(A, mode='reduced') if "
                           "you are going to differentiate through linalg.qr.")
    if mode == "complete" and m > n:
        raise RuntimeError("linalg.qr: The QR decomposition is not differentiable when "
                           "mode='complete' and nrows > ncols.")
    gq, gr = ct
    if m >= n:
        return [_qr_backward_tall(b, gq, gr, q, r)]
    # m < n (same paper): A = [X | Y], R = [U | V] with X = QU, Y = QV: X's cotangents are
    # (gQ + Y gV^H, gU) through the square QR, and gY = Q gV.
    y, gu, gv = _narrow(b, a, -1, m, n), _narrow(b, gr, -1, 0, m), _narrow(b, gr, -1, m, n)
    gx = _qr_backward_tall(b, b.add(gq, _mm(b, y, _mH(b, gv))), gu, q, _narrow(b, r, -1, 0, m))
    return [b.cat([gx, _mm(b, q, gv)], -1)]


def _gaps(b, w, square=False):
    """E_ij = w_j - w_i (w_j^2 - w_i^2 if square) off the diagonal, 1 on it (torch's E)."""
    wj, wi = b.unsqueeze(w, -2), b.unsqueeze(w, -1)
    e = b.sub(b.mul(wj, wj), b.mul(wi, wi)) if square else b.sub(wj, wi)
    return b.where(_eye_mask(b, w.shape[-1]), 1.0, e)


def _skew_over(b, x, e):
    """(X - X^H) / E.  For complex X without its diagonal, 2i Im diag(X): that part is how the
    loss changes with the phases of the eigen- / singular vectors (`gauge_check`, `_svd_phase`)."""
    d = b.div(b.sub(x, _mH(b, x)), e)
    if x.dtype.is_complex:
        d = b.where(_eye_mask(b, x.shape[-1]), 0.0, d)
    return d


def _im_diag(b, x):
    return b.imag(b.diagonal(x, 0, -2, -1))


def _eigh_vjp(b, ct, a, w, v, *, UPLO):
    # gA = V (diag(gw) + skew(V^H gV) / E) V^H with skew(X) = (X - X^H) / 2 (M. Giles 2008,
    # "An extended collection of matrix derivative results", sec. 3.1; torch
    # linalg_eig_backward for Hermitian input).  Symmetric (Hermitian), like torch's; inf/nan
    # at repeated eigenvalues unless the eigenvectors' cotangent is zero.  Complex
    # eigenvectors are defined up to a phase each, v_k e^{i phi_k}: a loss that depends on the
    # phases (Im diag(V^H gV) != 0) has no gradient, and the backward raises, as torch's.
    gw, gv = ct
    inner = _diag_embed(b, gw)
    if not _is_zero(gv):
        vhg = _mm(b, _mH(b, v), gv)
        inner = b.add(inner, b.mul(_skew_over(b, vhg, _gaps(b, w)), 0.5))
        if v.dtype.is_complex:
            im = _im_diag(b, vhg)
            inner = b.gauge_check(inner, im, b.full(im.shape, 0, im.dtype), "linalg.eigh")
    if inner.dtype is not v.dtype:   # complex V, only the (real) eigenvalues used
        inner = b.convert(inner, v.dtype)
    return [_mm(b, _mm(b, v, inner), _mH(b, v))]


def _svd_vjp(b, ct, a, u, s, vh, *, full_matrices):
    # torch svd_backward (J. Townsend 2016, "Differentiating the Singular Value Decomposition";
    # C. Ionescu et al. 2015): with V = Vh^H, E_jk = s_k^2 - s_j^2, skew(X) = X - X^H,
    #   gA = U [(skew(U^H gU) / E) S + S (skew(V^H gV) / E) + diag(gS)] V^H
    #        + (I - U U^H) gU S^-1 V^H + U S^-1 gV^H (I - V V^H).
    # With full_matrices the extra columns of U / rows of Vh are an arbitrary basis: their
    # cotangents are ignored, as in torch.  Complex: see `_svd_phase`.
    gu, gs, gvh = ct
    m, n = a.shape[-2:]
    k = min(m, n)
    use_u, use_v = not _is_zero(gu), not _is_zero(gvh)
    if u.shape[-1] != k:
        u, gu = _narrow(b, u, -1, 0, k), _narrow(b, gu, -1, 0, k)
    if vh.shape[-2] != k:
        vh, gvh = _narrow(b, vh, -2, 0, k), _narrow(b, gvh, -2, 0, k)
    if not (use_u or use_v):
        return [_mm(b, b.mul(u, b.unsqueeze(gs, -2)), vh)]
    inner = _diag_embed(b, gs)
    e = _gaps(b, s, square=True)
    s_row, s_col = b.unsqueeze(s, -2), b.unsqueeze(s, -1)
    utg = vtg = None
    if use_u:
        utg = _mm(b, _mH(b, u), gu)
        inner = b.add(inner, b.mul(_skew_over(b, utg, e), s_row))
    if use_v:
        vtg = _mm(b, vh, _mH(b, gvh))
        inner = b.add(inner, b.mul(s_col, _skew_over(b, vtg, e)))
    if a.dtype.is_complex:
        inner = _svd_phase(b, inner, s, utg, vtg)
    ga = _mm(b, _mm(b, u, inner), vh)
    if use_u and m > k:
        gus = b.div(gu, s_row)
        ga = b.add(ga, _mm(b, b.sub(gus, _mm(b, u, _mm(b, _mH(b, u), gus))), vh))
    if use_v and n > k:
        gvs = b.div(gvh, s_col)
        ga = b.add(ga, _mm(b, u, b.sub(gvs, _mm(b, _mm(b, gvs, _mH(b, vh)), vh))))
    return [ga]


def _svd_phase(b, inner, s, utg, vtg):
    """The phase term of complex SVD's gradient.  (u_k, v_k) -> (u_k, v_k) e^{i phi_k} leaves A
    unchanged, so a loss with a gradient has Im diag(U^H gU) = -Im diag(V^H gV) (torch checks
    this and raises otherwise, as `gauge_check` does), and the imaginary part of diag(U^H dA V)
    reaches the loss through the phases: diag(inner) gains i (Im diag(U^H gU) - Im diag(V^H gV))
    / 2S, which is torch's i Im diag(U^H gU) / S when the check holds."""
    zeros = b.full(s.shape, 0, s.dtype)
    im_u = zeros if utg is None else _im_diag(b, utg)
    im_v = zeros if vtg is None else _im_diag(b, vtg)
    phase = b.div(b.sub(im_u, im_v), b.mul(s, 2.0))
    inner = b.add(inner, _diag_embed(b, b.complex(zeros, phase)))
    return b.gauge_check(inner, im_u, b.neg(im_v), "linalg.svd")


def _svdvals_vjp(b, ct, a, s):
    # gA = U diag(gS) V^H, from an SVD recomputed here; defined at repeated singular values.
    u, _, vh = b.linalg_svd(a, False)
    return [_mm(b, b.mul(u, b.unsqueeze(ct, -2)), vh)]


# ---- torch.linalg: the primitives --------------------------------------------------------------
def _solve_infer(types, **_):
    a, rhs = types
    _require_matrix("linalg.solve", a, square=True)
    if rhs.ndim < 2 or rhs.shape[-2] != a.shape[-1]:
        raise ShapeError(f"linalg.solve: Incompatible shapes of A and B for the equation AX = B, "
                         f"got {a} and {rhs}")
    batch = T.broadcast_shapes(a.shape[:-2], rhs.shape[:-2])
    if batch is None:
        raise ShapeError(f"linalg.solve: batch dimensions of A and B do not broadcast, got {a} "
                         f"and {rhs}")
    if a.dtype is not rhs.dtype:
        raise DTypeError(f"linalg.solve: Expected A and B to have the same dtype, got {a} and "
                         f"{rhs}")
    return T.TensorType(batch + rhs.shape[-2:], a.dtype)


def _qr_infer(types, *, mode):
    a = types[0]
    _require_matrix("linalg.qr", a)
    *batch, m, n = a.shape
    batch, k = tuple(batch), min(m, n)
    if mode == "r":
        return T.TensorType((0,), a.dtype), T.TensorType(batch + (k, n), a.dtype)
    kq = m if mode == "complete" else k
    return T.TensorType(batch + (m, kq), a.dtype), T.TensorType(batch + (kq, n), a.dtype)


def _canon_qr(types, *, mode):
    if mode not in ("reduced", "complete", "r"):
        raise ValueError(f"linalg.qr: received unrecognized mode '{mode}' but expected one of "
                         "'reduced' (default), 'r', or 'complete'")
    return {"mode": mode}


def _qr_kernel(xp, a, *, mode):
    if mode == "r":
        return xp.zeros((0,), a.dtype), xp.linalg.qr(a, mode="r")
    q, r = xp.linalg.qr(a, mode=mode)
    return q, r


def _canon_uplo(types, *, UPLO):
    if UPLO not in ("L", "U"):
        raise ValueError(f"linalg.eigh: Expected UPLO argument to be 'L' or 'U', but got {UPLO}")
    return {"UPLO": UPLO}


def _eigh_infer(types, *, UPLO):
    a = types[0]
    _require_matrix("linalg.eigh", a, square=True)
    return T.TensorType(a.shape[:-1], a.dtype.to_real()), a   # real eigenvalues


def _svd_infer(types, *, full_matrices):
    a = types[0]
    _require_matrix("linalg.svd", a)
    *batch, m, n = a.shape
    batch, k = tuple(batch), min(m, n)
    ku, kv = (m, n) if full_matrices else (k, k)
    return (T.TensorType(batch + (m, ku), a.dtype), T.TensorType(batch + (k,), a.dtype.to_real()),
            T.TensorType(batch + (kv, n), a.dtype))


def _svdvals_infer(types, **_):
    a = types[0]
    _require_matrix("linalg.svdvals", a)
    return T.TensorType(a.shape[:-2] + (min(a.shape[-2:]),), a.dtype.to_real())


def _tuple(out):
    return tuple(out)   # jax returns named tuples; the executors expect plain ones


# float32/float64 and complex64/complex128 (as torch; results of a real kind are real: the
# eigenvalues, singular values and slogdet's logabsdet)
LINALG = INTERNAL | COMPLEX

defop("linalg_inv", "A", infer=_square_infer("linalg.inv"), flags=LINALG,
      kernel=_inv_np, kernels={"jax": lambda xp, a: xp.linalg.inv(a)}, vjp=_inv_vjp,
      ref="torch.linalg.inv")

# A X = B for B of shape (*, n, k), batch dims broadcasting; linalg_solve adds torch's
# vector right-hand sides and left=False on top.
defop("batched_solve", "A, B", infer=_solve_infer, flags=LINALG, kernel=_solve_np,
      kernels={"jax": lambda xp, a, b: xp.linalg.solve(*_broadcast_batch(xp, a, b))},
      vjp=_solve_vjp, ref="torch.linalg.solve (B a batch of matrices)")


def _batch_type(t):
    return T.TensorType(t.shape[:-2], t.dtype)


defop("linalg_det", "A", infer=_square_infer("linalg.det", _batch_type),
      kernel=lambda xp, a: xp.asarray(xp.linalg.det(a)), vjp=_det_vjp, flags=LINALG,
      ref="torch.linalg.det")


def _slogdet_types(t):
    """(sign, logabsdet): the sign in A's dtype (e^{i theta} for complex), logabsdet real."""
    sign = _batch_type(t)
    return sign, T.TensorType(sign.shape, t.dtype.to_real())


defop("linalg_slogdet", "A", infer=_square_infer("linalg.slogdet", _slogdet_types),
      kernel=lambda xp, a: _tuple(xp.asarray(v) for v in xp.linalg.slogdet(a)),
      vjp=_slogdet_vjp, flags=LINALG, ref="torch.linalg.slogdet")

defop("linalg_cholesky", "A", attrs=(("upper", False),), infer=_square_infer("linalg.cholesky"),
      canon=lambda types, *, upper: {"upper": bool(upper)},
      kernel=_cholesky_np, kernels={"jax": _cholesky_jax}, vjp=_cholesky_vjp, flags=LINALG,
      ref="torch.linalg.cholesky")

defop("linalg_qr", "A", attrs=(("mode", "reduced"),), canon=_canon_qr, infer=_qr_infer,
      kernel=_qr_kernel, vjp=_qr_vjp, flags=LINALG, ref="torch.linalg.qr")

defop("linalg_eigh", "A", attrs=(("UPLO", "L"),), canon=_canon_uplo, infer=_eigh_infer,
      kernel=lambda xp, a, *, UPLO: _tuple(np.linalg.eigh(a, UPLO=UPLO)),
      kernels={"jax": lambda xp, a, *, UPLO: _tuple(
          xp.linalg.eigh(a, UPLO=UPLO, symmetrize_input=False))},
      vjp=_eigh_vjp, flags=LINALG, ref="torch.linalg.eigh (eigenvalues ascending)")

defop("linalg_svd", "A", attrs=(("full_matrices", True),), infer=_svd_infer,
      canon=lambda types, *, full_matrices: {"full_matrices": bool(full_matrices)},
      kernel=lambda xp, a, *, full_matrices: _tuple(_svd_np(xp, a, full_matrices=full_matrices)),
      kernels={"jax": lambda xp, a, *, full_matrices: _tuple(
          xp.linalg.svd(a, full_matrices=full_matrices))},
      vjp=_svd_vjp, flags=LINALG, ref="torch.linalg.svd")

defop("linalg_svdvals", "A", infer=_svdvals_infer, flags=LINALG,
      kernel=lambda xp, a: _svd_np(xp, a, compute_uv=False),
      kernels={"jax": lambda xp, a: xp.linalg.svd(a, compute_uv=False)},
      vjp=_svdvals_vjp, ref="torch.linalg.svdvals")


# ---- the phase check of complex eigh / svd backwards -------------------------------------------
PHASE_TOL = 1e-2   # torch's: allclose(got, want, rtol=1e-2, atol=1e-2)

_PHASE_HINT = {
    "linalg.eigh": ("eigenvectors are defined only up to a phase each, v_k -> v_k e^(i phi_k)",
                    "|V|^2 or V diag(w) V^H"),
    "linalg.svd": ("singular vector pairs are defined only up to a phase each, (u_k, v_k) -> "
                   "(u_k, v_k) e^(i phi_k)", "|U|^2, |Vh|^2 or U[:, k] * Vh[k, :]"),
}


def _check_phases(what: str, got, want) -> None:
    """Raise unless `got` is close to `want` (the rates at which the loss changes with the
    phases of complex eigen- / singular vectors; torch's tolerance)."""
    got, want = np.asarray(got), np.asarray(want)
    off = np.abs(got - want) - PHASE_TOL * np.abs(want)
    if off.size and not np.all(off <= PHASE_TOL):   # NaN fails too
        gauge, invariant = _PHASE_HINT[what]
        raise RuntimeError(
            f"{what} backward: complex {gauge}, and this loss depends on those phases (by up "
            f"to {float(np.max(np.abs(got - want))):.3g}, tolerance {PHASE_TOL}), so its "
            f"gradient is ill-defined (torch raises too). Use functions of the factors that the "
            f"phases do not change, such as {invariant}.")


def _gauge_check_np(xp, x, got, want, *, what):
    _check_phases(what, got, want)
    return x


def _gauge_check_infer(types, *, what):
    x, got, want = types
    if got != want or got.dtype.is_complex:
        raise DTypeError(f"gauge_check: got and want must be real and of one type, got {got} "
                         f"and {want}")
    return x


# gauge_check(x, got, want) is x, after checking got ~ want (an identity for gradients): the
# backward of complex eigh / svd passes its result through it, so pruning keeps the check
defop("gauge_check", "input, got, want", attrs=(("what", REQUIRED),), infer=_gauge_check_infer,
      kernel=_gauge_check_np, flags=INTERNAL | COMPLEX,   # jax: backends/jax_host_checks.py
      vjp=lambda b, ct, x, got, want, out, *, what: [ct, None, None],
      jvp=lambda b, t, x, got, want, out, *, what: t[0],
      ref="torch's phase check in linalg_eig_backward / svd_backward (complex)")


# ---- linalg.solve: vector right-hand sides and left=False ------------------------------------
def _solve(ops, A, B, left=True):
    _need_tensors(ops, "linalg.solve", A=A, B=B)
    ta, tb = _ty(A), _ty(B)
    try:
        _require_matrix("linalg.solve", ta, square=True)
    except (ShapeError, DTypeError) as e:
        raise _fail(ops, e) from None
    _same_dtype(ops, "linalg.solve", A, B, "Expected A and B to have the same dtype")
    n = ta.shape[-1]
    vector = tb.ndim == 1 or (tb.ndim == ta.ndim - 1 and tb.shape == ta.shape[:-1])
    eq = "AX = B" if left else "XA = B"
    rhs = ops.unsqueeze(B, -1) if vector else B
    rows = rhs.shape[-2] if left else rhs.shape[-1]
    if len(rhs.shape) < 2 or rows != n or (vector and not left):
        k = "x".join(map(str, tuple(rhs.shape[-2:])))
        raise _fail(ops, ShapeError(f"linalg.solve: Incompatible shapes of A and B for the "
                                    f"equation {eq} ({n}x{n} and {k}), got {ta} and {tb}"))
    if T.broadcast_shapes(ta.shape[:-2], tuple(rhs.shape[:-2])) is None:
        raise _fail(ops, ShapeError(f"linalg.solve: batch dimensions of A and B do not "
                                    f"broadcast, got {ta} and {tb}"))
    if not left:   # X A = B  <=>  A^T X^T = B^T
        return _mT(ops, ops.batched_solve(_mT(ops, A), _mT(ops, rhs)))
    x = ops.batched_solve(A, rhs)
    return ops.squeeze(x, -1) if vector else x


defop("linalg_solve", "A, B", attrs=(("left", True),), decomp=_solve, flags=LINALG,
      ref="torch.linalg.solve")


# ---- norms -------------------------------------------------------------------------------------
def _canon_vector_norm(types, *, ord, dim, keepdim):
    name = "linalg.vector_norm"
    if isinstance(ord, bool) or not isinstance(ord, (int, float)):
        raise TypeError(f"{name}(): argument 'ord' must be a number, not {type(ord).__name__}")
    return {"ord": float(ord), "dim": norm_dims(name, dim, types[0].ndim),
            "keepdim": bool(keepdim)}


def _vector_norm_infer(types, *, ord, dim, keepdim):
    t = types[0]
    if not t.dtype.is_complex:
        _require_float("linalg.vector_norm", t, low_precision=True)
    if (ord < 0 or math.isinf(ord)) and any(t.shape[d] == 0 for d in (dim or range(t.ndim))):
        raise ShapeError(f"linalg.vector_norm cannot compute the {ord:g} norm on an empty tensor "
                         f"because the operation does not have an identity ({t})")
    # the norm of a complex tensor is real (complex64 -> float32), as torch
    return T.TensorType(reduce_shape(t.shape, dim, keepdim), t.dtype.to_real())


def _vector_norm_kernel(xp, x, *, ord, dim, keepdim):
    dtype = np.finfo(x.dtype).dtype if x.dtype.kind == "c" else x.dtype   # complex -> real
    if dtype.itemsize < 4:                 # float16 / bfloat16 accumulate in float32, as torch
        x = x.astype(np.float32)
    a, kw = xp.abs(x), {"axis": dim, "keepdims": keepdim}
    if ord == math.inf:
        r = xp.max(a, **kw)
    elif ord == -math.inf:
        r = xp.min(a, **kw)
    elif ord == 0:
        r = xp.sum((a != 0).astype(a.dtype), **kw)
    elif ord == 1:
        r = xp.sum(a, **kw)
    elif ord == 2:
        r = xp.sqrt(xp.sum(a * a, **kw))
    else:
        r = xp.sum(a ** a.dtype.type(ord), **kw) ** a.dtype.type(1.0 / ord)
    return xp.asarray(r).astype(dtype)


def _vector_norm_vjp(b, ct, x, out, *, ord, dim, keepdim):
    # torch norm_backward: the gradient is 0 where the norm is 0; for ord = +-inf it is split
    # evenly among the entries of largest / smallest magnitude; ord = 0 has none (0).
    # Complex: sgn(x) = x / |x| (0 at 0) stands where real inputs have sign(x).
    if not keepdim:
        shape = reduce_shape(x.shape, dim, True)
        ct, out = b.reshape(ct, shape), b.reshape(out, shape)
    sign = b.sgn(x) if x.dtype.is_complex else b.sign(x)
    if ord == 0:
        return [b.mul(x, 0.0)]
    if ord == 1:
        return [b.mul(ct, sign)]
    if ord == 2:   # x / |x|, with x == 0 wherever the norm is 0
        return [b.mul(ct, b.div(x, b.where(b.eq(out, 0.0), 1.0, out)))]
    ax = b.abs(x)
    if math.isinf(ord):
        mask = b.convert(b.eq(ax, out), ax.dtype)
        return [b.mul(b.div(ct, b.sum(mask, dim, True)), b.mul(sign, mask))]
    if ord < 1:    # sign(x) |x|^(p-1) (0 at x == 0) * norm^(1-p)
        scaled = b.mul(sign, b.pow(b.where(b.eq(x, 0.0), 1.0, ax), ord - 1))
        return [b.mul(b.mul(ct, scaled), b.pow(out, 1 - ord))]
    safe = b.where(b.eq(out, 0.0), 1.0, out)
    return [b.mul(b.div(ct, b.pow(safe, ord - 1)), b.mul(sign, b.pow(ax, ord - 1)))]


defop("linalg_vector_norm", "input", attrs=(("ord", 2), ("dim", None), ("keepdim", False)),
      canon=_canon_vector_norm, infer=_vector_norm_infer, kernel=_vector_norm_kernel,
      vjp=_vector_norm_vjp, flags=INTERNAL | COMPLEX, ref="torch.linalg.vector_norm")


def _amin(ops, x, dims, keepdim):
    return ops.neg(ops.amax(ops.neg(x), dims, keepdim))


def _matrix_norm(ops, A, ord="fro", dim=(-2, -1), keepdim=False):
    name = "linalg.matrix_norm"
    _need_tensors(ops, name, A=A)
    t = _ty(A)
    try:
        if t.ndim < 2:
            raise ShapeError(f"{name}: The input tensor A must have at least 2 dimensions, got {t}")
        if not t.dtype.is_complex:   # complex64/complex128 too; the norm is real
            _require_float(name, t)
        if isinstance(dim, int) or len(dim) != 2:
            raise ValueError(f"{name}: dim must be a 2-tuple. Got {dim}")
        d0, d1 = (norm_dim(name, d, t.ndim) for d in dim)
        if d0 == d1:
            raise ValueError(f"{name}: dims must be different. Got ({d0}, {d1})")
    except (ShapeError, DTypeError, ValueError, IndexError, TypeError) as e:
        raise _fail(ops, e) from None
    kept = reduce_shape(t.shape, (d0, d1), True)
    if ord == "fro":
        return ops.linalg_vector_norm(A, 2, (d0, d1), keepdim)
    if ord in ("nuc", 2, -2):
        rest = [i for i in range(t.ndim) if i not in (d0, d1)]
        sv = ops.linalg_svdvals(ops.permute(A, tuple(rest) + (d0, d1)))
        r = (ops.sum(sv, (-1,)) if ord == "nuc" else
             ops.amax(sv, (-1,)) if ord == 2 else _amin(ops, sv, (-1,), False))
        return ops.reshape(r, kept) if keepdim else r
    if not isinstance(ord, str) and ord in (1, -1, math.inf, -math.inf):
        # 1: largest column sum of |A| (sum over rows d0, max over d1); inf: largest row sum
        summed, best = (d0, d1) if abs(ord) == 1 else (d1, d0)
        s = ops.sum(ops.abs(A), (summed,), True)
        r = ops.amax(s, (best,), True) if ord > 0 else _amin(ops, s, (best,), True)
        return r if keepdim else ops.reshape(r, reduce_shape(t.shape, (d0, d1), False))
    raise _fail(ops, ValueError(f"{name}: Order {ord} not supported."))


defop("linalg_matrix_norm", "A", attrs=(("ord", "fro"), ("dim", (-2, -1)), ("keepdim", False)),
      decomp=_matrix_norm, flags=INTERNAL | COMPLEX, ref="torch.linalg.matrix_norm",
      node_name="LinalgVectorNormBackward0")


def _norm(ops, A, ord=None, dim=None, keepdim=False):
    name = "linalg.norm"
    _need_tensors(ops, name, A=A)
    if dim is not None:
        dims = (dim,) if isinstance(dim, int) else tuple(dim)
        if len(dims) == 1:
            return ops.linalg_vector_norm(A, 2 if ord is None else ord, dims, keepdim)
        if len(dims) == 2:
            return ops.linalg_matrix_norm(A, "fro" if ord is None else ord, dims, keepdim)
        raise _fail(ops, ValueError(f"{name}: If dim is specified, it must be of length 1 or 2. "
                                    f"Got {list(dims)}"))
    if ord is None:
        return ops.linalg_vector_norm(A, 2, None, keepdim)
    nd = len(A.shape)
    if isinstance(ord, str) or nd == 2:
        return ops.linalg_matrix_norm(A, ord, (-2, -1), keepdim)
    if nd == 1:
        return ops.linalg_vector_norm(A, ord, None, keepdim)
    raise _fail(ops, ValueError(f"{name}: If dim is not specified but ord is, the input must be "
                                f"1D or 2D. Got {nd}D ({_ty(A)})."))


defop("linalg_norm", "A", attrs=(("ord", None), ("dim", None), ("keepdim", False)),
      decomp=_norm, flags=INTERNAL | COMPLEX, ref="torch.linalg.norm",
      node_name="LinalgVectorNormBackward0")
