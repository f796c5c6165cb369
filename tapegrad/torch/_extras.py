"""Small PyTorch functions textbook code reaches for (issue 16): ``torch.meshgrid``."""

from __future__ import annotations

import warnings
from typing import Any

from .._core.errors import with_hint
from .._core.tensor import Tensor


def meshgrid(*tensors: Any, indexing: str | None = None) -> tuple[Tensor, ...]:
    """Coordinate grids from 0-d/1-d tensors (recorded: gradients flow back).

    ``indexing='ij'`` (PyTorch's default, with PyTorch's warning when it is
    not given) puts the first tensor along dimension 0; ``'xy'`` swaps the
    first two, as NumPy and ``tf.meshgrid`` do.

    Examples
    --------
    >>> import tapegrad.torch as torch
    >>> x, y = torch.meshgrid(torch.arange(3.0), torch.arange(2.0), indexing="xy")
    >>> x.shape
    torch.Size([2, 3])
    """
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    if indexing is None:
        warnings.warn("torch.meshgrid: in an upcoming release, it will be required to pass the "
                      "indexing argument.", UserWarning, stacklevel=2)
        indexing = "ij"
    if indexing not in ("ij", "xy"):
        raise RuntimeError(with_hint(
            f'torch.meshgrid: indexing must be one of "xy" or "ij", but received: {indexing}',
            "indexing='ij' is matrix indexing, 'xy' Cartesian (NumPy's default)"))
    if not tensors:
        raise RuntimeError(with_hint("meshgrid expects a non-empty TensorList",
                                     "pass at least one tensor"))
    for t in tensors:
        if not isinstance(t, Tensor):
            raise TypeError(with_hint(
                f"meshgrid(): argument 'tensors' must be tuple of Tensors, not "
                f"{type(t).__name__}", "wrap numbers with torch.tensor()"))
        if t._data.ndim > 1:
            raise RuntimeError(with_hint(
                "torch.meshgrid: Expected 0D or 1D tensor in the tensor list but got: "
                f"{t!r}", f"got a tensor of shape {tuple(t._data.shape)}; flatten it first"))
    if len({t._data.dtype for t in tensors}) > 1:
        raise RuntimeError(with_hint("meshgrid expects all tensors to have the same dtype",
                                     "cast them to one dtype first"))
    seq = list(tensors)
    swap = indexing == "xy" and len(seq) >= 2
    if swap:
        seq[0], seq[1] = seq[1], seq[0]
    sizes = [int(t._data.size) for t in seq]
    out = []
    for i, t in enumerate(seq):
        view = [1] * len(seq)
        view[i] = sizes[i]
        out.append(t.reshape(*view).expand(*sizes))
    if swap:
        out[0], out[1] = out[1], out[0]
    return tuple(out)
