"""torch.nn.parallel's wrappers for one process: `DistributedDataParallel` and `DataParallel`.

Both wrap a module and call it unchanged (``.module`` is the wrapped module, and the
state_dict keys gain torch's ``module.`` prefix).  Gradient averaging across processes
is the identity on one process; tracegrad does not need a process group for that, so
DDP is accepted without ``init_process_group`` (torch raises ValueError there).
Multi-device training is `tg.compile(fn, mesh=...)` instead (see tracegrad.distributed).
"""
from __future__ import annotations

from contextlib import contextmanager

from .modules.module import Module


class DistributedDataParallel(Module):
    """torch.nn.parallel.DistributedDataParallel on one process: ``forward`` is the wrapped
    module's; `device_ids`, `output_device`, `find_unused_parameters` ... are accepted and
    change nothing."""

    def __init__(self, module: Module, device_ids=None, output_device=None, dim: int = 0,
                 broadcast_buffers: bool = True, process_group=None, bucket_cap_mb=None,
                 find_unused_parameters: bool = False, check_reduction: bool = False,
                 gradient_as_bucket_view: bool = False, static_graph: bool = False, **kwargs):
        super().__init__()
        if not isinstance(module, Module):
            raise TypeError(f"DistributedDataParallel: expected an nn.Module, got "
                            f"{type(module).__name__}")
        self.module = module
        self.device_ids = device_ids
        self.dim = dim

    def forward(self, *args, **kwargs):
        return self.module(*args, **kwargs)

    @contextmanager
    def no_sync(self):
        """torch's gradient-sync suppression: nothing to suppress on one process."""
        yield


class DataParallel(Module):
    """torch.nn.DataParallel on the host: calls the wrapped module (``.module``)."""

    def __init__(self, module: Module, device_ids=None, output_device=None, dim: int = 0):
        super().__init__()
        self.module = module
        self.device_ids = device_ids
        self.dim = dim

    def forward(self, *args, **kwargs):
        return self.module(*args, **kwargs)


__all__ = ["DataParallel", "DistributedDataParallel"]
