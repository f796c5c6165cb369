"""``torch.optim.LBFGS`` over the shared algorithm :func:`tapegrad.optim.lbfgs_step`."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..._core import mode
from ..._core.errors import hinted, with_hint
from ...optim import lbfgs_step
from .optimizer import Optimizer, check_lr_tensor

__all__ = ["LBFGS"]


class LBFGS(Optimizer):
    """Limited-memory BFGS with an optional strong-Wolfe line search; ``step`` needs a
    closure that clears the gradients, computes the loss, calls ``backward`` and returns
    the loss.

    >>> import tapegrad.torch as torch
    >>> x = torch.tensor([3.0, -2.0], requires_grad=True)
    >>> opt = torch.optim.LBFGS([x], line_search_fn="strong_wolfe")
    >>> def closure():
    ...     opt.zero_grad()
    ...     loss = (x ** 2).sum()
    ...     loss.backward()
    ...     return loss
    >>> _ = opt.step(closure)
    >>> bool(x.abs().max() < 1e-4)
    True
    """

    def __init__(self, params: Any, lr: float = 1, max_iter: int = 20,
                 max_eval: int | None = None, tolerance_grad: float = 1e-7,
                 tolerance_change: float = 1e-9, history_size: int = 100,
                 line_search_fn: str | None = None) -> None:
        check_lr_tensor(lr)
        if not 0.0 <= lr:
            raise hinted(ValueError(with_hint(f"Invalid learning rate: {lr}", "use lr >= 0")))
        if max_eval is None:
            max_eval = max_iter * 5 // 4
        defaults = dict(lr=lr, max_iter=max_iter, max_eval=max_eval,
                        tolerance_grad=tolerance_grad, tolerance_change=tolerance_change,
                        history_size=history_size, line_search_fn=line_search_fn)
        super().__init__(params, defaults)
        if len(self.param_groups) != 1:
            raise hinted(ValueError(with_hint(
                "LBFGS doesn't support per-parameter options (parameter groups)",
                "pass one list of parameters")))
        self._params = self.param_groups[0]["params"]

    def add_param_group(self, param_group: dict[str, Any]) -> None:
        if self.param_groups:
            raise hinted(ValueError(with_hint(
                "LBFGS doesn't support per-parameter options (parameter groups)",
                "pass one list of parameters")))
        super().add_param_group(param_group)

    def _gather_flat_grad(self) -> np.ndarray:
        views = [np.zeros(p._data.size, dtype=p._data.dtype) if p._grad is None
                 else p._grad._data.reshape(-1) for p in self._params]
        return np.concatenate(views, 0)

    def _add_grad(self, step_size: Any, update: np.ndarray) -> None:
        offset = 0
        for p in self._params:
            n = p._data.size
            if not p._data.flags.writeable:
                p._data = p._data.copy()
            p._data += step_size * update[offset:offset + n].reshape(p._data.shape)
            p._vc[0] += 1
            offset += n

    def _set_param(self, params_data: list[np.ndarray]) -> None:
        for p, data in zip(self._params, params_data):
            p._data[...] = data
            p._vc[0] += 1

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Run up to ``max_iter`` iterations; returns the closure's first loss."""
        if closure is None:
            raise hinted(TypeError(with_hint("LBFGS.step() missing 1 required positional argument: "
                                      "'closure'",
                                      "LBFGS re-evaluates the loss: pass a closure")))
        from ...autodiff import tracing as _tracing

        lv = _tracing.current()
        if lv is not None:  # its line search reads values: not one program
            lv.breaks.append(("LBFGS.step", "LBFGS"))
        group = self.param_groups[0]
        first: list[Any] = []

        def evaluate() -> tuple[float, np.ndarray]:
            with mode.enable_grad():
                loss = closure()
            if not first:
                first.append(loss)
            return float(loss), self._gather_flat_grad()

        with mode.no_grad():
            lbfgs_step(self.state[self._params[0]], evaluate, self._add_grad,
                       lambda: [p._data.copy() for p in self._params], self._set_param,
                       lr=float(group["lr"]), max_iter=group["max_iter"],
                       max_eval=group["max_eval"],
                       tolerance_grad=group["tolerance_grad"],
                       tolerance_change=group["tolerance_change"],
                       history_size=group["history_size"],
                       line_search_fn=group["line_search_fn"])
        return first[0]
