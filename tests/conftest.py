"""Shared pytest setup: make ``tests.*`` importable (e.g. ``tests.core.op_cases``)."""

from __future__ import annotations

import sys
from pathlib import Path

_ROOT = str(Path(__file__).resolve().parent.parent)
if _ROOT not in sys.path:
    sys.path.insert(0, _ROOT)
