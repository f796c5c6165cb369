"""Grad-mode context managers: ``no_grad``, ``enable_grad``, ``set_grad_enabled``,
``inference_mode`` (all also usable as decorators).

``no_grad``/``enable_grad``/``set_grad_enabled`` are the core's (thread-local).
``inference_mode`` also marks every tensor it creates as an *inference
tensor*: as in PyTorch, such a tensor cannot later be saved for backward
("Inference tensors cannot be saved for backward...") nor updated in place
outside inference mode.

>>> import tapegrad.torch as torch
>>> w = torch.tensor([1.0], requires_grad=True)
>>> with torch.inference_mode():
...     x = torch.ones(1) * 2
>>> x.requires_grad, torch.is_inference_mode_enabled()
(False, False)
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from ..._core import mode
from ..._core.errors import hinted, with_hint
from ..._core.mode import enable_grad, no_grad, set_grad_enabled
from ..._core.tensor import Tensor

_STATE = mode.STATE

_SAVE_MSG = ("Inference tensors cannot be saved for backward. Please do not use Tensors created "
             "in inference mode in computation tracked by autograd. To work around this, you can "
             "make a clone to get a normal tensor and use it in autograd, or use "
             "`torch.no_grad()` instead of `torch.inference_mode()`.")
_INPLACE_MSG = ("Inplace update to inference tensor outside InferenceMode is not allowed.You can "
                "make a clone to get a normal tensor before doing inplace update.See "
                "https://github.com/pytorch/rfcs/pull/17 for more details.")


class _InferenceVersion(list):
    """The version counter of an inference tensor: inference tensors have none."""

    def __getitem__(self, i: Any) -> Any:
        if not _STATE.inference:
            raise hinted(RuntimeError(with_hint(_SAVE_MSG, "call .clone() on the tensor made under "
                                         "torch.inference_mode() before using it with autograd")))
        return 0

    def __setitem__(self, i: Any, v: Any) -> None:
        if not _STATE.inference:
            raise hinted(RuntimeError(with_hint(_INPLACE_MSG, "clone the tensor before updating it")))


_INF_VC = _InferenceVersion([0])


def mark_inference(t: Tensor) -> Tensor:
    """Make ``t`` an inference tensor (called for every tensor made in inference mode)."""
    t._vc = _INF_VC
    t.__dict__["_inference"] = True
    return t


def is_inference(t: Tensor) -> bool:
    return t._vc is _INF_VC


class inference_mode:
    """Like ``no_grad``, and tensors made inside are inference tensors (PyTorch's rules)."""

    def __init__(self, mode: bool = True) -> None:
        self.mode = bool(mode)
        self._prev: list[tuple[bool, Any]] = []

    def __enter__(self) -> None:
        self._prev.append((_STATE.grad_enabled, _STATE.inference))
        if self.mode:
            _STATE.grad_enabled = False
            _STATE.inference = mark_inference
        else:
            _STATE.inference = False

    def __exit__(self, *exc: object) -> None:
        _STATE.grad_enabled, _STATE.inference = self._prev.pop()

    def __call__(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with inference_mode(self.mode):
                return fn(*args, **kwargs)

        return wrapper

    def clone(self) -> inference_mode:
        return inference_mode(self.mode)


def is_inference_mode_enabled() -> bool:
    return bool(_STATE.inference)


__all__ = ["no_grad", "enable_grad", "set_grad_enabled", "inference_mode",
           "is_inference_mode_enabled"]
