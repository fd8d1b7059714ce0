"""gradcheck's forward-mode and batched-gradient checks (``check_forward_ad``,
``check_batched_grad`` of torch.autograd.gradcheck).

- Forward mode: the Jacobian from `forward_ad` (one dual run per input element, one-hot
  tangent; in fast mode one run along the random ``u``) must match the numerical one,
  with torch's message "Jacobian computed with forward mode mismatch ...".
- Batched gradients: ``autograd.grad(..., is_grads_batched=True)`` with two random
  cotangents stacked must equal the two single VJPs, as torch compares ``vmap(vjp)`` with
  a loop.  tracegrad's batched ``grad`` runs the cached backward program once under
  ``jax.vmap`` (engine.py, batched_run.py; row by row for programs with host calls), so
  this checks that every op of the program batches (jax's batching rules; the IR has no
  per-op vmap rules of its own).  With the interpreter executor, which gradcheck pins under
  "auto", the rows run one by one; under cross-check mode both run and are compared.
"""
from __future__ import annotations

import numpy as np

from ..tensor import Tensor
from . import forward_ad as fwAD
from .engine import grad as _grad


def _show(a) -> str:
    return np.array2string(np.asarray(a), precision=4, suppress_small=True)


def _tangents_of(p, i: int, direction: np.ndarray) -> list[np.ndarray]:
    """Output tangents (flattened float64, one per checked output) of `p.func` with input
    ``diff_in[i]`` carrying tangent `direction` and the others none."""
    x = p.inputs[p.diff_in[i]]
    args = list(p.inputs)
    with fwAD.dual_level():
        t = Tensor(np.asarray(direction, x.dtype.numpy).reshape(x.shape))
        args[p.diff_in[i]] = fwAD.make_dual(x, t)
        outs = p.func(*args)
        outs = tuple(outs) if isinstance(outs, (tuple, list)) else (outs,)
        cols = []
        for k in p.diff_out:
            tan = fwAD.unpack_dual(outs[k]).tangent
            m = p.outputs[k].numel()
            cols.append(np.zeros(m) if tan is None
                        else np.array(tan._data, dtype=np.float64).reshape(-1))
    return cols


def forward_mismatch(pos: int, i: int, numerical, analytical) -> str:
    return (f"Jacobian computed with forward mode mismatch for output {pos:d} with respect to "
            f"input {i:d},\nnumerical:{_show(numerical)}\nanalytical:{_show(analytical)}\n")


def check_forward_ad(p, numerical_jacobian, allclose, error, fast: bool, rng, unit) -> None:
    """Raise `error` where the forward-mode Jacobian of `p` differs from the numerical one.

    `numerical_jacobian(p, i)` and `allclose(a, n)` come from gradcheck.py (slow mode);
    fast mode compares ``v^T J u`` with `unit` random vectors, as the backward check does."""
    if fast:
        tensor_outs = p.tensor_outputs()
        for i, x in enumerate(p.wrt):
            u = unit(rng, x.numel())
            ju = _tangents_of(p, i, u)
            num = p.directional(i, u)
            for pos, k in enumerate(p.diff_out):
                v = unit(rng, p.outputs[k].numel())
                a = float(np.dot(v, ju[pos]))
                n = float(np.dot(v, num[tensor_outs.index(k)]))
                if not allclose(a, n, float(np.sum(u)) * float(np.sum(v))):
                    raise error(forward_mismatch(pos, i, n, a))
        return
    for i, x in enumerate(p.wrt):
        numerical = numerical_jacobian(p, i)
        cols = [_tangents_of(p, i, np.eye(x.numel())[e]) for e in range(x.numel())]
        for pos, k in enumerate(p.diff_out):
            m = p.outputs[k].numel()
            analytical = np.stack([c[pos] for c in cols]) if cols else np.zeros((0, m))
            if not allclose(analytical, numerical[pos], 1.0):
                raise error(forward_mismatch(pos, i, numerical[pos], analytical))


_FAILED_BATCHED = (
    "While computing batched gradients, got: the batched gradients differ from the gradients "
    "computed one cotangent at a time (torch's check_batched_grad). Either the backward of "
    "an op in `func` depends on state that changes between runs, or a custom Function's "
    "backward is not the same function of each cotangent; pass check_batched_grad=False to "
    "skip this check.")


def check_batched_grad(p, error, rng) -> None:
    """Raise `error` where ``grad(..., is_grads_batched=True)`` differs from single VJPs."""
    for pos, k in enumerate(p.diff_out):
        out = p.outputs[k]
        cts = [Tensor(rng.standard_normal(out.shape).astype(out.dtype.numpy)) for _ in range(2)]

        def vjp(ct):
            grads = _grad([out], p.wrt, [ct], retain_graph=True, allow_unused=True)
            return [np.zeros(x.shape) if g is None else np.asarray(g._data, np.float64)
                    for g, x in zip(grads, p.wrt)]

        expected = [np.stack(rows) for rows in zip(*(vjp(c) for c in cts))]
        stacked = Tensor(np.stack([c._data for c in cts]))
        got = _grad([out], p.wrt, [stacked], retain_graph=True, allow_unused=True,
                    is_grads_batched=True)
        for i, (g, e) in enumerate(zip(got, expected)):
            res = np.zeros(e.shape) if g is None else np.asarray(g._data, np.float64)
            if not np.allclose(res, e):
                raise error(f"For output {pos} and input {i}:\n\n{_FAILED_BATCHED}\n\n"
                            f"Got:\n{_show(res)}\n\nExpected:\n{_show(e)}\n")
