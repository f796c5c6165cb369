"""``tf.print``'s text: TensorFlow's ``PrintV2`` kernel formatting, in Python.

Tensors print as ``Tensor::SummarizeValue(summarize, print_v2=true)`` writes
them: nested brackets, elements separated by one space (a newline and an
indent between rows), the first and last ``summarize`` entries of each
dimension around ``...``.  Each element is ``strings::StrCat`` of it: floats
by ``FloatToBuffer`` (``%.6g``, or ``%.9g`` when six digits do not give the
float back; doubles ``%.15g`` / ``%.17g``; halves as floats), subnormals as
zero (the kernels run with denormals-are-zero), booleans as ``1``/``0``.
Python values print with ``str``; a list, tuple or dict holding tensors
prints as Python prints it, each tensor in TensorFlow's form.
"""

from __future__ import annotations

import contextlib
import io
import sys
from collections.abc import Iterator
from typing import Any

import numpy as np

__all__ = ["format_tensor", "format_input", "SINKS", "deferred"]

# while a tf.function traces (and so runs) its first call, what tf.print prints is kept
# here and written once the tracing is over: TensorFlow runs the graph after tracing it,
# so every Python print of the trace comes before the call's tf.print output
SINKS: list[list[tuple[Any, str]]] = []  # (stream resolver, text)


class QuietStdout(io.StringIO):
    """What ``sys.stdout`` is while tf.function retraces quietly (a new concrete shape of
    a generalized signature): Python's print is dropped; ``tf.print(...,
    output_stream=sys.stdout)`` still means the real stdout."""


def stream_of(output_stream: Any) -> Any:
    """``tf.print``'s stream, resolved when it prints (TensorFlow writes to the process's
    stdout or stderr as they are when the op runs)."""
    if output_stream is None or output_stream is sys.stderr:
        return lambda: sys.stderr
    if output_stream is sys.stdout or isinstance(output_stream, QuietStdout):
        return lambda: sys.stdout
    return lambda: output_stream


@contextlib.contextmanager
def deferred() -> Iterator[None]:
    """Hold ``tf.print``'s output until the block ends; none if the block raises (a
    trace that fails runs nothing in TensorFlow)."""
    sink: list[tuple[Any, str]] = []
    SINKS.append(sink)
    try:
        yield
    except BaseException:
        SINKS.remove(sink)
        raise
    SINKS.remove(sink)
    for stream, text in sink:
        if SINKS:
            SINKS[-1].append((stream, text))
        else:
            stream().write(text)

_F32_TINY = float(np.finfo(np.float32).tiny)
_F64_TINY = float(np.finfo(np.float64).tiny)


def _float(v: float, tiny: float, short: int, long: int, parse: Any) -> str:
    if v != v:
        return "-nan" if np.signbit(v) else "nan"
    if v != 0.0 and abs(v) < tiny:  # denormals-are-zero: the kernel reads a subnormal as 0
        v = -0.0 if v < 0 else 0.0
    s = f"{v:.{short}g}"  # C's %.*g
    if v == v and abs(v) != float("inf") and parse(s) != parse(v):
        s = f"{v:.{long}g}"
    return s


def _elem(v: Any, kind: str, double: bool) -> str:
    if kind == "b":
        return "1" if v else "0"
    if kind in "iu":
        return str(int(v))
    if kind == "f":
        if double:
            return _float(float(v), _F64_TINY, 15, 17, float)
        return _float(float(v), _F32_TINY, 6, 9, np.float32)
    if kind == "c":
        return f"({_elem(v.real, 'f', double)},{_elem(v.imag, 'f', double)})"
    if isinstance(v, bytes):
        return '"' + v.decode("utf-8", "backslashreplace") + '"'
    return '"' + str(v) + '"'


def format_tensor(arr: np.ndarray, summarize: int = 3) -> str:
    """``arr`` as ``tf.print`` shows it (``PrintOneDimV2``)."""
    a = np.asarray(arr)
    kind = a.dtype.kind
    double = a.dtype == np.float64
    n = a.size
    ends = n if summarize < 0 else min(summarize, n)
    shape = a.shape
    nd = a.ndim
    flat = a.reshape(-1)
    out: list[str] = []

    def spacing(dim: int) -> None:
        if dim == nd - 1:
            out.append(" ")
        else:
            out.append("\n" * (nd - dim - 1) + " " * (dim + 1))

    def one_dim(dim: int, index: int) -> None:
        if dim == nd:
            out.append(_elem(flat[index], kind, double))
            return
        out.append("[")
        count = shape[dim]
        start_of_end = max(ends, count - ends)
        per = 1
        for s in shape[dim + 1:]:
            per *= s
        i = 0
        while i < ends and i < count:
            if i > 0:
                spacing(dim)
            one_dim(dim + 1, index + per * i)
            i += 1
        if count > 2 * ends:
            spacing(dim)
            out.append("...")
        for i in range(start_of_end, count):
            spacing(dim)
            one_dim(dim + 1, index + per * i)
        out.append("]")

    one_dim(0, 0)
    return "".join(out)


class _Shown:
    """A tensor inside a Python structure: ``repr`` is its ``tf.print`` text."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        return self.text


def format_input(x: Any, array_of: Any, summarize: int) -> str:
    """One input of ``tf.print``: a tensor (``array_of(x)`` gives its array, or ``None``
    for a non-tensor), a Python value, or a structure holding tensors."""
    arr = array_of(x)
    if arr is not None:
        return format_tensor(arr, summarize)

    def shown(v: Any) -> Any:
        a = array_of(v)
        if a is not None:
            return _Shown(format_tensor(a, summarize))
        if isinstance(v, list):
            return [shown(e) for e in v]
        if isinstance(v, tuple) and not hasattr(v, "_fields"):
            return tuple(shown(e) for e in v)
        if isinstance(v, dict):
            return {k: shown(e) for k, e in v.items()}
        return v

    return str(shown(x))
