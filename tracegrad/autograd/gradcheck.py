"""Finite-difference checks of gradients: `gradcheck` and `gradgradcheck`.

Follows ``torch.autograd.gradcheck`` / ``gradgradcheck``: the Jacobian of
``func`` with respect to every input that requires grad is computed twice,
numerically by central differences (each input perturbed by ``±eps``) and
analytically through `tracegrad.autograd.grad` (one VJP per output element),
and the two must satisfy ``|analytical - numerical| <= atol + rtol * |numerical|``.

``fast_mode=True`` (torch's fast gradcheck, pytorch/pytorch#53876) compares
one number per (input, output) pair instead of whole Jacobians: ``v^T J u``
for random unit vectors ``u`` (per input) and ``v`` (per output), with the
numerical side from one central difference along ``u`` and the analytical
side from one VJP with cotangent ``v``; ``atol`` is scaled by
``sum(u) * sum(v)`` as in torch.  A failure recomputes the pair in slow mode
for the message.

Perturbations replace the input tensor's value for the duration of one call
(never mutate it), so saved values of graphs recorded earlier stay intact.
"""
from __future__ import annotations

import warnings
from contextlib import contextmanager
from typing import Callable

import numpy as np

from .. import _state
from ..tensor import Tensor
from . import gradcheck_modes
from .engine import grad as _grad
from .._ops import complex as _complex

__all__ = ["GradcheckError", "gradcheck", "gradgradcheck"]


class GradcheckError(RuntimeError):
    """`gradcheck` / `gradgradcheck` found analytical and numerical gradients that differ.

    Cause: the VJP rule of some op in ``func`` is wrong, or the check ran at a
    point where ``func`` is not differentiable (a kink, a tie), or in a
    precision too low for ``eps`` (use float64 inputs).
    Fix: compare the two Jacobians in the message; pass ``raise_exception=False``
    to get ``False`` instead of this error.  Follows torch.autograd.GradcheckError.
    """


_UNDEFINED_HINT = ("(a VJP rule receives zero cotangents for the outputs of a multi-output op "
                   "that nothing used; see the op registry's `vjp` contract in ir/registry.py)")

_FAST_FAIL_SLOW_OK = (
    "Fast gradcheck failed but element-wise differences are small. This means that the test "
    "might've passed in slow_mode! Call gradcheck/gradgradcheck with fast_mode=False to check "
    "the whole Jacobian.")


# ---- small helpers ------------------------------------------------------------------------
def _as_tuple(x) -> tuple:
    if isinstance(x, tuple):
        return x
    if isinstance(x, list):
        return tuple(x)
    return (x,)


def _show(a: np.ndarray) -> str:
    """An array printed as torch prints a tensor (gradcheck messages)."""
    return repr(Tensor(np.asarray(a, dtype=np.float64)))


def _allclose(a, n, rtol: float, atol: float) -> bool:
    """torch.allclose(a, n): ``|a - n| <= atol + rtol * |n|`` elementwise (NaN never close)."""
    a, n = np.asarray(a, np.float64), np.asarray(n, np.float64)
    return bool(np.all(np.abs(a - n) <= atol + rtol * np.abs(n)))


def _check_inputs(inputs: tuple) -> list[int]:
    """Positions of the inputs that require grad; warns as torch for non-float64 ones."""
    diff = []
    for idx, x in enumerate(inputs):
        if isinstance(x, Tensor) and x.requires_grad:
            if x.dtype.name != "float64":
                warnings.warn(f"Input #{idx} requires gradient and is not a double precision "
                              "floating point. This check will likely fail if all the inputs "
                              "are not of double precision floating point.", UserWarning,
                              stacklevel=3)
            diff.append(idx)
    if not diff:
        raise ValueError("gradcheck expects at least one input tensor to require gradient, but "
                         "none of them have requires_grad=True.")
    return diff


def _differentiable(outputs: tuple) -> list[int]:
    """Positions of the outputs that require grad (torch's ``_differentiable_outputs``)."""
    return [k for k, o in enumerate(outputs) if isinstance(o, Tensor) and o.requires_grad]


