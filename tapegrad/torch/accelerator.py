"""``torch.accelerator``: there is none (tapegrad runs on the CPU).

>>> import tapegrad.torch as torch
>>> torch.accelerator.is_available(), torch.accelerator.current_accelerator()
(False, None)
"""

from __future__ import annotations

from typing import Any


def is_available() -> bool:
    return False


def device_count() -> int:
    return 0


def current_accelerator(check_available: bool = False) -> Any:
    return None
