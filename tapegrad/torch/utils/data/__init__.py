"""``torch.utils.data``: datasets, samplers, ``default_collate`` and the ``DataLoader``
(with real worker processes for ``num_workers > 0``).

Orders under a seed are PyTorch's (``RandomSampler`` and ``random_split`` use
PyTorch's ``randperm`` on PyTorch's generator stream).

>>> import tapegrad.torch as torch
>>> from tapegrad.torch.utils.data import DataLoader, TensorDataset
>>> ds = TensorDataset(torch.arange(4.0).reshape(4, 1), torch.tensor([0, 1, 0, 1]))
>>> for x, y in DataLoader(ds, batch_size=2):
...     print(x.shape, y)
torch.Size([2, 1]) tensor([0, 1])
torch.Size([2, 1]) tensor([0, 1])
"""

from __future__ import annotations

from . import _utils as _utils  # PyTorch's module path for collate/worker helpers
from . import distributed
from ._collate import default_collate, default_convert
from ._worker import WorkerInfo, get_worker_info
from .dataloader import DataLoader
from .dataset import (
    ChainDataset,
    ConcatDataset,
    Dataset,
    IterableDataset,
    StackDataset,
    Subset,
    TensorDataset,
    random_split,
)
from .distributed import DistributedSampler
from .sampler import (
    BatchSampler,
    RandomSampler,
    Sampler,
    SequentialSampler,
    SubsetRandomSampler,
    WeightedRandomSampler,
)

__all__ = [
    "DataLoader", "Dataset", "IterableDataset", "TensorDataset", "StackDataset",
    "ConcatDataset", "ChainDataset", "Subset", "random_split", "Sampler", "SequentialSampler",
    "RandomSampler", "SubsetRandomSampler", "WeightedRandomSampler", "BatchSampler",
    "default_collate", "default_convert", "get_worker_info", "WorkerInfo",
    "DistributedSampler", "distributed",
]
