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
verified and lowered with `jax.jit`.  Later calls with the same guards
(argument shapes/dtypes/requires_grad, static arguments, grad mode, and the
identity, shape and dtype of every lifted tensor) run the executable and
write its outputs back: mutated parameters, `.grad` attributes, optimizer
state.  A failed guard retraces (the reason is logged under
``tracegrad.compile``); each function keeps at most `cache_size` programs.

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

import functools
import hashlib
import logging
import warnings
import weakref
from collections import OrderedDict

import numpy as np

from tracegrad.ir.errors import TraceError
from tracegrad.ir.printer import print_graph
from tracegrad.ir.verifier import verify
from tracegrad.passes.prune import prune

from .. import _dump, _state
from .._views import refresh as refresh_views
from ..autograd.function import Function
from ..tensor import Tensor
from .trace import TraceResult, Tracer

log = logging.getLogger("tracegrad.compile")


def _arg_key(x, seen: dict):
    if isinstance(x, Tensor):
        first = seen.setdefault(id(x), len(seen))
        return ("T", x.shape, x.dtype, x._requires_grad, first)
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


class Entry:
    """One compiled program with its guards and write-back plan."""

    def __init__(self, tr: TraceResult, executor: str):
        self.trace = tr
        self.graph = tr.graph
        self.lifted = [(weakref.ref(lf.tensor), lf.tensor._type, lf.requires_grad,
                        _hook_signature(lf.tensor)) for lf in tr.lifted[tr.n_args:]]
        self.n_args = tr.n_args
        # returned tensors needing grad: adds the saved values to the program's outputs
        self.grad_plan = _BackwardPlan(tr) if tr.grad_outputs else None
        self.text = print_graph(tr.graph)
        self.hash = hashlib.sha1(self.text.encode()).hexdigest()[:10]
        self.provisional = bool(tr.escaped)
        self.executor = executor
        self._run = None

    def guard_failure(self) -> str | None:
        for ref, typ, rg, hooks in self.lifted:
            t = ref()
            if t is None:
                return "a lifted tensor (parameter or state) was freed"
            if t._type != typ or t._requires_grad != rg:
                return f"lifted tensor changed type: {typ} -> {t._type}"
            if _hook_signature(t) != hooks:
                return "hooks were added to or removed from a lifted tensor"
        for ref, training in self.trace.module_guards:
            m = ref()
            if m is not None and m.training != training:
                return f"{type(m).__name__}.training changed to {m.training} (train()/eval())"
        for ref, was_none in self.trace.grad_guards:
            t = ref()
            if t is None:
                return "a tensor whose .grad the program touches was freed"
            if (t._grad is None) != was_none:
                return "a .grad attribute changed between None and a tensor"
        return None

    def run(self, args: list[Tensor]):
        tr = self.trace
        inputs = [a._data for a in args]   # deduplicated: one input per distinct tensor
        inputs += [ref()._data for ref, *_ in self.lifted] + list(tr.constants)
        if self._run is None:
            self._run = _make_runner(self.graph, self.executor)
        outs = self._run(inputs)
        lifted = [a for a in args] + [ref() for ref, *_ in self.lifted]
        k = tr.first_mutated_output
        for i in tr.mutated:
            t = lifted[i]
            t._data = outs[k]
            t._vc[0] += 1
            k += 1
            if t._views:
                refresh_views(t)
        for t, effect in tr.grad_effects:
            if effect is None:
                t._grad = None
            elif isinstance(effect, tuple):
                t._grad = effect[1]
            elif t._grad is not None and t._grad._base is None:
                t._grad._data = outs[effect]       # in place, keeping the grad's identity
                t._grad._vc[0] += 1
            else:
                t._grad = Tensor(outs[effect])
        for t, idx in tr.escaped:
            t._data = outs[idx]
        override = {}
        if self.grad_plan is not None and _state.local.grad_enabled:
            override = self.grad_plan.attach(outs, inputs, lifted, self.executor)
        return _unflatten(tr.out_tree, outs, override)


