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
  ``jax.vmap`` over the stacked cotangents (the saved values broadcast;
  jacobian_batched.py).
- `jacobian(strategy="forward-mode", vectorize=True)`: the function is
  recorded once, its tape becomes an IR graph, `forward_ad.jvp_graph` turns
  it into one forward-mode program, run under ``jax.vmap`` over the stacked
  basis tangents (jacobian_batched.py).
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

import numpy as np

from .. import _state
from ..tensor import Tensor
from . import forward_ad as fwAD
from .functional_args import (_check_v, _default_v, _finish, _grad, _prepare,
                              _require_outputs_grad, _tupled, _untupled, _zeros_for_none)
from .grad_mode import enable_grad, no_grad, set_grad_enabled
from .engine import implicit_complex_error
from .batched_run import _VMAPPED  # noqa: F401
from .jacobian_batched import _JVP_PROGRAMS, _jacfwd, _jacrev_batched  # noqa: F401
from .._creation import zeros_like
from .._creation import zeros, zeros_like
from .._ops import stack

__all__ = ["vjp", "jvp", "jacobian", "hessian", "hvp", "vhp"]


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
        if v is None:
            _no_implicit_complex(outputs)
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


def _no_implicit_complex(outputs: tuple) -> None:
    """torch's error where it differentiates each output element with an implicit gradient
    (the rows of a reverse-mode Jacobian, ``vjp`` without `v`): a complex output has none."""
    for o in outputs:
        if o.requires_grad and o.dtype.is_complex:
            raise RuntimeError(implicit_complex_error(o))


def _jacrev_rows(outputs: tuple, inputs: tuple, create_graph: bool, strict: bool) -> tuple:
    """One backward per output element, each with a one-hot cotangent (one cached program)."""
    _no_implicit_complex(outputs)   # torch's rows are implicit gradients of each element
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
