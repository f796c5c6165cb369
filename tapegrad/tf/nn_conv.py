"""``tf.nn`` for conv nets: ``conv1d``, ``conv2d``, ``conv2d_transpose``, ``convolution``,
``depthwise_conv2d``, ``max_pool1d/2d``, ``avg_pool1d/2d``, ``batch_normalization``.

TensorFlow's layouts (``NHWC`` data, ``HWIO`` filters, ``HW(out)(in)`` for the
transposed convolution, ``HW(in)(multiplier)`` depthwise), its ``'SAME'`` rule
(output ``ceil(n / stride)``, the odd padding pixel at the end) and explicit
paddings, over the channels-first core ops of :mod:`tapegrad.ops.conv` and
:mod:`tapegrad.ops.pool`: the data and filters are transposed on the way in
and out (recorded, so gradients flow back in TensorFlow's layout).
Re-exported by ``tf.nn``.

>>> import tapegrad.tf as tf
>>> tf.nn.conv2d(tf.ones([1, 3, 3, 1]), tf.ones([2, 2, 1, 1]), strides=1, padding="VALID").shape
TensorShape([1, 2, 2, 1])
"""

from __future__ import annotations

from typing import Any

from .. import ops
from .._core.errors import hinted, with_hint
from .._core.tensor import Tensor
from ..ops import conv as C
from ..ops import pool as PL
from ._ops import _invalid
from ._tensor import convert

__all__ = ["conv1d", "conv2d", "conv3d", "convolution", "conv2d_transpose",
           "conv1d_transpose", "depthwise_conv2d", "max_pool", "max_pool1d", "max_pool2d",
           "avg_pool", "avg_pool1d", "avg_pool2d", "batch_normalization"]


def _ints(v: Any, n: int, what: str, channels_last: bool = True) -> tuple[int, ...]:
    """TensorFlow's ``strides``/``dilations``: an int, ``n`` values, or ``n + 2`` (with the
    batch and channel entries, which must be 1)."""
    if v is None:
        return (1,) * n
    if isinstance(v, int) or (hasattr(v, "__int__") and not hasattr(v, "__len__")):
        return (int(v),) * n
    t = tuple(int(i) for i in v)
    if len(t) == 1:
        return t * n
    if len(t) == n:
        return t
    if len(t) == n + 2:
        return t[1:-1] if channels_last else t[2:]
    raise hinted(ValueError(with_hint(
        f"{what} should be of length 1, {n} or {n + 2} but was {len(t)}",
        f"pass one {what[:-1]} per spatial dimension")))


def _pads(padding: Any, size: tuple[int, ...], kernel: tuple[int, ...],
          stride: tuple[int, ...], dilation: tuple[int, ...], channels_last: bool,
          op: str) -> C.Pads:
    if isinstance(padding, str):
        p = padding.upper()
        if p == "VALID":
            return ((0, 0),) * len(size)
        if p == "SAME":
            return C.same_padding(size, kernel, stride, dilation)
        raise hinted(ValueError(with_hint(
            f"Value for attr 'padding' of \"{padding}\" is not in the list of allowed values: "
            "\"SAME\", \"VALID\", \"EXPLICIT\"", "use 'SAME', 'VALID' or explicit pairs")))
    pairs = [tuple(int(a) for a in p) for p in padding]
    n = len(size)
    if len(pairs) == n + 2:
        pairs = pairs[1:-1] if channels_last else pairs[2:]
    if len(pairs) != n or any(len(p) != 2 for p in pairs):
        raise hinted(ValueError(with_hint(
            f"padding should be a list of {n + 2} pairs for {op}",
            "one [before, after] pair per dimension, batch and channels included")))
    return tuple((a, b) for a, b in pairs)


def _first(x: Tensor, nsp: int) -> Tensor:
    """``(N, *S, C)`` -> ``(N, C, *S)``."""
    return ops.transpose(x, (0, nsp + 1) + tuple(range(1, nsp + 1)))


def _last(y: Tensor, nsp: int) -> Tensor:
    """``(N, C, *S)`` -> ``(N, *S, C)``."""
    return ops.transpose(y, (0,) + tuple(range(2, nsp + 2)) + (1,))


def _layout(data_format: Any, nsp: int) -> bool:
    """Whether ``data_format`` is channels-last."""
    if data_format is None:
        return True
    f = str(data_format).upper()
    if f in ("NWC", "NHWC", "NDHWC", "CHANNELS_LAST"):
        return True
    if f in ("NCW", "NCHW", "NCDHW", "CHANNELS_FIRST"):
        return False
    raise hinted(ValueError(with_hint(f"Invalid data_format: {data_format}",
                               "use 'NHWC' (channels last) or 'NCHW'")))


