"""``torch.utils.data`` datasets: ``Dataset``, ``IterableDataset``, ``TensorDataset``,
``Subset``, ``ConcatDataset``, ``ChainDataset``, ``StackDataset`` and ``random_split``.

``random_split`` draws its permutation with PyTorch's ``randperm`` from the
given generator, so ``random_split(ds, [3, 7], generator=torch.Generator().manual_seed(42))``
selects the same indices as PyTorch.

>>> import tapegrad.torch as torch
>>> from tapegrad.torch.utils.data import random_split
>>> a, b = random_split(range(10), [3, 7], generator=torch.Generator().manual_seed(42))
>>> list(a), len(b)
([2, 6, 1], 7)
"""

from __future__ import annotations

import bisect
import itertools
import math
import warnings
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, Generic, TypeVar

from ...._core.tensor import Tensor
from ... import _random

T_co = TypeVar("T_co", covariant=True)


def torch_repr(obj: object) -> str:
    """``<torch.utils.data.dataset.TensorDataset object at 0x...>``: the default repr with
    tapegrad's module path shown as PyTorch's (a user's subclass keeps its own module)."""
    mod = type(obj).__module__
    if mod.startswith("tapegrad.torch."):
        mod = "torch." + mod[len("tapegrad.torch."):]
    return f"<{mod}.{type(obj).__qualname__} object at {hex(id(obj))}>"

__all__ = ["Dataset", "IterableDataset", "TensorDataset", "StackDataset", "ConcatDataset",
           "ChainDataset", "Subset", "random_split"]


class Dataset(Generic[T_co]):
    """A map-style dataset: subclasses define ``__getitem__`` (and usually ``__len__``).

    >>> from tapegrad.torch.utils.data import Dataset
    >>> class Squares(Dataset):
    ...     def __len__(self): return 4
    ...     def __getitem__(self, i): return i * i
    >>> (Squares() + Squares())[5]
    1
    """

    def __getitem__(self, index: Any) -> T_co:
        raise NotImplementedError("Subclasses of Dataset should implement __getitem__.")

    def __add__(self, other: Dataset[Any]) -> ConcatDataset[Any]:
        return ConcatDataset([self, other])

    __repr__ = torch_repr


class IterableDataset(Dataset[T_co]):
    """A stream-style dataset: subclasses define ``__iter__``.

    With ``num_workers > 0`` every worker process iterates its own copy; use
    :func:`get_worker_info` inside ``__iter__`` to split the work, as in PyTorch.
    """

    def __iter__(self) -> Iterator[T_co]:
        raise NotImplementedError("Subclasses of IterableDataset should implement __iter__.")

    def __add__(self, other: Dataset[Any]) -> ChainDataset:  # type: ignore[override]
        return ChainDataset([self, other])


class TensorDataset(Dataset[tuple[Tensor, ...]]):
    """Samples are tuples ``(t0[i], t1[i], ...)`` of tensors sharing their first dimension.

    >>> import tapegrad.torch as torch
    >>> from tapegrad.torch.utils.data import TensorDataset
    >>> ds = TensorDataset(torch.arange(3), torch.tensor([1.0, 2.0, 3.0]))
    >>> len(ds), ds[1]
    (3, (tensor(1), tensor(2.)))
    """

    tensors: tuple[Tensor, ...]

    def __init__(self, *tensors: Tensor) -> None:
        if any(tensors[0].size(0) != t.size(0) for t in tensors):
            raise AssertionError("Size mismatch between tensors")
        self.tensors = tensors

    def __getitem__(self, index: Any) -> tuple[Tensor, ...]:
        return tuple(t[index] for t in self.tensors)

    def __len__(self) -> int:
        return int(self.tensors[0].size(0))


class StackDataset(Dataset[Any]):
    """Samples stacked from several datasets of equal length, as a tuple (positional
    arguments) or a dict (keyword arguments)."""

    def __init__(self, *args: Dataset[Any], **kwargs: Dataset[Any]) -> None:
        if args:
            if kwargs:
                raise ValueError("Supported either ``tuple``- (via ``args``) or"
                                 "``dict``- (via ``kwargs``) like input/output, but both "
                                 "types are given.")
            self._length = len(args[0])  # type: ignore[arg-type]
            if any(self._length != len(d) for d in args):  # type: ignore[arg-type]
                raise ValueError("Size mismatch between datasets")
            self.datasets: Any = args
        elif kwargs:
            tmp = list(kwargs.values())
            self._length = len(tmp[0])  # type: ignore[arg-type]
            if any(self._length != len(d) for d in tmp):  # type: ignore[arg-type]
                raise ValueError("Size mismatch between datasets")
            self.datasets = kwargs
        else:
            raise ValueError("At least one dataset should be passed")

    def __getitem__(self, index: Any) -> Any:
        if isinstance(self.datasets, dict):
            return {k: d[index] for k, d in self.datasets.items()}
        return tuple(d[index] for d in self.datasets)

    def __len__(self) -> int:
        return self._length


