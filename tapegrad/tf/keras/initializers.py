"""``keras.initializers``: Keras's weight initialisers (drawn from ``tf.random``).

>>> import tapegrad.tf as tf
>>> tf.keras.initializers.get("zeros")((2,)).numpy()
array([0., 0.], dtype=float32)
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..._core.errors import with_hint
from ..._core.tensor import Tensor
from .. import dtypes as _dt
from .._tensor import tft
from ..random import _generator

__all__ = ["Initializer", "Zeros", "Ones", "Constant", "GlorotUniform", "GlorotNormal",
           "HeNormal", "HeUniform", "RandomNormal", "RandomUniform", "TruncatedNormal",
           "LecunNormal", "LecunUniform", "Identity", "IdentityInitializer", "Orthogonal",
           "OrthogonalInitializer", "VarianceScaling", "get", "zeros", "ones", "constant",
           "glorot_uniform", "glorot_normal", "he_normal", "he_uniform", "random_normal",
           "random_uniform", "truncated_normal", "lecun_normal", "lecun_uniform", "identity",
           "orthogonal", "variance_scaling"]


def _fans(shape: tuple[int, ...]) -> tuple[float, float]:
    if len(shape) == 0:
        return 1.0, 1.0
    if len(shape) == 1:
        return float(shape[0]), float(shape[0])
    if len(shape) == 2:
        return float(shape[0]), float(shape[1])
    receptive = float(np.prod(shape[:-2]))
    return shape[-2] * receptive, shape[-1] * receptive


class Initializer:
    """Base class: ``init(shape, dtype)`` returns a tensor."""

    def __init__(self, seed: Any = None) -> None:
        self.seed = seed

    def _rng(self) -> np.random.Generator:
        return _generator(self.seed)

    def __call__(self, shape: Any, dtype: Any = None) -> Tensor:
        npd = _dt.np_dtype(dtype) if dtype is not None else np.dtype(np.float32)
        return tft(np.asarray(self.sample(tuple(int(s) for s in shape)), dtype=npd))

    def sample(self, shape: tuple[int, ...]) -> np.ndarray:
        raise NotImplementedError

    def get_config(self) -> dict[str, Any]:
        return {"seed": self.seed}


class Zeros(Initializer):
    def sample(self, shape: tuple[int, ...]) -> np.ndarray:
        return np.zeros(shape)


class Ones(Initializer):
    def sample(self, shape: tuple[int, ...]) -> np.ndarray:
        return np.ones(shape)


class Constant(Initializer):
    def __init__(self, value: float = 0.0) -> None:
        super().__init__()
        self.value = value

    def sample(self, shape: tuple[int, ...]) -> np.ndarray:
        return np.full(shape, self.value)


class RandomNormal(Initializer):
    def __init__(self, mean: float = 0.0, stddev: float = 0.05, seed: Any = None) -> None:
        super().__init__(seed)
        self.mean, self.stddev = mean, stddev

    def sample(self, shape: tuple[int, ...]) -> np.ndarray:
        return self._rng().normal(self.mean, self.stddev, shape)


class RandomUniform(Initializer):
    def __init__(self, minval: float = -0.05, maxval: float = 0.05, seed: Any = None) -> None:
        super().__init__(seed)
        self.minval, self.maxval = minval, maxval

    def sample(self, shape: tuple[int, ...]) -> np.ndarray:
        return self._rng().uniform(self.minval, self.maxval, shape)


class VarianceScaling(Initializer):
    """Keras's variance scaling (``fan_in``/``fan_out``/``fan_avg``, normal or uniform)."""

    def __init__(self, scale: float = 1.0, mode: str = "fan_in",
                 distribution: str = "truncated_normal", seed: Any = None) -> None:
        super().__init__(seed)
        self.scale, self.mode, self.distribution = scale, mode, distribution

    def sample(self, shape: tuple[int, ...]) -> np.ndarray:
        fan_in, fan_out = _fans(shape)
        n = {"fan_in": fan_in, "fan_out": fan_out}.get(self.mode, (fan_in + fan_out) / 2.0)
        scale = self.scale / max(1.0, n)
        rng = self._rng()
        if self.distribution == "uniform":
            limit = math.sqrt(3.0 * scale)
            return rng.uniform(-limit, limit, shape)
        if self.distribution == "untruncated_normal":
            return rng.normal(0.0, math.sqrt(scale), shape)
        std = math.sqrt(scale) / 0.87962566103423978
        z = rng.standard_normal(shape)
        bad = np.abs(z) > 2
        while bad.any():
            z[bad] = rng.standard_normal(int(bad.sum()))
            bad = np.abs(z) > 2
        return z * std


