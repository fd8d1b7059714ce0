"""Datasets (torch.utils.data.dataset): Dataset, IterableDataset, TensorDataset, Subset,
ConcatDataset, ChainDataset, StackDataset and random_split.

A map-style dataset is anything with ``__getitem__`` and ``__len__`` (a NumPy array, a
list, a `range` work too); an iterable one yields its samples from ``__iter__``.
"""
from __future__ import annotations

import bisect
import math
import warnings

import numpy as np

from ... import _creation, _generator
from ...tensor import Tensor


class Dataset:
    """A map-style dataset (torch.utils.data.Dataset): subclasses implement
    ``__getitem__(index)`` and usually ``__len__``; ``a + b`` concatenates two.

    Optionally ``__getitems__(indices)`` returns a list of samples at once; DataLoader
    then calls it instead of one ``__getitem__`` per index (as torch).
    """

    def __getitem__(self, index):
        raise NotImplementedError("Subclasses of Dataset should implement __getitem__.")

    def __add__(self, other: "Dataset") -> "ConcatDataset":
        return ConcatDataset([self, other])


class IterableDataset(Dataset):
    """A dataset of a stream of samples (torch.utils.data.IterableDataset): subclasses
    implement ``__iter__``.  With worker processes each worker iterates its own copy;
    split the work by `get_worker_info()` in ``__iter__`` (as torch), or every worker
    yields the whole stream.

    Raises:
        TypeError: instantiating a subclass without ``__iter__`` (torch's words).
    """

    def __new__(cls, *args, **kwargs):
        if cls.__iter__ is IterableDataset.__iter__:
            raise TypeError(f"Can't instantiate abstract class {cls.__name__} with abstract "
                            "method __iter__")
        return super().__new__(cls)

    def __iter__(self):   # replaced by subclasses; __new__ refuses a class without one
        raise NotImplementedError("Subclasses of IterableDataset should implement __iter__.")

    def __add__(self, other) -> "ChainDataset":
        return ChainDataset([self, other])


class TensorDataset(Dataset):
    """Samples ``tuple(t[i] for t in tensors)`` of tensors (or NumPy arrays) sharing their
    first dimension (torch.utils.data.TensorDataset).

    Raises:
        AssertionError: first dimensions that differ (torch raises AssertionError too).
    """

    def __init__(self, *tensors):
        if any(t.shape[0] != tensors[0].shape[0] for t in tensors):
            raise AssertionError("Size mismatch between tensors")
        self.tensors = tensors

    def __getitem__(self, index):
        return tuple(_row(t, index) for t in self.tensors)

    def __len__(self) -> int:
        return self.tensors[0].shape[0]


def _row(t, index):
    """``t[index]``; for a NumPy-backed tensor outside autograd, read from its array directly
    (the same values without a recorded indexing op: a DataLoader reads every row so)."""
    if isinstance(t, Tensor) and isinstance(t._data, np.ndarray) and not t.requires_grad \
            and isinstance(index, (int, np.integer)):
        return Tensor(np.asarray(t._data[index]))
    return t[index]


class StackDataset(Dataset):
    """Samples that zip several datasets of one length: a tuple for positional datasets, a
    dict for keyword ones (torch.utils.data.StackDataset).

    Raises:
        ValueError: both kinds, none, or datasets of different lengths (torch's words).
    """

    def __init__(self, *args, **kwargs):
        if args and kwargs:
            raise ValueError("Supported either ``tuple``- (via ``args``) or``dict``- (via "
                             "``kwargs``) like input/output, but both types are given.")
        datasets = args or tuple(kwargs.values())
        if not datasets:
            raise ValueError("At least one dataset should be passed")
        if any(len(d) != len(datasets[0]) for d in datasets):
            raise ValueError("Size mismatch between datasets")
        self._length = len(datasets[0])
        self.datasets = args if args else kwargs

    def __getitem__(self, index):
        if isinstance(self.datasets, dict):
            return {k: d[index] for k, d in self.datasets.items()}
        return tuple(d[index] for d in self.datasets)

    def __len__(self) -> int:
        return self._length


