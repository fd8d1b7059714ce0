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
them, which is how ``grad(grad(f))`` works here).  ``jacrev``/``jacfwd``/``hessian``
are `tg.autograd.functional`'s jacobian and hessian under torch.func's signatures.

``vmap`` is a loop, not a batching transform: it calls the function once per index of the
mapped dim and stacks the results (torch.func.vmap's semantics, in_dims/out_dims/randomness
included, at the cost of one call per element; tracegrad has no batching rules for its
eager ops; the batched runs in autograd/batched_run.py batch whole backward programs under
jax.vmap, which an arbitrary Python function is not).
"""
from __future__ import annotations

from ._creation import get_rng_state, set_rng_state, zeros_like
from ._ops import stack
from .autograd import forward_ad as fwAD
from .autograd import functional as _functional
from .autograd.engine import grad as autograd_grad
from .autograd.grad_mode import enable_grad
from .tensor import Tensor

__all__ = ["grad", "hessian", "jacfwd", "jacrev", "jvp", "vjp", "vmap"]


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


def _argnums(argnums, args: tuple, fn: str) -> tuple:
    """`argnums` as a tuple, each naming a tensor among `args` (RuntimeError naming `fn`)."""
    nums = argnums if isinstance(argnums, tuple) else (argnums,)
    for n in nums:
        if not (-len(args) <= n < len(args)) or not isinstance(args[n], Tensor):
            raise RuntimeError(f"{fn}: argnums {n} does not name a tensor among the "
                               f"{len(args)} arguments")
    return nums


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
        nums = _argnums(argnums, args, "grad(f)(*args)")
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


# ---- jacrev / jacfwd / hessian ------------------------------------------------------------
def _jacobian_transform(func, argnums, has_aux: bool, fn: str, compute):
    def wrapper(*args):
        nums = _argnums(argnums, args, fn)
        aux = []

        def f(*chosen):
            xs = list(args)
            for n, x in zip(nums, chosen):
                xs[n] = x
            out, a = _split_aux(func(*xs), has_aux, fn)
            if not aux:
                aux.append(a)
            if isinstance(out, list):
                out = tuple(out)
            _leaves(out, fn, "f")
            return out
        inputs = tuple(args[n] for n in nums)
        outer = any(x.requires_grad for x in inputs)
        jac = compute(f, inputs if isinstance(argnums, tuple) else inputs[0], outer)
        jac = _plain(jac, outer)
        return (jac, _plain(aux[0], outer)) if has_aux else jac
    return wrapper


def jacrev(func, argnums: int | tuple[int, ...] = 0, *, has_aux: bool = False,
           chunk_size: int | None = None, _preallocate_and_copy: bool = False):
    """The Jacobian of `func` by reverse mode (torch.func.jacrev): a function of `func`'s
    arguments returning, per output, ``out.shape + arg.shape`` tensors (a tuple over
    `argnums` when it is a tuple; a tuple over outputs when `func` returns one).

    `chunk_size` is accepted for torch's signature (rows are computed one backward each).
    Raises:
        RuntimeError: `argnums` names no tensor argument; `func` returns a non-tensor.
    """
    return _jacobian_transform(func, argnums, has_aux, "jacrev(f, argnums)(*args)",
                               lambda f, xs, outer: _functional.jacobian(f, xs,
                                                                         create_graph=outer))


def jacfwd(func, argnums: int | tuple[int, ...] = 0, has_aux: bool = False, *,
           randomness: str = "error"):
    """The Jacobian of `func` by forward mode (torch.func.jacfwd): column by column with
    forward-mode AD; the same structure as `jacrev`.  `randomness` is accepted for
    torch's signature."""
    return _jacobian_transform(
        func, argnums, has_aux, "jacfwd(f, argnums)(*args)",
        lambda f, xs, outer: _functional.jacobian(f, xs, vectorize=True,
                                                  strategy="forward-mode"))


def hessian(func, argnums: int | tuple[int, ...] = 0):
    """The Hessian of a scalar `func` (torch.func.hessian, which is
    ``jacfwd(jacrev(func))``): ``arg.shape + arg.shape`` per argument pair; a tuple of
    tuples when `argnums` is a tuple."""
    return _jacobian_transform(func, argnums, False, "hessian(f, argnums)(*args)",
                               lambda f, xs, outer: _functional.hessian(f, xs,
                                                                        create_graph=outer))


# ---- vmap ---------------------------------------------------------------------------------
def _map_dims(tree, dims, fn: str):
    """``[(tensor, dim or None)]`` for the leaves of `tree` under the in_dims `dims` (an int
    or None for the whole subtree, else the subtree's own structure)."""
    if isinstance(tree, Tensor):
        if dims is not None and not isinstance(dims, int):
            raise ValueError(f"{fn}: in_dim for a tensor must be an int or None, got {dims!r}")
        return [(tree, dims)]
    if isinstance(tree, (tuple, list)):
        if isinstance(dims, (tuple, list)):
            if len(dims) != len(tree):
                raise ValueError(f"{fn}: in_dims is not compatible with the structure of "
                                 f"`inputs`: {len(dims)} in_dims for {len(tree)} values")
            return [p for x, d in zip(tree, dims) for p in _map_dims(x, d, fn)]
        return [p for x in tree for p in _map_dims(x, dims, fn)]
    if isinstance(tree, dict):
        if isinstance(dims, dict):
            return [p for k in tree for p in _map_dims(tree[k], dims.get(k), fn)]
        return [p for k in tree for p in _map_dims(tree[k], dims, fn)]
    return [(tree, None)]   # a Python value: passed to every call as it is


