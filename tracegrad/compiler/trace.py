"""The tracer behind `tg.compile`: runs a Python function on abstract tensors.

While a `Tracer` is active (thread-local), every op applied to a tensor
appends a node to one IR graph instead of running a kernel.  A tensor the
function reaches that existed before the call (a parameter, optimizer
state, a gradient) is *lifted*: it becomes a program input, keyed by
identity, and its Python object temporarily holds the input's IR value.
What the function leaves behind is read off at the end:

- lifted tensors whose value changed (in-place updates)     -> outputs written back;
- ``.grad`` attributes that changed (backward, zero_grad)    -> grad effects;
- tensors created during the call that are still alive
  (e.g. a new momentum buffer stored in optimizer state)     -> escaped outputs.

`finish` restores every touched Python object to its state before the call,
so the first call and every cached call apply effects the same way.

A trace that stops at a graph break (a `TraceError`: ``.item()``,
``if tensor:``, ``print(tensor)``, a value-dependent shape) is *abandoned*:
tensors, ``.grad`` attributes and the state of registered optimizers
(`register_stateful`) go back to what they were, so `tg.compile` can run the
call eagerly from the start.  Other Python effects of the traced part (a
counter bumped, a tensor appended to a list) are not undone; `stale_tensors`
names the traced tensors such effects left behind.
"""
from __future__ import annotations

import enum
import gc
import weakref
from dataclasses import dataclass, field

import numpy as np

from tracegrad.ir.graph import Graph, Node, Value
from tracegrad.passes.autodiff import depends_on
from tracegrad.passes.rewrite import rewrite

from .. import _state
from .._views import refresh
from ..dispatch.tape import next_mark
from ..tensor import Tensor
from .fallbacks import active_extras, entered_inside, escaping_hooks, escaping_leaves
from .scalar_guards import is_number


# Objects with Python-side state a trace may fill with traced tensors (optimizers: lazily
# created momentum buffers); rolled back when a trace is abandoned at a graph break.
_STATEFUL: "weakref.WeakSet" = weakref.WeakSet()


def register_stateful(obj) -> None:
    """Have an abandoned trace restore `obj.state` (a dict, e.g. of per-parameter dicts) to
    its contents before the trace; optimizers register themselves."""
    _STATEFUL.add(obj)


def _snapshot(obj) -> tuple:
    state = {k: (v, dict(v) if isinstance(v, dict) else None)
             for k, v in getattr(obj, "state", {}).items()}
    return weakref.ref(obj), state


def _roll_back(snapshot: tuple) -> None:
    ref, state = snapshot
    obj = ref()
    current = None if obj is None else getattr(obj, "state", None)
    if current is None:
        return
    for k in [k for k in current if k not in state]:
        del current[k]
    for k, (inner, contents) in state.items():
        if contents is not None:   # keep the inner dict's identity (code may hold it)
            inner.clear()
            inner.update(contents)
        current[k] = inner


class GradWrite(enum.Enum):
    """How a call of the program leaves a tensor's ``.grad``."""

    CLEAR = "clear"     # set to None (``zero_grad(set_to_none=True)``)
    OUTPUT = "output"   # a program output (``backward()`` inside the function)
    TENSOR = "tensor"   # an existing concrete tensor the function assigned


@dataclass(frozen=True, slots=True)
class GradEffect:
    """One ``.grad`` write of a traced call: `output` is the program output (OUTPUT),
    `value` the tensor assigned (TENSOR)."""

    tensor: Tensor
    write: GradWrite
    output: int | None = None
    value: Tensor | None = None


@dataclass
class Lifted:
    tensor: Tensor
    value: Value                  # the program input standing for it
    data: object                  # its concrete array before the call
    grad_fn: object
    out_index: int
    requires_grad: bool
    version: int


@dataclass
class TraceResult:
    """What one trace produced; `compile` turns it into a cache entry."""

    graph: Graph
    n_args: int
    lifted: list[Lifted]
    constants: list[np.ndarray]           # arrays fed to the inputs after args + lifted
    mutated: list[int]                    # indices into `lifted` written back
    grad_effects: list[GradEffect]        # .grad attributes the call writes
    escaped: list[Tensor]                 # created tensors still alive, written back
    out_tree: object                      # the return value with outputs replaced by indices
    first_mutated_output: int = 0
    # (weakref to a tensor, weakref to its .grad tensor at entry, or None when .grad was None)
    grad_guards: list[tuple] = field(default_factory=list)
    module_guards: list[tuple] = field(default_factory=list)  # (weakref to module, .training)
    grad_outputs: list[int] = field(default_factory=list)   # returned outputs that require grad
    guards: list = field(default_factory=list)   # callables -> None or why the trace is stale
    passes: list = field(default_factory=list)   # PassRecords of the compiled pipeline
    # indices into `lifted` of mutated tensors whose history goes through the write (their
    # outputs are in `grad_outputs` too): after the call they take the grad_fn
    dirty: list[int] = field(default_factory=list)


