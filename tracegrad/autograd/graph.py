"""torch.autograd.graph: the tape's `Node` / `AccumulateGrad` (defined in the dispatch core,
tracegrad/dispatch/tape.py, which records them), saved-tensor hooks, multi-grad hooks.

``tg.autograd.graph.Node`` is the class of every ``tensor.grad_fn``.
"""
from __future__ import annotations

import abc
import threading
from typing import NamedTuple

from ..dispatch.tape import (  # noqa: F401  (torch.autograd.graph's names; the engine's too)
    LEAF_HOOKS_USED, AccumulateGrad, NodeExtra, TapeNode, RemovableHandle, _camel, _HookAPI,
    add_hook, next_mark)
from ..dispatch.record import edge
from ..tensor import Tensor
from . import hooks
from .saved_hooks import (  # noqa: F401  (torch.autograd.graph's names)
    allow_mutation_on_saved_tensors, disable_saved_tensors_hooks, save_on_cpu, saved_tensors_hooks)

class Node(abc.ABC):
    """torch.autograd.graph.Node: an abstract class every graph node is an instance of, the
    tape's `TapeNode` (every ``grad_fn``) and a leaf's `AccumulateGrad` alike, as torch's
    ``__subclasshook__`` makes its C++ nodes and custom Functions' nodes instances
    (ir.graph.Node is the IR's)."""

    @classmethod
    def __subclasshook__(cls, subclass: type):
        if cls is Node and issubclass(subclass, _HookAPI):
            return True
        return NotImplemented


# ---- register_multi_grad_hook ------------------------------------------------------------

class _MultiHandle:
    """Handle of `register_multi_grad_hook`: ``remove()`` takes out every per-tensor hook."""

    def __init__(self, handles: list):
        self.handles = handles

    def remove(self) -> None:
        for h in self.handles:
            h.remove()

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.remove()


def register_multi_grad_hook(tensors, fn, *, mode: str = "all"):
    """Call `fn` once the gradients of `tensors` are computed (torch.autograd.graph).

    ``mode="all"``: after every tensor that this backward reaches has its
    gradient, ``fn(grads)`` gets one entry per tensor (None for tensors that
    are not part of this backward, or whose gradient is not needed for its
    ``inputs``).  ``mode="any"``: ``fn(grad)`` on the first gradient computed.
    Each tensor gets an ordinary tensor hook, so ordering against other hooks
    of a tensor follows registration order, as in torch.

    Returns:
        a handle whose ``remove()`` removes the hook.
    Raises:
        ValueError: unknown mode.
    """
    if mode not in ("all", "any"):
        raise ValueError(f"register_multi_grad_hook: expects mode to be one of ('all', 'any') "
                         f"but got {mode!r}")
    tensors = tuple(tensors)
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise TypeError(f"register_multi_grad_hook: element {i} is a {type(t).__name__}, "
                            "not a Tensor")
    state_key = object()
    lock = threading.Lock()

    def make(i: int):
        def inner(grad):
            run = hooks.current_run()
            with lock:
                st = run.multi.get(state_key) if run is not None else None
                if st is None:
                    expected = (len([t for t in tensors if t.requires_grad]) if run is None
                                else sum(run.will_execute(t) for t in tensors))
                    st = {"grads": [None] * len(tensors), "count": 0, "expected": expected,
                          "done": False}
                    if run is not None:
                        run.multi[state_key] = st
                if st["done"]:
                    return None
                st["grads"][i] = grad
                st["count"] += 1
                fire = mode == "any" or st["count"] >= st["expected"]
                if fire:
                    st["done"] = True
            if fire:
                fn(grad if mode == "any" else list(st["grads"]))
            return None
        return inner

    handles = [t.register_hook(make(i)) for i, t in enumerate(tensors) if t.requires_grad]
    return _MultiHandle(handles)


def increment_version(tensor) -> None:
    """Bump `tensor`'s version counter, as an in-place op would (torch.autograd.graph)."""
    tensor._vc[0] += 1


class GradientEdge(NamedTuple):
    """An edge of the graph (torch.autograd.graph.GradientEdge): the node a tensor's gradient
    flows into and which of its outputs the tensor is."""

    node: object
    output_nr: int
    ownership_token: object = None


def get_gradient_edge(tensor) -> GradientEdge:
    """The gradient edge of `tensor`: ``(grad_fn, output_nr)``, or ``(AccumulateGrad, 0)`` for
    a leaf that requires grad (torch.autograd.graph.get_gradient_edge).

    Raises:
        RuntimeError: `tensor` does not require grad (torch's message).
    """
    if not tensor.requires_grad:
        raise RuntimeError("It is not possible to get the gradient edge for a Tensor that does "
                           "not require gradients")
    node, nr = edge(tensor)
    return GradientEdge(node, nr)
