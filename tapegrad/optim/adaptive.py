"""More update rules, in place on NumPy arrays: Adagrad, Adadelta, Adamax, NAdam, RAdam,
RMSprop, ASGD and Rprop.

Each follows PyTorch's single-tensor (``foreach=False``, the CPU default)
implementation operation by operation, so that float32 trajectories agree with
PyTorch's to rounding.  As in :mod:`tapegrad.optim.rules`, ``state`` is a dict owned
by the caller (one per parameter), filled on the first call; Python scalars
meet float32 arrays as NumPy's weak scalars, which is how PyTorch casts a
scalar argument (``mul_(rho)``, ``addcmul_(value=...)``) to the tensor's dtype.

The Keras front-end shares the rules whose math is the same (Adagrad, RMSprop
without momentum); the rest of Keras' variants live with its optimizers.

>>> import numpy as np
>>> from tapegrad.optim import rmsprop_update
>>> p = np.array([1.0]); st: dict = {}
>>> rmsprop_update(p, np.array([2.0]), st, lr=0.01)
>>> p.round(4)
array([0.9])
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["adagrad_update", "adadelta_update", "adamax_update", "nadam_update",
           "radam_update", "rmsprop_update", "asgd_update", "rprop_update", "adafactor_update",
           "lerp_"]


def _fma(a: np.ndarray, b: Any, c: np.ndarray) -> np.ndarray:
    """``a*b + c`` rounded once, as PyTorch's vectorised CPU kernels compute it (exact in
    float64 for float32 and float16 operands)."""
    if a.dtype == np.float64:
        return a * b + c
    wide = np.float64
    return (a.astype(wide) * wide(a.dtype.type(b)) + c.astype(wide)).astype(a.dtype)


def lerp_(start: np.ndarray, end: np.ndarray, weight: float) -> None:
    """``start.lerp_(end, weight)`` in place with PyTorch's two-sided formula (a fused
    multiply-add on each side)."""
    diff = end - start
    if abs(weight) < 0.5:
        start[...] = _fma(diff, weight, start)
    else:
        start[...] = _fma(diff, -(1 - weight), end)


def _step(state: dict[str, Any]) -> int:
    step = int(state.get("step", 0)) + 1
    state["step"] = step
    return step


def _grad(param: np.ndarray, grad: np.ndarray, weight_decay: float, maximize: bool
          ) -> np.ndarray:
    g = -grad if maximize else grad
    if weight_decay != 0:
        g = g + weight_decay * param
    return g


def adagrad_update(param: np.ndarray, grad: np.ndarray, state: dict[str, Any], *,
                   lr: float = 1e-2, lr_decay: float = 0.0, weight_decay: float = 0.0,
                   initial_accumulator_value: float = 0.0, eps: float = 1e-10,
                   maximize: bool = False) -> None:
    """One Adagrad step: ``sum += g*g``; ``p -= clr * g / (sqrt(sum) + eps)`` with
    ``clr = lr / (1 + (t-1)*lr_decay)``.

    Parameters
    ----------
    param, grad : numpy.ndarray
        Parameter (updated in place) and gradient.
    state : dict
        ``"step"`` and ``"sum"`` (created as ``initial_accumulator_value``).
    lr, lr_decay, weight_decay, initial_accumulator_value, eps, maximize
        PyTorch's hyper-parameters.
    """
    if "sum" not in state:
        state["sum"] = np.full_like(param, initial_accumulator_value)
    step = _step(state)
    g = _grad(param, grad, weight_decay, maximize)
    clr = lr / (1 + (step - 1) * lr_decay)
    s = state["sum"]
    s += 1 * g * g
    std = np.sqrt(s) + eps
    param += -clr * g / std


def adadelta_update(param: np.ndarray, grad: np.ndarray, state: dict[str, Any], *,
                    lr: float = 1.0, rho: float = 0.9, eps: float = 1e-6,
                    weight_decay: float = 0.0, maximize: bool = False) -> None:
    """One Adadelta step: ``v = rho*v + (1-rho)*g*g``,
    ``delta = sqrt(u + eps)/sqrt(v + eps) * g``, ``u = rho*u + (1-rho)*delta**2``,
    ``p -= lr*delta``."""
    if "square_avg" not in state:
        state["square_avg"] = np.zeros_like(param)
        state["acc_delta"] = np.zeros_like(param)
    _step(state)
    g = _grad(param, grad, weight_decay, maximize)
    v, u = state["square_avg"], state["acc_delta"]
    v *= rho
    v += (1 - rho) * g * g
    std = np.sqrt(v + eps)
    delta = np.sqrt(u + eps)
    delta /= std
    delta *= g
    u *= rho
    u += (1 - rho) * delta * delta
    param += -lr * delta


def adamax_update(param: np.ndarray, grad: np.ndarray, state: dict[str, Any], *,
                  lr: float = 2e-3, beta1: float = 0.9, beta2: float = 0.999,
                  eps: float = 1e-8, weight_decay: float = 0.0, maximize: bool = False
                  ) -> None:
    """One Adamax step: ``m = lerp(m, g, 1-b1)``, ``u = max(b2*u, |g| + eps)``,
    ``p -= lr/(1-b1**t) * m/u``."""
    if "exp_avg" not in state:
        state["exp_avg"] = np.zeros_like(param)
        state["exp_inf"] = np.zeros_like(param)
    step = _step(state)
    g = _grad(param, grad, weight_decay, maximize)
    m, u = state["exp_avg"], state["exp_inf"]
    lerp_(m, g, 1 - beta1)
    u *= beta2
    np.maximum(u, np.abs(g) + eps, out=u)
    clr = lr / (1 - beta1**step)
    param += -clr * m / u


def nadam_update(param: np.ndarray, grad: np.ndarray, state: dict[str, Any], *,
                 lr: float = 2e-3, beta1: float = 0.9, beta2: float = 0.999,
                 eps: float = 1e-8, weight_decay: float = 0.0, momentum_decay: float = 4e-3,
                 decoupled_weight_decay: bool = False, maximize: bool = False) -> None:
    """One NAdam step (Dozat's Nesterov Adam with PyTorch's momentum schedule
    ``mu_t = b1*(1 - 0.5*0.96**(t*momentum_decay))``).

    ``state["mu_product"]`` is kept in float32, as PyTorch keeps it in a float32
    tensor."""
    if "exp_avg" not in state:
        state["mu_product"] = np.float32(1.0)
        state["exp_avg"] = np.zeros_like(param)
        state["exp_avg_sq"] = np.zeros_like(param)
    step = _step(state)
    g = -grad if maximize else grad
    bias_correction2 = 1 - beta2**step
    if weight_decay != 0:
        if decoupled_weight_decay:
            param *= 1 - lr * weight_decay
        else:
            g = g + weight_decay * param
    mu = beta1 * (1.0 - 0.5 * (0.96 ** (step * momentum_decay)))
    mu_next = beta1 * (1.0 - 0.5 * (0.96 ** ((step + 1) * momentum_decay)))
    mu_product = np.float32(state["mu_product"] * np.float32(mu))
    state["mu_product"] = mu_product
    m, v = state["exp_avg"], state["exp_avg_sq"]
    lerp_(m, g, 1 - beta1)
    v *= beta2
    v += (1 - beta2) * g * g
    denom = np.sqrt(v / bias_correction2)
    mu_product_next = float(mu_product) * mu_next
    denom += eps
    param += (-lr * (1.0 - mu) / (1.0 - float(mu_product))) * g / denom
    param += ((-lr * mu_next) / (1.0 - mu_product_next)) * m / denom


def radam_update(param: np.ndarray, grad: np.ndarray, state: dict[str, Any], *,
                 lr: float = 1e-3, beta1: float = 0.9, beta2: float = 0.999,
                 eps: float = 1e-8, weight_decay: float = 0.0,
                 decoupled_weight_decay: bool = False, maximize: bool = False) -> None:
    """One RAdam step (rectified Adam): an SGD-with-momentum step while the variance
    estimate is unreliable (``rho_t <= 5``), a rectified Adam step after."""
    if "exp_avg" not in state:
        state["exp_avg"] = np.zeros_like(param)
        state["exp_avg_sq"] = np.zeros_like(param)
    step = _step(state)
    g = -grad if maximize else grad
    if weight_decay != 0:
        if decoupled_weight_decay:
            param *= 1 - lr * weight_decay
        else:
            g = g + weight_decay * param
    m, v = state["exp_avg"], state["exp_avg_sq"]
    lerp_(m, g, 1 - beta1)
    v *= beta2
    v += (1 - beta2) * g * g
    bias_correction1 = 1 - beta1**step
    bias_correction2 = 1 - beta2**step
    corrected = m / bias_correction1
    rho_inf = 2 / (1 - beta2) - 1
    rho_t = rho_inf - 2 * step * (beta2**step) / bias_correction2
    if rho_t > 5.0:
        rect = ((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t)
                ) ** 0.5
        adaptive_lr = (bias_correction2**0.5) / (np.sqrt(v) + eps)
        param += -1.0 * (corrected * lr * adaptive_lr * rect)
    else:
        param += -1.0 * (corrected * lr)


def rmsprop_update(param: np.ndarray, grad: np.ndarray, state: dict[str, Any], *,
                   lr: float = 1e-2, alpha: float = 0.99, eps: float = 1e-8,
                   weight_decay: float = 0.0, momentum: float = 0.0, centered: bool = False,
                   maximize: bool = False) -> None:
    """One RMSprop step: ``v = alpha*v + (1-alpha)*g*g``; centered subtracts the squared
    running mean of ``g``; ``p -= lr*g/(sqrt(v)+eps)``, or through a momentum buffer
    ``buf = momentum*buf + g/(sqrt(v)+eps)``."""
    if "square_avg" not in state:
        state["square_avg"] = np.zeros_like(param)
        if momentum > 0:
            state["momentum_buffer"] = np.zeros_like(param)
        if centered:
            state["grad_avg"] = np.zeros_like(param)
    _step(state)
    g = _grad(param, grad, weight_decay, maximize)
    v = state["square_avg"]
    v *= alpha
    v += (1 - alpha) * g * g
    if centered:
        ga = state["grad_avg"]
        lerp_(ga, g, 1 - alpha)
        avg = np.sqrt(v + -1 * ga * ga)
    else:
        avg = np.sqrt(v)
    avg += eps
    if momentum > 0:
        buf = state["momentum_buffer"]
        buf *= momentum
        buf += 1 * g / avg
        param += -lr * buf
    else:
        param += -lr * g / avg


def asgd_update(param: np.ndarray, grad: np.ndarray, state: dict[str, Any], *,
                lr: float = 1e-2, lambd: float = 1e-4, alpha: float = 0.75, t0: float = 1e6,
                weight_decay: float = 0.0, maximize: bool = False) -> None:
    """One averaged-SGD step: ``p *= 1 - lambd*eta``; ``p -= eta*g``; the running average
    ``ax`` starts after ``t0`` steps; ``eta = lr/(1 + lambd*lr*t)**alpha``.

    ``eta`` and ``mu`` are kept in float32, as PyTorch keeps them in float32 tensors."""
    if "eta" not in state:
        state["eta"] = np.float32(lr)
        state["mu"] = np.float32(1.0)
        state["ax"] = np.zeros_like(param)
    step = _step(state)
    g = _grad(param, grad, weight_decay, maximize)
    eta = float(state["eta"])
    param *= 1 - lambd * eta
    param += -eta * g
    ax = state["ax"]
    if float(state["mu"]) != 1:
        ax += (param - ax) * state["mu"]
    else:
        ax[...] = param
    state["eta"] = np.float32(lr / ((1 + lambd * lr * step) ** alpha))
    state["mu"] = np.float32(1 / max(1, step - t0))


def rprop_update(param: np.ndarray, grad: np.ndarray, state: dict[str, Any], *,
                 lr: float = 1e-2, etaminus: float = 0.5, etaplus: float = 1.2,
                 step_size_min: float = 1e-6, step_size_max: float = 50.0,
                 maximize: bool = False) -> None:
    """One Rprop step: each element's step grows by ``etaplus`` while its gradient keeps
    its sign and shrinks by ``etaminus`` when the sign flips (that element then skips
    the update); ``p -= sign(g)*step_size``."""
    if "prev" not in state:
        state["prev"] = np.zeros_like(param)
        state["step_size"] = np.full_like(grad, lr)
    _step(state)
    g = -grad if maximize else grad
    prev, step_size = state["prev"], state["step_size"]
    sign = np.sign(g * prev)
    pos, neg, zero = sign > 0, sign < 0, sign == 0
    sign[pos] = etaplus
    sign[neg] = etaminus
    sign[zero] = 1
    step_size *= sign
    np.clip(step_size, step_size_min, step_size_max, out=step_size)
    g = np.array(g, copy=True)
    g[sign == sign.dtype.type(etaminus)] = 0
    param += -1 * np.sign(g) * step_size
    prev[...] = g


def _norm2(a: np.ndarray, axis: int | None = None) -> Any:
    """The 2-norm in ``a``'s dtype, accumulated in float64 (as ``torch.norm``, to rounding)."""
    x = a.astype(np.float64)
    if axis is None:
        return a.dtype.type(np.sqrt(np.dot(x.reshape(-1), x.reshape(-1))))
    return np.sqrt((x * x).sum(axis=axis, keepdims=True)).astype(a.dtype)


