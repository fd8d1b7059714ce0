"""Function transforms in the style of torch.func: `jvp`, `vjp`, `grad`.

    out, tangent = tg.func.jvp(f, (x,), (v,))       # forward mode: J_f(x) @ v
    out, pullback = tg.func.vjp(f, x); (g,) = pullback(u)
    g = tg.func.grad(loss)(w)

They take and return tensors, tuples/lists and dicts of tensors (the output
pytree keeps its structure).  `jvp` runs forward-mode AD
(`tg.autograd.forward_ad`), the others the reverse engine.  Unlike
torch.func they are not "functorch levels": `jvp` cannot be nested in `jvp`
(one dual level at a time, as torch.autograd.forward_ad), and `vjp`/`grad`
record on the ordinary tape (they compose with `tg.autograd.grad` around
them, which is how ``grad(grad(f))`` works here).  No ``vmap``.
"""
from __future__ import annotations

from ._creation import zeros_like
from .autograd import forward_ad as fwAD
from .autograd.engine import grad as autograd_grad
from .autograd.grad_mode import enable_grad
from .tensor import Tensor

__all__ = ["grad", "jvp", "vjp"]


def _leaves(tree, fn: str, what: str) -> list:
    """The tensors of a pytree (tensor, tuple/list, dict), in order; RuntimeError otherwise."""
    if isinstance(tree, Tensor):
        return [tree]
    if isinstance(tree, (tuple, list)):
        return [t for x in tree for t in _leaves(x, fn, what)]
    if isinstance(tree, dict):
        return [t for k in tree for t in _leaves(tree[k], fn, what)]
    raise RuntimeError(f"{fn}: expected {what} to return only tensors, got unsupported type "
                       f"{type(tree)}")


def _rebuild(tree, leaves):
    """`tree` with its tensors replaced, in order, by `leaves` (an iterator)."""
    if isinstance(tree, Tensor):
        return next(leaves)
    if isinstance(tree, (tuple, list)):
        return type(tree)(_rebuild(x, leaves) for x in tree)
    return {k: _rebuild(v, leaves) for k, v in tree.items()}


def _structure(tree) -> object:
    if isinstance(tree, Tensor):
        return "*"
    if isinstance(tree, (tuple, list)):
        return (type(tree).__name__, tuple(_structure(x) for x in tree))
    if isinstance(tree, dict):
        return ("dict", tuple((k, _structure(v)) for k, v in tree.items()))
    return type(tree).__name__


def _plain(tree, outer: bool):
    """The pytree's tensors cut from the graph this transform recorded (unless an outer
    differentiation needs it), as torch.func returns unwrapped tensors; non-tensors as they are."""
    if outer or tree is None:
        return tree
    if isinstance(tree, Tensor):
        return tree.detach()
    if isinstance(tree, (tuple, list)):
        return type(tree)(_plain(x, False) for x in tree)
    if isinstance(tree, dict):
        return {k: _plain(v, False) for k, v in tree.items()}
    return tree


def _split_aux(out, has_aux: bool, fn: str):
    if not has_aux:
        return out, None
    if not (isinstance(out, tuple) and len(out) == 2):
        raise RuntimeError(f"{fn}: output of function f should be a tuple: (output, aux) if "
                           "has_aux is True")
    return out


def jvp(func, primals: tuple, tangents: tuple, *, strict: bool = False, has_aux: bool = False):
    """``(func(*primals), J_func(primals) @ tangents)`` by forward-mode AD (torch.func.jvp).

    Args:
        func: tensors -> a pytree of tensors (with ``has_aux``: ``(output, aux)``).
        primals: a tuple of tensors (or pytrees of tensors): the arguments of `func`.
        tangents: the same structure, one tangent per primal tensor, of its shape.
        strict: accepted for torch's signature; it changes nothing here.
    Returns:
        ``(output, output tangents)`` (plus ``aux``), the tangents in the output's
        structure (zeros where an output does not depend on the primals).
    Raises:
        RuntimeError: `primals` is not a tuple; `tangents` has another structure or a
            shape differs (torch's messages); `func` returns a non-tensor; called inside
            another `jvp` or dual level (nested forward mode AD is not supported).
    """
    fn = "jvp(f, primals, tangents)"
    if not isinstance(primals, tuple):
        raise RuntimeError(f"{fn}: Expected primals to be a tuple. E.g. it should be valid to "
                           "call f(*primals).")
    if _structure(primals) != _structure(tangents):
        raise RuntimeError(f"{fn}: Expected primals and tangents to have the same python "
                           "structure. For example, if primals is a tuple of 3 tensors, tangents "
                           f"also must be. Got primals with structure {_structure(primals)} and "
                           f"tangents with structure {_structure(tangents)}")
    with fwAD.dual_level():
        duals = [fwAD.make_dual(p, t) for p, t in zip(_leaves(primals, fn, "primals"),
                                                      _leaves(tangents, fn, "tangents"))]
        out, aux = _split_aux(func(*_rebuild(primals, iter(duals))), has_aux, fn)
        outs = _leaves(out, fn, "f(*primals)")
        unpacked = [fwAD.unpack_dual(o) for o in outs]
    primal_out = _rebuild(out, iter(p for p, _ in unpacked))
    tangent_out = _rebuild(out, iter(t if t is not None else zeros_like(p)
                                     for p, t in unpacked))
    return (primal_out, tangent_out, aux) if has_aux else (primal_out, tangent_out)


