"""torch.utils-shaped helpers: the `checkpoint` module (checkpoint, checkpoint_name).

As in torch, ``tracegrad.utils.checkpoint`` is the module and
``tracegrad.utils.checkpoint.checkpoint`` the function, so ``import
tracegrad.utils.checkpoint`` and ``from tracegrad.utils.checkpoint import checkpoint``
work as in ported scripts.  Calling the module, ``tg.utils.checkpoint(fn, *args)``, also
still works (it calls the function): older tracegrad code wrote it that way.
"""
import types as _types

from . import checkpoint, data
from .checkpoint import checkpoint_name


class _CallableModule(_types.ModuleType):
    """The checkpoint module's class: calling the module calls its `checkpoint` function."""

    def __call__(self, *args, **kwargs):
        return self.checkpoint(*args, **kwargs)


checkpoint.__class__ = _CallableModule

__all__ = ["checkpoint", "checkpoint_name", "data"]
