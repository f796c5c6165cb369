"""``torch.backends.cudnn``: not available; ``enabled``, ``benchmark``, ``deterministic`` and
``allow_tf32`` are plain attributes that users may set (no effect on the CPU)."""

from __future__ import annotations

enabled: bool = True
benchmark: bool = False
deterministic: bool = False
allow_tf32: bool = True


def is_available() -> bool:
    """Always False: there is no cuDNN on tapegrad's CPU backend."""
    return False


def version() -> int | None:
    """``None``, as PyTorch reports without cuDNN."""
    return None
