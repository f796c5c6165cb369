"""Shared optimizer update rules, in place on NumPy arrays.

Both front-ends (``tapegrad.torch.optim`` and ``tapegrad.tf.keras.optimizers``)
call these functions; only the bookkeeping (parameter groups, slot variables,
hyper-parameter validation) lives in the front-ends.  ``state`` is a plain dict
owned by the caller (one per parameter); the functions create their buffers in
it on the first call.

``style="torch"`` follows PyTorch's single-tensor (``foreach=False``)
implementation operation by operation; ``style="keras"`` follows Keras 3's
``update_step`` (scalars cast to the variable's dtype, decoupled weight decay
``p -= p * wd * lr`` applied before the step).

>>> import numpy as np
>>> from tapegrad.optim import sgd_update
>>> p = np.array([1.0, 2.0]); st: dict = {}
>>> sgd_update(p, np.array([0.5, -0.5]), st, lr=0.1)
>>> p
array([0.95, 2.05])
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["sgd_update", "adam_update"]


def _check_style(style: str) -> None:
    if style not in ("torch", "keras"):
        raise ValueError(f"style must be 'torch' or 'keras', got {style!r}")


def _as_param_dtype(x: Any, param: np.ndarray) -> Any:
    """``x`` as a scalar of the parameter's dtype (Keras casts every scalar)."""
    return param.dtype.type(x)


def sgd_update(
    param: np.ndarray,
    grad: np.ndarray,
    state: dict,
    *,
    lr: float,
    momentum: float = 0.0,
    dampening: float = 0.0,
    nesterov: bool = False,
    weight_decay: float = 0.0,
    maximize: bool = False,
    style: str = "torch",
) -> None:
    """One SGD step on ``param`` in place.

    Parameters
    ----------
    param, grad : numpy.ndarray
        The parameter (updated in place) and its gradient (not modified).
    state : dict
        Per-parameter state owned by the caller; holds ``"momentum_buffer"``.
    lr, momentum, dampening, nesterov, weight_decay, maximize
        Hyper-parameters with PyTorch's meaning.  ``dampening`` is ignored by
        the Keras rule; ``weight_decay`` is L2 added to the gradient for
        ``style="torch"`` and decoupled (``p -= p*wd*lr``) for ``style="keras"``.
    style : {"torch", "keras"}
        ``"torch"``: ``buf = momentum*buf + (1-dampening)*g`` (``buf = g`` on
        the first step), step ``g + momentum*buf`` with Nesterov else ``buf``,
        ``p -= lr*step``.  ``"keras"``: ``v = momentum*v - lr*g``; ``p += v``,
        or with Nesterov ``p += momentum*v - lr*g``.

    Examples
    --------
    >>> import numpy as np
    >>> p = np.array([1.0]); st: dict = {}
    >>> for _ in range(2):
    ...     sgd_update(p, np.array([1.0]), st, lr=0.1, momentum=0.9)
    >>> p
    array([0.71])
    """
    _check_style(style)
    g = -grad if maximize else grad
    if style == "torch":
        if weight_decay != 0:
            g = g + weight_decay * param
        if momentum != 0:
            buf = state.get("momentum_buffer")
            if buf is None:
                buf = np.array(g, dtype=param.dtype, copy=True)
                state["momentum_buffer"] = buf
            else:
                buf *= momentum
                buf += (1 - dampening) * g
            g = g + momentum * buf if nesterov else buf
        param -= lr * g
        return
    # Keras 3
    lr_c = _as_param_dtype(lr, param)
    if weight_decay:
        wd_c = _as_param_dtype(weight_decay, param)
        param -= param * wd_c * lr_c
    g = np.asarray(g).astype(param.dtype, copy=False)
    if momentum != 0:
        mom = _as_param_dtype(momentum, param)
        v = state.get("momentum")
        if v is None:
            v = np.zeros_like(param)
            state["momentum"] = v
        v[...] = v * mom - g * lr_c
        if nesterov:
            param += v * mom - g * lr_c
        else:
            param += v
    else:
        param -= g * lr_c


