"""``torch.nn.utils``: gradient clipping and parameter vectors, as PyTorch computes them.

The total norm is PyTorch's two-stage norm (each gradient's norm, then the norm
of those), in the gradients' dtype; each per-tensor norm is the correctly
rounded value (PyTorch's vectorised float32 sum can differ from it in the
last bit).  The scale ``max_norm / (total_norm + 1e-6)``, clamped to 1, is
applied to every gradient, as in PyTorch.

>>> import tapegrad.torch as torch
>>> p = torch.nn.Parameter(torch.tensor([3.0, 4.0]))
>>> p.grad = torch.tensor([3.0, 4.0])
>>> torch.nn.utils.clip_grad_norm_([p], 1.0)
tensor(5.)
>>> p.grad
tensor([0.6000, 0.8000])
"""

from __future__ import annotations

import types
import warnings
from collections.abc import Iterable
from typing import Any

import numpy as np

from ...._core.errors import hinted, with_hint
from ...._core.tensor import TORCH, Tensor, make

__all__ = ["clip_grad_norm_", "clip_grad_norm", "clip_grad_value_", "get_total_norm",
           "clip_grads_with_norm_", "parameters_to_vector", "vector_to_parameters"]


def _params(parameters: Any) -> list[Tensor]:
    if isinstance(parameters, Tensor):
        return [parameters]
    return list(parameters)


def _vector_norm(a: np.ndarray, p: float) -> np.ndarray:
    """``torch.linalg.vector_norm(a, p)`` in ``a``'s dtype (accumulated in float64)."""
    x = np.abs(a.reshape(-1).astype(np.float64))
    if p == float("inf"):
        r = x.max() if x.size else 0.0
    elif p == float("-inf"):
        r = x.min() if x.size else float("inf")
    elif p == 0:
        r = float(np.count_nonzero(x))
    elif p == 1:
        r = x.sum()
    elif p == 2:
        r = np.sqrt(np.dot(x, x))
    else:
        r = (x ** p).sum() ** (1.0 / p)
    return np.asarray(r, dtype=a.dtype)


def get_total_norm(tensors: Any, norm_type: float = 2.0, error_if_nonfinite: bool = False,
                   foreach: bool | None = None) -> Tensor:
    """The norm of the norms of ``tensors`` (PyTorch's ``torch.nn.utils.get_total_norm``).

    Parameters
    ----------
    tensors : Tensor or iterable of Tensor
        Usually the gradients.
    norm_type : float
        ``p`` of the p-norm (``inf`` for the largest absolute value).
    error_if_nonfinite : bool
        Raise when the total norm is NaN or infinite.
    foreach : bool, optional
        Accepted (one implementation).

    Returns
    -------
    Tensor
        A 0-d tensor in the dtype of the first tensor.
    """
    ts = _params(tensors)
    norm_type = float(norm_type)
    if not ts:
        return make(np.zeros((), dtype=np.float32), None, False, TORCH)
    dt = ts[0]._data.dtype
    norms = np.stack([_vector_norm(t._data, norm_type).astype(dt) for t in ts])
    total = _vector_norm(norms, norm_type)
    if error_if_nonfinite and not np.isfinite(total):
        raise hinted(RuntimeError(with_hint(
            f"The total norm of order {norm_type} for gradients from `parameters` is "
            "non-finite, so it cannot be clipped. To disable this error and scale the "
            "gradients by the non-finite norm anyway, set `error_if_nonfinite=False`",
            "a gradient contains nan or inf; check the loss and the learning rate")))
    return make(total, None, False, TORCH)


def clip_grads_with_norm_(parameters: Any, max_norm: float, total_norm: Tensor,
                          foreach: bool | None = None) -> None:
    """Scale the gradients in place by ``min(1, max_norm / (total_norm + 1e-6))``."""
    grads = [p._grad for p in _params(parameters) if p._grad is not None]
    if not grads:
        return
    tn = total_norm._data if isinstance(total_norm, Tensor) else np.asarray(total_norm)
    coef = np.asarray(float(max_norm), dtype=tn.dtype) / (tn + np.asarray(1e-6, dtype=tn.dtype))
    coef = np.minimum(coef, np.asarray(1.0, dtype=tn.dtype))
    for g in grads:
        g._data *= coef.astype(g._data.dtype)
        g._vc[0] += 1


