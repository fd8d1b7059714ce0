"""`tg.compile`: one traced IR program, one XLA executable per guard set.

    @tg.compile
    def train_step(x, y):
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss

The first call traces the function with abstract tensors (see trace.py):
the forward ops, the backward program the engine inlines when `backward()`
is called, and the optimizer update all land in one graph, which is pruned,
simplified and deduplicated (passes.optimize_program), verified and lowered with
`jax.jit`.  Later calls with the same guards (argument shapes/dtypes/requires_grad,
static arguments, grad mode, the identity, shape and dtype of every lifted tensor, and
checks registered while tracing, `Tracer.guard`: e.g. what an optimizer's step baked in,
see optim/optimizer.py) run the executable and write its outputs back: mutated
parameters, `.grad` attributes, optimizer state.  A failed guard retraces; the reason,
in words (``argument x: shape (32, 8) -> (20, 8)``, see guards.py), is logged under
``tracegrad.compile`` (``TRACEGRAD_LOG=recompiles``).  Shapes are static: a smaller last batch costs
one more program, traced once and cached like the first.  Each function keeps
at most `cache_size` programs and warns when it drops one.

Graph breaks: Python that needs a tensor's value (``.item()``, ``if t:``,
``print(t)``, ``nonzero``) raises `TraceError` while tracing, naming the user's
line.  With ``fullgraph=True`` that error propagates; by default the trace is
abandoned (tensors, ``.grad`` and optimizer state rolled back, trace.py), the
call runs ``fn`` eagerly, a warning says why (once per function), and later
calls with the same guards run eagerly without trying to trace again.

Buffers: inputs the program overwrites (mutated parameters, in-place
``.grad`` accumulation, optimizer state) are donated to XLA
(``donate_argnums``), so the updated values reuse their buffers.  The cache entry and the
write-back of a call's effects are entry.py: every tensor written gets a buffer of its own,
and nothing is written before the whole program ran.

Autograd features a compiled program cannot keep (saved-tensor hooks around or inside
the call, hooks or custom Functions on intermediates differentiated after it, anomaly
mode entered inside) run the call eagerly with a warning, or raise with
``fullgraph=True`` (fallbacks.py); under ``detect_anomaly()`` a call whose outputs are
not finite runs again eagerly, so the error names the backward node and the line.

Data parallelism: with ``mesh=`` and ``data_axis=`` the program is lowered with
`jax.sharding` input shardings: the batch split, everything else replicated
(sharding.py).

A returned tensor that still requires grad (the function did not call
``backward()`` on it) gets a ``grad_fn`` that runs a static backward
program: at trace time the joint graph is partitioned by the min-cut policy
(docs/passes.md), the forward program also returns the saved values, and
``backward()`` on the output runs the backward program on them, accumulating
into the arguments and lifted parameters that require grad.  A result whose
graph a ``backward()`` inside the function already consumed comes back
detached.
"""
from __future__ import annotations

import contextlib
import functools
import gc
import logging
import sys
import warnings
import weakref
from collections import OrderedDict

from tracegrad.ir.errors import TraceError
from tracegrad.ir.jax_caches import programs_evicted
from tracegrad.ir.verifier import verify
from tracegrad.passes import format_records, optimize_program

from .. import _dump, _state
from ..amp import state_key as autocast_key
from ..autograd.profiler import profiled
from ..tensor import Tensor
from . import sharding
from .entry import Entry, NonFiniteRun
from .fallbacks import EscapingHookBreak, saved_hooks_reason
from .guards import GuardFailure, describe_key_change, lifted_failure, lifted_guard
from .scalar_guards import ScalarGuards, lifting, own_step_optimizers
from .programs import describe
from .trace import _STATEFUL, Tracer

log = logging.getLogger("tracegrad.compile")
LIVE: "weakref.WeakSet[CompiledFunction]" = weakref.WeakSet()   # tests round-trip their programs


