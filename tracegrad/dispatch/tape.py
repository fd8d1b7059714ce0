"""The tape: `TapeNode` objects (torch.autograd.graph.Node) linked by `next_functions`.

Each recorded op leaves one `TapeNode` holding its op, attributes, the forward
values it may need in backward (inputs and outputs: NumPy arrays eagerly, IR
values while tracing) with the version each had, and edges to the nodes that
produced its inputs.  Leaves that require grad are reached through their
`AccumulateGrad` node.  `record.py` makes them; the engine
(tracegrad/autograd/engine.py) turns the reachable part of the tape into an
IR program; nothing here runs backward math itself.

These classes belong to the dispatch core because the dispatcher creates
them per op; ``tracegrad.autograd.graph`` re-exports them under torch's names
(``tg.autograd.graph.Node`` is the abstract class of `TapeNode` and `AccumulateGrad`).

Hooks (``TapeNode.register_hook`` / ``register_prehook``, tensor hooks kept per
output), ``metadata``, the forward stack of anomaly mode and packed saved
values live in a `NodeExtra` made on first use, so a node without them costs
one ``None`` slot.  How the engine runs hooks is described in
tracegrad/autograd/hooks.py; the ``_saved_<name>`` accessors are answered by
tracegrad/autograd/saved_hooks.py through `HOOKS`.
"""
from __future__ import annotations

import itertools
import weakref

from tracegrad.ir.registry import NotImplementedGrad

from .. import _state
from .. import tensor as _tensor
from .hooks import HOOKS

_seq = itertools.count()


def next_mark() -> int:
    """A sequence number below every node recorded from now on."""
    return next(_seq)


def _camel(name: str) -> str:
    return "".join(p.capitalize() for p in name.split("_"))


class RemovableHandle:
    """What ``register_hook`` returns: ``remove()`` takes the hook out (torch.utils.hooks).

    Also a context manager that removes the hook on exit.
    """

    _ids = itertools.count()

    def __init__(self, table: dict):
        self.id = next(RemovableHandle._ids)
        self._table = table

    def remove(self) -> None:
        self._table.pop(self.id, None)

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.remove()


LEAF_HOOKS_USED = [False]   # set by the first hook: backward() then looks for leaf-node hooks


def add_hook(table: dict, fn) -> RemovableHandle:
    if not callable(fn):
        raise TypeError(f"register_hook: expected a callable, got {type(fn).__name__}")
    LEAF_HOOKS_USED[0] = True
    h = RemovableHandle(table)
    table[h.id] = fn
    return h


class NodeExtra:
    """Rarely used per-node state, made on first use (see the module docstring).

    Attributes:
        pre_hooks / post_hooks: ``TapeNode.register_prehook`` / ``register_hook`` hooks.
        tensor_hooks: ``{output index: {handle id: fn}}``: hooks of the tensors
            this node produced (``tensor.register_hook`` on a non-leaf).
        metadata: ``TapeNode.metadata``.
        stack: the forward stack (``traceback.format_stack()``) in anomaly mode.
        packed: ``{(is_output, index): (packed, unpack_hook)}`` for saved values
            packed by ``saved_tensors_hooks``.
        name: the node's torch name where it is not ``<Op>Backward0``.
        edges: what ``next_functions`` shows where it is not the node's own `edges`: the
            last node of a composite torch records as one node shows that node's edges,
            to the composite's operands (`TensorFrontend.composite_result`); the engine
            follows the real ones.
    """

    __slots__ = ("pre_hooks", "post_hooks", "tensor_hooks", "metadata", "stack", "packed",
                 "_name", "_owner", "edges")

    def __init__(self, owner=None):
        self.pre_hooks: dict = {}
        self.post_hooks: dict = {}
        self.tensor_hooks: dict = {}
        self.metadata = None
        self.stack = None
        self.packed = None
        self._name = None   # torch's name where it differs from <Op>Backward0 (CopySlices)
        self.edges = None   # shown by next_functions instead of the node's own (a composite)
        self._owner = None if owner is None else weakref.ref(owner)

    @property
    def name(self):
        return self._name

    @name.setter
    def name(self, value) -> None:
        # a renamed TapeNode changes class too, so that type(grad_fn).__name__ stays its name()
        self._name = value
        node = self._owner() if self._owner is not None else None
        if isinstance(node, TapeNode) and value is not None:
            node.__class__ = node_class(value)

    def hook_signature(self):
        """What the backward program's structure depends on: which hooks exist (not which)."""
        outs = tuple(sorted(k for k, t in self.tensor_hooks.items() if t))
        if not (self.pre_hooks or self.post_hooks or outs):
            return None
        return (bool(self.pre_hooks), bool(self.post_hooks), outs)


