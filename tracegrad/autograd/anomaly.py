"""Anomaly detection (torch.autograd.detect_anomaly / set_detect_anomaly).

While anomaly mode is on:

- every recorded node keeps the stack of the forward call that created it
  (record.py), so nothing is captured on the normal path;
- backward programs run on the NumPy interpreter node by node (`run`), even
  when the jax executor is chosen;
- a backward node that raises re-raises the same exception after a
  warning "Error detected in <Name>Backward0. Traceback of forward call that
  caused the error: ..." (torch's warning) and with that stack as a note;
- with ``check_nan``, a node group that returns NaN raises torch's
  "Function '<Name>Backward0' returned nan values in its 0th output." plus
  the op and its forward source line.  As in torch, only what a backward
  function *returns* is checked (the values leaving one forward op's VJP),
  not its intermediates, and only NaN (an infinite gradient is legal).
"""
from __future__ import annotations

import functools
import warnings

import numpy as np

from tracegrad.ir.printer import format_loc
from tracegrad.ir.registry import get

from .. import _state
from . import hooks
from .saved_hooks import refresh_record_extras

_ENABLED_WARNING = ("Anomaly Detection has been enabled. This mode will increase the runtime and "
                    "should only be enabled for debugging.")


def _set(mode: bool, check_nan: bool) -> None:
    local = _state.local
    local.anomaly = bool(mode)
    local.anomaly_check_nan = bool(check_nan)
    refresh_record_extras()


class detect_anomaly:
    """Context manager and decorator turning anomaly detection on (torch.autograd.detect_anomaly).

    Args:
        check_nan: raise when a backward function returns NaN (default True).
    """

    def __init__(self, check_nan: bool = True):
        self.check_nan = check_nan
        warnings.warn(_ENABLED_WARNING, stacklevel=2)

    def __enter__(self):
        local = _state.local
        self._prev = (local.anomaly, local.anomaly_check_nan)
        _set(True, self.check_nan)
        return self

    def __exit__(self, *exc):
        _set(*self._prev)
        return False

    def __call__(self, fn):
        check_nan = self.check_nan

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with set_detect_anomaly(True, check_nan):
                return fn(*args, **kwargs)
        return wrapper


class set_detect_anomaly:
    """Set anomaly detection on or off (torch.autograd.set_detect_anomaly).

    Takes effect at once when called; used as a context manager, the previous
    setting comes back on exit.
    """

    def __init__(self, mode: bool, check_nan: bool = True):
        local = _state.local
        self._prev = (local.anomaly, local.anomaly_check_nan)
        self._args = (mode, check_nan)
        _set(mode, check_nan)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        _set(*self._prev)
        return False

    def __call__(self, fn):
        _set(*self._prev)   # as a decorator it must not switch the mode now
        args = self._args

        @functools.wraps(fn)
        def wrapper(*a, **kw):
            with set_detect_anomaly(*args):
                return fn(*a, **kw)
        return wrapper


def is_anomaly_enabled() -> bool:
    return _state.local.anomaly


def is_anomaly_check_nan_enabled() -> bool:
    return _state.local.anomaly_check_nan


# ---- reporting -----------------------------------------------------------------------------------

def _describe(owner) -> str:
    return owner.name() if owner is not None else "the backward program"


def warn_forward_stack(owner) -> None:
    """torch's "Error detected in ..." warning with the forward stack, when one was kept."""
    ex = getattr(owner, "extra", None)
    if ex is None or ex.stack is None:
        return
    warnings.warn(f"Error detected in {owner.name()}. Traceback of forward call that caused the "
                  "error:\n" + "".join(ex.stack), stacklevel=4)


class AnomalyNaNError(RuntimeError):
    """A backward function returned NaN in anomaly mode (torch raises a RuntimeError)."""


def report_exception(e: BaseException, owner, n) -> None:
    """Attach the forward stack of `owner` (the node whose backward failed) to `e`."""
    if isinstance(e, AnomalyNaNError):
        return   # already reported
    warn_forward_stack(owner)
    ex = getattr(owner, "extra", None)
    note = f"(anomaly mode) the error happened in the backward of {_describe(owner)}"
    loc = format_loc(getattr(owner, "loc", None))
    if loc:
        note += f", recorded at {loc}"
    if ex is not None and ex.stack:
        note += "; traceback of the forward call that created it:\n" + "".join(ex.stack)
    if hasattr(e, "add_note"):
        e.add_note(note)


def nan_error(owner, index: int, n) -> RuntimeError:
    """torch's NaN error for the `index`-th output of `owner`'s backward (after its warning)."""
    warn_forward_stack(owner)
    msg = f"Function '{_describe(owner)}' returned nan values in its {index}th output."
    if n is not None:
        loc = format_loc(n.loc)
        msg += (f"\n  (first NaN from backward node {n.op} -> {[str(o.type) for o in n.outputs]}"
                + (f"; the forward op was recorded at {loc})" if loc else ")"))
    return AnomalyNaNError(msg)


def nan_plan(g) -> list:
    """Per node of `g`: ``[(output index, group output index), ...]`` to check for NaN: the
    values a forward op's VJP hands on (read by another op's VJP or returned)."""
    group_of = {}
    for n in g.nodes:
        for o in n.outputs:
            group_of[id(o)] = n.fwd_id
    leaving = {id(v) for v in g.outputs}
    for n in g.nodes:
        for v in n.inputs:
            if id(v) in group_of and group_of[id(v)] != n.fwd_id:
                leaving.add(id(v))
    plan, count = [], {}
    for n in g.nodes:
        entry = []
        for j, o in enumerate(n.outputs):
            if id(o) in leaving and n.fwd_id is not None and o.type.dtype.is_differentiable:
                c = count.get(n.fwd_id, 0)
                count[n.fwd_id] = c + 1
                entry.append((j, c))
        plan.append(entry)
    return plan


def run(prog, arrays: list, run) -> list:
    """Execute backward program `prog` on NumPy node by node with anomaly checks."""
    g = prog.graph
    plan = prog.nan_plan()
    check_nan = _state.local.anomaly_check_nan
    env = {id(v): np.asarray(a) for v, a in zip(g.inputs, arrays)}
    for n, checks in zip(g.nodes, plan):
        ins = [env[id(v)] for v in n.inputs]
        try:
            if n.op == hooks.HOST:
                outs = hooks.call_arrays(n, ins, run)
            else:
                with np.errstate(all="ignore"):
                    out = get(n.op).kernel_for("numpy")(np, *ins, **n.attrs)
                outs = out if isinstance(out, tuple) else (out,)
        except Exception as e:
            report_exception(e, run.owner(n.fwd_id) if run is not None else None, n)
            raise
        for o, a in zip(n.outputs, outs):
            env[id(o)] = np.asarray(a)
        if check_nan:
            for j, index in checks:
                if np.isnan(env[id(n.outputs[j])]).any():
                    owner = run.owner(n.fwd_id) if run is not None else None
                    raise nan_error(owner, index, n)
    return [env[id(v)] for v in g.outputs]


def check_tensors(n, outs: list, index_plan: list, run) -> None:
    """The NaN check when backward runs on tensors (create_graph): concrete values only."""
    if not _state.local.anomaly_check_nan:
        return
    for j, index in index_plan:
        data = outs[j]._data
        if isinstance(data, np.ndarray) and np.isnan(data).any():
            raise nan_error(run.owner(n.fwd_id) if run is not None else None, index, n)