def _realified(func: Callable, inputs: tuple) -> tuple[Callable, tuple, Callable]:
    """`func` as a function of real tensors only (unchanged where nothing is complex): each
    complex input that requires grad becomes two float leaves (its real and imaginary
    parts, recombined with `tg.complex` inside), and each complex output its ``.real`` and
    ``.imag``.  The Jacobian of that real map is the complex function's (as a map of R^2n),
    so checking it checks the complex VJP (torch's conjugate convention) and JVP; torch's
    gradcheck checks the same Wirtinger derivatives with complex cotangents instead."""
    split = [isinstance(x, Tensor) and x.requires_grad and x.dtype.is_complex for x in inputs]
    flat, in_names, out_names = [], [], []
    for i, (x, s) in enumerate(zip(inputs, split)):
        in_names += [f"the real part of input {i}", f"the imaginary part of input {i}"] if s \
            else [f"input {i}"]
        if s:
            parts = x.detach()
            flat += [Tensor(np.array(parts._data.real), requires_grad=True),   # copies, 0-d kept
                     Tensor(np.array(parts._data.imag), requires_grad=True)]
        else:
            flat.append(x)

    def real_func(*args):
        args, rebuilt = list(args), []
        for s in split:
            rebuilt.append(_complex(args.pop(0), args.pop(0)) if s else args.pop(0))
        outs = func(*rebuilt)
        single = not isinstance(outs, (tuple, list))
        outs = (outs,) if single else tuple(outs)
        if not any(isinstance(o, Tensor) and o.dtype.is_complex for o in outs):
            return outs[0] if single else outs
        real, names = [], []
        for k, o in enumerate(outs):
            cx = isinstance(o, Tensor) and o.dtype.is_complex
            real += [o.real, o.imag] if cx else [o]
            names += [f"the real part of output {k}", f"the imaginary part of output {k}"] \
                if cx else [f"output {k}"]
        out_names[:] = names
        return tuple(real)

    def explain(message: str) -> str:
        """A failure message with the real-pair positions named as the user's."""
        if not any(split) and not out_names:
            return message
        return (message + "\n(complex numbers are checked as pairs of real tensors; the "
                f"inputs are {', '.join(in_names)}; the outputs "
                f"{', '.join(out_names) or 'as returned'})")
    return real_func, tuple(flat), explain


@contextmanager
def _perturbed(t: Tensor, delta: np.ndarray):
    """`t` holds ``value + delta`` (in its own dtype) inside the block, its value after."""
    orig = t._data
    t._data = np.asarray(orig + delta.reshape(orig.shape)).astype(orig.dtype)
    try:
        yield
    finally:
        t._data = orig


class _Problem:
    """One gradcheck problem: `func`, its inputs, and which inputs and outputs are checked."""

    def __init__(self, func: Callable, inputs: tuple, eps: float):
        self.func = func
        self.inputs = inputs
        self.eps = eps
        self.diff_in = _check_inputs(inputs)
        self.outputs = _as_tuple(func(*inputs))
        self.diff_out = _differentiable(self.outputs)

    @property
    def wrt(self) -> list[Tensor]:
        return [self.inputs[i] for i in self.diff_in]

    def evaluate(self) -> list[np.ndarray]:
        """Flattened float64 values of every output `func` returns (checked ones first)."""
        outs = _as_tuple(self.func(*self.inputs))
        vals = []
        for k, ref in enumerate(self.outputs):
            if not isinstance(ref, Tensor):
                continue
            o = outs[k]
            if o.shape != ref.shape or o.dtype is not ref.dtype:
                raise GradcheckError(
                    f"Expected `func` to return outputs with the same shape and dtype when "
                    f"inputs are perturbed by {self.eps}, but output {k} changed from "
                    f"{ref._type} to {o._type}.")
            vals.append(np.array(o._data, dtype=np.float64).reshape(-1))
        return vals

    def tensor_outputs(self) -> list[int]:
        return [k for k, o in enumerate(self.outputs) if isinstance(o, Tensor)]

    def directional(self, i: int, direction: np.ndarray) -> list[np.ndarray]:
        """Central difference of every tensor output along `direction` of input ``diff_in[i]``."""
        t = self.inputs[self.diff_in[i]]
        step = self.eps * np.asarray(direction, np.float64)
        with _perturbed(t, -step):
            lo = self.evaluate()
        with _perturbed(t, step):
            hi = self.evaluate()
        return [(b - a) / (2 * self.eps) for a, b in zip(lo, hi)]

    def vjp(self, k: int, cotangent: np.ndarray, check_dtypes: bool) -> list[np.ndarray]:
        """``cotangent^T J`` of output `k` for every checked input, flattened float64."""
        out = self.outputs[k]
        ct = Tensor(np.asarray(cotangent, dtype=out.dtype.numpy).reshape(out.shape))
        grads = _grad([out], self.wrt, [ct], retain_graph=True, allow_unused=True)
        rows = []
        for x, g in zip(self.wrt, grads):
            if g is None:
                rows.append(np.zeros(x.numel()))
                continue
            if g.shape != x.shape:
                raise GradcheckError("Analytical gradient has incorrect size: "
                                     f"{g._type} for an input {x._type}")
            if check_dtypes and g.dtype is not x.dtype:
                raise GradcheckError(f"Gradient has dtype mismatch: {g._type} for an input "
                                     f"{x._type}")
            rows.append(np.array(g._data, dtype=np.float64).reshape(-1))
        return rows


