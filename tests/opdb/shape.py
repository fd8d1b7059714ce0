"""Op database: shape and indexing ops (movedim, split, flip, diagonal, pad, gather, scatter,
index_add, masked_fill ...), advanced getitem and setitem.

reshape / permute / expand / squeeze / cat and basic getitem live in core.py.  References
that write (scatter, index_add, setitem) use `_put`, in place on a NumPy copy and with
``.at[]`` under jax, so jax.vjp gives the gradients torch's formulas give.  Ops returning
several tensors (split, chunk, unbind) return tuples from `fn` and `ref`.  Ops whose output
shape depends on values (nonzero, masked_select, boolean-mask getitem) are eager only and
skip the compile check; inside `tg.compile` they raise TraceError (error inputs below).
"""
from __future__ import annotations

import numpy as np

import tracegrad as tg

from .core import F32, F64, I64, ErrorInput, OpInfo, Sample, ints, uniform

A = np.array
EAGER_ONLY = {"compile": "the output shape depends on values: eager only (TraceError when "
                         "traced, see error inputs)"}
REPEATED_READS = "repeated indices: their cotangents add up in the input's gradient"
DUPLICATE_WRITES = ("with repeated indices one write wins (unspecified which, as torch); "
                    "every duplicate reads the written position's cotangent back")


def _f(*shape, dtype=np.float32):
    return np.ones(shape, dtype)


def _i(*values):
    return np.array(values, np.int64)


def _is_jax(xp):
    return xp is not np


def _put(xp, x, key, v, add=False):
    """x with x[key] set to v (or increased by v, duplicates adding up)."""
    if _is_jax(xp):
        return x.at[key].add(v) if add else x.at[key].set(v)
    out = np.array(x, copy=True)
    if add:
        np.add.at(out, key, v)
    else:
        out[key] = v
    return out


def _put_torch(xp, x, key, v):
    """x with x[key] = v where torch's backward gives every write, repeated ones too, the
    cotangent of its target (d out / d v_i = ct[key_i]); forward: one of the repeats wins."""
    zeros = xp.zeros_like(x)
    added = _put(xp, zeros, key, v, add=True)
    stop = __import__("jax").lax.stop_gradient if _is_jax(xp) else (lambda a: a)
    return _put(xp, x, key, 0.0) + added - stop(added - _put(xp, zeros, key, v))


def _eager_only(fn):
    """`fn`, and with ``compiled=True`` `fn` traced by tg.compile (tensor arguments become
    program inputs): error inputs check the TraceError that value-dependent shapes raise."""
    def call(*args, compiled=False, **kw):
        if not compiled:
            return fn(*args, **kw)
        tensors = [a for a in args if isinstance(a, tg.Tensor)]

        def step(*ts):
            it = iter(ts)
            return fn(*[next(it) if isinstance(a, tg.Tensor) else a for a in args], **kw)
        return tg.compile(step, fullgraph=True)(*tensors)
    return call


def _pieces_ref(xp, x, sizes, dim):
    out, start = [], 0
    for s in sizes:
        key = (slice(None),) * (dim % x.ndim) + (slice(start, start + s),)
        out.append(x[key])
        start += s
    return tuple(out)


# ---- views: unflatten, movedim, t, expand_as, narrow ----------------------------------------
def _unflatten_samples(rng, dtype):
    x = uniform(rng, (2, 6, 2), dtype)
    return [Sample((x, 1, (2, 3))), Sample((x, -1, (2, 1))), Sample((x, 1, (-1, 2, 1)))]


def _unflatten_ref(xp, x, dim, sizes):
    d = dim % x.ndim
    return xp.reshape(x, x.shape[:d] + tuple(sizes) + x.shape[d + 1:])


def _unflatten_errors():
    x = _f(2, 6)
    return [ErrorInput((x, 1, (4, -1)), ValueError, ("unflatten", "[4, -1]", "(6)", "f32[2,6]")),
            ErrorInput((x, 1, ()), ValueError, ("unflatten", "non-empty")),
            ErrorInput((x, 2, (2, 3)), IndexError, ("unflatten", "out of range", "got 2"))]


def _movedim_samples(rng, dtype):
    x = uniform(rng, (2, 3, 4), dtype)
    return [Sample((x, 0, -1)), Sample((x, (0, 1), (2, 0))), Sample((x, -1, 1))]


def _movedim_errors():
    x = _f(2, 3, 4)
    return [ErrorInput((x, (0, 1), (2, 2)), ValueError, ("movedim", "repeated dim", "destination")),
            ErrorInput((x, (0, 1), (2,)), ValueError, ("movedim", "[0, 1]", "[2]")),
            ErrorInput((x, 3, 0), IndexError, ("movedim", "out of range", "got 3"))]


def _t_samples(rng, dtype):
    return [Sample((uniform(rng, (2, 3), dtype),)), Sample((uniform(rng, (3,), dtype),)),
            Sample((uniform(rng, (), dtype),))]


def _t_ref(xp, x):
    return xp.transpose(x) if x.ndim == 2 else x


def _mT_errors():
    return [ErrorInput((_f(2, 3, 4),), ValueError, ("t", "<= 2 dimensions", "3D", "f32[2,3,4]"))]


def _expand_as_samples(rng, dtype):
    return [Sample((uniform(rng, (3, 1), dtype), ints(rng, (2, 3, 4)))),
            Sample((uniform(rng, (), dtype), ints(rng, (2,))))]


def _narrow_samples(rng, dtype):
    x = uniform(rng, (3, 5), dtype)
    return [Sample((x, 1, 1, 3)), Sample((x, 0, -2, 2)), Sample((x, -1, 5, 0))]


