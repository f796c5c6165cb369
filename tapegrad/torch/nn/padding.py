"""``torch.nn`` padding modules and ``Unflatten``.

>>> import tapegrad.torch as torch
>>> torch.nn.ZeroPad2d(1)
ZeroPad2d((1, 1, 1, 1))
"""

from __future__ import annotations

from typing import Any

from ..._core.tensor import Tensor
from . import functional as F
from .modules import Module

__all__ = ["ZeroPad1d", "ZeroPad2d", "ZeroPad3d", "ConstantPad1d", "ConstantPad2d",
           "ConstantPad3d", "ReflectionPad1d", "ReflectionPad2d", "ReflectionPad3d",
           "ReplicationPad1d", "ReplicationPad2d", "ReplicationPad3d", "CircularPad1d",
           "CircularPad2d", "CircularPad3d", "Unflatten"]


class _PadNd(Module):
    _n = 2
    _mode = "constant"

    def __init__(self, padding: Any, value: float = 0.0) -> None:
        super().__init__()
        self.padding = (int(padding),) * (2 * self._n) if isinstance(padding, int) else \
            tuple(padding)
        self.value = value

    def forward(self, input: Tensor) -> Tensor:
        if self._mode == "constant":
            return F.pad(input, self.padding, "constant", self.value)
        return F.pad(input, self.padding, self._mode)

    def extra_repr(self) -> str:
        if self._mode == "constant" and type(self).__name__.startswith("Constant"):
            return f"padding={self.padding}, value={self.value}"
        return f"{self.padding}"


def _make(name: str, n: int, mode: str, const: bool) -> type[_PadNd]:
    if const:
        def __init__(self: _PadNd, padding: Any, value: float) -> None:
            _PadNd.__init__(self, padding, value)
    else:
        def __init__(self: _PadNd, padding: Any) -> None:  # type: ignore[misc]
            _PadNd.__init__(self, padding)
    return type(name, (_PadNd,), {"_n": n, "_mode": mode, "__init__": __init__,
                                  "__module__": __name__,
                                  "__doc__": f"Pad the last {n} dims ({mode})."})


ZeroPad1d = _make("ZeroPad1d", 1, "constant", False)
ZeroPad2d = _make("ZeroPad2d", 2, "constant", False)
ZeroPad3d = _make("ZeroPad3d", 3, "constant", False)
ConstantPad1d = _make("ConstantPad1d", 1, "constant", True)
ConstantPad2d = _make("ConstantPad2d", 2, "constant", True)
ConstantPad3d = _make("ConstantPad3d", 3, "constant", True)
ReflectionPad1d = _make("ReflectionPad1d", 1, "reflect", False)
ReflectionPad2d = _make("ReflectionPad2d", 2, "reflect", False)
ReflectionPad3d = _make("ReflectionPad3d", 3, "reflect", False)
ReplicationPad1d = _make("ReplicationPad1d", 1, "replicate", False)
ReplicationPad2d = _make("ReplicationPad2d", 2, "replicate", False)
ReplicationPad3d = _make("ReplicationPad3d", 3, "replicate", False)
CircularPad1d = _make("CircularPad1d", 1, "circular", False)
CircularPad2d = _make("CircularPad2d", 2, "circular", False)
CircularPad3d = _make("CircularPad3d", 3, "circular", False)


class Unflatten(Module):
    """Split dim ``dim`` into ``unflattened_size``.

    >>> import tapegrad.torch as torch
    >>> torch.nn.Unflatten(1, (2, 2))(torch.ones(3, 4)).shape
    torch.Size([3, 2, 2])
    """

    def __init__(self, dim: int, unflattened_size: Any) -> None:
        super().__init__()
        self.dim, self.unflattened_size = dim, tuple(unflattened_size)

    def forward(self, input: Tensor) -> Tensor:
        return input.unflatten(self.dim, self.unflattened_size)  # type: ignore[attr-defined]

    def extra_repr(self) -> str:
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"