def _basis(n: int, e: int) -> np.ndarray:
    v = np.zeros(n)
    v[e] = 1.0
    return v


def _numerical_jacobian(p: _Problem, i: int) -> list[np.ndarray]:
    """Per checked output, d output / d input ``diff_in[i]`` as ``(numel_in, numel_out)``."""
    cols = [p.directional(i, _basis(p.wrt[i].numel(), e)) for e in range(p.wrt[i].numel())]
    tensor_outs = p.tensor_outputs()
    out = []
    for k in p.diff_out:
        j = tensor_outs.index(k)
        m = p.outputs[k].numel()
        out.append(np.stack([c[j] for c in cols]) if cols else np.zeros((0, m)))
    return out


def _analytical_jacobian(p: _Problem, k: int, check_dtypes: bool) -> list[np.ndarray]:
    """Per checked input, the Jacobian of output `k` from one VJP per output element."""
    m = p.outputs[k].numel()
    rows = [p.vjp(k, _basis(m, e), check_dtypes) for e in range(m)]
    return [np.stack([r[i] for r in rows], axis=1) if rows else np.zeros((x.numel(), 0))
            for i, x in enumerate(p.wrt)]


def _check_reentrant(first: list[np.ndarray], second: list[np.ndarray], nondet_tol: float):
    for a, b in zip(first, second):
        if a.size and np.max(np.abs(a - b)) > nondet_tol:
            raise GradcheckError(
                "Backward is not reentrant, i.e., running backward with same input and "
                "grad_output multiple times gives different values, although analytical "
                f"gradient matches numerical gradient. The tolerance for nondeterminism was "
                f"{nondet_tol}.")


def _mismatch(k_pos: int, i: int, numerical, analytical) -> str:
    return (f"Jacobian mismatch for output {k_pos:d} with respect to input {i:d},\n"
            f"numerical:{_show(numerical)}\nanalytical:{_show(analytical)}\n")


# ---- the checks ---------------------------------------------------------------------------
def _no_differentiable_outputs(p: _Problem, fast_mode: bool, rng) -> None:
    """Without differentiable outputs, the numerical Jacobian must be zero (torch)."""
    for i, x in enumerate(p.wrt):
        if fast_mode:
            derivs = p.directional(i, _unit(rng, x.numel()))
        else:
            derivs = [d for e in range(x.numel()) for d in p.directional(i, _basis(x.numel(), e))]
        if any(np.any(d != 0) for d in derivs):
            raise GradcheckError("Numerical gradient for function expected to be zero")


def _slow(p: _Problem, rtol, atol, nondet_tol, check_dtypes) -> None:
    numerical = [_numerical_jacobian(p, i) for i in range(len(p.diff_in))]
    for pos, k in enumerate(p.diff_out):
        analytical = _analytical_jacobian(p, k, check_dtypes)
        _check_reentrant(analytical, _analytical_jacobian(p, k, check_dtypes), nondet_tol)
        for i, a in enumerate(analytical):
            n = numerical[i][pos]
            if not _allclose(a, n, rtol, atol):
                raise GradcheckError(_mismatch(pos, i, n, a))


