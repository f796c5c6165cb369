"""TensorFlow's exception classes (``tf.errors``).

As in TensorFlow, every class derives from :class:`OpError` and takes
``(node_def, op, message)``.  :class:`InvalidArgumentError` also derives from
the core's ``InvalidArgumentError`` (a ``ValueError``), so ``except
ValueError`` catches it too.

>>> import tapegrad.tf as tf
>>> try:
...     tf.constant(1.0) + tf.constant(1, dtype=tf.int32)
... except tf.errors.InvalidArgumentError as e:
...     print(e.message.splitlines()[0].split(" [Op")[0])
cannot compute AddV2 as input #1(zero-based) was expected to be a float tensor but is a int32 tensor
"""

from __future__ import annotations

from typing import Any

from .._core import errors as _core_errors
from .._core.errors import hinted, with_hint

__all__ = [
    "OpError", "InvalidArgumentError", "UnimplementedError", "InternalError", "NotFoundError",
    "FailedPreconditionError", "OutOfRangeError", "ResourceExhaustedError", "UnknownError",
    "raise_invalid_argument", "DataLossError",
]

OK = 0
CANCELLED = 1
UNKNOWN = 2
INVALID_ARGUMENT = 3
NOT_FOUND = 5
RESOURCE_EXHAUSTED = 8
FAILED_PRECONDITION = 9
OUT_OF_RANGE = 11
UNIMPLEMENTED = 12
INTERNAL = 13
DATA_LOSS = 15


class OpError(Exception):
    """The base class of TensorFlow's runtime errors.

    Examples
    --------
    >>> import tapegrad.tf as tf
    >>> issubclass(tf.errors.InvalidArgumentError, tf.errors.OpError)
    True
    """

    def __init__(self, node_def: Any, op: Any, message: str, error_code: int = UNKNOWN,
                 *args: Any) -> None:
        super().__init__(message)
        self._node_def = node_def
        self._op = op
        self._message = str(message)
        self._error_code = error_code
        hinted(self)  # a hint carried by the message becomes a note

    @property
    def message(self) -> str:
        """The error message that describes the error."""
        return self._message

    @property
    def op(self) -> Any:
        return self._op

    @property
    def node_def(self) -> Any:
        return self._node_def

    @property
    def error_code(self) -> int:
        return self._error_code

    def __str__(self) -> str:
        return self._message

    def __reduce__(self) -> Any:
        return (self.__class__, (self._node_def, self._op, self._message))


class InvalidArgumentError(OpError, _core_errors.InvalidArgumentError):
    """TensorFlow's ``tf.errors.InvalidArgumentError`` (also a ``ValueError``)."""

    def __init__(self, node_def: Any, op: Any, message: str, *args: Any) -> None:
        OpError.__init__(self, node_def, op, message, INVALID_ARGUMENT, *args)


class UnknownError(OpError):
    """TensorFlow's ``tf.errors.UnknownError``."""

    def __init__(self, node_def: Any, op: Any, message: str, *args: Any) -> None:
        OpError.__init__(self, node_def, op, message, UNKNOWN, *args)


class NotFoundError(OpError):
    """TensorFlow's ``tf.errors.NotFoundError``."""

    def __init__(self, node_def: Any, op: Any, message: str, *args: Any) -> None:
        OpError.__init__(self, node_def, op, message, NOT_FOUND, *args)


class ResourceExhaustedError(OpError):
    """TensorFlow's ``tf.errors.ResourceExhaustedError``."""

    def __init__(self, node_def: Any, op: Any, message: str, *args: Any) -> None:
        OpError.__init__(self, node_def, op, message, RESOURCE_EXHAUSTED, *args)


class FailedPreconditionError(OpError):
    """TensorFlow's ``tf.errors.FailedPreconditionError``."""

    def __init__(self, node_def: Any, op: Any, message: str, *args: Any) -> None:
        OpError.__init__(self, node_def, op, message, FAILED_PRECONDITION, *args)


class OutOfRangeError(OpError):
    """TensorFlow's ``tf.errors.OutOfRangeError``."""

    def __init__(self, node_def: Any, op: Any, message: str, *args: Any) -> None:
        OpError.__init__(self, node_def, op, message, OUT_OF_RANGE, *args)


class UnimplementedError(OpError):
    """TensorFlow's ``tf.errors.UnimplementedError``."""

    def __init__(self, node_def: Any, op: Any, message: str, *args: Any) -> None:
        OpError.__init__(self, node_def, op, message, UNIMPLEMENTED, *args)


class InternalError(OpError):
    """TensorFlow's ``tf.errors.InternalError``."""

    def __init__(self, node_def: Any, op: Any, message: str, *args: Any) -> None:
        OpError.__init__(self, node_def, op, message, INTERNAL, *args)


def function_node(kernel: str) -> str:
    """The prefix eager TensorFlow puts before a kernel's error message.

    ``kernel`` is the wrapped function's name: the op, plus the attributes
    TensorFlow adds for some ops (``ConcatV2_N_2``, ``Pack_N_3``,
    ``Split_num_split_2``), or oneDNN's kernel (``_MklMatMul`` for float32
    matmuls in the default x86 build).

    >>> function_node("Sum")
    '{{function_node __wrapped__Sum_device_/job:localhost/replica:0/task:0/device:CPU:0}} '
    """
    return ("{{function_node __wrapped__" + kernel +
            "_device_/job:localhost/replica:0/task:0/device:CPU:0}} ")


def kernel_message(message: str, op: str, name: str | None = "",
                   kernel: str | None = None) -> str:
    """TensorFlow's eager text of a kernel error: prefix, message, ``[Op:X] name:`` suffix.

    Type errors found before the kernel runs (``cannot compute X as input #i
    ...``, ``Value for attr ...``) have no prefix, as in TensorFlow.
    """
    suffix = f" [Op:{op}]" + ("" if name is None else f" name: {name}")
    early = message.startswith(("cannot compute ", "Value for attr "))
    prefix = "" if early else function_node(kernel or op)
    return prefix + message + suffix


class DataLossError(OpError):
    """TensorFlow's ``tf.errors.DataLossError`` (a corrupt or truncated file)."""

    def __init__(self, node_def: Any, op: Any, message: str, *args: Any) -> None:
        OpError.__init__(self, node_def, op, message, DATA_LOSS, *args)


def raise_invalid_argument(message: str, hint: str, op: str | None = None,
                           name: str | None = "", kernel: str | None = None) -> Any:
    """Raise :class:`InvalidArgumentError` with TensorFlow's eager prefix and ``[Op:X]`` suffix."""
    if op is not None:
        message = kernel_message(message, op, name, kernel)
    raise hinted(InvalidArgumentError(None, None, with_hint(message, hint)))


class OperatorNotAllowedInGraphError(TypeError):
    """TensorFlow's ``tf.errors.OperatorNotAllowedInGraphError`` (a ``TypeError``, not an
    ``OpError``): a symbolic tensor used as a Python ``bool`` or iterated, inside a trace."""


if "OperatorNotAllowedInGraphError" not in __all__:
    __all__ += ["OperatorNotAllowedInGraphError"]
