"""``torch.nn.utils``: gradient clipping and parameter vectors.

>>> import tapegrad.torch as torch
>>> p = torch.nn.Parameter(torch.tensor([3.0, 4.0]))
>>> p.grad = torch.tensor([3.0, 4.0])
>>> torch.nn.utils.clip_grad_norm_([p], 1.0)
tensor(5.)
>>> p.grad
tensor([0.6000, 0.8000])
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

from ...._core.errors import hinted, with_hint
from ...._core.tensor import TORCH, Tensor, make


def _params(parameters: Any) -> list[Tensor]:
    if isinstance(parameters, Tensor):
        return [parameters]
    return list(parameters)


def clip_grad_norm_(parameters: Any, max_norm: float, norm_type: float = 2.0,
                    error_if_nonfinite: bool = False, foreach: Any = None) -> Tensor:
    """Scale the gradients in place so that their joint norm is at most ``max_norm``."""
    grads = [p._grad for p in _params(parameters) if p._grad is not None]
    if not grads:
        return make(np.zeros((), dtype=np.float32), None, False, TORCH)
    dt = grads[0]._data.dtype
    if norm_type == float("inf"):
        total = max(float(np.abs(g._data).max()) for g in grads)
    else:
        norms = [np.linalg.norm(g._data.reshape(-1).astype(np.float64), norm_type)
                 for g in grads]
        total = float(np.linalg.norm(np.asarray(norms), norm_type))
    if error_if_nonfinite and not np.isfinite(total):
        raise hinted(RuntimeError(with_hint(
            f"The total norm of order {float(norm_type)} for gradients from `parameters` is "
            "non-finite, so it cannot be clipped. To disable this error and scale the gradients "
            "by the non-finite norm anyway, set `error_if_nonfinite=False`",
            "a gradient contains nan or inf")))
    total_t = np.asarray(total, dtype=dt)
    coef = np.asarray(max_norm, dtype=dt) / (total_t + np.asarray(1e-6, dtype=dt))
    if coef < 1:
        for g in grads:
            g._data *= coef
            g._vc[0] += 1
    return make(total_t, None, False, TORCH)


def clip_grad_value_(parameters: Any, clip_value: float, foreach: Any = None) -> None:
    for p in _params(parameters):
        if p._grad is not None:
            np.clip(p._grad._data, -clip_value, clip_value, out=p._grad._data)
            p._grad._vc[0] += 1


def parameters_to_vector(parameters: Iterable[Tensor]) -> Tensor:
    from ... import _ops as O

    return O.cat([p.reshape(-1) for p in parameters])


def vector_to_parameters(vec: Tensor, parameters: Iterable[Tensor]) -> None:
    i = 0
    for p in parameters:
        n = p._data.size
        p._data[...] = vec._data[i:i + n].reshape(p._data.shape)
        p._vc[0] += 1
        i += n


__all__ = ["clip_grad_norm_", "clip_grad_value_", "parameters_to_vector",
           "vector_to_parameters"]


from . import rnn  # noqa: E402  (torch.nn.utils.rnn: packed sequences)

__all__ += ["rnn"]