def _arg_key(x, seen: dict):
    if isinstance(x, Tensor):
        first = seen.setdefault(id(x), len(seen))
        d = x._data   # shape and NumPy dtype from the storage (a NumPy or a device array)
        return ("T", d.shape, d.dtype, x._requires_grad, first)
    if isinstance(x, (tuple, list)):
        return (type(x).__name__, tuple(_arg_key(i, seen) for i in x))
    if isinstance(x, dict):
        return ("dict", tuple((k, _arg_key(v, seen)) for k, v in sorted(x.items())))
    try:
        hash(x)
    except TypeError:
        raise TypeError(f"tg.compile: argument of type {type(x).__name__} is neither a Tensor "
                        "nor hashable; static (non-tensor) arguments must be hashable") from None
    return ("S", type(x).__name__, x)


def _tensor_args(x, out: list) -> list:
    if isinstance(x, Tensor):
        out.append(x)
    elif isinstance(x, (tuple, list)):
        for i in x:
            _tensor_args(i, out)
    elif isinstance(x, dict):
        for k in sorted(x):
            _tensor_args(x[k], out)
    return out


@contextlib.contextmanager
def _older_objects_frozen():
    """Freeze (``gc.freeze``) the objects that exist before a trace, for its duration.

    The tracer runs full collections (trace.py) to tell the tensors a trace made that are
    still alive from cyclic garbage; with the older objects frozen those collections walk
    only what the trace made: ~120 ms less per trace in a process that has imported torch
    (docs/performance.md, first-call latency).  Skipped when the program froze objects
    itself, since unfreezing would undo that.  Those collections keep CPython's own full
    passes from coming, so a full collection follows once the heap has grown enough
    (`_collect_if_grown`).
    """
    if gc.get_freeze_count():
        yield
        return
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()
    _collect_if_grown()   # after a trace that returned (not while an exception unwinds)


# CPython runs a full collection once the long-lived heap has grown by a quarter; the
# collections a trace runs (trace.py) reset that count but see only the trace's own
# objects, so in a loop that traces on every call (a new batch size per step) cyclic garbage
# made between traces (jax's tracing and compiling of the previous program, freed IR graphs)
# was never collected: +1,900 objects and ~3 MiB per step, without bound (issue 18).
# `_collect_if_grown` applies CPython's rule itself, on the heap's allocated blocks.
FULL_COLLECTION_GROWTH = 1.25
_blocks_after_full: list = [None]   # sys.getallocatedblocks() after the last full collection


def _collect_if_grown() -> None:
    """A full collection of the whole heap, when it grew by `FULL_COLLECTION_GROWTH` since
    the last one (the collector enabled: a program that turned it off is left alone)."""
    blocks = sys.getallocatedblocks()
    last = _blocks_after_full[0]
    if last is None:
        _blocks_after_full[0] = blocks
    elif blocks > last * FULL_COLLECTION_GROWTH and gc.isenabled():
        gc.collect()
        _blocks_after_full[0] = sys.getallocatedblocks()


class _EagerEntry:
    """A guard set whose trace hit a graph break: its calls run ``fn`` eagerly, untraced."""

    provisional = False

    def __init__(self, tracer: Tracer, n_args: int, reason: str):
        self.reason = reason
        self.pending = None   # the stale-tensor check to run after the first eager call
        lifted = list(tracer.lifted.values())[n_args:]   # arguments come first
        self.lifted = [lifted_guard(lf.tensor, lf.requires_grad) for lf in lifted]
        self.module_guards = list(tracer.modules.values())

    def guard_failure(self) -> GuardFailure | None:
        return lifted_failure(self.lifted, self.module_guards)


def _gone(entry) -> bool:
    """Can `entry` never run again (a tensor or optimizer it is bound to was freed)?"""
    failure = entry.guard_failure()
    return failure is not None and failure.gone


def _warn(message: str) -> None:
    """A UserWarning attributed to the user's line (the first frame outside tracegrad)."""
    internal = _state._package_dirs()
    level, f = 1, sys._getframe(0)
    while f is not None and f.f_code.co_filename.startswith(internal):
        f, level = f.f_back, level + 1
    warnings.warn(message, UserWarning, stacklevel=level)


def _dedupe_args(tensors: list[Tensor]) -> list[Tensor]:
    seen, out = set(), []
    for t in tensors:
        if id(t) not in seen:
            seen.add(id(t))
            out.append(t)
    return out