class _HookAPI:
    """The hook and metadata methods `TapeNode` and `AccumulateGrad` share (torch's Node API)."""

    __slots__ = ()

    def _extra(self) -> NodeExtra:
        if self.extra is None:
            self.extra = NodeExtra(self)
        return self.extra

    def register_hook(self, fn) -> RemovableHandle:
        """Run ``fn(grad_inputs, grad_outputs)`` after this node's backward.

        ``grad_inputs`` holds one gradient per input (None where an input does
        not require grad); returning a tuple replaces them.  Follows
        ``torch.autograd.graph.Node.register_hook``.
        """
        return add_hook(self._extra().post_hooks, fn)

    def register_prehook(self, fn) -> RemovableHandle:
        """Run ``fn(grad_outputs)`` before this node's backward; a returned tuple replaces
        ``grad_outputs``.  Follows ``torch.autograd.graph.Node.register_prehook``."""
        return add_hook(self._extra().pre_hooks, fn)

    @property
    def metadata(self) -> dict:
        """A dict for the user's own data about this node (kept as long as the node)."""
        ex = self._extra()
        if ex.metadata is None:
            ex.metadata = {}
        return ex.metadata


class TapeNode(_HookAPI):
    """One recorded op application (what ``tensor.grad_fn`` returns).

    Attributes:
        op: the OpDef applied.
        attrs: its canonical attributes.
        edges: per input, ``(producer TapeNode, output index)`` or ``None`` when
            that input does not require grad.
        in_types / out_types: TensorTypes of inputs and outputs.
        saved_inputs / saved_outputs: forward values; ``None`` once freed.
        versions: per saved input then output, ``(version box, version seen)``.
        seq: recording order (torch's sequence number).
        loc: user source location.
        sig: a hashable object standing for ``(op, attrs, in_types)`` in the backward
            program cache key (`Frontend.call`'s cached plan), or None.
        extra: hooks, metadata, anomaly stack, packed values (`NodeExtra`) or None.

    Saved values read as ``_saved_<name>`` (and ``_raw_saved_<name>``), named
    as in torch's derivatives.yaml: ``self``/``other``/... for inputs (our
    ``input`` is torch's ``self``), ``result`` (``result0``, ``result1`` ...)
    for outputs, plus the op's attributes (``_saved_dim``, ``_saved_keepdim``).
    """

    __slots__ = ("op", "attrs", "edges", "in_types", "saved_inputs", "saved_outputs", "versions",
                 "out_types", "seq", "_loc", "retained", "extra", "sig", "__weakref__")
    _node_name = None   # the name its class stands for (node_class): a rename is a class change

    # torch has a class per node kind (type(y.grad_fn).__name__ == "MulBackward0"): nodes are
    # made as ``(CLASS_OF_OP.get(op) or op_class(op))(...)``, a subclass made once per op
    # (record.py); a Python-level __new__ choosing it would cost every recorded op a call

    def __init__(self, op, attrs, edges, in_types, saved_inputs, saved_outputs, versions,
                 out_types, loc, sig=None):
        self.op = op
        self.attrs = attrs
        self.edges = edges
        self.in_types = in_types
        self.retained = None  # {output index: weakref to a tensor that called retain_grad()}
        self.saved_inputs = saved_inputs
        self.saved_outputs = saved_outputs
        self.versions = versions
        self.out_types = out_types
        self.seq = next(_seq)
        self._loc = loc   # a SourceLoc, or a `_state.user_frame` capture formatted on first read
        self.extra = None
        self.sig = sig    # stands for (op, attrs, in_types) in the engine's cache key, or None

    @property
    def loc(self):
        loc = self._loc
        if type(loc) is tuple:
            loc = self._loc = _state.location_of(loc)
        return loc

    @loc.setter
    def loc(self, value) -> None:
        self._loc = value

    def name(self) -> str:
        """torch-style name, e.g. ``MulBackward0``; ``torch::autograd::CopySlices`` for a base
        whose view was written in place."""
        if self.extra is not None and self.extra.name is not None:
            return self.extra.name
        return type(self)._node_name or self.op.node_name or f"{_camel(self.op.name)}Backward0"

    @property
    def next_functions(self) -> tuple:
        """``(node, output index)`` per input, ``(None, 0)`` for one that does not require
        grad.  The last node of a composite torch records as one node (mean) shows that
        node's edges, to the composite's operands, not its own (NodeExtra.edges)."""
        edges = self.edges
        if self.extra is not None and self.extra.edges is not None:
            edges = self.extra.edges
        return tuple(e if e is not None else (None, 0) for e in edges)

    @property
    def requires_grad(self) -> bool:
        return True

    def __call__(self, *grads):
        """Apply this node's backward to `grads` (one per output), eagerly: one gradient per
        input, None for an input that does not require grad (torch's ``grad_fn(grad)``).
        The result is recorded like any op when grad mode is on, as in torch.  Hooks of
        the node are not run.

        Raises:
            RuntimeError: the saved values were freed by a backward pass, or the op has no
                gradient.
        """
        op = self.op
        if op.vjp is None or not callable(op.vjp):
            raise RuntimeError(f"{self.name()}: this node has no backward formula to call")
        if len(grads) != len(self.out_types):
            raise TypeError(f"{self.name()}: expected {len(self.out_types)} gradient(s), one "
                            f"per output, got {len(grads)}")
        if self.saved_inputs is None or self.saved_outputs is None:
            raise RuntimeError("Trying to backward through the graph a second time (or directly "
                               "access saved tensors after they have already been freed). "
                               "Specify retain_graph=True if you need to backward a second time.")
        wrap = _tensor.Tensor
        ins = [None if d is None else wrap(d) for d in self.saved_inputs]
        outs = [None if d is None else wrap(d) for d in self.saved_outputs]
        ct = grads[0] if len(grads) == 1 else tuple(grads)
        frontend = _tensor._DISPATCH   # the eager op frontend is a builder the VJP rules accept
        res = op.vjp(frontend, ct, *ins, *outs, **self.attrs)
        out = []
        for g, e, t in zip(res, self.edges, self.in_types):
            if isinstance(g, NotImplementedGrad):   # torch has no formula for this input
                if e is not None:
                    raise g.error()
                g = None
            if g is None or e is None:
                out.append(None)
                continue
            if tuple(g.shape) != tuple(t.shape):
                g = frontend.sum_to_size(g, tuple(t.shape))
            out.append(g if g.dtype is t.dtype else g.to(t.dtype))
        return tuple(out) if len(out) != 1 else out[0]   # torch: one input, one tensor

    def _fields_saved(self) -> dict:
        return HOOKS.saved_names(self)

    def __getattr__(self, name: str):
        # only reached when normal lookup fails: the _saved_<name> accessors
        if name.startswith("_saved_") or name.startswith("_raw_saved_"):
            raw = name.startswith("_raw_")
            key = name[len("_raw_saved_"):] if raw else name[len("_saved_"):]
            where = self._fields_saved().get(key)
            if where is not None:
                return HOOKS.saved_attribute(self, where, raw)
        raise AttributeError(f"'{type(self).__name__}' object has no attribute {name!r}")

    def __dir__(self):
        names = set(super().__dir__())
        for key, where in self._fields_saved().items():
            names.add(f"_saved_{key}")
            if where[0] not in ("attr", "const"):
                names.add(f"_raw_saved_{key}")
        return sorted(names)

    def __repr__(self) -> str:
        return f"<{self.name().rpartition('::')[2]} object at {hex(id(self))}>"   # torch: <CopySlices ...>


