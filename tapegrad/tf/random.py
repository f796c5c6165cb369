"""``tf.random``: TensorFlow's random streams, bit for bit.

The values are TensorFlow 2's own (CPU kernels, eager mode): Philox4x32-10
(:mod:`tapegrad.tf._philox`) with TensorFlow's transforms, seeds derived as
TensorFlow derives them.

- Stateful ops (``normal``, ``uniform``, ``truncated_normal``, ``shuffle``,
  ``categorical``) take their seed pair from ``get_seed``: with a global seed
  (``set_seed``) and no op seed, each op draws an op seed from a Python
  ``random.Random(global_seed)``, as eager TensorFlow does; an op seed without
  a global seed pairs with TensorFlow's default graph seed 87654321.  Each
  (op, dtype, seed pair) keeps its position, as TensorFlow's cached kernels
  do, so ``normal([2], seed=1)`` twice gives two different draws, and
  ``set_seed`` rewinds them all.
- ``stateless_*`` ops are pure functions of their ``seed`` pair.
- ``Generator`` (``from_seed``, ``from_state``, ``from_key_counter``,
  ``from_non_deterministic_state``, ``split``, ``make_seeds``) keeps
  TensorFlow's state layout ``[counter_lo, counter_hi, key]``.

>>> import tapegrad.tf as tf
>>> tf.random.set_seed(1234)
>>> tf.random.uniform([2])
<tf.Tensor: shape=(2,), dtype=float32, numpy=array([0.5380393 , 0.36461866], dtype=float32)>
>>> tf.random.stateless_normal([2], seed=[1, 2])
<tf.Tensor: shape=(2,), dtype=float32, numpy=array([0.5441101 , 0.20738031], dtype=float32)>
"""

from __future__ import annotations

import os
import random as _pyrandom
from typing import Any

import numpy as np

from .._core.errors import hinted, with_hint
from .._core.tensor import Tensor
from ..autodiff import tracing as _tracing
from . import _philox as _px
from . import _philox_samplers as _smp
from . import dtypes as _dt
from ._tensor import convert, tft

__all__ = ["set_seed", "get_seed", "normal", "uniform", "truncated_normal", "shuffle",
           "categorical", "stateless_normal", "stateless_uniform", "stateless_truncated_normal",
           "stateless_categorical", "stateless_shuffle", "Generator", "get_global_generator",
           "set_global_generator", "create_rng_state", "Algorithm", "stateless_split",
           "stateless_fold_in", "experimental", "poisson", "gamma", "stateless_poisson",
           "stateless_gamma", "stateless_binomial", "fold_in", "split"]

DEFAULT_GRAPH_SEED = 87654321
_MAXINT32 = 2**31 - 1
_M64 = (1 << 64) - 1

# eager context: the global seed and the Random that hands out op seeds
_CONTEXT: dict[str, Any] = {"seed": None, "rng": _pyrandom.Random()}
# TensorFlow's kernel cache: (op, attrs, seed, seed2) -> the kernel's PhiloxRandom
_KERNELS: dict[tuple[Any, ...], _px.Philox] = {}


def set_seed(seed: int | None) -> None:
    """Set the global random seed (and rewind every seeded stream), as ``tf.random.set_seed``.

    >>> import tapegrad.tf as tf
    >>> tf.random.set_seed(1); a = tf.random.uniform([2])
    >>> tf.random.set_seed(1); bool(tf.reduce_all(a == tf.random.uniform([2])))
    True
    """
    _CONTEXT["seed"] = seed
    try:
        hash(seed)
        _CONTEXT["rng"] = _pyrandom.Random(seed)
    except TypeError:
        _CONTEXT["rng"] = _pyrandom.Random(int(np.array(seed)))
    _KERNELS.clear()


def get_seed(op_seed: Any) -> tuple[int | None, int | None]:
    """The seed pair an op uses (``tf.compat.v1.get_seed``'s eager rules).

    >>> import tapegrad.tf as tf
    >>> tf.random.set_seed(None); tf.random.get_seed(5)
    (87654321, 5)
    """
    global_seed = _CONTEXT["seed"]
    seeds: tuple[int | None, int | None]
    if global_seed is not None:
        if op_seed is None:
            op_seed = _CONTEXT["rng"].randint(0, _MAXINT32)
        seeds = int(global_seed) % _MAXINT32, int(op_seed) % _MAXINT32
    elif op_seed is not None:
        seeds = DEFAULT_GRAPH_SEED, int(op_seed) % _MAXINT32
    else:
        seeds = None, None
    if seeds == (0, 0):
        return 0, _MAXINT32
    return seeds


def _nondeterministic64() -> int:
    return int.from_bytes(os.urandom(8), "little")


def _kernel(op: str, attrs: tuple[Any, ...], op_seed: Any, reserve: int) -> _px.Philox:
    """The cached kernel's generator for ``op`` (made on first use), then advanced by ``reserve``."""
    _tracing.note_break(f"random numbers ({op})")
    s1, s2 = get_seed(op_seed)
    k = (op, attrs, s1, s2)
    g = _KERNELS.get(k)
    if g is None:
        if s1 is None or s2 is None or (s1 == 0 and s2 == 0):
            g = _px.Philox.from_seeds(_nondeterministic64(), _nondeterministic64())
        else:
            g = _px.Philox.from_seeds(s1, s2)
    _KERNELS[k] = g.skip(reserve)
    return g


