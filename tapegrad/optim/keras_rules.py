"""Keras 3 update rules (RMSprop, Adagrad, Adadelta, Adamax, Nadam, Ftrl, Lion), in place.

Each function follows the ``update_step`` of the Keras 3 optimizer of the
same name operation by operation, with every Python scalar cast to the
parameter's dtype as Keras casts it, so float32 trajectories equal Keras's
to rounding.  ``state`` is the caller's per-parameter dict (slots are created
on the first call); decoupled weight decay (``p -= p * wd * lr``) is the
caller's, applied before the rule as Keras applies it.  SGD and Adam live in
:mod:`tapegrad.optim.rules` (shared with PyTorch).

>>> import numpy as np
>>> from tapegrad.optim.keras_rules import rmsprop_update
>>> p = np.array([1.0], np.float32); st: dict = {}
>>> rmsprop_update(p, np.array([0.5], np.float32), st, lr=0.01)
>>> p.round(5)
array([0.96838], dtype=float32)
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["decoupled_weight_decay", "rmsprop_update", "adagrad_update", "adadelta_update",
           "adamax_update", "nadam_update", "ftrl_update", "lion_update"]


def _slot(state: dict[str, Any], name: str, like: np.ndarray, fill: float = 0.0) -> np.ndarray:
    buf = state.get(name)
    if buf is None:
        buf = np.full_like(like, fill)
        state[name] = buf
    return buf


def decoupled_weight_decay(param: np.ndarray, *, lr: float, weight_decay: float) -> None:
    """Keras's weight decay before a step: ``p -= p * wd * lr`` (in the parameter's dtype)."""
    dt = param.dtype.type
    param -= param * dt(weight_decay) * dt(lr)


def rmsprop_update(param: np.ndarray, grad: np.ndarray, state: dict[str, Any], *, lr: float,
                   rho: float = 0.9, momentum: float = 0.0, epsilon: float = 1e-7,
                   centered: bool = False) -> None:
    """RMSprop: ``v = rho v + (1-rho) g^2``; ``p -= lr g / sqrt(v + eps)`` (centered:
    ``sqrt(v - mean_g^2 + eps)``; with momentum the increment is accumulated)."""
    dt = param.dtype.type
    g = grad.astype(param.dtype, copy=False)
    v = _slot(state, "velocity", param)
    v[...] = dt(rho) * v + dt(1 - rho) * np.square(g)
    if centered:
        a = _slot(state, "average_gradient", param)
        a[...] = dt(rho) * a + dt(1 - rho) * g
        denom = v - np.square(a) + dt(epsilon)
    else:
        denom = v + dt(epsilon)
    inc = (dt(lr) * g) / np.sqrt(denom)
    if momentum > 0:
        m = _slot(state, "momentum", param)
        m[...] = dt(momentum) * m + inc
        param -= m
    else:
        param -= inc


def adagrad_update(param: np.ndarray, grad: np.ndarray, state: dict[str, Any], *, lr: float,
                   initial_accumulator_value: float = 0.1, epsilon: float = 1e-7) -> None:
    """Adagrad: ``acc += g^2``; ``p -= lr g / sqrt(acc + eps)``."""
    dt = param.dtype.type
    g = grad.astype(param.dtype, copy=False)
    acc = _slot(state, "accumulator", param, initial_accumulator_value)
    acc += np.square(g)
    param -= (dt(lr) * g) / np.sqrt(acc + dt(epsilon))


def adadelta_update(param: np.ndarray, grad: np.ndarray, state: dict[str, Any], *, lr: float,
                    rho: float = 0.95, epsilon: float = 1e-7) -> None:
    """Adadelta: running averages of ``g^2`` and of the squared steps."""
    dt = param.dtype.type
    g = grad.astype(param.dtype, copy=False)
    ag = _slot(state, "accumulated_grad", param)
    ad = _slot(state, "accumulated_delta_var", param)
    eps = dt(epsilon)
    ag[...] = dt(rho) * ag + dt(1 - rho) * np.square(g)
    delta = -((np.sqrt(ad + eps) * g) / np.sqrt(ag + eps))
    ad[...] = dt(rho) * ad + dt(1 - rho) * np.square(delta)
    param += dt(lr) * delta


def adamax_update(param: np.ndarray, grad: np.ndarray, state: dict[str, Any], *, lr: float,
                  step: int, beta_1: float = 0.9, beta_2: float = 0.999,
                  epsilon: float = 1e-7) -> None:
    """Adamax (``step`` is the 1-based iteration): ``u = max(beta_2 u, |g|)``;
    ``p -= lr m / ((1 - beta_1^t)(u + eps))``."""
    dt = param.dtype.type
    g = grad.astype(param.dtype, copy=False)
    m = _slot(state, "momentum", param)
    u = _slot(state, "norm", param)
    b1p = np.power(dt(beta_1), dt(step))
    m += (g - m) * dt(1 - beta_1)
    u[...] = np.maximum(dt(beta_2) * u, np.abs(g))
    param -= (dt(lr) * m) / ((dt(1) - b1p) * (u + dt(epsilon)))


def nadam_u_product(u_product: Any, *, step: int, beta_1: float, dtype: Any) -> Any:
    """Nadam's shared product ``prod_t beta_1 (1 - 0.5 * 0.96^t)``, advanced once per step."""
    dt = np.dtype(dtype).type
    return dt(u_product) * dt(beta_1) * (dt(1.0) - dt(0.5) * np.power(dt(0.96), dt(step)))