def _narrow_ref(xp, x, dim, start, length):
    d, start = dim % x.ndim, start % x.shape[dim] if start < 0 else start
    return x[(slice(None),) * d + (slice(start, start + length),)]


def _narrow_errors():
    x = _f(2, 3)
    return [ErrorInput((x, 1, 1, 3), ValueError, ("narrow", "start (1) + length (3)", "size 3")),
            ErrorInput((x, 1, 4, 0), IndexError, ("narrow", "start out of range", "[-3, 3]")),
            ErrorInput((_f(),), ValueError, ("narrow", "1-dimensional", "f32[]"),
                       {"dim": 0, "start": 0, "length": 1})]


# ---- split / chunk / unbind / stack ---------------------------------------------------------
def _split_samples(rng, dtype):
    x = uniform(rng, (5, 2), dtype)
    return [Sample((x, 2)), Sample((x, (1, 3, 1))), Sample((x, 1, 1)), Sample((x, 5))]


def _split_ref(xp, x, s, dim=0):
    n = x.shape[dim]
    sizes = list(s) if isinstance(s, tuple) else [s] * (n // s) + ([n % s] if n % s else [])
    return _pieces_ref(xp, x, sizes, dim)


def _split_errors():
    x = _f(2, 3)
    return [ErrorInput((x, (1, 3), 1), ValueError, ("split", "sum exactly to 3", "[1, 3]")),
            ErrorInput((x, 0, 1), ValueError, ("split", "got 0", "size 3")),
            ErrorInput((_f(), 1), ValueError, ("split", "1-dimensional", "f32[]"))]


def _split_with_sizes_samples(rng, dtype):
    x = uniform(rng, (5, 2), dtype)
    return [Sample((x, (1, 3, 1))), Sample((x, (2, 0), 1)), Sample((x, (5,)))]


def _split_with_sizes_errors():
    x = _f(2, 3)
    return [ErrorInput((x, (1, 3), 1), ValueError, ("split_with_sizes", "sum exactly to 3",
                                                    "[1, 3]")),
            ErrorInput((_f(), (1,)), ValueError, ("split_with_sizes", "1-dimensional", "f32[]"))]


def _chunk_samples(rng, dtype):
    return [Sample((uniform(rng, (5, 2), dtype), 3)), Sample((uniform(rng, (2, 6), dtype), 4, 1)),
            Sample((uniform(rng, (0, 2), dtype), 2))]


def _chunk_ref(xp, x, chunks, dim=0):
    n = x.shape[dim]
    if n == 0:
        return _pieces_ref(xp, x, [0] * chunks, dim)
    size = -(-n // chunks)
    return _split_ref(xp, x, size, dim)


def _chunk_errors():
    return [ErrorInput((_f(2, 3), 0), ValueError, ("chunk", "greater than 0", "got: 0"))]


def _unbind_samples(rng, dtype):
    x = uniform(rng, (2, 3), dtype)
    return [Sample((x,)), Sample((x, 1)), Sample((uniform(rng, (1, 2), dtype), -2))]


def _unbind_ref(xp, x, dim=0):
    return tuple(xp.take(x, i, axis=dim) for i in range(x.shape[dim]))


def _unbind_errors():
    return [ErrorInput((_f(),), ValueError, ("unbind", "1-dimensional", "f32[]")),
            ErrorInput((_f(2, 3), 2), IndexError, ("unbind", "out of range", "got 2"))]


def _stack_samples(rng, dtype):
    u = lambda *s: uniform(rng, s, dtype)  # noqa: E731
    out = [Sample((u(2, 3), u(2, 3))), Sample((u(2, 3), u(2, 3), u(2, 3)), {"dim": -1}),
           Sample((u(), u()))]
    if dtype is F32:
        out.append(Sample((u(3), uniform(rng, (3,), F64)), {"dim": 1}, dtype=F64))  # promotes
    return out


def _stack_errors():
    return [ErrorInput((_f(2, 3), _f(2, 4)), ValueError,
                       ("stack", "equal size", "f32[2,3] at entry 0", "f32[2,4] at entry 1")),
            ErrorInput((), ValueError, ("stack", "non-empty")),
            ErrorInput((_f(2), _f(2)), IndexError, ("stack", "out of range", "got 3"), {"dim": 3})]


# ---- flip / roll / repeat / tile ------------------------------------------------------------
def _flip_samples(rng, dtype):
    x = uniform(rng, (2, 3, 2), dtype)
    return [Sample((x, (0,))), Sample((x, (0, -1))), Sample((x, ())),
            Sample((uniform(rng, (), dtype), (0,)))]


def _flip_errors():
    x = _f(2, 3)
    return [ErrorInput((x, (0, 0)), ValueError, ("flip", "multiple times")),
            ErrorInput((x, (2,)), IndexError, ("flip", "out of range", "got 2"))]


def _roll_samples(rng, dtype):
    x = uniform(rng, (2, 3), dtype)
    return [Sample((x, 1)), Sample((x, (1, -4), (0, 1))), Sample((x, 2, -1)), Sample((x, (-5,)))]


def _roll_ref(xp, x, shifts, dims=None):
    return xp.roll(x, shifts if dims is not None else shifts[0] if isinstance(shifts, tuple)
                   else shifts, axis=dims)


def _roll_errors():
    x = _f(2, 3)
    return [ErrorInput((x, (1, 2), (0,)), ValueError, ("roll", "must align", "shifts: 2")),
            ErrorInput((x, 1, 2), IndexError, ("roll", "out of range", "got 2"))]


def _repeat_samples(rng, dtype):
    return [Sample((uniform(rng, (2, 3), dtype), (2, 1))),
            Sample((uniform(rng, (2, 1), dtype), (3, 1, 2))),
            Sample((uniform(rng, (), dtype), (2,))), Sample((uniform(rng, (2,), dtype), (0,)))]


def _repeat_errors():
    x = _f(2, 3)
    return [ErrorInput((x, (2,)), ValueError, ("repeat", "can not be smaller", "f32[2,3]")),
            ErrorInput((x, (-1, 2)), ValueError, ("repeat", "non-negative"))]


def _tile_samples(rng, dtype):
    x = uniform(rng, (2, 3), dtype)
    return [Sample((x, (2,))), Sample((x, (2, 1, 2))), Sample((x, ()))]


# ---- tril / triu / diagonal / diag / diag_embed ---------------------------------------------
def _tri_samples(rng, dtype):
    return [Sample((uniform(rng, (3, 4), dtype),)), Sample((uniform(rng, (2, 3, 3), dtype), 1)),
            Sample((uniform(rng, (3, 2), dtype), -1))]


def _tri_errors(name):
    return lambda: [ErrorInput((_f(3),), ValueError, (name, "at least 2 dimensions", "f32[3]"))]


def _diagonal_samples(rng, dtype):
    x = uniform(rng, (2, 3, 4), dtype)
    return [Sample((x,)), Sample((x, 1, 1, 2)), Sample((x, -1, 2, 0)), Sample((x, 5, 1, 2)),
            Sample((uniform(rng, (3, 3), dtype), 0, 1, 0))]


def _diagonal_errors():
    x = _f(2, 3)
    return [ErrorInput((x, 0, 0, 0), ValueError, ("diagonal", "cannot be identical")),
            ErrorInput((_f(),), IndexError, ("diagonal", "out of range", "got 1"))]


def _diag_samples(rng, dtype):
    return [Sample((uniform(rng, (3,), dtype),)), Sample((uniform(rng, (3,), dtype), -1)),
            Sample((uniform(rng, (3, 4), dtype), 1)), Sample((uniform(rng, (3, 4), dtype), -2)),
            Sample((uniform(rng, (2, 3), dtype), 3))]


def _diag_errors():
    return [ErrorInput((_f(2, 2, 2),), ValueError, ("diag", "1-D or 2-D", "f32[2,2,2]"))]


def _diag_embed_samples(rng, dtype):
    x = uniform(rng, (2, 3), dtype)
    return [Sample((x,)), Sample((x, 1, 0, 2)), Sample((x, -2, 2, 1)),
            Sample((uniform(rng, (3,), dtype), 1))]


def _diag_embed_ref(xp, x, offset=0, dim1=-2, dim2=-1):
    n, k = x.shape[-1], abs(offset)
    rows = np.zeros((n + k, n))
    cols = np.zeros((n + k, n))
    rows[np.arange(n) + max(-offset, 0), np.arange(n)] = 1.0
    cols[np.arange(n) + max(offset, 0), np.arange(n)] = 1.0
    out = xp.einsum("...m,im,jm->...ij", x, rows, cols)
    nd = x.ndim + 1
    return xp.moveaxis(out, (-2, -1), (dim1 % nd, dim2 % nd))


def _diag_embed_errors():
    return [ErrorInput((_f(2, 3), 0, 1, 1), ValueError, ("diag_embed", "cannot be identical")),
            ErrorInput((_f(),), IndexError, ("diag_embed", "out of range", "got -2"))]


# ---- pad --------------------------------------------------------------------------------------
def _pad_samples(rng, dtype):
    x = uniform(rng, (2, 3, 4), dtype)
    return [Sample((x, (1, 2))), Sample((x, (1, 0, -1, 2)), {"value": 1.5}),
            Sample((x, (2, 1), "reflect")), Sample((x, (-1, 3, 2, 1), "reflect")),
            Sample((x, (3, -2, 1, 1), "replicate")), Sample((x, (1, 1, 1, 1, 1, 1))),
            Sample((x, (2, 1, 3, 0), "circular"))]


def _pad_ref(xp, x, pad, mode="constant", value=None):
    nd = x.ndim
    pairs = [(0, 0)] * nd
    for i in range(len(pad) // 2):
        pairs[nd - 1 - i] = (pad[2 * i], pad[2 * i + 1])
    grow = [(max(lo, 0), max(hi, 0)) for lo, hi in pairs]
    np_mode = {"constant": "constant", "reflect": "reflect", "replicate": "edge",
               "circular": "wrap"}[mode]
    kw = {"constant_values": value or 0.0} if mode == "constant" else {}
    out = xp.pad(x, grow, mode=np_mode, **kw)
    return out[tuple(slice(max(-lo, 0), out.shape[d] - max(-hi, 0))
                     for d, (lo, hi) in enumerate(pairs))]


def _pad_errors():
    x = _f(2, 3, 4)
    return [ErrorInput((x, (1, 2, 3)), ValueError, ("pad", "divisible by 2")),
            ErrorInput((_f(2), (1, 1, 1, 1)), ValueError, ("pad", "(4)", "f32[2]")),
            ErrorInput((x, (4, 2), "reflect"), ValueError, ("pad", "(4, 2)", "dimension 2")),
            ErrorInput((x, (1, 1, 1, 1, 1, 1), "reflect"), NotImplementedError,
                       ("pad", "'reflect'", "length 6", "f32[2,3,4]")),
            ErrorInput((x, (1, 2), "wrap"), NotImplementedError, ("pad", "'wrap'")),
            ErrorInput((x, (5, 0), "circular"), ValueError, ("pad", "more than once")),
            ErrorInput((x, (1, 2), "reflect", 3.0), ValueError, ("pad", "value")),
            ErrorInput((x, (-3, -2)), ValueError, ("pad", "(-3, -2)", "negative size"))]


# ---- gather / scatter / scatter_add / take_along_dim ---------------------------------------
def _gather_samples(rng, dtype):
    x = uniform(rng, (3, 4), dtype)
    return [Sample((x, 1, ints(rng, (3, 5), 0, 4))),          # repeats accumulate in backward
            Sample((x, 0, ints(rng, (2, 2), 0, 3))),          # index smaller than input
            Sample((uniform(rng, (), dtype), 0, _i(0).reshape(())))]


def _gather_ref(xp, x, dim, index):
    if x.ndim == 0:
        return x
    key = tuple(slice(None) if d == dim % x.ndim else slice(0, s)
                for d, s in enumerate(index.shape))
    return xp.take_along_axis(x[key], index, axis=dim)


def _index_errors(name, call):
    x = _f(2, 3)
    return [ErrorInput(call(x, 1, _i(0, 3).reshape(1, 2)), IndexError,
                       (name, "index 3", "dimension 1", "size 3")),
            ErrorInput(call(x, 1, _i(-1).reshape(1, 1)), IndexError, (name, "index -1")),
            ErrorInput(call(x, 1, np.zeros((1, 1), np.float32)), TypeError, (name, "f32[1,1]")),
            ErrorInput(call(x, 1, _i(0, 1)), ValueError, (name, "same number of dimensions")),
            ErrorInput(call(x, 0, np.zeros((1, 4), np.int64)), ValueError, (name, "no larger")),
            ErrorInput(call(x, 2, np.zeros((1, 1), np.int64)), IndexError, (name, "got 2"))]


def _scatter_samples(rng, dtype):
    x = uniform(rng, (3, 4), dtype)
    # distinct targets per column: which duplicate write wins is unspecified (torch)
    idx = np.stack([rng.permutation(3)[:2] for _ in range(4)], axis=1)
    return [Sample((x, 0, idx, uniform(rng, (2, 4), dtype))),
            Sample((x, 1, _i(3, 0).reshape(1, 2), uniform(rng, (2, 3), dtype))),  # src larger
            Sample((x, 0, idx, 2.5)),
            Sample((x, 0, idx), {"value": -1.0}),
            Sample((x, 1, _i(0, 0, 3, 0).reshape(2, 2), uniform(rng, (2, 2), dtype)), fd=False)]


def _scatter_ref(xp, x, dim, index, src=None, value=None, add=False):
    src = value if src is None else src
    grids = list(np.indices(index.shape, sparse=True))
    grids[dim % x.ndim] = index
    if not np.isscalar(src):
        src = src[tuple(slice(0, s) for s in index.shape)]
    return _put(xp, x, tuple(grids), src, True) if add else _put_torch(xp, x, tuple(grids), src)


def _scatter_errors():
    x = _f(2, 3)
    call = lambda x, d, i: (x, d, i, _f(2, 3))  # noqa: E731
    return _index_errors("scatter", call) + [
        ErrorInput((x, 1, _i(0, 1).reshape(1, 2), np.ones((2, 3))), TypeError,
                   ("scatter", "f64[2,3]", "dtype")),
        ErrorInput((x, 1, _i(0, 1).reshape(1, 2), _f(1, 1)), ValueError, ("scatter", "src")),
        ErrorInput((x, 1, _i(0, 1).reshape(1, 2), _f(2, 3)), NotImplementedError,
                   ("scatter", "reduce"), {"reduce": "add"})]


def _scatter_add_samples(rng, dtype):
    x = uniform(rng, (3, 4), dtype)
    return [Sample((x, 1, ints(rng, (3, 6), 0, 4), uniform(rng, (3, 6), dtype))),  # repeats add
            Sample((x, 0, ints(rng, (2, 2), 0, 3), uniform(rng, (3, 3), dtype)))]


def _take_along_dim_samples(rng, dtype):
    x = uniform(rng, (2, 3, 4), dtype)
    return [Sample((x, ints(rng, (2, 3, 2), 0, 4), 2)), Sample((x, ints(rng, (1, 3, 1), 0, 4), 2)),
            Sample((x, ints(rng, (5,), 0, 24))), Sample((x, ints(rng, (2, 2, 4), 0, 3), 1))]


def _take_along_dim_ref(xp, x, indices, dim=None):
    if dim is None:
        return xp.take_along_axis(xp.ravel(x), indices.ravel(), axis=0)
    return xp.take_along_axis(x, indices, axis=dim)


def _take_along_dim_errors():
    x = _f(2, 3, 4)
    return [ErrorInput((x, np.zeros((3, 1), np.int64), 1), ValueError,
                       ("take_along_dim", "same number of dimensions")),
            ErrorInput((x, np.zeros((2, 3, 4), np.float32), 1), TypeError,
                       ("take_along_dim", "indices", "f32[2,3,4]")),
            ErrorInput((x, np.full((1, 1, 1), 4), 2), IndexError,
                       ("take_along_dim", "index 4", "size 4")),
            ErrorInput((x, np.zeros((3, 1, 1), np.int64), 2), ValueError,
                       ("take_along_dim", "broadcast"))]


# ---- index_select / index_add / masked_fill / masked_select -------------------------------
def _index_select_samples(rng, dtype):
    x = uniform(rng, (3, 4), dtype)
    return [Sample((x, 1, _i(3, 0, 3))), Sample((x, 0, _i(2).reshape(()))),
            Sample((x, -1, np.zeros((0,), np.int64)))]


def _index_select_errors():
    x = _f(2, 3)
    return [ErrorInput((x, 1, _i(3)), IndexError, ("index_select", "index 3", "size 3")),
            ErrorInput((x, 1, _i(-1)), IndexError, ("index_select", "index -1")),
            ErrorInput((x, 1, _i(0, 1).reshape(1, 2)), IndexError, ("index_select", "vector")),
            ErrorInput((x, 1, np.zeros(1, np.float32)), TypeError, ("index_select", "f32[1]"))]


def _index_add_samples(rng, dtype):
    x = uniform(rng, (3, 4), dtype)
    return [Sample((x, 1, _i(0, 2, 0), uniform(rng, (3, 3), dtype))),    # repeated index adds
            Sample((x, 0, _i(1), uniform(rng, (1, 4), dtype)), {"alpha": 2.5})]


def _index_add_ref(xp, x, dim, index, source, alpha=1):
    return _put(xp, x, (slice(None),) * (dim % x.ndim) + (index,), source * alpha, add=True)


def _index_add_errors():
    x = _f(2, 3)
    return [ErrorInput((x, 1, _i(0, 2), _f(2, 3)), ValueError, ("index_add", "f32[2,3]", "size 2")),
            ErrorInput((x, 1, _i(0, 2), np.ones((2, 2))), TypeError, ("index_add", "f64[2,2]")),
            ErrorInput((x, 1, _i(0, 3), _f(2, 2)), IndexError, ("index_add", "index 3"))]


def _masked_fill_samples(rng, dtype):
    x = uniform(rng, (3, 4), dtype)
    mask = rng.random((3, 4)) > 0.5
    out = [Sample((x, mask, 0.5)), Sample((x, mask[0], uniform(rng, (), dtype))),
           Sample((uniform(rng, (4,), dtype), rng.random((2, 4)) > 0.5, -1.0))]   # broadcasts
    if dtype is F32:   # the value takes the input's dtype (torch)
        out.append(Sample((x, mask, uniform(rng, (), F64)), dtype=F32))
        out.append(Sample((ints(rng, (3,)), A([True, False, True]), -2.7), dtype=I64))
    return out


def _masked_fill_ref(xp, x, mask, value):
    return xp.where(mask, xp.asarray(value).astype(x.dtype), x)


def _masked_fill_errors():
    x = _f(3, 4)
    return [ErrorInput((x, _f(3, 4), 1.0), TypeError, ("masked_fill", "boolean", "f32[3,4]")),
            ErrorInput((x, np.ones(4, bool), _f(1)), ValueError, ("masked_fill", "0-dimensional")),
            ErrorInput((x, np.ones(5, bool), 1.0), ValueError, ("f32[3,4]", "b1[5]"))]


def _index_fill_samples(rng, dtype):
    x = uniform(rng, (3, 4), dtype)
    out = [Sample((x, 1, _i(0, 2, 0), uniform(rng, (), dtype))),   # repeated index: once
           Sample((x, 0, _i(-1), -1.5)), Sample((x, 1, np.array(3), 2.0)),
           Sample((uniform(rng, (), dtype), 0, _i(0), 0.5))]
    if dtype is F32:   # the value takes the input's dtype (torch 2.13: 2.5 -> 2)
        out.append(Sample((ints(rng, (3,)), 0, _i(1), 2.5), dtype=I64))
    return out


def _index_fill_ref(xp, x, dim, index, value):
    if x.ndim == 0:
        return xp.asarray(value).astype(x.dtype)
    hit = np.zeros(x.shape[dim], bool)
    hit[np.asarray(index).reshape(-1)] = True
    shape = [1] * x.ndim
    shape[dim] = x.shape[dim]
    return xp.where(hit.reshape(shape), xp.asarray(value).astype(x.dtype), x)


def _index_fill_errors():
    x = _f(2, 3)
    # torch 2.13: IndexError "index 3 is out of bounds for dimension 1 with size 3",
    # IndexError "Expected dtype int64 for index", RuntimeError for a 1-d value
    return [ErrorInput((x, 1, _i(3), 1.0), IndexError, ("index_fill", "index 3", "size 3")),
            ErrorInput((x, 1, _i(0).astype(np.int32), 1.0), IndexError, ("index_fill", "int64")),
            ErrorInput((x, 1, _i(0), _f(1)), RuntimeError, ("index_fill", "0-dimensional")),
            ErrorInput((x, 1, _i(0, 1).reshape(1, 2), 1.0), RuntimeError,
                       ("index_fill", "vector"))]


def _masked_scatter_samples(rng, dtype):
    x = uniform(rng, (3, 4), dtype)
    mask = A([[True, False, True, True], [False, False, True, False], [True, True, False, True]])
    return [Sample((x, mask, uniform(rng, (2, 5), dtype))),         # more source than needed
            Sample((x, mask[1], uniform(rng, (3,), dtype))),          # the mask broadcasts
            Sample((uniform(rng, (4,), dtype), mask[:2], uniform(rng, (9,), dtype)))]   # x too


def _masked_scatter_ref(xp, x, mask, source):
    shape = np.broadcast_shapes(x.shape, mask.shape)
    m = np.broadcast_to(mask, shape).reshape(-1)
    pos = np.maximum(np.cumsum(m) - 1, 0)
    flat = xp.reshape(source, (-1,))
    taken = flat[pos] if flat.shape[0] else xp.zeros(m.shape, x.dtype)
    return xp.where(m, taken, xp.reshape(xp.broadcast_to(x, shape), (-1,))).reshape(shape)


def _masked_scatter_errors():
    x = _f(2, 2)
    # torch 2.13: RuntimeError for each (its words: "Number of elements of source < number of
    # ones in mask", "only supports boolean masks", "expected self and source to have same
    # dtypes")
    return [ErrorInput((x, np.ones(2, bool), _f(1)), RuntimeError,
                       ("masked_scatter", "number of elements of source", "f32[1]")),
            ErrorInput((x, _i(1, 0), _f(2)), RuntimeError, ("masked_scatter", "boolean", "i64[2]")),
            ErrorInput((x, np.ones(2, bool), _i(1, 2)), RuntimeError,
                       ("masked_scatter", "same dtype", "i64[2]"))]


def _masked_select_samples(rng, dtype):
    x = uniform(rng, (3, 4), dtype)
    return [Sample((x, rng.random((3, 4)) > 0.5)), Sample((x, A([True, False, False, True]))),
            Sample((uniform(rng, (4,), dtype), rng.random((2, 4)) > 0.5))]


def _masked_select_ref(xp, x, mask):
    shape = np.broadcast_shapes(x.shape, mask.shape)
    return xp.broadcast_to(x, shape)[np.broadcast_to(mask, shape)]


def _masked_select_errors():
    x = _f(3, 4)
    return [ErrorInput((x, _f(3, 4)), TypeError, ("masked_select", "bool", "f32[3,4]")),
            ErrorInput((x, np.ones(5, bool)), ValueError, ("masked_select", "broadcast")),
            ErrorInput((x, np.ones((3, 4), bool)), tg.TraceError,
                       ("masked_select", "tg.compile", "b1[3,4]"), {"compiled": True})]


# ---- nonzero / where(condition) -----------------------------------------------------------
def _nonzero_samples(rng, dtype):
    x = uniform(rng, (3, 4), dtype)
    x[rng.random((3, 4)) > 0.5] = 0
    return [Sample((x,)), Sample((x,), {"as_tuple": True}), Sample((A(0.0, dtype.numpy),)),
            Sample((A(3.0, dtype.numpy),), {"as_tuple": True}),
            Sample((rng.random((2, 2, 2)) > 0.5,), {"as_tuple": True})]


def _nonzero_ref(xp, x, as_tuple=False):
    if as_tuple:
        return tuple(np.nonzero(np.atleast_1d(x)))
    return np.argwhere(x)


def _nonzero_errors():
    return [ErrorInput((_f(2, 3),), tg.TraceError, ("nonzero", "tg.compile", "f32[2,3]"),
                       {"compiled": True})]


def _where_samples(rng, dtype):
    return [Sample((rng.random((3, 4)) > 0.5,)), Sample((uniform(rng, (2, 3), dtype),))]


# ---- getitem (advanced, masks) and setitem --------------------------------------------------
def _torch_index_ref(xp, x, key):
    """x[key] as torch reads it: ints select first, then NumPy's rules on the rest (NumPy
    itself counts an int as an advanced index: x[0, :, [1, 2]] is (2, 5) there, (5, 2) in torch)."""
    key = key if isinstance(key, tuple) else (key,)
    key = tuple(np.asarray(k) if isinstance(k, list) else k for k in key)
    if not any(isinstance(k, int) for k in key):
        return x[key]
    first, rest = [], []
    for k in key:
        if k is None:
            rest.append(None)
        elif isinstance(k, int):
            first.append(k)
        elif k is Ellipsis:
            first.append(Ellipsis), rest.append(Ellipsis)
        else:
            width = k.ndim if isinstance(k, np.ndarray) and k.dtype == bool else 1
            first.extend([slice(None)] * width), rest.append(k)
    return x[tuple(first)][tuple(rest)]


B = A([True, False, True, True])
ADVANCED_KEYS = [
    (0, slice(None), A([1, 2])),                    # int then array, a slice between: (5, 2)
    (A([[0], [2]]), slice(None), A([0, 2, 2])),     # separated arrays: broadcast dims first
    (A([0, 3]), None, A([1, 1])),                   # None separates them too
    (slice(1, 3), A([0, 0, 4]), 1),                 # ints do not: (2, 3)
    (Ellipsis, A([2, 0]), slice(None, None, 2)),
    B,                                              # boolean mask of dim 0
    (slice(None), A([True, False, False, True, True]), A([0, 2, 1])),   # mask with an array
    (A([[True, False, True, False, True]] * 4),),   # 2-d mask
    (slice(None), True),                            # Python bool: a new dim of size 1 ...
    (False, Ellipsis),                              # ... or 0
]


def _advanced_samples(rng, dtype):
    x = uniform(rng, (4, 5, 3), dtype)
    return [Sample((x, k)) for k in ADVANCED_KEYS]


def _advanced_ref(xp, x, key):
    if isinstance(key, tuple) and any(isinstance(k, bool) for k in key):
        # a Python bool (alone among the indices): a new dim, of size 0 for False
        out = x[tuple(None if isinstance(k, bool) else k for k in key)]
        return out[:0] if key[0] is False else out
    return _torch_index_ref(xp, x, key)


def _advanced_errors():
    x = _f(4, 3)
    return [ErrorInput((x, A([[True, False, True]])), IndexError,
                       ("mask [1, 3]", "[4, 3]", "index 0")),
            ErrorInput((x, (slice(None), A([1, 3]))), IndexError, ("index 3", "dimension 1")),
            ErrorInput((x, (slice(None, None, 0),)), ValueError, ("step", "greater than zero")),
            ErrorInput((x, np.ones(4, bool)), tg.TraceError,
                       ("boolean mask", "tg.compile", "b1[4]"), {"compiled": True}),
            ErrorInput((x, (True, A([0, 1]))), NotImplementedError, ("bool", "index arrays"))]


def _inplace(method):
    """Tensor.<method>_ on a non-leaf copy of x, returning it."""
    def fn(x, *args, **kw):
        y = x * 1.0
        out = getattr(y, method)(*args, **kw)
        assert out is y
        return y
    return fn


def _setitem(x, key, value):
    y = x * 1.0                 # a non-leaf to write into
    y[key] = value
    return y


def _setitem_ref(xp, x, key, value):
    key = key if isinstance(key, tuple) else (key,)
    key = tuple(np.asarray(k) if isinstance(k, list) else k for k in key)
    shape = np.shape(_torch_index_ref(np, np.zeros(x.shape), key))
    return _put_torch(xp, x, key, xp.broadcast_to(xp.asarray(value).astype(x.dtype), shape))


def _setitem_samples(rng, dtype):
    x = uniform(rng, (4, 5), dtype)
    u = lambda *s: uniform(rng, s, dtype)  # noqa: E731
    out = [Sample((x, rng.random((4, 5)) > 0.5, u())),           # mask: a `where` (traces)
           Sample((x, (slice(1, 3), slice(None, None, 2)), u(2, 3))),
           Sample((x, 0, 2.5)),
           Sample((x, (Ellipsis, None, 1), u(4, 1))),
           Sample((x, (A([0, 3, 0]), A([1, 4, 1])), u()), fd=False),   # repeats: torch's rule
           Sample((x, (slice(None), A([4, 0])), u(2))),
           Sample((u(4, 2, 5), (A([[1], [2]]), slice(0, 1), A([0, 3])), u(2, 2, 1))),
           Sample((x, (A([True, False, True, True]), slice(1, 4)), u(3))),
           Sample((x, A([True, False, True, True]), u(3, 5)))]   # needs the count: eager
    if dtype is F32:
        out.append(Sample((x, 1, uniform(rng, (5,), F64)), dtype=F32))   # cast to x's dtype
    return out


def _setitem_errors():
    x = _f(4, 5)
    return [ErrorInput((x, (slice(None), A([0, 1])), _f(3)), ValueError,
                       ("shape mismatch", "[3]", "[4, 2]")),
            ErrorInput((x, 0, _f(2, 5)), ValueError, ("shape mismatch", "[2, 5]", "[5]")),
            ErrorInput((x, (slice(None, None, -1),), 1.0), ValueError, ("step",)),
            ErrorInput((x, A([True, False, True, True]), _f(2, 5)), ValueError,
                       ("shape mismatch", "[2, 5]", "[3, 5]"))]


OPS = [
    OpInfo("unflatten", lambda x, d, s: x.unflatten(d, s), _unflatten_ref, _unflatten_samples,
           error_inputs=_unflatten_errors, complex_samples=2),
    OpInfo("movedim", tg.movedim, lambda xp, x, s, d: xp.moveaxis(x, s, d), _movedim_samples,
           error_inputs=_movedim_errors, complex_samples=2),
    OpInfo("t", lambda x: x.t(), _t_ref, _t_samples, error_inputs=_mT_errors,
           executor_samples=(0, 1), complex_samples=2),
    OpInfo("expand_as", lambda x, other: x.expand_as(other),
           lambda xp, x, other: xp.broadcast_to(x, other.shape), _expand_as_samples,
           covers=("expand",), complex_samples=2),
    OpInfo("narrow", tg.narrow, _narrow_ref, _narrow_samples, error_inputs=_narrow_errors,
           complex_samples=2),
    OpInfo("split", lambda x, *a: tg.split(x, *a), _split_ref, _split_samples,
           error_inputs=_split_errors, complex_samples=2,
           covers=("split", "split_pieces")),   # the primitive all four emit (one node)
    OpInfo("split_with_sizes", lambda x, *a: x.split_with_sizes(*a),
           lambda xp, x, s, dim=0: _pieces_ref(xp, x, list(s), dim), _split_with_sizes_samples,
           error_inputs=_split_with_sizes_errors, complex_samples=2),
    OpInfo("chunk", lambda x, *a: x.chunk(*a), _chunk_ref, _chunk_samples,
           error_inputs=_chunk_errors, complex_samples=2),
    OpInfo("unbind", tg.unbind, _unbind_ref, _unbind_samples, error_inputs=_unbind_errors,
           complex_samples=2),
    OpInfo("stack", lambda *xs, **kw: tg.stack(list(xs), **kw),
           lambda xp, *xs, dim=0: xp.stack(xs, axis=dim), _stack_samples,
           error_inputs=_stack_errors, complex_samples=2),
    OpInfo("flip", lambda x, dims: x.flip(*dims),
           lambda xp, x, dims: xp.flip(x, dims) if x.ndim else x, _flip_samples,
           error_inputs=_flip_errors, complex_samples=2),
    OpInfo("roll", tg.roll, _roll_ref, _roll_samples, error_inputs=_roll_errors,
           complex_samples=2),
    OpInfo("repeat", lambda x, r: x.repeat(*r), lambda xp, x, r: xp.tile(x, r),
           _repeat_samples, error_inputs=_repeat_errors, complex_samples=2),
    OpInfo("tile", lambda x, d: x.tile(d), lambda xp, x, d: xp.tile(x, d), _tile_samples,
           complex_samples=2),
    OpInfo("tril", tg.tril, lambda xp, x, k=0: xp.tril(x, k), _tri_samples,
           error_inputs=_tri_errors("tril"), complex_samples=2),
    OpInfo("triu", lambda x, *k: x.triu(*k), lambda xp, x, k=0: xp.triu(x, k), _tri_samples,
           error_inputs=_tri_errors("triu"), complex_samples=2),
    OpInfo("diagonal", tg.diagonal, lambda xp, x, o=0, a=0, b=1: xp.diagonal(x, o, a, b),
           _diagonal_samples, error_inputs=_diagonal_errors, complex_samples=2),
    OpInfo("diag", tg.diag, lambda xp, x, k=0: xp.diag(x, k), _diag_samples,
           error_inputs=_diag_errors, executor_samples=(0, 2), complex_samples=3),
    OpInfo("diag_embed", tg.diag_embed, _diag_embed_ref, _diag_embed_samples,
           error_inputs=_diag_embed_errors, covers=("diag_embed", "diagonal_scatter"),
           complex_samples=2),
    OpInfo("pad", tg.nn.functional.pad, _pad_ref, _pad_samples, error_inputs=_pad_errors,
           covers=("pad", "slice_scatter"), executor_samples=(0, 3, 4),
           note="reflect/replicate: an element copied into the padding gets the cotangents "
                "of all its copies", complex_samples=4),
    OpInfo("gather", tg.gather, _gather_ref, _gather_samples,
           error_inputs=lambda: _index_errors("gather", lambda x, d, i: (x, d, i)),
           covers=("gather", "take_along_axis"), note=REPEATED_READS, complex_samples=2),
    OpInfo("scatter", tg.scatter, _scatter_ref, _scatter_samples, error_inputs=_scatter_errors,
           covers=("scatter", "put_along_axis"), executor_samples=(0, 1), note=DUPLICATE_WRITES,
           complex_samples=2),
    OpInfo("scatter_add", lambda x, d, i, s: x.scatter_add(d, i, s),
           lambda xp, x, d, i, s: _scatter_ref(xp, x, d, i, s, add=True), _scatter_add_samples,
           error_inputs=lambda: _index_errors("scatter_add", lambda x, d, i: (x, d, i, _f(2, 3))),
           complex_samples=2),
    OpInfo("take_along_dim", tg.take_along_dim, _take_along_dim_ref, _take_along_dim_samples,
           error_inputs=_take_along_dim_errors, note=REPEATED_READS, complex_samples=2),
    OpInfo("index_select", tg.index_select, lambda xp, x, d, i: xp.take(x, i.reshape(-1), axis=d),
           _index_select_samples, error_inputs=_index_select_errors, note=REPEATED_READS,
           complex_samples=2),
    OpInfo("index_add", lambda x, *a, **kw: x.index_add(*a, **kw), _index_add_ref,
           _index_add_samples, error_inputs=_index_add_errors, covers=("index_add", "index_put"),
           complex_samples=2),
    OpInfo("index_fill", lambda x, *a: x.index_fill(*a), _index_fill_ref, _index_fill_samples,
           error_inputs=_index_fill_errors, covers=("index_fill", "index_put"),
           note="a 0-d tensor value gets the sum of the cotangents at the filled positions, "
                "each once however often the index repeats it", complex_samples=2),
    OpInfo("masked_scatter", lambda x, *a: x.masked_scatter(*a), _masked_scatter_ref,
           _masked_scatter_samples, error_inputs=_masked_scatter_errors,
           note="source's k-th element goes to the mask's k-th True (row-major); the "
                "unused rest of source gets a zero gradient", complex_samples=2),
    OpInfo("masked_fill", tg.masked_fill, _masked_fill_ref, _masked_fill_samples,
           error_inputs=_masked_fill_errors,
           note="a 0-d tensor value gets the sum of the cotangents where the mask holds",
           complex_samples=2),
    # not IR ops (their shapes depend on values); `covers` names what they run on
    OpInfo("masked_select", _eager_only(tg.masked_select), _masked_select_ref,
           _masked_select_samples, error_inputs=_masked_select_errors, covers=("index_take",),
           skips=EAGER_ONLY, complex_samples=2),
    OpInfo("nonzero", _eager_only(lambda x, **kw: x.nonzero(**kw)), _nonzero_ref,
           _nonzero_samples, differentiable=False, out_dtype=I64, covers=("where",),
           skips=EAGER_ONLY, error_inputs=_nonzero_errors),
    OpInfo("where_condition", lambda c: tg.where(c), lambda xp, c: tuple(np.nonzero(c)),
           _where_samples, differentiable=False, out_dtype=I64, covers=("where",),
           skips=EAGER_ONLY),
    OpInfo("masked_fill_", _inplace("masked_fill_"), _masked_fill_ref,
           lambda rng, dtype: _masked_fill_samples(rng, dtype)[:2], covers=("masked_fill",),
           complex_samples=2),
    OpInfo("index_fill_", _inplace("index_fill_"), _index_fill_ref,
           lambda rng, dtype: _index_fill_samples(rng, dtype)[:2], covers=("index_fill",),
           complex_samples=2),
    OpInfo("masked_scatter_", _inplace("masked_scatter_"), _masked_scatter_ref,
           lambda rng, dtype: _masked_scatter_samples(rng, dtype)[:2], covers=("masked_scatter",),
           complex_samples=2),
    OpInfo("index_add_", _inplace("index_add_"), _index_add_ref, _index_add_samples,
           covers=("index_add",), complex_samples=2),
    OpInfo("scatter_", _inplace("scatter_"), _scatter_ref,
           lambda rng, dtype: _scatter_samples(rng, dtype)[:3], covers=("scatter",),
           complex_samples=2),
    OpInfo("scatter_add_", _inplace("scatter_add_"),
           lambda xp, x, d, i, s: _scatter_ref(xp, x, d, i, s, add=True),
           lambda rng, dtype: _scatter_add_samples(rng, dtype)[:1], covers=("scatter_add",),
           complex_samples=2),
    OpInfo("getitem_advanced", _eager_only(lambda x, key: x[key]), _advanced_ref, _advanced_samples,
           error_inputs=_advanced_errors, covers=("slice", "index_take", "permute"),
           executor_samples=(1, 6), skips=EAGER_ONLY, note=REPEATED_READS, complex_samples=2),
    OpInfo("setitem", _setitem, _setitem_ref, _setitem_samples, error_inputs=_setitem_errors,
           covers=("slice_scatter", "index_put"), executor_samples=(0, 1, 6),
           note=DUPLICATE_WRITES, complex_samples=2),
]
