"""``torch.backends.mkldnn``: tapegrad's kernels are NumPy's, so it does not use mkldnn."""

from __future__ import annotations


def is_available() -> bool:
    """False: tapegrad computes with NumPy, not with PyTorch's mkldnn kernels."""
    return False
