"""``torch.utils.data._utils.worker``: PyTorch's module path for the worker helpers."""

from __future__ import annotations

from .._worker import WorkerInfo, get_worker_info

__all__ = ["WorkerInfo", "get_worker_info"]
