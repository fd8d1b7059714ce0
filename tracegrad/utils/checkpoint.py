"""Activation checkpointing: save a region's inputs, recompute the region in backward."""
from __future__ import annotations

import warnings

from .. import _creation, _ops, _state
from ..autograd.engine import backward as autograd_backward
from ..autograd.function import Function
from ..autograd.grad_mode import enable_grad, no_grad
from ..tensor import Tensor


def checkpoint_name(x: Tensor, name: str) -> Tensor:
    """Tag `x` with `name` for the ``"save_names"`` policy (jax.ad_checkpoint.checkpoint_name).

    Returns `x` unchanged in value; under ``tg.explain(..., policy="save_names")``
    tagged values cost nothing to save, so the partitioner keeps them and
    recomputes others.
    """
    return _ops.checkpoint_name(x, str(name))


class _Checkpoint(Function):
    """Runs the region without recording; its backward re-runs it with grad and differentiates."""

    @staticmethod
    def forward(ctx, fn, n_tensors, preserve_rng_state, *args):
        ctx.fn, ctx.n_tensors = fn, n_tensors
        # the recomputation draws the same random numbers (dropout masks) as this run
        ctx.rng_state = _creation.get_rng_state() if preserve_rng_state else None
        tensors = args[:n_tensors]
        ctx.save_for_backward(*tensors)
        ctx.rest = args[n_tensors:]
        with no_grad():
            out = fn(*tensors, *ctx.rest)
        if not isinstance(out, Tensor):
            raise TypeError("tg.utils.checkpoint: the function must return one tensor, got "
                            f"{type(out).__name__}")
        return out

    @staticmethod
    def backward(ctx, grad_out):
        inputs = [t.detach().requires_grad_(t.requires_grad) for t in ctx.saved_tensors]
        outer = None
        if ctx.rng_state is not None:
            outer = _creation.get_rng_state()
            _creation.set_rng_state(ctx.rng_state)
        try:
            with enable_grad():
                out = ctx.fn(*inputs, *ctx.rest)     # the recomputation
        finally:
            if outer is not None:   # the stream goes on as if nothing was recomputed
                _creation.set_rng_state(outer)
        if out.requires_grad:
            # like torch's reentrant checkpoint: parameters the region closes over are
            # leaves of the recomputed graph and get their .grad accumulated here
            autograd_backward(out, grad_out)
        return (None, None, None) + tuple(t.grad for t in inputs)


def checkpoint(fn, *args, use_reentrant: bool = False, preserve_rng_state: bool = True,
               **kwargs):
    """``fn(*args)`` whose intermediate values are not saved but recomputed in backward.

    Follows torch.utils.checkpoint.checkpoint (``use_reentrant=True``'s
    semantics): only the region's inputs are kept for backward; the backward
    pass runs `fn` again (under grad mode) and backpropagates through the
    recomputation, accumulating into the ``.grad`` of parameters `fn` closes
    over, so use ``backward()``, not ``autograd.grad``, through a checkpoint.  `fn` must
    return one tensor; tensor arguments come first, other arguments after them.  With
    ``preserve_rng_state`` (default, as torch) the recomputation restores the RNG state
    the forward saw, so dropout draws the same mask, and the stream continues afterwards
    as if nothing had been recomputed.  While tracing
    (`tg.explain`), the region's nodes are marked instead and the min-cut
    partitioner recomputes them rather than saving their values.
    Raises:
        TypeError: `fn` returns something other than one tensor.
    """
    if kwargs:
        raise TypeError(f"checkpoint: unexpected keyword arguments {sorted(kwargs)}")
    local = _state.local
    if local.tracer is not None:
        # traced (tg.explain, tg.compile): mark the region's nodes; the partitioner
        # recomputes them in backward instead of saving their values
        local.checkpoint_depth += 1
        try:
            return fn(*args)
        finally:
            local.checkpoint_depth -= 1
    n = 0
    while n < len(args) and isinstance(args[n], Tensor):
        n += 1
    if local.grad_enabled and not any(t.requires_grad for t in args[:n]):
        warnings.warn("None of the inputs have requires_grad=True. Gradients will be None "
                      "(tg.utils.checkpoint follows torch's reentrant checkpoint: a tensor "
                      "argument must require grad)", UserWarning, stacklevel=2)
    return _Checkpoint.apply(fn, n, preserve_rng_state, *args)
