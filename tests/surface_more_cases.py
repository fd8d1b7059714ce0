"""The cases tests/api/test_surface_ops_more.py checks against torch 2.13 (issue 16's
hstack ... cdist, searchsorted ... tril_indices).

Each case is ``fn(M, *inputs)`` written against a module `M` that is either ``torch`` or
``tracegrad``, so the recording script (tools/record_torch_surface_cases.py, run under the
torch venv) and the test run the same calls.  Differentiable cases also record the
gradients of ``sum(out * w)``, w = 1, 2, 3, ... over each output, per floating input.
"""
from __future__ import annotations

import numpy as np

R = np.random.default_rng(16)


def _a(*shape):
    return np.round(R.uniform(-2, 2, shape), 2).astype(np.float64)


X23, Y23, V3, V2 = _a(2, 3), _a(2, 3), _a(3), _a(2)
M23, A24, B43 = _a(2, 3), _a(2, 4), _a(4, 3)
B234, B242, I232 = _a(2, 3, 4), _a(2, 4, 2), _a(2, 3, 2)
P = np.array([[0., 0.], [1., 2.], [3., 1.]])
Q = np.array([[0., 0.], [2., 2.]])
BIG1, BIG2 = _a(30, 3), _a(27, 3)

# name: (fn(M, *tensors), float64 inputs); every input is differentiated
GRAD_CASES = {
    "atleast_2d": (lambda M, x, y: M.atleast_2d(x, y), (V3, X23)),
    "atleast_3d": (lambda M, x, y: M.atleast_3d([x, y]), (V3, X23)),
    "atleast_1d_0d": (lambda M, x: M.atleast_1d(x.sum()), (V3,)),
    "hstack": (lambda M, x, y: M.hstack([x, y]), (X23, Y23)),
    "hstack_1d": (lambda M, x, y: M.hstack([x, y]), (V3, V2)),
    "vstack": (lambda M, x, y: M.vstack([x, y[0]]), (X23, Y23)),
    "dstack": (lambda M, x, y: M.dstack([x, y]), (X23, Y23)),
    "column_stack": (lambda M, x, y: M.column_stack([x, y]), (V3, X23.T.copy())),
    "meshgrid_ij": (lambda M, x, y: M.meshgrid(x, y, indexing="ij"), (V3, V2)),
    "meshgrid_xy": (lambda M, x, y: M.meshgrid([x, y], indexing="xy"), (V3, V2)),
    "cartesian_prod": (lambda M, x, y: M.cartesian_prod(x, y), (V3, V2)),
    "kron": (lambda M, x, y: M.kron(x, y), (X23, V2)),
    "kron_2d": (lambda M, x, y: M.kron(x, y[:, :2]), (X23, Y23)),
    "diff": (lambda M, x: M.diff(x), (X23,)),
    "diff_n2_dim0": (lambda M, x: M.diff(x, n=2, dim=0), (np.vstack([X23, Y23]),)),
    "diff_prepend_append": (lambda M, x, p: M.diff(x, prepend=p, append=p), (X23, Y23)),
    "addmm": (lambda M, m, a, b: M.addmm(m, a, b, beta=0.5, alpha=2), (M23, A24, B43)),
    "addmm_bcast": (lambda M, m, a, b: M.addmm(m[0], a, b), (M23, A24, B43)),
    "addmv": (lambda M, v, a, b: M.addmv(v, a, b[:, 0], beta=2, alpha=-1), (V2, A24, B43)),
    "baddbmm": (lambda M, i, a, b: M.baddbmm(i, a, b, beta=0.5, alpha=2), (I232, B234, B242)),
    "addbmm": (lambda M, i, a, b: M.addbmm(i[0], a, b, alpha=3), (I232, B234, B242)),
    "cdist_p2": (lambda M, x, y: M.cdist(x, y), (P, Q)),
    "cdist_p2_mm": (lambda M, x, y: M.cdist(x, y, compute_mode="use_mm_for_euclid_dist"), (P, Q)),
    "cdist_p1": (lambda M, x, y: M.cdist(x, y, p=1.0), (P, Q)),
    "cdist_p0": (lambda M, x, y: M.cdist(x, y, p=0.0), (P, Q)),
    "cdist_p3": (lambda M, x, y: M.cdist(x, y, p=3.0), (P, Q)),
    "cdist_inf": (lambda M, x, y: M.cdist(x, y, p=float("inf")), (P, Q)),
    "cdist_batched": (lambda M, x, y: M.cdist(x, y, p=1.5), (B234, _a(2, 5, 4))),
    # P > 25: torch's matrix-product form (row sums keep the literals short)
    "cdist_big": (lambda M, x, y: M.cdist(x, y).sum(1), (BIG1, BIG2)),
}