def _conv(nsp: int, input: Any, filters: Any, strides: Any, padding: Any, data_format: Any,
          dilations: Any, op: str) -> Tensor:
    x, f = convert(input), convert(filters)
    last = _layout(data_format, nsp)
    if x._data.ndim != nsp + 2:
        raise hinted(ValueError(with_hint(
            f"input must be {nsp + 2}-dimensional, got shape {list(x._data.shape)} for {op}",
            f"{op} takes a batch of shape (N, *spatial, C)")))
    if f._data.ndim != nsp + 2:
        raise hinted(ValueError(with_hint(
            f"filter must be {nsp + 2}-dimensional: {list(f._data.shape)} for {op}",
            "filters are (*kernel, in_channels, out_channels)")))
    cin = x._data.shape[-1] if last else x._data.shape[1]
    fin, fout = f._data.shape[-2], f._data.shape[-1]
    if cin % fin:
        raise _invalid(f"input depth must be evenly divisible by filter depth: {cin} vs {fin}",
                       "the filter's in_channels (axis -2) must divide the input's channels",
                       op)
    groups = cin // fin
    if fout % groups:
        raise _invalid(f"output depth must be evenly divisible by number of groups: {fout} vs "
                       f"{groups}", "out_channels must be a multiple of the groups", op)
    s = _ints(strides, nsp, "strides", last)
    d = _ints(dilations, nsp, "dilations", last)
    xc = _first(x, nsp) if last else x
    size = tuple(xc._data.shape[2:])
    kernel = tuple(f._data.shape[:nsp])
    pads = _pads(padding, size, kernel, s, d, last, op)
    # (*k, in/g, out) -> (out, in/g, *k)
    w = ops.transpose(f, (nsp + 1, nsp) + tuple(range(nsp)))
    y = C.conv(xc, w, s, pads, d, groups, kernel="tf")  # TensorFlow's float32 order
    return _last(y, nsp) if last else y


def conv1d(input: Any, filters: Any, stride: Any, padding: Any, data_format: Any = "NWC",
           dilations: Any = None, name: str | None = None) -> Tensor:
    """1-d convolution: input ``(N, W, C)``, filters ``(k, in, out)``."""
    return _conv(1, input, filters, stride, padding, data_format, dilations, "Conv2D")


def conv2d(input: Any, filters: Any, strides: Any, padding: Any, data_format: Any = "NHWC",
           dilations: Any = None, name: str | None = None) -> Tensor:
    """2-d convolution: input ``(N, H, W, C)``, filters ``(kh, kw, in, out)``.

    ``padding``: ``'SAME'`` (output ``ceil(n / stride)``), ``'VALID'`` or explicit
    ``[[0, 0], [top, bottom], [left, right], [0, 0]]``.

    >>> import tapegrad.tf as tf
    >>> tf.nn.conv2d(tf.ones([1, 5, 5, 1]), tf.ones([3, 3, 1, 2]), 2, "SAME").shape
    TensorShape([1, 3, 3, 2])
    """
    return _conv(2, input, filters, strides, padding, data_format, dilations, "Conv2D")


def conv3d(input: Any, filters: Any, strides: Any, padding: Any, data_format: Any = "NDHWC",
           dilations: Any = None, name: str | None = None) -> Tensor:
    """3-d convolution: input ``(N, D, H, W, C)``, filters ``(kd, kh, kw, in, out)``."""
    return _conv(3, input, filters, strides, padding, data_format, dilations, "Conv3D")


def convolution(input: Any, filters: Any, strides: Any = None, padding: Any = "VALID",
                data_format: Any = None, dilations: Any = None,
                name: str | None = None) -> Tensor:
    """N-d convolution (the rank is the filter's)."""
    nsp = convert(filters)._data.ndim - 2
    return _conv(nsp, input, filters, strides, padding, data_format, dilations,
                 f"Conv{nsp}D" if nsp > 1 else "Conv2D")


