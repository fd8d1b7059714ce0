"""Slots through which the autograd layer extends the dispatch core.

The dispatcher and the tape sit below tracegrad.autograd (tests/test_layers.py
enforces it), yet a few autograd features act per op or per node.  Each such
feature registers its function here when its module is imported, so the core
calls it without importing it; a slot is only read on the path that needs it
(behind a thread-state flag the hot path reads anyway).

Slots (all filled by the time ``import tracegrad`` returns):
    propagate(op, operands, attrs, outs, in_types): forward AD, inside a dual level:
        give the outputs their tangents (autograd/forward_ad.py).
    on_record(node, operands, outs): record-time extras (anomaly stacks, saved-tensor
        pack hooks, the inference-tensor check) while ``record_extras`` is on
        (autograd/record.py).
    copy_tangent(dst, src): an in-place write or a view refresh moves the tangent with
        the value (autograd/forward_ad.py).
    write_view_tangent(view, value): an in-place write of `value` into `view` inside a dual
        level, when `view`'s tangent belongs to a ``make_dual`` dual: updates that tangent
        and returns `value` without its tangent (else None) (autograd/forward_ad.py).
    tangent_of(tensor): the tensor's tangent at the current level or None, for repr
        (autograd/forward_ad.py).
    saved_names(node) / saved_attribute(node, where, raw): the ``_saved_<name>``
        accessors of a tape node (autograd/saved_hooks.py).
    autocast(frontend, op, args, kwargs): an op call inside a ``tg.autocast`` region
        (tracegrad/amp.py, which also turns ``TensorFrontend.autocast_active`` on).
    device_copy(tensor, target): ``tensor.to(device)`` of a tensor that requires grad, as a
        recorded ToCopyBackward0 node (autograd/device_copy.py).
"""
from __future__ import annotations


class _Hooks:
    __slots__ = ("propagate", "on_record", "copy_tangent", "write_view_tangent", "tangent_of", "saved_names",
                 "saved_attribute", "autocast", "device_copy")

    def __init__(self):
        for name in self.__slots__:
            setattr(self, name, None)


HOOKS = _Hooks()


def register(name: str, fn) -> None:
    """Fill slot `name` (one of `_Hooks.__slots__`) with `fn`.

    Raises:
        AttributeError: unknown slot.
    """
    if name not in _Hooks.__slots__:
        raise AttributeError(f"dispatch hook slot {name!r} does not exist")
    setattr(HOOKS, name, fn)
