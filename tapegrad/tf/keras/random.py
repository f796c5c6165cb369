"""``keras.random``: Keras 3's seeded random ops (TensorFlow backend), bit for bit.

As in Keras 3 on TensorFlow, every draw is a *stateless* TensorFlow op
(``tf.random.stateless_*``) whose seed pair comes from ``draw_seed``:

- an int seed ``s`` gives ``[s, 0]`` every time (the same values each call);
- a :class:`SeedGenerator` gives its state, then advances it by ``[0, 1]``;
- no seed uses the global ``SeedGenerator`` (its state moves by
  ``(state + 1) * 5387 % 933199``);

and the int64 pair is reduced ``floormod(seed, 2**31 - 2)`` to int32.  A
``SeedGenerator()`` or initializer made without a seed takes one from
Python's ``random.randint(1, 10**9)``, which ``keras.utils.set_random_seed``
seeds (so that module's global state is shared with the user's program, as
in Keras).

>>> import tapegrad.tf as tf
>>> keras = tf.keras
>>> keras.random.normal((2,), seed=1)
<tf.Tensor: shape=(2,), dtype=float32, numpy=array([ 0.1266503 , -0.49301657], dtype=float32)>
"""

from __future__ import annotations

import random as _pyrandom
from typing import Any

import numpy as np

from ..._core.errors import hinted, with_hint
from ..._core.tensor import Tensor
from .. import dtypes as _dt
from .. import random as _tfr
from .._tensor import convert, tft

__all__ = ["SeedGenerator", "normal", "uniform", "truncated_normal", "randint", "dropout",
           "shuffle", "categorical", "gamma", "binomial", "beta", "draw_seed", "make_default_seed", "global_seed_generator"]

_INT32_MOD = 2**31 - 2   # tf.int32.max - 1
_GLOBAL: list[SeedGenerator | None] = [None]
_NAMES: dict[str, int] = {}


def make_default_seed() -> int:
    """A seed from Python's global ``random`` (``randint(1, 10**9)``), as Keras draws one."""
    return _pyrandom.randint(1, int(1e9))


class SeedGenerator:
    """Keras 3's ``SeedGenerator``: a ``[seed, counter]`` int64 state that each draw advances.

    Examples
    --------
    >>> import tapegrad.tf as tf
    >>> g = tf.keras.random.SeedGenerator(42)
    >>> g.next().numpy().tolist(), g.next().numpy().tolist()
    ([42, 0], [42, 1])
    """

    def __init__(self, seed: int | None = None, name: str | None = None, **kwargs: Any) -> None:
        if kwargs:
            raise hinted(ValueError(with_hint(f"Unrecognized keyword arguments: {kwargs}",
                                              "SeedGenerator takes seed= and name=")))
        if name is None:
            n = _NAMES.get("seed_generator", 0)
            _NAMES["seed_generator"] = n + 1
            name = "seed_generator" if n == 0 else f"seed_generator_{n}"
        self.name = name
        self._initial_seed = seed
        if seed is None:
            seed = make_default_seed()
        if not isinstance(seed, int):
            raise hinted(ValueError(with_hint(
                f"Argument `seed` must be an integer. Received: seed={seed}",
                "pass an int seed, or none for a random one")))
        from .variables import KerasVariable

        self.state = KerasVariable(np.array([seed, 0], dtype=np.int64),
                                   name="seed_generator_state",
                                   path=f"{name}/seed_generator_state", trainable=False,
                                   dtype=_dt.int64)

    def next(self, ordered: bool = True) -> Tensor:
        """The current state (a new tensor); then advance it."""
        cur = np.asarray(self.state._data, dtype=np.int64).copy()
        if ordered:
            self.state.assign(cur + np.array([0, 1], dtype=np.int64))
        else:
            self.state.assign((cur + 1) * 5387 % 933199)
        return tft(cur)

    def get_config(self) -> dict[str, Any]:
        return {"seed": self._initial_seed, "name": self.name}

    def __repr__(self) -> str:
        return f"<keras.src.random.seed_generator.SeedGenerator object at {id(self):#x}>"

    @classmethod
    def from_config(cls, config: dict[str, Any]) -> SeedGenerator:
        return cls(**config)


def global_seed_generator() -> SeedGenerator:
    """The generator behind unseeded draws (made on first use; ``set_random_seed`` drops it)."""
    g = _GLOBAL[0]
    if g is None:
        g = SeedGenerator()
        _GLOBAL[0] = g
    return g


def draw_seed(seed: Any) -> Tensor:
    """The int64 seed pair of a draw (see the module docstring)."""
    if isinstance(seed, SeedGenerator):
        return seed.next()
    if isinstance(seed, int) and not isinstance(seed, bool):
        return tft(np.array([seed, 0], dtype=np.int64))
    if seed is None:
        return global_seed_generator().next(ordered=False)
    raise hinted(ValueError(with_hint(
        "Argument `seed` must be either an integer or an instance of `SeedGenerator`. "
        f"Received: seed={seed} (of type {type(seed)})",
        "pass an int or a keras.random.SeedGenerator")))


def _cast_seed(seed: Tensor) -> list[int]:
    s = np.asarray(seed._data)
    if s.dtype == np.int32:
        return [int(v) for v in s]
    return [int(v) for v in np.mod(s.astype(np.int64), _INT32_MOD).astype(np.int32)]


def _floatx(dtype: Any) -> Any:
    return _dt.float32 if dtype is None else dtype


def normal(shape: Any, mean: float = 0.0, stddev: float = 1.0, dtype: Any = None,
           seed: Any = None) -> Tensor:
    """Normal samples (``tf.random.stateless_normal`` with the drawn seed)."""
    return _tfr.stateless_normal(shape, seed=_cast_seed(draw_seed(seed)), mean=mean,
                                 stddev=stddev, dtype=_floatx(dtype))


