"""``tf.image``: resizing (TensorFlow's half-pixel kernels), flips, crops, pads, dtype
conversion, colour adjustments and image metrics.

Resizing is separable: each spatial axis is resampled by one ``(out, in)`` matrix built
the way TensorFlow's kernel picks its taps (``ResizeBilinear`` and ``ResizeBicubic`` with
half-pixel centres -- bicubic uses the Keys kernel ``a = -0.5`` from a 1024-entry table
with out-of-range taps dropped and the rest renormalized --, ``ResizeArea``'s overlaps,
``ResizeNearestNeighbor``'s ``floor((i + 0.5) * scale)``); the resampling op is linear, so
its gradient is the transposed resampling, differentiable again.  Colour conversions
compose tapegrad ops (differentiable); ``adjust_saturation``/``adjust_hue`` run
TensorFlow's float kernels on the values (no gradient, as TensorFlow registers none).

>>> import tapegrad.tf as tf
>>> tf.image.flip_left_right(tf.constant([[[1.0], [2.0]]]))
<tf.Tensor: shape=(1, 2, 1), dtype=float32, numpy=
array([[[2.],
        [1.]]], dtype=float32)>
"""

from __future__ import annotations

import functools
import math
from typing import Any

import numpy as np

from .. import ops
from .._core.errors import hinted, with_hint
from .._core.tensor import Tensor
from ..ops.resize import _resample
from . import dtypes as _dt
from ._ops import _t, cast, pad, reduce_mean, reduce_sum, reverse, stop_gradient
from ._ops import transpose as _transpose
from ._tensor import tft

_F32 = np.dtype(np.float32)


def _value_error(msg: str, hint: str) -> ValueError:
    return hinted(ValueError(with_hint(msg, hint)))


def _image(images: Any, least: int = 3) -> tuple[Tensor, bool]:
    """The image as a 4-D batch and whether it was one (TensorFlow accepts 3-D or 4-D)."""
    t = _t(images)
    nd = t._data.ndim
    if nd not in (3, 4):
        raise _value_error("'images' must have either 3 or 4 dimensions." if least == 3 else
                           "'image' must be at least three-dimensional.",
                           f"got a tensor of shape {list(t._data.shape)}")
    return (t if nd == 4 else ops.expand_dims(t, 0)), nd == 4


def _unbatch(t: Tensor, batched: bool) -> Tensor:
    return t if batched else ops.getitem(t, 0)


# ============================================================================ resize
class ResizeMethod:
    """The names ``tf.image.resize`` takes as ``method``."""

    BILINEAR = "bilinear"
    NEAREST_NEIGHBOR = "nearest"
    BICUBIC = "bicubic"
    AREA = "area"
    LANCZOS3 = "lanczos3"
    LANCZOS5 = "lanczos5"
    GAUSSIAN = "gaussian"
    MITCHELLCUBIC = "mitchellcubic"


def _scaler(o: int, scale: np.float32) -> np.ndarray:
    # TensorFlow's HalfPixelScaler, in float32 as its kernels compute it
    return (np.arange(o, dtype=np.float32) + np.float32(0.5)) * scale - np.float32(0.5)


@functools.lru_cache(maxsize=256)  # one per (sizes, method): reused by every call
def _bilinear_matrix(n: int, o: int) -> np.ndarray:
    scale = np.float32(n / o)
    src = _scaler(o, scale)
    lo = np.floor(src)
    i0 = np.maximum(lo, 0).astype(np.int64)
    i1 = np.minimum(np.ceil(src), n - 1).astype(np.int64)
    lam = (src - lo).astype(np.float64)
    a = np.zeros((o, n))
    np.add.at(a, (np.arange(o), i0), 1.0 - lam)
    np.add.at(a, (np.arange(o), i1), lam)
    return a


def _keys_table(a: float) -> np.ndarray:
    size = 1024
    table = np.zeros(((size + 1), 2), np.float32)
    for i in range(size + 1):
        x = np.float32(i * 1.0 / size)
        table[i, 0] = np.float32(((a + 2) * x - (a + 3)) * x * x + 1)
        x = x + np.float32(1.0)
        table[i, 1] = np.float32(((a * x - 5 * a) * x + 8 * a) * x - 4 * a)
    return table


_KEYS = _keys_table(-0.5)


@functools.lru_cache(maxsize=256)  # one per (sizes, method): reused by every call
def _bicubic_matrix(n: int, o: int) -> np.ndarray:
    scale = np.float32(n / o)
    src = _scaler(o, scale)
    a = np.zeros((o, n))
    for r in range(o):
        loc = int(math.floor(float(src[r])))
        delta = np.float32(src[r] - np.float32(loc))
        off = int(np.rint(delta * np.float32(1024)))
        w = [_KEYS[off, 1], _KEYS[off, 0], _KEYS[1024 - off, 0], _KEYS[1024 - off, 1]]
        idx = [loc - 1, loc, loc + 1, loc + 2]
        ws = [np.float32(wk) if 0 <= ik < n else np.float32(0) for wk, ik in zip(w, idx)]
        total = np.float32(sum(ws, np.float32(0)))
        if abs(total) >= 1000.0 * np.finfo(np.float32).tiny:
            ws = [wk * (np.float32(1) / total) for wk in ws]
        for wk, ik in zip(ws, idx):
            a[r, min(max(ik, 0), n - 1)] += float(wk)
    return a


@functools.lru_cache(maxsize=256)  # one per (sizes, method): reused by every call
def _area_matrix(n: int, o: int) -> np.ndarray:
    scale = n / o
    a = np.zeros((o, n))
    for r in range(o):
        lo, hi = r * scale, (r + 1) * scale
        for i in range(int(math.floor(lo)), int(math.ceil(hi))):
            w = min(i + 1, hi) - max(i, lo)
            a[r, min(i, n - 1)] += w / scale
    return a


@functools.lru_cache(maxsize=256)  # one per (sizes, method): reused by every call
def _nearest_index(n: int, o: int) -> np.ndarray:
    scale = np.float32(n / o)
    src = np.floor((np.arange(o, dtype=np.float32) + np.float32(0.5)) * scale)
    return np.minimum(src.astype(np.int64), n - 1)


def _k_triangle(x: np.ndarray) -> np.ndarray:
    return np.maximum(np.float32(0), np.float32(1) - x)


def _k_keys(x: np.ndarray) -> np.ndarray:
    a = ((np.float32(1.5) * x - np.float32(2.5)) * x) * x + np.float32(1)
    b = ((np.float32(-0.5) * x + np.float32(2.5)) * x - np.float32(4)) * x + np.float32(2)
    return np.where(x >= 2, np.float32(0), np.where(x >= 1, b, a))


