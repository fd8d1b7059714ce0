"""DataLoader worker processes (torch.utils.data._utils.worker): the loop each worker runs,
its seeds, `get_worker_info`, and how results travel back.

Each worker is seeded as torch seeds it: ``seed = base_seed + worker_id`` for Python's
`random` and `tg.manual_seed`, and a NumPy seed derived from both (so NumPy-based
augmentation differs per worker).  ``base_seed`` is one draw of the loader's generator
(or the global one) per epoch, so a `tg.manual_seed` before the loop repeats it.
Tensors travel back as NumPy arrays (`pack`/`unpack`): no recorded history crosses
processes.
"""
from __future__ import annotations

import collections.abc
import queue
import random
import traceback
from dataclasses import dataclass

import numpy as np

from ... import _generator
from ...tensor import Tensor


@dataclass(frozen=True)
class WorkerInfo:
    """What `get_worker_info()` returns inside a worker (torch's WorkerInfo)."""

    id: int
    num_workers: int
    seed: int
    dataset: object


_INFO: WorkerInfo | None = None


def get_worker_info() -> WorkerInfo | None:
    """The current worker's id, num_workers, seed and its copy of the dataset; None in the
    main process (torch.utils.data.get_worker_info)."""
    return _INFO


class _Exhausted:
    """A worker's iterable dataset ran out."""


class _Failure:
    """An exception raised in a worker, re-raised in the main process with its traceback."""

    def __init__(self, worker_id: int, exc: BaseException):
        self.exc_type = type(exc)
        self.text = (f"Caught {type(exc).__name__} in DataLoader worker process {worker_id}.\n"
                     f"Original {traceback.format_exc()}")

    def reraise(self):
        try:
            err = self.exc_type(self.text)
        except Exception:   # an exception type that does not take one message
            err = RuntimeError(self.text)
        raise err


class _Packed:
    """A tensor on its way between processes: its array only."""

    def __init__(self, array: np.ndarray):
        self.array = array


def pack(data):
    """`data` with each tensor replaced by its array (containers kept)."""
    if isinstance(data, Tensor):
        return _Packed(np.asarray(data.detach().numpy()))
    if isinstance(data, collections.abc.Mapping):
        return _safe(type(data), {k: pack(v) for k, v in data.items()})
    if isinstance(data, tuple) and hasattr(data, "_fields"):
        return type(data)(*(pack(d) for d in data))
    if isinstance(data, (list, tuple)):
        return type(data)(pack(d) for d in data)
    return data


def unpack(data):
    """The inverse of `pack`."""
    if isinstance(data, _Packed):
        return Tensor(data.array)
    if isinstance(data, collections.abc.Mapping):
        return _safe(type(data), {k: unpack(v) for k, v in data.items()})
    if isinstance(data, tuple) and hasattr(data, "_fields"):
        return type(data)(*(unpack(d) for d in data))
    if isinstance(data, (list, tuple)):
        return type(data)(unpack(d) for d in data)
    return data


def _safe(kind, mapping):
    try:
        return kind(mapping)
    except TypeError:
        return mapping


def numpy_seed(base_seed: int, worker_id: int) -> list[int]:
    """The NumPy seed of worker `worker_id`: a SeedSequence entropy of both numbers (torch
    mixes them with its own hash; the aim, distinct streams per worker and epoch, is kept)."""
    return [base_seed & 0xFFFFFFFFFFFFFFFF, worker_id]


def worker_loop(dataset, index_queue, result_queue, worker_id: int, num_workers: int,
                base_seed: int, init_fn, collate_fn, auto_collation: bool, batch_size,
                drop_last: bool, iterable: bool) -> None:
    """One worker: seed, run `init_fn(worker_id)`, then answer ``(task, indices)`` requests
    with ``(task, batch)`` until it receives None."""
    global _INFO
    seed = base_seed + worker_id
    random.seed(seed)
    _generator.manual_seed(seed)
    np.random.seed(np.random.SeedSequence(numpy_seed(base_seed, worker_id)).generate_state(4))
    _INFO = WorkerInfo(id=worker_id, num_workers=num_workers, seed=seed, dataset=dataset)
    init_failure = None
    try:
        if init_fn is not None:
            init_fn(worker_id)
        stream = iter(dataset) if iterable else None
    except Exception as e:
        init_failure = _Failure(worker_id, e)
    exhausted = False
    while True:
        try:
            task = index_queue.get(timeout=5.0)
        except queue.Empty:
            continue
        if task is None:
            break
        idx, indices = task
        if init_failure is not None:
            result_queue.put((idx, init_failure))
            continue
        try:
            if iterable:
                if exhausted:
                    raise StopIteration
                data = _next_batch(stream, auto_collation, batch_size, drop_last)
            elif auto_collation:
                many = getattr(dataset, "__getitems__", None)
                data = many(indices) if many is not None else [dataset[i] for i in indices]
            else:
                data = dataset[indices]
            result = pack(collate_fn(data))
        except StopIteration:
            exhausted, result = True, _Exhausted()
        except Exception as e:
            result = _Failure(worker_id, e)
        result_queue.put((idx, result))


def _next_batch(stream, auto_collation: bool, batch_size, drop_last: bool):
    """The next sample (or batch of samples) of an iterable dataset's stream; StopIteration
    at its end (a short last batch is dropped with `drop_last`)."""
    if not auto_collation:
        return next(stream)
    batch = []
    for item in stream:
        batch.append(item)
        if len(batch) == batch_size:
            return batch
    if not batch or drop_last:
        raise StopIteration
    return batch


__all__ = ["WorkerInfo", "get_worker_info"]
