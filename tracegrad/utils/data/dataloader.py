"""DataLoader (torch.utils.data.DataLoader): batches from a dataset, in the main process or
in worker processes.

Iteration follows torch: a map-style dataset's indices come from the sampler (sequential,
or a fresh random permutation per epoch with ``shuffle=True``) grouped by the batch
sampler, and each batch is ``collate_fn([dataset[i] for i in batch])``; an iterable
dataset's samples are grouped as they come.  With ``num_workers > 0`` worker processes
fetch and collate whole batches (fork where the platform has it, as torch on Linux) and
the batches arrive in sampler order (a dataset that itself runs jax wants
``multiprocessing_context="spawn"``).  ``pin_memory``, ``pin_memory_device``,
``persistent_workers`` and ``prefetch_factor`` are accepted; tensors live on the CPU, so
pinning does nothing, and workers are started anew each epoch.
"""
from __future__ import annotations

import itertools
import multiprocessing
import time
import warnings

from ... import _creation, _generator
from tracegrad.ir import types as T
from .collate import default_collate, default_convert
from .dataset import IterableDataset
from .sampler import BatchSampler, RandomSampler, SequentialSampler
from .worker import _Exhausted, _Failure, unpack, worker_loop


class _InfiniteConstantSampler:
    """An iterable dataset's sampler: None forever (torch's)."""

    def __iter__(self):
        while True:
            yield None


def _check_options(dataset, batch_size, shuffle, sampler, batch_sampler, drop_last,
                   num_workers, timeout, prefetch_factor, persistent_workers) -> None:
    """torch 2.13's option checks, in its order and words."""
    if num_workers < 0:
        raise ValueError("num_workers option should be non-negative; use num_workers=0 to "
                         "disable multiprocessing.")
    if timeout < 0:
        raise ValueError("timeout option should be non-negative")
    if num_workers == 0 and prefetch_factor is not None:
        raise ValueError("prefetch_factor option could only be specified in multiprocessing."
                         "let num_workers > 0 to enable multiprocessing, otherwise set "
                         "prefetch_factor to None.")
    if prefetch_factor is not None and prefetch_factor < 0:
        raise ValueError("prefetch_factor option should be non-negative")
    if persistent_workers and num_workers == 0:
        raise ValueError("persistent_workers option needs num_workers > 0")
    if isinstance(dataset, IterableDataset):
        for name, value in (("shuffle", shuffle), ("sampler", sampler),
                            ("batch_sampler", batch_sampler)):
            if value not in (None, False):
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified {name} "
                                 f"option, but got {name}={value}")
    if sampler is not None and shuffle:
        raise ValueError("sampler option is mutually exclusive with shuffle")
    if batch_sampler is not None and (batch_size != 1 or shuffle or sampler is not None
                                      or drop_last):
        raise ValueError("batch_sampler option is mutually exclusive with batch_size, shuffle, "
                         "sampler, and drop_last")
    if batch_sampler is None and batch_size is None and drop_last:
        raise ValueError("batch_size=None option disables auto-batching and is mutually "
                         "exclusive with drop_last")


