"""Reading a backward program's saved inputs off the tape (`Feed`s), as torch does:
torch's error for values already freed or modified in place since they were saved, and
saved-tensor pack hooks' unpacked values."""
from __future__ import annotations

from .. import _state
from ..tensor import Tensor
from . import anomaly
from .backward_program import BackwardProgram, Feed
from .graph import AccumulateGrad, TapeNode
from .saved_hooks import PACKED, unpack_value
from .wiring import _Wiring

_FREED = ("Trying to backward through the graph a second time (or directly access saved tensors "
          "after they have already been freed). Saved intermediate values of the graph are freed "
          "when you call .backward() or autograd.grad(). Specify retain_graph=True if you need to "
          "backward through the graph a second time or if you need to access saved tensors after "
          "calling backward.")


def _saved_value(nodes: list[TapeNode], feed: Feed):
    """The saved array `feed` names, after checking it against every reader's version."""
    i, is_out, k, _ = feed
    src = nodes[i].saved_outputs if is_out else nodes[i].saved_inputs
    if src is None:
        if _state.local.anomaly:   # torch warns with the forward stack, then raises
            anomaly.warn_forward_stack(nodes[i])
        raise RuntimeError(_FREED)
    for r, r_out, rk in feed.checked():
        n = nodes[r]
        box, seen = n.versions[rk + (len(n.in_types) if r_out else 0)]
        if box[0] != seen:
            if _state.local.anomaly:   # torch: "Error detected in ExpBackward0. Traceback ..."
                anomaly.warn_forward_stack(n)
            t = n.out_types[rk] if r_out else n.in_types[rk]
            role = f"output {rk}" if r_out else f"input {rk}"
            raise RuntimeError(
                f"one of the variables needed for gradient computation has been modified by "
                f"an inplace operation: [{t}], which is {role} of {n.name()}, is at version "
                f"{box[0]}; expected version {seen} instead. Hint: the op was recorded at "
                f"{n.loc}; avoid modifying this tensor in place before backward.")
    return src[k]


def _saved_values(nodes: list[TapeNode], prog: BackwardProgram) -> list:
    """``[_saved_value(nodes, f) for f in prog.feeds]`` in one loop (the common case:
    nothing freed or modified; else `_saved_value` raises its error)."""
    out = []
    for feed, checks in zip(prog.feeds, prog.version_checks):
        n = nodes[feed.node]
        src = n.saved_outputs if feed.is_output else n.saved_inputs
        if src is None:
            _saved_value(nodes, feed)   # raises the freed error (anomaly mode: warns first)
        for r, v in checks:
            box, seen = nodes[r].versions[v]
            if box[0] != seen:
                _saved_value(nodes, feed)   # raises the version error, naming the op
        out.append(src[feed.index])
    return out


def _saved_tensor(nodes: list[TapeNode], w: _Wiring, feed: Feed, unpacked=None) -> Tensor:
    """The saved value as a tensor connected to the tape (for differentiable backward).

    `unpacked`: an unpack hook's tensor standing for the value; as torch's SavedVariable,
    its data is used with the original's place in the graph (its own history, e.g. the
    pack hook's ``2 * t``, is not differentiated through)."""
    data = _saved_value(nodes, feed) if unpacked is None else unpacked._data
    i, is_out, k, _ = feed
    n = nodes[i]
    if is_out:
        return Tensor(data, requires_grad=True, grad_fn=n, out_index=k)
    edge = n.edges[k]
    if edge is None:
        return Tensor(data)
    if isinstance(edge[0], AccumulateGrad):
        v = edge[0].variable
        if unpacked is None:   # the leaf itself (while tracing, its value is the lifted one)
            return v
        # the leaf's gradient edge under another value: ops read it as reading the leaf
        return Tensor(data, requires_grad=True, grad_fn=edge[0], out_index=0)
    return Tensor(data, requires_grad=True, grad_fn=edge[0], out_index=edge[1])


def _saved_packed(nodes: list[TapeNode], feed: Feed):
    """`_saved_value` when pack hooks hold saved values: the unpacked tensor of the first
    reader whose value is packed (hooks own it: no version check), else the checked array."""
    i, is_out, k, _ = feed
    src = nodes[i].saved_outputs if is_out else nodes[i].saved_inputs
    if src is None:
        raise RuntimeError(_FREED)
    value = None
    for r, r_out, rk in feed.checked():   # each reader's own saved value, as torch
        ex = nodes[r].extra
        if ex is not None and ex.packed and (r_out, rk) in ex.packed:
            t = unpack_value(nodes[r], r_out, rk)
            value = t if value is None else value
    if value is not None:
        return value
    if src[k] is PACKED:
        return unpack_value(nodes[i], is_out, k)
    return _saved_value(nodes, feed)


def _saved_inputs(nodes: list[TapeNode], w: _Wiring, prog: BackwardProgram, tensors: bool) -> list:
    """The saved values `prog` reads: arrays, or tape-connected tensors (`tensors`)."""
    if not w.packed:
        if tensors:
            return [_saved_tensor(nodes, w, f) for f in prog.feeds]
        return [_saved_value(nodes, f) for f in prog.feeds]
    # unpack hooks run in torch's order: the last recorded node first, its inputs first
    order = sorted(range(len(prog.feeds)), key=lambda j: _unpack_order(nodes, prog.feeds[j]))
    values: list = [None] * len(prog.feeds)
    for j in order:
        v = _saved_packed(nodes, prog.feeds[j])
        if isinstance(v, Tensor):
            values[j] = _saved_tensor(nodes, w, prog.feeds[j], v) if tensors else v._data
        else:
            values[j] = _saved_tensor(nodes, w, prog.feeds[j]) if tensors else v
    return values


def _unpack_order(nodes: list[TapeNode], feed: Feed) -> tuple:
    # the last reader's node first; within a node, the order its values were packed in
    r, r_out, rk = max(feed.checked(), key=lambda x: (x.node, -x.is_output, -x.index))
    ex = nodes[r].extra
    packed = list(ex.packed) if ex is not None and ex.packed else []
    rank = packed.index((r_out, rk)) if (r_out, rk) in packed else len(packed)
    return (-r, rank, r_out, rk)
