"""Writing gradients into ``.grad``: what `backward` does with each gradient it computed.

A leaf's first gradient becomes its ``.grad`` (cut from the graph, or, under
``create_graph=True``, a copy with history as torch's ``CopyBackwards``); later ones add
to it, in place on the arrays where that is all ``add_`` would do.  `_accumulate_with_hooks`
is torch's AccumulateGrad with its hooks around it (the node's pre- and post-hooks, the
tensor's post-accumulate-grad hooks), run by `backward` and by a leaf's host call in the
backward program (hooks.py, ``BackwardRun.accumulate``).  Split from engine.py, which
re-exports these names.
"""
from __future__ import annotations

import numpy as np

from .. import _state
from .._device import CPU, is_on, placed
from ..backends import device_arrays
from ..tensor import Tensor
from . import forward_ad, hooks
from .grad_mode import no_grad, set_grad_enabled


def _on_device_of(t: Tensor, g: Tensor) -> Tensor:
    """`g` on `t`'s device (a differentiable copy when `g` has history, create_graph)."""
    a, b = t._data, g._data
    if not isinstance(a, (np.ndarray, *device_arrays.ARRAY_TYPES)):   # traced: no devices
        return g
    on_device = device_arrays.is_device_array(a)
    target = a.device if on_device else CPU
    if is_on(b, target):
        return g
    if g.grad_fn is None:
        return Tensor(placed(b, target))
    return g.to(device_arrays.torch_name(a) if on_device else "cpu")


def _accumulate_with_hooks(t: Tensor, g: Tensor, create_graph: bool) -> None:
    """AccumulateGrad with its hooks, in torch's order: the node's pre-hooks on ``(grad,)``,
    accumulation (none for a None `g`), the tensor's post-accumulate-grad hooks, the node's
    post-hooks."""
    acc = t._accumulator() if t._accumulator is not None else None
    ex = acc.extra if acc is not None else None
    with set_grad_enabled(create_graph):
        if ex is not None and ex.pre_hooks:
            g = hooks._run_node_hooks(ex.pre_hooks, lambda cur: (cur,), (g,), "pre")[0]
    if g is not None:   # None: no gradient reached it; the hooks still run, as torch's
        _accumulate(t, g, create_graph)
    with set_grad_enabled(create_graph):   # as torch's engine: `p.sub_(p.grad)` works
        table = getattr(t, "_hooks", None)
        if table is not None and table.post_acc:
            for fn in list(table.post_acc.values()):
                fn(t)
        if ex is not None and ex.post_hooks:
            for fn in list(ex.post_hooks.values()):
                fn((), (g,))


def _grad_copy(t: Tensor, g: Tensor) -> Tensor:
    """The first `.grad` a ``create_graph=True`` backward gives `t`: a copy of `g` with
    history, as torch's (a leaf's AccumulateGrad copies it into a new tensor, node
    ``CopyBackwards`` showing edges (None, g); a retained non-leaf clones it,
    ``CloneBackward0``), so ``t.grad`` is not the gradient the graph computed."""
    if g.grad_fn is None:
        return g
    with set_grad_enabled(True):
        out = g.clone()
    if t.grad_fn is None and out.grad_fn is not None:
        ex = out.grad_fn._extra()
        ex.name = "torch::autograd::CopyBackwards"
        ex.edges = (None, (g.grad_fn, g._out_index))
    return out


def _accumulate(t: Tensor, g: Tensor, create_graph: bool) -> None:
    if device_arrays.LIVE[0]:   # the gradient goes where the leaf lives (a program whose
        g = _on_device_of(t, g)   # inputs were all host values ran on the host)
    if t._grad is None:
        t._set_grad(_grad_copy(t, g) if create_graph else _detached(g))
    elif create_graph:
        t._set_grad(t._grad + g)
    else:
        old = t._grad
        if _plain_sum(old, g):   # what `old.add_(g)` does, without the op machinery
            with np.errstate(all="ignore"):
                old._data = old._data + g._data
            old._vc[0] += 1
            return
        with no_grad():
            if old._base is None and not old._requires_grad:
                old.add_(g)
            else:
                t._set_grad(old + g)


def _plain_sum(old: Tensor, g: Tensor) -> bool:
    """Can ``old.add_(g)`` be done on the arrays: eager NumPy values of one shape and dtype,
    `old` a plain tensor (no views, history, hooks, tangent or inference flag)."""
    a, b = old._data, g._data
    return (type(a) is np.ndarray and type(b) is np.ndarray and a.shape == b.shape
            and a.dtype == b.dtype and old._base is None and not old._views
            and not old._requires_grad and old.grad_fn is None
            and getattr(old, "_fw", None) is None and not getattr(old, "_inference", False)
            and _state.local.tracer is None)


def _detached(g: Tensor) -> Tensor:
    """`g` cut from the graph and from any view base (a gradient owns its value)."""
    if g.grad_fn is None and not g._requires_grad and g._base is None:
        return g
    out = Tensor(g._data)
    if getattr(g, "_fw", None) is not None:   # a forward-AD tangent stays (forward_ad.py)
        forward_ad.copy_tangent(out, g)
    return out