def adafactor_update(param: np.ndarray, grad: np.ndarray, state: dict[str, Any], *,
                     lr: float = 1e-2, beta2_decay: float = -0.8,
                     eps1: float | None = None, eps2: float = 1e-3, d: float = 1.0,
                     weight_decay: float = 0.0, maximize: bool = False) -> None:
    """One Adafactor step (Shazeer & Stern), PyTorch's variant.

    Matrices (and stacks of them) keep factored second moments: a running mean of the
    squared gradient per row (``row_var``) and per column (``col_var``), whose outer
    product over the mean of ``row_var`` estimates the full variance; vectors keep the
    full ``variance``.  ``beta2_t = 1 - t**beta2_decay``; the step is
    ``alpha = max(eps2, rms(p)) * min(lr, 1/sqrt(t))``; the update ``g/sqrt(v)`` is
    clipped to RMS ``d``.  ``eps1`` defaults to the dtype's machine epsilon.
    """
    if "step" not in state:
        if grad.ndim > 1:
            state["row_var"] = np.zeros(grad.shape[:-1] + (1,), dtype=grad.dtype)
            state["col_var"] = np.zeros(grad.shape[:-2] + (1, grad.shape[-1]), dtype=grad.dtype)
        else:
            state["variance"] = np.zeros_like(grad)
    step = _step(state)
    g = -grad if maximize else grad
    if eps1 is None:
        eps1 = float(np.finfo(param.dtype).eps)
    one_minus_beta2_t = float(step) ** beta2_decay
    rho_t = min(lr, 1 / (float(step) ** 0.5))
    alpha = max(eps2, float(_norm2(param)) / (param.size ** 0.5)) * rho_t
    if weight_decay != 0:
        param *= 1 - lr * weight_decay
    if g.ndim > 1:
        row_var, col_var = state["row_var"], state["col_var"]
        row_mean = np.square(_norm2(g, -1)) / g.shape[-1]
        lerp_(row_var, row_mean, one_minus_beta2_t)
        col_mean = np.square(_norm2(g, -2)) / g.shape[-2]
        lerp_(col_var, col_mean, one_minus_beta2_t)
        var_estimate = row_var @ col_var
        var_estimate /= np.maximum(row_var.mean(axis=-2, keepdims=True), eps1)
    else:
        variance = state["variance"]
        lerp_(variance, g * g, one_minus_beta2_t)
        var_estimate = variance.copy()
    update = 1 / np.sqrt(np.maximum(var_estimate, eps1 * eps1))
    update *= g
    denom = max(1.0, float(_norm2(update)) / ((update.size ** 0.5) * d))
    param += (-alpha / denom) * update
