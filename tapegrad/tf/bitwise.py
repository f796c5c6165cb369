"""``tf.bitwise``: elementwise bit operations on integer tensors.

>>> import tapegrad.tf as tf
>>> tf.bitwise.bitwise_or(tf.constant([4]), tf.constant([1]))
<tf.Tensor: shape=(1,), dtype=int32, numpy=array([5], dtype=int32)>
"""

from __future__ import annotations

from ._ops_extra import bitwise_and, bitwise_or, bitwise_xor, invert, left_shift, right_shift

__all__ = ["bitwise_and", "bitwise_or", "bitwise_xor", "invert", "left_shift", "right_shift"]
