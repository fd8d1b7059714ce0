"""IR ops whose backward calls back into Python: hooks and autograd.Function nodes.

The autograd engine marks hooked tensors and nodes, and custom-Function applications, in
the forward graph it builds from the tape; the autodiff pass turns each mark into a
``host_call`` node of the backward program (tracegrad/autograd/hooks.py explains the
mechanism and runs the calls):

- ``tensor_hooks(x)``: identity; its VJP is ``host_call{kind="tensor"|"leaf"}``.
- ``node_hooks(*inputs, *outputs)``: in place of a node with pre/post hooks; its VJP wraps
  the node's own VJP rule in ``host_call{kind="pre"}`` / ``{kind="post"}``.
- ``custom_function(*inputs)``: an autograd.Function; its VJP is ``host_call{kind="custom"}``.
- ``host_call``: the Python call itself (no gradient of its own).

Everything here is IR: attributes are plain data (``node`` is the tape position of the
node, an int), and the Python objects (hooks, the Function's ``backward``) are looked up
when the program runs, in the runtime's current backward run.  These ops are registered
when the IR is imported, whatever the runtime has imported.
"""
from __future__ import annotations

from .. import attr_kinds as K
from ..registry import COMPLEX, INTERNAL, NONDIFF, REQUIRED, defop, get
from .creation import is_zero   # the zeros autodiff makes for an output no gradient reached


HOST = "host_call"


def _never(name):
    """A kernel for an op that only the autograd engine executes (it raises if called)."""
    def kernel(xp, *args, **attrs):
        raise RuntimeError(f"{name}: this node runs only inside the autograd engine (it calls "
                           "Python hooks or an autograd.Function); run the program through "
                           "backward() / autograd.grad()")
    return kernel


def _declared_types(types, *, out_types, **_):
    return tuple(out_types)


def _fit(b, g, x):
    """A gradient at a broadcast shape/other dtype brought to input `x`'s type (as autodiff)."""
    if g.shape != x.shape:
        g = b.sum_to_size(g, x.shape)
    if g.dtype is not x.dtype:
        g = b.convert(g, x.dtype)
    return g


def host(b, values: list, *, kind: str, node: int, index: int = 0, mask: tuple = (),
         out_types: tuple) -> list:
    """Emit a ``host_call`` node; returns its output values."""
    if not out_types:
        return []
    return b.call(HOST, list(values), kind=kind, node=node, index=index, mask=mask,
                  out_types=tuple(out_types))


def _tensor_hooks_vjp(b, ct, x, out, *, node, index, leaf):
    return host(b, [ct], kind="leaf" if leaf else "tensor", node=node, index=index,
                out_types=(x.type,))


def _node_hooks_vjp(b, ct, *values, node, op, op_attrs, out_types, needs, pre, post):
    n_out = len(out_types)
    ins, outs = values[:len(values) - n_out], values[len(values) - n_out:]
    cts = list(ct) if n_out > 1 else [ct]
    defined = tuple(not is_zero(c) for c in cts)   # which outputs a gradient reached
    if pre:
        cts = host(b, cts, kind="pre", node=node, mask=defined,
                   out_types=tuple(c.type for c in cts))
    grads = get(op).vjp(b, cts[0] if n_out == 1 else tuple(cts), *ins, *outs, **dict(op_attrs))
    if not post:
        return grads
    grads = [_fit(b, g, x) if g is not None and need else None
             for g, x, need in zip(grads, ins, needs)]
    mask = tuple(g is not None for g in grads)
    present = [g for g in grads if g is not None]
    # the mask goes on with, per output, whether a gradient reached it (the hook gets None)
    res = host(b, present + cts, kind="post", node=node,
               mask=mask + defined,
               out_types=tuple(g.type for g in present))
    it = iter(res)
    return [next(it) if m else None for m in mask]


TENSOR_HOOKS = defop(
    "tensor_hooks", "input", attrs=(("node", REQUIRED, K.LITERAL), ("index", REQUIRED, K.INT), ("leaf", False, K.BOOL)),
    infer=lambda types, **_: types[0], kernel=lambda xp, x, **_: x, vjp=_tensor_hooks_vjp,
    flags=INTERNAL | COMPLEX,
    ref="torch.Tensor.register_hook (a forward mark; see tracegrad/autograd/hooks.py)")

NODE_HOOKS = defop(
    "node_hooks", "*inputs",
    attrs=(("node", REQUIRED, K.LITERAL), ("op", REQUIRED, K.STRING), ("op_attrs", REQUIRED, K.LITERAL), ("out_types", REQUIRED, K.TYPES),
           ("needs", REQUIRED, K.LITERAL), ("pre", REQUIRED, K.LITERAL), ("post", REQUIRED, K.LITERAL)),
    infer=_declared_types, kernel=_never("node_hooks"), vjp=_node_hooks_vjp,
    flags=INTERNAL | COMPLEX,
    ref="torch.autograd.graph.Node.register_hook (a forward mark; see tracegrad/autograd/hooks.py)")

HOST_CALL = defop(
    HOST, "*inputs",
    attrs=(("kind", REQUIRED, K.STRING), ("node", REQUIRED, K.LITERAL), ("index", 0, K.INT), ("mask", (), K.BOOLS),
           ("out_types", REQUIRED, K.TYPES)),
    infer=_declared_types, kernel=_never(HOST), vjp=NONDIFF, flags=INTERNAL | COMPLEX,
    ref="a Python hook or autograd.Function.backward (see tracegrad/autograd/hooks.py)")


def _custom_vjp(b, ct, *values, name, node, out_types):
    n_out = len(out_types)
    ins = values[:len(values) - n_out]
    cts = list(ct) if n_out > 1 else [ct]
    defined = tuple(t.dtype.is_differentiable and not is_zero(c)
                    for c, t in zip(cts, out_types))
    wanted = [i for i, x in enumerate(ins) if x.dtype.is_differentiable]
    res = host(b, [c for c, d in zip(cts, defined) if d], kind="custom", node=node, mask=defined,
               out_types=tuple(ins[i].type for i in wanted))
    grads = [None] * len(ins)
    for i, r in zip(wanted, res):
        grads[i] = r
    return grads


CUSTOM_FUNCTION = defop(
    "custom_function", "*inputs", attrs=(("name", REQUIRED, K.STRING), ("node", REQUIRED, K.LITERAL),
                                         ("out_types", REQUIRED, K.TYPES)),
    infer=lambda types, *, out_types, **_: tuple(out_types), kernel=_never("custom_function"),
    vjp=_custom_vjp, flags=INTERNAL | COMPLEX, ref="torch.autograd.Function")
