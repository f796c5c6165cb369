"""Keras 3's "Exception encountered when calling ..." wrapper of errors raised in ``call``.

When an exception escapes a layer's ``call``, Keras re-raises it (same type,
same traceback) with the message framed by the call and the arguments it
received::

    Exception encountered when calling Dense.call().

    <the original message, in bold>

    Arguments received by Dense.call():
      • inputs=tf.Tensor(shape=(2, 3), dtype=float32)

Only the innermost ``call`` frames a message (the wrapped exception is not
framed again further out), and errors of a layer's own input check, which
Keras runs before ``call``, are framed by the caller, not by the layer.  The
tapegrad hint notes travel with the new exception.
"""

from __future__ import annotations

import inspect
from typing import Any

from ..._core.tensor import Tensor
from ..errors import OpError

__all__ = ["call_context_error", "mark_input_check"]


def mark_input_check(exc: BaseException, layer: Any) -> BaseException:
    """Mark ``exc`` as raised by ``layer``'s input check (Keras runs it before ``call``)."""
    exc._tg_input_check_of = id(layer)  # type: ignore[attr-defined]
    return exc


def _fmt(value: Any) -> Any:
    if isinstance(value, Tensor):
        return f"tf.Tensor(shape={tuple(value.shape)}, dtype={value._data.dtype.name})"
    if isinstance(value, (list, tuple)):
        return type(value)(_fmt(v) for v in value)
    if isinstance(value, dict):
        return {k: _fmt(v) for k, v in value.items()}
    if value is None:
        return None
    return repr(value)


def call_context_error(layer: Any, exc: BaseException, args: tuple[Any, ...],
                       kwargs: dict[str, Any]) -> BaseException | None:
    """The exception Keras raises for ``exc`` escaping ``layer.call(*args, **kwargs)``.

    ``None`` where Keras re-raises ``exc`` unchanged.
    """
    if getattr(exc, "_keras_call_info_injected", False) or \
            getattr(exc, "_tg_input_check_of", None) == id(layer):
        return None
    try:
        sig = inspect.signature(layer.call)
        bound = sig.bind(*args, **kwargs)
    except (TypeError, ValueError):
        return None
    lines = []
    for p in sig.parameters.values():
        value = _fmt(bound.arguments[p.name]) if p.name in bound.arguments else p.default
        lines.append(f"  \u2022 {p.name}={value}")
    if not lines:
        return None
    if isinstance(exc, OpError):
        message = exc.message
    else:
        message = exc.args[0] if exc.args else ""
    name = f"{type(layer).__name__}.call()"
    text = (f"Exception encountered when calling {name}.\n\n\x1b[1m{message}\x1b[0m\n\n"
            f"Arguments received by {name}:\n" + "\n".join(lines))
    new: BaseException
    if isinstance(exc, OpError):
        new = exc.__class__(exc.node_def, exc.op, text, exc.error_code)
    else:
        try:
            new = exc.__class__(text)
        except TypeError:
            new = RuntimeError(text)
    new._keras_call_info_injected = True  # type: ignore[attr-defined]
    for note in getattr(exc, "__notes__", None) or ():
        if note not in (getattr(new, "__notes__", None) or ()):
            if hasattr(new, "add_note"):
                new.add_note(note)
            else:  # Python 3.10
                new.__notes__ = [*getattr(new, "__notes__", []), note]  # type: ignore[attr-defined]
    return new
