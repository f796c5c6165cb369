"""``tf.config``: the devices tapegrad runs on (one CPU) and the few switches code sets.

>>> import tapegrad.tf as tf
>>> tf.config.list_physical_devices()
[PhysicalDevice(name='/physical_device:CPU:0', device_type='CPU')]
>>> tf.config.list_physical_devices("GPU")
[]
"""

from __future__ import annotations

from typing import Any, NamedTuple

__all__ = ["PhysicalDevice", "LogicalDevice", "list_physical_devices", "get_visible_devices",
           "list_logical_devices", "set_visible_devices", "run_functions_eagerly",
           "functions_run_eagerly", "experimental", "threading",
           "set_exact_float32_sums", "exact_float32_sums"]


class PhysicalDevice(NamedTuple):
    """A device as TensorFlow names it."""

    name: str
    device_type: str


class LogicalDevice(NamedTuple):
    name: str
    device_type: str


_CPU = PhysicalDevice("/physical_device:CPU:0", "CPU")
_LOGICAL_CPU = LogicalDevice("/device:CPU:0", "CPU")


def list_physical_devices(device_type: str | None = None) -> list[PhysicalDevice]:
    """The CPU (``[]`` for ``"GPU"``/``"TPU"``: tapegrad runs on NumPy)."""
    if device_type is None or str(device_type).upper() == "CPU":
        return [_CPU]
    return []


def get_visible_devices(device_type: str | None = None) -> list[PhysicalDevice]:
    return list_physical_devices(device_type)


def list_logical_devices(device_type: str | None = None) -> list[LogicalDevice]:
    if device_type is None or str(device_type).upper() == "CPU":
        return [_LOGICAL_CPU]
    return []


def set_visible_devices(devices: Any, device_type: str | None = None) -> None:
    """Accepted (only the CPU exists)."""


_EAGER = [False]


def run_functions_eagerly(run_eagerly: bool) -> None:
    """Recorded; tapegrad always runs eagerly."""
    _EAGER[0] = bool(run_eagerly)


def functions_run_eagerly() -> bool:
    return _EAGER[0]


class _Experimental:
    """``tf.config.experimental``: memory growth and similar GPU switches are accepted."""

    @staticmethod
    def set_memory_growth(device: Any, enable: bool) -> None:
        return None

    @staticmethod
    def get_memory_growth(device: Any) -> bool:
        return False

    list_physical_devices = staticmethod(list_physical_devices)


class _Threading:
    @staticmethod
    def set_inter_op_parallelism_threads(n: int) -> None:
        return None

    @staticmethod
    def set_intra_op_parallelism_threads(n: int) -> None:
        return None

    @staticmethod
    def get_inter_op_parallelism_threads() -> int:
        return 0

    @staticmethod
    def get_intra_op_parallelism_threads() -> int:
        return 0


experimental = _Experimental()
threading = _Threading()


def set_exact_float32_sums(enabled: bool) -> None:
    """tapegrad's switch (not TensorFlow's): float32 sums follow TensorFlow's CPU order in
    ``tf.matmul``, convolutions, sums over leading axes (bias gradients) and the softmax
    cross-entropy gradient, so seeded programs print more of TensorFlow's last digits, at
    several times their cost (a ``tf.matmul`` about 40 times; products past a budget of
    multiply-adds keep BLAS's order). Off by default; ``TAPEGRAD_TF_EXACT_SUMS=1`` turns it
    on at import.

    >>> import tapegrad.tf as tf
    >>> tf.config.set_exact_float32_sums(True); tf.config.exact_float32_sums()
    True
    >>> tf.config.set_exact_float32_sums(False)
    """
    from ..ops._tf_eigen import EXACT_SUMS

    EXACT_SUMS[0] = bool(enabled)


def exact_float32_sums() -> bool:
    """Whether :func:`set_exact_float32_sums` is on."""
    from ..ops._tf_eigen import EXACT_SUMS

    return EXACT_SUMS[0]