def nadam_update(param: np.ndarray, grad: np.ndarray, state: dict[str, Any], *, lr: float,
                 step: int, u_product: Any, beta_1: float = 0.9, beta_2: float = 0.999,
                 epsilon: float = 1e-7) -> None:
    """Nadam (``step`` 1-based; ``u_product`` already advanced for this step)."""
    dt = param.dtype.type
    g = grad.astype(param.dtype, copy=False)
    t, t1 = dt(step), dt(step + 1)
    decay = dt(0.96)
    b1, b2 = dt(beta_1), dt(beta_2)
    u_t = b1 * (dt(1.0) - dt(0.5) * np.power(decay, t))
    u_t_1 = b1 * (dt(1.0) - dt(0.5) * np.power(decay, t1))
    up_t = dt(u_product)
    up_t_1 = up_t * u_t_1
    b2p = np.power(b2, t)
    m = _slot(state, "momentum", param)
    v = _slot(state, "velocity", param)
    m += (g - m) * dt(1 - b1)
    v += (np.square(g) - v) * dt(1 - b2)
    m_hat = (u_t_1 * m) / (dt(1) - up_t_1) + ((dt(1) - u_t) * g) / (dt(1) - up_t)
    v_hat = v / (dt(1) - b2p)
    param -= (m_hat * dt(lr)) / (np.sqrt(v_hat) + dt(epsilon))


def ftrl_update(param: np.ndarray, grad: np.ndarray, state: dict[str, Any], *, lr: float,
                learning_rate_power: float = -0.5, initial_accumulator_value: float = 0.1,
                l1_regularization_strength: float = 0.0, l2_regularization_strength: float = 0.0,
                l2_shrinkage_regularization_strength: float = 0.0, beta: float = 0.0) -> None:
    """Follow-the-regularized-leader (Keras's formulation)."""
    dt = param.dtype.type
    g = grad.astype(param.dtype, copy=False)
    accum = _slot(state, "accumulator", param, initial_accumulator_value)
    linear = _slot(state, "linear", param)
    lr_c = dt(lr)
    lr_power = dt(learning_rate_power)
    l2 = dt(l2_regularization_strength) + dt(beta) / (dt(2.0) * lr_c)
    grad_to_use = g + dt(2 * l2_shrinkage_regularization_strength) * param
    new_accum = accum + np.square(g)
    linear += grad_to_use - ((np.power(new_accum, -lr_power) - np.power(accum, -lr_power))
                             / lr_c) * param
    quadratic = np.power(new_accum, -lr_power) / lr_c + dt(2) * l2
    l1 = dt(l1_regularization_strength)
    clipped = np.clip(linear, -l1, l1)
    param[...] = (clipped - linear) / quadratic
    accum[...] = new_accum


def lion_update(param: np.ndarray, grad: np.ndarray, state: dict[str, Any], *, lr: float,
                beta_1: float = 0.9, beta_2: float = 0.99) -> None:
    """Lion: ``p -= lr sign(beta_1 m + (1-beta_1) g)``; ``m = beta_2 m + (1-beta_2) g``."""
    dt = param.dtype.type
    g = grad.astype(param.dtype, copy=False)
    m = _slot(state, "momentum", param)
    b1, b2 = dt(beta_1), dt(beta_2)
    param -= dt(lr) * np.sign(m * b1 + g * (dt(1.0) - b1))
    m[...] = m * b2 + g * (dt(1.0) - b2)