def _unit(rng, n: int) -> np.ndarray:
    """A random vector with entries in [0, 1) and unit norm (torch's ``_vec_from_tensor``)."""
    v = rng.random(n)
    norm = np.linalg.norm(v)
    return v / norm if norm > 0 else v


def _fast(p: _Problem, rtol, atol, nondet_tol, check_dtypes, rng) -> None:
    us = [_unit(rng, x.numel()) for x in p.wrt]
    vs = [_unit(rng, p.outputs[k].numel()) for k in p.diff_out]
    tensor_outs = p.tensor_outputs()
    numerical = []                      # [input][output] = v^T (J u), by central differences
    for i, u in enumerate(us):
        ju = p.directional(i, u)
        numerical.append([float(np.dot(v, ju[tensor_outs.index(k)]))
                          for k, v in zip(p.diff_out, vs)])
    for pos, (k, v) in enumerate(zip(p.diff_out, vs)):
        vj = p.vjp(k, v, check_dtypes)
        _check_reentrant(vj, p.vjp(k, v, check_dtypes), nondet_tol)
        for i, (row, u) in enumerate(zip(vj, us)):
            a, n = float(np.dot(row, u)), numerical[i][pos]
            scaled_atol = atol * float(np.sum(u)) * float(np.sum(v))
            if not _allclose(a, n, rtol, scaled_atol):
                raise GradcheckError(_mismatch(pos, i, n, a) + _slow_report(p, i, pos, rtol, atol))


def _slow_report(p: _Problem, i: int, pos: int, rtol: float, atol: float) -> str:
    """The slow-mode Jacobians of one (input, output) pair, for a fast-mode failure message."""
    numerical = _numerical_jacobian(p, i)[pos]
    analytical = _analytical_jacobian(p, p.diff_out[pos], False)[i]
    diff = float(np.max(np.abs(numerical - analytical))) if numerical.size else 0.0
    msg = ("\nThe above quantities relating the numerical and analytical jacobians are computed "
           "\nin fast mode. Below, we recompute numerical and analytical jacobians in slow mode:"
           f"\n\nNumerical:\n {_show(numerical)}\nAnalytical:\n{_show(analytical)}\n\n"
           f"The max per-element difference (slow mode) is: {diff}.\n")
    if _allclose(analytical, numerical, rtol, atol):
        msg += _FAST_FAIL_SLOW_OK
    return msg


def _zero_cotangents_give_zero(p: _Problem, roots: list[int], what: str) -> None:
    outs = [p.outputs[k] for k in roots]
    cts = [Tensor(np.zeros(o.shape, o.dtype.numpy)) for o in outs]
    grads = _grad(outs, p.wrt, cts, retain_graph=True, allow_unused=True)
    for x, g in zip(p.wrt, grads):
        if g is None:
            continue
        if np.any(np.asarray(g._data) != 0):
            raise GradcheckError(what)
        if g.dtype is not x.dtype:
            raise GradcheckError(f"grad is incorrect type: {g._type} for an input {x._type}")
        if g.shape != x.shape:
            raise GradcheckError(f"grad is incorrect size: {g._type} for an input {x._type}")


def _undefined_grads(p: _Problem) -> None:
    """torch's undefined-output-gradient check: leaving any output out of the backward (its
    cotangent is then zero) must work and give zero gradients for zero cotangents."""
    if len(p.diff_out) < 2:
        return
    for left_out in p.diff_out:
        roots = [k for k in p.diff_out if k != left_out]
        try:
            _zero_cotangents_give_zero(
                p, roots, "Expected all input grads to be undefined or zero when all output "
                "grads are undefined or zero. " + _UNDEFINED_HINT)
        except GradcheckError:
            raise
        except RuntimeError as e:
            raise GradcheckError("Expected backward function to handle undefined output grads. "
                                 + _UNDEFINED_HINT) from e


