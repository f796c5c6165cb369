"""``tf.py_function`` and ``tf.numpy_function``: Python code on tensor values.

Eagerly they call ``func`` (``py_function`` on tensors, so a tape records its
ops and gradients flow; ``numpy_function`` on NumPy arrays).  Inside
``tf.function`` the call is a graph break in tapegrad: ``func`` runs on the
call's values and that signature runs eagerly from then on, so every call sees
its own values (TensorFlow keeps the Python call inside its graph).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._core.tensor import TF, Tensor, make
from ..autodiff import tracing
from . import dtypes as _dt
from ._tensor import VariableBase, convert, read

__all__ = ["py_function", "numpy_function"]


def _plain(x: Any) -> Any:
    """A tensor as a value outside the trace (not a tracer)."""
    if isinstance(x, VariableBase):
        return read(x)
    if isinstance(x, Tensor):
        arr = x._data
        return make(arr.view(np.ndarray) if type(arr) is not np.ndarray else arr, None,
                    False, TF) if tracing.is_traced(x) else x
    return convert(x)


def _call(func: Any, args: list[Any], what: str) -> Any:
    lv = tracing.current()
    if lv is None:
        return func(*args)
    lv.note_break(what)  # this signature runs eagerly: every call sees its own values
    with lv.suspended():
        return func(*args)


def _outs(out: Any, Tout: Any, cast: bool) -> Any:
    many = isinstance(Tout, (list, tuple))
    touts = list(Tout) if many else [Tout]
    vals = [] if out is None and many else (list(out) if many else [out])
    res: list[Any] = []
    for v, t in zip(vals, touts):
        npd = _dt.np_dtype(_dt.as_dtype(t))
        if isinstance(v, Tensor) and not isinstance(v, VariableBase):
            res.append(v if not cast or v._data.dtype == npd else convert(
                v._data.astype(npd)))
        else:
            a = np.asarray(v.numpy() if isinstance(v, Tensor) else v)
            res.append(convert(a.astype(npd) if cast else a))
    return res if many else res[0]


def py_function(func: Any = None, inp: Any = None, Tout: Any = None,
                name: str | None = None) -> Any:
    """``tf.py_function``: ``func`` on tensors; its results as ``Tout`` tensors."""
    args = [_plain(x) for x in (inp or [])]
    return _outs(_call(func, args, "tf.py_function"), Tout, cast=True)


def numpy_function(func: Any = None, inp: Any = None, Tout: Any = None, stateful: bool = True,
                   name: str | None = None) -> Any:
    """``tf.numpy_function``: ``func`` on NumPy arrays; its results as tensors (eagerly,
    as TensorFlow, of the dtypes ``func`` returned)."""
    args = [np.asarray(_plain(x)._data) for x in (inp or [])]
    return _outs(_call(func, args, "tf.numpy_function"), Tout, cast=False)
