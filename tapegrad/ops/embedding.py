"""Embedding lookup: rows of a weight matrix, with PyTorch's ``padding_idx`` rule.

``embedding_gather`` (forward) and ``embedding_scatter`` (its VJP) are each
other's adjoints, so the lookup is differentiable to any order.  The row at
``padding_idx`` is looked up as usual but never receives a gradient.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._core.registry import defop
from .._core.tensor import Tensor, make
from ._raw import data

__all__ = ["embedding", "renorm_rows_"]


@defop("embedding_gather", saves=("w_shape", "idx"))
def _gather(w: Any, idx: Any, *, padding_idx: int | None, mask: bool) -> Any:
    """``w[idx]``; with ``mask`` the rows looked up at ``padding_idx`` are zeros."""
    w, idx = np.asarray(w), np.asarray(idx)
    out = w[idx]
    if mask and padding_idx is not None:
        out = np.where((idx == padding_idx)[..., None], 0.0, out).astype(w.dtype, copy=False)
    return out


@_gather.defvjp
def _(g: Tensor, w_shape: tuple[int, ...], idx: Any, padding_idx: int | None,
      mask: bool) -> Any:  # scatter-add back to the rows (none to padding_idx)
    return _scatter(g, idx, rows=int(w_shape[0]), padding_idx=padding_idx), None


@_gather.defjvp
def _(dw: Any, didx: Any, w: Any, idx: Any, *, out: Any, padding_idx: int | None,
      mask: bool) -> Any:  # linear in w
    return None if dw is None else _gather(dw, idx, padding_idx=padding_idx, mask=mask)


@_gather.defbatch
def _(batched: tuple[bool, ...], w: Any, idx: Any, *, padding_idx: int | None,
      mask: bool) -> Any:
    if batched[0]:
        # batched table: one lookup per batch element, stacked (tables differ)
        from .shape import stack

        b = data(w).shape[0]
        ia = data(idx)
        return stack([_gather(w[i], make(ia[i]) if batched[1] else idx,
                              padding_idx=padding_idx, mask=mask) for i in range(b)])
    return _gather(w, idx, padding_idx=padding_idx, mask=mask)  # batched indices: same op


@defop("embedding_scatter", saves=("idx",))
def _scatter(g: Any, idx: Any, *, rows: int, padding_idx: int | None) -> Any:
    g, idx = np.asarray(g), np.asarray(idx)
    d = g.shape[idx.ndim:]
    out = np.zeros((rows,) + d, dtype=g.dtype)
    flat = idx.reshape(-1)
    gf = g.reshape((flat.size,) + d)
    if padding_idx is not None:
        keep = flat != padding_idx
        flat, gf = flat[keep], gf[keep]
    np.add.at(out, flat, gf)
    return out


@_scatter.defvjp
def _(g: Tensor, idx: Any, rows: int, padding_idx: int | None) -> Any:  # masked gather
    return _gather(g, idx, padding_idx=padding_idx, mask=True), None


@_scatter.defjvp
def _(dg: Any, didx: Any, g: Any, idx: Any, *, out: Any, rows: int,
      padding_idx: int | None) -> Any:
    return None if dg is None else _scatter(dg, idx, rows=rows, padding_idx=padding_idx)


def embedding(weight: Any, idx: Any, padding_idx: int | None = None) -> Tensor:
    """Rows of ``weight`` at integer ``idx``; ``padding_idx``'s row gets no gradient.

    Examples
    --------
    >>> import numpy as np, tapegrad as tg
    >>> from tapegrad.ops.embedding import embedding
    >>> embedding(tg.tensor(np.eye(3)), np.array([2, 0]))._data.tolist()
    [[0.0, 0.0, 1.0], [1.0, 0.0, 0.0]]
    """
    return _gather(weight, idx, padding_idx=padding_idx, mask=False)


def renorm_rows_(weight: np.ndarray, idx: np.ndarray, max_norm: float,
                 norm_type: float) -> None:
    """PyTorch's ``embedding_renorm_``: rows looked up whose norm exceeds ``max_norm``
    are scaled (in place, untracked) to norm ``max_norm``."""
    rows = np.unique(np.asarray(idx).reshape(-1))
    norms = np.linalg.norm(weight[rows].astype(np.float64), ord=norm_type, axis=-1)
    big = norms > max_norm
    scale = max_norm / (norms[big] + 1e-7)
    weight[rows[big]] *= scale[:, None].astype(weight.dtype)
