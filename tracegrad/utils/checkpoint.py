"""Activation checkpointing hooks for the saved-tensor partitioner."""
from __future__ import annotations

from .. import _ops
from ..tensor import Tensor


def checkpoint_name(x: Tensor, name: str) -> Tensor:
    """Tag `x` with `name` for the ``"save_names"`` policy (jax.ad_checkpoint.checkpoint_name).

    Returns `x` unchanged in value; under ``tg.explain(..., policy="save_names")``
    tagged values cost nothing to save, so the partitioner keeps them and
    recomputes others.
    """
    return _ops.checkpoint_name(x, str(name))


def checkpoint(fn, *args, use_reentrant: bool = False, **kwargs):
    raise NotImplementedError("tg.utils.checkpoint is not implemented yet")