def _hook_signature(t: Tensor) -> tuple:
    """Which leaf hooks a tensor has (a traced program bakes in the hooks it saw)."""
    h = getattr(t, "_hooks", None)
    return () if h is None else (tuple(h.pre), tuple(h.post_acc))


def _unflatten(tree, outs, override=None):
    kind, payload = tree
    if kind == "out":
        return override[payload] if override and payload in override else Tensor(outs[payload])
    if kind == "const":
        return payload
    if kind is dict:
        return {k: _unflatten(v, outs, override) for k, v in payload.items()}
    items = [_unflatten(v, outs, override) for v in payload]
    return kind(items)


class _BackwardPlan:
    """Returned tensors that require grad: the forward program also outputs the values the
    min-cut partition saves, and the outputs' grad_fn runs the static backward program."""

    def __init__(self, tr: TraceResult):
        from tracegrad.ir.graph import Graph
        from tracegrad.passes.partition import partition
        from .explain import backward_joint
        g = tr.graph
        self.outputs = list(tr.grad_outputs)
        self.wrt = [i for i, lf in enumerate(tr.lifted) if lf.requires_grad]
        view = Graph(g.name, list(g.inputs), list(g.nodes), [g.outputs[i] for i in self.outputs])
        part = partition(backward_joint(view, [g.inputs[i] for i in self.wrt]),
                         policy="min_bytes")
        position = {id(v): ("in", i) for i, v in enumerate(g.inputs)}
        self.saved = []
        for v in part.saved:
            if id(v) not in position:
                g.outputs.append(v)            # the forward program returns it as well
                position[id(v)] = ("out", len(g.outputs) - 1)
            self.saved.append(position[id(v)])
        self.backward = part.backward
        self.saved_bytes = part.saved_bytes
        self._exe = None

    def attach(self, outs, inputs, lifted, executor) -> dict:
        """Output tensors (by output index) whose grad_fn runs the backward program."""
        from ..backends.executable import Executable
        if self._exe is None:
            self._exe = Executable(self.backward)
        saved = [inputs[i] if kind == "in" else outs[i] for kind, i in self.saved]
        wrt = [lifted[i] for i in self.wrt]
        values = [outs[i] for i in self.outputs]
        res = _CompiledBackward.apply(self, saved, values, executor, *wrt)
        res = res if isinstance(res, tuple) else (res,)
        return dict(zip(self.outputs, res))


class _CompiledBackward(Function):
    @staticmethod
    def forward(ctx, plan, saved, values, executor, *wrt):
        ctx.plan, ctx.saved, ctx.executor = plan, saved, executor
        out = tuple(Tensor(v) for v in values)
        return out if len(out) > 1 else out[0]

    @staticmethod
    def backward(ctx, *cts):
        plan = ctx.plan
        arrays = [c._data if c is not None else np.zeros(v.shape, v.dtype.numpy)
                  for c, v in zip(cts, plan.backward.inputs)] + list(ctx.saved)
        grads = plan._exe.run(arrays, ctx.executor)
        return (None, None, None, None) + tuple(Tensor(g) for g in grads)


def _make_runner(graph, executor: str):
    from ..backends.executable import Executable
    exe = Executable(graph)
    return lambda inputs: exe.run(inputs, executor)


def _dedupe_args(tensors: list[Tensor]) -> list[Tensor]:
    seen, out = set(), []
    for t in tensors:
        if id(t) not in seen:
            seen.add(id(t))
            out.append(t)
    return out


