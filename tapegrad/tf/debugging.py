"""``tf.debugging``: eager assertions (they raise at once, or return None).

>>> import tapegrad.tf as tf
>>> tf.debugging.assert_equal(tf.constant([1, 2]), tf.constant([1, 2])) is None
True
"""

from __future__ import annotations

from ._ops_more import assert_equal, assert_greater, assert_less, assert_rank

__all__ = ["assert_equal", "assert_greater", "assert_less", "assert_rank"]