class ConcatDataset(Dataset):
    """Map-style datasets one after another (torch.utils.data.ConcatDataset).

    Attributes: `datasets`, `cumulative_sizes` (the running totals of their lengths).
    Raises:
        AssertionError: no datasets, or an IterableDataset among them (torch's words).
        ValueError: a negative index past the start.
    """

    def __init__(self, datasets):
        self.datasets = list(datasets)
        if not self.datasets:
            raise AssertionError("datasets should not be an empty iterable")
        if any(isinstance(d, IterableDataset) for d in self.datasets):
            raise AssertionError("ConcatDataset does not support IterableDataset")
        self.cumulative_sizes, total = [], 0
        for d in self.datasets:
            total += len(d)
            self.cumulative_sizes.append(total)

    def __len__(self) -> int:
        return self.cumulative_sizes[-1]

    def __getitem__(self, idx):
        if idx < 0:
            if -idx > len(self):
                raise ValueError("absolute value of index should not exceed dataset length")
            idx = len(self) + idx
        which = bisect.bisect_right(self.cumulative_sizes, idx)
        start = self.cumulative_sizes[which - 1] if which > 0 else 0
        return self.datasets[which][idx - start]


class ChainDataset(IterableDataset):
    """Iterable datasets one after another (torch.utils.data.ChainDataset)."""

    def __init__(self, datasets):
        self.datasets = datasets

    def __iter__(self):
        for d in self.datasets:
            yield from d

    def __len__(self) -> int:
        return sum(len(d) for d in self.datasets)


class Subset(Dataset):
    """The samples of `dataset` at `indices`, in that order (torch.utils.data.Subset)."""

    def __init__(self, dataset, indices):
        self.dataset, self.indices = dataset, indices

    def __getitem__(self, idx):
        if isinstance(idx, list):
            return self.dataset[[self.indices[i] for i in idx]]
        return self.dataset[self.indices[idx]]

    def __getitems__(self, indices):
        inner = getattr(self.dataset, "__getitems__", None)
        if inner is not None:
            return inner([self.indices[i] for i in indices])
        return [self.dataset[self.indices[i]] for i in indices]

    def __len__(self) -> int:
        return len(self.indices)


def _fraction_lengths(n: int, fractions) -> list[int]:
    """torch's split of `n` by fractions summing to 1: floors, then the remainder handed out
    one at a time, round robin from the first split (with its warning for an empty one)."""
    lengths = [int(math.floor(n * f)) for f in fractions]
    for i in range(n - sum(lengths)):
        lengths[i % len(lengths)] += 1
    for i, length in enumerate(lengths):
        if length == 0:
            warnings.warn(f"Length of split at index {i} is 0. This might result in an empty "
                          "dataset.", stacklevel=3)
    return lengths


def random_split(dataset, lengths, generator=None) -> list[Subset]:
    """Disjoint random Subsets of `dataset` with the given `lengths`, or fractions of its
    length summing to 1 (torch.utils.data.random_split; the fraction rounding is torch's).
    The permutation comes from `generator` (default: the global one), so it repeats under
    `tg.manual_seed`, though not torch's permutation.

    Raises:
        ValueError: a fraction outside [0, 1], or lengths not summing to the dataset's
            length (torch's words).
    """
    n = len(dataset)
    lengths = list(lengths)
    if math.isclose(sum(lengths), 1) and sum(lengths) <= 1:
        for i, frac in enumerate(lengths):
            if frac < 0 or frac > 1:
                raise ValueError(f"Fraction at index {i} is not between 0 and 1")
        lengths = _fraction_lengths(n, lengths)
    if sum(lengths) != n:
        raise ValueError("Sum of input lengths does not equal the length of the input dataset!")
    gen = _generator.generator_of("random_split", generator)
    order = _creation.randperm(n, generator=gen).tolist()
    out, offset = [], 0
    for length in lengths:
        out.append(Subset(dataset, order[offset:offset + length]))
        offset += length
    return out


__all__ = ["ChainDataset", "ConcatDataset", "Dataset", "IterableDataset", "StackDataset",
           "Subset", "TensorDataset", "random_split"]
