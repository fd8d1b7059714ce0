"""Op database: stacking, grids, scaled products, cdist and bucketing (issue 16).

The composites of ir/ops/combine.py (atleast_1d/2d/3d, hstack, vstack, dstack, column_stack, meshgrid,
cartesian_prod, kron, diff, addmm, addmv, baddbmm, addbmm, cdist) and ir/ops/bucket.py
(searchsorted, bucketize, histc: no gradient).  torch 2.13's values for all of them are
recorded in tests/api/test_surface_ops_more.py; the references here are NumPy's functions.
"""
from __future__ import annotations

import numpy as np

import tracegrad as tg

from .core import F32, I64, ErrorInput, OpInfo, Sample, uniform


def _f(*shape, dtype=np.float32):
    return np.ones(shape, dtype)


def _list(fn):
    """The registry's variadic ops take the tensors as one list."""
    return lambda *xs, **kw: fn(list(xs), **kw)


def _pairs(shapes):
    def samples(rng, dtype):
        return [Sample(tuple(uniform(rng, s, dtype) for s in shape)) for shape in shapes]
    return samples


def _meshgrid_ref(xp, *xs, indexing):
    return tuple(xp.meshgrid(*xs, indexing=indexing))


def _meshgrid_samples(rng, dtype):
    a, b, c = (uniform(rng, (n,), dtype) for n in (3, 2, 4))
    return [Sample((a, b), {"indexing": "ij"}), Sample((a, b, c), {"indexing": "xy"}),
            Sample((a,), {"indexing": "xy"})]


def _cartesian_ref(xp, *xs):
    if len(xs) == 1:
        return xs[0]
    return xp.stack([g.reshape(-1) for g in xp.meshgrid(*xs, indexing="ij")], 1)


def _diff_ref(xp, x, n=1, dim=-1, prepend=None, append=None):
    parts = [p for p in (prepend, x, append) if p is not None]
    return xp.diff(xp.concatenate(parts, dim) if len(parts) > 1 else x, n=n, axis=dim)


def _diff_samples(rng, dtype):
    x = uniform(rng, (3, 4), dtype)
    return [Sample((x,)), Sample((x,), {"n": 2, "dim": 0}),
            # kwargs pass as they are, so the tensors prepend / append go by position
            Sample((x, 1, -1, uniform(rng, (3, 1), dtype), uniform(rng, (3, 2), dtype)))]


def _scaled_ref(product):
    def ref(xp, input, a, b, beta=1, alpha=1):
        return beta * input + alpha * product(xp, a, b)
    return ref


def _product_samples(shapes):
    def samples(rng, dtype):
        ins = [tuple(uniform(rng, s, dtype) for s in shape) for shape in shapes]
        return [Sample(ins[0]), Sample(ins[0], {"beta": 0.5, "alpha": -2}),
                *(Sample(i) for i in ins[1:])]
    return samples


def _cdist_ref(xp, a, b, p=2.0, compute_mode=None):
    d = xp.abs(a[..., :, None, :] - b[..., None, :, :])
    if p == float("inf"):
        return xp.max(d, -1)
    return xp.sum(d ** p, -1) ** (1 / p)


def _cdist_samples(rng, dtype):
    a, b = uniform(rng, (3, 2), dtype), uniform(rng, (4, 2), dtype)
    return [Sample((a, b)), Sample((a, b), {"p": 1.0}), Sample((a, b), {"p": 3.0}),
            Sample((a, b), {"p": float("inf")}),
            Sample((a, b), {"compute_mode": "use_mm_for_euclid_dist"}),
            Sample((uniform(rng, (2, 3, 2), dtype), uniform(rng, (2, 2, 2), dtype)),
                   {"p": 1.5})]


def _sorted_samples(rng, dtype):
    seq = np.sort(uniform(rng, (6,), dtype))
    return [Sample((seq, uniform(rng, (2, 3), dtype))),
            Sample((seq, uniform(rng, (4,), dtype)), {"right": True})]


def _searchsorted_ref(xp, seq, v, right=False, side=None, out_int32=False, sorter=None):
    return xp.searchsorted(seq, v, side="right" if right else "left").astype(np.int64)


def _bucketize_ref(xp, v, boundaries, right=False, out_int32=False):
    return xp.searchsorted(boundaries, v, side="right" if right else "left").astype(np.int64)


def _bucketize_samples(rng, dtype):
    return [Sample((s.args[1], s.args[0]), s.kwargs) for s in _sorted_samples(rng, dtype)]


def _histc_ref(xp, x, bins=100, min=0, max=0):  # noqa: A002
    lo, hi = (float(x.min()), float(x.max())) if min == max else (min, max)
    return np.histogram(np.asarray(x), bins, (lo, hi))[0].astype(x.dtype)


def _histc_samples(rng, dtype):
    x = uniform(rng, (20,), dtype)
    return [Sample((x,), {"bins": 5, "min": -1.5, "max": 1.5}), Sample((x,), {"bins": 7})]


