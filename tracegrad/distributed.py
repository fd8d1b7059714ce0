"""torch.distributed for one process: the process-group calls a training script makes.

tracegrad's multi-device training is `tg.compile(fn, mesh=..., data_axis=...)` (jax
sharding; several hosts through ``jax.distributed.initialize``), not process groups.
So a script written for DDP runs here as one process: ``init_process_group`` accepts a
world of size 1 (rank 0) and refuses a larger one with NotImplementedError that says
what to use instead; collectives on a world of one leave their tensors as they are.
Before ``init_process_group``, rank and world-size queries raise torch's ValueError.
"""
from __future__ import annotations

import os

_GROUP: dict = {}


class ReduceOp:
    """torch.distributed.ReduceOp's names (on one process every reduction is the identity)."""
    SUM = "sum"
    PRODUCT = "product"
    MIN = "min"
    MAX = "max"
    AVG = "avg"


class Backend:
    GLOO = "gloo"
    NCCL = "nccl"
    MPI = "mpi"


def is_available() -> bool:
    """True: the single-process subset described in the module docstring is available."""
    return True


def is_initialized() -> bool:
    """Whether `init_process_group` has run (torch.distributed.is_initialized)."""
    return bool(_GROUP)


def is_nccl_available() -> bool:
    return False


def is_gloo_available() -> bool:
    return False


def _refuse(what: str) -> None:
    raise NotImplementedError(
        f"tracegrad.distributed: {what}: tracegrad runs one process per training script; "
        "for data parallelism across devices or hosts use tg.compile(step, mesh=..., "
        "data_axis=...) (jax sharding; jax.distributed.initialize() for several hosts), "
        "see docs/compile.md")


def init_process_group(backend=None, init_method=None, timeout=None, world_size: int = -1,
                       rank: int = -1, store=None, group_name: str = "", pg_options=None,
                       device_id=None) -> None:
    """Start a single-process group (torch.distributed.init_process_group).

    `world_size` / `rank` default to the WORLD_SIZE / RANK environment variables, as torch.

    Raises:
        RuntimeError: called twice (torch's message).
        NotImplementedError: a world of more than one process (see the module docstring).
    """
    if _GROUP:
        raise RuntimeError("trying to initialize the default process group twice!")
    if world_size == -1:
        world_size = int(os.environ.get("WORLD_SIZE", "1"))
    if rank == -1:
        rank = int(os.environ.get("RANK", "0"))
    if world_size != 1 or rank != 0:
        _refuse(f"init_process_group(world_size={world_size}, rank={rank})")
    _GROUP.update(backend=backend or "gloo", world_size=1, rank=0)


def destroy_process_group(group=None) -> None:
    _GROUP.clear()


def _group() -> dict:
    if not _GROUP:
        raise ValueError("Default process group has not been initialized, please make sure to "
                         "call init_process_group.")
    return _GROUP


def get_rank(group=None) -> int:
    """0 on the single-process group; ValueError before `init_process_group`, as torch."""
    return _group()["rank"]


def get_world_size(group=None) -> int:
    """1 on the single-process group; ValueError before `init_process_group`, as torch."""
    return _group()["world_size"]


def get_backend(group=None) -> str:
    return _group()["backend"]


class _Done:
    """What an ``async_op=True`` collective returns: already complete."""

    def wait(self, timeout=None) -> bool:
        return True

    def is_completed(self) -> bool:
        return True


def _collective(async_op: bool):
    _group()
    return _Done() if async_op else None


def all_reduce(tensor, op=ReduceOp.SUM, group=None, async_op: bool = False):
    """The identity on a world of one (every reduction of one value is that value)."""
    return _collective(async_op)


def reduce(tensor, dst: int = 0, op=ReduceOp.SUM, group=None, async_op: bool = False):
    return _collective(async_op)


def broadcast(tensor, src: int = 0, group=None, async_op: bool = False):
    return _collective(async_op)


def barrier(group=None, async_op: bool = False, device_ids=None):
    return _collective(async_op)


def all_gather(tensor_list: list, tensor, group=None, async_op: bool = False):
    """``tensor_list[0]`` becomes a copy of `tensor` (the world's only rank)."""
    _group()
    if len(tensor_list) != 1:
        raise ValueError(f"all_gather: tensor_list has {len(tensor_list)} entries for a world "
                         "of size 1")
    tensor_list[0].copy_(tensor)
    return _collective(async_op)


def all_gather_object(object_list: list, obj, group=None) -> None:
    _group()
    object_list[0] = obj


def broadcast_object_list(object_list: list, src: int = 0, group=None, device=None) -> None:
    _group()


def new_group(ranks=None, timeout=None, backend=None, pg_options=None):
    _refuse("new_group")
