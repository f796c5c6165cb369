"""``tf.vectorized_map``: a function of one element run on all of them at once.

It is the core's batching transform (``tapegrad.func.vmap``): ``fn`` sees one
element of ``elems`` (a nest, unstacked along axis 0) and every op inside it
runs once on the whole batch through the op's batching rule, as TensorFlow's
pfor converter does.  A ``GradientTape`` inside ``fn`` gives per-example
gradients.

>>> import tapegrad.tf as tf
>>> tf.vectorized_map(lambda row: tf.reduce_sum(row * row), tf.constant([[1.0, 2.0], [3.0, 4.0]]))
<tf.Tensor: shape=(2,), dtype=float32, numpy=array([ 5., 25.], dtype=float32)>
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .._core.errors import hinted, with_hint
from .._core.tensor import Tensor
from ..autodiff.functional import vmap
from . import _nest
from ._tensor import convert

__all__ = ["vectorized_map"]


def vectorized_map(fn: Callable[..., Any], elems: Any, fallback_to_while_loop: bool = True,
                   warn: bool = True) -> Any:
    """``tf.stack([fn(e) for e in unstack(elems)])``, vectorized.

    ``elems`` is a tensor or a nest of tensors with one leading size; ``fn``
    returns a tensor or a nest of them.
    """
    flat = [convert(e) for e in _nest.flatten(elems)]
    if not flat:
        raise hinted(ValueError(with_hint("elems must be a Tensor or (possibly nested) sequence of "
                                   "Tensors. Got []", "pass the tensors to map over")))
    sizes = {e._data.shape[0] if e._data.ndim else None for e in flat}
    if None in sizes:
        raise hinted(ValueError(with_hint(
            "Expected elems to be a tensor of rank at least 1, or a nest of them",
            "vectorized_map maps over the first axis")))
    if len(sizes) > 1:
        raise hinted(ValueError(with_hint(
            f"All elements of elems must have the same size along dimension 0; got sizes "
            f"{sorted(s for s in sizes if s is not None)}", "give every element one batch size")))
    packed = _nest.pack_sequence_as(elems, flat)

    def one(e: Any) -> Any:
        out = fn(e)
        return _nest.pack_sequence_as(out, [convert(o) if not isinstance(o, Tensor) else o
                                             for o in _nest.flatten(out)])

    return vmap(one)(packed)
