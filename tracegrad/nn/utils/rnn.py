"""Variable-length sequences for the recurrent layers (torch.nn.utils.rnn).

A `PackedSequence` holds the time steps of a batch of sequences sorted by decreasing
length, step after step: ``data`` is (sum(batch_sizes), *), and ``batch_sizes[t]`` is how
many sequences are still running at step t.  Packing and padding are written with
differentiable ops (slices, `cat`, `index_select`), so gradients flow through them as in
torch.  ``batch_sizes`` and the lengths are read on the host (they decide shapes), as
torch keeps them on the CPU.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from tracegrad.ir import types as T

from ... import _creation, _ops
from ...tensor import Tensor


def _host_ints(values, what: str) -> np.ndarray:
    """Integer values of a list or CPU tensor as an int64 NumPy vector."""
    if isinstance(values, Tensor):
        if values.dtype.is_floating_point or values.dtype.is_complex:
            raise TypeError(f"{what}: expected an integer tensor, got {values.dtype.name}")
        return np.asarray(values.numpy(), dtype=np.int64).reshape(-1)
    return np.asarray(list(values), dtype=np.int64).reshape(-1)


def invert_permutation(permutation: Tensor | None) -> Tensor | None:
    """The inverse of a permutation vector, or None (torch.nn.utils.rnn.invert_permutation)."""
    if permutation is None:
        return None
    perm = _host_ints(permutation, "invert_permutation")
    inverse = np.empty_like(perm)
    inverse[perm] = np.arange(perm.size)
    return _creation.tensor(inverse, dtype=T.int64)


class _PackedFields(NamedTuple):
    data: Tensor
    batch_sizes: Tensor
    sorted_indices: Tensor | None
    unsorted_indices: Tensor | None


class PackedSequence(_PackedFields):
    """(data, batch_sizes, sorted_indices, unsorted_indices) (torch.nn.utils.rnn.PackedSequence).

    Made by `pack_padded_sequence` / `pack_sequence`, taken by `nn.RNN`, `nn.LSTM`,
    `nn.GRU`.  ``batch_sizes`` is int64 (T,); ``sorted_indices`` maps sorted position to
    the original batch index (None when the batch was already sorted); ``unsorted_indices``
    is its inverse.  ``PackedSequence((data, batch_sizes))`` is accepted as in torch.
    """

    __slots__ = ()

    def __new__(cls, data, batch_sizes=None, sorted_indices=None, unsorted_indices=None):
        if unsorted_indices is None:
            unsorted_indices = invert_permutation(sorted_indices)
        if batch_sizes is None:
            if not (isinstance(data, (list, tuple)) and len(data) == 2):
                raise TypeError("PackedSequence: expected (data, batch_sizes) or a "
                                "(data, batch_sizes) pair")
            data, batch_sizes = data
        return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)

    def _with_data(self, data: Tensor) -> "PackedSequence":
        return type(self)(data, self.batch_sizes, self.sorted_indices, self.unsorted_indices)

    def to(self, *args, **kwargs) -> "PackedSequence":
        """`data.to(...)`; the index tensors stay int64 on the CPU, as torch."""
        data = self.data.to(*args, **kwargs)
        return self if data is self.data else self._with_data(data)

    def cpu(self) -> "PackedSequence":
        return self

    def double(self) -> "PackedSequence":
        return self.to(T.float64)

    def float(self) -> "PackedSequence":
        return self.to(T.float32)

    def half(self) -> "PackedSequence":
        return self.to(T.float16)

    @property
    def is_cuda(self) -> bool:
        return False

    def is_pinned(self) -> bool:
        return False


def _batch_sizes(lengths: np.ndarray) -> np.ndarray:
    """batch_sizes[t] = number of lengths > t, for lengths sorted in decreasing order."""
    return (lengths[None, :] > np.arange(int(lengths[0]))[:, None]).sum(1).astype(np.int64)


def pack_padded_sequence(input: Tensor, lengths, batch_first: bool = False,
                         enforce_sorted: bool = True) -> PackedSequence:
    """Pack a padded (T, B, *) batch (B, T, * with ``batch_first``) of sequences of the given
    `lengths` (list or CPU integer tensor) (torch.nn.utils.rnn.pack_padded_sequence).

    With ``enforce_sorted=False`` the batch is sorted by decreasing length first (stable:
    equal lengths keep their order) and the permutation is kept in the result.

    Raises:
        RuntimeError: unsorted lengths with ``enforce_sorted``, a length <= 0 or longer than
            the input, or len(lengths) != the batch size (torch's messages).
    """
    lens = _host_ints(lengths, "pack_padded_sequence")
    sorted_indices = None
    if not enforce_sorted:
        order = np.argsort(-lens, kind="stable")
        lens = lens[order]
        sorted_indices = _creation.tensor(order, dtype=T.int64)
        input = _ops.index_select(input, 0 if batch_first else 1, sorted_indices)
    if batch_first:
        input = input.transpose(0, 1)
    if lens.size != input.shape[1]:
        raise RuntimeError(f"Expected `len(lengths)` to be equal to batch_size, but got "
                           f"{lens.size} (batch_size={input.shape[1]})")
    if lens.size and lens.min() <= 0:
        raise RuntimeError("Length of all samples has to be greater than 0, but found an "
                           "element in 'lengths' that is <= 0")
    if enforce_sorted and np.any(lens[1:] > lens[:-1]):
        raise RuntimeError("`lengths` array must be sorted in decreasing order when "
                           "`enforce_sorted` is True. You can pass `enforce_sorted=False` to "
                           "pack_padded_sequence and/or pack_sequence to sidestep this "
                           "requirement if you do not need ONNX exportability.")
    if lens[0] > input.shape[0]:
        raise RuntimeError(f"pack_padded_sequence: a length {int(lens[0])} is longer than "
                           f"the padded input ({input.shape[0]} steps)")
    sizes = _batch_sizes(lens)
    steps = [input[t, :int(bs)] for t, bs in enumerate(sizes)]
    data = steps[0] if len(steps) == 1 else _ops.cat(steps, 0)
    return PackedSequence(data, _creation.tensor(sizes, dtype=T.int64), sorted_indices, None)


def pad_packed_sequence(sequence: PackedSequence, batch_first: bool = False,
                        padding_value: float = 0.0, total_length: int | None = None):
    """Undo `pack_padded_sequence`: (padded (T, B, *) or (B, T, *), lengths int64 (B,)), in
    the batch's original order (torch.nn.utils.rnn.pad_packed_sequence).

    Raises:
        ValueError: `total_length` shorter than the longest sequence (torch's message).
    """
    sizes = _host_ints(sequence.batch_sizes, "pad_packed_sequence")
    steps = int(sizes.size)
    if total_length is not None:
        if total_length < steps:
            raise ValueError("Expected total_length to be at least the length of the longest "
                             f"sequence in input, but got total_length={total_length} and max "
                             f"sequence length being {steps}")
    length = steps if total_length is None else int(total_length)
    data = sequence.data
    batch, tail = int(sizes[0]), tuple(data.shape[1:])
    pieces, offset = [], 0
    for bs in sizes.tolist():
        pieces.append(data[offset:offset + bs])
        if bs < batch:
            pieces.append(_creation.full((batch - bs,) + tail, padding_value, dtype=data.dtype))
        offset += bs
    if length > steps:
        pieces.append(_creation.full(((length - steps) * batch,) + tail, padding_value,
                                     dtype=data.dtype))
    padded = _ops.cat(pieces, 0).reshape((length, batch) + tail)
    lengths = (sizes[None, :] > np.arange(batch)[:, None]).sum(1).astype(np.int64)
    if batch_first:
        padded = padded.transpose(0, 1)
    if sequence.unsorted_indices is not None:
        unsorted = sequence.unsorted_indices
        padded = _ops.index_select(padded, 0 if batch_first else 1, unsorted)
        lengths = lengths[_host_ints(unsorted, "pad_packed_sequence")]
    return padded, _creation.tensor(lengths, dtype=T.int64)


def pad_sequence(sequences, batch_first: bool = False, padding_value: float = 0.0,
                 padding_side: str = "right") -> Tensor:
    """Stack tensors (L_i, *) into (T, B, *) (or (B, T, *)), filling with `padding_value` on
    the `padding_side` ("right" or "left") (torch.nn.utils.rnn.pad_sequence).

    Raises:
        RuntimeError: `sequences` not iterable, empty, trailing shapes that differ, or
            another padding_side (torch's messages but the shape one).
    """
    if isinstance(sequences, Tensor):
        sequences = sequences.unbind(0)
    try:
        seqs = list(sequences)
    except TypeError:
        raise RuntimeError("pad_sequence: Expected iterable for input sequences, but got arg "
                           f"of type: {type(sequences)}") from None
    if padding_side not in ("left", "right"):
        raise RuntimeError(f"Expected padding_side to be one of left or right, but got "
                         f"{padding_side}.")
    if not seqs:
        raise RuntimeError("received an empty list of sequences")
    tail = tuple(seqs[0].shape[1:])
    for s in seqs:
        if s.ndim == 0 or tuple(s.shape[1:]) != tail:
            raise RuntimeError(f"pad_sequence: every sequence must be (L, {', '.join(map(str, tail))})"
                               f" like the first, got {list(s.shape)}")
    length = max(s.shape[0] for s in seqs)
    rows = []
    for s in seqs:
        short = length - s.shape[0]
        if short:
            fill = _creation.full((short,) + tail, padding_value, dtype=s.dtype)
            s = _ops.cat([s, fill] if padding_side == "right" else [fill, s], 0)
        rows.append(s)
    return _ops.stack(rows, 0 if batch_first else 1)


def unpad_sequence(padded_sequences: Tensor, lengths, batch_first: bool = False) -> list:
    """The list of unpadded sequences (torch.nn.utils.rnn.unpad_sequence)."""
    if not batch_first:
        padded_sequences = padded_sequences.transpose(0, 1)
    lens = _host_ints(lengths, "unpad_sequence")
    return [padded_sequences[i, :int(n)] for i, n in enumerate(lens)]


def pack_sequence(sequences, enforce_sorted: bool = True) -> PackedSequence:
    """Pack a list of (L_i, *) tensors (torch.nn.utils.rnn.pack_sequence)."""
    seqs = list(sequences)
    lengths = [s.shape[0] for s in seqs]
    return pack_padded_sequence(pad_sequence(seqs), lengths, enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences: PackedSequence) -> list:
    """The list of sequences a PackedSequence holds (torch.nn.utils.rnn.unpack_sequence)."""
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)


__all__ = ["PackedSequence", "invert_permutation", "pack_padded_sequence", "pack_sequence",
           "pad_packed_sequence", "pad_sequence", "unpack_sequence", "unpad_sequence"]
