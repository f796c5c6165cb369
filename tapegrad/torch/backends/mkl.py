"""``torch.backends.mkl``: tapegrad's kernels are NumPy's, so it does not use mkl."""

from __future__ import annotations


def is_available() -> bool:
    """False: tapegrad computes with NumPy, not with PyTorch's mkl kernels."""
    return False