def adam_update(
    param: np.ndarray,
    grad: np.ndarray,
    state: dict,
    *,
    lr: float,
    beta1: float = 0.9,
    beta2: float = 0.999,
    eps: float = 1e-8,
    weight_decay: float = 0.0,
    decoupled_weight_decay: bool = False,
    amsgrad: bool = False,
    maximize: bool = False,
    style: str = "torch",
) -> None:
    """One Adam (or AdamW) step on ``param`` in place.

    Parameters
    ----------
    param, grad : numpy.ndarray
        The parameter (updated in place) and its gradient (not modified).
    state : dict
        Per-parameter state owned by the caller: ``"step"`` (int),
        ``"exp_avg"``, ``"exp_avg_sq"`` and, with AMSGrad, ``"max_exp_avg_sq"``.
    lr, beta1, beta2, eps, weight_decay, decoupled_weight_decay, amsgrad, maximize
        Hyper-parameters with PyTorch's meaning.  ``decoupled_weight_decay=True``
        is AdamW (``p *= 1 - lr*wd`` before the step).
    style : {"torch", "keras"}
        ``"torch"``: PyTorch's rule (``eps`` added after
        ``sqrt(v)/sqrt(1-beta2**t)``).  ``"keras"``: Keras 3's rule
        (``alpha = lr*sqrt(1-beta2**t)/(1-beta1**t)``,
        ``p -= alpha*m/(sqrt(v)+eps)``), weight decay always decoupled
        (``p -= p*wd*lr``).

    Examples
    --------
    >>> import numpy as np
    >>> p = np.array([1.0]); st: dict = {}
    >>> adam_update(p, np.array([2.0]), st, lr=0.1)
    >>> p.round(6)
    array([0.9])
    """
    _check_style(style)
    g = -grad if maximize else grad
    step = int(state.get("step", 0)) + 1
    state["step"] = step
    if style == "torch":
        if "exp_avg" not in state:
            state["exp_avg"] = np.zeros_like(param)
            state["exp_avg_sq"] = np.zeros_like(param)
            if amsgrad:
                state["max_exp_avg_sq"] = np.zeros_like(param)
        m = state["exp_avg"]
        v = state["exp_avg_sq"]
        if weight_decay != 0:
            if decoupled_weight_decay:
                param *= 1 - lr * weight_decay
            else:
                g = g + weight_decay * param
        # exp_avg.lerp_(grad, 1 - beta1)
        m += (1 - beta1) * (g - m)
        v *= beta2
        v += (1 - beta2) * (g * g)
        bias_correction1 = 1 - beta1**step
        bias_correction2 = 1 - beta2**step
        step_size = lr / bias_correction1
        bias_correction2_sqrt = bias_correction2**0.5
        if amsgrad:
            vmax = state.setdefault("max_exp_avg_sq", np.zeros_like(param))
            np.maximum(vmax, v, out=vmax)
            denom = np.sqrt(vmax) / bias_correction2_sqrt + eps
        else:
            denom = np.sqrt(v) / bias_correction2_sqrt + eps
        param -= step_size * m / denom
        return
    # Keras 3
    dt = param.dtype.type
    lr_c = dt(lr)
    if weight_decay:
        param -= param * dt(weight_decay) * lr_c
    g = np.asarray(g).astype(param.dtype, copy=False)
    if "m" not in state:
        state["m"] = np.zeros_like(param)
        state["v"] = np.zeros_like(param)
        if amsgrad:
            state["v_hat"] = np.zeros_like(param)
    m = state["m"]
    v = state["v"]
    t = dt(step)
    b1 = dt(beta1)
    b2 = dt(beta2)
    b1p = np.power(b1, t)
    b2p = np.power(b2, t)
    alpha = lr_c * np.sqrt(dt(1) - b2p) / (dt(1) - b1p)
    # Keras computes ``1 - beta`` in Python (float64), then casts it to the weight dtype
    m += (g - m) * dt(1 - beta1)
    v += (np.square(g) - v) * dt(1 - beta2)
    if amsgrad:
        v_hat = state.setdefault("v_hat", np.zeros_like(param))
        np.maximum(v_hat, v, out=v_hat)
        v = v_hat
    param -= (m * alpha) / (np.sqrt(v) + dt(eps))
