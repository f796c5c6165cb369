"""``tf.random``: random tensors from one NumPy generator.

``set_seed`` makes a program reproducible (the same values on every run of
the same program).  The values are NumPy's, not TensorFlow's Philox stream,
so they differ from real TensorFlow's for the same seed.

>>> import tapegrad.tf as tf
>>> tf.random.set_seed(0)
>>> a = tf.random.normal([2])
>>> tf.random.set_seed(0)
>>> bool(tf.reduce_all(a == tf.random.normal([2])))
True
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._core.errors import with_hint
from .._core.tensor import Tensor
from . import dtypes as _dt
from ._tensor import convert, tft

__all__ = ["set_seed", "normal", "uniform", "truncated_normal", "shuffle", "categorical",
           "get_global_generator"]

_GLOBAL: dict[str, Any] = {"seed": None, "rng": np.random.default_rng()}
_OP_RNGS: dict[int, np.random.Generator] = {}


def set_seed(seed: int | None) -> None:
    """Set the global random seed (resets every random stream).

    >>> import tapegrad.tf as tf
    >>> tf.random.set_seed(1); a = tf.random.uniform([2])
    >>> tf.random.set_seed(1); bool(tf.reduce_all(a == tf.random.uniform([2])))
    True
    """
    _GLOBAL["seed"] = None if seed is None else int(seed)
    _GLOBAL["rng"] = np.random.default_rng(seed)
    _OP_RNGS.clear()


def _generator(seed: Any = None) -> np.random.Generator:
    """The global stream, or (with an op seed) a stream for (global seed, op seed)."""
    if seed is None:
        return _GLOBAL["rng"]
    key = int(seed)
    g = _OP_RNGS.get(key)
    if g is None:
        gs = _GLOBAL["seed"]
        g = np.random.default_rng([0 if gs is None else gs, key])
        _OP_RNGS[key] = g
    return g


def get_global_generator() -> np.random.Generator:
    """The NumPy generator behind ``tf.random`` (for code that needs raw draws)."""
    return _generator()


def _shape(shape: Any) -> tuple[int, ...]:
    if isinstance(shape, Tensor):
        shape = shape._data.tolist()
    if hasattr(shape, "as_list"):
        shape = shape.as_list()
    if isinstance(shape, (int, np.integer)):
        return (int(shape),)
    return tuple(int(s) for s in shape)


def _float_dtype(dtype: Any) -> np.dtype:
    npd = _dt.np_dtype(dtype)
    if npd.kind != "f":
        raise ValueError(with_hint(f"Invalid dtype {_dt.from_numpy(npd)!r} for a floating "
                                   "distribution", "use a float dtype"))
    return npd


def normal(shape: Any, mean: Any = 0.0, stddev: Any = 1.0, dtype: Any = _dt.float32,
           seed: Any = None, name: str | None = None) -> Tensor:
    """Samples from a normal distribution (float32 by default).

    >>> import tapegrad.tf as tf
    >>> tf.random.normal([2, 3], stddev=0.1).shape
    TensorShape([2, 3])
    """
    npd = _float_dtype(dtype)
    z = _generator(seed).standard_normal(_shape(shape))
    m = convert(mean)._data.astype(npd)
    s = convert(stddev)._data.astype(npd)
    return tft((z.astype(npd) * s + m).astype(npd))


def truncated_normal(shape: Any, mean: Any = 0.0, stddev: Any = 1.0, dtype: Any = _dt.float32,
                     seed: Any = None, name: str | None = None) -> Tensor:
    """Normal samples redrawn until within two standard deviations of the mean."""
    npd = _float_dtype(dtype)
    g = _generator(seed)
    z = g.standard_normal(_shape(shape))
    bad = np.abs(z) > 2
    while bad.any():
        z[bad] = g.standard_normal(int(bad.sum()))
        bad = np.abs(z) > 2
    return tft((z * float(stddev) + float(mean)).astype(npd))


def uniform(shape: Any, minval: Any = 0, maxval: Any = None, dtype: Any = _dt.float32,
            seed: Any = None, name: str | None = None) -> Tensor:
    """Uniform samples in ``[minval, maxval)`` (``maxval`` 1 for floats).

    >>> import tapegrad.tf as tf
    >>> x = tf.random.uniform([100], minval=2.0, maxval=3.0)
    >>> bool(tf.reduce_all(x >= 2.0)), x.dtype
    (True, tf.float32)
    """
    npd = _dt.np_dtype(dtype)
    g = _generator(seed)
    shp = _shape(shape)
    if npd.kind in "iu":
        if maxval is None:
            raise ValueError(with_hint("Must specify maxval for integer dtype "
                                       f"{_dt.from_numpy(npd)!r}", "pass maxval="))
        return tft(g.integers(int(minval), int(maxval), size=shp).astype(npd))
    lo = float(np.asarray(convert(minval)._data))
    hi = 1.0 if maxval is None else float(np.asarray(convert(maxval)._data))
    return tft((g.random(shp) * (hi - lo) + lo).astype(npd))


def shuffle(value: Any, seed: Any = None, name: str | None = None) -> Tensor:
    """A copy with the first axis randomly permuted."""
    t = convert(value)
    perm = _generator(seed).permutation(t._data.shape[0])
    return tft(t._data[perm].copy())


def categorical(logits: Any, num_samples: int, dtype: Any = None, seed: Any = None,
                name: str | None = None) -> Tensor:
    """Draw class indices from the categorical distributions given by ``logits`` rows."""
    lg = convert(logits)._data.astype(np.float64)
    p = np.exp(lg - lg.max(axis=-1, keepdims=True))
    p /= p.sum(axis=-1, keepdims=True)
    g = _generator(seed)
    out = np.stack([g.choice(p.shape[-1], size=int(num_samples), p=row) for row in p])
    return tft(out.astype(_dt.np_dtype(dtype) if dtype is not None else np.int64))
