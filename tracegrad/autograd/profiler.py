"""``tg.autograd.profiler``: where the time goes, op by op and backward node by backward node.

    with tg.autograd.profiler.profile(record_shapes=True) as prof:
        with tg.autograd.profiler.record_function("step"):
            loss = model(x).sum()
        loss.backward()
    print(prof.key_averages().table(sort_by="self_cpu_time_total"))
    prof.export_chrome_trace("trace.json")        # chrome://tracing or ui.perfetto.dev

What is recorded (each a `FunctionEvent`, nested by time on this thread):

- every eager op: ``aten::<op>`` (``aten::mul``, ``aten::pow``; a few ops
  declare torch's name, ``OpDef.aten_name``), with the ``seq`` of the tape node it
  recorded (torch's "Sequence number"; -1 when it recorded none) and, with
  ``record_shapes``, its inputs' shapes;
- ``backward()`` / ``autograd.grad()``: ``torch::autograd::GraphRoot``
  (making the root cotangents), ``autograd::engine::build_program`` (a
  backward-program cache miss: the pass pipeline), one
  ``autograd::engine::backward_program`` per program run, inside it one
  event per backward node named as its ``grad_fn`` (``PowBackward0``) with
  the ``seq`` of the forward op that created it, and inside that the
  program's ops (``aten::pow``, ``aten::mul``); then one
  ``torch::autograd::AccumulateGrad`` per leaf written;
- `record_function` blocks under their own name;
- ``tg.compile``: ``tg.compile: <fn>`` per call, ``tg.compile::trace`` when
  it traces, ``tg.compile::run`` for the program run, and jax's own
  compilation phases (``jax::backend_compile`` ...) where they happen.

The backward program is one static program, and on jax one XLA executable,
so per-node times do not exist there.  ``profile(backward_nodes=True)`` (the
default) therefore runs every backward program node by node on the NumPy
interpreter while profiling and times each node: real per-node times, but
the interpreter's, not XLA's.  ``backward_nodes=False`` runs programs on
their usual executor and times each as one event; the backward-node events
are then zero-length markers at its start that carry only names and ``seq``.
Anomaly mode always runs the usual way (its own node-by-node checks).
"""
from __future__ import annotations

import functools
import sys
import threading
import time
import weakref

import numpy as np

from tracegrad.ir.registry import get

from .. import _state
from .profiler_programs import PROGRAM, ProgramProfiling, install_jax_listener  # noqa: F401
# (PROGRAM: the engine opens it as profiler.PROGRAM)
from .profiler_util import EventList, FunctionEvent

__all__ = ["EventList", "FunctionEvent", "profile", "record_function"]

# event names the engine opens
GRAPH_ROOT = "torch::autograd::GraphRoot"
ACCUMULATE = "torch::autograd::AccumulateGrad"
BUILD = "autograd::engine::build_program"
RETAIN = "autograd::retain_grad"   # .grad of a non-leaf that called retain_grad()


def aten_name(op: str) -> str:
    """The event name of registry op `op`: its declared ``OpDef.aten_name`` (``"aten::" + op``
    unless torch names it otherwise)."""
    return get(op).aten_name


_internal_dirs: tuple | None = None


def _user_stack(limit: int = 8) -> list[str]:
    """The innermost `limit` frames outside tracegrad, as ``"file(line): function"``."""
    global _internal_dirs
    if _internal_dirs is None:
        _internal_dirs = _state._package_dirs()
    out = []
    f = sys._getframe(2)
    while f is not None and len(out) < limit:
        code = f.f_code
        if not code.co_filename.startswith(_internal_dirs):
            out.append(f"{code.co_filename}({f.f_lineno}): {code.co_name}")
        f = f.f_back
    return out