def _lanczos(r: float) -> Any:
    def k(x: np.ndarray) -> np.ndarray:
        with np.errstate(all="ignore"):
            px = np.float32(np.pi) * x
            v = np.float32(r) * np.sin(px) * np.sin(px / np.float32(r)) / (px * px)
        return np.where(x > r, np.float32(0), np.where(x < 1e-3, np.float32(1), v))
    return k


def _k_gaussian(x: np.ndarray) -> np.ndarray:
    sigma = np.float32(1.5 / 3.0)
    return np.where(x >= 1.5, np.float32(0), np.exp(-x * x / (np.float32(2) * sigma * sigma)))


def _k_mitchell(x: np.ndarray) -> np.ndarray:
    a = ((np.float32(7.0 / 6.0) * x - np.float32(2)) * x) * x + np.float32(8.0 / 9.0)
    b = (((np.float32(-7.0 / 18.0) * x + np.float32(2)) * x - np.float32(10.0 / 3.0)) * x
         + np.float32(16.0 / 9.0))
    return np.where(x >= 2, np.float32(0), np.where(x >= 1, b, a))


# TensorFlow's ScaleAndTranslate kernels: (function, radius)
_SAT_KERNELS = {"triangle": (_k_triangle, 1.0), "keyscubic": (_k_keys, 2.0),
                "lanczos3": (_lanczos(3.0), 3.0), "lanczos5": (_lanczos(5.0), 5.0),
                "gaussian": (_k_gaussian, 1.5), "mitchellcubic": (_k_mitchell, 2.0)}


@functools.lru_cache(maxsize=256)  # one per (sizes, method): reused by every call
def _scale_translate_matrix(n: int, o: int, kernel: str, antialias: bool) -> np.ndarray:
    """TensorFlow's ``ComputeSpans`` (scale_and_translate_op.cc) as an ``(o, n)`` matrix."""
    fn, radius = _SAT_KERNELS[kernel]
    scale = np.float32(o) / np.float32(n)
    inv = np.float32(1) / scale
    ks = max(float(inv), 1.0) if antialias else 1.0
    a = np.zeros((o, n))
    for x in range(o):
        sample = np.float32(np.float32(x) + np.float32(0.5)) * inv
        if sample < 0 or sample > n:
            continue
        start = int(math.ceil(float(sample - np.float32(radius * ks) - np.float32(0.5))))
        end = int(math.floor(float(sample + np.float32(radius * ks) - np.float32(0.5))))
        start = min(max(start, 0), n - 1)
        end = min(max(end, 0), n - 1) + 1
        src = np.arange(start, end, dtype=np.float32)
        pos = np.abs((src + np.float32(0.5) - sample) / np.float32(ks)).astype(np.float32)
        w = fn(pos).astype(np.float32)
        total = np.float32(w.sum(dtype=np.float32))
        if abs(total) >= 1000.0 * np.finfo(np.float32).tiny:
            w = w * (np.float32(1) / total)
        a[x, start:end] = w
    return a


_MATRIX = {"bilinear": _bilinear_matrix, "bicubic": _bicubic_matrix, "area": _area_matrix}
_SAT_METHODS = {"lanczos3", "lanczos5", "gaussian", "mitchellcubic"}


def _size_arg(size: Any) -> tuple[int, int]:
    s = np.asarray(size._data if isinstance(size, Tensor) else size)
    if s.ndim != 1 or s.size != 2:
        raise _value_error("'size' must be a 1-D Tensor of 2 elements: new_height, new_width",
                           "pass [height, width]")
    if s.dtype.kind not in "iu":
        raise _value_error("'size' must be a 1-D int32 Tensor", "pass integer sizes")
    return int(s[0]), int(s[1])


def _resize4(x: Tensor, h: int, w: int, method: str, antialias: bool = False) -> Tensor:
    n_h, n_w = x._data.shape[1], x._data.shape[2]
    kernel = None
    if method in _SAT_METHODS:
        kernel = method
    elif antialias and method in ("bilinear", "bicubic"):
        kernel = "triangle" if method == "bilinear" else "keyscubic"
    if kernel is not None:
        xf = x if x._data.dtype == _F32 else cast(x, _dt.float32)
        mats = (_scale_translate_matrix(n_h, h, kernel, antialias).astype(np.float32),
                _scale_translate_matrix(n_w, w, kernel, antialias).astype(np.float32))
        return _resample(xf, mats=mats, axes=(-3, -2))
    if method == "nearest":
        out = ops.take(x, _nearest_index(n_h, h), axis=1)
        return ops.take(out, _nearest_index(n_w, w), axis=2)
    if method not in _MATRIX:
        raise _value_error(f"Resize method is not implemented: {method}",
                           "use bilinear, nearest, bicubic or area")
    xf = x if x._data.dtype == _F32 else cast(x, _dt.float32)
    mats = (_MATRIX[method](n_h, h).astype(np.float32), _MATRIX[method](n_w, w).astype(np.float32))
    return _resample(xf, mats=mats, axes=(-3, -2))


def resize(images: Any, size: Any, method: str = ResizeMethod.BILINEAR,
           preserve_aspect_ratio: bool = False, antialias: bool = False,
           name: str | None = None) -> Tensor:
    """Resize 3-D ``(H, W, C)`` or 4-D ``(N, H, W, C)`` images to ``size``.

    The result is float32, except for ``"nearest"`` which keeps the input's dtype.
    ``"lanczos3"``, ``"lanczos5"``, ``"gaussian"``, ``"mitchellcubic"`` and antialiased
    ``"bilinear"``/``"bicubic"`` use TensorFlow's ScaleAndTranslate spans.

    >>> import tapegrad.tf as tf
    >>> tf.image.resize(tf.constant([[[0.0], [1.0]]]), [1, 4])[0, :, 0]
    <tf.Tensor: shape=(4,), dtype=float32, numpy=array([0.  , 0.25, 0.75, 1.  ], dtype=float32)>
    """
    x, batched = _image(images)
    h, w = _size_arg(size)
    if preserve_aspect_ratio:
        ch, cw = x._data.shape[1], x._data.shape[2]
        f = min(np.float32(h) / np.float32(ch), np.float32(w) / np.float32(cw))
        h = int(np.rint(np.float32(f * np.float32(ch))))
        w = int(np.rint(np.float32(f * np.float32(cw))))
    return _unbatch(_resize4(x, h, w, method, bool(antialias)), batched)


