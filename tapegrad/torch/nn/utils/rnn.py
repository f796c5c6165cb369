"""``torch.nn.utils.rnn``: packed variable-length sequences for the recurrent layers.

A :class:`PackedSequence` stores the time steps of a batch of sequences one
after another, each step holding only the sequences still running
(``batch_sizes[t]`` of them, longest first), as PyTorch does; ``RNN``,
``LSTM`` and ``GRU`` accept one and return one, and each sequence's final
state is taken at its own last step.

>>> import tapegrad.torch as torch
>>> from tapegrad.torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence
>>> x = torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 0.0]]).unsqueeze(-1)
>>> p = pack_padded_sequence(x, [3, 2], batch_first=True)
>>> p.batch_sizes
tensor([2, 2, 1])
>>> pad_packed_sequence(p, batch_first=True)[1]
tensor([3, 2])
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np

from .... import ops as core
from ...._core.errors import hinted, with_hint
from ...._core.tensor import TORCH, Tensor, make

__all__ = ["PackedSequence", "pack_padded_sequence", "pad_packed_sequence", "pad_sequence",
           "pack_sequence", "unpad_sequence", "unpack_sequence"]


def _long(a: Any) -> Tensor:
    return make(np.asarray(a, dtype=np.int64), None, False, TORCH)


class PackedSequence(NamedTuple):
    """``(data, batch_sizes, sorted_indices, unsorted_indices)``, PyTorch's layout."""

    data: Tensor
    batch_sizes: Tensor
    sorted_indices: Tensor | None = None
    unsorted_indices: Tensor | None = None

    def to(self, *args: Any, **kwargs: Any) -> PackedSequence:
        return self._replace(data=self.data.to(*args, **kwargs))  # type: ignore[attr-defined]

    def double(self) -> PackedSequence:
        return self._replace(data=core.cast(self.data, dtype=np.float64))

    def float(self) -> PackedSequence:
        return self._replace(data=core.cast(self.data, dtype=np.float32))

    @property
    def is_cuda(self) -> bool:
        return False


def _lengths(lengths: Any) -> np.ndarray:
    if isinstance(lengths, Tensor):
        return lengths._data.astype(np.int64, copy=False).reshape(-1)  # keeps a trace's mark
    return np.asarray(list(lengths), dtype=np.int64).reshape(-1)


def pack_padded_sequence(input: Tensor, lengths: Any, batch_first: bool = False,
                         enforce_sorted: bool = True) -> PackedSequence:
    """Pack a padded batch ``(T, B, *)`` (``batch_first``: ``(B, T, *)``) of sequences."""
    ln = _lengths(lengths)
    x = core.swapaxes(input, 0, 1) if batch_first else input
    if enforce_sorted:
        if np.any(np.diff(ln) > 0):
            raise hinted(RuntimeError(with_hint(
                "`lengths` array must be sorted in decreasing order when `enforce_sorted` is "
                "True. You can pass `enforce_sorted=False` to pack_padded_sequence and/or "
                "pack_sequence to sidestep this requirement if you do not need ONNX "
                "exportability.", f"lengths {ln.tolist()}")))
        order = None
    else:
        order = np.argsort(-ln, kind="stable")
        ln = ln[order]
        x = core.take(x, order, axis=1)
    if ln.size and ln[-1] <= 0:
        raise hinted(RuntimeError(with_hint(
            "Length of all samples has to be greater than 0, but found an element in "
            "'lengths' that is <= 0", f"lengths {ln.tolist()}")))
    steps = int(ln[0]) if ln.size else 0
    if steps > x._data.shape[0]:
        raise hinted(RuntimeError(with_hint(
            f"Start ({steps - 1}) + Length (1) exceeds dimension size ({x._data.shape[0]}).",
            "a length is longer than the padded input")))
    sizes = np.array([int(np.sum(ln > t)) for t in range(steps)], dtype=np.int64)
    data = core.concatenate([core.getitem(x, (t, slice(0, int(b)))) for t, b in
                             enumerate(sizes)], axis=0)
    if order is None:
        return PackedSequence(data, _long(sizes))
    return PackedSequence(data, _long(sizes), _long(order), _long(np.argsort(order)))


def pad_packed_sequence(sequence: PackedSequence, batch_first: bool = False,
                        padding_value: float = 0.0,
                        total_length: int | None = None) -> tuple[Tensor, Tensor]:
    """The padded batch ``(T, B, *)`` (or ``(B, T, *)``) and each sequence's length."""
    data, sizes = sequence.data, np.asarray(sequence.batch_sizes._data, dtype=np.int64)
    steps = len(sizes)
    b = int(sizes[0]) if steps else 0
    if total_length is not None and total_length < steps:
        raise ValueError(f"Expected total_length to be at least the length of the longest "
                         f"sequence in input, but got total_length={total_length} and max "
                         f"sequence length being {steps}")
    t_out = steps if total_length is None else int(total_length)
    feat = data._data.shape[1:]
    rows, cols = [], []
    for t, bt in enumerate(sizes):
        rows.append(np.full(int(bt), t))
        cols.append(np.arange(int(bt)))
    r = np.concatenate(rows) if rows else np.zeros(0, dtype=np.int64)
    c = np.concatenate(cols) if cols else np.zeros(0, dtype=np.int64)
    padded = core.index_add_zeros(data, index=(r, c), shape=(t_out, b) + feat)
    if padding_value != 0:
        filled = np.zeros((t_out, b) + feat, dtype=bool)
        filled[r, c] = True
        padded = core.add(padded, np.where(filled, 0.0, padding_value).astype(
            data._data.dtype))
    lengths = np.array([int(np.sum(sizes > i)) for i in range(b)], dtype=np.int64)
    if sequence.unsorted_indices is not None:
        inv = np.asarray(sequence.unsorted_indices._data)
        padded = core.take(padded, inv, axis=1)
        lengths = lengths[inv]
    if batch_first:
        padded = core.swapaxes(padded, 0, 1)
    return padded, _long(lengths)


def pad_sequence(sequences: Sequence[Tensor], batch_first: bool = False,
                 padding_value: float = 0.0, padding_side: str = "right") -> Tensor:
    """Stack sequences of different lengths ``(L_i, *)`` into ``(T, B, *)``, padded."""
    seqs = list(sequences)
    t_max = max(s._data.shape[0] for s in seqs)
    padded = []
    for s in seqs:
        extra = t_max - s._data.shape[0]
        width = ((0, extra) if padding_side == "right" else (extra, 0),) + \
            ((0, 0),) * (s._data.ndim - 1)
        padded.append(core.pad(s, width, constant_values=padding_value))
    return core.stack(padded, axis=0 if batch_first else 1)


def pack_sequence(sequences: Sequence[Tensor], enforce_sorted: bool = True) -> PackedSequence:
    """Pack a list of sequences ``(L_i, *)`` (longest first unless ``enforce_sorted=False``)."""
    lengths = [s._data.shape[0] for s in sequences]
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)


def unpad_sequence(padded_sequences: Tensor, lengths: Any,
                   batch_first: bool = False) -> list[Tensor]:
    """The sequences of a padded batch, each cut to its length."""
    x = padded_sequences if batch_first else core.swapaxes(padded_sequences, 0, 1)
    return [core.getitem(x, (i, slice(0, int(n)))) for i, n in enumerate(_lengths(lengths))]


def unpack_sequence(packed_sequences: PackedSequence) -> list[Tensor]:
    """The sequences of a packed batch, in their original order."""
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)