STACK_SHAPES = [((2, 3), (2, 1)), ((3,), (2,))]
NO_GRAD = "no gradient (torch's outputs are indices or counts)"

def _atleast_samples(rng, dtype):
    return [Sample((uniform(rng, s, dtype),)) for s in ((), (3,), (2, 3), (2, 1, 2))]


OPS = [
    *(OpInfo(f"atleast_{nd}d", getattr(tg, f"atleast_{nd}d"),
             lambda xp, x, nd=nd: getattr(xp, f"atleast_{nd}d")(x), _atleast_samples,
             complex_samples=1) for nd in (1, 2, 3)),
    OpInfo("hstack", _list(tg.hstack), lambda xp, *xs: xp.hstack(xs), _pairs(STACK_SHAPES),
           error_inputs=lambda: [ErrorInput((), ValueError, ("hstack", "non-empty"))],
           complex_samples=1),
    OpInfo("vstack", _list(tg.vstack), lambda xp, *xs: xp.vstack(xs),
           _pairs([((2, 3), (3,)), ((2,), (2,))]), complex_samples=1),
    OpInfo("dstack", _list(tg.dstack), lambda xp, *xs: xp.dstack(xs),
           _pairs([((2, 3), (2, 3, 2)), ((2,), (2,))]), complex_samples=1),
    OpInfo("column_stack", _list(tg.column_stack), lambda xp, *xs: xp.column_stack(xs),
           _pairs([((3,), (3, 2)), ((), ())]), complex_samples=1),
    OpInfo("meshgrid", lambda *xs, **kw: tuple(tg.meshgrid(*xs, **kw)), _meshgrid_ref,
           _meshgrid_samples, complex_samples=1,
           error_inputs=lambda: [ErrorInput((_f(2),), RuntimeError, ("meshgrid", "foo"),
                                            {"indexing": "foo"})]),
    OpInfo("cartesian_prod", tg.cartesian_prod, _cartesian_ref,
           _pairs([((3,), (2,)), ((2,), (2,), (3,)), ((3,),)]), complex_samples=1),
    OpInfo("kron", tg.kron, lambda xp, a, b: xp.kron(a, b),
           _pairs([((2, 3), (2, 2)), ((3,), (2, 2)), ((2, 1, 2), (3, 2))]), complex_samples=1),
    OpInfo("diff", tg.diff, _diff_ref, _diff_samples, complex_samples=1,
           error_inputs=lambda: [ErrorInput((np.array(1.0, np.float32),), RuntimeError,
                                            ("diff", "at least one-dimensional"))]),
    OpInfo("addmm", tg.addmm, _scaled_ref(lambda xp, a, b: a @ b),
           _product_samples([((2, 3), (2, 4), (4, 3)), ((3,), (2, 4), (4, 3))]),
           complex_samples=1,
           error_inputs=lambda: [ErrorInput((_f(3, 3), _f(2, 4), _f(4, 3)), tg.ShapeError,
                                            ("addmm", "does not broadcast", "f32[3,3]"))]),
    OpInfo("addmv", tg.addmv, _scaled_ref(lambda xp, a, b: a @ b),
           _product_samples([((2,), (2, 4), (4,)), ((), (3, 2), (2,))]), complex_samples=1),
    OpInfo("baddbmm", tg.baddbmm, _scaled_ref(lambda xp, a, b: a @ b),
           _product_samples([((2, 3, 2), (2, 3, 4), (2, 4, 2)), ((3, 2), (2, 3, 4), (2, 4, 2))]),
           complex_samples=1),
    OpInfo("addbmm", tg.addbmm, _scaled_ref(lambda xp, a, b: (a @ b).sum(0)),
           _product_samples([((3, 2), (2, 3, 4), (2, 4, 2))]), complex_samples=1),
    OpInfo("cdist", tg.cdist, _cdist_ref, _cdist_samples, tols={F32: (1e-5, 1e-5)},
           notes="0 where a distance is 0, as torch (the norm's subgradient there); p = inf: "
                 "every tied largest coordinate gets the whole gradient, as torch",
           error_inputs=lambda: [ErrorInput((_f(3, 2), _f(2, 3)), RuntimeError,
                                            ("cdist", "same number of columns"))]),
    OpInfo("searchsorted", tg.searchsorted, _searchsorted_ref, _sorted_samples,
           differentiable=False, out_dtype=I64, notes=NO_GRAD,
           error_inputs=lambda: [ErrorInput((_f(2, 3), _f(3, 3)), RuntimeError,
                                            ("searchsorted", "[2, 3]", "[3, 3]"))]),
    OpInfo("bucketize", tg.bucketize, _bucketize_ref, _bucketize_samples,
           differentiable=False, out_dtype=I64, notes=NO_GRAD),
    OpInfo("histc", tg.histc, _histc_ref, _histc_samples, differentiable=False, notes=NO_GRAD,
           error_inputs=lambda: [ErrorInput((_f(2),), RuntimeError, ("histc", "bins must be"),
                                            {"bins": 0})]),
]