def resize_with_pad(image: Any, target_height: int, target_width: int,
                    method: str = ResizeMethod.BILINEAR, antialias: bool = False) -> Tensor:
    """Resize keeping the aspect ratio, then pad with zeros to the target size.

    >>> import tapegrad.tf as tf
    >>> tf.image.resize_with_pad(tf.ones([2, 4, 1]), 4, 4).shape
    TensorShape([4, 4, 1])
    """
    x, batched = _image(image)
    th, tw = int(target_height), int(target_width)
    if th <= 0:
        raise _value_error("target_height must be > 0", "ask for a positive height")
    if tw <= 0:
        raise _value_error("target_width must be > 0", "ask for a positive width")
    fh, fw = np.float32(x._data.shape[1]), np.float32(x._data.shape[2])
    ratio = max(fw / np.float32(tw), fh / np.float32(th))
    rh, rw = fh / ratio, fw / ratio
    ph = max(0, int(np.floor((np.float32(th) - rh) / np.float32(2))))
    pw = max(0, int(np.floor((np.float32(tw) - rw) / np.float32(2))))
    resized = _resize4(x, int(np.floor(rh)), int(np.floor(rw)), method, bool(antialias))
    return _unbatch(pad_to_bounding_box(resized, ph, pw, th, tw), batched)


# ============================================================================ flips, rotations
def flip_left_right(image: Any) -> Tensor:
    """Reverse the width axis."""
    t = _t(image)
    _image(t)
    return reverse(t, [t._data.ndim - 2])


def flip_up_down(image: Any) -> Tensor:
    """Reverse the height axis."""
    t = _t(image)
    _image(t)
    return reverse(t, [t._data.ndim - 3])


def _random_flip(image: Any, seed: Any, axis_from_end: int) -> Tensor:
    from . import random as _random

    t = _t(image)
    _image(t)
    ax = t._data.ndim - axis_from_end
    if t._data.ndim == 3:
        u = _random.uniform([], 0, 1.0, seed=seed)
        return reverse(t, [ax]) if float(u._data) < 0.5 else ops.identity(t)
    n = t._data.shape[0]
    u = _random.uniform([n], 0, 1.0, seed=seed)
    flips = tft(np.round(u._data).reshape(n, 1, 1, 1).astype(t._data.dtype))
    return ops.add(ops.multiply(flips, reverse(t, [ax])),
                   ops.multiply(ops.subtract(tft(np.ones((), t._data.dtype)), flips), t))


def random_flip_left_right(image: Any, seed: Any = None) -> Tensor:
    """Flip the width axis with probability 1/2 (per image of a batch), TensorFlow's draws."""
    return _random_flip(image, seed, 2)


def random_flip_up_down(image: Any, seed: Any = None) -> Tensor:
    """Flip the height axis with probability 1/2 (per image of a batch), TensorFlow's draws."""
    return _random_flip(image, seed, 3)


def rot90(image: Any, k: int = 1, name: str | None = None) -> Tensor:
    """Rotate by ``k`` quarter turns counter-clockwise.

    >>> import tapegrad.tf as tf
    >>> tf.image.rot90(tf.constant([[[1], [2]]]))[:, :, 0]
    <tf.Tensor: shape=(2, 1), dtype=int32, numpy=
    array([[2],
           [1]], dtype=int32)>
    """
    x, batched = _image(image)
    k = int(k) % 4
    if k == 1:
        x = ops.swapaxes(reverse(x, [2]), 1, 2)
    elif k == 2:
        x = reverse(x, [1, 2])
    elif k == 3:
        x = reverse(ops.swapaxes(x, 1, 2), [2])
    return _unbatch(x, batched)


def transpose(image: Any, name: str | None = None) -> Tensor:
    """Swap the height and width axes."""
    t = _t(image)
    _image(t)
    return _transpose(t, [1, 0, 2] if t._data.ndim == 3 else [0, 2, 1, 3])


# ============================================================================ crops, pads
def crop_to_bounding_box(image: Any, offset_height: int, offset_width: int, target_height: int,
                         target_width: int) -> Tensor:
    """The ``target_height x target_width`` window at the offsets.

    >>> import tapegrad.tf as tf
    >>> tf.image.crop_to_bounding_box(tf.ones([4, 5, 3]), 1, 2, 2, 3).shape
    TensorShape([2, 3, 3])
    """
    x, batched = _image(image)
    oh, ow, th, tw = (int(v) for v in (offset_height, offset_width, target_height, target_width))
    h, w = x._data.shape[1], x._data.shape[2]
    for ok, msg in ((ow >= 0, "offset_width must be >= 0."), (oh >= 0, "offset_height must be >= 0."),
                    (tw > 0, "target_width must be > 0."), (th > 0, "target_height must be > 0."),
                    (w >= tw + ow, "width must be >= target + offset."),
                    (h >= th + oh, "height must be >= target + offset.")):
        if not ok:
            raise _value_error(msg, f"the image is {h}x{w}")
    return _unbatch(ops.getitem(x, (slice(None), slice(oh, oh + th), slice(ow, ow + tw))), batched)


def pad_to_bounding_box(image: Any, offset_height: int, offset_width: int, target_height: int,
                        target_width: int) -> Tensor:
    """Zero-pad to ``target_height x target_width`` with the image at the offsets."""
    x, batched = _image(image)
    oh, ow, th, tw = (int(v) for v in (offset_height, offset_width, target_height, target_width))
    h, w = x._data.shape[1], x._data.shape[2]
    after_h, after_w = th - oh - h, tw - ow - w
    for ok, msg in ((oh >= 0, "offset_height must be >= 0"), (ow >= 0, "offset_width must be >= 0"),
                    (after_h >= 0, "height must be <= target - offset"),
                    (after_w >= 0, "width must be <= target - offset")):
        if not ok:
            raise _value_error(msg, f"the image is {h}x{w}")
    return _unbatch(pad(x, [[0, 0], [oh, after_h], [ow, after_w], [0, 0]]), batched)


