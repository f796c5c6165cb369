"""``keras.initializers``: Keras 3's weight initialisers, drawing Keras's streams.

The random initializers draw through :mod:`tapegrad.tf.keras.random` exactly
as Keras 3 on TensorFlow does, so seeded (or ``set_random_seed``-seeded)
weights are Keras's own values.

>>> import tapegrad.tf as tf
>>> tf.keras.initializers.get("zeros")((2,)).numpy()
array([0., 0.], dtype=float32)
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..._core.errors import hinted, with_hint
from ..._core.tensor import Tensor
from .. import dtypes as _dt
from .._eigen_qr import eigen_qr, emulated
from .._tensor import tft
from . import random as _kr

__all__ = ["Initializer", "RandomInitializer", "Zeros", "Ones", "Constant", "GlorotUniform", "GlorotNormal",
           "HeNormal", "HeUniform", "RandomNormal", "RandomUniform", "TruncatedNormal",
           "LecunNormal", "LecunUniform", "Identity", "IdentityInitializer", "Orthogonal",
           "OrthogonalInitializer", "VarianceScaling", "get", "zeros", "ones", "constant",
           "glorot_uniform", "glorot_normal", "he_normal", "he_uniform", "random_normal",
           "random_uniform", "truncated_normal", "lecun_normal", "lecun_uniform", "identity",
           "orthogonal", "variance_scaling"]


def compute_fans(shape: tuple[int, ...], input_axes: Any = None,
                 output_axes: Any = None) -> tuple[int, int]:
    """Keras's ``(fan_in, fan_out)`` of a weight shape (receptive field times channels), or the
    products of the sizes of ``input_axes`` and ``output_axes`` when both are given."""
    if input_axes is not None and output_axes is not None:
        fan_in = fan_out = 1
        for a in input_axes:
            fan_in *= int(shape[a])
        for a in output_axes:
            fan_out *= int(shape[a])
        return fan_in, fan_out
    if len(shape) < 1:
        return 1, 1
    if len(shape) == 1:
        return int(shape[0]), int(shape[0])
    if len(shape) == 2:
        return int(shape[0]), int(shape[1])
    receptive = 1
    for d in shape[:-2]:
        receptive *= int(d)
    return int(shape[-2]) * receptive, int(shape[-1]) * receptive


class Initializer:
    """Base class: ``init(shape, dtype)`` returns a tensor (float32 by default)."""

    def __call__(self, shape: Any, dtype: Any = None) -> Tensor:
        npd = _dt.np_dtype(dtype) if dtype is not None else np.dtype(np.float32)
        return tft(np.asarray(self.sample(tuple(int(s) for s in shape)), dtype=npd))

    def sample(self, shape: tuple[int, ...]) -> np.ndarray:
        raise NotImplementedError

    def get_config(self) -> dict[str, Any]:
        return {}


class Zeros(Initializer):
    def sample(self, shape: tuple[int, ...]) -> np.ndarray:
        return np.zeros(shape)


class Ones(Initializer):
    def sample(self, shape: tuple[int, ...]) -> np.ndarray:
        return np.ones(shape)


class Constant(Initializer):
    def __init__(self, value: float = 0.0) -> None:
        self.value = value

    def sample(self, shape: tuple[int, ...]) -> np.ndarray:
        return np.full(shape, self.value)

    def get_config(self) -> dict[str, Any]:
        return {"value": self.value}  # Keras 3's; saved .keras files need it


class RandomInitializer(Initializer):
    """Keras 3's seeded initializers: an int seed or a ``SeedGenerator``, else a fresh one.

    Without a seed, the initializer takes ``random.randint(1, 10**9)`` from
    Python's global ``random`` when it is *made* (so after
    ``keras.utils.set_random_seed`` a model's weights are Keras's); an int
    seed gives the same values on every call, as in Keras.
    """

    def __init__(self, seed: Any = None) -> None:
        self._init_seed = seed
        if seed is None:
            seed = _kr.make_default_seed()
        elif not isinstance(seed, (int, _kr.SeedGenerator)):
            raise hinted(ValueError(with_hint(
                "`seed` argument should be an instance of `keras.random.SeedGenerator()` or an "
                f"integer. Received: seed={seed}", "pass an int or a SeedGenerator")))
        self.seed = seed

    def get_config(self) -> dict[str, Any]:
        return {"seed": self._init_seed}


class RandomNormal(RandomInitializer):
    """Normal values (mean 0, stddev 0.05 by default)."""

    def __init__(self, mean: float = 0.0, stddev: float = 0.05, seed: Any = None) -> None:
        self.mean, self.stddev = mean, stddev
        super().__init__(seed)

    def get_config(self) -> dict[str, Any]:
        return {"seed": self._init_seed, "mean": self.mean, "stddev": self.stddev}

    def __call__(self, shape: Any, dtype: Any = None) -> Tensor:
        return _kr.normal(shape, mean=self.mean, stddev=self.stddev, seed=self.seed, dtype=dtype)


class TruncatedNormal(RandomInitializer):
    """Normal values within two standard deviations (stddev 0.05 by default)."""

    def __init__(self, mean: float = 0.0, stddev: float = 0.05, seed: Any = None) -> None:
        self.mean, self.stddev = mean, stddev
        super().__init__(seed)

    def get_config(self) -> dict[str, Any]:
        return {"seed": self._init_seed, "mean": self.mean, "stddev": self.stddev}

    def __call__(self, shape: Any, dtype: Any = None) -> Tensor:
        return _kr.truncated_normal(shape, mean=self.mean, stddev=self.stddev, seed=self.seed,
                                    dtype=dtype)


class RandomUniform(RandomInitializer):
    """Uniform values in ``[minval, maxval)`` (``[-0.05, 0.05)`` by default)."""

    def __init__(self, minval: float = -0.05, maxval: float = 0.05, seed: Any = None) -> None:
        self.minval, self.maxval = minval, maxval
        super().__init__(seed)

    def get_config(self) -> dict[str, Any]:
        return {"seed": self._init_seed, "minval": self.minval, "maxval": self.maxval}

    def __call__(self, shape: Any, dtype: Any = None) -> Tensor:
        return _kr.uniform(shape, minval=self.minval, maxval=self.maxval, seed=self.seed,
                           dtype=dtype)


class VarianceScaling(RandomInitializer):
    """Keras's variance scaling (``fan_in``/``fan_out``/``fan_avg``, normal or uniform).

    ``input_axes``/``output_axes`` (set by Keras's ``EinsumDense`` on its clone) name the
    kernel axes whose sizes are the fans.
    """

    input_axes: Any = None
    output_axes: Any = None

    def __init__(self, scale: float = 1.0, mode: str = "fan_in",
                 distribution: str = "truncated_normal", seed: Any = None) -> None:
        if scale <= 0.0:
            raise hinted(ValueError(with_hint(
                f"Argument `scale` must be positive float. Received: scale={scale}",
                "scale > 0")))
        if mode not in ("fan_in", "fan_out", "fan_avg"):
            raise hinted(ValueError(with_hint(
                f"Invalid `mode` argument: {mode}. Please use one of "
                "{'fan_in', 'fan_out', 'fan_avg'}", "mode is fan_in, fan_out or fan_avg")))
        distribution = distribution.lower()
        if distribution == "normal":
            distribution = "truncated_normal"
        if distribution not in ("uniform", "truncated_normal", "untruncated_normal"):
            raise hinted(ValueError(with_hint(
                f"Invalid `distribution` argument: {distribution}.Please use one of "
                "{'uniform', 'truncated_normal', 'untruncated_normal'}",
                "distribution is uniform, truncated_normal or untruncated_normal")))
        self.scale, self.mode, self.distribution = scale, mode, distribution
        super().__init__(seed)

    def __call__(self, shape: Any, dtype: Any = None) -> Tensor:
        fan_in, fan_out = compute_fans(tuple(int(s) for s in shape), self.input_axes,
                                       self.output_axes)
        scale = self.scale
        if self.mode == "fan_in":
            scale /= max(1.0, fan_in)
        elif self.mode == "fan_out":
            scale /= max(1.0, fan_out)
        else:
            scale /= max(1.0, (fan_in + fan_out) / 2.0)
        if self.distribution == "truncated_normal":
            stddev = math.sqrt(scale) / 0.87962566103423978
            return _kr.truncated_normal(shape, mean=0.0, stddev=stddev, dtype=dtype,
                                        seed=self.seed)
        if self.distribution == "untruncated_normal":
            return _kr.normal(shape, mean=0.0, stddev=math.sqrt(scale), dtype=dtype,
                              seed=self.seed)
        limit = math.sqrt(3.0 * scale)
        return _kr.uniform(shape, minval=-limit, maxval=limit, dtype=dtype, seed=self.seed)

    def get_config(self) -> dict[str, Any]:
        return {"seed": self._init_seed, "scale": self.scale, "mode": self.mode,
                "distribution": self.distribution, "input_axes": self.input_axes,
                "output_axes": self.output_axes}


class GlorotUniform(VarianceScaling):
    """Uniform in ``[-limit, limit]``, ``limit = sqrt(6 / (fan_in + fan_out))`` (Dense's default).

    >>> import tapegrad.tf as tf
    >>> k = tf.keras.initializers.GlorotUniform()((3, 5))
    >>> bool(tf.reduce_all(tf.abs(k) <= (6 / 8) ** 0.5)), k.dtype
    (True, tf.float32)
    """

    def __init__(self, seed: Any = None) -> None:
        super().__init__(1.0, "fan_avg", "uniform", seed)

    def get_config(self) -> dict[str, Any]:
        return {"seed": self._init_seed, "input_axes": self.input_axes,
                "output_axes": self.output_axes}


class GlorotNormal(VarianceScaling):
    """Truncated normal with ``stddev = sqrt(2 / (fan_in + fan_out))``."""

    def __init__(self, seed: Any = None) -> None:
        super().__init__(1.0, "fan_avg", "truncated_normal", seed)

    def get_config(self) -> dict[str, Any]:
        return {"seed": self._init_seed, "input_axes": self.input_axes,
                "output_axes": self.output_axes}


class HeNormal(VarianceScaling):
    """Truncated normal with ``stddev = sqrt(2 / fan_in)``."""

    def __init__(self, seed: Any = None) -> None:
        super().__init__(2.0, "fan_in", "truncated_normal", seed)

    def get_config(self) -> dict[str, Any]:
        return {"seed": self._init_seed, "input_axes": self.input_axes,
                "output_axes": self.output_axes}


class HeUniform(VarianceScaling):
    """Uniform with ``limit = sqrt(6 / fan_in)``."""

    def __init__(self, seed: Any = None) -> None:
        super().__init__(2.0, "fan_in", "uniform", seed)

    def get_config(self) -> dict[str, Any]:
        return {"seed": self._init_seed, "input_axes": self.input_axes,
                "output_axes": self.output_axes}


class LecunNormal(VarianceScaling):
    """Truncated normal with ``stddev = sqrt(1 / fan_in)``."""

    def __init__(self, seed: Any = None) -> None:
        super().__init__(1.0, "fan_in", "truncated_normal", seed)

    def get_config(self) -> dict[str, Any]:
        return {"seed": self._init_seed, "input_axes": self.input_axes,
                "output_axes": self.output_axes}


class LecunUniform(VarianceScaling):
    """Uniform with ``limit = sqrt(3 / fan_in)``."""

    def __init__(self, seed: Any = None) -> None:
        super().__init__(1.0, "fan_in", "uniform", seed)

    def get_config(self) -> dict[str, Any]:
        return {"seed": self._init_seed, "input_axes": self.input_axes,
                "output_axes": self.output_axes}


class Identity(Initializer):
    """``gain`` times the identity matrix (2-D shapes only).

    >>> import tapegrad.tf as tf
    >>> tf.keras.initializers.Identity(gain=2.0)((2, 2)).numpy().tolist()
    [[2.0, 0.0], [0.0, 2.0]]
    """

    def __init__(self, gain: float = 1.0) -> None:
        super().__init__()
        self.gain = gain

    def sample(self, shape: tuple[int, ...]) -> np.ndarray:
        if len(shape) != 2:
            raise hinted(ValueError(with_hint(
                "Identity matrix initializer can only be used for 2D matrices. Received: "
                f"shape={shape} of rank {len(shape)}.", "give a (rows, columns) shape")))
        return self.gain * np.eye(*shape)


class Orthogonal(RandomInitializer):
    """A (semi-)orthogonal matrix from the QR decomposition of normal samples, times ``gain``.

    The normal matrix comes from Keras's stream for the initializer's seed; in float32 and
    float64 the QR is TensorFlow's CPU one bit for bit (Eigen's Householder QR, blocked from 48
    columns).
    """

    def __init__(self, gain: float = 1.0, seed: Any = None) -> None:
        super().__init__(seed)
        self.gain = gain

    def __call__(self, shape: Any, dtype: Any = None) -> Tensor:
        shape = tuple(int(s) for s in shape)
        if len(shape) < 2:
            raise hinted(ValueError(with_hint(
                "Orthogonal initializer requires a kernel of shape with at least two "
                f"dimensions. Received kernel_shape={shape}", "give at least 2 dimensions")))
        rows = int(np.prod(shape[:-1]))
        cols = shape[-1]
        a = _kr.normal((max(rows, cols), min(rows, cols)), seed=self.seed, dtype=dtype).numpy()
        # TensorFlow's CPU QR (Eigen's) bit for bit; NumPy's in other dtypes
        q, r = eigen_qr(a) if a.dtype in (np.float32, np.float64) and emulated(*a.shape) \
            else np.linalg.qr(a)
        q = (q * np.sign(np.diag(r))).astype(a.dtype, copy=False)
        if rows < cols:
            q = q.T
        return tft(q.reshape(shape) * np.asarray(self.gain, a.dtype))

    def get_config(self) -> dict[str, Any]:
        return {"seed": self._init_seed, "gain": self.gain}


IdentityInitializer = Identity
OrthogonalInitializer = Orthogonal

# Keras's lowercase spellings are the classes themselves
zeros, ones, constant = Zeros, Ones, Constant
glorot_uniform, glorot_normal = GlorotUniform, GlorotNormal
he_normal, he_uniform = HeNormal, HeUniform
lecun_normal, lecun_uniform = LecunNormal, LecunUniform
random_normal, random_uniform, truncated_normal = RandomNormal, RandomUniform, TruncatedNormal
identity, orthogonal, variance_scaling = Identity, Orthogonal, VarianceScaling

_BY_NAME: dict[str, type[Initializer]] = {
    "zeros": Zeros, "ones": Ones, "glorot_uniform": GlorotUniform,
    "glorot_normal": GlorotNormal, "he_normal": HeNormal, "he_uniform": HeUniform,
    "random_normal": RandomNormal, "random_uniform": RandomUniform,
    "truncated_normal": TruncatedNormal, "lecun_normal": LecunNormal,
    "lecun_uniform": LecunUniform, "identity": Identity, "orthogonal": Orthogonal,
    "variance_scaling": VarianceScaling,
}
_BY_NAME.update({cls.__name__: cls for cls in list(_BY_NAME.values()) + [Constant]})


def get(identifier: Any) -> Any:
    """An initializer from a name (``"glorot_uniform"``, ``"GlorotUniform"``), a config dict
    (``{"class_name": "Zeros", "config": {}}``), an instance or a callable."""
    if isinstance(identifier, dict) and "class_name" in identifier:
        cls = _BY_NAME.get(identifier["class_name"])
        if cls is None:
            raise hinted(ValueError(with_hint(f"Could not interpret initializer identifier: "
                                       f"{identifier}", "unknown class_name")))
        return cls(**identifier.get("config", {}))
    if isinstance(identifier, str):
        cls = _BY_NAME.get(identifier)
        if cls is None:
            raise hinted(ValueError(with_hint(
                f"Could not interpret initializer identifier: {identifier}",
                f"known names: {', '.join(sorted(k for k in _BY_NAME if k.islower()))}")))
        return cls()
    if isinstance(identifier, type):
        return identifier()
    if callable(identifier):
        return identifier
    raise hinted(ValueError(with_hint(
        f"Could not interpret initializer identifier: {identifier}",
        "pass a name such as 'glorot_uniform' or an initializer")))