def clip_grad_norm_(parameters: Any, max_norm: float, norm_type: float = 2.0,
                    error_if_nonfinite: bool = False, foreach: bool | None = None) -> Tensor:
    """Scale the gradients in place so that their total norm is at most ``max_norm``;
    returns the total norm before clipping.

    Parameters
    ----------
    parameters : Tensor or iterable of Tensor
        Parameters whose ``.grad`` are clipped (those without a gradient are skipped).
    max_norm : float
        Largest allowed total norm.
    norm_type : float
        ``p`` of the norm (``float('inf')`` for the max-norm).
    error_if_nonfinite : bool
        Raise ``RuntimeError`` if the total norm is NaN or infinite.
    foreach : bool, optional
        Accepted (one implementation).
    """
    is_gen = isinstance(parameters, types.GeneratorType)
    params = _params(parameters)
    if is_gen and not params:
        warnings.warn("`parameters` is an empty generator, no gradient clipping will occur.",
                      stacklevel=2)
    grads = [p._grad for p in params if p._grad is not None]
    total = get_total_norm(grads, norm_type, error_if_nonfinite, foreach)
    clip_grads_with_norm_(params, max_norm, total, foreach)
    return total


def clip_grad_norm(parameters: Any, max_norm: float, norm_type: float = 2.0,
                   error_if_nonfinite: bool = False, foreach: bool | None = None) -> Tensor:
    """Deprecated name of :func:`clip_grad_norm_` (warns as PyTorch does)."""
    warnings.warn("`torch.nn.utils.clip_grad_norm` is now deprecated in favor of "
                  "`torch.nn.utils.clip_grad_norm_`.", FutureWarning, stacklevel=2)
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)


def clip_grad_value_(parameters: Any, clip_value: float, foreach: bool | None = None) -> None:
    """Clamp every gradient element into ``[-clip_value, clip_value]`` in place."""
    clip_value = float(clip_value)
    for p in _params(parameters):
        if p._grad is not None:
            np.clip(p._grad._data, -clip_value, clip_value, out=p._grad._data)
            p._grad._vc[0] += 1


def parameters_to_vector(parameters: Iterable[Tensor]) -> Tensor:
    """The parameters flattened and concatenated into one vector (recorded for autograd).

    >>> import tapegrad.torch as torch
    >>> lin = torch.nn.Linear(2, 1)
    >>> torch.nn.utils.parameters_to_vector(lin.parameters()).shape
    torch.Size([3])
    """
    from ... import _ops as O

    return O.cat([p.reshape(-1) for p in parameters])


def vector_to_parameters(vec: Tensor, parameters: Iterable[Tensor]) -> None:
    """Set the parameters' data from slices of ``vec`` (they then share ``vec``'s memory,
    as PyTorch's ``param.data = vec[...]`` makes them)."""
    if not isinstance(vec, Tensor):
        raise hinted(TypeError(with_hint(f"expected torch.Tensor, but got: {type(vec).__name__}",
                                  "pass a 1-D tensor, e.g. from parameters_to_vector")))
    params = list(parameters)
    total = sum(p._data.size for p in params)
    if vec._data.size < total:
        raise hinted(RuntimeError(with_hint(
            f"shape '[{total}]' is invalid for input of size {vec._data.size}",
            f"the parameters hold {total} values, the vector {vec._data.size}")))
    i = 0
    for p in params:
        n = p._data.size
        p._data = vec._data.reshape(-1)[i:i + n].reshape(p._data.shape)
        p._vc[0] += 1
        i += n


from . import rnn  # noqa: E402  (torch.nn.utils.rnn: packed sequences)

__all__ += ["rnn"]
