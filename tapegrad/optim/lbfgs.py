"""L-BFGS on a flat parameter vector, with PyTorch's iteration and its strong-Wolfe line
search (``torch.optim.LBFGS``, itself after minFunc).

The front-end supplies four callbacks (evaluate the closure and gather the flat
gradient, add ``t*d`` to the parameters, copy them, restore them); scalars are
kept as NumPy scalars of the parameters' dtype, as PyTorch keeps them in 0-d
tensors, so the float32 arithmetic is PyTorch's.

>>> import numpy as np
>>> from tapegrad.optim.lbfgs import lbfgs_step
>>> x = np.array([3.0, -2.0]); st: dict = {}
>>> def evaluate():
...     return float((x ** 2).sum()), 2 * x
>>> def add(t, d):
...     x[...] += t * d
>>> _ = lbfgs_step(st, evaluate, add, lambda: x.copy(), lambda v: x.__setitem__(..., v),
...                lr=1.0, max_iter=20, max_eval=25, tolerance_grad=1e-7,
...                tolerance_change=1e-9, history_size=10, line_search_fn="strong_wolfe")
>>> bool(np.abs(x).max() < 1e-6)
True
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

__all__ = ["lbfgs_step"]


def _cubic_interpolate(x1: Any, f1: Any, g1: Any, x2: Any, f2: Any, g2: Any,
                       bounds: tuple[Any, Any] | None = None) -> Any:
    """Minimiser of the cubic through two points with slopes, clamped to ``bounds``."""
    if bounds is not None:
        xmin_bound, xmax_bound = bounds
    else:
        xmin_bound, xmax_bound = (x1, x2) if x1 <= x2 else (x2, x1)
    d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2)
    d2_square = d1**2 - g1 * g2
    if d2_square >= 0:
        d2 = np.sqrt(d2_square)
        if x1 <= x2:
            min_pos = x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
        else:
            min_pos = x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2))
        return min(max(min_pos, xmin_bound), xmax_bound)
    return (xmin_bound + xmax_bound) / 2.0


def _strong_wolfe(obj_func: Callable[[Any, Any, np.ndarray], tuple[float, np.ndarray]],
                  x: Any, t: Any, d: np.ndarray, f: float, g: np.ndarray, gtd: Any,
                  c1: float = 1e-4, c2: float = 0.9, tolerance_change: float = 1e-9,
                  max_ls: int = 25) -> tuple[float, np.ndarray, Any, int]:
    """A step ``t`` along ``d`` satisfying the strong Wolfe conditions (bracket, then zoom)."""
    d_norm = np.abs(d).max()
    g = g.copy()
    f_new, g_new = obj_func(x, t, d)
    ls_func_evals = 1
    gtd_new = g_new.dot(d)
    t_prev, f_prev, g_prev, gtd_prev = 0, f, g, gtd
    done = False
    ls_iter = 0
    bracket: list[Any] = []
    bracket_f: list[Any] = []
    bracket_g: list[Any] = []
    bracket_gtd: list[Any] = []
    while ls_iter < max_ls:
        if f_new > (f + c1 * t * gtd) or (ls_iter > 1 and f_new >= f_prev):
            bracket, bracket_f = [t_prev, t], [f_prev, f_new]
            bracket_g, bracket_gtd = [g_prev, g_new.copy()], [gtd_prev, gtd_new]
            break
        if abs(gtd_new) <= -c2 * gtd:
            bracket, bracket_f, bracket_g = [t], [f_new], [g_new]
            done = True
            break
        if gtd_new >= 0:
            bracket, bracket_f = [t_prev, t], [f_prev, f_new]
            bracket_g, bracket_gtd = [g_prev, g_new.copy()], [gtd_prev, gtd_new]
            break
        min_step = t + 0.01 * (t - t_prev)
        max_step = t * 10
        tmp = t
        t = _cubic_interpolate(t_prev, f_prev, gtd_prev, t, f_new, gtd_new,
                               bounds=(min_step, max_step))
        t_prev, f_prev, g_prev, gtd_prev = tmp, f_new, g_new.copy(), gtd_new
        f_new, g_new = obj_func(x, t, d)
        ls_func_evals += 1
        gtd_new = g_new.dot(d)
        ls_iter += 1
    if ls_iter == max_ls:
        bracket, bracket_f, bracket_g = [0, t], [f, f_new], [g, g_new]
    insuf_progress = False
    low_pos, high_pos = (0, 1) if bracket_f[0] <= bracket_f[-1] else (1, 0)
    while not done and ls_iter < max_ls:
        if abs(bracket[1] - bracket[0]) * d_norm < tolerance_change:
            break
        t = _cubic_interpolate(bracket[0], bracket_f[0], bracket_gtd[0], bracket[1],
                               bracket_f[1], bracket_gtd[1])
        eps = 0.1 * (max(bracket) - min(bracket))
        if min(max(bracket) - t, t - min(bracket)) < eps:
            if insuf_progress or t >= max(bracket) or t <= min(bracket):
                if abs(t - max(bracket)) < abs(t - min(bracket)):
                    t = max(bracket) - eps
                else:
                    t = min(bracket) + eps
                insuf_progress = False
            else:
                insuf_progress = True
        else:
            insuf_progress = False
        f_new, g_new = obj_func(x, t, d)
        ls_func_evals += 1
        gtd_new = g_new.dot(d)
        ls_iter += 1
        if f_new > (f + c1 * t * gtd) or f_new >= bracket_f[low_pos]:
            bracket[high_pos], bracket_f[high_pos] = t, f_new
            bracket_g[high_pos], bracket_gtd[high_pos] = g_new.copy(), gtd_new
            low_pos, high_pos = (0, 1) if bracket_f[0] <= bracket_f[1] else (1, 0)
        else:
            if abs(gtd_new) <= -c2 * gtd:
                done = True
            elif gtd_new * (bracket[high_pos] - bracket[low_pos]) >= 0:
                bracket[high_pos] = bracket[low_pos]
                bracket_f[high_pos] = bracket_f[low_pos]
                bracket_g[high_pos] = bracket_g[low_pos]
                bracket_gtd[high_pos] = bracket_gtd[low_pos]
            bracket[low_pos], bracket_f[low_pos] = t, f_new
            bracket_g[low_pos], bracket_gtd[low_pos] = g_new.copy(), gtd_new
    return bracket_f[low_pos], bracket_g[low_pos], bracket[low_pos], ls_func_evals


def lbfgs_step(state: dict[str, Any], evaluate: Callable[[], tuple[float, np.ndarray]],
               add_dir: Callable[[Any, np.ndarray], None], clone_x: Callable[[], Any],
               set_x: Callable[[Any], None], *, lr: float, max_iter: int, max_eval: int,
               tolerance_grad: float, tolerance_change: float, history_size: int,
               line_search_fn: str | None) -> float:
    """Up to ``max_iter`` L-BFGS iterations (PyTorch's ``LBFGS.step``).

    Parameters
    ----------
    state : dict
        Kept between calls: ``func_evals``, ``n_iter``, the direction ``d``, step ``t``,
        the curvature pairs ``old_dirs``/``old_stps``/``ro``, ``H_diag``,
        ``prev_flat_grad`` and ``prev_loss``.
    evaluate : callable
        Runs the closure at the current parameters; returns ``(loss, flat_grad)``.
    add_dir : callable
        ``add_dir(t, d)`` adds ``t*d`` to the parameters in place.
    clone_x, set_x : callable
        Copy the parameters, and restore such a copy (for the line search).
    lr, max_iter, max_eval, tolerance_grad, tolerance_change, history_size, line_search_fn
        PyTorch's hyper-parameters (``line_search_fn`` is ``None`` or ``"strong_wolfe"``).

    Returns
    -------
    float
        The loss at the start of the step.
    """
    state.setdefault("func_evals", 0)
    state.setdefault("n_iter", 0)
    loss, flat_grad = evaluate()
    orig_loss = loss
    current_evals = 1
    state["func_evals"] += 1
    if np.abs(flat_grad).max() <= tolerance_grad:
        return orig_loss
    # resumed from the previous call (None on the first; n_iter == 1 then sets them)
    d: Any = state.get("d")
    t: Any = state.get("t")
    old_dirs: Any = state.get("old_dirs")
    old_stps: Any = state.get("old_stps")
    ro: Any = state.get("ro")
    h_diag: Any = state.get("H_diag")
    prev_flat_grad: Any = state.get("prev_flat_grad")
    prev_loss: Any = state.get("prev_loss")
    n_iter = 0
    while n_iter < max_iter:
        n_iter += 1
        state["n_iter"] += 1
        if state["n_iter"] == 1:
            d = -flat_grad
            old_dirs, old_stps, ro = [], [], []
            h_diag = 1
        else:
            y = flat_grad - prev_flat_grad
            s = d * t
            ys = y.dot(s)
            if ys > 1e-10:
                if len(old_dirs) == history_size:
                    old_dirs.pop(0)
                    old_stps.pop(0)
                    ro.pop(0)
                old_dirs.append(y)
                old_stps.append(s)
                ro.append(1.0 / ys)
                h_diag = ys / y.dot(y)
            num_old = len(old_dirs)
            if "al" not in state:
                state["al"] = [None] * history_size
            al = state["al"]
            q = -flat_grad
            for i in range(num_old - 1, -1, -1):
                al[i] = old_stps[i].dot(q) * ro[i]
                q += -al[i] * old_dirs[i]
            d = r = q * h_diag
            for i in range(num_old):
                be_i = old_dirs[i].dot(r) * ro[i]
                r += (al[i] - be_i) * old_stps[i]
        if prev_flat_grad is None:
            prev_flat_grad = flat_grad.copy()
        else:
            prev_flat_grad[...] = flat_grad
        prev_loss = loss
        if state["n_iter"] == 1:
            t = min(1.0, 1.0 / np.abs(flat_grad).sum()) * lr
        else:
            t = lr
        gtd = flat_grad.dot(d)
        if gtd > -tolerance_change:
            break
        ls_func_evals = 0
        if line_search_fn is not None:
            if line_search_fn != "strong_wolfe":
                raise RuntimeError("only 'strong_wolfe' is supported")
            x_init = clone_x()

            def obj_func(x: Any, t: Any, d: np.ndarray) -> tuple[float, np.ndarray]:
                add_dir(t, d)
                out = evaluate()
                set_x(x)
                return out

            loss, flat_grad, t, ls_func_evals = _strong_wolfe(
                obj_func, x_init, t, d, loss, flat_grad, gtd, max_ls=max_eval - current_evals)
            add_dir(t, d)
            opt_cond = np.abs(flat_grad).max() <= tolerance_grad
        else:
            add_dir(t, d)
            opt_cond = False
            if n_iter != max_iter:
                loss, flat_grad = evaluate()
                opt_cond = np.abs(flat_grad).max() <= tolerance_grad
                ls_func_evals = 1
        current_evals += ls_func_evals
        state["func_evals"] += ls_func_evals
        if n_iter == max_iter or current_evals >= max_eval or opt_cond:
            break
        if np.abs(d * t).max() <= tolerance_change:
            break
        if abs(loss - prev_loss) < tolerance_change:
            break
    state.update(d=d, t=t, old_dirs=old_dirs, old_stps=old_stps, ro=ro, H_diag=h_diag,
                 prev_flat_grad=prev_flat_grad, prev_loss=prev_loss)
    return orig_loss