class Tracer:
    def __init__(self, name: str):
        self.graph = Graph(name)
        self.lifted: dict[int, Lifted] = {}
        self.constants: dict[int, tuple[Tensor, Value, object]] = {}  # (tensor, input, array)
        self.created_refs: dict[int, weakref.ref] = {}
        self.grad_touched: dict[int, tuple[Tensor, object]] = {}   # id -> (tensor, grad at entry)
        self.modules: dict[int, tuple] = {}   # id -> (weakref to an nn.Module run, its .training)
        self.module_numbers: list = []        # (module, its numeric attributes before it ran)
        self.recompute: set[int] = set()      # ids of nodes inside tg.utils.checkpoint regions
        self.guards: dict = {}                # key -> check() (see `guard`)
        self.snapshots = [_snapshot(o) for o in list(_STATEFUL)]   # for `abandon`
        self.first_seq = next_mark()          # tape nodes above it were recorded by the trace
        self.outer_extras = active_extras()   # modes already on around the call
        # Where autograd's tape cuts the gradient, the graph must cut it too: the static
        # backward of returned tensors (backward_plan.py) differentiates the graph itself.
        self.carries_grad: set[int] = set()   # ids of Values reached from a lifted input
        #                                       that requires grad (the graph's view)
        self.cut_of: dict[int, Value] = {}    # id(Value) -> its stop_gradient
        self.marks: set[int] = set()          # ids of the nodes `_cut`/`untracked_write` made
        self.new_leaves: list = []            # (weakref, line) of tensors made leaves here

    # ---- hooks called by Tensor, Module and the dispatcher -------------------------
    def module_used(self, m) -> None:
        if id(m) not in self.modules:
            self.modules[id(m)] = (weakref.ref(m), m.training)
            # the numbers its forward may bake in (Dropout.p, eps): compiler/scalar_guards.py
            self.module_numbers.append((m, {k: v for k, v in vars(m).items()
                                            if k != "training" and is_number(v)}))

    def guard(self, key, check) -> None:
        """Have every cached call first run `check()` -> None, or the reason the program is
        stale (a retrace); e.g. an optimizer's hyper-parameters that the trace baked in.
        One check per `key`: the last registered wins."""
        self.guards[key] = check

    def overwriting(self, t: Tensor) -> None:
        """`t` gets a new value in place: a tensor from before the call becomes a lifted input
        (written back by `finish`) even when the call never reads it (``zero_()``,
        ``copy_()``); otherwise its traced value would leak out of the call."""
        if isinstance(t._data, Value):
            return
        ref = self.created_refs.get(id(t))
        if ref is None or ref() is not t:
            self.value_of(t)

    def created(self, t: Tensor) -> None:
        self.created_refs[id(t)] = weakref.ref(t)

    def grad_changing(self, t: Tensor) -> None:
        if id(t) not in self.grad_touched:
            self.grad_touched[id(t)] = (t, t._grad)

    def value_of(self, t: Tensor) -> Value:
        data = t._data
        if isinstance(data, Value):
            return data
        ref = self.created_refs.get(id(t))
        if ref is not None and ref() is t:   # made during the call: a constant of the program
            known = self.constants.get(id(t))
            if known is None:
                v = self.graph.add_input(t._type)
                self.constants[id(t)] = known = (t, v, data)   # its value now, not after
            return known[1]
        v = self.graph.add_input(t._type)
        if t._requires_grad:
            self.carries_grad.add(id(v))
        self.lifted[id(t)] = Lifted(t, v, data, t.grad_fn, t._out_index, t._requires_grad,
                                    t._vc[0])
        t._data = v
        return v

    def emit(self, op, operands, attrs, out_types) -> list[Value]:
        if _state.local.record_extras:   # anomaly mode, saved-tensor hooks (or inference)
            entered_inside(self.outer_extras)
        ins = [self._operand(t) for t in operands]
        prov = _state.local.provenance
        if prov is None:
            node = Node(op.name, ins, attrs, out_types, _state.user_location(3),
                        id=len(self.graph.nodes))
        else:   # a backward node: the forward op's source line and id
            node = Node(op.name, ins, attrs, out_types, prov[0], fwd_id=prov[1])
        self.graph.nodes.append(node)
        if _state.local.checkpoint_depth:
            self.recompute.add(id(node))
        if op.differentiable and any(id(v) in self.carries_grad for v in ins):
            self.carries_grad.update(id(o) for o in node.outputs)
        return node.outputs

    # ---- keeping the graph's gradients the tape's ------------------------------------
    def _operand(self, t: Tensor) -> Value:
        """`t`'s value as an op reads it: through a stop_gradient when `t` has no history
        (detach(), .data, a no_grad result, requires_grad_(False)) but the graph would
        carry a gradient into its value, as ``x * x.detach()`` reads ``x``'s."""
        v = self.value_of(t)
        if t._requires_grad or id(v) not in self.carries_grad:
            return v
        return self._cut(v)

    def _cut(self, v: Value) -> Value:
        cut = self.cut_of.get(id(v))
        if cut is None:
            self.cut_of[id(v)] = cut = self._mark("stop_gradient", [v])
        return cut

    def made_leaf(self, t: Tensor) -> None:
        """`t` now requires grad as a leaf (``requires_grad_()``): lifted tensors are the
        program's own leaves; a tensor made in the call starts a new history, so the graph
        cuts what its value came from (``x.detach().requires_grad_()``)."""
        if id(t) in self.lifted:
            return
        v = t._data
        if isinstance(v, Value) and id(v) in self.carries_grad:
            t._data = self._cut(v)
        self.new_leaves.append((weakref.ref(t), _state.user_location()))

    def _leaves_alive(self) -> list:
        """(tensor, its graph Value or None, line) of the live tensors `made_leaf` saw."""
        out = []
        for ref, loc in self.new_leaves:
            t = ref()
            if t is None or not t._requires_grad or t.grad_fn is not None:
                continue
            known = self.constants.get(id(t))
            v = t._data if isinstance(t._data, Value) else (known[1] if known else None)
            out.append((t, v, loc))
        return out

    def untracked_write(self, t: Tensor, before: Value) -> None:
        """`t` (which requires grad) took a new value that autograd does not see (an
        in-place op under no_grad, a write through ``.data`` or ``detach()``): it keeps its
        history, so in the graph its new value passes the gradient to `before`, as eagerly."""
        new = t._data
        if not isinstance(new, Value) or new is before:
            return
        t._data = out = self._mark("untracked_write", [before, new])
        if id(before) in self.carries_grad:
            self.carries_grad.add(id(out))

    def _mark(self, op: str, ins: list) -> Value:
        node = Node(op, ins, {}, [ins[0].type], _state.user_location(), id=len(self.graph.nodes))
        self.graph.nodes.append(node)
        self.marks.add(id(node))
        return node.outputs[0]

    def _without_marks(self) -> None:
        """No returned tensor needs the graph's gradient: drop the `_mark` nodes (identities
        on values), so that programs stay as they were traced."""
        if not self.marks:
            return
        g, _ = rewrite(self.graph, lambda b, n, ins: ins[-1] if id(n) in self.marks else None)
        self.graph = g

    # ---- the end of the call ---------------------------------------------------------
    def finish(self, args_values: list[Value], result) -> TraceResult:
        g = self.graph
        outputs: list[Value] = []

        def output(v: Value) -> int:
            outputs.append(v)
            return len(outputs) - 1

        grad_outputs: list[int] = []
        grad_tensors: list[Tensor] = []

        def flatten(x):
            if isinstance(x, Tensor):
                if isinstance(x._data, Value) or id(x) in self.lifted:
                    k = output(x._data)
                    if _differentiable(x):
                        grad_outputs.append(k)
                        grad_tensors.append(x)
                    return ("out", k)
                return ("const", x)
            if isinstance(x, (tuple, list)):
                return (type(x), [flatten(i) for i in x])
            if isinstance(x, dict):
                return (dict, {k: flatten(v) for k, v in x.items()})
            return ("const", x)

        out_tree = flatten(result)
        returned = {id(v) for v in outputs}
        first_mutated = len(outputs)
        lifted = list(self.lifted.values())
        mutated, dirty = [], []
        for i, lf in enumerate(lifted):
            if lf.tensor._data is not lf.value:
                mutated.append(i)
                k = output(lf.tensor._data)
                t = lf.tensor
                # written in place with grad mode on (x.view(-1)[2:].mul_(2) on an input
                # that requires grad): its history after the call goes through the write
                if t.grad_fn is not lf.grad_fn and _differentiable(t):
                    dirty.append(i)
                    grad_outputs.append(k)
                    grad_tensors.append(t)
        escaping_hooks(grad_tensors, self.first_seq)
        leaves = self._leaves_alive()
        if leaves:
            wanted = {id(outputs[k]) for k in grad_outputs}
            escaping_leaves(leaves, _tensor_ids(result),
                            lambda v: not wanted.isdisjoint(depends_on(g, [v])))
            del leaves
        grad_effects, grad_guards = [], []
        for t, before in self.grad_touched.values():
            after = t._grad
            grad_guards.append((weakref.ref(t), _ref_or_none(before)))
            if after is before:
                continue
            if after is None:
                grad_effects.append(GradEffect(t, GradWrite.CLEAR))
            elif isinstance(after._data, Value):
                grad_effects.append(GradEffect(t, GradWrite.OUTPUT, output=output(after._data)))
            else:
                grad_effects.append(GradEffect(t, GradWrite.TENSOR, value=after))
        for lf in lifted:
            if id(lf.tensor) not in self.grad_touched:
                grad_guards.append((weakref.ref(lf.tensor), _ref_or_none(lf.tensor._grad)))
        del result
        gc.collect()
        grads_out = {id(t._grad) for t, _ in self.grad_touched.values() if t._grad is not None}
        alive = [t for t in (ref() for ref in self.created_refs.values()) if t is not None]
        bases = {id(t._base) for t in alive if t._base is not None}  # kept alive by a view only
        escaped = []
        for t in alive:
            if (isinstance(t._data, Value) and id(t) not in grads_out and id(t) not in bases
                    and id(t._data) not in returned):
                escaped.append((t, output(t._data)))
        g.outputs = outputs
        if not grad_outputs:
            self._without_marks()
            g = self.graph
        constants = [data for _, _, data in self.constants.values()]
        # Inputs: the arguments (lifted first), other lifted tensors, then constants;
        # `value_of` may have created them interleaved, so lay them out again.
        g.inputs = [lf.value for lf in lifted] + [v for _, v, _ in self.constants.values()]
        return TraceResult(g, len(args_values), lifted, constants, mutated, grad_effects,
                           escaped, out_tree, first_mutated, grad_guards,
                           list(self.modules.values()), grad_outputs,
                           list(self.guards.values()), dirty=dirty)

    def restore(self) -> None:
        """Put every touched Python object back as it was before the call."""
        for lf in self.lifted.values():
            t = lf.tensor
            t._data, t.grad_fn, t._out_index = lf.data, lf.grad_fn, lf.out_index
            t._requires_grad, t._vc[0] = lf.requires_grad, lf.version
        for t, before in self.grad_touched.values():
            t._grad = before
        for lf in self.lifted.values():   # views of restored tensors see the old value again
            if lf.tensor._views:
                refresh(lf.tensor)

    def abandon(self) -> None:
        """After a failed trace: `restore`, and roll registered optimizers' state back."""
        self.restore()
        self.grad_touched.clear()   # restored; holding them would make them look stale
        for snap in self.snapshots:
            _roll_back(snap)

    def stale_tensors(self) -> list[Tensor]:
        """Tensors made by an abandoned trace that are still alive and hold traced values:
        Python state the rollback could not reach (call after the exception is gone)."""
        gc.collect()
        alive = (ref() for ref in self.created_refs.values())
        return [t for t in alive if t is not None and isinstance(t._data, Value)]


def _differentiable(t: Tensor) -> bool:
    """Does `t` still require grad after the call (not a result whose graph a backward()
    inside the function already used and freed)?"""
    return (t._requires_grad and t.grad_fn is not None
            and getattr(t.grad_fn, "saved_inputs", ()) is not None)


def _tensor_ids(x) -> set:
    """ids of the tensors in a returned value (nested tuples, lists, dicts)."""
    if isinstance(x, Tensor):
        return {id(x)}
    items = x.values() if isinstance(x, dict) else x if isinstance(x, (tuple, list)) else ()
    return set().union(*(_tensor_ids(i) for i in items))


def _ref_or_none(t):
    return None if t is None else weakref.ref(t)