def resize_with_crop_or_pad(image: Any, target_height: int, target_width: int) -> Tensor:
    """Centre-crop and/or zero-pad to the target size."""
    x, batched = _image(image)
    th, tw = int(target_height), int(target_width)
    if tw <= 0:
        raise _value_error("target_width must be > 0.", "ask for a positive width")
    if th <= 0:
        raise _value_error("target_height must be > 0.", "ask for a positive height")
    h, w = x._data.shape[1], x._data.shape[2]
    crop = crop_to_bounding_box(x, max((h - th) // 2, 0), max((w - tw) // 2, 0), min(th, h),
                                min(tw, w))
    out = pad_to_bounding_box(crop, max((th - h) // 2, 0), max((tw - w) // 2, 0), th, tw)
    return _unbatch(out, batched)


def central_crop(image: Any, central_fraction: float) -> Tensor:
    """The central ``central_fraction`` of the height and width."""
    x, batched = _image(image)
    f = float(central_fraction)
    if f <= 0.0 or f > 1.0:
        raise _value_error("central_fraction must be within (0, 1]", f"got {f}")
    if f == 1.0:
        return ops.identity(_t(image))
    h, w = x._data.shape[1], x._data.shape[2]
    sh = int((h - h * f) / 2)
    sw = int((w - w * f) / 2)
    out = ops.getitem(x, (slice(None), slice(sh, h - sh), slice(sw, w - sw)))
    return _unbatch(out, batched)


# ============================================================================ dtypes
def _max(npd: np.dtype) -> int | float:
    return 1.0 if npd.kind == "f" else int(np.iinfo(npd).max)


def _saturate_cast(t: Tensor, npd: np.dtype) -> Tensor:
    if npd.kind in "iu" and t._data.dtype.kind == "f":
        info = np.iinfo(npd)
        t = ops.clip(t, float(info.min), float(info.max))
    return cast(t, _dt.as_dtype(npd))


def convert_image_dtype(image: Any, dtype: Any, saturate: bool = False,
                        name: str | None = None) -> Tensor:
    """Convert between image dtypes, rescaling: floats are in ``[0, 1]``, integers in
    ``[0, MAX]`` (TensorFlow's formulas; float to integer scales by ``MAX + 0.5``).

    >>> import tapegrad.tf as tf
    >>> tf.image.convert_image_dtype(tf.constant([0, 255], tf.uint8), tf.float32)
    <tf.Tensor: shape=(2,), dtype=float32, numpy=array([0., 1.], dtype=float32)>
    """
    t = _t(image)
    src, dst = t._data.dtype, _dt.np_dtype(dtype)
    if dst.kind not in "fiu":
        raise hinted(AttributeError(with_hint("dtype must be either floating point or integer",
                                              "convert to a float or integer dtype")))
    if src == dst:
        return ops.identity(t)
    if src.kind in "iu" and dst.kind in "iu":
        si, so = _max(src), _max(dst)
        if si > so:
            scale = (int(si) + 1) // (int(so) + 1)
            scaled = tft(np.floor_divide(t._data, np.asarray(scale, src)))
            return _saturate_cast(scaled, dst) if saturate else cast(scaled, _dt.as_dtype(dst))
        c = _saturate_cast(t, dst) if saturate else cast(t, _dt.as_dtype(dst))
        scale = (int(so) + 1) // (int(si) + 1)
        return tft(np.multiply(c._data, np.asarray(scale, dst)))
    if src.kind == "f" and dst.kind == "f":
        return cast(t, _dt.as_dtype(dst))
    if src.kind in "iu":
        c = cast(t, _dt.as_dtype(dst))
        return ops.multiply(c, tft(np.asarray(1.0 / _max(src), dst)))
    scaled = ops.multiply(t, tft(np.asarray(_max(dst) + 0.5, src)))
    return _saturate_cast(scaled, dst) if saturate else cast(scaled, _dt.as_dtype(dst))


def _to_float(t: Tensor) -> Tensor:
    return t if t._data.dtype in (np.float16, np.float32) else convert_image_dtype(t, _dt.float32)


# ============================================================================ adjustments
def adjust_brightness(image: Any, delta: Any) -> Tensor:
    """Add ``delta`` (in ``[0, 1]`` units) to every pixel."""
    t = _t(image)
    f = _to_float(t)
    out = ops.add(f, cast(_t(delta), _dt.as_dtype(f._data.dtype)))
    return convert_image_dtype(out, _dt.as_dtype(t._data.dtype), saturate=True)


def adjust_contrast(images: Any, contrast_factor: Any) -> Tensor:
    """``(x - mean) * factor + mean`` with the mean of each channel over height and width."""
    t = _t(images)
    f = _to_float(t)
    m = reduce_mean(f, axis=[-3, -2], keepdims=True)
    fac = cast(_t(contrast_factor), _dt.as_dtype(f._data.dtype))
    out = ops.add(ops.multiply(ops.subtract(f, m), fac), m)
    return convert_image_dtype(out, _dt.as_dtype(t._data.dtype), saturate=True)


def adjust_gamma(image: Any, gamma: Any = 1, gain: Any = 1) -> Tensor:
    """``gain * image ** gamma`` on ``[0, 1]``-scaled values."""
    t = _t(image)
    g = float(gamma._data if isinstance(gamma, Tensor) else gamma)
    if g < 0:
        raise _value_error("Gamma should be a non-negative real number.", "use gamma >= 0")
    f = _to_float(t)
    dt = _dt.as_dtype(f._data.dtype)
    out = ops.multiply(cast(_t(gain), dt), ops.power(f, cast(_t(gamma), dt)))
    return convert_image_dtype(out, _dt.as_dtype(t._data.dtype), saturate=True)


def _np_rgb_to_hsv(rgb: np.ndarray) -> np.ndarray:
    # TensorFlow's AdjustSaturation/AdjustHue kernels' float helper
    r, g, b = (rgb[..., i] for i in range(3))
    v = np.maximum(r, np.maximum(g, b))
    rng = v - np.minimum(r, np.minimum(g, b))
    with np.errstate(all="ignore"):
        s = np.where(v > 0, rng / v, np.float32(0))
        norm = np.float32(1) / (np.float32(6) * rng)
        h = np.where(r == v, norm * (g - b),
                     np.where(g == v, norm * (b - r) + np.float32(2.0 / 6.0),
                              norm * (r - g) + np.float32(4.0 / 6.0)))
    h = np.where(rng <= 0, np.float32(0), h)
    h = np.where(h < 0, h + np.float32(1), h)
    return np.stack([h, s, v], -1).astype(np.float32)


def _np_hsv_to_rgb(hsv: np.ndarray) -> np.ndarray:
    h, s, v = (hsv[..., i] for i in range(3))
    c = s * v
    m = v - c
    dh = h * np.float32(6)
    cat = np.trunc(dh).astype(np.int64)
    fm = np.mod(dh, np.float32(2))
    x = c * (np.float32(1) - np.abs(fm - np.float32(1)))
    z = np.zeros_like(c)
    table = [(c, x, z), (x, c, z), (z, c, x), (z, x, c), (x, z, c), (c, z, x)]
    rgb = [np.select([cat == k for k in range(6)], [row[i] for row in table], z)
           for i in range(3)]
    return np.stack([ch + m for ch in rgb], -1).astype(np.float32)


def _hsv_adjust(image: Any, fn: Any) -> Tensor:
    t = _t(image)
    if t._data.shape[-1:] != (3,):
        raise _value_error(f"Dimension must be 3 but is {t._data.shape[-1]}",
                           "the last axis must hold RGB")
    f = _to_float(t)
    hsv = _np_rgb_to_hsv(f._data.astype(np.float32))
    out = tft(_np_hsv_to_rgb(fn(hsv)).astype(f._data.dtype))
    return convert_image_dtype(out, _dt.as_dtype(t._data.dtype), saturate=True)


def adjust_saturation(image: Any, saturation_factor: Any, name: str | None = None) -> Tensor:
    """Scale the HSV saturation by ``saturation_factor`` (clipped to ``[0, 1]``)."""
    k = np.float32(saturation_factor._data if isinstance(saturation_factor, Tensor)
                   else saturation_factor)

    def fn(hsv: np.ndarray) -> np.ndarray:
        hsv[..., 1] = np.clip(hsv[..., 1] * k, 0, 1)
        return hsv
    return _hsv_adjust(image, fn)


def adjust_hue(image: Any, delta: Any, name: str | None = None) -> Tensor:
    """Rotate the HSV hue by ``delta`` (in turns, ``[-1, 1]``)."""
    d = np.float32(delta._data if isinstance(delta, Tensor) else delta)
    if not -1 <= d <= 1:
        raise _value_error("delta must be in the interval [-1, 1]", f"got {d}")

    def fn(hsv: np.ndarray) -> np.ndarray:
        h = np.fmod(hsv[..., 0] + d, np.float32(1))
        hsv[..., 0] = np.where(h < 0, h + np.float32(1), h)
        return hsv
    return _hsv_adjust(image, fn)


def rgb_to_grayscale(images: Any, name: str | None = None) -> Tensor:
    """``0.2989 R + 0.5870 G + 0.1140 B``, keeping a channel axis of 1."""
    t = _t(images)
    f = convert_image_dtype(t, _dt.float32)
    w = tft(np.asarray([0.2989, 0.5870, 0.1140], np.float32))
    gray = ops.expand_dims(reduce_sum(ops.multiply(f, w), axis=-1), -1)
    return convert_image_dtype(gray, _dt.as_dtype(t._data.dtype))


def grayscale_to_rgb(images: Any, name: str | None = None) -> Tensor:
    """Repeat the single channel three times."""
    t = _t(images)
    if t._data.ndim < 2 or t._data.shape[-1] != 1:
        raise _value_error("Last dimension of a grayscale image should be size 1.",
                           "the last axis must be a single gray channel")
    return ops.concatenate([t, t, t], axis=-1)


def rgb_to_hsv(images: Any, name: str | None = None) -> Tensor:
    """RGB in ``[0, 1]`` to HSV (differentiable)."""
    t = _t(images)
    r, g, b = (ops.getitem(t, (Ellipsis, i)) for i in range(3))
    v = ops.maximum(r, ops.maximum(g, b))
    rng = ops.subtract(v, ops.minimum(r, ops.minimum(g, b)))
    dt = t._data.dtype
    zero, one = tft(np.zeros((), dt)), tft(np.ones((), dt))
    pos = ops.greater(rng, zero)
    safe = ops.where(pos, rng, one)
    s = ops.where(ops.greater(v, zero), ops.divide(rng, ops.where(ops.greater(v, zero), v, one)),
                  zero)
    norm = ops.divide(one, ops.multiply(safe, tft(np.asarray(6.0, dt))))
    h = ops.where(ops.equal(r, v), ops.multiply(norm, ops.subtract(g, b)),
                  ops.where(ops.equal(g, v),
                            ops.add(ops.multiply(norm, ops.subtract(b, r)),
                                    tft(np.asarray(2.0 / 6.0, dt))),
                            ops.add(ops.multiply(norm, ops.subtract(r, g)),
                                    tft(np.asarray(4.0 / 6.0, dt)))))
    h = ops.where(pos, h, zero)
    h = ops.where(ops.less(h, zero), ops.add(h, one), h)
    return ops.stack([h, s, v], axis=-1)


def hsv_to_rgb(images: Any, name: str | None = None) -> Tensor:
    """HSV to RGB (TensorFlow's piecewise-linear formula; no gradient, as in TensorFlow)."""
    t = _t(images)
    dt = t._data.dtype
    h, s, v = (ops.getitem(t, (Ellipsis, i)) for i in range(3))

    def c(x: float) -> Tensor:
        return tft(np.asarray(x, dt))
    dh = ops.multiply(h, c(6.0))
    dr = ops.clip(ops.subtract(ops.abs(ops.subtract(dh, c(3.0))), c(1.0)), 0.0, 1.0)
    dg = ops.clip(ops.add(ops.negative(ops.abs(ops.subtract(dh, c(2.0)))), c(2.0)), 0.0, 1.0)
    db = ops.clip(ops.add(ops.negative(ops.abs(ops.subtract(dh, c(4.0)))), c(2.0)), 0.0, 1.0)
    oms = ops.subtract(c(1.0), s)
    out = [ops.multiply(ops.add(oms, ops.multiply(s, d)), v) for d in (dr, dg, db)]
    # TensorFlow registers HSVToRGB as not differentiable: no gradient flows back
    return stop_gradient(ops.stack(out, axis=-1))


def per_image_standardization(image: Any) -> Tensor:
    """``(x - mean) / max(std, 1 / sqrt(N))`` over each image's pixels and channels."""
    t = _t(image)
    _image(t, least=0) if t._data.ndim < 3 else None
    if t._data.dtype not in (np.float16, np.float32):
        t = cast(t, _dt.float32)
    n = int(np.prod(t._data.shape[-3:]))
    mean = reduce_mean(t, axis=[-1, -2, -3], keepdims=True)
    from ._ops import reduce_std

    std = reduce_std(t, axis=[-1, -2, -3], keepdims=True)
    floor = tft(np.asarray(1.0 / math.sqrt(n), t._data.dtype))
    return ops.divide(ops.subtract(t, mean), ops.maximum(std, floor))


def random_brightness(image: Any, max_delta: float, seed: Any = None) -> Tensor:
    """:func:`adjust_brightness` by a delta drawn uniformly from ``[-max_delta, max_delta)``."""
    from . import random as _random

    if max_delta < 0:
        raise _value_error("max_delta must be non-negative.", f"got {max_delta}")
    delta = _random.uniform([], -max_delta, max_delta, seed=seed)
    return adjust_brightness(image, delta)


def random_contrast(image: Any, lower: float, upper: float, seed: Any = None) -> Tensor:
    """:func:`adjust_contrast` by a factor drawn uniformly from ``[lower, upper)``."""
    from . import random as _random

    if upper <= lower:
        raise _value_error("upper must be > lower.", f"got [{lower}, {upper}]")
    if lower < 0:
        raise _value_error("lower must be non-negative.", f"got {lower}")
    factor = _random.uniform([], lower, upper, seed=seed)
    return adjust_contrast(image, factor)


def random_saturation(image: Any, lower: float, upper: float, seed: Any = None) -> Tensor:
    """:func:`adjust_saturation` by a factor drawn uniformly from ``[lower, upper)``."""
    from . import random as _random

    if upper <= lower:
        raise _value_error("upper must be > lower.", f"got [{lower}, {upper}]")
    if lower < 0:
        raise _value_error("lower must be non-negative.", f"got {lower}")
    return adjust_saturation(image, _random.uniform([], lower, upper, seed=seed))


def random_hue(image: Any, max_delta: float, seed: Any = None) -> Tensor:
    """:func:`adjust_hue` by a delta drawn uniformly from ``[-max_delta, max_delta)``."""
    from . import random as _random

    if max_delta > 0.5:
        raise _value_error("max_delta must be <= 0.5.", f"got {max_delta}")
    if max_delta < 0:
        raise _value_error("max_delta must be non-negative.", f"got {max_delta}")
    return adjust_hue(image, _random.uniform([], -max_delta, max_delta, seed=seed))


def random_crop(value: Any, size: Any, seed: Any = None, name: str | None = None) -> Tensor:
    """A ``size`` window at a random offset (TensorFlow's draw: int32 uniform modulo the
    number of offsets)."""
    from . import random as _random
    from ._ops_extra import slice_

    t = _t(value)
    sz = np.asarray(size._data if isinstance(size, Tensor) else size, np.int32).reshape(-1)
    shape = np.asarray(t._data.shape, np.int32)
    if sz.size != shape.size or np.any(shape < sz):
        from .errors import InvalidArgumentError

        raise hinted(InvalidArgumentError(None, None, with_hint(
            f"Need value.shape >= size, got {list(shape)} {list(sz)}",
            "the crop must fit inside the value")))
    limit = shape - sz + 1
    r = _random.uniform([shape.size], dtype=_dt.int32, maxval=np.iinfo(np.int32).max, seed=seed)
    offset = np.mod(r._data, limit)
    return slice_(t, offset, sz)


def crop_and_resize(image: Any, boxes: Any, box_indices: Any, crop_size: Any,
                    method: str = "bilinear", extrapolation_value: float = 0.0,
                    name: str | None = None) -> Tensor:
    """Crops of normalized ``boxes`` (``y1, x1, y2, x2``) of the batch images
    ``box_indices``, resampled to ``crop_size`` (float32; gradients to the image and, for
    bilinear, to the boxes, from TensorFlow's sampling formula)."""
    img = _t(image)
    bx = _t(boxes)
    if img._data.ndim != 4:
        raise _value_error(f"Shape must be rank 4 but is rank {img._data.ndim}",
                           "image must be (batch, height, width, channels)")
    if method not in ("bilinear", "nearest"):
        raise _value_error(f"method must be 'bilinear' or 'nearest', got {method}",
                           "use bilinear or nearest")
    f = img if img._data.dtype == _F32 else cast(img, _dt.float32)
    b = bx if bx._data.dtype == _F32 else cast(bx, _dt.float32)
    bi = np.asarray(box_indices._data if isinstance(box_indices, Tensor) else box_indices,
                    np.int64).reshape(-1)
    ch, cw = (int(v) for v in np.asarray(crop_size._data if isinstance(crop_size, Tensor)
                                         else crop_size).reshape(-1))
    _, h, w, _ = img._data.shape
    n = b._data.shape[0]

    def coords(lo: Tensor, hi: Tensor, size: int, steps: int) -> Tensor:
        if steps > 1:
            scale = ops.multiply(ops.subtract(hi, lo), np.float32((size - 1) / (steps - 1)))
            return ops.add(ops.multiply(lo, np.float32(size - 1)),
                           ops.multiply(scale, tft(np.arange(steps, dtype=np.float32))))
        mid = ops.multiply(ops.add(lo, hi), np.float32(0.5 * (size - 1)))
        return ops.broadcast_to(mid, (n, 1))

    col = [ops.getitem(b, (slice(None), slice(k, k + 1))) for k in range(4)]
    in_y = coords(col[0], col[2], h, ch)  # (n, ch)
    in_x = coords(col[1], col[3], w, cw)  # (n, cw)
    vy, vx = in_y._data, in_x._data
    valid = ((vy >= 0) & (vy <= h - 1))[:, :, None] & ((vx >= 0) & (vx <= w - 1))[:, None, :]
    bidx = bi[:, None, None]

    def bilinear(src: Tensor) -> Tensor:
        fy, fx = np.floor(vy), np.floor(vx)
        top = np.clip(fy, 0, h - 1).astype(np.int64)[:, :, None]
        bot = np.clip(np.ceil(vy), 0, h - 1).astype(np.int64)[:, :, None]
        left = np.clip(fx, 0, w - 1).astype(np.int64)[:, None, :]
        right = np.clip(np.ceil(vx), 0, w - 1).astype(np.int64)[:, None, :]
        y_l = ops.reshape(ops.subtract(in_y, tft(fy.astype(np.float32))), (n, ch, 1, 1))
        x_l = ops.reshape(ops.subtract(in_x, tft(fx.astype(np.float32))), (n, 1, cw, 1))
        tl, tr = ops.getitem(src, (bidx, top, left)), ops.getitem(src, (bidx, top, right))
        bl, br = ops.getitem(src, (bidx, bot, left)), ops.getitem(src, (bidx, bot, right))
        upper = ops.add(tl, ops.multiply(ops.subtract(tr, tl), x_l))
        lower = ops.add(bl, ops.multiply(ops.subtract(br, bl), x_l))
        return ops.add(upper, ops.multiply(ops.subtract(lower, upper), y_l))

    if method == "nearest":
        # C's roundf: halves away from zero
        ry = np.clip(np.sign(vy) * np.floor(np.abs(vy) + 0.5), 0, h - 1).astype(np.int64)
        rx = np.clip(np.sign(vx) * np.floor(np.abs(vx) + 0.5), 0, w - 1).astype(np.int64)
        out = ops.getitem(f, (bidx, ry[:, :, None], rx[:, None, :]))
        # TensorFlow's box gradient (CropAndResizeGradBoxes) is the bilinear one whatever
        # the method: add it as a term of value zero
        lin = bilinear(stop_gradient(f))
        out = ops.add(out, ops.subtract(lin, stop_gradient(lin)))
    else:
        out = bilinear(f)
    return ops.where(tft(valid[..., None]), out, tft(np.asarray(extrapolation_value, np.float32)))


def non_max_suppression(boxes: Any, scores: Any, max_output_size: Any, iou_threshold: float = 0.5,
                        score_threshold: float = float("-inf"), name: str | None = None) -> Tensor:
    """Greedy non-maximum suppression: indices (int32) of the kept boxes, best first."""
    b = np.asarray(_t(boxes)._data, np.float32)
    sc = np.asarray(_t(scores)._data, np.float32)
    k = int(max_output_size._data if isinstance(max_output_size, Tensor) else max_output_size)
    thr = np.float32(iou_threshold)
    y1, y2 = np.minimum(b[:, 0], b[:, 2]), np.maximum(b[:, 0], b[:, 2])
    x1, x2 = np.minimum(b[:, 1], b[:, 3]), np.maximum(b[:, 1], b[:, 3])
    area = (y2 - y1) * (x2 - x1)
    order = [i for i in np.argsort(-sc, kind="stable") if sc[i] > score_threshold]
    kept: list[int] = []
    for i in order:
        if len(kept) >= k:
            break
        ok = True
        for j in kept:
            ih = max(np.float32(0), min(y2[i], y2[j]) - max(y1[i], y1[j]))
            iw = max(np.float32(0), min(x2[i], x2[j]) - max(x1[i], x1[j]))
            inter = ih * iw
            union = area[i] + area[j] - inter
            iou = np.float32(0) if union <= 0 else inter / union
            if iou > thr:
                ok = False
                break
        if ok:
            kept.append(int(i))
    return tft(np.asarray(kept, np.int32))


# ============================================================================ patches, metrics
def extract_patches(images: Any, sizes: Any, strides: Any, rates: Any, padding: str,
                    name: str | None = None) -> Tensor:
    """``(N, out_h, out_w, kh * kw * C)`` patches (a gather: gradients scatter back)."""
    t = _t(images)
    if t._data.ndim != 4:
        raise _value_error(f"Shape must be rank 4 but is rank {t._data.ndim}",
                           "images must be (batch, height, width, channels)")
    kh, kw = int(sizes[1]), int(sizes[2])
    sh, sw = int(strides[1]), int(strides[2])
    rh, rw = int(rates[1]), int(rates[2])
    n, h, w, ch = t._data.shape
    eh, ew = (kh - 1) * rh + 1, (kw - 1) * rw + 1
    if str(padding).upper() == "SAME":
        oh, ow = -(-h // sh), -(-w // sw)
        ph, pw = max((oh - 1) * sh + eh - h, 0), max((ow - 1) * sw + ew - w, 0)
        t = pad(t, [[0, 0], [ph // 2, ph - ph // 2], [pw // 2, pw - pw // 2], [0, 0]])
    else:
        oh, ow = max((h - eh) // sh + 1, 0), max((w - ew) // sw + 1, 0)
    rows = (np.arange(oh) * sh)[:, None, None, None] + (np.arange(kh) * rh)[None, None, :, None]
    cols = (np.arange(ow) * sw)[None, :, None, None] + (np.arange(kw) * rw)[None, None, None, :]
    rows, cols = np.broadcast_arrays(rows, cols)
    patches = ops.getitem(t, (slice(None), rows, cols))  # (N, oh, ow, kh, kw, C)
    return ops.reshape(patches, (n, oh, ow, kh * kw * ch))


def psnr(a: Any, b: Any, max_val: Any, name: str | None = None) -> Tensor:
    """Peak signal-to-noise ratio per image, in dB."""
    ta, tb = _t(a), _t(b)
    mv = convert_image_dtype(cast(_t(max_val), _dt.as_dtype(ta._data.dtype)), _dt.float32)
    fa, fb = convert_image_dtype(ta, _dt.float32), convert_image_dtype(tb, _dt.float32)
    mse = reduce_mean(ops.square(ops.subtract(fa, fb)), axis=[-3, -2, -1])
    ln10 = tft(np.asarray(math.log(10.0), np.float32))
    first = ops.divide(ops.multiply(ops.log(mv), 20.0), ln10)
    return ops.subtract(first, ops.multiply(tft(np.float32(10 / np.log(10))), ops.log(mse)))


def _fspecial_gauss(size: int, sigma: float) -> Tensor:
    from .nn import softmax

    coords = np.arange(size, dtype=np.float32) - np.float32(size - 1) / np.float32(2.0)
    g = np.square(coords) * (np.float32(-0.5) / np.square(np.float32(sigma)))
    g = (g.reshape(1, -1) + g.reshape(-1, 1)).reshape(1, -1)
    return ops.reshape(softmax(tft(g.astype(np.float32))), (size, size, 1, 1))


def _ssim_per_channel(x: Tensor, y: Tensor, mv: Tensor, fs: int, sigma: float, k1: float,
                      k2: float, index_map: bool = False) -> tuple[Tensor, Tensor]:
    """TensorFlow's ``_ssim_per_channel``: (SSIM, contrast-structure) per channel."""
    from .nn_conv import depthwise_conv2d

    for t in (x, y):
        if t._data.ndim < 3 or t._data.shape[-3] < fs or t._data.shape[-2] < fs:
            from .errors import InvalidArgumentError

            raise hinted(InvalidArgumentError(None, None, with_hint(
                f"Condition x >= y did not hold.\nThe image is smaller than filter_size "
                f"{fs}", "use a smaller filter_size")))
    c = x._data.shape[-1]
    kernel = ops.concatenate([_fspecial_gauss(fs, sigma)] * c, axis=2)

    def reducer(v: Tensor) -> Tensor:
        shp = v._data.shape
        flat = ops.reshape(v, (-1,) + shp[-3:])
        out = depthwise_conv2d(flat, kernel, [1, 1, 1, 1], "VALID")
        return ops.reshape(out, shp[:-3] + out._data.shape[1:])

    c1 = ops.square(ops.multiply(mv, np.float32(k1)))
    c2 = ops.square(ops.multiply(mv, np.float32(k2)))
    mean0, mean1 = reducer(x), reducer(y)
    num0 = ops.multiply(ops.multiply(mean0, mean1), np.float32(2.0))
    den0 = ops.add(ops.square(mean0), ops.square(mean1))
    lum = ops.divide(ops.add(num0, c1), ops.add(den0, c1))
    num1 = ops.multiply(reducer(ops.multiply(x, y)), np.float32(2.0))
    den1 = reducer(ops.add(ops.square(x), ops.square(y)))
    cs = ops.divide(ops.add(ops.subtract(num1, num0), c2), ops.add(ops.subtract(den1, den0), c2))
    if index_map:
        return ops.multiply(lum, cs), cs
    return reduce_mean(ops.multiply(lum, cs), axis=[-3, -2]), reduce_mean(cs, axis=[-3, -2])


def _ssim_inputs(img1: Any, img2: Any, max_val: Any) -> tuple[Tensor, Tensor, Tensor]:
    a, b = _t(img1), _t(img2)
    mv = convert_image_dtype(cast(_t(max_val), _dt.as_dtype(a._data.dtype)), _dt.float32)
    return convert_image_dtype(a, _dt.float32), convert_image_dtype(b, _dt.float32), mv


def ssim(img1: Any, img2: Any, max_val: Any, filter_size: int = 11, filter_sigma: float = 1.5,
         k1: float = 0.01, k2: float = 0.03, return_index_map: bool = False) -> Tensor:
    """Structural similarity per image (TensorFlow's Gaussian-window formula, in float32)."""
    x, y, mv = _ssim_inputs(img1, img2, max_val)
    val, _ = _ssim_per_channel(x, y, mv, int(filter_size), filter_sigma, k1, k2,
                               return_index_map)
    return reduce_mean(val, axis=[-1])


_MSSSIM_WEIGHTS = (0.0448, 0.2856, 0.3001, 0.2363, 0.1333)


def ssim_multiscale(img1: Any, img2: Any, max_val: Any, power_factors: Any = _MSSSIM_WEIGHTS,
                    filter_size: int = 11, filter_sigma: float = 1.5, k1: float = 0.01,
                    k2: float = 0.03) -> Tensor:
    """Multi-scale SSIM: contrast-structure at each 2x-downsampled scale (symmetric padding
    to even sizes, 2x2 average pooling) and SSIM at the last, as a weighted geometric mean."""
    from ._ops import reduce_prod
    from .nn_conv import avg_pool

    x, y, mv = _ssim_inputs(img1, img2, max_val)
    imgs = [x, y]
    factors = [float(f) for f in np.asarray(power_factors).reshape(-1)]
    mcs: list[Tensor] = []
    val: Tensor | None = None
    for k in range(len(factors)):
        if k > 0:
            out = []
            for t in imgs:
                head, tail = t._data.shape[:-3], t._data.shape[-3:]
                flat = ops.reshape(t, (-1,) + tail)
                rem = (tail[0] % 2, tail[1] % 2)
                if any(rem):
                    flat = pad(flat, [[0, 0], [0, rem[0]], [0, rem[1]], [0, 0]], mode="SYMMETRIC")
                down = avg_pool(flat, [1, 2, 2, 1], [1, 2, 2, 1], "VALID")
                out.append(ops.reshape(down, head + down._data.shape[1:]))
            imgs = out
        val, cs = _ssim_per_channel(imgs[0], imgs[1], mv, int(filter_size), filter_sigma, k1, k2)
        mcs.append(ops.relu(cs))
    assert val is not None
    mcs.pop()
    stacked = ops.stack(mcs + [ops.relu(val)], axis=-1)
    weights = tft(np.asarray(factors, np.float32))
    ms = reduce_prod(ops.power(stacked, weights), axis=[-1])
    return reduce_mean(ms, axis=[-1])


def total_variation(images: Any, name: str | None = None) -> Tensor:
    """Sum of absolute differences of neighbouring pixels (per image for a batch)."""
    t = _t(images)
    nd = t._data.ndim
    if nd not in (3, 4):
        raise _value_error("'images' must be either 3 or 4-dimensional.",
                           f"got shape {list(t._data.shape)}")
    lead = () if nd == 3 else (slice(None),)
    d1 = ops.subtract(ops.getitem(t, lead + (slice(1, None),)), ops.getitem(t, lead + (slice(None, -1),)))
    d2 = ops.subtract(ops.getitem(t, lead + (slice(None), slice(1, None))),
                      ops.getitem(t, lead + (slice(None), slice(None, -1))))
    axis = None if nd == 3 else [1, 2, 3]
    return ops.add(reduce_sum(ops.abs(d1), axis=axis), reduce_sum(ops.abs(d2), axis=axis))


def image_gradients(image: Any) -> tuple[Tensor, Tensor]:
    """``(dy, dx)``: forward differences, zero in the last row/column."""
    t = _t(image)
    if t._data.ndim != 4:
        raise _value_error("image_gradients expects a 4D tensor [batch_size, h, w, d], not "
                           f"{t.shape}.", "pass a batch of images")
    n, h, w, d = t._data.shape
    dt = t._data.dtype
    dy = ops.subtract(ops.getitem(t, (slice(None), slice(1, None))),
                      ops.getitem(t, (slice(None), slice(None, -1))))
    dx = ops.subtract(ops.getitem(t, (slice(None), slice(None), slice(1, None))),
                      ops.getitem(t, (slice(None), slice(None), slice(None, -1))))
    dy = ops.concatenate([dy, tft(np.zeros((n, 1, w, d), dt))], axis=1)
    dx = ops.concatenate([dx, tft(np.zeros((n, h, 1, d), dt))], axis=2)
    return dy, dx


def sobel_edges(image: Any) -> Tensor:
    """``(N, H, W, C, 2)``: the vertical and horizontal Sobel responses (reflect-padded)."""
    from .nn_conv import depthwise_conv2d

    t = _t(image)
    dt = t._data.dtype
    k = np.asarray([[[-1, -2, -1], [0, 0, 0], [1, 2, 1]], [[-1, 0, 1], [-2, 0, 2], [-1, 0, 1]]],
                   dt)
    k = np.transpose(k, (1, 2, 0))[:, :, None, :]
    c = t._data.shape[-1]
    kern = tft(np.ascontiguousarray(np.tile(k, (1, 1, c, 1))))
    padded = pad(t, [[0, 0], [1, 1], [1, 1], [0, 0]], mode="REFLECT")
    out = depthwise_conv2d(padded, kern, [1, 1, 1, 1], "VALID")
    return ops.reshape(out, tuple(t._data.shape) + (2,))


__all__ = [
    "ResizeMethod", "resize", "resize_with_pad", "flip_left_right", "flip_up_down",
    "random_flip_left_right", "random_flip_up_down", "rot90", "transpose", "central_crop",
    "crop_to_bounding_box", "pad_to_bounding_box", "resize_with_crop_or_pad",
    "convert_image_dtype", "adjust_brightness", "adjust_contrast", "adjust_gamma",
    "adjust_saturation", "adjust_hue", "rgb_to_grayscale", "grayscale_to_rgb", "rgb_to_hsv",
    "hsv_to_rgb", "per_image_standardization", "random_brightness", "random_contrast",
    "extract_patches", "psnr", "ssim", "ssim_multiscale", "random_saturation", "random_hue", "random_crop",
    "non_max_suppression", "crop_and_resize", "total_variation", "image_gradients", "sobel_edges",
]
