"""Gradient clipping (torch.nn.utils.clip_grad): by the total norm or by value, in place.

Written without data-dependent Python branches: the gradients are always multiplied by
``min(max_norm / (total_norm + 1e-6), 1)``, so a `tg.compile`d training step traces the
clipping into its one program (only ``error_if_nonfinite=True`` reads a value).
"""
from __future__ import annotations

from ... import _ops
from ...autograd.grad_mode import no_grad
from ...ir import types as T
from ...linalg import vector_norm
from ...tensor import Tensor


def _tensors(tensors) -> list:
    return [tensors] if isinstance(tensors, Tensor) else list(tensors)


def _grads(parameters) -> list:
    return [p.grad for p in _tensors(parameters) if p.grad is not None]


def get_total_norm(tensors, norm_type: float = 2.0, error_if_nonfinite: bool = False,
                   foreach=None) -> Tensor:
    """The `norm_type`-norm of all `tensors` together, as if flattened into one vector
    (torch.nn.utils.get_total_norm): the norm of the per-tensor norms.

    Args:
        tensors: a tensor or an iterable of tensors (float or complex).
        norm_type: p of the p-norm; ``inf`` / ``"inf"`` for the largest magnitude.
        error_if_nonfinite: raise when the total norm is nan or +-inf (this reads the
            value: inside `tg.compile` it is a graph break, like ``.item()``).
        foreach: accepted for torch's signature; ignored.
    Returns:
        A 0-d tensor, in the promoted dtype of the tensors' norms (float32 for float32
        tensors); ``tensor(0.)`` for no tensors.  No gradient is recorded.
    Raises:
        RuntimeError: a non-finite total norm with `error_if_nonfinite`.
    """
    tensors = _tensors(tensors)
    norm_type = float(norm_type)
    if not tensors:
        return _ops.full((), 0.0, T.DEFAULT_FLOAT)
    with no_grad():
        norms = [vector_norm(t.detach(), norm_type) for t in tensors]
        dtype = norms[0].dtype
        for n in norms[1:]:
            dtype = T.promote_types(dtype, n.dtype)
        total = vector_norm(_ops.stack([n.to(dtype) for n in norms]), norm_type)
        if error_if_nonfinite and not bool(_ops.isfinite(total)):
            raise RuntimeError(
                f"get_total_norm: the total {norm_type}-norm of the gradients is {total.item()}, "
                "so they cannot be clipped; error_if_nonfinite=False scales them by it anyway")
    return total


def clip_grads_with_norm_(parameters, max_norm: float, total_norm: Tensor,
                          foreach=None) -> None:
    """Multiply every ``p.grad`` in place by ``min(max_norm / (total_norm + 1e-6), 1)``
    (torch.nn.utils.clip_grads_with_norm_): gradients only ever shrink.

    Args:
        parameters: a tensor or an iterable of tensors; those with ``grad`` None are skipped.
        max_norm: the largest total norm kept.
        total_norm: a 0-d tensor, e.g. from `get_total_norm`.
    """
    grads = _grads(parameters)
    if not grads:
        return
    with no_grad():
        coef = _ops.clamp(_ops.div(float(max_norm), _ops.add(total_norm, 1e-6)), None, 1.0)
        for g in grads:
            g.mul_(coef)


def clip_grad_norm_(parameters, max_norm: float, norm_type: float = 2.0,
                    error_if_nonfinite: bool = False, foreach=None) -> Tensor:
    """Scale all gradients together so that their total norm is at most `max_norm`
    (torch.nn.utils.clip_grad_norm_), in place.

    The total norm is taken over the gradients of all `parameters` as one vector
    (`get_total_norm`); each ``p.grad`` is then multiplied by
    ``min(max_norm / (total_norm + 1e-6), 1)``.  Works inside a `tg.compile`d step.

    Args:
        parameters: a tensor or an iterable of tensors (e.g. ``model.parameters()``, read
            once); those whose ``grad`` is None are skipped.
        max_norm: the largest total norm kept.
        norm_type: p of the p-norm; ``inf`` / ``"inf"`` for the largest magnitude.
        error_if_nonfinite: raise when the total norm is nan or +-inf (reads the value, so
            inside `tg.compile` it is a graph break).
        foreach: accepted for torch's signature; ignored.
    Returns:
        The total norm before clipping, a 0-d tensor (``tensor(0.)`` without gradients).
    Raises:
        RuntimeError: a non-finite total norm with `error_if_nonfinite`.
    """
    parameters = _tensors(parameters)
    total = get_total_norm(_grads(parameters), norm_type, error_if_nonfinite)
    clip_grads_with_norm_(parameters, max_norm, total)
    return total


def clip_grad_value_(parameters, clip_value: float, foreach=None) -> None:
    """Clamp every ``p.grad`` in place to ``[-clip_value, clip_value]``
    (torch.nn.utils.clip_grad_value_).

    Args:
        parameters: a tensor or an iterable of tensors; those with ``grad`` None are skipped.
        clip_value: a non-negative bound.
    Raises:
        DTypeError: a complex gradient (clamp is not defined for complex numbers, as torch).
    """
    clip_value = float(clip_value)
    with no_grad():
        for g in _grads(parameters):
            g.copy_(_ops.clamp(g, -clip_value, clip_value))
