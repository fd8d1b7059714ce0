"""Saved tensors: which values a node saves, their ``_saved_*`` names, and saved-tensor hooks.

What a node *saves* is what its VJP rule reads: the rule is run once on
placeholder values (cached per op, attributes, types and which inputs need
a gradient) and the forward inputs and outputs the requested gradients
depend on are the saved ones (``mul`` saves both operands, ``exp`` its
result, ``add`` nothing), the same sets torch's derivatives.yaml declares.

`saved_tensors_hooks(pack, unpack)` (torch.autograd.graph): while active,
every op recorded calls ``pack(tensor)`` for each value it saves, at record
time, and the tape keeps only the packed object; the engine calls
``unpack(packed)`` when a backward program reads the value, in torch's
order (the most recently recorded node first, each node's values in the order
they were packed: torch's, inputs sorted by their derivatives.yaml names, then
outputs; see `torch_order`).  The
innermost pair wins.  As in torch, a packed value is not version-checked:
the hooks own it.
"""
from __future__ import annotations

import functools
import gc
import sys

from tracegrad.ir.builder import Builder
from tracegrad.ir.graph import Graph, Node as IRNode
from tracegrad.ir.registry import CompositeDef

from .. import _state
from ..dispatch import view_meta
from ..dispatch.constants import is_scalar
from ..dispatch.hooks import register
from ..dispatch.tape import AccumulateGrad
from ..tensor import Tensor


class _Packed:
    """The tape's placeholder for a value held by a pack hook (see `NodeExtra.packed`)."""

    def __repr__(self) -> str:
        return "<packed saved value>"


PACKED = _Packed()

_FREED = ("Trying to backward through the graph a second time (or directly access saved tensors "
          "after they have already been freed). Saved intermediate values of the graph are freed "
          "when you call .backward() or autograd.grad(). Specify retain_graph=True if you need to "
          "backward through the graph a second time or if you need to access saved tensors after "
          "calling backward.")


refresh_record_extras = _state.refresh_record_extras   # (anomaly.py and this module call it)


# ---- which values a node saves -------------------------------------------------------------

_reads_cache: dict = {}


def vjp_reads(op, attrs: dict, in_types: tuple, out_types: tuple, needs: tuple) -> tuple:
    """``((is_output, index), ...)``: the forward values `op`'s VJP reads for the inputs in
    `needs` (inputs first, then outputs, in order)."""
    try:
        key = (op.name, tuple(attrs.items()), in_types, out_types, needs)
        hit = _reads_cache.get(key)
    except TypeError:   # an unhashable attribute: no caching
        key, hit = None, None
    if hit is not None:
        return hit
    g = Graph("saved_probe")
    ins = [g.add_input(t) for t in in_types]
    fwd = IRNode(op.name, ins, attrs, out_types)
    cts = [g.add_input(t) for t in out_types]
    b = Builder(g)
    try:
        grads = op.vjp(b, cts[0] if len(cts) == 1 else tuple(cts), *ins, *fwd.outputs, **attrs)
    except Exception:   # a rule that needs more than types: assume it reads everything
        grads = None
    if grads is None:
        result = tuple((False, k) for k in range(len(ins))) + \
            tuple((True, k) for k in range(len(out_types)))
    else:
        producer = {id(o): n for n in g.nodes for o in n.outputs}
        reached, stack = set(), [gr for gr, need in zip(grads, needs) if need and gr is not None]
        while stack:
            v = stack.pop()
            if id(v) in reached:
                continue
            reached.add(id(v))
            n = producer.get(id(v))
            if n is not None:
                stack.extend(n.inputs)
        result = tuple((False, k) for k, v in enumerate(ins) if id(v) in reached) + \
            tuple((True, k) for k, v in enumerate(fwd.outputs) if id(v) in reached)
    if key is not None:
        _reads_cache[key] = result
    return result


def saved_positions(node) -> tuple:
    """The values `node` saves, given which of its inputs require grad."""
    needs = tuple(e is not None and t.dtype.is_differentiable
                  for e, t in zip(node.edges, node.in_types))
    return vjp_reads(node.op, node.attrs, node.in_types, node.out_types, needs)


