"""``torch.backends.openmp``: tapegrad's kernels are NumPy's, so it does not use openmp."""

from __future__ import annotations


def is_available() -> bool:
    """False: tapegrad computes with NumPy, not with PyTorch's openmp kernels."""
    return False