class DataLoader:
    """Batches of `dataset` (torch.utils.data.DataLoader, torch 2.13's signature and defaults).

    Args:
        dataset: map-style (``__getitem__``/``__len__``: a Dataset, NumPy array, list ...) or
            an IterableDataset.
        batch_size: samples per batch (1); None disables batching (each sample goes through
            `default_convert`).
        shuffle: a new random order per epoch from `generator` or the global generator.
        sampler, batch_sampler: explicit index orders (exclusive with shuffle / the
            batching options, as torch).
        num_workers: worker processes (0: load in the main process); each is seeded
            ``base_seed + worker_id`` and calls `worker_init_fn(worker_id)` first.
        collate_fn: builds a batch from a list of samples (default_collate).
        drop_last: drop the last incomplete batch.
        timeout: seconds to wait for a worker's batch (0: forever).
        generator: the Generator behind shuffling and the workers' base seed.
    Raises:
        ValueError: torch's option conflicts and bad values, in its words.
    """

    def __init__(self, dataset, batch_size=1, shuffle=None, sampler=None, batch_sampler=None,
                 num_workers: int = 0, collate_fn=None, pin_memory: bool = False,
                 drop_last: bool = False, timeout: float = 0, worker_init_fn=None,
                 multiprocessing_context=None, generator=None, *, prefetch_factor=None,
                 persistent_workers: bool = False, pin_memory_device: str = "",
                 in_order: bool = True):
        _check_options(dataset, batch_size, shuffle, sampler, batch_sampler, drop_last,
                       num_workers, timeout, prefetch_factor, persistent_workers)
        self.dataset, self.num_workers, self.timeout = dataset, num_workers, timeout
        self.prefetch_factor = 2 if num_workers > 0 and prefetch_factor is None else \
            prefetch_factor
        self.pin_memory, self.pin_memory_device = pin_memory, pin_memory_device
        self.worker_init_fn, self.multiprocessing_context = worker_init_fn, multiprocessing_context
        self.persistent_workers, self.in_order, self.generator = (persistent_workers, in_order,
                                                                  generator)
        self._iterable = isinstance(dataset, IterableDataset)
        if batch_sampler is not None:   # torch: a given batch sampler does the batching
            batch_size, drop_last = None, False
        if self._iterable:
            sampler = _InfiniteConstantSampler()
        elif sampler is None:
            sampler = RandomSampler(dataset, generator=generator) if shuffle else \
                SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)
        self.batch_size, self.drop_last = batch_size, drop_last
        self.sampler, self.batch_sampler = sampler, batch_sampler
        if collate_fn is None:
            collate_fn = default_collate if batch_sampler is not None else default_convert
        self.collate_fn = collate_fn

    @property
    def _auto_collation(self) -> bool:
        return self.batch_sampler is not None

    @property
    def _index_sampler(self):
        return self.batch_sampler if self._auto_collation else self.sampler

    def __len__(self) -> int:
        """The number of batches (torch's: for an iterable dataset, from its ``__len__``).

        Raises:
            TypeError: an iterable dataset without ``__len__``, or a sampler without one.
        """
        if self._iterable:
            n = len(self.dataset)
            if self.batch_size is not None:
                n = n // self.batch_size if self.drop_last else -(-n // self.batch_size)
            return n
        return len(self._index_sampler)

    def __iter__(self):
        if self.num_workers == 0:
            return _SingleProcessIter(self)
        return _MultiProcessIter(self)

    def _base_seed(self) -> int:
        """One int64 draw of the loader's generator per epoch (torch's ``_base_seed``)."""
        t = _creation.empty((), dtype=T.int64)
        return int(t.random_(generator=self.generator).item())


class _SingleProcessIter:
    def __init__(self, loader: DataLoader):
        self._loader = loader
        self._indices = iter(loader._index_sampler)
        self._stream = iter(loader.dataset) if loader._iterable else None

    def __iter__(self):
        return self

    def __len__(self) -> int:
        return len(self._loader)

    def __next__(self):
        loader = self._loader
        if self._stream is not None:
            if loader._auto_collation:
                batch = list(itertools.islice(self._stream, loader.batch_size))
                if not batch or (loader.drop_last and len(batch) < loader.batch_size):
                    raise StopIteration
                return loader.collate_fn(batch)
            return loader.collate_fn(next(self._stream))
        index = next(self._indices)
        dataset = loader.dataset
        if loader._auto_collation:
            many = getattr(dataset, "__getitems__", None)
            data = many(index) if many is not None else [dataset[i] for i in index]
        else:
            data = dataset[index]
        return loader.collate_fn(data)


