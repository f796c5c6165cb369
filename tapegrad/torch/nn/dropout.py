"""``torch.nn`` feature-dropout modules: ``Dropout1d/2d/3d``, ``AlphaDropout``,
``FeatureAlphaDropout`` (identity in eval mode).

>>> import tapegrad.torch as torch
>>> torch.nn.Dropout2d()
Dropout2d(p=0.5, inplace=False)
"""

from __future__ import annotations

from ..._core.errors import hinted, with_hint
from ..._core.tensor import Tensor
from . import _functional_conv as FC
from .modules import Module

__all__ = ["Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout", "FeatureAlphaDropout"]


class _DropoutNd(Module):
    def __init__(self, p: float = 0.5, inplace: bool = False) -> None:
        super().__init__()
        if p < 0 or p > 1:
            raise hinted(ValueError(with_hint(
                f"dropout probability has to be between 0 and 1, but got {p}",
                "pass 0 <= p <= 1")))
        self.p, self.inplace = p, inplace

    def extra_repr(self) -> str:
        return f"p={self.p}, inplace={self.inplace}"


class Dropout1d(_DropoutNd):
    def forward(self, input: Tensor) -> Tensor:
        return FC.dropout1d(input, self.p, self.training, self.inplace)


class Dropout2d(_DropoutNd):
    """Zero whole channels with probability ``p`` (training mode)."""

    def forward(self, input: Tensor) -> Tensor:
        return FC.dropout2d(input, self.p, self.training, self.inplace)


class Dropout3d(_DropoutNd):
    def forward(self, input: Tensor) -> Tensor:
        return FC.dropout3d(input, self.p, self.training, self.inplace)


class AlphaDropout(_DropoutNd):
    def forward(self, input: Tensor) -> Tensor:
        return FC.alpha_dropout(input, self.p, self.training)


class FeatureAlphaDropout(_DropoutNd):
    def forward(self, input: Tensor) -> Tensor:
        return FC.feature_alpha_dropout(input, self.p, self.training)
