"""``keras.mixed_precision``: dtype policies and ``LossScaleOptimizer``.

A plain float policy (``"float64"``, ``"float16"``...) set with ``set_global_policy``
is the dtype of the layers made afterwards (weights and computation), as in Keras.

A mixed policy (``"mixed_float16"``, ``"mixed_bfloat16"``) is accepted and reported
(``global_policy()``, ``layer.dtype_policy``, configs), and its variables are float32 as
Keras's; but tapegrad does not autocast: such layers *compute in float32*, not in
float16 (a warning says so once). ``LossScaleOptimizer`` scales the loss by a power of
two and unscales the gradients, which is exact in float32, so training numbers equal the
inner optimizer's.

>>> import tapegrad.tf as tf
>>> mp = tf.keras.mixed_precision
>>> mp.Policy("mixed_float16").compute_dtype
'float16'
>>> mp.global_policy()
<DTypePolicy "float32">
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from ..._core.errors import hinted, with_hint

__all__ = ["DTypePolicy", "Policy", "LossScaleOptimizer", "global_policy", "set_global_policy",
           "dtype_policy", "set_dtype_policy"]

_FLOATS = ("float16", "float32", "float64", "bfloat16")


def _bad(name: Any) -> ValueError:
    return hinted(ValueError(with_hint(
        f"Cannot convert '{name}' to a mixed precision DTypePolicy. Valid policies include "
        "'mixed_float16', 'mixed_bfloat16', and the name of any float dtype such as "
        "'float32'.", "use 'mixed_float16' or a float dtype name")))


class DTypePolicy:
    """A layer dtype policy: ``compute_dtype`` and ``variable_dtype`` (Keras 3)."""

    def __init__(self, name: str | None = None) -> None:
        if name is None:
            name = _GLOBAL[0].name if _GLOBAL else "float32"
        if not isinstance(name, str):
            raise hinted(TypeError(with_hint(
                f"'name' must be a string, such as 'mixed_float16'. Received: name={name} "
                f"(of type {type(name)})", "pass the policy's name")))
        if name in ("mixed_float16", "mixed_bfloat16"):
            self._compute, self._variable = name.split("_", 1)[1], "float32"
        else:
            try:
                dt = np.dtype(name).name if name != "bfloat16" else "bfloat16"
            except TypeError:
                raise _bad(name) from None
            if dt not in _FLOATS and not name.startswith(("int", "uint", "bool")):
                raise _bad(name)
            self._compute = self._variable = dt
        self._name = name

    @property
    def name(self) -> str:
        return self._name

    @property
    def compute_dtype(self) -> str:
        return self._compute

    @property
    def variable_dtype(self) -> str:
        return self._variable

    @property
    def is_mixed(self) -> bool:
        return self._compute != self._variable

    def get_config(self) -> dict[str, Any]:
        return {"name": self._name}

    @classmethod
    def from_config(cls, config: dict[str, Any]) -> DTypePolicy:
        return cls(**config)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, DTypePolicy) and other.name == self.name

    def __hash__(self) -> int:
        return hash(self._name)

    def __repr__(self) -> str:
        return f'<DTypePolicy "{self._name}">'


Policy = DTypePolicy
_GLOBAL: list[DTypePolicy] = []
_WARNED = [False]


def set_dtype_policy(policy: Any) -> None:
    """Set the global policy (a name or a :class:`DTypePolicy`)."""
    if isinstance(policy, str):
        policy = DTypePolicy(policy)
    elif not isinstance(policy, DTypePolicy):
        raise hinted(ValueError(with_hint(
            "Invalid `policy` argument. Expected the string name of a policy (such as "
            "'mixed_float16') or a `DTypePolicy` instance. Received: "
            f"policy={policy} (of type {type(policy)})", "pass e.g. 'mixed_float16'")))
    if policy.is_mixed and not _WARNED[0]:
        _WARNED[0] = True
        warnings.warn(
            f"tapegrad accepts the {policy.name!r} policy (float32 variables) but does not "
            "autocast: layers compute in float32, not float16", UserWarning, stacklevel=3)
    _GLOBAL[:] = [policy]


set_global_policy = set_dtype_policy


def dtype_policy() -> DTypePolicy:
    """The global policy (``float32`` unless set)."""
    return _GLOBAL[0] if _GLOBAL else DTypePolicy("float32")


global_policy = dtype_policy


def default_variable_dtype() -> np.dtype | None:
    """The variable dtype the global policy gives new layers (``None``: float32)."""
    if not _GLOBAL:
        return None
    return np.dtype(_GLOBAL[0].variable_dtype) if _GLOBAL[0].variable_dtype != "bfloat16" \
        else None


def policy_of(dtype: Any) -> tuple[Any, DTypePolicy | None]:
    """A layer's ``dtype=`` argument as (variable dtype argument, policy if a policy)."""
    if isinstance(dtype, DTypePolicy):
        return dtype.variable_dtype, dtype
    if isinstance(dtype, dict) and dtype.get("class_name") == "DTypePolicy":
        p = DTypePolicy(**(dtype.get("config") or {}))
        return p.variable_dtype, p
    if isinstance(dtype, str) and dtype.startswith("mixed_"):
        p = DTypePolicy(dtype)
        return p.variable_dtype, p
    return dtype, None