def _context(loader: DataLoader):
    ctx = loader.multiprocessing_context
    if isinstance(ctx, str):
        return multiprocessing.get_context(ctx)
    if ctx is not None:
        return ctx
    # torch on Linux forks too: datasets and collate functions need not pickle
    return multiprocessing.get_context("fork" if "fork" in
                                       multiprocessing.get_all_start_methods() else None)


class _MultiProcessIter:
    """Batches fetched by worker processes, handed out in sampler order."""

    def __init__(self, loader: DataLoader):
        self._loader = loader
        self._indices = iter(loader._index_sampler)
        ctx = _context(loader)
        base_seed = loader._base_seed()
        self._results = ctx.Queue()
        self._queues, self._workers = [], []
        n = loader.num_workers
        for wid in range(n):
            q = ctx.Queue()
            w = ctx.Process(target=worker_loop, daemon=True, args=(
                loader.dataset, q, self._results, wid, n, base_seed, loader.worker_init_fn,
                loader.collate_fn, loader._auto_collation, loader.batch_size, loader.drop_last,
                loader._iterable))
            with warnings.catch_warnings():
                # jax warns at every fork once it has threads; workers run the dataset and
                # collate_fn with NumPy kernels and never enter jax, whose locks are the
                # hazard.  A dataset that runs jax itself wants multiprocessing_context="spawn"
                warnings.filterwarnings("ignore", message=r"os\.fork\(\) was called",
                                        category=RuntimeWarning)
                w.start()
            self._queues.append(q)
            self._workers.append(w)
        self._active = [True] * n
        self._owner: dict = {}   # task -> the worker it was sent to
        self._cycle = itertools.cycle(range(n))
        self._sent = self._received = 0
        self._done: dict = {}
        self._closed = False
        for _ in range(loader.prefetch_factor * n):
            self._put_task()

    def __iter__(self):
        return self

    def __len__(self) -> int:
        return len(self._loader)

    def _put_task(self) -> None:
        if not any(self._active):
            return
        try:
            indices = next(self._indices)
        except StopIteration:
            return
        for _ in range(len(self._queues)):
            wid = next(self._cycle)
            if self._active[wid]:
                break
        self._queues[wid].put((self._sent, indices))
        self._owner[self._sent] = wid
        self._sent += 1

    def _get(self):
        """The next (task, result) from any worker; RuntimeError when a worker died or the
        loader's timeout passed (torch's words)."""
        start = time.monotonic()
        timeout = self._loader.timeout
        while True:
            try:
                return self._results.get(timeout=min(timeout, 1.0) if timeout else 1.0)
            except Exception:   # queue.Empty: check the workers, then wait again
                dead = [w.pid for w in self._workers if w.exitcode not in (None, 0)]
                if dead:
                    self._shutdown()
                    raise RuntimeError(f"DataLoader worker (pid(s) "
                                       f"{', '.join(map(str, dead))}) exited unexpectedly")
                if timeout and time.monotonic() - start > timeout:
                    self._shutdown()
                    raise RuntimeError(f"DataLoader timed out after {timeout} seconds")

    def __next__(self):
        while True:
            if self._received >= self._sent:
                self._shutdown()
                raise StopIteration
            if self._received in self._done:
                result = self._done.pop(self._received)
                self._received += 1
                if isinstance(result, _Exhausted):
                    continue
                self._put_task()
                if isinstance(result, _Failure):
                    self._shutdown()
                    result.reraise()
                return unpack(result)
            task, result = self._get()
            if isinstance(result, _Exhausted):
                self._active[self._owner[task]] = False
            self._done[task] = result

    def _shutdown(self) -> None:
        if self._closed:
            return
        self._closed = True
        for q in self._queues:
            q.put(None)
        for w in self._workers:
            w.join(timeout=5.0)
            if w.is_alive():
                w.terminate()
        for q in (*self._queues, self._results):
            q.cancel_join_thread()
            q.close()

    def __del__(self):
        try:
            self._shutdown()
        except Exception:   # interpreter shutdown: the queues may already be gone
            pass


__all__ = ["DataLoader"]