class GlorotUniform(VarianceScaling):
    """Uniform in ``[-limit, limit]``, ``limit = sqrt(6 / (fan_in + fan_out))`` (Dense's default).

    >>> import tapegrad.tf as tf
    >>> k = tf.keras.initializers.GlorotUniform()((3, 5))
    >>> bool(tf.reduce_all(tf.abs(k) <= (6 / 8) ** 0.5)), k.dtype
    (True, tf.float32)
    """

    def __init__(self, seed: Any = None) -> None:
        super().__init__(1.0, "fan_avg", "uniform", seed)


class GlorotNormal(VarianceScaling):
    def __init__(self, seed: Any = None) -> None:
        super().__init__(1.0, "fan_avg", "truncated_normal", seed)


class HeNormal(VarianceScaling):
    def __init__(self, seed: Any = None) -> None:
        super().__init__(2.0, "fan_in", "truncated_normal", seed)


class HeUniform(VarianceScaling):
    def __init__(self, seed: Any = None) -> None:
        super().__init__(2.0, "fan_in", "uniform", seed)


class TruncatedNormal(Initializer):
    """Normal samples redrawn until within two standard deviations of the mean."""

    def __init__(self, mean: float = 0.0, stddev: float = 0.05, seed: Any = None) -> None:
        super().__init__(seed)
        self.mean, self.stddev = mean, stddev

    def sample(self, shape: tuple[int, ...]) -> np.ndarray:
        rng = self._rng()
        z = rng.standard_normal(shape)
        bad = np.abs(z) > 2
        while bad.any():
            z[bad] = rng.standard_normal(int(bad.sum()))
            bad = np.abs(z) > 2
        return self.mean + self.stddev * z


class LecunNormal(VarianceScaling):
    def __init__(self, seed: Any = None) -> None:
        super().__init__(1.0, "fan_in", "truncated_normal", seed)


class LecunUniform(VarianceScaling):
    def __init__(self, seed: Any = None) -> None:
        super().__init__(1.0, "fan_in", "uniform", seed)


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
            raise ValueError(with_hint(
                "Identity matrix initializer can only be used for 2D matrices. Received: "
                f"shape={shape} of rank {len(shape)}.", "give a (rows, columns) shape"))
        return self.gain * np.eye(*shape)


class Orthogonal(Initializer):
    """A (semi-)orthogonal matrix from the QR decomposition of normal samples, times ``gain``."""

    def __init__(self, gain: float = 1.0, seed: Any = None) -> None:
        super().__init__(seed)
        self.gain = gain

    def sample(self, shape: tuple[int, ...]) -> np.ndarray:
        if len(shape) < 2:
            raise ValueError(with_hint(
                "Orthogonal initializer requires a kernel of shape with at least two "
                f"dimensions. Received kernel_shape={shape}", "give at least 2 dimensions"))
        rows = int(np.prod(shape[:-1]))
        cols = shape[-1]
        a = self._rng().standard_normal((max(rows, cols), min(rows, cols)))
        q, r = np.linalg.qr(a)
        q = q * np.sign(np.diag(r))
        if rows < cols:
            q = q.T
        return self.gain * q.reshape(shape)


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
            raise ValueError(with_hint(f"Could not interpret initializer identifier: "
                                       f"{identifier}", "unknown class_name"))
        return cls(**identifier.get("config", {}))
    if isinstance(identifier, str):
        cls = _BY_NAME.get(identifier)
        if cls is None:
            raise ValueError(with_hint(f"Could not interpret initializer identifier: "
                                       f"{identifier}",
                                       f"known names: {', '.join(sorted(_BY_NAME))}"))
        return cls()
    if callable(identifier):
        return identifier
    raise ValueError(with_hint(f"Could not interpret initializer identifier: {identifier}",
                               "pass a name such as 'glorot_uniform' or an initializer"))