def _rebuild_any(tree, leaves):
    if isinstance(tree, Tensor) or not isinstance(tree, (tuple, list, dict)):
        return next(leaves)
    if isinstance(tree, (tuple, list)):
        return type(tree)(_rebuild_any(x, leaves) for x in tree)
    return {k: _rebuild_any(v, leaves) for k, v in tree.items()}


def vmap(func, in_dims=0, out_dims=0, randomness: str = "error", *,
         chunk_size: int | None = None):
    """`func` mapped over a dim of its inputs (torch.func.vmap), as a loop.

    ``vmap(f, in_dims, out_dims)(*args)`` calls ``f`` once per index ``i`` of the mapped
    dim, with each mapped tensor ``x`` replaced by ``x.select(in_dim, i)`` (an ``in_dim``
    of None passes the argument whole), and stacks each output tensor along ``out_dims``.
    Not vectorized: one call per element, so ``f`` may use anything (Python control flow
    on values included, which torch's vmap refuses); gradients flow through the slices and
    the stack.  ``in_dims``: an int or None for every argument, or a tuple with one entry per
    argument (nested as the argument for tuples/lists/dicts).  ``out_dims``: an int, or a
    tuple with one per output.  ``randomness``: "error" (torch's RuntimeError when ``f``
    draws random numbers), "different" (each call draws its own) or "same" (each call
    starts from the same generator state).  ``chunk_size`` is accepted and changes nothing.

    Raises:
        ValueError: mapped sizes differ, nothing is mapped, an in_dim is out of range, or a
            bad `randomness` (torch's messages).
        RuntimeError: ``randomness="error"`` and ``f`` drew random numbers.
    """
    if randomness not in ("error", "different", "same"):
        raise RuntimeError(f"Only allowed values for randomness are 'error', 'different', or "
                           f"'same'. Got {randomness}")
    name = getattr(func, "__name__", repr(func))

    def wrapped(*args, **kwargs):
        fn = f"vmap({name}, in_dims={in_dims}, ...)(<inputs>)"
        if isinstance(in_dims, (tuple, list)) and len(in_dims) != len(args):
            raise ValueError(f"{fn}: in_dims is not compatible with the structure of `inputs`. "
                             f"in_dims has structure {len(in_dims)} but inputs has structure "
                             f"{len(args)}.")
        pairs = _map_dims(args, in_dims if isinstance(in_dims, (tuple, list))
                          else (in_dims,) * len(args), fn)
        sizes = []
        for x, d in pairs:
            if d is None or not isinstance(x, Tensor):
                continue
            if not -x.ndim <= d < max(x.ndim, 1) or x.ndim == 0:
                raise ValueError(f"{fn}: Got in_dim={d} for an input but the input is of type "
                                 f"Tensor with {x.ndim} dims. We cannot vmap over dim {d} for "
                                 f"this input")
            sizes.append(x.shape[d])
        if not sizes:
            raise ValueError(f"{fn}: There are no tensors to vmap over. in_dims={in_dims} "
                             "maps no dimension of any tensor input")
        if len(set(sizes)) != 1:
            raise ValueError(f"{fn}: Expected all tensors to have the same size in the mapped "
                             f"dimension, got sizes {sizes} for the mapped dimension")
        state = get_rng_state() if randomness != "different" else None
        results = []
        for i in range(sizes[0]):
            if randomness == "same":
                set_rng_state(state)
            sliced = [x.select(d, i) if d is not None and isinstance(x, Tensor) else x
                      for x, d in pairs]
            results.append(func(*_rebuild_any(args, iter(sliced)), **kwargs))
            if randomness == "error" and i == 0 and \
                    not bool((get_rng_state() == state).all()):
                set_rng_state(state)   # as if nothing had been drawn
                raise RuntimeError("vmap: called random operation while in randomness error "
                                   "mode. Please either use the 'same' or 'different' "
                                   "randomness flags on vmap or perform the randomness "
                                   "operation out of vmap")
        first = results[0]
        outs = _leaves(first, "vmap", "f")
        dims = out_dims if isinstance(out_dims, (tuple, list)) else (out_dims,) * len(outs)
        if len(dims) != len(outs):
            raise ValueError(f"{fn}: out_dims is not compatible with the structure of "
                             f"`outputs`: {len(dims)} out_dims for {len(outs)} outputs")
        per_call = [_leaves(r, "vmap", "f") for r in results]
        stacked = [stack([c[k] for c in per_call], dim=d) for k, d in enumerate(dims)]
        return _rebuild(first, iter(stacked))
    return wrapped