def _shape(shape: Any) -> tuple[int, ...]:
    if isinstance(shape, Tensor):
        shape = shape._data.tolist()
    if hasattr(shape, "as_list"):
        shape = shape.as_list()
    if isinstance(shape, (int, np.integer)):
        return (int(shape),)
    return tuple(int(s) for s in shape)


_FLOAT_NAMES = "(tf.float16, tf.bfloat16, tf.float32, tf.float64, tf.int32, tf.int64)"


def _dtype(dtype: Any, allow_int: bool) -> np.dtype:
    npd = _dt.np_dtype(dtype)
    if npd.kind == "f" or (allow_int and npd in (np.dtype(np.int32), np.dtype(np.int64))):
        return npd
    if allow_int:
        raise hinted(ValueError(with_hint(
            f"Argument `dtype` got invalid value {_dt.from_numpy(npd)!r}. Accepted dtypes are "
            f"{_FLOAT_NAMES}.", "use a float dtype, or int32/int64 with maxval")))
    raise hinted(ValueError(with_hint(
        f"Invalid dtype {_dt.from_numpy(npd)!r} for a floating distribution",
        "use a float dtype")))


def _value(x: Any, npd: np.dtype) -> np.ndarray:
    """``convert_to_tensor(x, dtype=dtype)``'s array."""
    if isinstance(x, Tensor):
        return np.asarray(convert(x)._data).astype(npd, copy=False)
    return np.asarray(x, dtype=npd)


def _scale_shift(rnd: np.ndarray, stddev: Any, mean: Any, npd: np.dtype) -> Tensor:
    """``rnd * stddev + mean`` in the dtype, as TensorFlow's Python wrappers compute it."""
    return tft(np.asarray(rnd * _value(stddev, npd) + _value(mean, npd), dtype=npd))


def _sized(shp: tuple[int, ...]) -> int:
    return int(np.prod(shp, dtype=np.int64)) if shp else 1


# ---------------------------------------------------------------------------
# Stateful ops


@_tracing.random_source("tf.random.normal")
def normal(shape: Any, mean: Any = 0.0, stddev: Any = 1.0, dtype: Any = _dt.float32,
           seed: Any = None, name: str | None = None) -> Tensor:
    """Samples from a normal distribution (TensorFlow's ``RandomStandardNormal`` stream).

    >>> import tapegrad.tf as tf
    >>> tf.random.normal([2, 3], stddev=0.1).shape
    TensorShape([2, 3])
    """
    npd = _dtype(dtype, False)
    shp = _shape(shape)
    n = _sized(shp)
    g = _kernel("RandomStandardNormal", (npd.name,), seed, n * _px.RESERVE)
    return _scale_shift(_px.normal(g, n, npd).reshape(shp), stddev, mean, npd)


@_tracing.random_source("tf.random.truncated_normal")
def truncated_normal(shape: Any, mean: Any = 0.0, stddev: Any = 1.0, dtype: Any = _dt.float32,
                     seed: Any = None, name: str | None = None) -> Tensor:
    """Normal samples redrawn until within two standard deviations (``TruncatedNormal``).

    >>> import tapegrad.tf as tf
    >>> bool(tf.reduce_all(tf.abs(tf.random.truncated_normal([50])) < 2.0))
    True
    """
    npd = _dtype(dtype, False)
    shp = _shape(shape)
    n = _sized(shp)
    g = _kernel("TruncatedNormal", (npd.name,), seed, n * _px.RESERVE)
    return _scale_shift(_px.truncated_normal(g, n, npd).reshape(shp), stddev, mean, npd)


def _check_int_range(lo: int, hi: int, op: str) -> None:
    if not lo < hi:
        from .errors import InvalidArgumentError

        raise hinted(InvalidArgumentError(None, None, with_hint(
            f"{{{{function_node __wrapped__{op}_device_/job:localhost/replica:0/task:0/"
            f"device:CPU:0}}}} Need minval < maxval, got {lo} >= {hi} [Op:{op}] name: ",
            "maxval is exclusive: it must be greater than minval")))


@_tracing.random_source("tf.random.uniform")
def uniform(shape: Any, minval: Any = 0, maxval: Any = None, dtype: Any = _dt.float32,
            seed: Any = None, name: str | None = None) -> Tensor:
    """Uniform samples in ``[minval, maxval)`` (``maxval`` 1 for floats; required for ints).

    >>> import tapegrad.tf as tf
    >>> x = tf.random.uniform([100], minval=2.0, maxval=3.0)
    >>> bool(tf.reduce_all(x >= 2.0)), x.dtype
    (True, tf.float32)
    """
    npd = _dtype(dtype, True)
    if maxval is None:
        if npd.kind in "iu":
            raise hinted(ValueError(with_hint(
                f"Must specify maxval for integer dtype {_dt.from_numpy(npd)!r}",
                "pass maxval=")))
        maxval = 1
    shp = _shape(shape)
    n = _sized(shp)
    minval_is_zero = isinstance(minval, int) and minval == 0
    maxval_is_one = isinstance(maxval, int) and maxval == 1
    if npd.kind in "iu":
        lo, hi = int(_value(minval, npd)), int(_value(maxval, npd))
        _check_int_range(lo, hi, "RandomUniformInt")
        g = _kernel("RandomUniformInt", (npd.name,), seed, n * _px.RESERVE)
        return tft(_px.uniform_int(g, n, lo, hi, npd).reshape(shp))
    g = _kernel("RandomUniform", (npd.name,), seed, n * _px.RESERVE)
    rnd = _px.uniform(g, n, npd).reshape(shp)
    if minval_is_zero:
        if not maxval_is_one:
            rnd = rnd * _value(maxval, npd)
    else:
        lo_a, hi_a = _value(minval, npd), _value(maxval, npd)
        rnd = rnd * (hi_a - lo_a) + lo_a
    return tft(np.asarray(rnd, dtype=npd))


