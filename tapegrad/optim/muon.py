"""Muon (momentum orthogonalised by Newton-Schulz), as PyTorch's ``torch.optim.Muon``
computes it, bfloat16 arithmetic of the iteration included.

PyTorch runs the Newton-Schulz iteration in bfloat16 (wide accumulation, one
rounding per op); NumPy has no bfloat16, so :func:`bf16` rounds each op's result
to the nearest bfloat16 (ties to even).  This gives PyTorch's bits except where a
sum lands on a bfloat16 rounding boundary and PyTorch's accumulation order tips it
the other way: then one element differs by one bfloat16 unit.

>>> import numpy as np
>>> from tapegrad.optim.muon import bf16, muon_update
>>> bf16(np.array([1.00390625, 3.14159], dtype=np.float32))
array([1.   , 3.140625], dtype=float32)
>>> p = np.eye(2, dtype=np.float32); st: dict = {}
>>> muon_update(p, np.eye(2, dtype=np.float32), st, lr=0.1, weight_decay=0.0)
>>> bool(np.all(np.diag(p) < 1))
True
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .adaptive import _fma, lerp_

__all__ = ["bf16", "zeropower_via_newtonschulz", "adjust_lr", "muon_update"]

DEFAULT_NS_COEFFICIENTS = (3.4445, -4.7750, 2.0315)


def bf16(x: Any) -> np.ndarray:
    """``x`` rounded to bfloat16 precision (round to nearest, ties to even), kept as
    float32."""
    a = np.ascontiguousarray(x, dtype=np.float32)
    b = a.view(np.uint32).astype(np.uint64)
    r = (b + 0x7FFF + ((b >> 16) & 1)) & 0xFFFF0000
    out = r.astype(np.uint32).view(np.float32).reshape(a.shape)
    return np.where(np.isnan(a), a, out)


def zeropower_via_newtonschulz(grad: np.ndarray, ns_coefficients: tuple[float, float, float],
                               ns_steps: int, eps: float) -> np.ndarray:
    """The nearest semi-orthogonal matrix to ``grad`` by a quintic Newton-Schulz iteration
    in bfloat16 (PyTorch's ``_zeropower_via_newtonschulz``)."""
    if ns_steps >= 100:
        raise ValueError("Number of steps must be less than 100 for computational efficiency")
    if grad.ndim != 2:
        raise ValueError("Input tensor gradient must be a 2D matrix")
    if len(ns_coefficients) != 3:
        raise ValueError("Coefficients must be a tuple of exactly 3 values")
    # bfloat16 values are exact in float64, and so are their products: each op is
    # computed in float64 and rounded once (float32, then bfloat16)
    a, b, c = (np.float64(np.float32(v)) for v in ns_coefficients)
    o = bf16(grad).astype(np.float64)
    tall = grad.shape[0] > grad.shape[1]
    if tall:
        o = o.T
    norm = bf16(np.float32(np.sqrt(np.dot(o.reshape(-1), o.reshape(-1)))))
    o = bf16((o / np.float64(max(norm, bf16(np.float32(eps))))).astype(np.float32))
    o = o.astype(np.float64)
    for _ in range(ns_steps):
        gram = bf16((o @ o.T).astype(np.float32)).astype(np.float64)
        gram_update = bf16((b * gram + c * (gram @ gram)).astype(np.float32)).astype(np.float64)
        o = bf16((a * o + gram_update @ o).astype(np.float32)).astype(np.float64)
    out = o.astype(np.float32)
    return out.T if tall else out


def adjust_lr(lr: float, adjust_lr_fn: str | None, shape: tuple[int, ...]) -> float:
    """The learning rate scaled for the matrix shape (``"original"``: sqrt(max(1, A/B));
    ``"match_rms_adamw"``: 0.2*sqrt(max(A, B)))."""
    rows, cols = shape[:2]
    if adjust_lr_fn is None or adjust_lr_fn == "original":
        ratio = math.sqrt(max(1, rows / cols))
    elif adjust_lr_fn == "match_rms_adamw":
        ratio = 0.2 * math.sqrt(max(rows, cols))
    else:
        ratio = 1.0
    return lr * ratio


def muon_update(param: np.ndarray, grad: np.ndarray, state: dict[str, Any], *,
                lr: float = 1e-3, weight_decay: float = 0.1, momentum: float = 0.95,
                nesterov: bool = True,
                ns_coefficients: tuple[float, float, float] = DEFAULT_NS_COEFFICIENTS,
                eps: float = 1e-7, ns_steps: int = 5, adjust_lr_fn: str | None = None) -> None:
    """One Muon step on a 2-D ``param``: ``buf = lerp(buf, g, 1-momentum)``, the update
    (Nesterov: ``lerp(g, buf, momentum)``) orthogonalised, decoupled weight decay, then
    ``p -= adjust_lr(lr) * update``."""
    if grad.ndim != 2:
        raise ValueError("Param gradient must be a 2D matrix")
    if "momentum_buffer" not in state:
        state["momentum_buffer"] = np.zeros_like(grad)
    buf = state["momentum_buffer"]
    lerp_(buf, grad, 1 - momentum)
    if nesterov:
        update = np.array(grad, copy=True)
        lerp_(update, buf, momentum)
    else:
        update = buf
    ortho = zeropower_via_newtonschulz(update, ns_coefficients, ns_steps, eps)
    adjusted = adjust_lr(lr, adjust_lr_fn, param.shape)
    param *= 1 - lr * weight_decay
    param[...] = _fma(ortho.astype(param.dtype, copy=False), -adjusted, param)
