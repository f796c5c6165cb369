"""``torch._dynamo.exc``: the errors ``torch.compile(fullgraph=True)`` raises."""

from __future__ import annotations

from .._compile import Unsupported

__all__ = ["Unsupported"]
