"""Higher-order functional autograd (torch.autograd.functional): vjp, jvp, jacobian, hessian,
hvp, vhp, with torch's signatures, results and errors.

``func`` takes tensors and returns a tensor or a tuple of tensors; other
arguments are captured with a lambda, as torch documents:
``jacobian(lambda x: f(x, constant, flag=flag), input)``.  ``inputs`` is a
tensor or a tuple of tensors, and results nest the same way (a tuple where
torch gives a tuple).

How each is computed:

- `vjp`, `vhp`, `hvp`: the reverse engine (`hvp` and `vhp` by double backward).
- `jvp`: forward-mode AD (``forward_ad.make_dual``), not torch's double-backward trick.
- `jacobian(strategy="reverse-mode")`: one backward per output element, all
  through the same cached backward program (one-hot cotangents);
  ``vectorize=True`` runs that program once for all rows, under
  ``jax.vmap`` over the stacked cotangents (the saved values broadcast).
- `jacobian(strategy="forward-mode", vectorize=True)`: the function is
  recorded once, its tape becomes an IR graph, `forward_ad.jvp_graph` turns
  it into one forward-mode program, run under ``jax.vmap`` over the stacked
  basis tangents.
- `hessian`: the jacobian of the gradient (recorded with ``create_graph``), by
  either strategy, so ``outer_jacobian_strategy="forward-mode"`` is
  forward-over-reverse in one vmapped program.

With the interpreter executor (``tg.set_executor("interpreter")``) a
vectorized program runs row by row on NumPy (the reference executor has no
vmap); under cross-check mode the vmapped jax result is compared with that.
``vectorize=True`` with ``create_graph=True`` loops over rows (the result must
be recorded on the tape, which a vmapped jax run cannot do), and so does a
tape holding a custom ``Function`` or hooks (Python inside the program).
"""
from __future__ import annotations

import weakref
from collections import OrderedDict

import numpy as np

from tracegrad.ir import types as T
from tracegrad.ir.graph import Graph, Node as IRNode
from tracegrad.passes import PassManager, cse, prune, simplify

from .. import _state
from .._creation import ones_like, zeros, zeros_like
from .._ops import stack
from ..backends import crosscheck, interpreter
from ..backends.jax_backend import _as_function, _raise_host_error
from ..tensor import Tensor
from . import engine, forward_ad as fwAD
from .engine import _Wiring, _collect, grad
from .function import CUSTOM_FUNCTION
from .grad_mode import enable_grad, no_grad, set_grad_enabled
from .saved_hooks import PACKED

__all__ = ["vjp", "jvp", "jacobian", "hessian", "hvp", "vhp"]


# ---- argument handling --------------------------------------------------------------------------
def _tupled(x, what: str, fn: str) -> tuple[bool, tuple]:
    """(was a tuple, x as a tuple of tensors); TypeError naming `fn` otherwise (torch's)."""
    was = isinstance(x, tuple)
    items = x if was else (x,)
    for i, t in enumerate(items):
        if not isinstance(t, Tensor):
            where = f"the value at index {i}" if was else f"the given {what}"
            raise TypeError(f"The {what} given to {fn} must be either a Tensor or a tuple of "
                            f"Tensors but {where} has type {type(t).__name__}.")
    return was, items


def _untupled(res, was_tuple):
    """Undo `_tupled`: `was_tuple` is a bool, or a pair (outer, inner) for nested results."""
    if isinstance(was_tuple, tuple):
        outer, inner = was_tuple
        if not inner:
            res = tuple(r[0] for r in res)
        return res if outer else res[0]
    return res if was_tuple else res[0]


def _prepare(inputs: tuple, create_graph: bool, need_graph: bool) -> tuple:
    """Fresh tensors for `func` (so the results are taken w.r.t. these and not a captured
    alias): a differentiable view under ``create_graph``, else a detached copy."""
    out = []
    for t in inputs:
        if create_graph and t.requires_grad:
            out.append(t.view_as(t))
        else:
            out.append(t.detach().requires_grad_(need_graph and t.dtype.category >= T.FLOAT))
    return tuple(out)


