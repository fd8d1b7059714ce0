"""No optional pass changes a gradient (issue 5), on every op in the op database.

For the float64 samples of every differentiable op:

- the eager backward program built with every optional pass off (prune,
  simplify, cse, fuse: ``TRACEGRAD_DISABLE_PASSES``), and with each one off
  alone, gives the gradients of the full pipeline within 1e-12 relative;
- a ``tg.compile``d function returning the op's output (so the compiler
  partitions the joint graph, passes/partition.py) gives the same gradients
  under the ``min_bytes`` and the ``save_all`` policies.

`make test` runs the first sample per op with all passes off and both
policies; the per-pass and later-sample sweep is marked slow.
"""
from __future__ import annotations

import numpy as np
import pytest

import tracegrad as tg
import tracegrad.passes
from tracegrad.autograd import engine
from tracegrad.passes import OPTIONAL_PASSES

from test_ops import F64, GRAD_CASES, _diff_positions, _joined, _seed, _tensors

CONFIGS = ("all",) + OPTIONAL_PASSES


def _case_params(configs):
    out = []
    for info, dtype, i, s in GRAD_CASES:
        if dtype is not F64 or s.xfail:
            continue
        for config in configs:
            slow = i > 0 or config != configs[0]
            out.append(pytest.param(info, s, config, id=f"{info.name}-{i}-{config}",
                                    marks=[pytest.mark.slow] if slow else []))
    return out


@pytest.fixture(autouse=True)
def _interpreter(monkeypatch):
    """The NumPy interpreter, an empty program cache before and after: each configuration
    builds its own backward program."""
    engine.clear_cache()
    tg.set_executor("interpreter")
    yield
    engine.clear_cache()


def _grads(info, sample, u=None):
    args = _tensors(sample.args)
    out = _joined(info.fn(*args, **sample.kwargs))
    if u is None:
        u = np.random.default_rng(_seed("passes", info.name)).standard_normal(out.shape)
    diff = [args[i] for i in _diff_positions(sample)]
    grads = tg.autograd.grad(out, diff, grad_outputs=tg.tensor(u.astype(out.dtype.numpy)),
                             allow_unused=True, materialize_grads=True)
    return u, [g.numpy() for g in grads]


def _assert_equal_grads(actual, expected, what):
    assert len(actual) == len(expected)
    for k, (a, e) in enumerate(zip(actual, expected)):
        scale = max(1.0, float(np.max(np.abs(e[np.isfinite(e)]), initial=0.0)))
        np.testing.assert_allclose(a, e, rtol=1e-12, atol=1e-12 * scale, equal_nan=True,
                                   err_msg=f"{what}: gradient {k}")


@pytest.mark.parametrize("info,sample,config", _case_params(CONFIGS))
def test_passes_off_same_gradients(info, sample, config, monkeypatch, crosscheck_in_test_all):
    u, expected = _grads(info, sample)
    engine.clear_cache()
    monkeypatch.setenv("TRACEGRAD_DISABLE_PASSES",
                       ",".join(OPTIONAL_PASSES) if config == "all" else config)
    _, actual = _grads(info, sample, u)
    _assert_equal_grads(actual, expected, f"{config} off")


@pytest.mark.parametrize("info,sample,config", _case_params(("save_all",)))
def test_partition_policies_same_gradients(info, sample, config, monkeypatch,
                                           crosscheck_in_test_all):
    pos = [i for i, a in enumerate(sample.args) if isinstance(a, np.ndarray)]

    def fn(*tensors):
        a = list(sample.args)
        for i, t in zip(pos, tensors):
            a[i] = t
        return _joined(info.fn(*a, **sample.kwargs))

    def compiled_grads():
        args = [t for t in _tensors(sample.args) if isinstance(t, tg.Tensor)]
        try:
            out = tg.compile(fn, executor="interpreter", fullgraph=True)(*args)
        except tg.TraceError as e:   # value-dependent shapes (masked_select): eager only
            pytest.skip(f"not traceable: {e}")
        if not out.requires_grad:
            pytest.skip("the compiled result does not require grad")
        u = np.random.default_rng(_seed("policy", info.name)).standard_normal(out.shape)
        diff = [t for t in args if t.requires_grad]
        grads = tg.autograd.grad(out, diff, grad_outputs=tg.tensor(u.astype(out.dtype.numpy)),
                                 allow_unused=True, materialize_grads=True)
        return [g.numpy() for g in grads]

    expected = compiled_grads()
    original, policies = tracegrad.passes.build_backward, []

    def build_backward(*args, **kwargs):
        policies.append(kwargs.get("policy"))
        return original(*args, **{**kwargs, "policy": config})

    monkeypatch.setattr(tracegrad.passes, "build_backward", build_backward)
    _assert_equal_grads(compiled_grads(), expected, f"policy {config}")
    assert "min_bytes" in policies, "the compiled backward program was not rebuilt"