def shuffle(value: Any, seed: Any = None, name: str | None = None) -> Tensor:
    """A copy with the first axis randomly permuted (``RandomShuffle``).

    >>> import tapegrad.tf as tf
    >>> sorted(tf.random.shuffle(tf.range(4)).numpy().tolist())
    [0, 1, 2, 3]
    """
    t = convert(value)
    arr = t._data
    size = arr.shape[0] if arr.ndim else 0
    reserve = 0 if arr.size <= 1 or size <= 1 else (size - 1 + 3) // 4
    g = _kernel("RandomShuffle", (arr.dtype.name,), seed, reserve)
    if reserve == 0:
        return tft(arr.copy())
    return tft(arr[_px.shuffle_permutation(g, size)].copy())


def _logits(logits: Any) -> np.ndarray:
    lg = np.asarray(convert(logits)._data)
    if lg.ndim != 2:
        raise hinted(ValueError(with_hint(
            f"Shape must be rank 2 but is rank {lg.ndim}", "logits are [batch_size, num_classes]")))
    return lg


def categorical(logits: Any, num_samples: int, dtype: Any = None, seed: Any = None,
                name: str | None = None) -> Tensor:
    """Class indices drawn from the rows of ``logits`` (``Multinomial``; int64 by default).

    >>> import tapegrad.tf as tf
    >>> tf.random.categorical(tf.math.log([[0.0, 1.0]]), 3).numpy().tolist()
    [[1, 1, 1]]
    """
    lg = _logits(logits)
    out_dt = np.dtype(np.int64) if dtype is None else _dt.np_dtype(dtype)
    ns = int(num_samples)
    reserve = lg.shape[0] * ((ns + 3) // 4 * 4 * 2) * _px.RESERVE
    g = _kernel("Multinomial", (lg.dtype.name, out_dt.name), seed, reserve)
    return tft(_px.multinomial(g, lg, ns).astype(out_dt))


def _param(x: Any, npd: np.dtype | None) -> np.ndarray:
    """A parameter as ``convert_to_tensor`` makes it (Python floats: float32; ints: int32)."""
    if isinstance(x, Tensor):
        a = np.asarray(convert(x)._data)
        return a if npd is None else a.astype(npd, copy=False)
    if npd is not None:
        return np.asarray(x, dtype=npd)
    return np.asarray(convert(x)._data)


def _cast_out(res: np.ndarray, npd: np.dtype) -> np.ndarray:
    """``static_cast<U>(double)``: integers truncate, floats round."""
    return res.astype(npd)


def poisson(shape: Any, lam: Any, dtype: Any = _dt.float32, seed: Any = None,
            name: str | None = None) -> Tensor:
    """Poisson samples of shape ``shape + lam.shape`` (``RandomPoissonV2``).

    Rates below 10 use Knuth's product of uniforms, larger ones Hormann's
    transformed rejection, as TensorFlow's kernel.

    >>> import tapegrad.tf as tf
    >>> tf.random.poisson([3], [1.0, 20.0], seed=1).shape
    TensorShape([3, 2])
    """
    npd = _dt.np_dtype(dtype)
    rate = _param(lam, None)
    shp = _shape(shape)
    ns = _sized(shp)
    nr = rate.size
    g = _kernel("RandomPoissonV2", (rate.dtype.name, npd.name), seed,
                ns * nr * _px.RESERVE if ns else 0)
    if ns == 0 or nr == 0:
        return tft(np.zeros(shp + rate.shape, dtype=npd))
    res = _smp.poisson(g, rate, ns, npd)
    return tft(_cast_out(res, npd).reshape(shp + rate.shape))


def gamma(shape: Any, alpha: Any, beta: Any = None, dtype: Any = _dt.float32, seed: Any = None,
          name: str | None = None) -> Tensor:
    """Gamma samples of shape ``shape + broadcast(alpha, beta).shape`` (``RandomGamma``).

    Marsaglia and Tsang's method in double precision, divided by ``beta``
    and floored at the dtype's smallest normal number, as TensorFlow does.

    >>> import tapegrad.tf as tf
    >>> tf.random.gamma([2], alpha=[0.5, 1.5], seed=3).shape
    TensorShape([2, 2])
    """
    npd = _dtype(dtype, False)
    a = _param(alpha, npd)
    b = _param(1 if beta is None else beta, npd)
    a = np.broadcast_to(a, np.broadcast_shapes(a.shape, b.shape))
    shp = _shape(shape)
    ns = _sized(shp)
    g = _kernel("RandomGamma", (npd.name,), seed, ns * a.size * _px.RESERVE if ns else 0)
    if ns == 0 or a.size == 0:
        rnd = np.zeros(shp + a.shape, dtype=npd)
    else:
        rnd = _smp.gamma(g, a, ns).astype(npd).reshape(shp + a.shape)
    return tft(np.maximum(np.finfo(npd).tiny, (rnd / b).astype(npd)))


# ---------------------------------------------------------------------------
# Stateless ops


def _seed_pair(seed: Any) -> tuple[int, int]:
    if _tracing.is_traced(seed):
        # the seed's value picks the draws: a program would hold this call's draws
        _tracing.note_break("a stateless random op with a seed computed inside the function")
    s = np.asarray(convert(seed)._data if isinstance(seed, Tensor) else seed)
    if s.shape != (2,) or s.dtype.kind not in "iu":
        raise hinted(ValueError(with_hint(
            f"seed must have shape [2], not {list(s.shape)}",
            "a stateless op's seed is a pair of integers, e.g. seed=[1, 2]")))
    return int(s[0]), int(s[1])


def _stateless(seed: Any) -> _px.Philox:
    return _px.stateless_key_counter(*_seed_pair(seed))


def stateless_normal(shape: Any, seed: Any, mean: Any = 0.0, stddev: Any = 1.0,
                     dtype: Any = _dt.float32, name: str | None = None,
                     alg: Any = "auto_select") -> Tensor:
    """Normal samples, a pure function of ``seed`` (a pair of ints).

    >>> import tapegrad.tf as tf
    >>> a = tf.random.stateless_normal([3], seed=[4, 5])
    >>> bool(tf.reduce_all(a == tf.random.stateless_normal([3], seed=[4, 5])))
    True
    """
    npd = _dtype(dtype, False)
    shp = _shape(shape)
    _stateless_alg(alg, "StatelessRandomNormalV2")
    return _scale_shift(_px.normal(_stateless(seed), _sized(shp), npd).reshape(shp),
                        stddev, mean, npd)


def stateless_truncated_normal(shape: Any, seed: Any, mean: Any = 0.0, stddev: Any = 1.0,
                               dtype: Any = _dt.float32, name: str | None = None,
                               alg: Any = "auto_select") -> Tensor:
    """Truncated normal samples (``|x| < 2`` before scaling), a pure function of ``seed``."""
    npd = _dtype(dtype, False)
    shp = _shape(shape)
    _stateless_alg(alg, "StatelessTruncatedNormalV2")
    rnd = _px.truncated_normal(_stateless(seed), _sized(shp), npd).reshape(shp)
    return _scale_shift(rnd, stddev, mean, npd)


def _uniform_from(gen: _px.Philox, shp: tuple[int, ...], minval: Any, maxval: Any,
                  npd: np.dtype, op: str) -> Tensor:
    n = _sized(shp)
    if npd.kind in "iu":
        if minval is None:
            return tft(_px.full_int(gen, n, npd).reshape(shp))
        lo, hi = int(_value(minval, npd)), int(_value(maxval, npd))
        _check_int_range(lo, hi, op)
        return tft(_px.uniform_int(gen, n, lo, hi, npd).reshape(shp))
    lo_a, hi_a = _value(minval, npd), _value(maxval, npd)
    rnd = _px.uniform(gen, n, npd).reshape(shp)
    return tft(np.asarray(rnd * (hi_a - lo_a) + lo_a, dtype=npd))


def _check_int_bounds(npd: np.dtype, minval: Any, maxval: Any) -> None:
    if npd.kind in "iu" and (minval is None) != (maxval is None):
        raise hinted(ValueError(with_hint(
            f"For integer `dtype` argument {_dt.from_numpy(npd)!r}, argument `minval` and "
            f"`maxval` must be both None or not None. Got `minval`={minval} and "
            f"`maxval`={maxval}.", "pass both bounds, or neither for full-range integers")))


def stateless_uniform(shape: Any, seed: Any, minval: Any = 0, maxval: Any = None,
                      dtype: Any = _dt.float32, name: str | None = None,
                      alg: Any = "auto_select") -> Tensor:
    """Uniform samples in ``[minval, maxval)``, a pure function of ``seed``.

    Integer dtypes need both bounds, or neither (then every bit is random).

    >>> import tapegrad.tf as tf
    >>> tf.random.stateless_uniform([2], seed=[1, 2], minval=0, maxval=10, dtype=tf.int32)
    <tf.Tensor: shape=(2,), dtype=int32, numpy=array([0, 9], dtype=int32)>
    """
    npd = _dt.np_dtype(dtype)
    if npd.kind != "u" or minval is not None or maxval is not None:
        npd = _dtype(dtype, True)   # unsigned only for full-range draws, as TensorFlow
    _check_int_bounds(npd, minval, maxval)
    if npd.kind == "f" and maxval is None:
        maxval = 1
    _stateless_alg(alg, "StatelessRandomUniformV2" if npd.kind == "f" else
                   "StatelessRandomUniformFullIntV2" if minval is None else
                   "StatelessRandomUniformIntV2")
    return _uniform_from(_stateless(seed), _shape(shape), minval, maxval, npd,
                         "StatelessRandomUniformIntV2")


def stateless_categorical(logits: Any, num_samples: int, seed: Any, dtype: Any = _dt.int64,
                          name: str | None = None) -> Tensor:
    """Class indices drawn from the rows of ``logits``, a pure function of ``seed``."""
    lg = _logits(logits)
    return tft(_px.multinomial(_stateless(seed), lg, int(num_samples))
               .astype(_dt.np_dtype(dtype)))


def stateless_shuffle(value: Any, seed: Any, alg: Any = "auto_select",
                      name: str | None = None) -> Tensor:
    """A copy with the first axis permuted, a pure function of ``seed``."""
    t = convert(value)
    arr = t._data
    size = arr.shape[0] if arr.ndim else 0
    _stateless_alg(alg, "StatelessShuffle")
    if arr.size <= 1 or size <= 1:
        return tft(arr.copy())
    return tft(arr[_px.shuffle_permutation(_stateless(seed), size)].copy())


def _op_error(op: str, message: str, hint: str, name_suffix: bool = True) -> Exception:
    from .errors import InvalidArgumentError

    tail = " name: " if name_suffix else ""
    return hinted(InvalidArgumentError(None, None, with_hint(
        f"{{{{function_node __wrapped__{op}_device_/job:localhost/replica:0/task:0/"
        f"device:CPU:0}}}} {message} [Op:{op}]{tail}", hint)))


def _ends_with(shp: tuple[int, ...], tail: tuple[int, ...], op: str, suffix: bool) -> None:
    if len(tail) > len(shp) or (tail and shp[len(shp) - len(tail):] != tail):
        raise _op_error(op, "Shape passed in must end with broadcasted shape.",
                        f"the parameters' shape {list(tail)} must be the last dimensions of "
                        f"shape {list(shp)}", suffix)


def stateless_poisson(shape: Any, seed: Any, lam: Any, dtype: Any = _dt.int32,
                      name: str | None = None) -> Tensor:
    """Poisson samples, a pure function of ``seed``; ``lam``'s shape ends ``shape``.

    >>> import tapegrad.tf as tf
    >>> tf.random.stateless_poisson([2, 2], seed=[1, 2], lam=[1.0, 30.0]).shape
    TensorShape([2, 2])
    """
    npd = _dt.np_dtype(dtype)
    rate = _param(lam, None)
    shp = _shape(shape)
    gen = _stateless(seed)
    _ends_with(shp, rate.shape, "StatelessRandomPoisson", False)
    if _sized(shp) == 0:
        return tft(np.zeros(shp, dtype=npd))
    ns = _sized(shp) // max(rate.size, 1)
    res = _smp.poisson(gen, rate, ns, npd)
    return tft(_cast_out(res, npd).reshape(shp))


def stateless_gamma(shape: Any, seed: Any, alpha: Any, beta: Any = None,
                    dtype: Any = _dt.float32, name: str | None = None) -> Tensor:
    """Gamma samples, a pure function of ``seed``; ``broadcast(alpha, beta)`` ends ``shape``.

    >>> import tapegrad.tf as tf
    >>> tf.random.stateless_gamma([3, 2], seed=[1, 2], alpha=[0.5, 2.0]).shape
    TensorShape([3, 2])
    """
    npd = _dtype(dtype, False)
    shp = _shape(shape)
    a = _param(alpha, npd)
    b = _param(1 if beta is None else beta, npd)
    a = np.broadcast_to(a, np.broadcast_shapes(a.shape, b.shape))
    gen = _stateless(seed)
    if _sized(shp) == 0:
        rnd = np.zeros(shp, dtype=npd)
    else:
        _ends_with(shp, a.shape, "StatelessRandomGammaV3", True)
        rnd = _smp.gamma(gen, a, _sized(shp) // a.size).astype(npd)
    return tft(np.maximum(np.finfo(npd).tiny, (rnd.reshape(shp) / b).astype(npd)))


def _binomial_params(counts: Any, probs: Any) -> tuple[np.ndarray, np.ndarray]:
    p = _param(probs, None)
    if not isinstance(probs, Tensor) and p.dtype.kind != "f":
        p = p.astype(np.float32)
    c = _param(counts, p.dtype if not isinstance(counts, Tensor) else None)
    if c.dtype != p.dtype:
        raise hinted(TypeError(with_hint(
            f"Input 'probs' of 'StatelessRandomBinomial' Op has type "
            f"{_dt.from_numpy(p.dtype).name} that does not match type "
            f"{_dt.from_numpy(c.dtype).name} of argument 'counts'.",
            "give counts and probs the same float dtype")))
    return c, p


def _binomial(gen: _px.Philox, shp: tuple[int, ...], c: np.ndarray, p: np.ndarray,
              npd: np.dtype, op: str) -> np.ndarray:
    bshape = np.broadcast_shapes(c.shape, p.shape)
    _ends_with(shp, bshape, op, op.startswith("Stateful"))
    if _sized(shp) == 0:
        return np.zeros(shp, dtype=npd)
    cb = np.broadcast_to(c, bshape).reshape(-1)
    pb = np.broadcast_to(p, bshape).reshape(-1)
    ns = _sized(shp) // max(cb.size, 1)
    return _cast_out(_smp.binomial(gen, cb, pb, ns), npd).reshape(shp)


def stateless_binomial(shape: Any, seed: Any, counts: Any, probs: Any,
                       output_dtype: Any = _dt.int32, name: str | None = None) -> Tensor:
    """Binomial samples, a pure function of ``seed`` (inversion below mean 10, else BTRS).

    >>> import tapegrad.tf as tf
    >>> tf.random.stateless_binomial([4], seed=[1, 2], counts=10.0, probs=0.5).shape
    TensorShape([4])
    """
    c, p = _binomial_params(counts, probs)
    return tft(_binomial(_stateless(seed), _shape(shape), c, p, _dt.np_dtype(output_dtype),
                         "StatelessRandomBinomial"))


# ---------------------------------------------------------------------------
# tf.random.Generator


class Algorithm:
    """``tf.random.Algorithm``: the RNG algorithms (ThreeFry draws fail as on TensorFlow's CPU)."""

    PHILOX = 1
    THREEFRY = 2
    AUTO_SELECT = 3


def _alg(alg: Any) -> int:
    """The algorithm's id (1: Philox, 2: ThreeFry, 3: auto-select) of a name, int or enum."""
    if alg is None:
        return Algorithm.PHILOX
    if isinstance(alg, str):
        names = {"philox": 1, "threefry": 2, "auto_select": 3}
        if alg.lower() not in names:
            raise hinted(ValueError(with_hint(
                f"Argument `alg` got unsupported value {alg}. Supported values are philox for "
                "the Philox algorithm, threefry for the ThreeFry algorithm, and auto_select "
                "for auto-selection.", "use 'philox' or 'auto_select'")))
        alg = names[alg.lower()]
    return int(getattr(alg, "value", alg))


def _state_size(alg: int) -> int:
    return 2 if alg == Algorithm.THREEFRY else 3


def _stateless_alg(alg: Any, op: str) -> None:
    """Check a stateless op's ``alg``: ThreeFry has no CPU kernel, as in TensorFlow."""
    if _alg(alg) == Algorithm.THREEFRY:
        raise _op_error(op, "counter must be a vector with length at least 2; got shape: [1]. "
                        "(Note that batched counters are not supported yet.)",
                        "TensorFlow runs ThreeFry only under XLA; use alg='philox' on CPU")


def _to_int64(v: int) -> int:
    v &= _M64
    return v - (1 << 64) if v >= 1 << 63 else v


def create_rng_state(seed: Any, alg: Any) -> np.ndarray:
    """The int64 state TensorFlow makes from ``seed`` (an int or a vector) for ``alg``.

    Philox states have 3 elements (counter, key), ThreeFry states 2.

    >>> import tapegrad.tf as tf
    >>> tf.random.create_rng_state(12, "philox").tolist()
    [12, 0, 0]
    """
    size = _state_size(_alg(alg))
    if isinstance(seed, (int, np.integer)):
        s = int(seed)
        words = []
        for _ in range(size):
            words.append(_to_int64(s))
            s >>= 64
        return np.array(words, dtype=np.int64)
    arr = np.asarray(convert(seed)._data if isinstance(seed, Tensor) else seed)
    flat = [_to_int64(int(v)) for v in arr.reshape(-1)][:size]
    return np.array([0] * (size - len(flat)) + flat, dtype=np.int64)


class Generator:
    """``tf.random.Generator``: a Philox stream whose state is ``[counter_lo, counter_hi, key]``.

    Each call reads the state, then advances the counter by 256 blocks per
    output element (TensorFlow's ``RngReadAndSkip``), and draws with the
    stateless kernels from the old state.

    >>> import tapegrad.tf as tf
    >>> g = tf.random.Generator.from_seed(1)
    >>> g.normal([3]).numpy()
    array([ 0.43842274, -0.53439844, -0.07710262], dtype=float32)
    """

    def __init__(self, copy_from: Generator | None = None, state: Any = None,
                 alg: Any = None) -> None:
        from .variables import Variable

        if copy_from is not None:
            arr = np.asarray(copy_from.state._data, dtype=np.int64).copy()
            self._alg = copy_from.algorithm
        else:
            if state is None or alg is None:
                raise hinted(ValueError(with_hint(
                    "Generator needs both `state` and `alg` (or `copy_from`)",
                    "use tf.random.Generator.from_seed(seed)")))
            self._alg = _alg(alg)
            arr = (np.asarray(state._data if isinstance(state, Tensor) else
                              [_to_int64(int(v)) for v in np.asarray(state).reshape(-1)],
                              dtype=np.int64).reshape(-1))
            size = _state_size(self._alg)
            if arr.shape != (size,):
                raise hinted(ValueError(with_hint(
                    f"Shapes ({arr.shape[0]},) and [{size}] are incompatible",
                    f"this algorithm's state has {size} int64 elements")))
        self._state_var = Variable(arr, trainable=False, name="StateVar", dtype=_dt.int64)

    def __repr__(self) -> str:
        return f"<tensorflow.python.ops.stateful_random_ops.Generator object at {id(self):#x}>"

    # construction ------------------------------------------------------
    @classmethod
    def from_state(cls, state: Any, alg: Any) -> Generator:
        """A generator with the given state (``[counter_lo, counter_hi, key]``)."""
        return cls(state=state, alg=alg)

    @classmethod
    def from_seed(cls, seed: Any, alg: Any = None) -> Generator:
        """A generator whose state is :func:`create_rng_state` of ``seed``."""
        a = _alg(alg)
        return cls(state=create_rng_state(seed, a), alg=a)

    @classmethod
    def from_non_deterministic_state(cls, alg: Any = None) -> Generator:
        """A generator seeded from the operating system's entropy."""
        a = _alg(alg)
        return cls(state=[_to_int64(_nondeterministic64()) for _ in range(_state_size(a))], alg=a)

    @classmethod
    def from_key_counter(cls, key: Any, counter: Any, alg: Any) -> Generator:
        """A generator from a key (int) and a counter (two ints)."""
        cnt = [int(v) for v in np.asarray(counter).reshape(-1)]
        return cls(state=[*cnt, int(np.asarray(key).reshape(-1)[0])], alg=alg)

    def reset(self, state: Any) -> None:
        """Replace the state."""
        self._state_var.assign(np.asarray([_to_int64(int(v)) for v in
                                           np.asarray(state).reshape(-1)], dtype=np.int64))

    def reset_from_seed(self, seed: Any) -> None:
        """Reset the state from a seed (as :meth:`from_seed`)."""
        self._state_var.assign(create_rng_state(seed, self._alg))

    def reset_from_key_counter(self, key: Any, counter: Any) -> None:
        """Reset the state from a key and a counter."""
        cnt = [int(v) for v in np.asarray(counter).reshape(-1)]
        self.reset([*cnt, int(np.asarray(key).reshape(-1)[0])])

    # state ---------------------------------------------------------------
    @property
    def state(self) -> Any:
        """The state variable (int64, shape [3])."""
        return self._state_var

    @property
    def algorithm(self) -> int:
        """The algorithm's integer id (1: Philox)."""
        return self._alg

    @property
    def key(self) -> Tensor:
        """The key (the state's last element)."""
        return tft(np.asarray(self._state_var._data[-1]))

    def _check_philox(self) -> None:
        if self._alg == Algorithm.THREEFRY:
            from .errors import UnimplementedError

            raise hinted(UnimplementedError(None, None, with_hint(
                "{{function_node __wrapped__RngReadAndSkip_device_/job:localhost/replica:0/"
                "task:0/device:CPU:0}} Non-XLA devices don't support the ThreeFry algorithm. "
                "[Op:RngReadAndSkip] name: ",
                "TensorFlow runs ThreeFry only under XLA; use alg='philox' on CPU")))

    def skip(self, delta: int) -> Tensor:
        """Advance the counter by ``256 * delta`` blocks; return the state before."""
        self._check_philox()
        # the draws come from the state's value now: inside tf.function that signature
        # runs eagerly, so every call draws new numbers from the advanced state
        _tracing.note_break("tf.random.Generator draws")
        old = np.asarray(self._state_var._data, dtype=np.int64).copy()
        ctr = (int(old[0]) & _M64) | ((int(old[1]) & _M64) << 64)
        ctr = (ctr + int(delta) * _px.RESERVE) & ((1 << 128) - 1)
        self._state_var.assign(np.array([_to_int64(ctr), _to_int64(ctr >> 64), int(old[2])],
                                        dtype=np.int64))
        return tft(old)

    def _take(self, shp: tuple[int, ...]) -> _px.Philox:
        old = np.asarray(self.skip(_sized(shp))._data)
        ctr = (int(old[0]) & _M64) | ((int(old[1]) & _M64) << 64)
        return _px.Philox(ctr, int(old[2]) & _M64)

    # draws ---------------------------------------------------------------
    def normal(self, shape: Any, mean: Any = 0.0, stddev: Any = 1.0, dtype: Any = _dt.float32,
               name: str | None = None) -> Tensor:
        """Normal samples from this generator."""
        npd = _dtype(dtype, False)
        shp = _shape(shape)
        rnd = _px.normal(self._take(shp), _sized(shp), npd).reshape(shp)
        return _scale_shift(rnd, stddev, mean, npd)

    def truncated_normal(self, shape: Any, mean: Any = 0.0, stddev: Any = 1.0,
                         dtype: Any = _dt.float32, name: str | None = None) -> Tensor:
        """Truncated normal samples from this generator."""
        npd = _dtype(dtype, False)
        shp = _shape(shape)
        rnd = _px.truncated_normal(self._take(shp), _sized(shp), npd).reshape(shp)
        return _scale_shift(rnd, stddev, mean, npd)

    def uniform(self, shape: Any, minval: Any = 0, maxval: Any = None, dtype: Any = _dt.float32,
                name: str | None = None) -> Tensor:
        """Uniform samples in ``[minval, maxval)`` (integers: both bounds or neither)."""
        npd = _dt.np_dtype(dtype)
        if npd.kind in "iu":
            if (minval is None) != (maxval is None):
                raise hinted(ValueError(with_hint(
                    f"For integer dtype {_dt.from_numpy(npd)!r}, minval and maxval must be both "
                    f"`None` or both non-`None`; got minval={minval} and maxval={maxval}",
                    "pass both bounds, or neither for full-range integers")))
        elif maxval is None:
            maxval = 1
        shp = _shape(shape)
        return _uniform_from(self._take(shp), shp, minval, maxval, npd,
                             "StatelessRandomUniformIntV2")

    def uniform_full_int(self, shape: Any, dtype: Any = _dt.uint64,
                         name: str | None = None) -> Tensor:
        """Integers with every bit random."""
        npd = _dt.np_dtype(dtype)
        shp = _shape(shape)
        return tft(_px.full_int(self._take(shp), _sized(shp), npd).reshape(shp))

    def binomial(self, shape: Any, counts: Any, probs: Any, dtype: Any = _dt.int32,
                 name: str | None = None) -> Tensor:
        """Binomial samples (``StatefulRandomBinomial``: inversion below mean 10, else BTRS).

        The state moves on by ``num_batches * 200 * (samples_per_batch + 3) / 4``
        reservations of 256 blocks, as TensorFlow's kernel.
        """
        c = _param(counts, None)
        p = _param(probs, None)
        shp = _shape(shape)
        op = "StatefulRandomBinomial"
        bshape = np.broadcast_shapes(c.shape, p.shape)
        _ends_with(shp, bshape, op, True)  # TensorFlow names this op: " name: " ends its text
        if self._alg != Algorithm.PHILOX:
            raise _op_error(op, f"Unsupported algorithm id: {self._alg}",
                            "the binomial sampler runs on Philox only")
        nb = _sized(bshape)
        spb = _sized(shp) // max(nb, 1)
        old = np.asarray(self.skip(nb * 2 * 100 * (spb + 3) // 4)._data)
        ctr = (int(old[0]) & _M64) | ((int(old[1]) & _M64) << 64)
        return tft(_binomial(_px.Philox(ctr, int(old[2]) & _M64), shp, c, p,
                             _dt.np_dtype(dtype), op))

    def make_seeds(self, count: int = 1) -> Tensor:
        """Seeds for stateless ops: an int64 tensor of shape ``[2, count]``."""
        keys = np.asarray(self.uniform_full_int([int(count)], _dt.int64)._data)
        return tft(np.stack([keys, np.zeros_like(keys)]))

    def split(self, count: int = 1) -> list[Generator]:
        """``count`` new independent generators (advances this one)."""
        keys = np.asarray(self.uniform_full_int([int(count)], _dt.int64)._data)
        return [Generator(state=[0, 0, int(k)], alg=self._alg) for k in keys]


_GLOBAL_GENERATOR: list[Generator | None] = [None]


def get_global_generator() -> Generator:
    """The global :class:`Generator` (created from non-deterministic state on first use)."""
    g = _GLOBAL_GENERATOR[0]
    if g is None:
        g = Generator.from_non_deterministic_state()
        _GLOBAL_GENERATOR[0] = g
    return g


def set_global_generator(generator: Generator) -> None:
    """Replace the global generator."""
    _GLOBAL_GENERATOR[0] = generator


def dropout_with(x: Any, rate: Any, noise_shape: Any, sample: Any, step: Any) -> Tensor:
    """TensorFlow's ``_dropout``: scale by ``1 / (1 - rate)``, keep where ``uniform >= rate``.

    ``sample(shape, npd)`` draws the uniform noise (stateful or stateless);
    ``step()`` runs when ``rate`` is 0 (TensorFlow still derives a seed then).
    Recorded on tapes: the gradient is the same mask times the scale.
    """
    from .. import ops

    if isinstance(rate, (int, float, np.floating, np.integer)) and not 0 <= rate < 1:
        raise hinted(ValueError(with_hint(
            f"`rate` must be a scalar tensor or a float in the range [0, 1). Received: rate={rate}",
            "0 <= rate < 1")))
    t = convert(x)
    npd = t._data.dtype
    if npd.kind != "f":
        raise hinted(ValueError(with_hint(
            f"`x.dtype` must be a floating point tensor as `x` will be scaled. Received: "
            f"x_dtype={_dt.from_numpy(npd)!r}", "cast x to a float dtype")))
    if isinstance(rate, (int, float, np.floating, np.integer)):
        if rate == 0:
            step()
            return t
        ret = ops.multiply(t, tft(np.asarray(1 / (1 - rate), dtype=npd)))
        r = np.asarray(rate, dtype=npd)
    else:
        r = _value(rate, npd)
        ret = ops.divide(t, tft(np.asarray(np.asarray(1, npd) - r, dtype=npd)))
    shp = t._data.shape if noise_shape is None else tuple(
        t._data.shape[i] if s is None else int(s) for i, s in enumerate(_shape(noise_shape)))
    keep = np.asarray(sample(shp, npd)._data) >= r
    return ops.where(np.broadcast_to(keep, np.broadcast_shapes(keep.shape, t._data.shape)),
                     ret, tft(np.zeros((), dtype=npd)))


def stateless_split(seed: Any, num: int = 2, alg: Any = "auto_select") -> Tensor:
    """``num`` new seed pairs from ``seed`` (``tf.random.experimental.stateless_split``)."""
    s = convert(seed)
    npd = s._data.dtype if s._data.dtype.kind in "iu" else np.dtype(np.int32)
    _stateless_alg(alg, "StatelessRandomUniformFullIntV2")
    return tft(_px.full_int(_stateless(seed), 2 * int(num), npd).reshape(int(num), 2))


def stateless_fold_in(seed: Any, data: Any, alg: Any = "auto_select") -> Tensor:
    """A new seed pair from ``seed`` and an integer ``data`` (``stateless_fold_in``)."""
    d = np.asarray(convert(data)._data)
    npd = d.dtype if d.dtype.kind in "iu" else np.dtype(np.int32)
    _stateless_alg(alg, "StatelessRandomUniformFullIntV2")
    first = _px.full_int(_stateless(seed), 1, npd)[0]
    return tft(np.array([first, d.astype(npd)], dtype=npd))


fold_in = stateless_fold_in
split = stateless_split


class experimental:  # noqa: N801 - TensorFlow's namespace name
    """``tf.random.experimental``: the same generators, plus seed splitting and folding."""

    Generator = Generator
    Algorithm = Algorithm
    create_rng_state = staticmethod(create_rng_state)
    get_global_generator = staticmethod(get_global_generator)
    set_global_generator = staticmethod(set_global_generator)
    stateless_split = staticmethod(stateless_split)
    stateless_fold_in = staticmethod(stateless_fold_in)
    stateless_shuffle = staticmethod(stateless_shuffle)