def _finish(tensors, create_graph: bool):
    """Results without history unless ``create_graph`` (nested tuples too)."""
    if create_graph:
        return tensors
    return tuple(_finish(t, False) if isinstance(t, tuple) else t.detach() for t in tensors)


def _check_v(v, refs: tuple, refs_tuple: bool, fn: str) -> tuple:
    _, v = _tupled(v, "v", fn)
    if len(v) != len(refs):
        if refs_tuple:
            raise RuntimeError(f"v is a tuple of invalid length: should be {len(refs)} but got "
                               f"{len(v)}.")
        raise RuntimeError("The given v should contain a single Tensor.")
    for i, (a, r) in enumerate(zip(v, refs)):
        if a.shape != r.shape:
            where = f"Entry {i} in " if refs_tuple else ""
            raise RuntimeError(f"{where}v has invalid size: should be {list(r.shape)} but got "
                               f"{list(a.shape)}.")
    return v


def _default_v(refs: tuple, what: str) -> tuple:
    """v = 1 for a single one-element `refs` (torch's default); `what`: "input" or "output"."""
    if len(refs) != 1 or refs[0].numel() != 1:
        cond = ("user-provided function returns a single Tensor" if what == "output" else
                "input to the user-provided function is a single Tensor")
        raise RuntimeError(f"The vector v can only be None if the {cond} with a single element.")
    return (ones_like(refs[0].detach()),)


def _require_outputs_grad(outputs: tuple, strict: bool) -> None:
    if not strict:
        return
    for i, o in enumerate(outputs):
        if not o.requires_grad:
            raise RuntimeError(f"Output {i} of the user-provided function does not require "
                               "gradients. The outputs must be computed in a differentiable "
                               "manner from the input when running in strict mode.")


def _grad(outputs: tuple, inputs: tuple, cts, create_graph: bool, retain_graph=None) -> list:
    """autograd.grad over the outputs that require grad (None for unused inputs)."""
    keep = [i for i, o in enumerate(outputs) if o is not None and o.requires_grad]
    if not keep:
        return [None] * len(inputs)
    cts = None if cts is None else [cts[i] for i in keep]
    return list(grad([outputs[i] for i in keep], list(inputs), cts, retain_graph=retain_graph,
                     create_graph=create_graph, allow_unused=True))


def _zeros_for_none(grads, refs, strict: bool, create_graph: bool, what: str) -> tuple:
    out = []
    for i, (g, r) in enumerate(zip(grads, refs)):
        if g is None:
            if strict:
                raise RuntimeError(f"The output of the user-provided function is independent of "
                                   f"input {i}. This is not allowed in strict mode.")
            g = zeros_like(r.detach())
        elif strict and create_graph and not g.requires_grad:
            raise RuntimeError(f"The {what} of the user-provided function is independent of "
                               f"input {i}. This is not allowed in strict mode when "
                               "create_graph=True.")
        out.append(g)
    return tuple(out)