def _inputs(primals) -> list:
    """Tensors to differentiate at: a view of one that already requires grad (so an outer
    `tg.autograd.grad` still sees through), else a detached copy that requires grad."""
    return [p.view_as(p) if p.requires_grad else p.detach().requires_grad_(True)
            for p in primals]


def vjp(func, *primals, has_aux: bool = False):
    """``(func(*primals), vjp_fn)`` with ``vjp_fn(cotangents) -> one gradient per primal``
    (torch.func.vjp).

    Args:
        func: tensors -> a pytree of tensors (with ``has_aux``: ``(output, aux)``).
        primals: tensors.
    Returns:
        ``(output, vjp_fn)`` (plus ``aux``).  ``vjp_fn`` takes cotangents in the
        output's structure and returns a tuple with one tensor per primal (zeros
        where the output does not depend on it); it may be called more than once.
    Raises:
        RuntimeError: non-tensor primals or outputs; a cotangent of another shape.
    """
    fn = "vjp(f, *primals)"
    for i, p in enumerate(primals):
        if not isinstance(p, Tensor):
            raise RuntimeError(f"{fn}: expected primals to be tensors, got {type(p)} at {i}")
    xs = _inputs(primals)
    with enable_grad():
        out, aux = _split_aux(func(*xs), has_aux, fn)
    outs = _leaves(out, fn, "f(*primals)")
    outer = any(p.requires_grad for p in primals)

    def vjp_fn(cotangents):
        cts = _leaves(cotangents, "vjp_fn", "cotangents")
        if len(cts) != len(outs):
            raise RuntimeError(f"vjp_fn: expected {len(outs)} cotangents (the output's "
                               f"structure), got {len(cts)}")
        keep = [k for k, o in enumerate(outs) if o.requires_grad]
        if not keep:
            return tuple(zeros_like(p) for p in primals)
        grads = autograd_grad([outs[k] for k in keep], xs, [cts[k] for k in keep],
                              retain_graph=True, create_graph=outer, allow_unused=True)
        return tuple(g if g is not None else zeros_like(p) for g, p in zip(grads, primals))

    out_plain = _plain(out, outer)
    return (out_plain, vjp_fn, _plain(aux, outer)) if has_aux else (out_plain, vjp_fn)


def grad(func, argnums: int | tuple[int, ...] = 0, has_aux: bool = False):
    """The gradient function of a scalar `func` (torch.func.grad).

    Args:
        func: tensors -> a 0-d tensor (with ``has_aux``: ``(output, aux)``).
        argnums: which positional argument(s) to differentiate.
    Returns:
        a function of `func`'s arguments returning the gradient (a tuple of them
        when `argnums` is a tuple), plus ``aux`` with ``has_aux``.
    Raises:
        RuntimeError: the output is not a 0-d tensor (torch's message).
    """
    def grad_fn(*args):
        nums = argnums if isinstance(argnums, tuple) else (argnums,)
        for n in nums:
            if not (-len(args) <= n < len(args)) or not isinstance(args[n], Tensor):
                raise RuntimeError(f"grad(f)(*args): argnums {n} does not name a tensor among "
                                   f"the {len(args)} arguments")
        xs = list(args)
        chosen = _inputs([args[n] for n in nums])
        for n, x in zip(nums, chosen):
            xs[n] = x
        with enable_grad():
            out, aux = _split_aux(func(*xs), has_aux, "grad(f)(*args)")
        if not isinstance(out, Tensor) or out.ndim != 0:
            what = f"tensor with {out.ndim} dims" if isinstance(out, Tensor) else str(type(out))
            raise RuntimeError(f"grad_and_value(f)(*args): Expected f(*args) to return a scalar "
                               f"Tensor, got {what}. Maybe you wanted to use the vjp or jacrev "
                               "APIs instead?")
        outer = any(args[n].requires_grad for n in nums)
        if out.requires_grad:
            grads = autograd_grad([out], chosen, create_graph=outer, allow_unused=True)
        else:
            grads = [None] * len(chosen)
        grads = tuple(g if g is not None else zeros_like(args[n]) for g, n in zip(grads, nums))
        res = grads if isinstance(argnums, tuple) else grads[0]
        return (res, _plain(aux, outer)) if has_aux else res
    return grad_fn
