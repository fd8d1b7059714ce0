"""Samplers (torch.utils.data.sampler): the index orders a DataLoader draws from.

Random samplers follow torch's semantics: each pass (epoch) over a `RandomSampler`
without a generator seeds a fresh one from the global generator, so the order changes
every epoch and repeats under `tg.manual_seed`.  The orders are not torch's (another
random stream), only their distribution is.
"""
from __future__ import annotations

import numpy as np

from ... import _creation, _generator, _random
from tracegrad.ir import types as T
from ...tensor import Tensor


class Sampler:
    """Base of the samplers (torch.utils.data.Sampler): ``__iter__`` yields indices (or, for a
    batch sampler, lists of them); ``__len__`` is optional."""

    def __init__(self, data_source=None) -> None:
        pass

    def __iter__(self):
        raise NotImplementedError


def _positive_int(name: str, value) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ValueError(f"{name} should be a positive integer value, but got {name}={value}")


def _epoch_generator(generator) -> _generator.Generator:
    """`generator`, or (torch's way) a new one seeded by one draw of the global stream."""
    if generator is not None:
        return _generator.generator_of("sampler", generator)
    seed = int(_creation.empty((), dtype=T.int64).random_().item())
    return _generator.Generator().manual_seed(seed)


class SequentialSampler(Sampler):
    """0, 1, ..., len(data_source) - 1 (torch.utils.data.SequentialSampler)."""

    def __init__(self, data_source) -> None:
        self.data_source = data_source

    def __iter__(self):
        return iter(range(len(self.data_source)))

    def __len__(self) -> int:
        return len(self.data_source)


class RandomSampler(Sampler):
    """A random permutation of the indices per pass, or `num_samples` indices drawn with
    `replacement` (torch.utils.data.RandomSampler).  Without replacement and with
    num_samples > len, whole permutations follow one another (as torch).

    Raises:
        TypeError: a non-bool `replacement`.  ValueError: num_samples <= 0 (torch's words).
    """

    def __init__(self, data_source, replacement: bool = False, num_samples=None,
                 generator=None) -> None:
        self.data_source, self.replacement = data_source, replacement
        self._num_samples, self.generator = num_samples, generator
        if not isinstance(replacement, bool):
            raise TypeError(f"replacement should be a boolean value, but got "
                            f"replacement={replacement}")
        _positive_int("num_samples", self.num_samples)

    @property
    def num_samples(self) -> int:
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def __iter__(self):
        n, total = len(self.data_source), self.num_samples
        gen = _epoch_generator(self.generator)
        if self.replacement:
            yield from _creation.randint(n, (total,), generator=gen).tolist()
            return
        for _ in range(total // n):
            yield from _creation.randperm(n, generator=gen).tolist()
        yield from _creation.randperm(n, generator=gen).tolist()[:total % n]

    def __len__(self) -> int:
        return self.num_samples


class SubsetRandomSampler(Sampler):
    """`indices` in a random order, a new one per pass (torch.utils.data.SubsetRandomSampler)."""

    def __init__(self, indices, generator=None) -> None:
        self.indices, self.generator = indices, generator

    def __iter__(self):
        gen = _generator.generator_of("SubsetRandomSampler", self.generator)
        for i in _creation.randperm(len(self.indices), generator=gen).tolist():
            yield self.indices[i]

    def __len__(self) -> int:
        return len(self.indices)


class WeightedRandomSampler(Sampler):
    """`num_samples` indices drawn with probabilities proportional to `weights`
    (torch.utils.data.WeightedRandomSampler; `tg.multinomial` underneath).

    Raises:
        ValueError: num_samples <= 0, a non-bool `replacement`, weights that are not 1-D
            (torch's words); `tg.multinomial`'s errors for bad weights.
    """

    def __init__(self, weights, num_samples: int, replacement: bool = True,
                 generator=None) -> None:
        _positive_int("num_samples", num_samples)
        if not isinstance(replacement, bool):
            raise ValueError(f"replacement should be a boolean value, but got "
                             f"replacement={replacement}")
        w = np.asarray(weights.numpy() if isinstance(weights, Tensor) else weights, np.float64)
        if w.ndim != 1:
            raise ValueError(f"weights should be a 1d sequence but given weights have shape "
                             f"{tuple(w.shape)}")
        self.weights = Tensor(w)
        self.num_samples, self.replacement, self.generator = num_samples, replacement, generator

    def __iter__(self):
        rand = _random.multinomial(self.weights, self.num_samples, self.replacement,
                                   generator=self.generator)
        yield from rand.tolist()

    def __len__(self) -> int:
        return self.num_samples


class BatchSampler(Sampler):
    """Lists of `batch_size` indices from `sampler`; the last one shorter unless
    `drop_last` (torch.utils.data.BatchSampler).

    Raises:
        ValueError: batch_size not a positive int, drop_last not a bool (torch's words).
    """

    def __init__(self, sampler, batch_size: int, drop_last: bool) -> None:
        _positive_int("batch_size", batch_size)
        if not isinstance(drop_last, bool):
            raise ValueError(f"drop_last should be a boolean value, but got drop_last={drop_last}")
        self.sampler, self.batch_size, self.drop_last = sampler, batch_size, drop_last

    def __iter__(self):
        batch = []
        for idx in self.sampler:
            batch.append(idx)
            if len(batch) == self.batch_size:
                yield batch
                batch = []
        if batch and not self.drop_last:
            yield batch

    def __len__(self) -> int:
        n = len(self.sampler)
        return n // self.batch_size if self.drop_last else -(-n // self.batch_size)


__all__ = ["BatchSampler", "RandomSampler", "Sampler", "SequentialSampler",
           "SubsetRandomSampler", "WeightedRandomSampler"]