class profile(ProgramProfiling):
    """Record what runs on this thread while the context is open (torch.autograd.profiler.profile).

    Args:
        enabled: False makes the context a no-op (the results are empty).
        record_shapes: record each op's input shapes (``[]`` for scalars);
            ``key_averages(group_by_input_shape=True)`` splits by them.
        profile_memory: record bytes allocated by each op's outputs (NumPy
            buffers it created, views excluded) and bytes freed when such a
            buffer dies, charged to the innermost event open at that moment
            (a free outside any event is a ``[memory]`` event, as in torch).
            Only buffers made while profiling are seen; compiled-program
            (jax) buffers are not.
        with_stack: record the user's source frames of every event.
        backward_nodes: tracegrad's own switch.  A backward pass is one
            static program (on jax one XLA executable), so its nodes have no
            times of their own.  True (default): while profiling, each
            backward program runs node by node on the NumPy interpreter, each
            IR node is timed as an ``aten::`` event inside an event for the
            backward node it belongs to (``PowBackward0``, with the forward
            op's ``seq``): real per-node times, but the interpreter's, not
            XLA's.  False: programs run on their usual executor (jax once
            hot) and are timed as one ``autograd::engine::backward_program``
            event; the backward-node events inside are zero-length markers
            carrying only names and ``seq``.
        use_cuda, use_device, with_flops, with_modules, use_cpu: only their
            defaults (host timing) are supported; ``use_kineto`` and
            ``experimental_config`` are accepted and change nothing.
    Raises:
        NotImplementedError: ``use_cuda=True``, a ``use_device`` other than
            "cpu", ``with_flops=True``, ``with_modules=True`` or
            ``use_cpu=False``.
        RuntimeError: a profiler is already recording on this thread, this one
            was already used, or results are read before the context exits.

    Results (after the ``with`` block): `function_events` / `events()` (an
    `EventList`), `key_averages()`, `table()`, `export_chrome_trace(path)`,
    `self_cpu_time_total` (µs).  Like torch's, the profiler is thread-local:
    other threads' work is not recorded.  Inside a function ``tg.compile`` is
    tracing, nothing is recorded but the trace itself (one
    ``tg.compile::trace`` event): ops and `record_function` blocks of a
    compiled step do not show per call.  With ``create_graph=True`` the
    backward runs op by op on tensors and its ops show as ``aten::`` events
    (with their own ``seq``, as in torch's double backward) inside the
    program event, without backward-node events.
    """

    def __init__(self, enabled: bool = True, *, use_cuda: bool = False, use_device=None,
                 record_shapes: bool = False, with_flops: bool = False,
                 profile_memory: bool = False, with_stack: bool = False,
                 with_modules: bool = False, use_kineto: bool = False, use_cpu: bool = True,
                 experimental_config=None, backward_nodes: bool = True):
        for arg, value, ok in (("use_cuda", use_cuda, False), ("with_flops", with_flops, False),
                               ("with_modules", with_modules, False), ("use_cpu", use_cpu, True)):
            if bool(value) is not ok:
                raise NotImplementedError(
                    f"profile: {arg}={value!r} is not supported; tracegrad times host work only "
                    "(eager ops, backward programs, compiled calls), with no device, FLOP or "
                    "module attribution")
        if use_device not in (None, "cpu"):
            raise NotImplementedError(f"profile: use_device={use_device!r} is not supported; "
                                      "only host timing ('cpu')")
        self.enabled = bool(enabled)
        self.record_shapes = bool(record_shapes)
        self.profile_memory = bool(profile_memory)
        self.with_stack = bool(with_stack)
        self.backward_nodes = bool(backward_nodes)
        self._phase = "new"          # new -> recording -> done
        self._events: list[FunctionEvent] = []
        self._stack: list[FunctionEvent] = []
        self._results: EventList | None = None
        self._origin = time.perf_counter_ns()
        self._thread = threading.get_native_id()
        self._ident = threading.get_ident()
        self._live: set[int] = set()   # ids of buffers being watched (profile_memory)

    # ---- the context ---------------------------------------------------------------------
    def __enter__(self) -> "profile":
        if self._phase != "new":
            raise RuntimeError("profile: this profiler was already used; make a new one")
        if not self.enabled:
            self._phase = "done"
            self._results = EventList()
            return self
        local = _state.local
        if local.profiler is not None:
            raise RuntimeError("profile: the profiler is already enabled on this thread")
        if "jax" in sys.modules:
            install_jax_listener()
        self._origin = time.perf_counter_ns()
        self._thread = threading.get_native_id()
        self._ident = threading.get_ident()
        self._phase = "recording"
        local.profiler = self
        return self

    def __exit__(self, *exc) -> bool:
        if self._phase != "recording":
            return False
        end = time.perf_counter_ns()
        for ev in self._stack:   # left open by an exception
            ev.end_ns = end
        self._stack.clear()
        if _state.local.profiler is self:
            _state.local.profiler = None
        self._phase = "done"
        events = sorted(self._events, key=lambda e: (e.start_ns, -e.end_ns, e.id))
        self._results = EventList(events, profile_memory=self.profile_memory,
                                  record_shapes=self.record_shapes)
        return False

    # ---- results -----------------------------------------------------------------------
    @property
    def function_events(self) -> EventList:
        """Every recorded event, in start order (nested events included)."""
        if self._results is None:
            raise RuntimeError("profile: Profiler didn't finish running; read the results "
                               "after the `with profile(...)` block")
        return self._results

    def events(self) -> EventList:
        return self.function_events

    def key_averages(self, group_by_input_shape: bool = False, group_by_stack_n: int = 0,
                     group_by_overload_name: bool = False) -> EventList:
        """Events averaged by name; see `EventList.key_averages`.

        Raises:
            ValueError: grouping by shapes without ``record_shapes=True``, or by
                stack without ``with_stack=True`` (torch's checks).
        """
        if group_by_input_shape and not self.record_shapes:
            raise ValueError("key_averages: group_by_input_shape=True needs "
                             "profile(record_shapes=True)")
        if group_by_stack_n and not self.with_stack:
            raise ValueError("key_averages: group_by_stack_n needs profile(with_stack=True)")
        return self.function_events.key_averages(group_by_input_shape, group_by_stack_n,
                                                 group_by_overload_name)

    def table(self, *args, **kwargs) -> str:
        """One row per event (not averaged); see `EventList.table`."""
        return self.function_events.table(*args, **kwargs)

    def export_chrome_trace(self, path) -> None:
        """Write the Chrome trace JSON of every event to `path` (see profiler_util)."""
        self.function_events.export_chrome_trace(path)

    @property
    def self_cpu_time_total(self) -> float:
        """µs covered by the recorded events (the sum of their self times)."""
        return self.function_events.self_cpu_time_total

    def total_average(self):
        return self.function_events.total_average()

    # ---- recording ---------------------------------------------------------------------
    def _open(self, name: str, kind: str, seq: int = -1, shapes=None, args=None) -> FunctionEvent:
        ev = FunctionEvent(len(self._events) + 1, name, kind, 0, self._thread, self._origin, seq,
                           shapes, _user_stack() if self.with_stack else None, args)
        if self._stack:
            ev.cpu_parent = parent = self._stack[-1]
            parent.cpu_children.append(ev)
        self._stack.append(ev)
        self._events.append(ev)
        ev.start_ns = ev.end_ns = time.perf_counter_ns()
        return ev

    def _close(self, ev: FunctionEvent) -> None:
        now = time.perf_counter_ns()
        stack = self._stack
        if stack and stack[-1] is ev:
            stack.pop()
        elif any(x is ev for x in stack):   # inner events an exception left open end here too
            while stack:
                top = stack.pop()
                top.end_ns = now
                if top is ev:
                    break
        else:
            return
        ev.end_ns = now

    def _finished(self, name: str, kind: str, start_ns: int, end_ns: int, args=None,
                  parent: FunctionEvent | None = None) -> FunctionEvent:
        """An event that already happened (jax reports compile phases when they end), a child
        of `parent` (default: the innermost open event)."""
        if parent is None and self._stack:
            parent = self._stack[-1]
        if parent is not None:
            start_ns = max(start_ns, parent.start_ns)
        ev = FunctionEvent(len(self._events) + 1, name, kind, start_ns, self._thread,
                           self._origin, args=args)
        ev.end_ns = max(end_ns, start_ns)
        if parent is not None:
            ev.cpu_parent = parent
            parent.cpu_children.append(ev)
        self._events.append(ev)
        return ev

    def span(self, name: str, kind: str = "engine", seq: int = -1, args=None) -> "_Span":
        """A context manager timing one event (what `region` hands out)."""
        return _Span(self, name, kind, seq, args)

    def op(self, frontend, op, operands, attrs, out_types, in_types) -> list:
        """The dispatcher's op path while profiling (`dispatch.modes.ProfileMode` calls it):
        one ``aten::`` event around the kernel and the tape recording."""
        local = _state.local
        local.profiler = None       # the inner apply takes the plain path
        try:
            if local.tracer is not None:    # tracing: nothing runs, nothing to time
                return frontend.apply(op, operands, attrs, out_types, in_types)
            shapes = [list(t.shape) for t in in_types] if self.record_shapes else None
            ev = self._open(op.aten_name, "cpu_op", shapes=shapes)
            try:
                outs = frontend.apply(op, operands, attrs, out_types, in_types)
            finally:
                self._close(ev)
        finally:
            local.profiler = self
        for o in outs:
            if o.grad_fn is not None:   # a tape node was recorded: its seq
                ev.sequence_nr = o.grad_fn.seq
                break
        if self.profile_memory:
            self._watch([o._data for o in outs], [t._data for t in operands], ev)
        return outs

    # ---- memory (profile_memory) -----------------------------------------------------------
    def _watch(self, outputs: list, inputs: list, ev: FunctionEvent) -> None:
        """Charge `ev` with the buffers `outputs` own that are new (not an input's), and watch
        each so its free is charged to whatever event is open then."""
        known = {id(_root(a)) for a in inputs if isinstance(a, np.ndarray)}
        for a in outputs:
            if not isinstance(a, np.ndarray):
                continue
            root = _root(a)
            key = id(root)
            if key in known or key in self._live:
                continue
            known.add(key)
            self._live.add(key)
            ev.self_mem += root.nbytes
            f = weakref.finalize(root, _on_free, weakref.ref(self), key, root.nbytes)
            f.atexit = False

    def _freed(self, key: int, nbytes: int) -> None:
        self._live.discard(key)
        if self._phase != "recording" or threading.get_ident() != self._ident:
            return
        if self._stack:
            self._stack[-1].self_mem -= nbytes
        else:
            now = time.perf_counter_ns()
            self._finished("[memory]", "memory", now, now).self_mem = -nbytes