class ConcatDataset(Dataset[T_co]):
    """Several map-style datasets one after the other.

    >>> from tapegrad.torch.utils.data import ConcatDataset
    >>> ds = ConcatDataset([[1, 2], [3, 4, 5]])
    >>> len(ds), ds[2], ds[-1], ds.cumulative_sizes
    (5, 3, 5, [2, 5])
    """

    datasets: list[Any]
    cumulative_sizes: list[int]

    @staticmethod
    def cumsum(sequence: Iterable[Any]) -> list[int]:
        r, s = [], 0
        for e in sequence:
            s += len(e)
            r.append(s)
        return r

    def __init__(self, datasets: Iterable[Any]) -> None:
        self.datasets = list(datasets)
        if len(self.datasets) == 0:
            raise AssertionError("datasets should not be an empty iterable")
        for d in self.datasets:
            if isinstance(d, IterableDataset):
                raise AssertionError("ConcatDataset does not support IterableDataset")
        self.cumulative_sizes = self.cumsum(self.datasets)

    def __len__(self) -> int:
        return self.cumulative_sizes[-1]

    def __getitem__(self, idx: int) -> T_co:
        if idx < 0:
            if -idx > len(self):
                raise ValueError("absolute value of index should not exceed dataset length")
            idx = len(self) + idx
        dataset_idx = bisect.bisect_right(self.cumulative_sizes, idx)
        sample_idx = idx if dataset_idx == 0 else idx - self.cumulative_sizes[dataset_idx - 1]
        return self.datasets[dataset_idx][sample_idx]


class ChainDataset(IterableDataset[Any]):
    """Several iterable datasets chained one after the other."""

    def __init__(self, datasets: Iterable[Any]) -> None:
        self.datasets = datasets

    def __iter__(self) -> Iterator[Any]:
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                raise AssertionError("ChainDataset only supports IterableDataset")
            yield from d

    def __len__(self) -> int:
        total = 0
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                raise AssertionError("ChainDataset only supports IterableDataset")
            total += len(d)  # type: ignore[arg-type]
        return total


class Subset(Dataset[T_co]):
    """The samples of ``dataset`` at ``indices``.

    >>> from tapegrad.torch.utils.data import Subset
    >>> s = Subset([10, 11, 12, 13], [3, 0])
    >>> len(s), s[0], s.__getitems__([0, 1])
    (2, 13, [13, 10])
    """

    dataset: Any
    indices: Sequence[int]

    def __init__(self, dataset: Any, indices: Sequence[int]) -> None:
        self.dataset = dataset
        self.indices = indices

    def __getitem__(self, idx: Any) -> Any:
        if isinstance(idx, list):
            return self.dataset[[self.indices[i] for i in idx]]
        return self.dataset[self.indices[idx]]

    def __getitems__(self, indices: list[int]) -> list[Any]:
        # a dataset with its own batched fetch gets the whole list at once, as in PyTorch
        if callable(getattr(self.dataset, "__getitems__", None)):
            return self.dataset.__getitems__([self.indices[i] for i in indices])
        return [self.dataset[self.indices[i]] for i in indices]

    def __len__(self) -> int:
        return len(self.indices)


def random_split(dataset: Any, lengths: Sequence[int | float],
                 generator: _random.Generator | None = _random.default_generator
                 ) -> list[Subset[Any]]:
    """Split ``dataset`` into non-overlapping subsets of the given lengths (or fractions).

    Fractions summing to 1 become ``floor(frac * len(dataset))`` each, the
    remainder handed out one by one from the first split (PyTorch's rule);
    the indices are ``torch.randperm(len(dataset), generator=generator)``.

    Parameters
    ----------
    dataset : Dataset or sequence
        The data to split.
    lengths : sequence of int or float
        Lengths of the splits, or fractions that sum to 1.
    generator : torch.Generator, optional
        Source of the permutation (the default generator when omitted).

    Returns
    -------
    list of Subset

    Examples
    --------
    >>> import tapegrad.torch as torch
    >>> from tapegrad.torch.utils.data import random_split
    >>> [len(s) for s in random_split(range(30), [0.3, 0.3, 0.4])]
    [9, 9, 12]
    """
    if math.isclose(sum(lengths), 1) and sum(lengths) <= 1:
        subset_lengths: list[int] = []
        for i, frac in enumerate(lengths):
            if frac < 0 or frac > 1:
                raise ValueError(f"Fraction at index {i} is not between 0 and 1")
            subset_lengths.append(math.floor(len(dataset) * frac))
        remainder = len(dataset) - sum(subset_lengths)
        for i in range(remainder):
            subset_lengths[i % len(subset_lengths)] += 1
        lengths = subset_lengths
        for i, length in enumerate(lengths):
            if length == 0:
                warnings.warn(f"Length of split at index {i} is 0. "
                              f"This might result in an empty dataset.", stacklevel=2)
    if sum(lengths) != len(dataset):
        raise ValueError("Sum of input lengths does not equal the length of the input dataset!")
    int_lengths = [int(n) for n in lengths]
    indices = _random.gen(generator).permutation(sum(int_lengths)).tolist()
    return [Subset(dataset, indices[offset - length: offset])
            for offset, length in zip(itertools.accumulate(int_lengths), int_lengths)]