def _conv_t(nsp: int, input: Any, filters: Any, output_shape: Any, strides: Any,
            padding: Any, data_format: Any, dilations: Any, op: str) -> Tensor:
    x, f = convert(input), convert(filters)
    last = _layout(data_format, nsp)
    shape = [int(v) for v in (output_shape.numpy() if hasattr(output_shape, "numpy")
                              else output_shape)]
    if len(shape) != nsp + 2:
        raise hinted(ValueError(with_hint(
            f"output_shape must have length {nsp + 2}, got {len(shape)}",
            "pass the full output shape, batch and channels included")))
    s = _ints(strides, nsp, "strides", last)
    d = _ints(dilations, nsp, "dilations", last)
    size = tuple(shape[1:-1] if last else shape[2:])
    cout = shape[-1] if last else shape[1]
    kernel = tuple(f._data.shape[:nsp])
    cin = x._data.shape[-1] if last else x._data.shape[1]
    if f._data.shape[-1] != cin or f._data.shape[-2] != cout:
        raise _invalid(
            f"Conv2DCustomBackpropInput: input and filter must have the same depth: {cin} vs "
            f"{f._data.shape[-1]}" if f._data.shape[-1] != cin else
            f"Conv2DCustomBackpropInput: Different number of channels for out_backprop {cout} "
            f"and filter {f._data.shape[-2]}",
            "filters are (*kernel, out_channels, in_channels)", op)
    pads = _pads(padding, size, kernel, s, d, last, op)
    xc = _first(x, nsp) if last else x
    expect = C.conv_output_size(size, kernel, s, pads, d)
    if tuple(xc._data.shape[2:]) != expect:
        raise _invalid(
            f"Conv2DCustomBackpropInput: Size of out_backprop doesn't match computed: actual = "
            f"{xc._data.shape[2]}, computed = {expect[0]} spatial_dim: 1 input: {size[0]} "
            f"filter: {kernel[0]} output: {xc._data.shape[2]} stride: {s[0]} dilation: {d[0]}",
            f"an input of spatial size {list(xc._data.shape[2:])} cannot give output "
            f"{list(size)}", op)
    # (*k, out, in) -> (in, out, *k): the core's transposed-conv layout
    w = ops.transpose(f, (nsp + 1, nsp) + tuple(range(nsp)))
    y = C._conv_t(xc, w, size=size, stride=s, padding=pads, dilation=d, groups=1)
    return _last(y, nsp) if last else y


def conv2d_transpose(input: Any, filters: Any, output_shape: Any, strides: Any,
                     padding: Any = "SAME", data_format: Any = "NHWC", dilations: Any = None,
                     name: str | None = None) -> Tensor:
    """Transposed 2-d convolution (the gradient of :func:`conv2d` with respect to its
    input): filters ``(kh, kw, out, in)``, the output's shape given.

    >>> import tapegrad.tf as tf
    >>> tf.nn.conv2d_transpose(tf.ones([1, 2, 2, 1]), tf.ones([3, 3, 1, 1]), [1, 4, 4, 1],
    ...                        2).shape
    TensorShape([1, 4, 4, 1])
    """
    return _conv_t(2, input, filters, output_shape, strides, padding, data_format, dilations,
                   "Conv2DBackpropInput")


def conv1d_transpose(input: Any, filters: Any, output_shape: Any, strides: Any,
                     padding: Any = "SAME", data_format: Any = "NWC", dilations: Any = None,
                     name: str | None = None) -> Tensor:
    """Transposed 1-d convolution: filters ``(k, out, in)``."""
    return _conv_t(1, input, filters, output_shape, strides, padding, data_format, dilations,
                   "Conv2DBackpropInput")


def depthwise_conv2d(input: Any, filter: Any, strides: Any, padding: Any,
                     data_format: Any = None, dilations: Any = None,
                     name: str | None = None) -> Tensor:
    """Depthwise 2-d convolution: filter ``(kh, kw, in, multiplier)``; output channel
    ``c * multiplier + m`` is input channel ``c`` convolved with filter ``[:, :, c, m]``.

    >>> import tapegrad.tf as tf
    >>> tf.nn.depthwise_conv2d(tf.ones([1, 3, 3, 2]), tf.ones([2, 2, 2, 3]), [1, 1, 1, 1],
    ...                        "VALID").shape
    TensorShape([1, 2, 2, 6])
    """
    x, f = convert(input), convert(filter)
    last = _layout(data_format, 2)
    cin = x._data.shape[-1] if last else x._data.shape[1]
    if f._data.ndim != 4 or f._data.shape[2] != cin:
        raise hinted(ValueError(with_hint(
            f"Dimensions must be equal, but are {cin} and "
            f"{f._data.shape[2] if f._data.ndim == 4 else '?'} for 'DepthwiseConv2dNative'",
            "the filter is (kh, kw, in_channels, channel_multiplier)")))
    s = _ints(strides, 2, "strides", last)
    d = _ints(dilations, 2, "dilations", last)
    xc = _first(x, 2) if last else x
    kh, kw, _, mult = f._data.shape
    pads = _pads(padding, tuple(xc._data.shape[2:]), (kh, kw), s, d, last,
                 "DepthwiseConv2dNative")
    # (kh, kw, in, m) -> (in * m, 1, kh, kw), groups = in
    w = ops.reshape(ops.transpose(f, (2, 3, 0, 1)), (cin * mult, 1, kh, kw))
    y = C.conv(xc, w, s, pads, d, cin)
    return _last(y, 2) if last else y


