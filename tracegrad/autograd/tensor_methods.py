"""Tensor's autograd methods: ``backward``, ``register_hook``,
``register_post_accumulate_grad_hook``.

They belong to the autograd layer (the engine and the hook machinery), above
the tensor core; installed on `Tensor` (tensor.py `attach`) when
tracegrad.autograd is imported.
"""
from __future__ import annotations

from ..tensor import attach
from .engine import backward as _backward
from .hooks import register_post_accumulate_grad_hook, register_tensor_hook


@attach
class _AutogradMethods:
    def register_hook(self, hook):
        """Run ``hook(grad)`` when this tensor's gradient is computed (torch.Tensor.register_hook).

        On a non-leaf it runs once the gradient is complete, before the node
        that produced the tensor uses it; on a leaf, before the gradient is
        accumulated into ``.grad`` (also for ``autograd.grad``).  A returned
        tensor (same shape and dtype) replaces the gradient.  Hooks run in
        registration order; see tracegrad/autograd/hooks.py for how they run
        inside the compiled backward program.

        Returns:
            a handle whose ``remove()`` removes the hook.
        Raises:
            RuntimeError: the tensor does not require grad.
        """
        return register_tensor_hook(self, hook)

    def register_post_accumulate_grad_hook(self, hook):
        """Run ``hook(tensor)`` after ``backward()`` accumulated into this leaf's ``.grad``
        (torch.Tensor.register_post_accumulate_grad_hook).

        Raises:
            RuntimeError: on a non-leaf tensor, or one that does not require grad.
        """
        return register_post_accumulate_grad_hook(self, hook)

    def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
        """Accumulate d(self)/d(leaf) into each leaf's ``.grad`` (torch.Tensor.backward).

        Args:
            gradient: cotangent of the same shape as self; may be omitted for a
                one-element tensor.
            retain_graph: keep saved values for another backward (default: create_graph).
        Raises:
            RuntimeError: non-scalar output without ``gradient``, a tensor that
                does not require grad, or a second backward through freed values.
        """
        _backward([self], None if gradient is None else [gradient], retain_graph, create_graph,
                 inputs=inputs)