def _torch_name(op, k: int) -> str:
    """Input `k`'s name in torch's derivatives.yaml (``input`` is torch's ``self``)."""
    if op.inputs and op.inputs[0].startswith("*"):
        return f"{op.inputs[0][1:]}{k:08d}"
    name = op.inputs[k] if k < len(op.inputs) else f"~{k:08d}"
    return "self" if name == "input" else name


@functools.lru_cache(maxsize=4096)
def torch_order(op, positions: tuple) -> tuple:
    """`positions` in the order torch 2.13 saves (and packs) them: its generated nodes save
    their inputs sorted by name (``mul``: other, then self; ``pow``: exponent, self), then
    their outputs."""
    return tuple(sorted(positions, key=lambda p: (p[0], p[1] if p[0] else _torch_name(op, p[1]))))


def saved_names(node) -> dict:
    """``{name: where}`` of the ``_saved_<name>`` accessors (torch's derivatives.yaml names)."""
    op = node.op
    needs = tuple(t.dtype.is_differentiable for t in node.in_types)
    reads = vjp_reads(op, node.attrs, node.in_types, node.out_types, needs)
    names = {}
    variadic = op.inputs and op.inputs[0].startswith("*")
    n_out = len(node.out_types)
    for is_out, k in reads:
        if is_out:
            name = "result" if n_out == 1 else f"result{k}"
        elif variadic:
            name = f"{op.inputs[0][1:]}{k}"
        else:
            name = op.inputs[k]
            name = "self" if name == "input" else name
        names[name] = ("value", is_out, k)
    for a in node.attrs:
        names.setdefault(a, ("attr", a))
    extra = _TORCH_FIELDS.get(node.name())
    if extra is not None:
        extra(node, names)
    return names


# ---- torch's other _saved_ names (derivatives.yaml), where cheap: sizes and scalars ----------

def _sizes(node, names, key="self", k=0):
    names[f"{key}_sym_sizes"] = ("const", tuple(int(d) for d in node.in_types[k].shape))


def _pow_scalar(node, names):
    """PowBackward0 (`x ** 3`): torch's `exponent` is the Python number; ours is a saved 0-d
    constant, shown as an int when integral (`x ** 3.0` shows 3, torch 3.0)."""
    if node.op.name == "mul":   # `square`: x * x, torch's pow(x, 2)
        names.pop("other", None)
        names["exponent"] = ("const", 2)
        return
    where = names.pop("other", None)
    if where is not None and where[0] == "value" and node.saved_inputs is not None:
        v = node.saved_inputs[where[2]]
        if hasattr(v, "ravel"):   # a 0-d constant (`square`: one broadcast to the input)
            flat = v.ravel()
            if flat.size == 0 or (flat != flat[0]).any():
                names["exponent"] = where
                return
            v = flat[0].item()
        if isinstance(v, float) and v.is_integer():
            v = int(v)
        names["exponent"] = ("const", v)
    names.pop("result", None)   # torch's PowBackward0 saves self and exponent


def _pow_tensor(node, names):
    if "other" in names:
        names["exponent"] = names.pop("other")


def _reduced_input(node):
    """The input of a composite mean: the first node of the decomposition (its `sum`)."""
    n = node
    for _ in range(4):
        if n is None or not hasattr(n, "op"):
            return None
        if n.op.name == "sum":
            return n
        e = n.edges[0] if n.edges else None
        n = e[0] if e is not None else None
    return None


def _mean(node, names):
    s = _reduced_input(node)
    if s is None:
        return
    names.pop("other", None)
    names.pop("result", None)
    shape = tuple(int(d) for d in s.in_types[0].shape)
    names["self_sym_sizes"] = ("const", shape)
    n = 1
    for d in shape:
        n *= d
    names["self_sym_numel"] = ("const", n)
    if node.name() == "MeanBackward1":
        for a in ("dim", "keepdim"):
            if a in s.attrs:
                names[a] = ("const", s.attrs[a])


