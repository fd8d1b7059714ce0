"""Argument handling shared by the functional autograd API (functional.py,
jacobian_batched.py): tensor-or-tuple inputs and outputs, `v` checks, torch's errors."""
from __future__ import annotations

from tracegrad.ir import types as T

from ..tensor import Tensor
from .grad_mode import set_grad_enabled
from .._creation import ones_like
from .engine import grad
from .._creation import zeros_like


def _tupled(x, what: str, fn: str) -> tuple[bool, tuple]:
    """(was a tuple, x as a tuple of tensors); TypeError naming `fn` otherwise (torch's)."""
    was = isinstance(x, tuple)
    items = x if was else (x,)
    for i, t in enumerate(items):
        if not isinstance(t, Tensor):
            where = f"the value at index {i}" if was else f"the given {what}"
            raise TypeError(f"The {what} given to {fn} must be either a Tensor or a tuple of "
                            f"Tensors but {where} has type {type(t).__name__}.")
    return was, items


def _untupled(res, was_tuple):
    """Undo `_tupled`: `was_tuple` is a bool, or a pair (outer, inner) for nested results."""
    if isinstance(was_tuple, tuple):
        outer, inner = was_tuple
        if not inner:
            res = tuple(r[0] for r in res)
        return res if outer else res[0]
    return res if was_tuple else res[0]


def _prepare(inputs: tuple, create_graph: bool, need_graph: bool) -> tuple:
    """Fresh tensors for `func` (so the results are taken w.r.t. these and not a captured
    alias): a differentiable view under ``create_graph``, else a detached copy."""
    out = []
    for t in inputs:
        if create_graph and t.requires_grad:
            out.append(t.view_as(t))
        else:
            out.append(t.detach().requires_grad_(need_graph and t.dtype.category >= T.FLOAT))
    return tuple(out)


def _finish(tensors, create_graph: bool):
    """Results without history unless ``create_graph`` (nested tuples too)."""
    if create_graph:
        return tensors
    return tuple(_finish(t, False) if isinstance(t, tuple) else t.detach() for t in tensors)


def _check_v(v, refs: tuple, refs_tuple: bool, fn: str) -> tuple:
    _, v = _tupled(v, "v", fn)
    if len(v) != len(refs):
        if refs_tuple:
            raise RuntimeError(f"v is a tuple of invalid length: should be {len(refs)} but got "
                               f"{len(v)}.")
        raise RuntimeError("The given v should contain a single Tensor.")
    for i, (a, r) in enumerate(zip(v, refs)):
        if a.shape != r.shape:
            where = f"Entry {i} in " if refs_tuple else ""
            raise RuntimeError(f"{where}v has invalid size: should be {list(r.shape)} but got "
                               f"{list(a.shape)}.")
    return v


def _default_v(refs: tuple, what: str) -> tuple:
    """v = 1 for a single one-element `refs` (torch's default); `what`: "input" or "output"."""
    if len(refs) != 1 or refs[0].numel() != 1:
        cond = ("user-provided function returns a single Tensor" if what == "output" else
                "input to the user-provided function is a single Tensor")
        raise RuntimeError(f"The vector v can only be None if the {cond} with a single element.")
    return (ones_like(refs[0].detach()),)


def _require_outputs_grad(outputs: tuple, strict: bool) -> None:
    if not strict:
        return
    for i, o in enumerate(outputs):
        if not o.requires_grad:
            raise RuntimeError(f"Output {i} of the user-provided function does not require "
                               "gradients. The outputs must be computed in a differentiable "
                               "manner from the input when running in strict mode.")


def _grad(outputs: tuple, inputs: tuple, cts, create_graph: bool, retain_graph=None) -> list:
    """autograd.grad over the outputs that require grad (None for unused inputs)."""
    keep = [i for i, o in enumerate(outputs) if o is not None and o.requires_grad]
    if not keep:
        return [None] * len(inputs)
    cts = None if cts is None else [cts[i] for i in keep]
    return list(grad([outputs[i] for i in keep], list(inputs), cts, retain_graph=retain_graph,
                     create_graph=create_graph, allow_unused=True))


def _zeros_for_none(grads, refs, strict: bool, create_graph: bool, what: str) -> tuple:
    out = []
    for i, (g, r) in enumerate(zip(grads, refs)):
        if g is None:
            if strict:
                raise RuntimeError(f"The output of the user-provided function is independent of "
                                   f"input {i}. This is not allowed in strict mode.")
            g = zeros_like(r.detach())
        elif strict and create_graph and not g.requires_grad:
            raise RuntimeError(f"The {what} of the user-provided function is independent of "
                               f"input {i}. This is not allowed in strict mode when "
                               "create_graph=True.")
        out.append(g)
    return tuple(out)
