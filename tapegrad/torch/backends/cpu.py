"""``torch.backends.cpu``: tapegrad's CPU kernels are NumPy's."""

from __future__ import annotations


def get_cpu_capability() -> str:
    """The vector instruction set the kernels were chosen for (NumPy decides: ``DEFAULT``)."""
    return "DEFAULT"