def gradcheck(func: Callable, inputs, *, eps: float = 1e-6, atol: float = 1e-5,
              rtol: float = 1e-3, raise_exception: bool = True, nondet_tol: float = 0.0,
              check_undefined_grad: bool = True, check_grad_dtypes: bool = False,
              check_batched_grad: bool = False, check_batched_forward_grad: bool = False,
              check_forward_ad: bool = False, check_backward_ad: bool = True,
              fast_mode: bool = False, masked: bool | None = None) -> bool:
    """Check the gradients of `func` against central finite differences.

    Args:
        func: takes `inputs` (tensors and other values) and returns a Tensor or
            a tuple/list of Tensors; outputs that require grad are checked.
        inputs: a Tensor or a tuple of arguments; tensors with
            ``requires_grad=True`` (float64, or the check will likely fail:
            a warning says so) are the ones differentiated.
        eps: finite-difference step.
        atol, rtol: ``|analytical - numerical| <= atol + rtol * |numerical|``
            (torch.allclose), per Jacobian entry (in fast mode, atol scaled by
            ``sum(u) * sum(v)``).
        raise_exception: raise `GradcheckError` on failure; else return False.
        nondet_tol: how far two runs of the same backward may differ.
        check_undefined_grad: backward must work when outputs are left out
            of it (their cotangent is zero) and give zero for zero cotangents.
        check_grad_dtypes: gradients must have their input's dtype.
        fast_mode: compare ``v^T J u`` for random ``u``, ``v`` instead of the
            whole Jacobian (one VJP per output instead of one per element).
        check_forward_ad: also check the Jacobian forward-mode AD computes
            (tg.autograd.forward_ad; a custom Function needs its ``jvp``).
        check_backward_ad: check the reverse-mode gradients (default True).
        check_batched_grad: ``autograd.grad(..., is_grads_batched=True)`` must give
            the single VJPs' gradients (gradcheck_modes.py).
    Returns:
        True when every check passes.
    Raises:
        GradcheckError: a check failed, with both Jacobians in the message
            (only with ``raise_exception=True``).
        ValueError: no input requires grad.
        NotImplementedError: check_batched_forward_grad or masked=True (no
            vmap of forward mode, no sparse tensors).
    Follows ``torch.autograd.gradcheck``.
    """
    _reject_unsupported("gradcheck", check_batched_forward_grad=check_batched_forward_grad,
                        masked=masked)
    if not (check_backward_ad or check_forward_ad):   # torch asserts this
        raise AssertionError("Expected at least one of check_forward_ad or check_backward_ad "
                             "to be True")
    # "auto" moves a program hot after its third run from NumPy to XLA, whose rounding
    # differs in the last bit: the reentrancy check (nondet_tol=0) would see that as
    # nondeterminism, so every run here stays on the NumPy interpreter
    executor = "interpreter" if _state.get_executor() == "auto" else _state.get_executor()
    inputs = _as_tuple(inputs)
    func, inputs, explain = _realified(func, inputs)   # complex inputs/outputs as real pairs
    try:
        with _state.pinned_executor(executor):
            _gradcheck(func, inputs, eps, atol, rtol, nondet_tol,
                       check_undefined_grad, check_grad_dtypes, fast_mode, check_backward_ad,
                       check_forward_ad, check_batched_grad and check_backward_ad)
    except GradcheckError as e:
        e.args = (explain(e.args[0]),) + e.args[1:] if e.args else e.args
        if raise_exception:
            raise
        return False
    return True


def _reject_unsupported(name: str, **flags) -> None:
    for arg, value in flags.items():
        if value:
            raise NotImplementedError(f"{name}: {arg}={value!r} is not supported by tracegrad "
                                      "yet (no vmap, forward-mode AD or sparse tensors)")


def _gradcheck(func, inputs, eps, atol, rtol, nondet_tol, check_undefined_grad,
               check_grad_dtypes, fast_mode, backward=True, forward=False,
               batched=False) -> None:
    p = _Problem(func, inputs, eps)
    rng = np.random.default_rng(0)      # its own stream: the user's seed is left alone
    if not p.diff_out:
        _no_differentiable_outputs(p, fast_mode, rng)
        return
    if forward:
        gradcheck_modes.check_forward_ad(
            p, _numerical_jacobian, lambda a, n, scale: _allclose(a, n, rtol, atol * scale),
            GradcheckError, fast_mode, rng, _unit)
    if not backward:
        return
    if fast_mode:
        _fast(p, rtol, atol, nondet_tol, check_grad_dtypes, rng)
    else:
        _slow(p, rtol, atol, nondet_tol, check_grad_dtypes)
    _zero_cotangents_give_zero(p, p.diff_out, "backward not multiplied by grad_output")
    if check_undefined_grad:
        _undefined_grads(p)
    if batched:
        gradcheck_modes.check_batched_grad(p, GradcheckError, rng)