def _mm(node, names):
    if "other" in names:
        names["mat2"] = names.pop("other")
    _sizes(node, names)
    _sizes(node, names, "mat2", 1)


_TORCH_FIELDS = {
    "PowBackward0": _pow_scalar, "PowBackward1": _pow_tensor, "PowBackward2": _pow_tensor,
    "MeanBackward0": _mean, "MeanBackward1": _mean, "MmBackward0": _mm,
    **{n: _sizes for n in ("SumBackward0", "SumBackward1", "ViewBackward0", "ExpandBackward0",
                           "SqueezeBackward0", "SqueezeBackward1", "SqueezeBackward2",
                           "SliceBackward0")},
}


class SavedTensor:
    """``_raw_saved_<name>``: one saved value (torch._C._autograd.SavedTensor)."""

    def __init__(self, node, is_out: bool, index: int):
        self._node, self._where = node, (is_out, index)

    def unpack(self):
        return saved_attribute(self._node, ("value",) + self._where, raw=False)

    @property
    def data(self):
        return self.unpack()

    def register_hooks(self, pack_hook, unpack_hook) -> None:
        """Pack this saved value now with `pack_hook`; backward will call `unpack_hook`."""
        node = self._node
        is_out, k = self._where
        src = node.saved_outputs if is_out else node.saved_inputs
        if src is None:
            raise RuntimeError(_FREED)
        ex = node._extra()
        if ex.packed and self._where in ex.packed:
            raise RuntimeError("SavedTensor hooks have already been set on this saved value "
                               "(by saved_tensors_hooks or register_hooks)")
        packed = pack_hook(self.unpack())
        _store_packed(node, is_out, k, packed, unpack_hook)

    def __repr__(self) -> str:
        return f"<SavedTensor {self._where} of {self._node.name()}>"


def saved_attribute(node, where: tuple, raw: bool):
    """The value of ``node._saved_<name>`` (or the `SavedTensor` for ``_raw_saved_``)."""
    if where[0] == "attr":
        return node.attrs[where[1]]
    if where[0] == "const":
        return where[1]
    _, is_out, k = where
    if raw:
        return SavedTensor(node, is_out, k)
    src = node.saved_outputs if is_out else node.saved_inputs
    if src is None:
        raise RuntimeError(_FREED)
    if src[k] is PACKED:   # torch: a new tensor each read, never the one the hook returned
        return as_tensor(node, is_out, k, unpack_value(node, is_out, k)._data, fresh=True)
    box, seen = node.versions[k + (len(node.in_types) if is_out else 0)]
    if box[0] != seen:   # torch's unpack checks the version, as backward does
        t = node.out_types[k] if is_out else node.in_types[k]
        raise RuntimeError(
            f"one of the variables needed for gradient computation has been modified by an "
            f"inplace operation: [{t}], which is {'output' if is_out else 'input'} {k} of "
            f"{node.name()}, is at version {box[0]}; expected version {seen} instead.")
    return as_tensor(node, is_out, k, src[k])


def as_tensor(node, is_out: bool, k: int, data, fresh: bool = False):
    """Saved value `data` of `node` as a tensor with its history (an unpacked saved variable);
    `fresh`: a new tensor even for a saved input still alive (torch 2.13, for values saved
    through saved-tensor hooks: `_saved_other is b` is then False, and a leaf reads as a new
    leaf requiring grad)."""
    if is_out:
        return Tensor(data, requires_grad=True, grad_fn=node, out_index=k)
    edge = node.edges[k]
    if edge is None:
        return Tensor(data)
    if isinstance(edge[0], AccumulateGrad):
        if fresh:
            return Tensor(data, requires_grad=True)
        v = edge[0].variable
        return v if v._data is data else Tensor(data)
    live = None if fresh else _live_output(edge[0], edge[1], data)
    if live is not None:   # torch returns the saved input itself: `_saved_other is b`
        return live
    return Tensor(data, requires_grad=True, grad_fn=edge[0], out_index=edge[1])


