"""The autograd features a compiled program cannot keep, found before they are lost.

A compiled call must give eager's values, gradients and hook calls (docs/autograd.md,
"Compiled vs eager").  Where the program cannot, the call runs eagerly with a warning, or
raises with ``fullgraph=True``; never a silent difference:

- saved-tensor hooks (``saved_tensors_hooks``, ``save_on_cpu``) active around the call
  (`saved_hooks_reason`): a compiled program keeps its saved values itself, so the pack
  hook would never see them;
- saved-tensor hooks or anomaly mode entered inside the traced function (`entered_inside`,
  a graph break at the first op under them): the program runs outside them;
- ``retain_grad()``, ``register_hook`` (tensor or node hooks, module backward hooks) on
  an intermediate, or an ``autograd.Function``, whose backward runs after the call
  (`escaping_hooks`, a graph break at the end of the trace): the static backward program
  of the returned tensors is derived from the traced ops, with no step per intermediate
  to run a hook at, and a Function's forward ops traced in place of its own backward.
  Hooks on the arguments and parameters (leaves) run as in eager, and so do all of
  these when ``backward()`` is called inside the function;
- a tensor made inside the function that becomes a leaf requiring grad
  (``requires_grad_()``, ``requires_grad=True``) and is returned, or that a returned
  tensor's backward reaches (`escaping_leaves`, a graph break at the end of the trace):
  the compiled call has no such leaf to hand back or to accumulate a ``.grad`` into.
"""
from __future__ import annotations

from tracegrad.ir.errors import TraceError
from tracegrad.ir.ops.host import CUSTOM_FUNCTION

from .. import _state


def active_extras() -> tuple:
    """(anomaly mode on, saved-tensor hooks on) now."""
    local = _state.local
    return bool(local.anomaly), bool(local.saved_hooks)


def entered_inside(outer: tuple) -> None:
    """Raise `TraceError` (a graph break at this op) when the traced function itself turned on
    anomaly mode or saved-tensor hooks (`outer`: what was on around the call): the program
    runs later, outside them, where neither could take effect."""
    anomaly, hooks = active_extras()
    if anomaly and not outer[0]:
        raise TraceError(
            "tg.compile: detect_anomaly() / set_detect_anomaly(True) entered inside the compiled "
            "function, which its compiled program cannot honour; enter it around the call (a "
            "call whose outputs are not finite then re-runs eagerly and raises as eagerly)")
    if hooks and not outer[1]:
        raise TraceError(
            "tg.compile: saved-tensor hooks (saved_tensors_hooks / save_on_cpu) entered inside "
            "the compiled function: its compiled program keeps its saved values without "
            "calling them; use them around the call (which then runs eagerly)")


def saved_hooks_reason() -> str | None:
    """Why this call must run eagerly because of saved-tensor hooks, or None."""
    local = _state.local
    if local.saved_hooks and local.grad_enabled:
        return ("saved-tensor hooks (tg.autograd.graph.saved_tensors_hooks / save_on_cpu) are "
                "active around the call, and a compiled program keeps its saved values without "
                "calling them")
    return None


class EscapingHookBreak(TraceError):
    """The graph break `escaping_hooks` raises: the function ran to its end, so an eager
    re-run repeats every statement that stored a traced tensor (compile.py checks for
    stale tensors after that re-run, not before it)."""


def escaping_leaves(leaves: list, returned: set, reached) -> None:
    """Raise `EscapingHookBreak` when one of `leaves` ((tensor, its graph Value or None, the
    line that made it require grad), made inside the trace) is returned (its id in
    `returned`) or the backward of a returned tensor reaches its Value (``reached(v)``):
    eagerly it would be a leaf with its own ``.grad``."""
    for t, v, loc in leaves:
        if id(t) in returned or (v is not None and reached(v)):
            where = f" at {loc}" if loc else ""
            raise EscapingHookBreak(
                f"tg.compile: a tensor made inside the compiled function becomes a leaf that "
                f"requires grad{where} (requires_grad_() / requires_grad=True) and outlives the "
                "call, where the compiled program has no such leaf to give a .grad; make it "
                "outside the function and pass it in (or keep it on a module)")


def _hooked(node) -> str | None:
    if node.op is CUSTOM_FUNCTION:
        # a Function standing for something else names it (`_described_as`: the identity
        # Functions of module backward hooks, nn/modules/hooks.py)
        described = getattr(getattr(node, "_forward_cls", None), "_described_as", None)
        return described or f"the autograd.Function {node.attrs.get('name', '')}"
    if node.retained:
        return "retain_grad()"
    ex = node.extra
    if ex is not None and (ex.tensor_hooks or ex.pre_hooks or ex.post_hooks):
        return "register_hook" if ex.tensor_hooks else "a backward-node hook"
    return None


def escaping_hooks(grad_outputs: list, first_seq: int) -> None:
    """Raise `TraceError` (a graph break) when a node recorded by this trace (sequence number
    above `first_seq`) on the way back from a returned tensor that still requires grad has a
    hook or a retained gradient, or is a custom Function, and no backward() inside the
    function has freed it: the backward run after the call would skip it."""
    stack = [t.grad_fn for t in grad_outputs if t.grad_fn is not None]
    seen: set = set()
    while stack:
        node = stack.pop()
        if id(node) in seen or getattr(node, "seq", -1) <= first_seq:
            continue
        if getattr(node, "saved_inputs", ()) is None:
            # freed by a backward() inside the function, which ran its hooks: a backward
            # through it after the call raises, as eagerly
            continue
        seen.add(id(node))
        what = _hooked(node)
        if what is not None:
            loc = getattr(node, "loc", None)
            if node.op is CUSTOM_FUNCTION:
                where = f" (applied at {loc})" if loc else ""
                raise EscapingHookBreak(
                    f"tg.compile: {what}{where} is differentiated after the compiled call, "
                    "where the compiled backward program would differentiate its traced "
                    "forward instead of running its backward; call backward() inside the "
                    "compiled function")
            where = f" (the tensor made at {loc})" if loc else ""
            raise EscapingHookBreak(
                f"tg.compile: {what} on an intermediate tensor{where} whose backward runs "
                "after the compiled call: the compiled backward program has no step for it; "
                "call backward() inside the compiled function, or register the hook outside it")
        stack.extend(e[0] for e in node.edges if e is not None)
