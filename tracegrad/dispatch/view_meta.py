"""How a view was made, where torch forbids modifying it in place (torch's ``CreationMeta``).

torch refuses an in-place op on a view when grad mode is on and the op takes part in
autograd (the view, its base or another operand requires grad), if the view is

- an output of a function returning several views (``unbind``, ``split``, ``chunk``, a
  custom ``Function`` with several differentiable outputs): ``MULTI``;
- made in ``no_grad`` mode (whatever its base): ``NO_GRAD``;
- made in inference mode from a normal tensor: ``INFERENCE``;
- the one output of a custom ``Function`` that was a view or an input returned as is:
  ``CUSTOM`` (the message names the Function).

A view of a marked view made with grad on takes its mark (torch's
``propagate_creation_meta``): the new view's own mode wins, except that an inference
mark is never replaced.  Views made by ``detach()`` / ``.data`` are never marked (they
carry no history, torch's non-differentiable views).

Tensors have fixed slots, and such views are rare, so the marks live in a table keyed by
``id`` holding a weak reference (an entry goes with its tensor); the common path checks
only that the table is empty.  `check` raises torch's message.
"""
from __future__ import annotations

import re
import weakref

MULTI, NO_GRAD, INFERENCE, CUSTOM = "multi", "no_grad", "inference", "custom"

# id(tensor) -> (weakref to it, kind, name, output index, inherited, has_node)
MARKS: dict = {}
PACKING: list = []   # the tensors saved-tensor pack hooks are running on (innermost last)


class ViewInplaceError(RuntimeError):
    """torch's error for an in-place op on a view it forbids writing to (raised as is, with
    no op-name prefix: torch's text names the view's node)."""


def _drop(key: int, ref) -> None:
    entry = MARKS.get(key)
    if entry is not None and entry[0] is ref:
        del MARKS[key]


def mark(t, kind: str, name: str = "", index: int = 0, inherited: bool = False,
         has_node: bool = False) -> None:
    """Record that view `t` was made the `kind` way (`name`: the op or Function, `index`:
    which of its outputs `t` is; `inherited`: a view of a marked view; `has_node`: torch
    gave it a backward node, i.e. it was made with grad on from a base requiring grad)."""
    key = id(t)
    MARKS[key] = (weakref.ref(t, lambda r, key=key: _drop(key, r)), kind, name, index,
                  inherited, has_node)


def mark_of(t):
    """``(kind, name, index, inherited, has_node)`` of `t`'s mark, or None."""
    entry = MARKS.get(id(t))
    if entry is None or entry[0]() is not t:
        return None
    return entry[1:]


def mark_new_views(src, base, outs: list, op_name: str, grad_on: bool, inference: bool) -> None:
    """Mark views `outs` of `src` (storage owned by `base`) made just now by `op_name`."""
    if any(op == "alias" for op, _ in outs[0]._view_ops):
        return   # detach() / .data views: no history, never refused
    if inference:
        if not getattr(base, "_inference", False):
            for o in outs:
                mark(o, INFERENCE, _camel(op_name))
        return
    if not grad_on:
        prev = mark_of(src) if MARKS else None
        kind = INFERENCE if prev is not None and prev[0] == INFERENCE else NO_GRAD
        for o in outs:
            mark(o, kind, _camel(op_name))
        return
    prev = mark_of(src) if MARKS else None
    if prev is not None:   # made with grad on: torch's DEFAULT, so the view keeps src's mark
        node = prev[4] or src._requires_grad or base._requires_grad
        for o in outs:
            mark(o, prev[0], _camel(op_name), 0, True, node)


def mark_multi(src, outs, name: str, grad_on: bool) -> None:
    """`outs`, views made by one call of `name` (unbind, split, ...): torch's multi-output
    mark, with grad on (made in no_grad or inference mode they keep that mark)."""
    if not grad_on:
        return
    m = mark_of(src) if MARKS else None
    base = src if src._base is None else src._base   # a no_grad view of it: torch's has
    node = src._requires_grad or base._requires_grad or (m is not None and m[4])   # grad
    for i, t in enumerate(outs):   # the innermost such composite names it (chunk: Split)
        m = mark_of(t)
        if m is None or (m[0] != INFERENCE and (m[0] != MULTI or m[3])):
            mark(t, MULTI, name, i, False, node)


def _camel(name: str) -> str:
    return "".join(p.capitalize() for p in name.split("_"))


def _node_name(t, name: str, index: int, inherited: bool):
    """The name and output index torch's message gives `t`'s node (``Unbind``, ``Slice``:
    its backward node's name without the ``Backward0``)."""
    if inherited and t.grad_fn is not None:
        return re.sub(r"Backward\d*$", "", t.grad_fn.name()), t._out_index
    return name, index


