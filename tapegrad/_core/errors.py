"""Exception helpers: the framework's exact message, and the tapegrad hint as a note.

``str(e)`` of an exception tapegrad raises is exactly the framework's
message, so code that prints an exception prints what the real framework
prints.  The one line of tapegrad hint travels beside it as a PEP 678 note
(``e.__notes__``), which tracebacks show under the message::

    raise hinted(RuntimeError(with_hint(message, hint)))

:func:`with_hint` returns the message itself (a ``str`` whose value is the
message alone) carrying the hint; :func:`hinted` moves that hint into a note
of the exception and returns it.  On Python 3.10, which has no
``add_note``, :func:`hinted` sets ``__notes__`` directly: tracebacks there do
not show it, but ``e.__notes__`` holds the hint all the same.

>>> e = hinted(ValueError(with_hint("bad shape", "reshape first")))
>>> str(e), e.__notes__
('bad shape', ['[tapegrad hint] reshape first'])
"""

from __future__ import annotations

from typing import TypeVar

_E = TypeVar("_E", bound=BaseException)

NOTE_PREFIX = "[tapegrad hint] "


class HintedMessage(str):
    """A framework message (its ``str`` value, unchanged) carrying a tapegrad ``hint``."""

    hint: str

    def __new__(cls, message: str, hint: str) -> HintedMessage:
        self = super().__new__(cls, message)
        self.hint = hint
        return self


def with_hint(message: str, hint: str) -> str:
    """The framework's ``message``, carrying a one-line tapegrad ``hint`` for :func:`hinted`.

    The returned value compares and prints as ``message`` alone; the hint is
    in its ``hint`` attribute.  Raise it through :func:`hinted` so that the
    hint becomes a note of the exception.

    >>> m = with_hint("boom", "try again")
    >>> m == "boom", m.hint
    (True, 'try again')
    """
    return HintedMessage(message, hint)


def warning_with_hint(message: str, hint: str) -> str:
    """A warning's text: ``message``, then the hint on its own line (warnings have no notes).

    >>> print(warning_with_hint("grad is None", "call retain_grad()"))
    grad is None
    [tapegrad hint] call retain_grad()
    """
    return f"{message}\n{NOTE_PREFIX}{hint}"


def hint_of(exc: BaseException) -> str | None:
    """The tapegrad hint of ``exc`` (its note, or the hint its message carries), if any."""
    for note in getattr(exc, "__notes__", ()) or ():
        if isinstance(note, str) and note.startswith(NOTE_PREFIX):
            return note[len(NOTE_PREFIX):]
    for a in exc.args[:1]:
        if isinstance(a, HintedMessage):
            return a.hint
    return None


def hinted(exc: _E, hint: str | None = None) -> _E:
    """Add the tapegrad hint to ``exc`` as a note and return ``exc`` (for ``raise hinted(...)``).

    ``hint`` defaults to the hint that the exception's message carries (see
    :func:`with_hint`).  A second call adds nothing.

    >>> e = hinted(TypeError("unsupported operand"), "cast one side")
    >>> str(e), e.__notes__
    ('unsupported operand', ['[tapegrad hint] cast one side'])
    """
    if hint is None:
        hint = next((a.hint for a in exc.args[:1] if isinstance(a, HintedMessage)), None)
    if hint is None:
        return exc
    note = NOTE_PREFIX + hint
    notes = getattr(exc, "__notes__", None)
    if notes is not None and note in notes:
        return exc
    add = getattr(exc, "add_note", None)
    if add is not None:
        add(note)
    else:  # Python 3.10: no add_note; keep the note where 3.11 would
        exc.__notes__ = [*(notes or []), note]  # type: ignore[attr-defined]
    return exc


SECOND_BACKWARD = (
    "Trying to backward through the graph a second time (or directly access saved tensors "
    "after they have already been freed). Saved intermediate values of the graph are freed "
    "when you call .backward() or autograd.grad(). Specify retain_graph=True if you need to "
    "backward through the graph a second time or if you need to access saved tensors after "
    "calling backward."
)

INT_REQUIRES_GRAD = "Only Tensors of floating point and complex dtype can require gradients"

LEAF_INPLACE = "a leaf Variable that requires grad is being used in an in-place operation."


class InvalidArgumentError(ValueError):
    """TensorFlow's ``tf.errors.InvalidArgumentError`` (a ``ValueError`` here too).

    TensorFlow's class derives from ``OpError``; tapegrad makes it a
    ``ValueError`` so that ``except ValueError`` also catches it.
    """
