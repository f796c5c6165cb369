"""``torch.nn.Embedding`` (``padding_idx``, ``max_norm``, ``from_pretrained``) and
``EmbeddingBag``.

>>> import tapegrad.torch as torch
>>> _ = torch.manual_seed(0)
>>> torch.nn.Embedding(3, 4, padding_idx=0)
Embedding(3, 4, padding_idx=0)
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..._core import mode
from ..._core.errors import hinted, with_hint
from ..._core.tensor import TORCH, Tensor, make
from .._dtype import to_np
from . import _functional_conv as FC
from . import init
from .modules import Module
from .parameter import Parameter

__all__ = ["Embedding", "EmbeddingBag"]


class Embedding(Module):
    """A lookup table of ``num_embeddings`` vectors (weight drawn from N(0, 1)).

    ``padding_idx``'s row starts at zero and gets no gradient; ``max_norm``
    renormalises the rows looked up.
    """

    def __init__(self, num_embeddings: int, embedding_dim: int, padding_idx: int | None = None,
                 max_norm: float | None = None, norm_type: float = 2.0,
                 scale_grad_by_freq: bool = False, sparse: bool = False,
                 _weight: Tensor | None = None, _freeze: bool = False, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__()
        if padding_idx is not None:
            if padding_idx > 0 and padding_idx >= num_embeddings or \
                    padding_idx < 0 and padding_idx < -num_embeddings:
                raise hinted(AssertionError(with_hint("Padding_idx must be within num_embeddings",
                                               f"0 <= padding_idx < {num_embeddings}")))
            if padding_idx < 0:
                padding_idx += num_embeddings
        dt = np.float32 if dtype is None else to_np(dtype)
        self.num_embeddings, self.embedding_dim = num_embeddings, embedding_dim
        self.padding_idx, self.max_norm, self.norm_type = padding_idx, max_norm, norm_type
        self.scale_grad_by_freq, self.sparse = scale_grad_by_freq, sparse
        if _weight is None:
            self.weight = Parameter(make(np.empty((num_embeddings, embedding_dim), dtype=dt),
                                         None, False, TORCH), requires_grad=not _freeze)
            self.reset_parameters()
        else:
            self.weight = Parameter(_weight, requires_grad=not _freeze)

    def reset_parameters(self) -> None:
        init.normal_(self.weight)
        if self.padding_idx is not None:
            with mode.no_grad():
                self.weight._data[self.padding_idx] = 0

    def forward(self, input: Tensor) -> Tensor:
        return FC.embedding(input, self.weight, self.padding_idx, self.max_norm,
                            self.norm_type, self.scale_grad_by_freq, self.sparse)

    def extra_repr(self) -> str:
        s = f"{self.num_embeddings}, {self.embedding_dim}"
        if self.padding_idx is not None:
            s += f", padding_idx={self.padding_idx}"
        if self.max_norm is not None:
            s += f", max_norm={self.max_norm}"
        if self.norm_type != 2:
            s += f", norm_type={self.norm_type}"
        return s

    @classmethod
    def from_pretrained(cls, embeddings: Tensor, freeze: bool = True,
                        padding_idx: int | None = None, max_norm: float | None = None,
                        norm_type: float = 2.0, scale_grad_by_freq: bool = False,
                        sparse: bool = False) -> Embedding:
        if embeddings._data.ndim != 2:
            raise hinted(AssertionError(with_hint("Embeddings parameter is expected to be 2-dimensional",
                                           "pass a (num_embeddings, dim) tensor")))
        rows, cols = embeddings._data.shape
        return cls(rows, cols, padding_idx, max_norm, norm_type, scale_grad_by_freq, sparse,
                   _weight=make(embeddings._data.copy(), None, False, TORCH), _freeze=freeze)


class EmbeddingBag(Module):
    """Sums, means or maxima of bags of embeddings (``offsets`` mark 1-D bags).

    Sum and mean are a matmul with the bag-membership matrix (differentiable to
    any order); max takes each bag's elementwise maximum.
    """

    def __init__(self, num_embeddings: int, embedding_dim: int, max_norm: float | None = None,
                 norm_type: float = 2.0, scale_grad_by_freq: bool = False, mode: str = "mean",
                 sparse: bool = False, _weight: Tensor | None = None,
                 include_last_offset: bool = False, padding_idx: int | None = None,
                 device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        if mode not in ("sum", "mean", "max"):
            raise hinted(ValueError(with_hint(f"mode has to be one of sum, mean or max, got {mode}",
                                       "use 'sum', 'mean' or 'max'")))
        dt = np.float32 if dtype is None else to_np(dtype)
        self.num_embeddings, self.embedding_dim, self.mode = num_embeddings, embedding_dim, mode
        self.max_norm, self.norm_type = max_norm, norm_type
        self.scale_grad_by_freq, self.sparse = scale_grad_by_freq, sparse
        if padding_idx is not None:
            if padding_idx > 0 and padding_idx >= num_embeddings:
                raise hinted(AssertionError(with_hint(
                    "padding_idx must be within num_embeddings", f"0 <= padding_idx < "
                    f"{num_embeddings}")))
            if padding_idx < 0:
                if padding_idx < -num_embeddings:
                    raise hinted(AssertionError(with_hint(
                        "padding_idx must be within num_embeddings",
                        f"-{num_embeddings} <= padding_idx")))
                padding_idx = num_embeddings + padding_idx
        self.include_last_offset, self.padding_idx = include_last_offset, padding_idx
        if _weight is None:
            self.weight = Parameter(make(np.empty((num_embeddings, embedding_dim), dtype=dt),
                                         None, False, TORCH))
            self.reset_parameters()
        else:
            if tuple(_weight._data.shape) != (num_embeddings, embedding_dim):
                raise hinted(AssertionError(with_hint(
                    "Shape of weight does not match num_embeddings and embedding_dim",
                    f"pass a ({num_embeddings}, {embedding_dim}) tensor")))
            self.weight = Parameter(_weight)

    def reset_parameters(self) -> None:
        init.normal_(self.weight)
        if self.padding_idx is not None:
            with mode.no_grad():
                self.weight._data[self.padding_idx] = 0

    def forward(self, input: Tensor, offsets: Tensor | None = None,
                per_sample_weights: Tensor | None = None) -> Tensor:
        from .functional_more import embedding_bag

        return embedding_bag(input, self.weight, offsets, self.max_norm, self.norm_type,
                             False, self.mode, False, per_sample_weights,
                             self.include_last_offset, self.padding_idx)

    def extra_repr(self) -> str:
        s = f"{self.num_embeddings}, {self.embedding_dim}"
        if self.max_norm is not None:
            s += f", max_norm={self.max_norm}"
        if self.norm_type != 2:
            s += f", norm_type={self.norm_type}"
        if self.scale_grad_by_freq is not False:
            s += f", scale_grad_by_freq={self.scale_grad_by_freq}"
        s += f", mode={self.mode!r}"
        if self.padding_idx is not None:
            s += f", padding_idx={self.padding_idx}"
        return s

    @classmethod
    def from_pretrained(cls, embeddings: Tensor, freeze: bool = True,
                        max_norm: float | None = None, norm_type: float = 2.0,
                        scale_grad_by_freq: bool = False, mode: str = "mean",
                        sparse: bool = False, include_last_offset: bool = False,
                        padding_idx: int | None = None) -> EmbeddingBag:
        """An ``EmbeddingBag`` holding ``embeddings`` (frozen unless ``freeze=False``)."""
        if embeddings._data.ndim != 2:
            raise hinted(AssertionError(with_hint(
                "Embeddings parameter is expected to be 2-dimensional",
                "pass a (num_embeddings, dim) tensor")))
        rows, cols = embeddings._data.shape
        bag = cls(rows, cols, max_norm, norm_type, scale_grad_by_freq, mode, sparse,
                  make(embeddings._data.copy(), None, False, TORCH), include_last_offset,
                  padding_idx)
        bag.weight.requires_grad = not freeze
        return bag
