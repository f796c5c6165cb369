"""``torch.utils.data.distributed.DistributedSampler``: each rank's share of a data set.

PyTorch's partitioning exactly: the (optionally shuffled) indices are padded by
repeating the first ones (or cut, with ``drop_last=True``) to a multiple of the number of
replicas, and rank ``r`` takes every ``num_replicas``-th index from ``r``.  The shuffle is
``randperm`` on a generator seeded with ``seed + epoch`` (call ``set_epoch`` each epoch),
so the orders equal PyTorch's.

>>> from tapegrad.torch.utils.data.distributed import DistributedSampler
>>> list(DistributedSampler(range(10), num_replicas=3, rank=1, shuffle=False))
[1, 4, 7, 0]
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sized
from typing import Any

from ...._core.errors import hinted, with_hint
from ... import _random
from .sampler import Sampler

__all__ = ["DistributedSampler"]


class DistributedSampler(Sampler[int]):
    """Restrict data loading to this rank's subset of ``dataset``.

    Parameters
    ----------
    dataset : sized
    num_replicas, rank : int, optional
        Default: the default process group's world size and rank.
    shuffle : bool
        Shuffle with a generator seeded by ``seed + epoch`` (the same order on every rank).
    seed : int
    drop_last : bool
        Cut the tail so that every rank gets the same number of samples (instead of
        padding with repeated indices).
    """

    def __init__(self, dataset: Sized, num_replicas: int | None = None,
                 rank: int | None = None, shuffle: bool = True, seed: int = 0,
                 drop_last: bool = False) -> None:
        if num_replicas is None or rank is None:
            from ... import distributed as dist

            if num_replicas is None:
                num_replicas = dist.get_world_size()
            if rank is None:
                rank = dist.get_rank()
        if rank >= num_replicas or rank < 0:
            raise hinted(ValueError(with_hint(
                f"Invalid rank {rank}, rank should be in the interval [0, {num_replicas - 1}]",
                "rank must be one of 0 .. num_replicas - 1")))
        self.dataset = dataset
        self.num_replicas = num_replicas
        self.rank = rank
        self.epoch = 0
        self.drop_last = drop_last
        n = len(dataset)
        if self.drop_last and n % self.num_replicas != 0:
            self.num_samples = math.ceil((n - self.num_replicas) / self.num_replicas)
        else:
            self.num_samples = math.ceil(n / self.num_replicas)
        self.total_size = self.num_samples * self.num_replicas
        self.shuffle = shuffle
        self.seed = seed

    def __iter__(self) -> Iterator[int]:
        n = len(self.dataset)
        if self.shuffle:
            g = _random.Generator()
            g.manual_seed(self.seed + self.epoch)
            indices: list[Any] = g.permutation(n).tolist()
        else:
            indices = list(range(n))
        if not self.drop_last:
            padding_size = self.total_size - len(indices)
            if padding_size <= len(indices):
                indices += indices[:padding_size]
            else:
                indices += (indices * math.ceil(padding_size / len(indices)))[:padding_size]
        else:
            indices = indices[: self.total_size]
        assert len(indices) == self.total_size
        indices = indices[self.rank: self.total_size: self.num_replicas]
        assert len(indices) == self.num_samples
        return iter(indices)

    def __len__(self) -> int:
        return self.num_samples

    def set_epoch(self, epoch: int) -> None:
        """Make the next ``__iter__`` shuffle with ``seed + epoch`` (call once per epoch)."""
        self.epoch = epoch
