"""``keras.utils``: ``set_random_seed``.

>>> import tapegrad.tf as tf
>>> tf.keras.utils.set_random_seed(7)
>>> a = tf.keras.random.normal((2,))
>>> tf.keras.utils.set_random_seed(7)
>>> bool(tf.reduce_all(a == tf.keras.random.normal((2,))))
True
"""

from __future__ import annotations

import random as _pyrandom

import numpy as np

from ..._core.errors import hinted, with_hint
from .. import random as _tfr
from . import random as _kr

__all__ = ["set_random_seed"]


def set_random_seed(seed: int) -> None:
    """Seed Python's ``random``, NumPy's global generator and ``tf.random``; reset Keras's.

    As Keras 3's: unseeded Keras draws and new initializers start over from
    ``seed`` (the global ``SeedGenerator`` is dropped and re-made on first use).
    """
    if not isinstance(seed, int):
        raise hinted(ValueError(with_hint(
            f"Expected `seed` argument to be an integer. Received: seed={seed} "
            f"(of type {type(seed)})", "pass a Python int")))
    _kr._GLOBAL[0] = None
    _pyrandom.seed(seed)
    np.random.seed(seed)
    _tfr.set_seed(seed)