class CompiledFunction:
    """The callable `tg.compile` returns; see the module docstring."""

    def __init__(self, fn, executor: str | None = None, cache_size: int = 8, *,
                 fullgraph: bool = False, donate: bool | None = None, mesh=None, data_axis=None):
        functools.update_wrapper(self, fn)
        if not hasattr(self, "__name__"):   # a callable object (a Module): its class names it
            self.__name__ = self.__qualname__ = type(fn).__name__
        self.fn = fn
        self.executor = executor
        self.cache_size = cache_size
        self.fullgraph = fullgraph
        self.options = {"donate": donate, "mesh": mesh, "data_axis": data_axis}
        self._cache: OrderedDict = OrderedDict()
        self._last_provisional: dict = {}
        self._last_key = None
        self._eager: dict = {}           # key -> [_EagerEntry]: guard sets that run eagerly
        self._warned_break = False
        self._warned_eager: set = set()   # reasons a call ran eagerly, warned once each
        self._warned_rebind = False        # a tensor read is rebound: traced every call
        self.traces = 0
        self.graph_breaks: list[str] = []   # the reason of each trace abandoned at a break
        self.eager_calls = 0                 # calls run eagerly because of a graph break
        LIVE.add(self)

    def _key(self, args, kwargs):
        seen: dict = {}
        return (_arg_key(args, seen), _arg_key(kwargs, seen), _state.local.grad_enabled,
                autocast_key())   # a program traced under tg.autocast bakes its casts in

    @profiled(lambda self: f"tg.compile: {self.__name__}")   # one profiler event per call
    def __call__(self, *args, **kwargs):
        if _state.local.tracer is not None:
            raise TraceError("tg.compile: calling a compiled function while another is being "
                             "traced is not supported; call the plain function instead")
        if _state.local.fw_level is not None:   # inside a forward-AD dual level: tangents come
            return self.fn(*args, **kwargs)     # from the eager ops (autograd/forward_ad.py)
        eager = saved_hooks_reason()
        if eager is not None:
            return self._run_eagerly(eager)(*args, **kwargs)
        key = self._key(args, kwargs)
        last, self._last_key = self._last_key, key
        tensors = _dedupe_args(_tensor_args((args, kwargs), []))
        entries = self._cache.get(key, [])
        reason = None
        for entry in entries:
            failure = entry.guard_failure()
            if failure is None and not entry.provisional:
                return self._run(entry, tensors, args, kwargs)
            reason = failure or "the previous trace created new state (e.g. optimizer buffers)"
        for brk in self._eager.get(key, ()):
            failure = brk.guard_failure()
            if failure is None:      # this guard set broke the graph before: no new trace
                self.eager_calls += 1
                return self.fn(*args, **kwargs)
            reason = reason or failure
        if reason is None:
            reason = describe_key_change(self.fn, last, key)
        entry = self._trace(args, kwargs, tensors)
        if isinstance(entry, _EagerEntry):
            log.info("graph break in %s (%s): running it eagerly: %s", self.__name__, reason,
                     entry.reason)
            _dump.write(f"{self.__name__}_graph_break.txt", f"{entry.reason}\n")
            self._eager.setdefault(key, []).insert(0, entry)
            if len(self._eager) > self.cache_size:   # bounded like the programs
                self._eager.pop(next(iter(self._eager)))
            if not self._warned_break:
                self._warned_break = True
                _warn(f"tg.compile: graph break in {self.__name__}, running it eagerly (this "
                      "call and later calls with the same guards; fullgraph=True raises "
                      f"instead): {entry.reason}")
            self.eager_calls += 1
            out = self.fn(*args, **kwargs)
            if entry.pending is not None:
                entry.pending, check = None, entry.pending
                check()
            return out
        log.info("compiling %s (%s): %d nodes, program %s", self.__name__, reason,
                 len(entry.graph.nodes), entry.hash)
        _dump.write(f"{self.__name__}_{entry.hash}.tgir", entry.text)
        _dump.write(f"{self.__name__}_{entry.hash}.why.txt", f"compiled because: {reason}\n")
        _dump.write(f"{self.__name__}_{entry.hash}.passes.txt", format_records(entry.trace.passes))
        if entry.provisional:
            self._settle(key, entry)
        # keep programs whose guards fail now (a train/eval switch may come back); drop ones
        # bound to something that was freed
        bucket = [e for e in entries if not e.provisional and not _gone(e)]
        self._cache[key] = [entry] + bucket
        self._cache.move_to_end(key)
        if sum(len(v) for v in self._cache.values()) > self.cache_size:
            oldest = next(iter(self._cache))
            if oldest == key:        # one key holds them all: drop its oldest program
                self._cache[key].pop()
            else:
                self._cache.pop(oldest)
            programs_evicted()       # and what jax kept for it (ir/jax_caches.py)
            _warn(f"tg.compile: {self.__name__} was recompiled more than {self.cache_size} "
                  "times; the oldest program was dropped. Check the 'tracegrad.compile' log "
                  "(TRACEGRAD_LOG=recompiles) for the reasons.")
        return self._run(entry, tensors, args, kwargs)

    def _settle(self, key, entry: Entry) -> None:
        """Is the new state a provisional `entry` created (escaped tensors) stable?

        It is when the same program comes out of two traces in a row (an optimizer's
        buffers made on the first step are read, not made, on the second) and the new
        trace did not read a tensor the previous one created.  A function that rebinds a
        tensor it reads (``self.u = self.u * 0.5 + 1``) creates, on every call, the tensor
        the next call reads: a program that kept reading the first one would repeat its
        value, so such a function is traced on every call (the XLA executable is shared
        by program text, entry.py) and a warning says how to keep one program.
        """
        last = self._last_provisional.get(key)
        carried = last is not None and any(
            (ref := last[1].get(id(lf.tensor))) is not None and ref() is lf.tensor
            for lf in entry.trace.lifted[entry.n_args:])
        if last is not None and last[0] == entry.hash and not carried:
            entry.provisional = False     # the same program again: the new state is stable
            return
        self._last_provisional[key] = (entry.hash, {id(t): weakref.ref(t)
                                                    for t, _ in entry.trace.escaped})
        if carried and not self._warned_rebind:
            self._warned_rebind = True
            _warn(f"tg.compile: {self.__name__} replaces a tensor it read with a new one "
                  "(e.g. a buffer rebound as `self.u = self.u * 0.5 + 1`), so every call is "
                  "traced again; update it in place (`self.u.mul_(0.5).add_(1)`) to run one "
                  "compiled program")

    def _run(self, entry: Entry, tensors, args, kwargs):
        """Run `entry`; under detect_anomaly(), a run with a NaN or infinity among its outputs
        wrote nothing back, and the call runs again eagerly, where anomaly mode raises naming
        the backward node and the forward line (or completes, as eagerly)."""
        try:
            return entry.run(tensors)
        except NonFiniteRun:
            pass
        log.info("%s: a NaN or infinity under detect_anomaly(): re-running the call eagerly",
                 self.__name__)
        self.eager_calls += 1
        return self.fn(*args, **kwargs)

    def _run_eagerly(self, reason: str):
        """`fn`, run eagerly for this call because of `reason` (fallbacks.py): with
        ``fullgraph=True`` a `TraceError` instead; otherwise a warning, once per reason."""
        message = f"tg.compile: {self.__name__} runs eagerly: {reason}"
        if self.fullgraph:
            raise TraceError(message + " (fullgraph=True)")
        if reason not in self._warned_eager:
            self._warned_eager.add(reason)
            _warn(message)
        self.eager_calls += 1
        return self.fn

    @profiled("tg.compile::trace")
    @_older_objects_frozen()
    def _trace(self, args, kwargs, tensors) -> Entry | _EagerEntry:
        executor = self.executor or ("interpreter" if _state.get_executor() == "interpreter"
                                     else "jax")
        if self.options["mesh"] is not None:
            executor = "jax"       # sharding is jax's; the interpreter still cross-checks
        tracer = Tracer(self.__name__)
        arg_values = []
        broke = result = None
        completed = False   # the break was found after fn returned (fallbacks.py)
        optimizers = own_step_optimizers(list(_STATEFUL))
        numbers_before = ScalarGuards.collect(self.fn, optimizers=optimizers)
        _state.local.tracer = tracer
        try:
            for t in tensors:
                arg_values.append(tracer.value_of(t))
            result = self.fn(*args, **kwargs)
            tr = tracer.finish(arg_values, result)
            del result
        except BaseException as e:
            _state.local.tracer = None
            tracer.abandon()
            if self.fullgraph or not isinstance(e, TraceError):
                raise
            broke = str(e)   # names the user's file and line; drop the frames with `e`
            completed = isinstance(e, EscapingHookBreak)
            result = None    # a break found by `finish` (fallbacks.py): the result is traced
        else:
            _state.local.tracer = None
            tracer.restore()
        if broke is not None:
            return self._graph_break(tracer, len(tensors), broke, completed)
        self.traces += 1
        tr.guards.append(self._scalar_guards(tr, tracer, numbers_before, optimizers))
        tr.graph, tr.passes = optimize_program(tr.graph)   # prune -> simplify -> cse -> prune
        verify(tr.graph)
        return Entry(tr, executor, self.options)

    def _scalar_guards(self, tr, tracer, before: ScalarGuards, optimizers) -> ScalarGuards:
        """The Python numbers the program may have baked in, each still as the trace read
        it (compiler/scalar_guards.py): the function's globals and closure, the traced
        modules' attributes, the param groups of hand-written optimizers it stepped."""
        modules = [m for m, _ in tracer.module_numbers]
        after = ScalarGuards.collect(self.fn, modules,
                                     lifting(optimizers, {id(lf.tensor) for lf in tr.lifted}))
        return (before + ScalarGuards.of_modules(tracer.module_numbers)).unchanged_in(after)

    def _graph_break(self, tracer: Tracer, n_args: int, reason: str,
                     completed: bool = False) -> _EagerEntry:
        """The entry that runs calls eagerly, once the abandoned trace left no traced state
        (a `completed` trace: once the eager re-run has replaced what it stored)."""
        self.graph_breaks.append(reason)
        entry = _EagerEntry(tracer, n_args, reason)
        if completed:
            entry.pending = lambda: self._check_stale(tracer, reason)
        else:
            self._check_stale(tracer, reason)
        return entry

    def _check_stale(self, tracer: Tracer, reason: str) -> None:
        stale = tracer.stale_tensors()
        if stale:
            where = sorted({str(n.loc) for t in stale
                            if (n := getattr(t._data, "node", None)) is not None and n.loc})
            raise TraceError(
                f"tg.compile: {self.__name__} cannot fall back to eager at its graph break "
                f"({reason.splitlines()[0]}): before the break the traced code stored "
                f"{len(stale)} new tensor(s) in Python state that tg.compile cannot roll back "
                "(only tensors, .grad and optimizer state are rolled back), made at "
                f"{', '.join(where) or 'an unknown line'}; move the statement that needs a "
                "value out of the compiled function") from None

    def memory_analysis(self, *args, **kwargs):
        """XLA's memory statistics (`jax.stages.Compiled.memory_analysis()`: argument, output,
        alias and temp bytes) of the program these arguments run; call the function with them
        once first.

        Raises:
            RuntimeError: no compiled program matches these arguments yet.
        """
        key = self._key(args, kwargs)
        tensors = _dedupe_args(_tensor_args((args, kwargs), []))
        for entry in self._cache.get(key, []):
            if entry.guard_failure() is None and entry._exe is not None:
                inputs = [a._data for a in tensors]
                inputs += [ref()._data for ref, *_ in entry.lifted] + list(entry.trace.constants)
                return entry._exe.lowered().compiled(inputs).memory_analysis()
        raise RuntimeError(f"tg.compile: {self.__name__} has no compiled program for these "
                           "arguments yet; call it with them first")

    @property
    def programs(self) -> list:
        """The cached programs, least recently used first: `CompiledProgram` records with
        readable guards, the forward and backward graphs and run counts (programs.py)."""
        return [describe(self, key, e) for key, bucket in self._cache.items() for e in bucket
                if isinstance(e, Entry)]


