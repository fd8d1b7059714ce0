"""Ops only programs and decompositions emit (INTERNAL, called here through `tracegrad._ops`),
the creation primitives, and the tape's marks that no call can exercise alone.

- creation: `full` and `arange` (tg.full / tg.arange), against numpy.full / numpy.arange;
- backward-only ops: `slice_backward` and `index_take_backward` (the adjoints of slicing and
  of integer-array indexing: the cotangent placed, or added, into zeros), `gauge_check` (the
  identity after the phase check of complex eigh / svd backwards: it raises when the check
  fails);
- `index_check`: the identity on an index tensor after its bounds check (traced programs put
  it between a user's index and the kernel that reads it).
- `stop_gradient`: the identity without gradient (the composites with none, floor_divide and
  the closeness comparisons, put their operands through it).
- `untracked_write`: `new`'s value with `input`'s gradient (tg.compile's graph of an in-place
  write autograd does not see, under no_grad or through `.data`).
- tensor_hooks, node_hooks, host_call, custom_function carry the Python hooks / Function
  objects of one tape in their attributes: they exist only inside programs the engine builds,
  so their entries name the tests that run them (`exercised_by`) and have no samples.
"""
from __future__ import annotations

import numpy as np

import tracegrad as tg
from tracegrad import _ops

from .core import F32, I64, ErrorInput, OpInfo, Sample, ints, uniform

A = np.array


def _full_samples(rng, dtype):
    return [Sample(((2, 3), 1.5), {"dtype": dtype}, dtype),
            Sample(((), -0.25), {"dtype": dtype}, dtype),
            Sample(((4,), 3), {"dtype": I64}, I64)]


def _arange_samples(rng, dtype):
    return [Sample((0, 5, 1), {"dtype": dtype}, dtype),
            Sample((-1.0, 2.0, 0.5), {"dtype": dtype}, dtype),
            Sample((10, 1, -3), {"dtype": I64}, I64)]


def _slice_backward_samples(rng, dtype):
    return [Sample((uniform(rng, (2, 3), dtype),),
                   {"shape": (4, 3), "starts": (1, 0), "stops": (3, 3), "steps": (1, 1)}),
            Sample((uniform(rng, (2, 2), dtype),),
                   {"shape": (4, 5), "starts": (0, 1), "stops": (4, 5), "steps": (2, 2)}),
            Sample((uniform(rng, (3,), dtype),),
                   {"shape": (7,), "starts": (0,), "stops": (7,), "steps": (3,)})]


def _slice_backward_ref(xp, ct, *, shape, starts, stops, steps):
    key = tuple(slice(a, b, c) for a, b, c in zip(starts, stops, steps))
    # the zero tensor with `ct` at `key`, written without item assignment (jax arrays):
    # the sum over the kept positions of one-hot rows, dim by dim
    out = ct
    for d, k in enumerate(key):
        rows = np.arange(shape[d])[k]
        place = (rows[:, None] == np.arange(shape[d])[None, :]).astype(np.float64)
        out = xp.moveaxis(xp.tensordot(out, place.astype(ct.dtype), axes=([d], [0])), -1, d)
    return out


def _take_backward_samples(rng, dtype):
    return [Sample((uniform(rng, (3, 4), dtype), A([0, 2, 2])), {"shape": (5, 4), "dim": 0}),
            Sample((uniform(rng, (2, 3, 2), dtype), A([4, 0, 4])), {"shape": (2, 5, 2), "dim": 1}),
            Sample((uniform(rng, (2, 2, 3), dtype), A([[1, 1], [0, 2]])),
                   {"shape": (3, 3), "dim": 0})]


def _take_backward_ref(xp, ct, index, *, shape, dim):
    flat = np.asarray(index).reshape(-1)
    lead = ct.shape[:dim]
    ct = xp.reshape(ct, lead + (flat.size,) + ct.shape[dim + np.ndim(index):])
    place = (flat[:, None] == np.arange(shape[dim])[None, :]).astype(ct.dtype)
    return xp.moveaxis(xp.tensordot(ct, place, axes=([dim], [0])), -1, dim)


def _index_check(index, **kw):
    return _ops.index_check(index, "probe", **kw)


def _index_check_samples(rng, dtype):
    return [Sample((ints(rng, (3, 4), 0, 5),), {"size": 5}),
            Sample((A([-5, 4, 0]),), {"size": 5, "negative": True}),
            Sample((A([-100, 2, -100]),), {"size": 3, "ignore": -100}),
            Sample((np.zeros((0,), np.int64),), {"size": 1})]


def _index_check_errors():
    return [ErrorInput((A([0, 5]),), IndexError,
                       ("probe: index 5 is out of bounds for dimension 0 with size 5",),
                       {"size": 5}),
            ErrorInput((A([-1, 2]),), IndexError, ("probe: index -1", "size 5"), {"size": 5}),
            ErrorInput((A([-6]),), IndexError, ("probe: index -6", "dimension 1"),
                       {"size": 5, "dim": 1, "negative": True}),
            ErrorInput((A([0.5]),), tg.DTypeError, ("index_check (probe)", "integer"),
                       {"size": 5})]


