"""Jacobians from one batched run of one program (torch.autograd.functional.jacobian with
``vectorize=True``): the reverse-mode rows from the cached backward program under
``jax.vmap`` over stacked one-hot cotangents, and the forward-mode columns from the
recorded tape turned into one JVP program (`forward_ad.jvp_graph`) under ``jax.vmap`` over
the basis tangents.  The interpreter executor runs the rows one by one."""
from __future__ import annotations

from collections import OrderedDict
from typing import NamedTuple

import numpy as np

from tracegrad.ir import types as T
from tracegrad.ir.graph import Graph, Node as IRNode
from tracegrad.ir.jax_caches import programs_evicted
from tracegrad.passes import PassManager, cse, prune, simplify

from .. import _state
from ..tensor import Tensor
from .backward_program import _program_for
from . import forward_ad as fwAD
from .function import CUSTOM_FUNCTION
from .functional_args import _tupled, _untupled
from .grad_mode import enable_grad, no_grad
from .saved_hooks import PACKED
from .saved_values import _saved_inputs, _saved_value
from .wiring import LeafRef, NodeRef, _collect, _Wiring
from .._creation import zeros
from .batched_run import run_batched as _run_batched


def _basis(refs: tuple) -> tuple[list[np.ndarray], int]:
    """The standard basis of the flattened, concatenated `refs`, split per tensor: one
    ``(N, *ref.shape)`` array each, N the total number of elements."""
    sizes = [r.numel() for r in refs]
    total = sum(sizes)
    eye = np.eye(total)
    out, start = [], 0
    for r, n in zip(refs, sizes):
        out.append(eye[:, start:start + n].reshape((total,) + r.shape).astype(r.dtype.numpy))
        start += n
    return out, total


def _jacrev_batched(outputs: tuple, inputs: tuple):
    """All rows of the reverse-mode Jacobian from one vmapped run of the backward program;
    None when it cannot run batched (hooks or custom Functions in the program)."""
    roots = [o for o in outputs if o.requires_grad]
    cts, total = _basis(outputs)
    live = [k for k, o in enumerate(outputs) if o.requires_grad]
    per_input = [np.zeros((total,) + x.shape, x.dtype.numpy) for x in inputs]
    if roots:
        nodes = _collect(roots)
        w = _Wiring(nodes, roots, list(inputs))
        program_roots = []
        for j, r in enumerate(w.roots):
            if r is None:   # a leaf returned as it is: d out / d out = identity
                for t, x in enumerate(inputs):
                    if x is roots[j]:
                        per_input[t] += cts[live[j]].astype(x.dtype.numpy)
            else:
                program_roots.append(j)
        wanted = [t for t, r in enumerate(w.targets) if r is not None]
        if program_roots and wanted:
            w.roots = tuple(w.roots[j] for j in program_roots)
            w.targets = tuple(w.targets[t] for t in wanted)
            w.rekey()
            prog = _program_for(nodes, w)
            if prog.host or _state.local.anomaly:
                return None
            saved = (_saved_inputs(nodes, w, prog, tensors=False) if w.packed
                     else [_saved_value(nodes, f) for f in prog.feeds])
            args = [cts[live[j]] for j in program_roots] + list(saved)
            axes = (0,) * len(program_roots) + (None,) * len(saved)
            results = _run_batched(prog, prog.graph, args, axes)
            for t, res in zip(wanted, results):
                per_input[t] = per_input[t] + res.astype(per_input[t].dtype)
    jac = []
    start = 0
    for o in outputs:
        n = o.numel()
        jac.append(tuple(Tensor(np.ascontiguousarray(p[start:start + n]).reshape(o.shape + x.shape))
                         if n else zeros(o.shape + x.shape, dtype=x.dtype)
                         for p, x in zip(per_input, inputs)))
        start += n
    return tuple(jac)


# ---- forward-mode jacobian ----------------------------------------------------------------------
class _JvpProgram:
    """A cached forward-mode program of a recorded tape (see `_tape_program`)."""

    def __init__(self, graph, wrt: tuple):
        self.graph = graph
        self.wrt = wrt      # which inputs of the function carry tangents (the floating ones)


_JVP_PROGRAMS: OrderedDict = OrderedDict()   # tape structure -> _JvpProgram
_JVP_CACHE_SIZE = 128


def _jacfwd(func, inputs):
    """Forward-mode Jacobian: record `func` once, then one vmapped JVP program of its tape."""
    in_tuple, inputs = _tupled(inputs, "inputs", "jacobian")
    with enable_grad():
        xs = tuple(x.detach().requires_grad_(x.dtype.category >= T.FLOAT) for x in inputs)
        out_tuple, outputs = _tupled(func(*xs), "outputs of the user-provided function",
                                     "jacobian")
    tangents, total = _basis(inputs)
    recorded = _tape_program(outputs, xs)
    if recorded is None:   # a custom Function or hooks on the tape: one JVP per column
        per_output = _jvp_columns(func, inputs, tangents, total)
    else:
        prog, feeds, kinds = recorded
        args = feeds + [tangents[j] for j in prog.wrt]
        axes = (None,) * len(feeds) + (0,) * len(prog.wrt)
        results = _run_batched(prog, prog.graph, args, axes) if prog.wrt else []
        per_output = [None if k is None or not prog.wrt else results[k] for k in kinds]
    jac = []
    for o, t in zip(outputs, per_output):
        row, start = [], 0
        for x in inputs:
            n = x.numel()
            if t is None or not n or not o.numel():
                row.append(zeros(o.shape + x.shape, dtype=o.dtype))
            else:   # the columns are on the batch axis: move it after the output's dims
                block = np.moveaxis(np.asarray(t[start:start + n]), 0, -1)
                row.append(Tensor(np.ascontiguousarray(block).reshape(o.shape + x.shape)
                                  .astype(o.dtype.numpy)))
            start += n
        jac.append(tuple(row))
    return _untupled(tuple(jac), (out_tuple, in_tuple))