# ----------------------------------------------------------------------------- pooling
def _pool(nsp: int, input: Any, ksize: Any, strides: Any, padding: Any, data_format: Any,
          kind: str, op: str) -> Tensor:
    x = convert(input)
    last = _layout(data_format, nsp)
    if x._data.ndim != nsp + 2:
        raise hinted(ValueError(with_hint(
            f"Input tensor must be of rank {nsp + 2}, got shape {list(x._data.shape)}",
            f"{op} takes (N, *spatial, C)")))
    k = _ints(ksize, nsp, "ksize", last)
    s = _ints(strides, nsp, "strides", last)
    xc = _first(x, nsp) if last else x
    size = tuple(xc._data.shape[2:])
    one = (1,) * nsp
    pads = _pads(padding, size, k, s, one, last, op)
    out = PL.pool_output_size(size, k, s, pads, one, False)
    if any(o <= 0 for o in out):
        raise _invalid(f"Computed output size would be negative: {min(out) - 1} [input_size: "
                       f"{min(size)}, effective_filter_size: {max(k)}, stride: {min(s)}]",
                       "the window is larger than the (padded) input", op)
    if kind == "max":
        y, _ = PL.max_pool(xc, k, s, pads, one)
    else:
        # TensorFlow averages over the elements inside the input only
        y = PL.avg_pool(xc, k, s, pads, False, count_include_pad=False)
    return _last(y, nsp) if last else y


def max_pool2d(input: Any, ksize: Any, strides: Any, padding: Any, data_format: Any = "NHWC",
               name: str | None = None) -> Tensor:
    """2-d max pooling over ``(N, H, W, C)``; on ties the gradient goes to the first maximum.

    >>> import tapegrad.tf as tf
    >>> tf.nn.max_pool2d(tf.reshape(tf.range(16.0), [1, 4, 4, 1]), 2, 2, "VALID")[0, :, :, 0]
    <tf.Tensor: shape=(2, 2), dtype=float32, numpy=
    array([[ 5.,  7.],
           [13., 15.]], dtype=float32)>
    """
    return _pool(2, input, ksize, strides, padding, data_format, "max", "MaxPool")


def max_pool1d(input: Any, ksize: Any, strides: Any, padding: Any, data_format: Any = "NWC",
               name: str | None = None) -> Tensor:
    return _pool(1, input, ksize, strides, padding, data_format, "max", "MaxPool")


def avg_pool2d(input: Any, ksize: Any, strides: Any, padding: Any, data_format: Any = "NHWC",
               name: str | None = None) -> Tensor:
    """2-d average pooling; with ``'SAME'`` each window averages its elements inside the
    input only."""
    return _pool(2, input, ksize, strides, padding, data_format, "avg", "AvgPool")


def avg_pool1d(input: Any, ksize: Any, strides: Any, padding: Any, data_format: Any = "NWC",
               name: str | None = None) -> Tensor:
    return _pool(1, input, ksize, strides, padding, data_format, "avg", "AvgPool")


def max_pool(input: Any, ksize: Any, strides: Any, padding: Any, data_format: Any = None,
             name: str | None = None) -> Tensor:
    """N-d max pooling (the rank is the input's)."""
    nsp = convert(input)._data.ndim - 2
    return _pool(nsp, input, ksize, strides, padding, data_format, "max", "MaxPool")


def avg_pool(input: Any, ksize: Any, strides: Any, padding: Any, data_format: Any = None,
             name: str | None = None) -> Tensor:
    """N-d average pooling."""
    nsp = convert(input)._data.ndim - 2
    return _pool(nsp, input, ksize, strides, padding, data_format, "avg", "AvgPool")


# ----------------------------------------------------------------------------- normalization
def batch_normalization(x: Any, mean: Any, variance: Any, offset: Any, scale: Any,
                        variance_epsilon: float, name: str | None = None) -> Tensor:
    """``(x - mean) * scale / sqrt(variance + eps) + offset``, in TensorFlow's form
    (``x * inv + (offset - mean * inv)`` with ``inv = scale * rsqrt(variance + eps)``).

    >>> import tapegrad.tf as tf
    >>> tf.nn.batch_normalization(tf.constant([1.0, 3.0]), 2.0, 1.0, None, None, 0.0)
    <tf.Tensor: shape=(2,), dtype=float32, numpy=array([-1.,  1.], dtype=float32)>
    """
    t = convert(x)
    dt = t._data.dtype

    def c(v: Any) -> Any:
        return convert(v, dtype_hint=None) if isinstance(v, Tensor) else \
            convert(v, dtype=_tf_dtype(dt))
    inv = ops.divide(1.0, ops.sqrt(ops.add(c(variance), variance_epsilon)))
    if scale is not None:
        inv = ops.multiply(inv, c(scale))
    shift = ops.negative(ops.multiply(c(mean), inv))
    if offset is not None:
        shift = ops.add(c(offset), shift)
    return ops.add(ops.multiply(t, ops.cast(inv, dtype=dt)), ops.cast(shift, dtype=dt))


def _tf_dtype(npd: Any) -> Any:
    from . import dtypes as _dt

    return _dt.from_numpy(npd)