def _live_output(producer, k: int, data):
    """The tensor still alive that is output `k` of `producer` with value `data`, or None.
    Tape nodes keep no references to their outputs (recording stays cheap), so this debug
    accessor asks the garbage collector for the objects that refer to the node."""
    for r in gc.get_referrers(producer):
        if isinstance(r, Tensor) and r.grad_fn is producer and r._out_index == k \
                and r._data is data:
            return r
    return None


# ---- packing ----------------------------------------------------------------------------------

def _store_packed(node, is_out: bool, k: int, packed, unpack_hook) -> None:
    ex = node._extra()
    if ex.packed is None:
        ex.packed = {}
    ex.packed[(is_out, k)] = (packed, unpack_hook)
    if is_out:
        vals = list(node.saved_outputs)
        vals[k] = PACKED
        node.saved_outputs = tuple(vals)
    else:
        vals = list(node.saved_inputs)
        vals[k] = PACKED
        node.saved_inputs = tuple(vals)


_EXPAND = CompositeDef.expand.__code__


def _composite_names() -> dict | None:
    """``{id(tensor): name}`` of the operands of the composite op whose decomposition is
    recording `node` (the outermost: the op the user called; looked up on the stack only
    while saved-tensor hooks are active), or None outside any: torch's node for ``addmm``
    or ``matmul`` saves under the user-level op's names (mat1, mat2; other, self), which
    the step's op (``mm``, ``batched_matmul``) does not know."""
    f, outer = sys._getframe(3), None
    # up to the first frame outside tracegrad: a decomposition never calls user code
    while f is not None and f.f_globals.get("__name__", "").startswith("tracegrad"):
        if f.f_code is _EXPAND:
            outer = f
        f = f.f_back
    if outer is None:
        return None
    # `expand`'s locals: self (the CompositeDef), operands and params (its bound call)
    comp, local = outer.f_locals.get("self"), outer.f_locals
    names = {id(t): _torch_name(comp, i)
             for i, t in enumerate(local.get("operands") or ()) if isinstance(t, Tensor)}
    for name, v in (local.get("params") or {}).items():
        if isinstance(v, Tensor):
            names.setdefault(id(v), "self" if name == "input" else name)
    return names


def _pack_order(node, operands: list, positions) -> list:
    """`torch_order` by the op's own input names, or inside a composite by the composite's
    (the step's order is kept where a saved input is not one of the composite's operands)."""
    names = _composite_names()
    if names is None:
        return torch_order(node.op, tuple(positions))
    if not all(p[0] or id(operands[p[1]]) in names for p in positions):
        return list(positions)
    return sorted(positions, key=lambda p: (p[0], p[1] if p[0] else names[id(operands[p[1]])]))


def pack_node(node, operands: list, outs: list) -> None:
    """Record time, under `saved_tensors_hooks`: pack every value `node` saves."""
    local = _state.local
    pack, unpack = local.saved_hooks[-1]
    positions = saved_positions(node)
    if not positions:
        return
    stack = local.saved_hooks
    local.saved_hooks = []   # ops inside a pack hook are not themselves packed
    try:
        positions = _pack_order(node, operands, positions)
        for is_out, k in positions:
            if not is_out and is_scalar(operands[k]):   # torch saves a Python number as is
                continue
            t = outs[k] if is_out else operands[k]
            view_meta.PACKING.append(t)   # an in-place change of t inside pack raises
            try:
                packed = pack(t)
            finally:
                view_meta.PACKING.pop()
            _store_packed(node, is_out, k, packed, unpack)
    finally:
        local.saved_hooks = stack


