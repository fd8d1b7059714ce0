"""Record-time extras: what the dispatcher does for a new tape node beyond the usual.

The dispatcher's record step (tracegrad/dispatch/record.py) reads one
thread-local flag (``record_extras``) and calls `on_record` (registered in its
``on_record`` hook slot) only while one of these is on:

- anomaly mode: keep the forward stack, so a failing backward node can
  name the forward call that created it;
- saved-tensor hooks: pack the values the node saves (saved_hooks.py);
- inference tensors exist: refuse to save one for backward (torch's error).
"""
from __future__ import annotations

import traceback

from .. import _state
from ..dispatch.hooks import register
from .saved_hooks import pack_node, saved_positions

INFERENCE_SAVED = ("Inference tensors cannot be saved for backward. Please do not use Tensors "
                   "created in inference mode in computation tracked by autograd. To work around "
                   "this, you can make a clone to get a normal tensor and use it in autograd, or "
                   "use `torch.no_grad()` instead of `torch.inference_mode()`.")


def forward_stack() -> list[str]:
    """The Python stack of the current forward call, without tracegrad's own frames."""
    internal = _state._package_dirs()
    frames = [f for f in traceback.extract_stack()[:-1] if not f.filename.startswith(internal)]
    return traceback.format_list(frames)


def on_record(node, operands: list, outs: list) -> None:
    local = _state.local
    if local.inference_seen:
        check_inference(node, operands)
    if local.anomaly:
        node._extra().stack = forward_stack()
    if local.saved_hooks:
        pack_node(node, operands, outs)


def check_inference(node, operands: list) -> None:
    if not any(getattr(t, "_inference", False) for t in operands):
        return
    for is_out, k in saved_positions(node):
        if not is_out and getattr(operands[k], "_inference", False):
            raise RuntimeError(f"{node.op.name}: {INFERENCE_SAVED} (input {k}, "
                               f"{operands[k]._type}, is an inference tensor)")


register("on_record", on_record)