def compile(fn=None, *, executor: str | None = None, cache_size: int = 8,
            fullgraph: bool = False, dynamic: bool | None = None, donate: bool | None = None,
            mesh=None, data_axis: str | None = None):
    """Compile `fn` (a training step or any tensor function) into one program.

    Args:
        fn: the function; tensors it reaches that are not arguments
            (parameters, optimizer state) are lifted to program inputs.
        executor: "jax" (default) or "interpreter".
        cache_size: programs kept per function before the oldest is dropped (with a warning).
        fullgraph: raise at the first statement that cannot be traced (``.item()``,
            ``if tensor:``, ``print(tensor)``, value-dependent shapes) instead of running
            that call eagerly with a warning (once per function).
        dynamic: None or False. Shapes are static: each new argument shape compiles one
            more program (a smaller last batch costs one extra program).
        donate: let XLA reuse the buffers of inputs the program overwrites (parameters,
            ``.grad``, optimizer state). None (default): on GPU/TPU only. On the CPU
            tensors are host NumPy arrays that jax reads without a copy unless they are
            donated, so donating costs a copy per call and saves no memory the arrays
            do not already hold (docs/performance.md, "Donation").
        mesh, data_axis: a `jax.sharding.Mesh` and the name of its axis to split the
            leading (batch) dim of every tensor argument over; lifted tensors
            (parameters, optimizer state) are replicated and XLA inserts the gradient
            all-reduce. Runs on the jax executor.
    Returns:
        A callable with fn's signature; results equal running fn eagerly.  For a
        `tg.nn.Module`, a `CompiledModule` (torch's ``OptimizedModule``): the module's
        forward compiled, its other attributes its own.
    Raises:
        TraceError: with ``fullgraph=True``, fn's Python needs a tensor value, naming the
            user's line; without it, when the eager fallback cannot undo what the traced
            part stored (tensors in Python containers other than optimizer state).
        NotImplementedError: ``dynamic=True`` (no symbolic shapes: pad the batch to a
            fixed size and mask, or let the smaller batch compile its own program).
        ValueError: ``data_axis`` not an axis of ``mesh``; at the first call, a tensor
            argument whose leading dim the mesh axis does not divide.
    Follows ``torch.compile`` (fullgraph, dynamic) and ``jax.jit`` (donate_argnums,
    in_shardings).
    """
    if dynamic:
        raise NotImplementedError(
            "tg.compile(dynamic=True): tracegrad programs have static shapes; a new shape "
            "compiles one more program (a smaller last batch costs one), or pad batches to a "
            "fixed size and mask the loss")
    if dynamic not in (None, False):
        raise TypeError(f"tg.compile: dynamic must be None or False, got {dynamic!r}")
    sharding.check_mesh(mesh, data_axis)
    if mesh is not None and executor == "interpreter":
        raise ValueError("tg.compile: mesh= needs the jax executor (the interpreter runs on "
                         "one device)")

    def make(f):
        compiled = CompiledFunction(f, executor, cache_size, fullgraph=fullgraph,
                                    donate=donate, mesh=mesh, data_axis=data_axis)
        return CompiledModule(f, compiled) if isinstance(f, MODULE_TYPES) else compiled
    return make if fn is None else make(fn)