def unpack_value(node, is_out: bool, k: int):
    """Call the unpack hook of `node`'s packed value; a tensor of the saved type."""
    packed, unpack = node.extra.packed[(is_out, k)]
    local = _state.local
    stack = local.saved_hooks
    local.saved_hooks = []
    try:
        t = unpack(packed)
    finally:
        local.saved_hooks = stack
    want = node.out_types[k] if is_out else node.in_types[k]
    if not isinstance(t, Tensor):
        role = "output" if is_out else "input"
        raise TypeError(f"Output of saved tensor unpack_hook expected to be a Tensor but got "
                        f"result of type {type(t).__name__} (saved {role} {k} of {node.name()})")
    if t._type != want:
        raise RuntimeError(f"unpack_hook of a saved value of {node.name()} returned {t._type}; "
                           f"the value saved was {want} (unpack_hook(pack_hook(t)) must equal t "
                           "in shape and dtype)")
    return t


# ---- the context managers ------------------------------------------------------------------------

class saved_tensors_hooks:
    """Pack/unpack hooks for the values autograd saves (torch.autograd.graph.saved_tensors_hooks).

    ``pack_hook(tensor) -> Any`` runs when an op records a value it needs for
    backward; ``unpack_hook(packed) -> Tensor`` runs when backward reads it and
    must return a tensor equal to the original in shape and dtype.  Nested
    uses: the innermost pair wins.

    Raises:
        RuntimeError: entered inside `disable_saved_tensors_hooks` (its message).
    """

    def __init__(self, pack_hook, unpack_hook):
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook

    def __enter__(self):
        local = _state.local
        if local.saved_hooks_disabled is not None:
            raise RuntimeError(local.saved_hooks_disabled)
        local.saved_hooks = local.saved_hooks + [(self.pack_hook, self.unpack_hook)]
        refresh_record_extras()
        return self

    def __exit__(self, *exc):
        local = _state.local
        local.saved_hooks = local.saved_hooks[:-1]
        refresh_record_extras()
        return False


class save_on_cpu(saved_tensors_hooks):
    """Keep saved values on the host (torch.autograd.graph.save_on_cpu).

    tracegrad's eager values are NumPy arrays in host memory already, so, as
    torch does for tensors already on the CPU, nothing is copied: pack and
    unpack hand back the same tensor.  ``pin_memory`` and ``device_type`` are
    accepted for compatibility.
    """

    def __init__(self, pin_memory: bool = False, device_type: str = "cuda"):
        super().__init__(_keep, _keep)
        self.pin_memory = pin_memory
        self.device_type = device_type


def _keep(t):
    return t


class disable_saved_tensors_hooks:
    """Make any use of saved-tensor hooks raise RuntimeError(`error_message`) inside the block
    (torch.autograd.graph.disable_saved_tensors_hooks)."""

    def __init__(self, error_message: str):
        self.error_message = error_message

    def __enter__(self):
        local = _state.local
        self._prev = local.saved_hooks_disabled
        local.saved_hooks_disabled = self.error_message
        return self

    def __exit__(self, *exc):
        _state.local.saved_hooks_disabled = self._prev
        return False


class allow_mutation_on_saved_tensors:
    """Allow in-place changes to tensors saved for backward (torch.autograd.graph).

    Inside the block, every saved value is packed as the immutable array it
    had when saved (tracegrad's values never change in place: an in-place op
    gives the tensor a new array), so backward uses the original value and no
    version error is raised.  Forward and backward must both run inside the
    block, as in torch.

    Returns:
        the context object (``with ... as ctx``); its state is cleared on exit.
    """

    def __init__(self):
        self._hooks = saved_tensors_hooks(self._pack, self._unpack)
        self.active = False

    def _pack(self, t):
        return (t, t._data, t._vc[0], t._vc)

    def _unpack(self, packed):
        if not self.active:
            raise RuntimeError("Trying to backward outside of the "
                               "'allow_mutation_on_saved_tensors' context in which the graph was "
                               "originally recorded.")
        t, data, version, box = packed
        if box[0] == version and t._data is data:
            return t
        return Tensor(data)

    def __enter__(self):
        self.active = True
        self._hooks.__enter__()
        return self

    def __exit__(self, *exc):
        self.active = False
        return self._hooks.__exit__(*exc)


register("saved_names", saved_names)          # the tape's _saved_<name> accessors
register("saved_attribute", saved_attribute)
