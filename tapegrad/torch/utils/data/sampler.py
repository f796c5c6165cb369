"""``torch.utils.data`` samplers, drawing as PyTorch draws.

``RandomSampler`` without a generator seeds a fresh generator from one
64-bit draw of the default generator, then takes ``randperm``; with
``torch.manual_seed(s)`` the order equals PyTorch's.

>>> import tapegrad.torch as torch
>>> from tapegrad.torch.utils.data import RandomSampler, BatchSampler
>>> list(RandomSampler(range(5), generator=torch.Generator().manual_seed(0)))
[4, 0, 1, 3, 2]
>>> list(BatchSampler(range(5), batch_size=2, drop_last=False))
[[0, 1], [2, 3], [4]]
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator, Sequence, Sized
from typing import Any, Generic, TypeVar

import numpy as np

from ...._core.tensor import Tensor
from ... import _random
from .dataset import torch_repr

T_co = TypeVar("T_co", covariant=True)

__all__ = ["Sampler", "SequentialSampler", "RandomSampler", "SubsetRandomSampler",
           "WeightedRandomSampler", "BatchSampler"]


def random_int64(generator: _random.Generator | None) -> int:
    """``torch.empty((), dtype=torch.int64).random_(generator=g).item()``: one 64-bit draw
    modulo 2**63."""
    return int(_random.gen(generator)._u64(1)[0]) % (1 << 63)


class Sampler(Generic[T_co]):
    """Base class: an iterable over dataset indices (or lists of indices)."""

    def __init__(self, data_source: Sized | None = None) -> None:
        pass

    def __iter__(self) -> Iterator[T_co]:
        raise NotImplementedError

    __repr__ = torch_repr


class SequentialSampler(Sampler[int]):
    """``0, 1, ..., len(data_source) - 1``."""

    def __init__(self, data_source: Sized) -> None:
        self.data_source = data_source

    def __iter__(self) -> Iterator[int]:
        return iter(range(len(self.data_source)))

    def __len__(self) -> int:
        return len(self.data_source)


class RandomSampler(Sampler[int]):
    """A random order (``randperm``) or, with ``replacement=True``, ``randint`` draws in
    blocks of 32, exactly as PyTorch's sampler draws them.

    Parameters
    ----------
    data_source : sized
        The dataset.
    replacement : bool
        Draw with replacement.
    num_samples : int, optional
        Number of indices per epoch (default ``len(data_source)``).
    generator : torch.Generator, optional
        Source of randomness; without one, each epoch seeds a new generator from the
        default generator.
    """

    def __init__(self, data_source: Sized, replacement: bool = False,
                 num_samples: int | None = None, generator: Any = None) -> None:
        self.data_source = data_source
        self.replacement = replacement
        self._num_samples = num_samples
        self.generator = generator
        if not isinstance(self.replacement, bool):
            raise TypeError("replacement should be a boolean value, but got "
                            f"replacement={self.replacement}")
        if not isinstance(self.num_samples, int) or self.num_samples <= 0:
            raise ValueError("num_samples should be a positive integer value, but got "
                             f"num_samples={self.num_samples}")

    @property
    def num_samples(self) -> int:
        if self._num_samples is None:
            return len(self.data_source)
        return self._num_samples

    def __iter__(self) -> Iterator[int]:
        for block in self._blocks():
            yield from block

    def _blocks(self) -> Iterator[list[int]]:
        """The epoch's indices as the lists PyTorch draws them in (one ``randperm`` per pass,
        or blocks of 32 ``randint`` draws), each drawn when the first of its indices is
        needed, as ``__iter__`` draws them."""
        n = len(self.data_source)
        private = self.generator is None
        if private:
            generator = _random.Generator().manual_seed(random_int64(None))
        else:
            generator = self.generator
        if self.replacement:
            for _ in range(self.num_samples // 32):
                yield generator.integers(32, 0, n).tolist()
            yield generator.integers(self.num_samples % 32, 0, n).tolist()
        else:
            for _ in range(self.num_samples // n):
                yield generator.permutation(n).tolist()
            if self.num_samples % n or not private:
                # PyTorch draws this last permutation even to keep none of it: it moves a
                # caller's generator on; a private one nobody sees, so it is skipped then
                yield generator.permutation(n).tolist()[: self.num_samples % n]

    def __len__(self) -> int:
        return self.num_samples


class SubsetRandomSampler(Sampler[int]):
    """The given indices in a random order (``randperm`` of their count)."""

    def __init__(self, indices: Sequence[int], generator: Any = None) -> None:
        self.indices = indices
        self.generator = generator

    def __iter__(self) -> Iterator[int]:
        for i in _random.gen(self.generator).permutation(len(self.indices)).tolist():
            yield self.indices[i]

    def __len__(self) -> int:
        return len(self.indices)


def multinomial(weights: np.ndarray, num_samples: int, replacement: bool,
                generator: _random.Generator | None) -> np.ndarray:
    """Indices drawn with probabilities proportional to ``weights`` (1-D, float64).

    Both of PyTorch's CPU methods, on its generator stream, so the draws equal
    ``torch.multinomial``'s: with replacement and more than one sample, a
    normalised running sum, one double uniform per sample and a binary search;
    otherwise (and for a single sample) the weights divided by ``Exp(1)`` noise
    (``-log1p(-u)`` from double uniforms, as PyTorch's ``exponential_``) and
    the top ``num_samples`` taken.
    """
    g = _random.gen(generator)
    w = np.asarray(weights, dtype=np.float64)
    if (w < 0).any() or not np.isfinite(w).all():
        raise RuntimeError("invalid multinomial distribution (encountering probability "
                           "entry < 0)")
    if not w.sum() > 0:
        raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
    if not replacement and num_samples > w.size:
        raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without "
                           "replacement")
    if replacement and num_samples > 1:
        cum = np.cumsum(w)  # sequential sums, as the kernel's loop
        cum = cum / cum[-1]
        cum[-1] = 1.0
        u = g.uniform(num_samples, np.dtype(np.float64))
        return np.searchsorted(cum, u, side="left").astype(np.int64)
    u = g.uniform(w.size, np.dtype(np.float64))
    q = w / -np.log1p(-u)
    return np.argsort(-q, kind="stable")[:num_samples].astype(np.int64)


class WeightedRandomSampler(Sampler[int]):
    """``num_samples`` indices drawn with probabilities proportional to ``weights``.

    The draws equal PyTorch's under the same seed, with or without replacement.
    """

    def __init__(self, weights: Sequence[float], num_samples: int, replacement: bool = True,
                 generator: Any = None) -> None:
        if not isinstance(num_samples, int) or isinstance(num_samples, bool) \
                or num_samples <= 0:
            raise ValueError("num_samples should be a positive integer value, but got "
                             f"num_samples={num_samples}")
        if not isinstance(replacement, bool):
            raise ValueError("replacement should be a boolean value, but got "
                             f"replacement={replacement}")
        w = weights._data if isinstance(weights, Tensor) else weights
        arr = np.asarray(w, dtype=np.float64)
        if arr.ndim != 1:
            raise ValueError("weights should be a 1d sequence but given weights have shape "
                             f"{tuple(arr.shape)}")
        from ... import _tensor

        self.weights = _tensor.as_tensor(arr)
        self.num_samples = num_samples
        self.replacement = replacement
        self.generator = generator

    def __iter__(self) -> Iterator[int]:
        yield from multinomial(self.weights._data, self.num_samples, self.replacement,
                               self.generator).tolist()

    def __len__(self) -> int:
        return self.num_samples


class BatchSampler(Sampler[list[int]]):
    """Lists of ``batch_size`` indices from ``sampler`` (the last one shorter unless
    ``drop_last``)."""

    def __init__(self, sampler: Sampler[Any] | Iterable[Any], batch_size: int,
                 drop_last: bool) -> None:
        if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size <= 0:
            raise ValueError("batch_size should be a positive integer value, but got "
                             f"batch_size={batch_size}")
        if not isinstance(drop_last, bool):
            raise ValueError(f"drop_last should be a boolean value, but got drop_last={drop_last}")
        self.sampler = sampler
        self.batch_size = batch_size
        self.drop_last = drop_last

    def __iter__(self) -> Iterator[list[int]]:
        blocks = _index_blocks(self.sampler)
        if blocks is not None:  # slices of whole lists of indices instead of one at a time
            yield from _batched(blocks, self.batch_size, self.drop_last)
            return
        it = iter(self.sampler)
        if self.drop_last:
            for full in zip(*([it] * self.batch_size)):
                yield [*full]
        else:
            batch = [*itertools.islice(it, self.batch_size)]
            while batch:
                yield batch
                batch = [*itertools.islice(it, self.batch_size)]

    def __len__(self) -> int:
        n = len(self.sampler)  # type: ignore[arg-type]
        if self.drop_last:
            return n // self.batch_size
        return (n + self.batch_size - 1) // self.batch_size


def _index_blocks(sampler: Any) -> Iterator[list[int]] | None:
    """The indices of a built-in sampler (not one whose iteration a subclass changed) as
    lists, drawn at the moments its ``__iter__`` would draw them; ``None`` for others."""
    cls = type(sampler)
    if isinstance(sampler, RandomSampler) and cls.__iter__ is RandomSampler.__iter__:
        return sampler._blocks()
    if isinstance(sampler, SequentialSampler) and cls.__iter__ is SequentialSampler.__iter__:
        return iter([list(range(len(sampler.data_source)))])
    return None


def _batched(blocks: Iterator[list[int]], size: int, drop_last: bool) -> Iterator[list[int]]:
    """``BatchSampler``'s lists over the concatenated blocks: a block is taken only when
    the next list needs one of its indices, as the element-wise loop takes it."""
    buf: list[int] = []
    pos = 0
    for block in blocks:
        buf = buf[pos:] + block if pos or buf else block
        pos = 0
        while len(buf) - pos >= size:
            yield buf[pos:pos + size]
            pos += size
    if pos < len(buf) and not drop_last:
        yield buf[pos:]
