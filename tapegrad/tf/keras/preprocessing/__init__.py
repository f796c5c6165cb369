"""``keras.preprocessing``: ``sequence.pad_sequences`` and the array helpers of
``image`` (``img_to_array``, ``smart_resize``).  The dataset builders
(``image_dataset_from_directory`` ...) and ``text`` are not provided."""

from __future__ import annotations

from . import image, sequence

__all__ = ["image", "sequence"]