# ---- vjp / jvp ----------------------------------------------------------------------------------
def vjp(func, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """``(func(inputs), v^T J)`` (torch.autograd.functional.vjp).

    Args:
        func: tensors -> a tensor or a tuple of tensors.
        inputs: a tensor or a tuple of tensors.
        v: one cotangent per output, of its shape; may be None for a single
            one-element output.
        create_graph: the results are differentiable (recorded on the tape).
        strict: raise when an output or gradient does not depend on the inputs
            (instead of returning zeros).
    Returns:
        ``(outputs, vjp)``; `vjp` nests like `inputs`, each entry shaped like its input.
    Raises:
        TypeError: non-tensor inputs or outputs.  RuntimeError: bad `v`; strict violations.
    """
    with enable_grad():
        in_tuple, inputs = _tupled(inputs, "inputs", "vjp")
        inputs = _prepare(inputs, create_graph, True)
        out_tuple, outputs = _tupled(func(*inputs), "outputs of the user-provided function",
                                     "vjp")
        _require_outputs_grad(outputs, strict)
        v = _default_v(outputs, "output") if v is None else \
            _check_v(v, outputs, out_tuple, "vjp")
    with set_grad_enabled(create_graph or _state.local.grad_enabled):
        grads = _grad(outputs, inputs, list(v), create_graph)
        res = _zeros_for_none(grads, inputs, strict, create_graph, "jacobian")
    return _untupled(_finish(outputs, create_graph), out_tuple), \
        _untupled(_finish(res, create_graph), in_tuple)


def jvp(func, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """``(func(inputs), J v)`` (torch.autograd.functional.jvp), by forward-mode AD.

    torch computes this by the double-backward trick; here the inputs are made
    dual (`forward_ad.make_dual`) and the output tangents read back, so every
    op's tangent program runs once (a custom Function needs a ``jvp``).

    Args:
        func: tensors -> a tensor or a tuple of tensors.
        inputs: a tensor or a tuple of tensors.
        v: one tangent per input, of its shape; may be None for a single one-element input.
        create_graph: the results are differentiable w.r.t. `inputs` and `v`.
        strict: raise when an output does not depend on the inputs.
    Returns:
        ``(outputs, jvp)``; `jvp` nests like the outputs.
    Raises:
        TypeError / RuntimeError: as `vjp`.
    """
    in_tuple, inputs = _tupled(inputs, "inputs", "jvp")
    v = _default_v(inputs, "input") if v is None else \
        _check_v(v, inputs, in_tuple, "jvp")
    track = create_graph or strict
    with set_grad_enabled(track):
        inputs = _prepare(inputs, create_graph, track)
        if not create_graph:
            v = tuple(a.detach() for a in v)
        with fwAD.dual_level():
            duals = tuple(fwAD.make_dual(x, t) for x, t in zip(inputs, v))
            out_tuple, outputs = _tupled(func(*duals), "outputs of the user-provided function",
                                         "jvp")
            unpacked = [fwAD.unpack_dual(o) for o in outputs]
        if strict:
            _require_outputs_grad(outputs, True)
            _strict_inputs_used(outputs, inputs)
        tangents = tuple(t if t is not None else zeros_like(p.detach()) for p, t in unpacked)
        primals = tuple(p for p, _ in unpacked)
    return _untupled(_finish(primals, create_graph), out_tuple), \
        _untupled(_finish(tangents, create_graph), out_tuple)


def _strict_inputs_used(outputs, inputs) -> None:
    used = _grad(outputs, inputs, [zeros_like(o) for o in outputs], False, retain_graph=True)
    for i, g in enumerate(used):
        if g is None:
            raise RuntimeError(f"The output of the user-provided function is independent of "
                               f"input {i}. This is not allowed in strict mode.")


# ---- jacobian -----------------------------------------------------------------------------------
def jacobian(func, inputs, create_graph: bool = False, strict: bool = False,
             vectorize: bool = False, strategy: str = "reverse-mode"):
    """The Jacobian of `func` at `inputs` (torch.autograd.functional.jacobian).

    Args:
        func: tensors -> a tensor or a tuple of tensors.
        inputs: a tensor or a tuple of tensors.
        create_graph: the Jacobian is differentiable (reverse-mode only, as torch).
        strict: raise when an output does not depend on an input (not with
            ``vectorize=True`` or forward mode, as torch).
        vectorize: compute all rows in one batched run of one static program
            (see the module docstring), instead of one backward per row.
        strategy: "reverse-mode" (rows by backward) or "forward-mode" (columns
            by JVP; requires ``vectorize=True``, as torch).
    Returns:
        for output i and input j a tensor of shape ``out_i.shape + in_j.shape``:
        a single tensor, a tuple over outputs or inputs, or a tuple of tuples
        ``J[i][j]``, following how `func`'s outputs and `inputs` are given.
        dtype: the input's (reverse mode) or the output's (forward mode).
    Raises:
        ValueError: an unknown strategy.
        NotImplementedError: forward mode with ``create_graph`` or without ``vectorize``.
        RuntimeError: strict violations; ``strict`` with ``vectorize`` or forward mode.
    """
    if strategy not in ("forward-mode", "reverse-mode"):
        raise ValueError(f'jacobian: expected strategy to be either "forward-mode" or '
                         f'"reverse-mode", got {strategy!r}. Hint: if your function has more '
                         'outputs than inputs, "forward-mode" tends to be more performant. '
                         'Otherwise, prefer to use "reverse-mode".')
    if strategy == "forward-mode":
        if create_graph:
            raise NotImplementedError(
                'torch.autograd.functional.jacobian: `create_graph=True` and '
                '`strategy="forward-mode"` are not supported together (yet). Please either set '
                '`create_graph=False` or `strategy="reverse-mode"`.')
        if strict:
            raise RuntimeError(
                'torch.autograd.functional.jacobian: `strict=True` and `strategy="forward-mode"` '
                'are not supported together (yet). Please either set `strict=False` or '
                '`strategy="reverse-mode"`.')
        if not vectorize:
            raise NotImplementedError("Computing Jacobian using forward-AD or forward-over-reverse "
                                      "Hessian is only implemented for `vectorize=True`.")
        return _jacfwd(func, inputs)
    with enable_grad():
        in_tuple, inputs = _tupled(inputs, "inputs", "jacobian")
        inputs = _prepare(inputs, create_graph, True)
        out_tuple, outputs = _tupled(func(*inputs), "outputs of the user-provided function",
                                     "jacobian")
        _require_outputs_grad(outputs, strict)
        if vectorize and strict:
            raise RuntimeError("torch.autograd.functional.jacobian: `strict=True` and "
                               "`vectorized=True` are not supported together. Please either set "
                               "`strict=False` or `vectorize=False`.")
        jac = None
        if vectorize and not create_graph:
            jac = _jacrev_batched(outputs, inputs)
        if jac is None:
            jac = _jacrev_rows(outputs, inputs, create_graph, strict)
    return _untupled(_finish(jac, create_graph), (out_tuple, in_tuple))


def _jacrev_rows(outputs: tuple, inputs: tuple, create_graph: bool, strict: bool) -> tuple:
    """One backward per output element, each with a one-hot cotangent (one cached program)."""
    jac = []
    for i, out in enumerate(outputs):
        rows: list[list] = [[] for _ in inputs]
        n = out.numel()
        for r in range(n):
            basis = np.zeros(n, out.dtype.numpy)
            basis[r] = 1
            grads = _grad((out,), inputs, [Tensor(basis.reshape(out.shape))], create_graph,
                          retain_graph=True)
            for j, (g, x) in enumerate(zip(grads, inputs)):
                if g is None:
                    if strict:
                        raise RuntimeError(f"Output {i} of the user-provided function is "
                                           f"independent of input {j}. This is not allowed in "
                                           "strict mode.")
                    g = zeros_like(x.detach())
                elif strict and create_graph and not g.requires_grad:
                    raise RuntimeError(f"The jacobian of the user-provided function is "
                                       f"independent of input {j}. This is not allowed in "
                                       "strict mode when create_graph=True.")
                rows[j].append(g)
        jac.append(tuple(
            stack(rows[j], 0).reshape(out.shape + x.shape) if n else
            zeros(out.shape + x.shape, dtype=x.dtype) for j, x in enumerate(inputs)))
    return tuple(jac)


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
        nodes = engine._collect(roots)
        w = engine._Wiring(nodes, roots, list(inputs))
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
            prog = engine._program_for(nodes, w)
            if prog.host or _state.local.anomaly:
                return None
            saved = (engine._saved_inputs(nodes, w, prog, tensors=False) if w.packed
                     else [engine._saved_value(nodes, f) for f in prog.feeds])
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


# ---- batched runs of one program ----------------------------------------------------------------
_VMAPPED: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()   # holder -> {axes: fn}


def _run_batched(holder, graph, args: list, axes: tuple) -> list[np.ndarray]:
    """Run `graph` once per row of the inputs whose axis is 0 (the others are shared):
    one ``jax.jit(jax.vmap(...))`` call, cached per `holder` (the object owning `graph`), or
    row by row on the interpreter executor; under cross-check mode both, compared."""
    n = next(a.shape[0] for a, ax in zip(args, axes) if ax == 0)
    if n == 0:
        return [np.zeros((0,) + o.shape, o.dtype.numpy) for o in graph.outputs]

    def rows() -> list[np.ndarray]:
        per_row = [interpreter.run(graph, [a[r] if ax == 0 else a for a, ax in zip(args, axes)])
                   for r in range(n)]
        return [np.stack([row[k] for row in per_row]) if n else
                np.zeros((0,) + o.shape, o.dtype.numpy) for k, o in enumerate(graph.outputs)]

    check = crosscheck.enabled()
    if _state.get_executor() == "interpreter" and not check:
        return rows()
    import jax  # jax loads on first use (start-up time)
    fns = _VMAPPED.setdefault(holder, {})
    fn = fns.get(axes)
    if fn is None:
        fn = fns[axes] = jax.jit(jax.vmap(_as_function(graph), in_axes=axes))
    with jax.enable_x64(True):
        outs = [np.asarray(o) for o in fn(*args)]
    _raise_host_error()   # a failed host check (index bounds, gauge_check), as itself
    if check:
        for k, (a, b) in enumerate(zip(rows(), outs)):
            rtol, atol = crosscheck._TOL.get(a.dtype.name, (1e-6, 1e-8))
            if a.shape != b.shape or not np.allclose(a, b, rtol=rtol, atol=atol, equal_nan=True):
                raise RuntimeError(f"crosscheck @{graph.name} (vmapped) output {k}: the "
                                   "interpreter row by row and jax.vmap disagree")
    return outs


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


def _out_ref(o, xs: tuple, w):
    """Where output `o` is in the tape graph: ("n", node, index), ("x", input), or None."""
    if o.grad_fn is not None:
        return ("n", w.pos[id(o.grad_fn)], o._out_index)
    for j, x in enumerate(xs):
        if o is x:
            return ("x", j)
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
            if r[0] == "n":
                ins.append(outs[r[1]][r[2]])
                continue
            var = n.edges[k][0].variable if r[0] == "l" else None
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
            g.outputs.append(outs[ref[1]][ref[2]] if ref[0] == "n" else x_vals[ref[1]])
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
            _JVP_PROGRAMS.popitem(last=False)
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


# ---- second order -------------------------------------------------------------------------------
def _single_output(func, fn: str, strict: bool):
    """`func` checked to return one tensor with one element (then squeezed), as torch."""
    def wrapped(*inp):
        out = func(*inp)
        was, outs = _tupled(out, "outputs of the user-provided function", fn)
        _require_outputs_grad(outs, strict)
        if was or not isinstance(out, Tensor):
            raise RuntimeError(f"The function given to {fn} should return a single Tensor")
        if out.numel() != 1:
            raise RuntimeError(f"The Tensor returned by the function given to {fn} should "
                               "contain a single element")
        return out.reshape(())
    return wrapped


def _check_hessian_grads(jac, strict: bool, what: str) -> None:
    if not strict:
        return
    for i, g in enumerate(jac):
        if g is None:
            raise RuntimeError(f"The output of the user-provided function is independent of "
                               f"input {i}. This is not allowed in strict mode.")
        if not g.requires_grad:
            if what == "hessian":
                raise RuntimeError(f"The hessian of the user-provided function with respect to "
                                   f"input {i} is independent of the input. This is not allowed "
                                   "in strict mode. You should ensure that your function is "
                                   "thrice differentiable and that the hessian depends on the "
                                   "inputs.")
            raise RuntimeError(f"While computing the hessian, found that the jacobian of the "
                               f"user-provided function with respect to input {i} is "
                               "independent of the input. This is not allowed in strict mode. "
                               "You should ensure that your function is twice differentiable "
                               "and that the jacobian depends on the inputs (this would be "
                               "violated by a linear function for example).")


def hessian(func, inputs, create_graph: bool = False, strict: bool = False,
            vectorize: bool = False, outer_jacobian_strategy: str = "reverse-mode"):
    """The Hessian of a scalar function (torch.autograd.functional.hessian).

    The Jacobian (by `jacobian`, ``outer_jacobian_strategy``) of the gradient,
    which is computed in reverse mode with ``create_graph=True``.

    Args:
        func: tensors -> a tensor with a single element.
        inputs: a tensor or a tuple of tensors.
        create_graph, strict, vectorize: as `jacobian`.
        outer_jacobian_strategy: "reverse-mode" or "forward-mode" (forward-over-reverse;
            requires ``vectorize=True``, as torch).
    Returns:
        a tensor of shape ``in.shape + in.shape`` for a single input, else a tuple of
        tuples ``H[i][j]`` of shape ``in_i.shape + in_j.shape``.
    Raises:
        RuntimeError: `func` does not return a single one-element tensor; strict violations.
        ValueError / NotImplementedError: as `jacobian`.
    """
    in_tuple, inputs = _tupled(inputs, "inputs", "hessian")
    if outer_jacobian_strategy not in ("forward-mode", "reverse-mode"):
        raise ValueError(f'hessian: expected outer_jacobian_strategy to be either '
                         f'"forward-mode" or "reverse-mode", got {outer_jacobian_strategy!r}.')
    scalar = _single_output(func, "hessian", strict)

    def gradient(*inp):
        if outer_jacobian_strategy == "forward-mode":
            inp = tuple(t.requires_grad_(True) for t in inp)
        jac = jacobian(scalar, inp, create_graph=True)
        jac = jac if isinstance(jac, tuple) else (jac,)
        _check_hessian_grads(jac, strict, "jacobian")
        return jac

    res = jacobian(gradient, inputs, create_graph=create_graph, strict=strict,
                   vectorize=vectorize, strategy=outer_jacobian_strategy)
    return _untupled(res, (in_tuple, in_tuple))


def vhp(func, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """``(func(inputs), v^T H)`` of a scalar function (torch.autograd.functional.vhp), by
    double backward.

    Args:
        func: tensors -> a tensor with a single element.
        inputs: a tensor or a tuple of tensors.
        v: one tensor per input, of its shape; may be None for a single one-element input.
        create_graph, strict: as `vjp`.
    Returns:
        ``(output, vhp)``; `vhp` nests like `inputs`.
    Raises:
        RuntimeError: `func` does not return one one-element tensor; bad `v`; strict violations.
    """
    return _second_order(func, inputs, v, create_graph, strict, "vhp")


def hvp(func, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """``(func(inputs), H v)`` of a scalar function (torch.autograd.functional.hvp).

    H is symmetric for a twice continuously differentiable function, so this is
    `vhp`'s double backward (torch computes it with one more backward, the
    double-backward trick, to the same result).  Arguments and errors as `vhp`.
    """
    return _second_order(func, inputs, v, create_graph, strict, "hvp")


def _second_order(func, inputs, v, create_graph: bool, strict: bool, fn: str):
    with enable_grad():
        in_tuple, inputs = _tupled(inputs, "inputs", fn)
        inputs = _prepare(inputs, create_graph, True)
        v = _default_v(inputs, "input") if v is None else \
            _check_v(v, inputs, in_tuple, fn)
        out_tuple, outputs = _tupled(func(*inputs), "outputs of the user-provided function", fn)
        _require_outputs_grad(outputs, strict)
        if out_tuple:
            raise RuntimeError(f"The function given to {fn} should return a single Tensor")
        if outputs[0].numel() != 1:
            raise RuntimeError(f"The Tensor returned by the function given to {fn} should "
                               "contain a single element")
        jac = _grad(outputs, inputs, None, True)
        _check_hessian_grads(jac, strict, "jacobian")
    with set_grad_enabled(create_graph or _state.local.grad_enabled):
        used = [g for g in jac if g is not None]
        grads = _grad(tuple(used), inputs, [t for g, t in zip(jac, v) if g is not None],
                      create_graph) if used else [None] * len(inputs)
        res = _zeros_for_none(grads, inputs, strict, create_graph, "hessian")
    return _untupled(_finish(outputs, create_graph), out_tuple), \
        _untupled(_finish(res, create_graph), in_tuple)