# what tg.compile wraps as a CompiledModule: tg.nn.Module, which registers itself (nn sits above
# the compiler, which therefore does not import it)
MODULE_TYPES: tuple = ()


def register_module_type(cls: type) -> None:
    """Have ``tg.compile(obj)`` return a `CompiledModule` for instances of `cls`."""
    global MODULE_TYPES
    MODULE_TYPES = MODULE_TYPES + (cls,)


class CompiledModule:
    """What ``tg.compile(module)`` returns (torch.compile's ``OptimizedModule``): calling it
    runs the module's forward as a compiled program; every other attribute (``parameters``,
    ``train``/``eval``, ``state_dict``, submodules) is the module's own, so it trains and
    saves like the module.  ``_orig_mod`` is the module, as in torch.  Unlike torch, its
    ``state_dict`` keys carry no ``_orig_mod.`` prefix (they are the module's).
    """

    def __init__(self, module, compiled: CompiledFunction):
        self.__dict__["_orig_mod"] = module
        self.__dict__["_compiled"] = compiled

    def __call__(self, *args, **kwargs):
        return self._compiled(*args, **kwargs)

    def __getattr__(self, name):
        return getattr(self._orig_mod, name)

    def __setattr__(self, name, value):
        setattr(self._orig_mod, name, value)

    def __repr__(self) -> str:
        return f"CompiledModule({self._orig_mod!r})"
