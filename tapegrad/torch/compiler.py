"""``torch.compiler``: ``reset()`` forgets every ``torch.compile`` trace."""

from __future__ import annotations

from typing import Any

from ..autodiff import tracing as _tracing
from ._compile import reset

__all__ = ["reset", "is_compiling", "disable"]


def is_compiling() -> bool:
    """True while ``torch.compile`` is tracing a function (its first call)."""
    return _tracing.current() is not None


def disable(fn: Any = None, recursive: bool = True) -> Any:
    """Accepted: ``fn`` runs as it is (a tapegrad trace records what it does)."""
    if fn is None:
        return lambda f: f
    return fn
