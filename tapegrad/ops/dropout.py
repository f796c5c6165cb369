"""The dropout family, given a keep-mask drawn by the front-end's own generator.

Composites (a multiply, and an add for alpha dropout), so every rule is the
primitives'.  Each front-end draws the mask with its random functions; the
noise tensor is built with PyTorch's arithmetic (``noise = keep / (1 - p)`` in
the input's dtype, ``input * noise``), so a PyTorch mask gives PyTorch's bits.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._core.registry import defop
from .._core.tensor import Tensor
from .elementwise import add, multiply

__all__ = ["dropout_masked", "alpha_dropout_masked", "alpha_dropout_factors",
           "dropout_noise", "bernoulli_sample"]

_SELU_ALPHA = 1.7580993408473766  # scale * alpha of SELU


def dropout_noise(keep: np.ndarray, p: float, dtype: Any) -> np.ndarray:
    """``keep / (1 - p)`` as PyTorch's ``noise.div_(1 - p)`` computes it: in ``dtype`` for
    float32/float64, through a float32 reciprocal for float16 (ATen's reduced-float rule)."""
    dt = np.dtype(dtype)
    if p >= 1:
        return np.zeros(np.shape(keep), dtype=dt)
    k = np.asarray(keep).astype(dt)
    if dt == np.float16:
        recip = np.float32(1) / np.float32(1 - p)
        return (k.astype(np.float32) * recip).astype(dt)
    return k / dt.type(1 - p)


def dropout_masked(x: Any, keep: np.ndarray, p: float, dtype: Any) -> Tensor:
    """``x * keep / (1 - p)`` (``keep`` broadcasts: feature dropout passes ``(N, C, 1, 1)``).

    >>> import numpy as np, tapegrad as tg
    >>> from tapegrad.ops.dropout import dropout_masked
    >>> dropout_masked(tg.tensor(np.ones(2)), np.array([True, False]), 0.5,
    ...                np.float64)._data.tolist()
    [2.0, 0.0]
    """
    return multiply(x, dropout_noise(keep, p, dtype))


def alpha_dropout_factors(keep: Any, p: float, dtype: Any) -> tuple[np.ndarray, np.ndarray]:
    """Alpha dropout's ``(mul, add)`` for a keep-mask: ``x * mul + add``, PyTorch's steps in
    ``dtype``: ``b = (noise - 1) * (alpha a) + alpha a p``, ``mul = noise a``."""
    dt = np.dtype(dtype)
    ft = dt.type
    alpha = _SELU_ALPHA
    a = 1.0 / np.sqrt((alpha * alpha * p + 1) * (1 - p))
    noise = np.asarray(keep).astype(dt)
    b = (noise + ft(-1)) * ft(alpha * a) + ft(alpha * a * p)
    return noise * ft(a), b


def alpha_dropout_masked(x: Any, keep: np.ndarray, p: float, dtype: Any) -> Tensor:
    """Alpha dropout: dropped units set to SELU's negative saturation, then an affine map
    that keeps zero mean and unit variance (PyTorch's ``alpha_dropout``, step by step in
    ``dtype``, :func:`alpha_dropout_factors`)."""
    if p >= 1:
        return multiply(x, np.zeros(np.shape(keep), dtype=np.dtype(dtype)))
    mul, off = alpha_dropout_factors(keep, p, dtype)
    return add(multiply(x, mul), off)


@defop("bernoulli_sample")
def bernoulli_sample(probs: Any, mask: Any) -> Any:
    """A 0/1 sample ``mask`` (drawn by the front-end) in the probabilities' dtype, recorded
    as a function of ``probs`` with a zero gradient (PyTorch's ``BernoulliBackward0``).

    >>> import numpy as np, tapegrad as tg
    >>> p = tg.tensor(np.array([0.3, 0.8]), requires_grad=True)
    >>> bernoulli_sample(p, np.array([False, True]))._data.tolist()
    [0.0, 1.0]
    """
    return np.asarray(mask).astype(np.asarray(probs).dtype)


@bernoulli_sample.defvjp
def _(g: Tensor) -> Any:  # the sample is piecewise constant in p
    return multiply(g, 0.0), None