def gradgradcheck(func: Callable, inputs, grad_outputs=None, *, eps: float = 1e-6,
                  atol: float = 1e-5, rtol: float = 1e-3,
                  gen_non_contig_grad_outputs: bool = False, raise_exception: bool = True,
                  nondet_tol: float = 0.0, check_undefined_grad: bool = True,
                  check_grad_dtypes: bool = False, check_batched_grad: bool = False,
                  check_fwd_over_rev: bool = False, check_rev_over_rev: bool = True,
                  fast_mode: bool = False, masked: bool = False) -> bool:
    """Check second derivatives: `gradcheck` of the VJP of `func` (double backward).

    The function checked maps ``(*inputs, *grad_outputs)`` to the gradients
    ``tg.autograd.grad(func(*inputs), inputs, grad_outputs, create_graph=True)``,
    so its analytical Jacobian comes from differentiating the backward program.

    Args:
        func, inputs, eps, atol, rtol, raise_exception, nondet_tol,
            check_undefined_grad, check_grad_dtypes, fast_mode: as `gradcheck`.
        grad_outputs: cotangents for the differentiable outputs of `func`
            (default: uniform in [-1, 1], float64 for non-float outputs,
            requiring grad, from a fixed seed).
        gen_non_contig_grad_outputs: generated cotangents are non-contiguous
            NumPy views.
    Returns:
        True when every check passes.
    Raises:
        GradcheckError, ValueError, NotImplementedError: as `gradcheck`
            (``check_fwd_over_rev`` is its ``check_forward_ad``, ``check_rev_over_rev``
            its ``check_backward_ad``; masked is not supported).
    Follows ``torch.autograd.gradgradcheck``.
    """
    _reject_unsupported("gradgradcheck", masked=masked)
    if check_undefined_grad and not check_rev_over_rev:   # torch asserts this
        raise AssertionError("Setting check_undefined_grad=True requires check_rev_over_rev to "
                             "be True")
    inputs = _as_tuple(inputs)
    if grad_outputs is None:
        outs = _as_tuple(func(*inputs))
        rng = np.random.default_rng(0)
        grad_outputs = tuple(_random_cotangent(rng, outs[k], gen_non_contig_grad_outputs)
                             for k in _differentiable(outs))
    else:
        grad_outputs = _as_tuple(grad_outputs)
    n_out = len(grad_outputs)
    diff_in = [i for i, x in enumerate(inputs) if isinstance(x, Tensor) and x.requires_grad]

    def vjp_of_func(*args):
        ins, cts = args[:len(args) - n_out], args[len(args) - n_out:]
        outs = _as_tuple(func(*ins))
        outs = [outs[k] for k in _differentiable(outs)]
        grads = _grad(outs, [ins[i] for i in diff_in], list(cts), create_graph=True,
                      allow_unused=True)
        return tuple(g for g in grads if g is not None)

    return gradcheck(vjp_of_func, inputs + grad_outputs, eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception, nondet_tol=nondet_tol,
                     check_undefined_grad=check_undefined_grad,
                     check_grad_dtypes=check_grad_dtypes, fast_mode=fast_mode,
                     check_batched_grad=check_batched_grad, check_forward_ad=check_fwd_over_rev,
                     check_backward_ad=check_rev_over_rev)


def _random_cotangent(rng, out: Tensor, non_contiguous: bool) -> Tensor:
    dtype = (out.dtype.numpy if out.dtype.is_floating_point or out.dtype.is_complex
             else np.float64)
    values = rng.uniform(-1.0, 1.0, out.shape)
    if out.dtype.is_complex:   # a complex cotangent for a complex output
        values = np.asarray(values + 1j * rng.uniform(-1.0, 1.0, out.shape))
    if non_contiguous:   # every other element of a buffer twice as long in the last dim
        buf = np.empty(out.shape[:-1] + (2 * out.shape[-1],) if out.shape else (2,), dtype)
        arr = buf[..., ::2] if out.shape else buf[:1].reshape(())
        arr[...] = values
    else:
        arr = values.astype(dtype)
    return Tensor(arr, requires_grad=True)
