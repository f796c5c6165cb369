"""Grad-off fast paths for VJPs.

A VJP is written in tapegrad ops so that a backward pass run with
``create_graph`` (or under an outer tape) is itself recorded.  In a
first-order backward pass grad mode is off, so none of those ops would record
anything: there a VJP may compute on the raw arrays instead, with the fewest
full-size passes (in-place NumPy on temporaries it made itself), and wrap the
result once.  The values are those of the op path.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._core.mode import STATE as _STATE
from .._core.tensor import Tensor, make


def raw() -> bool:
    """Whether a VJP may compute on raw arrays: nothing it calls would be recorded.

    True when grad mode is off (and no front-end marks tensors made in inference
    mode); then an op returns an untracked tensor whatever its inputs.  Never
    while a transform is active: its tracers' arrays are not their values.
    """
    s = _STATE
    return not s.grad_enabled and not s.inference and not s.levels


def wrap(a: Any, like: Tensor) -> Tensor:
    """An untracked tensor of ``like``'s style around the array ``a``."""
    if a.__class__ is not np.ndarray:
        a = np.asarray(a)
    return make(a, None, False, like._style)


def data(v: Any) -> Any:
    """The array behind a tensor (other values as they are)."""
    return v._data if isinstance(v, Tensor) else v


def scalar_of(a: np.ndarray) -> Any:
    """The one value of an array that repeats a single element (a broadcast scalar), else None.

    Sum and mean VJPs hand on such stride-0 views; multiplying by the scalar saves a pass.
    """
    if a.ndim and a.size and not any(a.strides):
        return a[(0,) * a.ndim]
    return None


def mul_into(t: np.ndarray, g: np.ndarray) -> np.ndarray:
    """``g * t``, in place in ``t`` (a temporary of the caller's) when that gives the same array.

    ``t`` may be a NumPy scalar (what a ufunc returns for 0-d operands).
    """
    if t.__class__ is not np.ndarray:
        t = np.asarray(t)  # a new array of its own
    if g.dtype == t.dtype and g.shape == t.shape:
        return np.multiply(t, g, out=t)
    return np.multiply(g, t)


# ---------------------------------------------------------------------------- 0-d scalar path
_ND = np.ndarray
_F64 = np.dtype(np.float64)
_F32 = np.dtype(np.float32)
_EXACT_INT = 2 ** 53  # Python ints up to here convert to a float exactly


def scalar_pair(x: Any, y: Any) -> tuple[Any, Any] | None:
    """The two operands of a binary arithmetic op as scalars, when that gives the same result.

    Both are 0-d float64 (or both 0-d float32) arrays, or one is and the other a
    Python float or a Python int of at most 2**53 in size: then ``(a, b)`` are
    Python floats for float64 data and NumPy float32 scalars for float32 data,
    and ``a * b`` (``+``, ``-``) is exactly what the ufunc gives on the arrays,
    with its dtype (NumPy 2 promotion: a Python number takes the array's dtype),
    for a twentieth of the cost of a ufunc call on 0-d arrays.  Otherwise ``None``.
    The only difference: Python float arithmetic does not warn on overflow or on
    an invalid result (inf - inf), as neither PyTorch nor TensorFlow does.
    """
    if x.__class__ is _ND:
        if x.shape:
            return None
        d = x.dtype
        yc = y.__class__
        if yc is _ND:
            if y.shape or y.dtype is not d:
                return None
            if d is _F64:
                return x.item(), y.item()
            if d is _F32:
                return x[()], y[()]
            return None
        if yc is float or (yc is int and -_EXACT_INT <= y <= _EXACT_INT):
            if d is _F64:
                return x.item(), y
            if d is _F32:
                return x[()], y
        return None
    if y.__class__ is _ND and not y.shape:
        xc = x.__class__
        if xc is float or (xc is int and -_EXACT_INT <= x <= _EXACT_INT):
            d = y.dtype
            if d is _F64:
                return x, y.item()
            if d is _F32:
                return x, y[()]
    return None


def scalar_in(x: Any) -> Any:
    """A 0-d array as a NumPy scalar (a ufunc on it is cheaper and gives the same), else ``x``."""
    if x.__class__ is _ND and not x.shape:
        return x[()]
    return x
