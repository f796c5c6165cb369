"""``tf.Tensor`` as ``isinstance`` sees it: tensors yes, variables no, as in TensorFlow.

tapegrad has one tensor class for both styles (front-end subclasses are
planned); ``tf.Tensor`` stands for it in ``isinstance``/``issubclass``
checks, answering as TensorFlow does: ``isinstance(tf.constant(1.0),
tf.Tensor)`` is True and ``isinstance(tf.Variable(1.0), tf.Tensor)`` is
False (``tf.is_tensor`` is True for both).  ``type(t)`` is still
:class:`tapegrad.Tensor`, not TensorFlow's ``EagerTensor``.
"""

from __future__ import annotations

from typing import Any

from .._core.errors import hinted, with_hint
from .._core.tensor import Tensor as _Core
from ._tensor import VariableBase


class _TensorMeta(type):
    def __instancecheck__(cls, obj: Any) -> bool:
        return isinstance(obj, _Core) and not isinstance(obj, VariableBase)

    def __subclasscheck__(cls, sub: Any) -> bool:
        return isinstance(sub, type) and issubclass(sub, _Core) and not issubclass(
            sub, VariableBase)

    def __getattr__(cls, name: str) -> Any:
        return getattr(_Core, name)


class Tensor(metaclass=_TensorMeta):
    """``tf.Tensor``: ``isinstance(x, tf.Tensor)`` is True for tensors, False for variables.

    >>> import tapegrad.tf as tf
    >>> isinstance(tf.constant(1.0), tf.Tensor), isinstance(tf.Variable(1.0), tf.Tensor)
    (True, False)
    """

    def __new__(cls, *args: Any, **kwargs: Any) -> Any:
        raise hinted(TypeError(with_hint(
            "Tensor.__init__() missing 2 required positional arguments: 'value_index' and "
            "'dtype'", "tensors are made by ops: tf.constant(value) or tf.convert_to_tensor")))


Tensor.__module__ = "tapegrad.tf"