S = [1., 3., 5., 7., 9.]
VALS = [[3., 6., 9.], [0., 10., 5.]]
# name: fn(M) -> tensor or tuple of tensors (no gradient)
VALUE_CASES = {
    "searchsorted": lambda M: M.searchsorted(M.tensor(S), M.tensor(VALS)),
    "searchsorted_right": lambda M: M.searchsorted(M.tensor(S), M.tensor(VALS), right=True),
    "searchsorted_side": lambda M: M.searchsorted(M.tensor(S), M.tensor(VALS), side="right"),
    "searchsorted_scalar": lambda M: M.searchsorted(M.tensor(S), 4.0),
    "searchsorted_int32": lambda M: M.searchsorted(M.tensor(S), M.tensor(VALS), out_int32=True),
    "searchsorted_batched": lambda M: M.searchsorted(M.tensor([[1., 3., 5.], [2., 4., 6.]]),
                                                     M.tensor([[3., 6.], [1., 5.]])),
    "searchsorted_sorter": lambda M: M.searchsorted(M.tensor([5., 1., 3.]), M.tensor([2., 4.]),
                                                    sorter=M.tensor([1, 2, 0])),
    "bucketize": lambda M: M.bucketize(M.tensor(VALS), M.tensor(S)),
    "bucketize_right": lambda M: M.bucketize(M.tensor(VALS), M.tensor(S), right=True),
    "histc": lambda M: M.histc(M.tensor([1., 2., 1., 4., 2.5]), bins=4, min=0, max=3),
    "histc_data_range": lambda M: M.histc(M.tensor([1., 2., 1., 4.]), bins=4),
    "histc_constant": lambda M: M.histc(M.tensor([2., 2.]), bins=4),
    "histc_equal_bounds": lambda M: M.histc(M.tensor([1., 1., 0.5, 3.]), bins=3, min=2, max=2),
    "histc_edges": lambda M: M.histc(M.tensor([0.1, 0.2, 0.3, 0.7, 0.9, 1.0]), bins=10, min=0,
                                     max=1),
    "histc_f64": lambda M: M.histc(M.tensor(BIG1[:, 0]), bins=5, min=-1, max=1.5),
    "unique": lambda M: M.unique(M.tensor([3, 1, 2, 3, 1, 5])),
    "unique_all": lambda M: M.unique(M.tensor([3, 1, 2, 3, 1, 5]), return_inverse=True,
                                     return_counts=True),
    "unique_2d_inverse": lambda M: M.unique(M.tensor([[1, 2], [1, 2], [0, 5]]),
                                            return_inverse=True),
    "unique_dim0": lambda M: M.unique(M.tensor([[1, 2], [1, 2], [0, 5]]), dim=0,
                                      return_inverse=True, return_counts=True),
    "unique_float_nan": lambda M: M.unique(M.tensor([2.5, float("nan"), 1.0, 2.5])),
    "unique_method": lambda M: M.tensor([4, 4, 0]).unique(return_counts=True),
    "unique_consecutive": lambda M: M.unique_consecutive(M.tensor([1, 1, 2, 2, 3, 1, 1, 2]),
                                                         return_inverse=True,
                                                         return_counts=True),
    "unique_consecutive_dim1": lambda M: M.tensor([[1, 1, 2, 1], [3, 3, 0, 3]]
                                                  ).unique_consecutive(dim=1,
                                                                       return_counts=True),
    "unique_consecutive_2d": lambda M: M.unique_consecutive(M.tensor([[1, 1], [1, 5]]),
                                                            return_inverse=True),
    "bincount": lambda M: M.bincount(M.tensor([0, 1, 1, 3])),
    "bincount_minlength": lambda M: M.bincount(M.tensor([0, 1, 1, 3]), minlength=6),
    "bincount_weights": lambda M: M.bincount(M.tensor([0, 1, 1, 3]),
                                             weights=M.tensor([.5, 1., 2., 3.])),
    "bincount_int_weights": lambda M: M.bincount(M.tensor([0, 2]), weights=M.tensor([1, 2])),
    "bincount_empty": lambda M: M.bincount(M.tensor([], dtype=M.int64)),
    "bincount_method": lambda M: M.tensor([2, 2, 0]).bincount(),
    "tril_indices": lambda M: M.tril_indices(3, 3),
    "tril_indices_offset": lambda M: M.tril_indices(3, 4, 1),
    "triu_indices": lambda M: M.triu_indices(3, 3),
    "triu_indices_offset": lambda M: M.triu_indices(4, 3, -1),
    "triu_indices_int32": lambda M: M.triu_indices(2, 2, dtype=M.int32),
    "tril_indices_empty": lambda M: M.tril_indices(0, 3),
}


def _outputs(out):
    return list(out) if isinstance(out, (tuple, list)) else [out]


def run_grad_case(M, case):
    """(outputs as nested lists, grads of each input as nested lists) of `case` (a
    GRAD_CASES value: (fn, inputs)) under module `M`."""
    fn, inputs = case
    xs = [M.tensor(a, requires_grad=True) for a in inputs]
    outs = _outputs(fn(M, *xs))
    loss = 0
    for o in outs:
        w = M.arange(1, o.numel() + 1, dtype=o.dtype).reshape(o.shape)
        loss = loss + (o * w).sum()
    grads = M.autograd.grad(loss, xs)
    return [o.detach().numpy().tolist() for o in outs], [g.numpy().tolist() for g in grads]


def run_value_case(M, case):
    """[(values as nested lists, dtype name)] per output of `case` (a VALUE_CASES value)
    under module `M`."""
    return [(o.numpy().tolist(), str(o.dtype).split(".")[-1]) for o in _outputs(case(M))]


def assert_close(got, want, tol=1e-6):
    """Nested lists (complex ones too) equal within `tol`, NaN where the other has NaN."""
    kind = np.complex128 if np.iscomplexobj(np.asarray(want)) else np.float64
    np.testing.assert_allclose(np.asarray(got, kind), np.asarray(want, kind),
                               rtol=tol, atol=tol, equal_nan=True)


def check_grad_case(M, case, want):
    """`run_grad_case(M, case)` equals torch's recorded (outputs, grads) `want`."""
    outs, grads = run_grad_case(M, case)
    want_outs, want_grads = want
    assert len(outs) == len(want_outs) and len(grads) == len(want_grads)
    for got, expected in zip(outs + grads, want_outs + want_grads):
        assert_close(got, expected)


def check_value_case(M, case, want):
    """`run_value_case(M, case)` has torch's recorded dtypes and values `want`."""
    got = run_value_case(M, case)
    assert [d for _, d in got] == [d for _, d in want]
    for (g, _), (w, _) in zip(got, want):
        assert_close(g, w)
