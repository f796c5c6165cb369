"""``torch.cuda``: tapegrad runs on the CPU, so CUDA is never available.

>>> import tapegrad.torch as torch
>>> torch.cuda.is_available()
False
"""

from __future__ import annotations

from typing import Any


def is_available() -> bool:
    """Always False: tapegrad computes with NumPy on the CPU."""
    return False


def device_count() -> int:
    return 0


def manual_seed(seed: int) -> None:
    """Accepted for compatibility (no CUDA generator to seed)."""


def manual_seed_all(seed: int) -> None:
    """Accepted for compatibility (no CUDA generator to seed)."""


def synchronize(device: Any = None) -> None:
    """Nothing to wait for."""


def empty_cache() -> None:
    """Nothing to free."""


def is_initialized() -> bool:
    return False


def current_device() -> int:
    """Raises PyTorch's CPU-build error (there is no current CUDA device)."""
    from .._core.errors import hinted, with_hint

    raise hinted(AssertionError(with_hint("Torch not compiled with CUDA enabled",
                                   "tapegrad runs on the CPU; check torch.cuda.is_available()")))


def is_bf16_supported(including_emulation: bool = True) -> bool:
    """False: there is no CUDA device."""
    return False