_CLASSES: dict = {}      # torch node name -> its TapeNode subclass
CLASS_OF_OP: dict = {}  # OpDef -> the TapeNode subclass of its default name


def node_class(name: str) -> type:
    """The `TapeNode` subclass named `name` (``MulBackward0``; ``CopySlices`` for
    ``torch::autograd::CopySlices``), made once."""
    cls = _CLASSES.get(name)
    if cls is None:
        short = name.rpartition("::")[2]
        cls = _CLASSES[name] = type(short, (TapeNode,), {"__slots__": (), "__module__": __name__,
                                                     "__qualname__": short, "_node_name": name})
    return cls


def op_class(op) -> type:
    """The `TapeNode` subclass of `op`'s default node name, made on its first record."""
    cls = CLASS_OF_OP[op] = node_class(op.node_name or f"{_camel(op.name)}Backward0")
    return cls


class AccumulateGrad(_HookAPI):
    """The node that accumulates a leaf's gradient into ``leaf.grad``.

    Its pre-hooks get ``(grad,)`` before the accumulation, its post-hooks
    ``((), (grad,))`` after it, in ``backward()`` only (``autograd.grad`` does
    not accumulate), as torch.
    """

    __slots__ = ("variable", "extra", "__weakref__")

    def __init__(self, variable):
        self.variable = variable
        self.extra = None

    def name(self) -> str:
        return "torch::autograd::AccumulateGrad"

    @property
    def next_functions(self) -> tuple:
        return ()

    def __repr__(self) -> str:
        return f"<AccumulateGrad object at {hex(id(self))}>"