class _Span:
    __slots__ = ("prof", "name", "kind", "seq", "args", "ev")

    def __init__(self, prof, name, kind, seq, args):
        self.prof, self.name, self.kind, self.seq, self.args = prof, name, kind, seq, args
        self.ev = None

    def __enter__(self):
        self.ev = self.prof._open(self.name, self.kind, self.seq, args=self.args)
        return self.ev

    def __exit__(self, *exc) -> bool:
        self.prof._close(self.ev)
        return False


class _Null:
    __slots__ = ()

    def __enter__(self):
        return None

    def __exit__(self, *exc) -> bool:
        return False


_NULL = _Null()


def region(name: str, kind: str = "engine"):
    """Time `name` when a profiler records on this thread (and nothing is being traced);
    otherwise a shared no-op context.  What the engine wraps its steps in."""
    local = _state.local
    prof = local.profiler
    if prof is None or local.tracer is not None:
        return _NULL
    return prof.span(name, kind)


def profiled(name):
    """Decorator: one event per call while profiling; `name` is a string or ``f(self)``.

    Used by ``tg.compile`` (compile.py); costs one thread-local read when off.
    """
    def deco(fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            local = _state.local
            prof = local.profiler
            if prof is None or local.tracer is not None:
                return fn(*args, **kwargs)
            label = name if isinstance(name, str) else name(args[0])
            if "jax" in sys.modules or getattr(args[0], "executor", None) == "jax":
                install_jax_listener()   # this call may compile with jax: time that too
            with prof.span(label, "compile"):
                return fn(*args, **kwargs)
        return wrapper
    return deco


class record_function:
    """Label a block (or every call of a function) in the profile (torch's record_function).

    ``with record_function("name"):`` makes one ``user_annotation`` event
    around the block; ``@record_function("name")`` does it per call.  The ops
    inside are its children.  Outside a profiler (or while ``tg.compile``
    traces) it does nothing.

    Args:
        name: the event name.
        args: an optional string shown in the Chrome trace's args.
    Raises:
        TypeError: `name` is not a string.
    """

    def __init__(self, name: str, args: str | None = None):
        if not isinstance(name, str):
            raise TypeError(f"record_function: name must be a str, got {type(name).__name__}")
        self.name = name
        self.args = args
        self._prof = None
        self._event = None

    def __enter__(self) -> "record_function":
        local = _state.local
        prof = local.profiler
        if prof is not None and local.tracer is None:
            self._prof = prof
            self._event = prof._open(self.name, "user_annotation",
                                     args={"args": self.args} if self.args is not None else None)
        return self

    def __exit__(self, *exc) -> bool:
        if self._event is not None:
            self._prof._close(self._event)
            self._prof = self._event = None
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with record_function(self.name, self.args):
                return fn(*args, **kwargs)
        return wrapper


# ---- helpers ----------------------------------------------------------------------------

def _root(a: np.ndarray) -> np.ndarray:
    while isinstance(a.base, np.ndarray):
        a = a.base
    return a


def _on_free(ref, key: int, nbytes: int) -> None:
    prof = ref()
    if prof is not None:
        prof._freed(key, nbytes)