def uniform(shape: Any, minval: float = 0.0, maxval: float = 1.0, dtype: Any = None,
            seed: Any = None) -> Tensor:
    """Uniform samples in ``[minval, maxval)`` (bounds cast to ``dtype`` first, as Keras does)."""
    d = _floatx(dtype)
    npd = _dt.np_dtype(d)
    s = _cast_seed(draw_seed(seed))
    return _tfr.stateless_uniform(shape, seed=s, minval=np.asarray(minval, dtype=npd),
                                  maxval=np.asarray(maxval, dtype=npd), dtype=d)


def truncated_normal(shape: Any, mean: float = 0.0, stddev: float = 1.0, dtype: Any = None,
                     seed: Any = None) -> Tensor:
    """Truncated normal samples (``tf.random.stateless_truncated_normal``)."""
    return _tfr.stateless_truncated_normal(shape, seed=_cast_seed(draw_seed(seed)), mean=mean,
                                           stddev=stddev, dtype=_floatx(dtype))


def randint(shape: Any, minval: int, maxval: int, dtype: Any = "int32",
            seed: Any = None) -> Tensor:
    """Integers in ``[minval, maxval)``."""
    npd = _dt.np_dtype(dtype)
    mid = npd if npd in (np.dtype(np.int32), np.dtype(np.int64)) else np.dtype(np.int64)
    s = _cast_seed(draw_seed(seed))
    out = _tfr.stateless_uniform(shape, seed=s, minval=minval, maxval=maxval,
                                 dtype=_dt.from_numpy(mid))
    return tft(np.asarray(out._data).astype(npd))


def dropout(inputs: Any, rate: float, noise_shape: Any = None, seed: Any = None) -> Tensor:
    """Keras's dropout: ``tf.nn.experimental.stateless_dropout`` with the drawn seed."""
    if rate == 1.0:
        t = convert(inputs)
        return tft(np.zeros_like(t._data))
    if rate == 0.0:
        return convert(inputs)
    s = _cast_seed(draw_seed(seed))
    t = convert(inputs)
    shp = None if noise_shape is None else [
        t._data.shape[i] if v is None else int(v) for i, v in enumerate(noise_shape)]
    return _tfr.dropout_with(
        t, rate, shp,
        lambda sh, npd: _tfr.stateless_uniform(sh, seed=s, dtype=_dt.from_numpy(npd)),
        lambda: None)


def shuffle(x: Any, axis: int = 0, seed: Any = None) -> Tensor:
    """A copy of ``x`` permuted along ``axis`` (argsort of stateless uniforms, as Keras)."""
    t = convert(x)
    s = _cast_seed(draw_seed(seed))
    keys = np.asarray(_tfr.stateless_uniform([t._data.shape[axis]], seed=s)._data)
    idx = np.argsort(keys, kind="stable")
    return tft(np.take(t._data, idx, axis=axis))


def categorical(logits: Any, num_samples: int, dtype: Any = "int32", seed: Any = None) -> Tensor:
    """Class indices drawn from the rows of ``logits``."""
    s = _cast_seed(draw_seed(seed))
    out = _tfr.stateless_categorical(logits, num_samples, seed=s)
    return tft(np.asarray(out._data).astype(_dt.np_dtype(dtype)))


def _intermediate(dtype: Any) -> Any:
    """The dtype the sampler runs in (Keras' bfloat16 detour is moot: no bfloat16 here)."""
    return _floatx(dtype)


def _cast(t: Tensor, dtype: Any) -> Tensor:
    return tft(np.asarray(t._data).astype(_dt.np_dtype(_floatx(dtype))))


def gamma(shape: Any, alpha: Any, dtype: Any = None, seed: Any = None) -> Tensor:
    """Gamma samples (``tf.random.stateless_gamma`` with the drawn seed)."""
    s = _cast_seed(draw_seed(seed))
    return _cast(_tfr.stateless_gamma(shape, seed=s, alpha=alpha, dtype=_intermediate(dtype)),
                 dtype)


def binomial(shape: Any, counts: Any, probabilities: Any, dtype: Any = None,
             seed: Any = None) -> Tensor:
    """Binomial samples (``tf.random.stateless_binomial`` with the drawn seed)."""
    s = _cast_seed(draw_seed(seed))
    return _cast(_tfr.stateless_binomial(shape, seed=s, counts=counts, probs=probabilities,
                                         output_dtype=_intermediate(dtype)), dtype)


def beta(shape: Any, alpha: Any, beta: Any, dtype: Any = None, seed: Any = None) -> Tensor:
    """Beta samples ``X / (X + Y)`` of two gammas, the second seeded with the first's seed + 12."""
    s1 = _cast_seed(draw_seed(seed))
    s2 = [int(np.int32(v) + np.int32(12)) for v in s1]
    mid = _intermediate(dtype)
    npd = _dt.np_dtype(mid)
    shp = tuple(int(v) for v in shape)
    a = np.broadcast_to(np.asarray(convert(alpha)._data if isinstance(alpha, Tensor) else alpha,
                                   dtype=npd), shp)
    b = np.broadcast_to(np.asarray(convert(beta)._data if isinstance(beta, Tensor) else beta,
                                   dtype=npd), shp)
    ga = np.asarray(_cast(_tfr.stateless_gamma(shp, seed=s1, alpha=a, dtype=mid), dtype)._data)
    gb = np.asarray(_cast(_tfr.stateless_gamma(shp, seed=s2, alpha=b, dtype=mid), dtype)._data)
    return tft(ga / (ga + gb))
