"""``torch.utils.data._utils``: the module paths some code imports collation and worker
helpers from (``from torch.utils.data._utils.collate import default_collate``)."""

from __future__ import annotations

from . import collate, worker

__all__ = ["collate", "worker"]