def setitem_view(key):
    """The view torch's ``t[key] = v`` writes through: its node's name (the last basic
    index: an int selects, a slice other than ``:`` slices, None unsqueezes; tensor indices
    then go to index_put_ on it), or None when the write goes to `t` itself."""
    view = None
    for k in key if isinstance(key, tuple) else (key,):
        if isinstance(k, bool) or k is Ellipsis:
            continue
        if isinstance(k, int):
            view = "Select"
        elif k is None:
            view = "Unsqueeze"
        elif isinstance(k, slice) and k != slice(None):
            view = "Slice"
    return view


def check(t, owner, grad_on: bool, result_requires_grad: bool, view: str | None = None) -> None:
    """Raise torch's error when an in-place op on `t` (whose storage `owner` holds) is one
    torch forbids for the way `t` was made.  `result_requires_grad`: the op's result
    requires grad (some operand does); `view`: the write goes through a view of `t` made
    by that op (setitem: `setitem_view`)."""
    m = mark_of(t)
    if m is None or not grad_on:
        return
    if not (t._requires_grad or owner._requires_grad or result_requires_grad):
        return
    kind, name, index, inherited, has_node = m
    if view is not None:   # the view setitem makes (grad on) inherits t's mark
        name, index, inherited = view, 0, True
        has_node = has_node or t._requires_grad or owner._requires_grad
    else:
        name, index = _node_name(t, name, index, inherited)
    raise ViewInplaceError(_message(kind, name, index, inherited, has_node, "is being"))


def _message(kind, name, index, inherited, has_node, modified: str) -> str:
    """torch's text (``handle_view_on_rebase``); `modified`: "is being" for a write to the
    view itself, "its base or another view of its base has been" for one through another."""
    # torch names the view's own node; a view made in no_grad or inference mode has none
    if kind in (INFERENCE, NO_GRAD) or not has_node:
        head = (f"Output {index} of {name} is a view of a view which was created in"
                if has_node and inherited else "A view was created in")
        msg = (f"{head} inference mode and {modified} modified inplace in normal mode."
               if kind == INFERENCE else
               f"{head} no_grad mode and {modified} modified inplace with grad mode enabled.")
    else:
        msg = f"Output {index} of {name} is a view and {modified} modified inplace."
    if kind == MULTI:
        return msg + (" This view is the output of a function that returns multiple views. "
                      "Such functions do not allow the output views to be modified inplace. "
                      "You should replace the inplace operation by an out-of-place one.")
    if kind == CUSTOM:
        return msg + (" This view was created inside a custom Function (or because an input "
                      "was returned as-is) and the autograd logic to handle view+inplace would "
                      "override the custom backward associated with the custom Function, "
                      "leading to incorrect gradients. This behavior is forbidden. You can fix "
                      "this by cloning the output of the custom Function.")
    block = "inference_mode" if kind == INFERENCE else "no_grad"
    return msg + (" Given that this use case is ambiguous and error-prone, it is forbidden. You "
                  "can clarify your code by moving both the view and the inplace either both "
                  f"inside the {block} block (if you don't want the inplace to be tracked) or "
                  "both outside (if you want the inplace to be tracked).")


class Refused:
    """The ``grad_fn`` of a marked view after its base (or another view of it) was written:
    torch raises when it next reads the view's ``grad_fn`` (an op using the view with grad
    on, a backward from it); here recording such an op (dispatch/record.py) or touching the
    node raises torch's message."""

    __slots__ = ("message",)

    def __init__(self, message: str):
        self.message = message

    def error(self) -> ViewInplaceError:
        return ViewInplaceError(self.message)

    def __getattr__(self, name):   # edges, next_functions, register_hook ...: the refusal
        raise self.error()

    def name(self) -> str:   # how the tensor prints: torch's `grad_fn=<Invalid>`
        return "Invalid"

    def __repr__(self) -> str:
        return "<Invalid>"


def refuse_after_rebase(v, base) -> None:
    """`v`, a live view of `base`, was just regenerated after a write to `base` or another of
    its views: when torch forbids in-place ops on `v`, its history is refused from now on
    (torch: when the view has a node, or its base requires grad)."""
    m = mark_of(v)
    if m is None:
        return
    kind, name, index, inherited, has_node = m
    if not (has_node or base._requires_grad):
        return
    if inherited and v.grad_fn is not None:
        name, index = _node_name(v, name, index, inherited)
    v.grad_fn = Refused(_message(kind, name, index, inherited, has_node,
                                 "its base or another view of its base has been"))
    v._requires_grad = True


def check_packing(t, owner) -> None:
    """Raise torch's error when a pack hook modifies its input (or a view of it) in place."""
    for p in PACKING:
        if p is t or p is owner:
            raise RuntimeError(
                "A saved tensor pack hook is modifying its input in place. Tensors provided as "
                "input to pack hook cannot be modified by in-place operations as this can lead "
                "to unexpected side-effects. Please open an issue if you need to perform "
                "in-place operations on the input to a pack hook.")
