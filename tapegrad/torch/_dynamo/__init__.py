"""``torch._dynamo``: ``reset``, ``explain`` and the ``exc`` module of ``torch.compile``."""

from __future__ import annotations

from .._compile import explain, reset
from . import exc

__all__ = ["reset", "explain", "exc"]