class CompiledFunction:
    """The callable `tg.compile` returns; see the module docstring."""

    def __init__(self, fn, executor: str | None = None, cache_size: int = 8):
        functools.update_wrapper(self, fn)
        self.fn = fn
        self.executor = executor
        self.cache_size = cache_size
        self._cache: OrderedDict = OrderedDict()
        self._last_provisional: dict = {}
        self.traces = 0

    def _key(self, args, kwargs):
        seen: dict = {}
        return (_arg_key(args, seen), _arg_key(kwargs, seen), _state.local.grad_enabled)

    def __call__(self, *args, **kwargs):
        if _state.local.tracer is not None:
            raise TraceError("tg.compile: calling a compiled function while another is being "
                             "traced is not supported; call the plain function instead")
        key = self._key(args, kwargs)
        tensors = _dedupe_args(_tensor_args((args, kwargs), []))
        entries = self._cache.get(key, [])
        reason = "first call" if not entries else None
        for entry in entries:
            failure = entry.guard_failure()
            if failure is None and not entry.provisional:
                return entry.run(tensors)
            reason = failure or "the previous trace created new state (e.g. optimizer buffers)"
        if entries == [] and self._cache:
            reason = "argument shapes, dtypes, requires_grad, static arguments or grad mode changed"
        entry = self._trace(args, kwargs, tensors)
        log.info("compiling %s (%s): %d nodes, program %s", self.__name__, reason,
                 len(entry.graph.nodes), entry.hash)
        _dump.write(f"{self.__name__}_{entry.hash}.tgir", entry.text)
        _dump.write(f"{self.__name__}_{entry.hash}.why.txt", f"compiled because: {reason}\n")
        if entry.provisional and self._last_provisional.get(key) == entry.hash:
            entry.provisional = False     # the same program again: the new state is stable
        if entry.provisional:
            self._last_provisional[key] = entry.hash
        # keep programs whose guards fail now (a train/eval switch may come back); drop ones
        # whose lifted tensors are gone
        bucket = [e for e in entries if not e.provisional
                  and "freed" not in (e.guard_failure() or "")]
        self._cache[key] = [entry] + bucket
        self._cache.move_to_end(key)
        if sum(len(v) for v in self._cache.values()) > self.cache_size:
            oldest = next(iter(self._cache))
            self._cache.pop(oldest)
            warnings.warn(f"tg.compile: {self.__name__} was recompiled more than "
                          f"{self.cache_size} times; the oldest program was dropped. Check the "
                          "'tracegrad.compile' log for the reasons.", stacklevel=2)
        return entry.run(tensors)

    def _trace(self, args, kwargs, tensors) -> Entry:
        executor = self.executor or ("interpreter" if _state.get_executor() == "interpreter"
                                     else "jax")
        tracer = Tracer(self.__name__)
        arg_values = []
        _state.local.tracer = tracer
        try:
            for t in tensors:
                arg_values.append(tracer.value_of(t))
            result = self.fn(*args, **kwargs)
            tr = tracer.finish(arg_values, result)
            del result
        finally:
            _state.local.tracer = None
            tracer.restore()
        self.traces += 1
        graph, _ = prune(tr.graph)
        tr.graph = graph
        verify(graph)
        return Entry(tr, executor)

    def programs(self) -> list:
        """The IR graphs compiled so far, newest first (for inspection and `tracegrad dump`)."""
        return [e.graph for bucket in self._cache.values() for e in bucket]


def compile(fn=None, *, executor: str | None = None, cache_size: int = 8):
    """Compile `fn` (a training step or any tensor function) into one program.

    Args:
        fn: the function; tensors it reaches that are not arguments
            (parameters, optimizer state) are lifted to program inputs.
        executor: "jax" (default) or "interpreter".
        cache_size: programs kept per function before the oldest is dropped.
    Returns:
        A callable with fn's signature; results equal running fn eagerly.
    Raises:
        TraceError: fn's Python control flow depends on tensor values
            (``x.item()``, ``if x > 0``), naming the user's line.
    Follows ``torch.compile`` / ``jax.jit``.
    """
    if fn is None:
        return lambda f: CompiledFunction(f, executor, cache_size)
    return CompiledFunction(fn, executor, cache_size)
