"""``keras.preprocessing.image``: ``img_to_array`` and ``smart_resize`` (no file I/O:
``load_img``/``save_img``/``array_to_img`` need PIL and are not provided)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ...._core.errors import hinted, with_hint

__all__ = ["img_to_array", "smart_resize"]


def img_to_array(img: Any, data_format: Any = None, dtype: Any = None) -> np.ndarray:
    """An image (array-like, ``(h, w)`` or ``(h, w, c)``) as a float32 array; a 2-d image
    gets a channel axis (last, or first with ``data_format="channels_first"``)."""
    df = data_format or "channels_last"
    if df not in {"channels_first", "channels_last"}:
        raise hinted(ValueError(with_hint(f"Unknown data_format: {data_format}",
                                          "use 'channels_last' or 'channels_first'")))
    x = np.asarray(img, dtype=dtype or "float32")
    if x.ndim == 3:
        if df == "channels_first":
            x = x.transpose(2, 0, 1)
    elif x.ndim == 2:
        x = x.reshape((1, *x.shape)) if df == "channels_first" else x.reshape((*x.shape, 1))
    else:
        raise hinted(ValueError(with_hint(f"Unsupported image shape: {x.shape}",
                                          "pass an (h, w) or (h, w, c) image")))
    return x


def smart_resize(x: Any, size: Any, interpolation: str = "bilinear",
                 data_format: str = "channels_last", backend_module: Any = None) -> Any:
    """Resize to ``size`` without distortion: the largest centred crop of the target
    aspect ratio, then a resize (``keras.layers.Resizing(crop_to_aspect_ratio=True)``)."""
    from ..layers_more import Resizing

    h, w = (int(s) for s in size)
    layer = Resizing(h, w, interpolation=interpolation, crop_to_aspect_ratio=True,
                     data_format=data_format)
    arr = np.asarray(x._data if hasattr(x, "_data") else x)
    single = arr.ndim == 3
    out = layer(arr[None] if single else arr)
    return out[0] if single else out