def _gauge_check(x, got=None):
    zeros = tg.zeros(3, dtype=tg.float64)
    return _ops.gauge_check(x, zeros if got is None else got, zeros, "linalg.eigh")


def _gauge_check_errors():
    return [ErrorInput((np.ones((2, 2), np.float32), tg.tensor([0.0, 0.5, 0.0], dtype=tg.float64)),
                       RuntimeError, ("linalg.eigh backward", "depends on those phases"))]


def _untracked_write_ref(xp, x, new):
    """`new`'s value with `x`'s gradient (jax: x + stop_gradient(new - x))."""
    if xp is np:
        return np.asarray(new) * 1
    import jax   # the jax reference only: opdb's generic checks pass xp=jax.numpy
    return x + jax.lax.stop_gradient(new - x)


def _elsewhere(name, tests):
    return OpInfo(name, None, None, lambda rng, dtype: [], exercised_by=tests)


COMPLEX_TEST = "tests/ops/test_complex.py::test_hooks_and_custom_functions_see_complex_gradients"
HOOK_TESTS = ("a forward mark of one tape's hooks (their Python callables are attributes): "
              f"tests/api/test_hooks.py; complex gradients: {COMPLEX_TEST}")

OPS = [
    OpInfo("full", lambda size, fill, dtype: tg.full(size, fill, dtype=dtype),
           lambda xp, size, fill, dtype: np.full(size, fill, dtype.numpy), _full_samples,
           differentiable=False),
    OpInfo("arange", lambda *a, dtype: tg.arange(*a, dtype=dtype),
           lambda xp, *a, dtype: np.arange(*a, dtype=dtype.numpy), _arange_samples,
           differentiable=False,
           # torch 2.13: RuntimeError "step must be nonzero"
           error_inputs=lambda: [ErrorInput((0, 3, 0), RuntimeError, ("arange", "step"),
                                            {"dtype": F32})]),
    OpInfo("slice_backward", _ops.slice_backward, _slice_backward_ref, _slice_backward_samples,
           complex_samples=2),
    OpInfo("index_take_backward", _ops.index_take_backward, _take_backward_ref,
           _take_backward_samples, complex_samples=2,
           notes="duplicate indices add their cotangents"),
    OpInfo("index_check", _index_check, lambda xp, index, **kw: index, _index_check_samples,
           differentiable=False, out_dtype=I64, error_inputs=_index_check_errors),
    OpInfo("stop_gradient", _ops.stop_gradient, lambda xp, x: x * 1,
           lambda rng, dtype: [Sample((uniform(rng, (3, 4), dtype),)),
                               Sample((uniform(rng, (), dtype),)),
                               Sample((ints(rng, (5,), -3, 4),), dtype=I64)],
           differentiable=False, complex_samples=2),
    OpInfo("untracked_write", _ops.untracked_write, _untracked_write_ref,
           lambda rng, dtype: [Sample((uniform(rng, (3, 4), dtype), uniform(rng, (3, 4), dtype)),
                                      fd=False),
                               Sample((uniform(rng, (), dtype), uniform(rng, (), dtype)), fd=False)],
           complex_samples=2,
           notes="the value of `new`, the gradient of `input`: finite differences disagree by "
                 "design, the jax reference (a stop_gradient) is what compares",
           no_fd="its value is `new`'s and its gradient goes to `input`"),
    OpInfo("gauge_check", _gauge_check, lambda xp, x, got=None: x * 1,
           lambda rng, dtype: [Sample((uniform(rng, (2, 2), dtype),)),
                               Sample((uniform(rng, (3,), dtype),))],
           error_inputs=_gauge_check_errors, complex_samples=2),
    _elsewhere("tensor_hooks", HOOK_TESTS),
    _elsewhere("node_hooks", HOOK_TESTS),
    _elsewhere("host_call", "a Python hook or Function.backward called from a backward program "
                            "(its callable is an attribute): tests/api/test_hooks.py, "
                            f"tests/api/test_function.py; complex gradients: {COMPLEX_TEST}"),
    _elsewhere("custom_function", "one autograd.Function application (its class is an "
                                  "attribute): tests/api/test_function.py; complex gradients: "
                                  f"{COMPLEX_TEST}"),
    # the fused recurrent layer: its operands are a layer's projected gates, stacked state and
    # recurrent weights, so it is checked through nn.RNN/LSTM/GRU against the composed cells
    # on both executors, and by gradcheck of the op itself
    _elsewhere("rnn_layer", "one layer-direction of nn.RNN/LSTM/GRU (mode and state layout "
                            "by the module): tests/api/test_rnn_fused.py, tests/api/test_rnn.py"),
    _elsewhere("rnn_layer_backward", "the reverse-time loop of rnn_layer: "
                                     "tests/api/test_rnn_fused.py"),
]
