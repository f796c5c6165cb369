"""Thread-local grad mode and the stack of recording tapes.

Both are per thread: a thread started inside ``no_grad`` still records, as in
PyTorch, and a tape opened in one thread never records another thread's ops.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from typing import Any, TypeVar

F = TypeVar("F", bound=Callable[..., Any])


class _State(threading.local):
    def __init__(self) -> None:
        self.grad_enabled: bool = True
        # Tapes whose ``with`` block is open and that are not paused.  A tape is any
        # object with ``_interested(args) -> bool`` (record this op?) and
        # ``_recorded(node)`` (told of each node it recorded).
        self.tapes: tuple[Any, ...] = ()
        # None/False, or a callable marking each tensor made in inference mode (set by a
        # front-end's inference_mode; the core only calls it)
        self.inference: Any = False
        # The transform interpreters (forward mode, batching, ...) active on this thread,
        # innermost last; empty means every op runs its plain path.  See dispatch.py.
        self.levels: list[Any] = []
        # (pack, unpack) hook pairs of torch.autograd.graph.saved_tensors_hooks, innermost last
        self.saved_hooks: list[tuple[Any, Any]] = []
        # how many backward passes are running on this thread (a trace marks their ops)
        self.in_backward: int = 0
        # the callbacks hooks queued during the running ``backward()`` (autodiff.entry.queue_callback);
        # None outside one
        self.final_callbacks: list[Any] | None = None


STATE = _State()


def is_grad_enabled() -> bool:
    """Return whether operations are currently recorded."""
    return STATE.grad_enabled


class _GradModeContext:
    """Base for context managers that are also decorators."""

    _mode: bool = True

    def __init__(self) -> None:
        self._prev: list[bool] = []

    def __enter__(self) -> None:
        self._prev.append(STATE.grad_enabled)
        STATE.grad_enabled = self._mode

    def __exit__(self, *exc: object) -> None:
        STATE.grad_enabled = self._prev.pop()

    def __call__(self, fn: F) -> F:
        mode = self._mode

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            prev = STATE.grad_enabled
            STATE.grad_enabled = mode
            try:
                return fn(*args, **kwargs)
            finally:
                STATE.grad_enabled = prev

        return wrapper  # type: ignore[return-value]


class no_grad(_GradModeContext):
    """Context manager / decorator that disables recording.

    Examples
    --------
    >>> import tapegrad as tg
    >>> x = tg.tensor([1.0], requires_grad=True)
    >>> with tg.no_grad():
    ...     y = x * 2
    >>> y.requires_grad
    False
    """

    _mode = False


class enable_grad(_GradModeContext):
    """Context manager / decorator that enables recording (e.g. inside ``no_grad``)."""

    _mode = True


class set_grad_enabled(_GradModeContext):
    """Set grad mode on or off; usable as a function, context manager or decorator.

    As in PyTorch, ``set_grad_enabled(False)`` takes effect when called; the
    ``with`` form restores the previous mode on exit, and the decorator form
    restores it at once and applies the mode around each call.
    """

    def __init__(self, mode: bool) -> None:
        super().__init__()
        self._mode = bool(mode)
        self._prev.append(STATE.grad_enabled)
        STATE.grad_enabled = self._mode

    def __enter__(self) -> None:
        pass

    def __call__(self, fn: F) -> F:
        if self._prev:
            STATE.grad_enabled = self._prev.pop()
        return super().__call__(fn)
