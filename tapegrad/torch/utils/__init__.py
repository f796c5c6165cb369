"""``torch.utils``: ``data`` (datasets and the ``DataLoader``) and ``benchmark`` (``Timer``)."""

from __future__ import annotations

from . import benchmark, data

__all__ = ["data", "benchmark"]