class InputRef(NamedTuple):
    """Input `input` of the recorded function (an output that is one of the inputs)."""

    input: int


def _out_ref(o, xs: tuple, w) -> NodeRef | InputRef | None:
    """Where output `o` is in the tape graph, or None when it is not on it."""
    if o.grad_fn is not None:
        return NodeRef(w.pos[id(o.grad_fn)], o._out_index)
    for j, x in enumerate(xs):
        if o is x:
            return InputRef(j)
    return None


def _tape_program(outputs: tuple, xs: tuple):
    """``(program, feeds, kinds)`` for the tape from `xs` to `outputs`.

    The tape becomes an IR graph whose inputs are `xs` and then the constants its
    nodes read (their saved arrays: the feeds), and `forward_ad.jvp_graph` turns that
    into one program: (values, tangents of the floating `xs`) -> output tangents.
    `kinds[i]` is output i's position among the program's outputs (None: it does not
    depend on `xs`).  Cached by the tape's structure.  None when the tape holds a node
    no IR program can differentiate (a custom Function, hooks, packed saved values).
    """
    roots = [o for o in outputs if o.grad_fn is not None]
    nodes = _collect(roots) if roots else []
    for n in nodes:
        if n.op is CUSTOM_FUNCTION or (n.extra is not None and n.extra.hook_signature()):
            return None
        if n.saved_inputs is None or any(a is PACKED for a in n.saved_inputs):
            return None
    w = _Wiring(nodes, roots, list(xs))
    refs = tuple(_out_ref(o, xs, w) for o in outputs)
    g = Graph(name="jacfwd")
    x_vals = [g.add_input(x._type) for x in xs]
    feeds = [x._data for x in xs]
    outs: list[list] = []
    for i, (n, wiring) in enumerate(zip(nodes, w.refs)):
        ins = []
        for k, r in enumerate(wiring):
            if type(r) is NodeRef:
                ins.append(outs[r.node][r.output])
                continue
            var = n.edges[k][0].variable if type(r) is LeafRef else None
            j = next((j for j, x in enumerate(xs) if x is var), None) if var is not None else None
            if j is not None:
                ins.append(x_vals[j])
            else:   # a constant (or a leaf other than the inputs): its saved value
                ins.append(g.add_input(n.in_types[k]))
                feeds.append(n.saved_inputs[k])
        node = IRNode(n.op.name, ins, n.attrs, n.out_types, n.loc, id=i)
        g.nodes.append(node)
        outs.append(node.outputs)
    kinds = []
    for ref in refs:
        if ref is None:
            kinds.append(None)
        else:
            g.outputs.append(outs[ref.node][ref.output] if type(ref) is NodeRef
                             else x_vals[ref.input])
            kinds.append(len(g.outputs) - 1)
    key = (w.key, refs, tuple(x._type for x in xs))
    prog = _JVP_PROGRAMS.get(key)
    if prog is None:
        wrt = tuple(j for j, x in enumerate(xs) if x.requires_grad)
        jg = fwAD.jvp_graph(g, [x_vals[j] for j in wrt], name="jacfwd")
        jg, _ = PassManager([("prune", prune), ("simplify", simplify), ("cse", cse),
                             ("prune", prune)]).run(jg)
        prog = _JVP_PROGRAMS[key] = _JvpProgram(jg, wrt)
        if len(_JVP_PROGRAMS) > _JVP_CACHE_SIZE:
            _JVP_PROGRAMS.popitem(last=False)   # its vmapped jax function goes with it
            programs_evicted()                  # and what jax kept for it
    else:
        _JVP_PROGRAMS.move_to_end(key)
    return prog, feeds, kinds


def _jvp_columns(func, inputs: tuple, tangents: list, total: int) -> list:
    """Per output, the stacked tangents ``(N, *out.shape)`` of N eager forward-AD runs."""
    cols: list = []
    for c in range(total):
        with no_grad(), fwAD.dual_level():
            duals = [fwAD.make_dual(x.detach(), Tensor(t[c])) for x, t in zip(inputs, tangents)]
            _, outs = _tupled(func(*duals), "outputs of the user-provided function", "jacobian")
            cols.append([fwAD.unpack_dual(o).tangent for o in outs])
    if not cols:
        return []
    return [None if all(col[k] is None for col in cols) else
            np.stack([np.zeros(o.shape, o.dtype.numpy) if col[k] is None else col[k]._data
                      for col in cols])
            for k, o in enumerate(outs)]