class LossScaleOptimizer:
    """Keras 3's dynamic loss scaling around an optimizer.

    ``scale_loss(loss)`` multiplies by ``dynamic_scale`` (a power of two);
    ``apply_gradients`` unscales the gradients, skips a step with non-finite gradients
    (halving the scale) and doubles the scale after ``dynamic_growth_steps`` finite steps.
    """

    def __init__(self, inner_optimizer: Any, initial_scale: float = 2.0 ** 15,
                 dynamic_growth_steps: int = 2000, name: str | None = None,
                 **kwargs: Any) -> None:
        from .optimizers import Optimizer

        if not isinstance(inner_optimizer, Optimizer):
            raise hinted(ValueError(with_hint(
                "Argument `inner_optimizer` must be an instance of `keras.optimizers."
                f"Optimizer`. Received: inner_optimizer={inner_optimizer}",
                "wrap a keras optimizer")))
        self.inner_optimizer = inner_optimizer
        self.initial_scale = float(initial_scale)
        self.dynamic_growth_steps = int(dynamic_growth_steps)
        self.name = name or "loss_scale_optimizer"
        self._scale = float(initial_scale)
        self._good_steps = 0

    @property
    def dynamic_scale(self) -> Any:
        from .._tensor import tft

        return tft(np.asarray(self._scale, np.float32))

    def scale_loss(self, loss: Any) -> Any:
        from .. import _ops as T

        return T.multiply(loss, T.cast(self.dynamic_scale, T.convert_to_tensor(loss).dtype))

    def apply_gradients(self, grads_and_vars: Any, **kwargs: Any) -> Any:
        from .._tensor import convert

        pairs = list(grads_and_vars)
        arrays = [None if g is None else np.asarray(convert(g)._data) for g, _ in pairs]
        finite = all(a is None or bool(np.all(np.isfinite(a))) for a in arrays)
        # unscale (a power of two: exact unless the scaled values overflowed)
        pairs = [(g if a is None else (a / a.dtype.type(self._scale)).astype(a.dtype), v)
                 for (g, v), a in zip(pairs, arrays)]
        if not finite:
            self._scale /= 2.0
            self._good_steps = 0
            return self.inner_optimizer.iterations
        self._good_steps += 1
        if self._good_steps >= self.dynamic_growth_steps:
            self._scale *= 2.0
            self._good_steps = 0
        return self.inner_optimizer.apply_gradients(pairs, **kwargs)

    def apply(self, grads: Any, trainable_variables: Any = None) -> Any:
        return self.apply_gradients(zip(grads, trainable_variables))

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_") or name == "inner_optimizer":
            raise AttributeError(name)
        return getattr(self.inner_optimizer, name)

    def get_config(self) -> dict[str, Any]:
        from .saving import serialize_keras_object

        return {"name": self.name,
                "inner_optimizer": serialize_keras_object(self.inner_optimizer),
                "initial_scale": self.initial_scale,
                "dynamic_growth_steps": self.dynamic_growth_steps}
