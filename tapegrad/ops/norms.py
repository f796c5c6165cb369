"""The Euclidean norm as one primitive, so that its derivative at zero is PyTorch's.

``sqrt(sum(x * x))`` built from primitives has an infinite derivative at
``x = 0`` (``sqrt'(0)``), which times the zero from ``x * x`` gives NaN.
PyTorch's ``norm`` / ``linalg.vector_norm`` backward is
``g * x / norm`` with the quotient set to 0 where the norm is 0, so its
gradient there is 0 (and ``F.normalize`` at 0 stays finite).  Real inputs only.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._core.registry import defop
from .._core.tensor import Tensor
from .elementwise import divide, equal, multiply, where
from .reduce import _expand, norm_axis
from .reduce import sum as _sum

__all__ = ["l2norm"]


@defop("l2norm", saves=("x", "out"))
def _l2norm(x: Any, *, axis: tuple[int, ...] | None, keepdims: bool) -> Any:
    a = np.asarray(x)
    with np.errstate(over="ignore"):
        r = np.sqrt(np.sum(a * a, axis=axis, keepdims=keepdims))
    return np.asarray(r).astype(a.dtype, copy=False)


def _safe_quotient(num: Tensor, den: Tensor) -> Tensor:
    # num / den, and 0 where den == 0 (the masked_fill of PyTorch's norm_backward)
    zero = equal(den, 0.0)
    return where(zero, 0.0, divide(num, where(zero, 1.0, den)))


@_l2norm.defvjp
def _(g: Tensor, x: Tensor, out: Tensor, axis: Any, keepdims: bool) -> Any:
    # d|x| = x / |x| dx  (0 at x = 0)
    shape = x._data.shape
    return (multiply(x, _safe_quotient(_expand(g, axis, keepdims, shape),
                                       _expand(out, axis, keepdims, shape))),)


@_l2norm.defjvp
def _(dx: Tensor, x: Tensor, *, out: Tensor, axis: Any, keepdims: bool) -> Any:
    # d|x| = <x, dx> / |x|  (0 at x = 0)
    return _safe_quotient(_sum(multiply(x, dx), axis=axis, keepdims=keepdims), out)


@_l2norm.defbatch
def _(batched: tuple[bool, ...], x: Tensor, *, axis: Any, keepdims: bool) -> Any:
    # the batch is axis 0: reduce the same axes one further along
    nd = x._data.ndim
    ax = tuple(range(1, nd)) if axis is None else tuple(a + 1 for a in axis)
    return _l2norm(x, axis=ax, keepdims=keepdims)


def l2norm(x: Any, axis: Any = None, keepdims: bool = False) -> Tensor:
    """``sqrt(sum(x**2))`` over ``axis`` with PyTorch's gradient at zero (0, not NaN).

    >>> import tapegrad as tg
    >>> x = tg.tensor([0.0, 0.0], requires_grad=True)
    >>> tg.grad(l2norm(x), x)[0].tolist()
    [0.0, 0.0]
    """
    nd = x._data.ndim if isinstance(x, Tensor) else np.ndim(x)
    return _l2norm(x, axis=norm_axis(axis, nd), keepdims=keepdims)
