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
