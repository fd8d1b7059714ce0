"""Matrix products: batched_matmul (the primitive) and matmul, mm, bmm, mv, dot, vdot, outer,
tensordot and einsum as decompositions onto it, so their gradients come from its VJP."""
from __future__ import annotations

import math

import numpy as np

from .. import types as T
from ..errors import DTypeError, ShapeError
from ..registry import AUTOCAST_LOWER, AUTOCAST_PROMOTE, COMPLEX, INTERNAL, defcomposite, defop
from . import _blas
from ._cost import MATMUL
from ._common import bilinear_jvp, conj_if_complex, fmt_types, norm_dim
from ._matrix import _ty, _fail, _need_tensors, _same_dtype, _eye, _mT


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


def _bmm_kernel(xp, a, b):
    if xp is np and b.ndim == 2 and a.ndim > 2:
        # one 2-D GEMM instead of NumPy's loop of one BLAS call per batch matrix
        out = _blas.matmul(a.reshape(-1, a.shape[-1]), b).reshape(a.shape[:-1] + b.shape[-1:])
        return out if out.dtype == a.dtype else out.astype(a.dtype)   # ml_dtypes: float32
    return _blas.product(xp, a, b)   # bfloat16 / float16 on jax: float32 accumulation


def _bmm_vjp(b, ct, x, y, out):
    """dA = ct @ B^H, dB = A^H @ ct (^H: conjugate transpose; plain transpose for real dtypes);
    the autodiff pass sums broadcast batch dims away. A 2-D B shared by a batch of A (a linear
    layer) gets dB as one GEMM over the flattened batch, not a batch of products then a sum."""
    dx = b.batched_matmul(ct, conj_if_complex(b, _mT(b, y)))
    if len(y.shape) == 2 and len(x.shape) > 2:
        k, n = y.shape
        ct2 = b.reshape(ct, (-1, n))
        if x.dtype is T.bfloat16:
            # (K, N) as the batch dims moved behind K, then flattened: a reshape of a transpose
            # is a copy to XLA, so the dot's left operand is a plain row-major array and XLA
            # CPU keeps it on its bf16 GEMM; the transpose of the flattened x (the `else`) is
            # folded into the dot as a transposed operand, which XLA runs as a float32 dot
            # (converts both ways): 7.6 -> 3.2 ms CPU for the transformer's (256,1024)@(1024,768)
            nd = len(x.shape)
            xt = b.reshape(b.permute(x, (nd - 1,) + tuple(range(nd - 1))), (k, -1))
        else:
            xt = conj_if_complex(b, _mT(b, b.reshape(x, (-1, k))))
        return [dx, b.batched_matmul(xt, ct2)]
    return [dx, b.batched_matmul(conj_if_complex(b, _mT(b, x)), ct)]


defop("batched_matmul", "input, other", infer=_bmm_infer, flags=INTERNAL | COMPLEX,
      kernel=_bmm_kernel, ref="torch.matmul (both operands >= 2-D)", vjp=_bmm_vjp,
      jvp=bilinear_jvp("batched_matmul"),
      aten_name="aten::matmul", cost=MATMUL)


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


defcomposite("matmul", "input: Tensor, other: Tensor", _matmul, ref="torch.matmul", flags=COMPLEX,
             node_name="MmBackward0",
             autocast={"cpu": AUTOCAST_LOWER, "cuda": AUTOCAST_LOWER},
             node_inputs=("input", "other"))


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
defcomposite("mm", "input: Tensor, mat2: Tensor", _mm_decomp, ref="torch.mm", flags=COMPLEX,
             autocast={"cpu": AUTOCAST_LOWER, "cuda": AUTOCAST_LOWER})
defcomposite("bmm", "input: Tensor, mat2: Tensor", _bmm_decomp, ref="torch.bmm", flags=COMPLEX,
             autocast={"cpu": AUTOCAST_LOWER, "cuda": AUTOCAST_LOWER})
defcomposite("mv", "input: Tensor, vec: Tensor", _mv_decomp, ref="torch.mv", flags=COMPLEX,
             node_name="MvBackward0",
             autocast={"cuda": AUTOCAST_LOWER}, node_inputs=("input", "vec"))
defcomposite("dot", "input: Tensor, tensor: Tensor", _dot_decomp, ref="torch.dot", flags=COMPLEX,
             autocast={"cuda": AUTOCAST_PROMOTE}, node_inputs=("input", "tensor"))
defcomposite("vdot", "input: Tensor, other: Tensor", _vdot_decomp,
             ref="torch.vdot (sum conj(x) * y)", flags=COMPLEX, node_inputs=("input", "other"))
defcomposite("outer", "input: Tensor, vec2: Tensor", _outer_decomp, ref="torch.outer",
             flags=COMPLEX, node_name="MulBackward0")


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


defcomposite("tensordot", "a: Tensor, b: Tensor, dims=2", _tensordot, ref="torch.tensordot",
             flags=COMPLEX, node_name="ViewBackward0",
             autocast={"cpu": AUTOCAST_LOWER, "cuda": AUTOCAST_PROMOTE})


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
defcomposite("einsum", "*operands: Tensor, equation", _einsum, flags=INTERNAL | COMPLEX,
             ref="torch.einsum (contracted left to right)", node_name="ViewBackward0",
             autocast={"cpu": AUTOCAST_LOWER, "cuda": AUTOCAST_LOWER})
