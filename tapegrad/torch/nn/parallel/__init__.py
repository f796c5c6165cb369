"""``torch.nn.parallel``: ``DistributedDataParallel`` (on MPI; see
:mod:`tapegrad.torch.distributed`)."""

from __future__ import annotations

from .distributed import DistributedDataParallel

__all__ = ["DistributedDataParallel"]
