"""``torch.nn.functional`` for convolutional nets: conv, pooling, normalization,
embedding, the dropout family, ``interpolate``, ``unfold``/``fold``.

PyTorch's names, argument orders, defaults and messages over the core ops of
:mod:`tapegrad.ops.conv`, :mod:`~tapegrad.ops.pool`, :mod:`~tapegrad.ops.norm`,
:mod:`~tapegrad.ops.embedding`, :mod:`~tapegrad.ops.resize` and
:mod:`~tapegrad.ops.dropout`.  Re-exported by ``torch.nn.functional``.

>>> import tapegrad.torch as torch
>>> import tapegrad.torch.nn.functional as F
>>> F.conv2d(torch.ones(1, 1, 3, 3), torch.ones(1, 1, 2, 2))
tensor([[[[4., 4.],
          [4., 4.]]]])
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np

from ... import ops as core
from ..._core import mode
from ..._core.errors import hinted, with_hint
from ..._core.tensor import TORCH, Tensor, make, restyle
from ...ops import conv as C
from ...ops import dropout as D
from ...ops import norm as N
from ...ops import pool as PL
from ...ops.embedding import embedding as _embedding
from ...ops.embedding import renorm_rows_
from ...ops.resize import resize
from .._random import fill_order, gen

__all__ = [
    "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d",
    "max_pool1d", "max_pool2d", "max_pool3d", "avg_pool1d", "avg_pool2d", "avg_pool3d",
    "adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_avg_pool3d",
    "adaptive_max_pool1d", "adaptive_max_pool2d", "adaptive_max_pool3d",
    "max_pool1d_with_indices", "max_pool2d_with_indices", "max_unpool1d", "max_unpool2d",
    "max_unpool3d",
    "batch_norm", "instance_norm", "group_norm", "rms_norm", "embedding",
    "dropout1d", "dropout2d", "dropout3d", "alpha_dropout", "feature_alpha_dropout",
    "interpolate", "upsample", "unfold", "fold", "pairwise_distance",
]


def _tensor(x: Any, fn: str, arg: str = "input") -> Tensor:
    if not isinstance(x, Tensor):
        raise hinted(TypeError(with_hint(f"{fn}(): argument '{arg}' (position 1) must be Tensor, not "
                                  f"{type(x).__name__}", "pass a tensor")))
    return x


def _tuple(v: Any, n: int, name: str = "") -> tuple[int, ...]:
    if isinstance(v, (int, np.integer)):
        return (int(v),) * n
    t = tuple(int(i) for i in v)
    if len(t) == 1 and n > 1:
        return t * n
    if len(t) != n:
        raise hinted(RuntimeError(with_hint(f"expected {name or 'argument'} to be a single integer "
                                     f"value or a list of {n} values to match the convolution "
                                     f"dimensions, but got {name or 'argument'}={list(t)}",
                                     f"pass {n} values")))
    return t


def _batched(x: Tensor, nsp: int, fn: str) -> tuple[Tensor, bool]:
    """PyTorch's unbatched inputs: ``(C, *S)`` gets a batch axis (removed afterwards)."""
    nd = x._data.ndim
    if nd == nsp + 1:
        return core.reshape(x, (1,) + x._data.shape), True
    if nd != nsp + 2:
        raise hinted(RuntimeError(with_hint(
            f"Expected {nsp + 1}D (unbatched) or {nsp + 2}D (batched) input to {fn}, but got "
            f"input of size: {list(x._data.shape)}", f"{fn} takes (N, C, *spatial)")))
    return x, False


def _no_values(t: Any) -> bool:
    """Whether ``t`` is a tracer whose values cannot be read now (``vmap``)."""
    from .._ops import _vmapped

    return _vmapped(t)


def _unbatch(y: Tensor, squeeze: bool) -> Tensor:
    return core.reshape(y, y._data.shape[1:]) if squeeze else y


def _check_dtypes(x: Tensor, w: Tensor) -> None:
    if x._data.dtype != w._data.dtype:
        names = {"float32": "Float", "float64": "Double", "float16": "Half"}
        raise hinted(RuntimeError(with_hint(
            f"expected scalar type {names.get(x._data.dtype.name, x._data.dtype.name)} but "
            f"found {names.get(w._data.dtype.name, w._data.dtype.name)}",
            "convert the input (x.float()) or the module (model.double())")))


# ----------------------------------------------------------------------------- convolution
def _convnd(nsp: int, input: Tensor, weight: Tensor, bias: Tensor | None, stride: Any,
            padding: Any, dilation: Any, groups: int) -> Tensor:
    fn = f"conv{nsp}d"
    x, squeeze = _batched(_tensor(input, fn), nsp, fn)
    _check_dtypes(x, weight)
    ws = weight._data.shape
    if weight._data.ndim != nsp + 2:
        raise hinted(RuntimeError(with_hint(
            "weight should have at least three dimensions" if weight._data.ndim < 3 else
            f"Expected {nsp + 2}-dimensional weight for {nsp + 2}-dimensional input "
            f"{list(x._data.shape)}, but got {weight._data.ndim}-dimensional weight of size "
            f"{list(ws)} instead", f"{fn} weights are (out, in // groups, *kernel)")))
    k = tuple(ws[2:])
    s = _tuple(stride, nsp, "stride")
    d = _tuple(dilation, nsp, "dilation")
    if isinstance(padding, str):
        if padding == "valid":
            pads: C.Pads = ((0, 0),) * nsp
        elif padding == "same":
            if any(v != 1 for v in s):
                raise hinted(RuntimeError(with_hint("padding='same' is not supported for strided "
                                             "convolutions", "use stride=1 or explicit padding")))
            if any(kk % 2 == 0 and dd % 2 == 1 for kk, dd in zip(k, d)):
                warnings.warn("Using padding='same' with even kernel lengths and odd dilation "
                              "may require a zero-padded copy of the input be created",
                              UserWarning, stacklevel=3)
            # PyTorch's 'same': total d (k - 1), the odd pixel on the high side
            pads = tuple(((dd * (kk - 1)) // 2, dd * (kk - 1) - (dd * (kk - 1)) // 2)
                         for kk, dd in zip(k, d))
        else:
            raise hinted(ValueError(with_hint(f"Invalid padding string '{padding}'",
                                       "use 'same', 'valid' or integers")))
    else:
        pads = tuple((p, p) for p in _tuple(padding, nsp, "padding"))
    if x._data.shape[1] != ws[1] * groups or ws[0] % groups:
        raise hinted(RuntimeError(with_hint(
            f"Given groups={groups}, weight of size {list(ws)}, expected input"
            f"{list(x._data.shape)} to have {ws[1] * groups} channels, but got "
            f"{x._data.shape[1]} channels instead", f"the weight has {ws[1]} input channels "
            f"per group")))
    padded = tuple(n + lo + hi for n, (lo, hi) in zip(x._data.shape[2:], pads))
    ext = tuple(dd * (kk - 1) + 1 for kk, dd in zip(k, d))
    if any(e > n for e, n in zip(ext, padded)):
        raise hinted(RuntimeError(with_hint(
            f"Calculated padded input size per channel: ({' x '.join(map(str, padded))}). "
            f"Kernel size: ({' x '.join(map(str, ext))}). Kernel size can't be greater than "
            "actual input size", "pad the input or use a smaller kernel")))
    y = C.conv(x, weight, s, pads, d, groups, bias)
    return _unbatch(y, squeeze)


def conv1d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: Any = 1,
           padding: Any = 0, dilation: Any = 1, groups: int = 1) -> Tensor:
    """1-d convolution over ``(N, C, L)`` (see :func:`conv2d`)."""
    return _convnd(1, input, weight, bias, stride, padding, dilation, groups)


def conv2d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: Any = 1,
           padding: Any = 0, dilation: Any = 1, groups: int = 1) -> Tensor:
    """2-d convolution (cross-correlation) over ``(N, C, H, W)``.

    ``padding`` is an int, a pair, ``'valid'`` or ``'same'`` (stride 1; the odd
    pixel on the bottom/right, as PyTorch pads).  One ``ConvolutionBackward0`` node.

    >>> import tapegrad.torch as torch
    >>> torch.nn.functional.conv2d(torch.ones(1, 1, 3, 3), torch.ones(2, 1, 3, 3),
    ...                            padding="same").shape
    torch.Size([1, 2, 3, 3])
    """
    return _convnd(2, input, weight, bias, stride, padding, dilation, groups)


def conv3d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: Any = 1,
           padding: Any = 0, dilation: Any = 1, groups: int = 1) -> Tensor:
    """3-d convolution over ``(N, C, D, H, W)`` (see :func:`conv2d`)."""
    return _convnd(3, input, weight, bias, stride, padding, dilation, groups)


def _conv_tnd(nsp: int, input: Tensor, weight: Tensor, bias: Tensor | None, stride: Any,
              padding: Any, output_padding: Any, groups: int, dilation: Any) -> Tensor:
    fn = f"conv_transpose{nsp}d"
    x, squeeze = _batched(_tensor(input, fn), nsp, fn)
    _check_dtypes(x, weight)
    s = _tuple(stride, nsp, "stride")
    d = _tuple(dilation, nsp, "dilation")
    op = _tuple(output_padding, nsp, "output_padding")
    if any(o >= ss and o >= dd for o, ss, dd in zip(op, s, d)):
        # PyTorch runs 1-d as 2-d (height 1) and names every axis
        names = ["depth", "height", "width"][-max(nsp, 2):]
        lead = (0,) if nsp == 1 else ()
        one = (1,) if nsp == 1 else ()
        parts = [f"output_padding_{n}: {v}" for n, v in zip(names, lead + op)]
        parts += [f"stride_{n}: {v}" for n, v in zip(names, one + s)]
        parts += [f"dilation_{n}: {v}" for n, v in zip(names, one + d)]
        raise hinted(RuntimeError(with_hint(
            "output padding must be smaller than either stride or dilation, but got "
            + " ".join(parts), "output_padding picks among the sizes one stride can give")))
    pads = tuple((p, p) for p in _tuple(padding, nsp, "padding"))
    ws = weight._data.shape
    if x._data.shape[1] != ws[0]:
        raise hinted(RuntimeError(with_hint(
            f"Given transposed=1, weight of size {list(ws)}, expected input"
            f"{list(x._data.shape)} to have {ws[0]} channels, but got {x._data.shape[1]} "
            "channels instead", "transposed-conv weights are (in, out // groups, *kernel)")))
    y = C.conv_transpose(x, weight, s, pads, d, op, groups, bias)
    return _unbatch(y, squeeze)


def conv_transpose1d(input: Tensor, weight: Tensor, bias: Tensor | None = None,
                     stride: Any = 1, padding: Any = 0, output_padding: Any = 0,
                     groups: int = 1, dilation: Any = 1) -> Tensor:
    """1-d transposed convolution (``weight``: ``(in, out // groups, k)``)."""
    return _conv_tnd(1, input, weight, bias, stride, padding, output_padding, groups, dilation)


def conv_transpose2d(input: Tensor, weight: Tensor, bias: Tensor | None = None,
                     stride: Any = 1, padding: Any = 0, output_padding: Any = 0,
                     groups: int = 1, dilation: Any = 1) -> Tensor:
    """2-d transposed convolution, the input gradient of :func:`conv2d`.

    >>> import tapegrad.torch as torch
    >>> torch.nn.functional.conv_transpose2d(torch.ones(1, 1, 2, 2), torch.ones(1, 1, 2, 2),
    ...                                      stride=2).shape
    torch.Size([1, 1, 4, 4])
    """
    return _conv_tnd(2, input, weight, bias, stride, padding, output_padding, groups, dilation)


def conv_transpose3d(input: Tensor, weight: Tensor, bias: Tensor | None = None,
                     stride: Any = 1, padding: Any = 0, output_padding: Any = 0,
                     groups: int = 1, dilation: Any = 1) -> Tensor:
    """3-d transposed convolution."""
    return _conv_tnd(3, input, weight, bias, stride, padding, output_padding, groups, dilation)


# ----------------------------------------------------------------------------- pooling
def _pool_args(nsp: int, kernel_size: Any, stride: Any, padding: Any, dilation: Any
               ) -> tuple[tuple[int, ...], tuple[int, ...], C.Pads, tuple[int, ...]]:
    k = _tuple(kernel_size, nsp, "kernel_size")
    s = k if stride is None or (not isinstance(stride, int) and len(stride) == 0) \
        else _tuple(stride, nsp, "stride")
    p = _tuple(padding, nsp, "padding")
    d = _tuple(dilation, nsp, "dilation")
    for pp, kk, dd in zip(p, k, d):
        if pp > (dd * (kk - 1) + 1) // 2:
            raise hinted(RuntimeError(with_hint(
                f"pad should be at most half of effective kernel size, but got pad={pp}, "
                f"kernel_size={kk} and dilation={dd}", "use a smaller padding")))
    return k, s, tuple((pp, pp) for pp in p), d


def _max_poolnd(nsp: int, input: Tensor, kernel_size: Any, stride: Any, padding: Any,
                dilation: Any, ceil_mode: bool, return_indices: bool) -> Any:
    fn = f"max_pool{nsp}d"
    x, squeeze = _batched(_tensor(input, fn), nsp, fn)
    k, s, p, d = _pool_args(nsp, kernel_size, stride, padding, dilation)
    y, idx = PL.max_pool(x, k, s, p, d, ceil_mode)
    y = _unbatch(y, squeeze)
    if return_indices:
        if isinstance(idx, Tensor):  # a tracer (vmap): the indices are per example
            return y, restyle(_unbatch(idx, squeeze), TORCH)
        it = make(idx[0] if squeeze else idx, None, False, TORCH)
        return y, it
    return y


def max_pool1d(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,
               dilation: Any = 1, ceil_mode: bool = False, return_indices: bool = False) -> Any:
    """1-d max pooling (see :func:`max_pool2d`)."""
    return _max_poolnd(1, input, kernel_size, stride, padding, dilation, ceil_mode,
                       return_indices)


def max_pool2d(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,
               dilation: Any = 1, ceil_mode: bool = False, return_indices: bool = False) -> Any:
    """2-d max pooling; ``stride`` defaults to ``kernel_size``.  On ties the gradient goes
    to the first maximum of the window; ``return_indices`` gives flat indices into each
    input plane.

    >>> import tapegrad.torch as torch
    >>> torch.nn.functional.max_pool2d(torch.arange(16.0).reshape(1, 1, 4, 4), 2)
    tensor([[[[ 5.,  7.],
              [13., 15.]]]])
    """
    return _max_poolnd(2, input, kernel_size, stride, padding, dilation, ceil_mode,
                       return_indices)


def max_pool3d(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,
               dilation: Any = 1, ceil_mode: bool = False, return_indices: bool = False) -> Any:
    """3-d max pooling."""
    return _max_poolnd(3, input, kernel_size, stride, padding, dilation, ceil_mode,
                       return_indices)


def max_pool1d_with_indices(input: Tensor, kernel_size: Any, stride: Any = None,
                            padding: Any = 0, dilation: Any = 1, ceil_mode: bool = False,
                            return_indices: bool = True) -> Any:
    return _max_poolnd(1, input, kernel_size, stride, padding, dilation, ceil_mode, True)


def max_pool2d_with_indices(input: Tensor, kernel_size: Any, stride: Any = None,
                            padding: Any = 0, dilation: Any = 1, ceil_mode: bool = False,
                            return_indices: bool = True) -> Any:
    return _max_poolnd(2, input, kernel_size, stride, padding, dilation, ceil_mode, True)


def _max_unpoolnd(nsp: int, input: Tensor, indices: Tensor, kernel_size: Any, stride: Any,
                  padding: Any, output_size: Any) -> Tensor:
    fn = f"max_unpool{nsp}d"
    x = _tensor(input, fn)
    k = _tuple(kernel_size, nsp, "kernel_size")
    s = k if stride is None else _tuple(stride, nsp, "stride")
    p = _tuple(padding, nsp, "padding")
    insz = x._data.shape[x._data.ndim - nsp:]
    if output_size is None:
        size = tuple((n - 1) * ss - 2 * pp + kk for n, ss, pp, kk in zip(insz, s, p, k))
    else:
        size = tuple(int(v) for v in list(output_size)[-nsp:])
    idx = indices._data
    if idx.shape != x._data.shape:
        raise hinted(RuntimeError(with_hint(
            f"Expected shape of indices to be same as that of the input tensor "
            f"({list(x._data.shape)}) but got indices tensor with shape: {list(idx.shape)}",
            "pass the indices max_pool returned")))
    bad = (idx < 0) | (idx >= math.prod(size))
    if bad.any():  # PyTorch names the first one it meets
        raise hinted(RuntimeError(with_hint(
            f"Found an invalid max index: {int(idx.reshape(-1)[np.argmax(bad.reshape(-1))])} "
            f"(output volumes are of size {'x'.join(map(str, size))})",
            "the indices must come from the matching pooling")))
    # PyTorch writes each value at its index (a repeated index keeps one copy, not a sum)
    return PL.pool_put(x, idx, size, unique=True)


def max_unpool1d(input: Tensor, indices: Tensor, kernel_size: Any, stride: Any = None,
                 padding: Any = 0, output_size: Any = None) -> Tensor:
    return _max_unpoolnd(1, input, indices, kernel_size, stride, padding, output_size)


def max_unpool2d(input: Tensor, indices: Tensor, kernel_size: Any, stride: Any = None,
                 padding: Any = 0, output_size: Any = None) -> Tensor:
    """The partial inverse of :func:`max_pool2d`: each value written back at its index,
    zeros elsewhere (the adjoint of the pooling's gather)."""
    return _max_unpoolnd(2, input, indices, kernel_size, stride, padding, output_size)


def max_unpool3d(input: Tensor, indices: Tensor, kernel_size: Any, stride: Any = None,
                 padding: Any = 0, output_size: Any = None) -> Tensor:
    return _max_unpoolnd(3, input, indices, kernel_size, stride, padding, output_size)


def _avg_poolnd(nsp: int, input: Tensor, kernel_size: Any, stride: Any, padding: Any,
                ceil_mode: bool, count_include_pad: bool, divisor_override: Any) -> Tensor:
    fn = f"avg_pool{nsp}d"
    x, squeeze = _batched(_tensor(input, fn), nsp, fn)
    k, s, p, _ = _pool_args(nsp, kernel_size, stride, padding, 1)
    if divisor_override is not None and int(divisor_override) == 0:
        raise hinted(RuntimeError(with_hint("divisor must be not zero", "pass divisor_override > 0")))
    y = PL.avg_pool(x, k, s, p, ceil_mode, count_include_pad, divisor_override)
    return _unbatch(y, squeeze)


def avg_pool1d(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,
               ceil_mode: bool = False, count_include_pad: bool = True) -> Tensor:
    """1-d average pooling."""
    return _avg_poolnd(1, input, kernel_size, stride, padding, ceil_mode, count_include_pad,
                       None)


def avg_pool2d(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,
               ceil_mode: bool = False, count_include_pad: bool = True,
               divisor_override: int | None = None) -> Tensor:
    """2-d average pooling (padding counted when ``count_include_pad``).

    >>> import tapegrad.torch as torch
    >>> torch.nn.functional.avg_pool2d(torch.arange(4.0).reshape(1, 1, 2, 2), 2)
    tensor([[[[1.5000]]]])
    """
    return _avg_poolnd(2, input, kernel_size, stride, padding, ceil_mode, count_include_pad,
                       divisor_override)


def avg_pool3d(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,
               ceil_mode: bool = False, count_include_pad: bool = True,
               divisor_override: int | None = None) -> Tensor:
    """3-d average pooling."""
    return _avg_poolnd(3, input, kernel_size, stride, padding, ceil_mode, count_include_pad,
                       divisor_override)


def _out_size(x: Tensor, nsp: int, output_size: Any) -> tuple[int, ...]:
    sizes = [output_size] * nsp if isinstance(output_size, int) or output_size is None \
        else list(output_size)
    if len(sizes) == 1 and nsp > 1:
        sizes = sizes * nsp
    insz = x._data.shape[x._data.ndim - nsp:]
    return tuple(int(n if o is None else o) for o, n in zip(sizes, insz))


def _check_adaptive(x: Tensor, nsp: int, fn: str) -> None:
    nd = x._data.ndim
    if nd not in (nsp + 1, nsp + 2) or any(s == 0 for s in x._data.shape[1:]):
        raise hinted(RuntimeError(with_hint(
            f"{fn}(): Expected {nsp + 1}D or {nsp + 2}D tensor, but got "
            f"{list(x._data.shape)}", f"{fn} takes (N, C, *spatial) or (C, *spatial)")))


def adaptive_avg_pool1d(input: Tensor, output_size: Any) -> Tensor:
    x = _tensor(input, "adaptive_avg_pool1d")
    _check_adaptive(x, 1, "adaptive_avg_pool1d")
    return PL.adaptive_avg_pool(x, _out_size(x, 1, output_size))


def adaptive_avg_pool2d(input: Tensor, output_size: Any) -> Tensor:
    """Average over PyTorch's adaptive windows ``[floor(i n / o), ceil((i + 1) n / o))``.

    >>> import tapegrad.torch as torch
    >>> torch.nn.functional.adaptive_avg_pool2d(torch.ones(1, 2, 5, 5), 1).shape
    torch.Size([1, 2, 1, 1])
    """
    x = _tensor(input, "adaptive_avg_pool2d")
    _check_adaptive(x, 2, "adaptive_avg_pool2d")
    return PL.adaptive_avg_pool(x, _out_size(x, 2, output_size))


def adaptive_avg_pool3d(input: Tensor, output_size: Any) -> Tensor:
    x = _tensor(input, "adaptive_avg_pool3d")
    _check_adaptive(x, 3, "adaptive_avg_pool3d")
    return PL.adaptive_avg_pool(x, _out_size(x, 3, output_size))


def _adaptive_max(nsp: int, input: Tensor, output_size: Any, return_indices: bool) -> Any:
    fn = f"adaptive_max_pool{nsp}d"
    x = _tensor(input, fn)
    _check_adaptive(x, nsp, fn)
    y, idx = PL.adaptive_max_pool(x, _out_size(x, nsp, output_size))
    if return_indices and isinstance(idx, Tensor):  # a tracer (vmap)
        return y, restyle(idx, TORCH)
    return (y, make(idx, None, False, TORCH)) if return_indices else y


def adaptive_max_pool1d(input: Tensor, output_size: Any, return_indices: bool = False) -> Any:
    return _adaptive_max(1, input, output_size, return_indices)


def adaptive_max_pool2d(input: Tensor, output_size: Any, return_indices: bool = False) -> Any:
    """Max over PyTorch's adaptive windows (first maximum on ties)."""
    return _adaptive_max(2, input, output_size, return_indices)


def adaptive_max_pool3d(input: Tensor, output_size: Any, return_indices: bool = False) -> Any:
    return _adaptive_max(3, input, output_size, return_indices)


# ----------------------------------------------------------------------------- normalization
def _update(buf: Tensor | None, value: Tensor, momentum: float, unbiased_n: int = 0) -> None:
    if buf is None:
        return
    v = value._data
    if unbiased_n > 1:
        v = v * (unbiased_n / (unbiased_n - 1))
    N.update_running(buf._data, v, momentum, on_new=True)
    buf._vc[0] += 1


def batch_norm(input: Tensor, running_mean: Tensor | None, running_var: Tensor | None,
               weight: Tensor | None = None, bias: Tensor | None = None,
               training: bool = False, momentum: float = 0.1, eps: float = 1e-5) -> Tensor:
    """Batch normalisation over ``(N, C, *)``: batch statistics when ``training`` (running
    statistics updated in place: ``(1 - momentum) * running + momentum * batch``, the
    batch variance unbiased), else the running statistics.

    >>> import tapegrad.torch as torch
    >>> rm, rv = torch.zeros(1), torch.ones(1)
    >>> torch.nn.functional.batch_norm(torch.tensor([[1.0], [3.0]]), rm, rv, training=True)
    tensor([[-1.0000],
            [ 1.0000]])
    >>> rm, rv
    (tensor([0.2000]), tensor([1.1000]))
    """
    x = _tensor(input, "batch_norm")
    if training and _no_values(x) and any(
            r is not None and not _no_values(r) for r in (running_mean, running_var)):
        raise hinted(RuntimeError(with_hint(
            "Batch norm got a batched tensor as input while the running_mean or running_var, "
            "which will be updated in place, were not batched.\nIf you are using a module and "
            "do not need eval mode, please set `track_running_stats` to be False.If you are "
            "using a prebuilt module and do not need eval mode, please see the functorch "
            "website for resources on how to patch your module to work with vmap",
            "torch.func.replace_all_batch_norm_modules_(model), or model.eval()")))
    if not training and (running_mean is None or running_var is None):
        raise hinted(RuntimeError(with_hint(
            "running_mean and running_var must be defined in evaluation mode",
            "pass the running statistics, or training=True")))
    c = x._data.shape[1] if x._data.ndim > 1 else 0
    for name, t in (("running_mean", running_mean), ("running_var", running_var),
                    ("weight", weight), ("bias", bias)):
        if t is not None and t._data.size != c:
            raise hinted(RuntimeError(with_hint(
                f"running_mean should contain {c} elements not {t._data.size}"
                if name == "running_mean" else
                f"{name} should contain {c} elements not {t._data.size}",
                f"the input has {c} channels")))
    if training and x._data.size // max(c, 1) <= 1:
        raise hinted(ValueError(with_hint(
            "Expected more than 1 value per channel when training, got input size "
            f"torch.Size({list(x._data.shape)})", "use a batch of more than one sample")))
    y, m, v = N.batch_norm(x, weight, bias, running_mean, running_var, training=training,
                           eps=eps, axis=1)
    if training and m is not None and v is not None:
        n = x._data.size // max(c, 1)
        from ...autodiff import tracing

        if tracing.current() is not None:
            # inside torch.compile: the statistics of this call's input, at every replay
            red = tuple(i for i in range(x._data.ndim) if i != 1)
            bufs = [b for b in (running_mean, running_var) if b is not None]

            def update(xa: Any) -> None:
                xa = np.asarray(xa)
                _update(running_mean, make(xa.mean(axis=red)), momentum)
                _update(running_var, make(xa.var(axis=red)), momentum, unbiased_n=n)

            tracing.effect(update, (x,), "update running stats", writes=bufs)
        else:
            _update(running_mean, m, momentum)
            _update(running_var, v, momentum, unbiased_n=n)
    return y


def instance_norm(input: Tensor, running_mean: Tensor | None = None,
                  running_var: Tensor | None = None, weight: Tensor | None = None,
                  bias: Tensor | None = None, use_input_stats: bool = True,
                  momentum: float = 0.1, eps: float = 1e-5) -> Tensor:
    """Instance norm: each sample's channel over its spatial positions."""
    x = _tensor(input, "instance_norm")
    if not use_input_stats:
        if running_mean is None or running_var is None:
            raise hinted(RuntimeError(with_hint("Expected running_mean and running_var to be defined "
                                         "when use_input_stats is false",
                                         "pass the running statistics")))
        y, _, _ = N.batch_norm(x, weight, bias, running_mean, running_var, training=False,
                               eps=eps, axis=1)
        return y
    y = N.instance_norm(x, weight, bias, eps, axis=1)
    if running_mean is not None or running_var is not None:
        red = tuple(range(2, x._data.ndim))
        xa = x._data
        n = int(np.prod(xa.shape[2:]))
        bm = make(xa.mean(axis=red).mean(axis=0))
        bv = make(xa.var(axis=red).mean(axis=0))
        _update(running_mean, bm, momentum)
        _update(running_var, bv, momentum, unbiased_n=n)
    return y


def group_norm(input: Tensor, num_groups: int, weight: Tensor | None = None,
               bias: Tensor | None = None, eps: float = 1e-5) -> Tensor:
    """Group norm over ``(N, C, *)``: ``C`` split in ``num_groups``."""
    x = _tensor(input, "group_norm")
    if x._data.ndim < 2:
        raise hinted(RuntimeError(with_hint(
            f"Expected at least 2 dimensions for input tensor but received {x._data.ndim}",
            "group_norm takes (N, C, *)")))
    if x._data.shape[1] % num_groups:
        raise hinted(RuntimeError(with_hint(
            f"Expected number of channels in input to be divisible by num_groups, but got "
            f"input of shape {list(x._data.shape)} and num_groups={num_groups}",
            f"{x._data.shape[1]} channels cannot be split in {num_groups} groups")))
    return N.group_norm(x, num_groups, weight, bias, eps, axis=1)


def rms_norm(input: Tensor, normalized_shape: Any, weight: Tensor | None = None,
             eps: float | None = None) -> Tensor:
    """``x / sqrt(mean(x^2) + eps) * weight`` over the trailing ``normalized_shape``
    (``eps`` defaults to the dtype's machine epsilon)."""
    x = _tensor(input, "rms_norm")
    shape = (normalized_shape,) if isinstance(normalized_shape, int) else \
        tuple(normalized_shape)
    nd = x._data.ndim
    if tuple(x._data.shape[nd - len(shape):]) != shape:
        raise hinted(RuntimeError(with_hint(
            f"Given normalized_shape={list(shape)}, expected input with shape [*, "
            f"{', '.join(map(str, shape))}], but got input of size{list(x._data.shape)}",
            "normalized_shape must match the input's trailing dims")))
    e = float(np.finfo(x._data.dtype).eps) if eps is None else float(eps)
    return N.rms_norm(x, tuple(range(nd - len(shape), nd)), weight, e)


# ----------------------------------------------------------------------------- embedding
def embedding(input: Tensor, weight: Tensor, padding_idx: int | None = None,
              max_norm: float | None = None, norm_type: float = 2.0,
              scale_grad_by_freq: bool = False, sparse: bool = False) -> Tensor:
    """Rows of ``weight`` at integer ``input`` (``EmbeddingBackward0``).

    ``padding_idx``'s row gets no gradient; with ``max_norm`` the rows looked up
    are renormalised in place first, as PyTorch does.

    >>> import tapegrad.torch as torch
    >>> torch.nn.functional.embedding(torch.tensor([1]), torch.eye(2))
    tensor([[0., 1.]])
    """
    it = _tensor(input, "embedding", "indices")
    idx = it._data
    if idx.dtype.kind not in "iu":
        names = {"float32": "Float", "float64": "Double", "bool": "Bool"}
        raise hinted(RuntimeError(with_hint(
            "Expected tensor for argument #1 'indices' to have one of the following scalar "
            f"types: Long, Int; but got torch.{names.get(idx.dtype.name, idx.dtype.name)}Tensor"
            " instead (while checking arguments for embedding)", "indices must be integers")))
    rows = weight._data.shape[0]
    if idx.size and (idx.min() < 0 or idx.max() >= rows):
        raise hinted(IndexError(with_hint("index out of range in self",
                                   f"indices must be in [0, {rows - 1}]")))
    if padding_idx is not None:
        if not -rows <= padding_idx < rows:
            raise hinted(AssertionError(with_hint("Padding_idx must be within num_embeddings",
                                           f"0 <= padding_idx < {rows}")))
        padding_idx = padding_idx % rows
    if max_norm is not None:
        with mode.no_grad():
            renorm_rows_(weight._data, idx, float(max_norm), float(norm_type))
            weight._vc[0] += 1
    if _no_values(it):  # a vmap tracer: the indices are an input of the op
        return _embedding(weight, it, padding_idx)
    return _embedding(weight, idx, padding_idx)


# ----------------------------------------------------------------------------- dropout
def _check_p(p: float) -> None:
    if p < 0.0 or p > 1.0:
        raise hinted(ValueError(with_hint(f"dropout probability has to be between 0 and 1, but got {p}",
                                   "pass 0 <= p <= 1")))


_INT_NAMES = {"int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char",
              "uint8": "Byte", "bool": "Bool"}


def dropout_impl(x: Tensor, p: float, training: bool, inplace: bool = False,
                 feature: bool = False, alpha: bool = False) -> Tensor:
    """ATen's ``_dropout_impl``: ``noise = bernoulli_(1 - p)`` on the input's shape (or
    ``(N, C, 1, ...)`` for feature dropout) drawn as PyTorch's CPU kernel draws it,
    ``noise / (1 - p)`` (alpha dropout: its affine map), then ``input * noise``."""
    _check_p(p)
    arr = x._data
    if p == 0 or not training or arr.size == 0:
        return x
    if p == 1:
        zero = np.zeros((), dtype=arr.dtype)
        return x.mul_(zero) if inplace else core.multiply(x, zero)  # type: ignore[attr-defined]
    if feature:
        if arr.ndim < 2:
            raise hinted(RuntimeError(with_hint(
                "Feature dropout requires at least 2 dimensions in the input",
                f"the input has shape {list(arr.shape)}: one mask value per (sample, channel)")))
        shape = arr.shape[:2] + (1,) * (arr.ndim - 2)
    else:
        shape = arr.shape
    if arr.dtype.kind not in "fc":
        raise hinted(RuntimeError(with_hint(
            "result type Float can't be cast to the desired output type "
            f"{_INT_NAMES.get(arr.dtype.name, arr.dtype.name)}", "dropout a float tensor")))
    from .._tensor import _different_draws, _wrap

    g = gen(None)  # PyTorch's error under vmap(randomness="error")
    lv = _different_draws()
    if lv is not None:  # vmap(randomness="different"): one mask over the whole batch
        keep = g.bernoulli((lv.size,) + tuple(shape), 1.0 - p)
        if alpha:
            mul, off = D.alpha_dropout_factors(keep, p, arr.dtype)
            y = core.add(core.multiply(x, lv.make(_wrap(mul))), lv.make(_wrap(off)))
        else:
            y = core.multiply(x, lv.make(_wrap(D.dropout_noise(keep, p, arr.dtype))))
        return x.copy_(y) if inplace else y  # type: ignore[attr-defined]
    # the noise is empty_like(input) (it keeps a dense layout, so PyTorch's serial kernel
    # draws in memory order) or, for feature dropout, a new contiguous tensor
    keep = g.bernoulli(shape, 1.0 - p, None if feature else fill_order(arr, True))
    if alpha:
        y = D.alpha_dropout_masked(x, keep, p, arr.dtype)
        return x.copy_(y) if inplace else y  # type: ignore[attr-defined]
    noise = D.dropout_noise(keep, p, arr.dtype)
    return x.mul_(noise) if inplace else core.multiply(x, noise)  # type: ignore[attr-defined]


def _feature_dropout(input: Tensor, p: float, training: bool, inplace: bool, nsp: int,
                     fn: str) -> Tensor:
    _check_p(p)
    x = _tensor(input, fn)
    nd = x._data.ndim
    if nsp == 1:
        if nd not in (2, 3):
            raise hinted(RuntimeError(with_hint(
                f"dropout1d: Expected 2D or 3D input, but received a {nd}D input. Note that "
                "dropout1d exists to provide channel-wise dropout on inputs with 1 spatial "
                "dimension, a channel dimension, and an optional batch dimension (i.e. 2D or "
                "3D inputs).", "one mask value per (sample, channel)")))
    elif nd not in (nsp + 1, nsp + 2):
        warnings.warn(
            f"{fn}: Received a {nd}-D input to {fn}, which is deprecated and will result in "
            "an error in a future release. To retain the behavior and silence this warning, "
            f"please use dropout instead. Note that {fn} exists to provide channel-wise "
            f"dropout on inputs with {nsp} spatial dimensions, a channel dimension, and an "
            f"optional batch dimension (i.e. {nsp + 1}D or {nsp + 2}D inputs).", stacklevel=3)
    if nsp == 2:
        # PyTorch keeps its historical rule: a 3-D input is (N, C, L), not unbatched
        if nd == 3:
            warnings.warn(
                "dropout2d: Received a 3D input to dropout2d and assuming that channel-wise "
                "1D dropout behavior is desired - input is interpreted as shape (N, C, L), "
                "where C is the channel dim. This behavior will change in a future release to "
                "interpret the input as one without a batch dimension, i.e. shape (C, H, W). "
                "To maintain the 1D channel-wise dropout behavior, please switch to using "
                "dropout1d instead.", stacklevel=3)
        return dropout_impl(x, p, training, inplace, feature=True)
    if nd == nsp + 2:
        return dropout_impl(x, p, training, inplace, feature=True)
    # unbatched: PyTorch unsqueezes a batch dimension of one, drops it again after
    xe = core.expand_dims(x, 0)
    y = dropout_impl(xe, p, training, False, feature=True)
    if y is xe:
        return x
    y = core.squeeze(y, 0)
    return x.copy_(y) if inplace else y  # type: ignore[attr-defined]


def dropout1d(input: Tensor, p: float = 0.5, training: bool = True,
              inplace: bool = False) -> Tensor:
    """Zero whole channels of ``(N, C, L)`` with probability ``p``, scale the rest."""
    return _feature_dropout(input, p, training, inplace, 1, "dropout1d")


def dropout2d(input: Tensor, p: float = 0.5, training: bool = True,
              inplace: bool = False) -> Tensor:
    """Zero whole channels of ``(N, C, H, W)`` with probability ``p``, scale the rest
    (a 3-D input is ``(N, C, L)``, with PyTorch's warning)."""
    return _feature_dropout(input, p, training, inplace, 2, "dropout2d")


def dropout3d(input: Tensor, p: float = 0.5, training: bool = True,
              inplace: bool = False) -> Tensor:
    return _feature_dropout(input, p, training, inplace, 3, "dropout3d")


def alpha_dropout(input: Tensor, p: float = 0.5, training: bool = False,
                  inplace: bool = False) -> Tensor:
    """SELU-preserving dropout: dropped units take SELU's saturation value, then an affine
    map keeps mean 0 and variance 1 (identity in eval)."""
    _check_p(p)
    x = _tensor(input, "alpha_dropout")
    return dropout_impl(x, p, training, inplace, alpha=True)


def feature_alpha_dropout(input: Tensor, p: float = 0.5, training: bool = False,
                          inplace: bool = False) -> Tensor:
    _check_p(p)
    x = _tensor(input, "feature_alpha_dropout")
    return dropout_impl(x, p, training, inplace, feature=True, alpha=True)


# ----------------------------------------------------------------------------- resizing
_MODES = {"nearest": 0, "nearest-exact": 0, "linear": 1, "bilinear": 2, "trilinear": 3,
          "bicubic": 2, "area": 0}


def interpolate(input: Tensor, size: Any = None, scale_factor: Any = None,
                mode: str = "nearest", align_corners: bool | None = None,
                recompute_scale_factor: bool | None = None, antialias: bool = False) -> Tensor:
    """Resize ``(N, C, *S)``: ``nearest``, ``nearest-exact``, ``linear``/``bilinear``/
    ``trilinear`` (with ``align_corners``), ``area`` (adaptive average).

    >>> import tapegrad.torch as torch
    >>> torch.nn.functional.interpolate(torch.tensor([[[0.0, 1.0]]]), scale_factor=2,
    ...                                 mode="linear")
    tensor([[[0.0000, 0.2500, 0.7500, 1.0000]]])
    """
    x = _tensor(input, "interpolate")
    nsp = x._data.ndim - 2
    if mode not in _MODES:
        raise hinted(NotImplementedError(with_hint(
            f"Input Error: Only 3D, 4D and 5D input Tensors supported (got {x._data.ndim}D) for "
            f"the modes: nearest | linear | bilinear | bicubic | trilinear | area | "
            f"nearest-exact (got {mode})", "pick a supported mode")))
    if mode == "bicubic":
        raise hinted(NotImplementedError(with_hint("interpolate: mode='bicubic' is not implemented",
                                            "use bilinear")))
    need = _MODES[mode]
    if need and need != nsp:
        raise hinted(NotImplementedError(with_hint(
            f"Got {x._data.ndim}D input, but {mode} mode needs {need + 2}D input",
            f"{mode} resizes {need} spatial dims")))
    if mode in ("nearest", "nearest-exact", "area") and align_corners is not None:
        raise hinted(ValueError(with_hint(
            "align_corners option can only be set with the interpolating modes: linear | "
            "bilinear | bicubic | trilinear", "drop align_corners")))
    if (size is None) == (scale_factor is None):
        raise hinted(ValueError(with_hint("only one of size or scale_factor should be defined"
                                   if size is not None else
                                   "either size or scale_factor should be defined",
                                   "pass exactly one of size and scale_factor")))
    insz = x._data.shape[2:]
    scales: tuple[float | None, ...] | None = None
    if size is not None:
        out = _tuple(size, nsp, "size")
    else:
        sf = [float(scale_factor)] * nsp if isinstance(scale_factor, (int, float)) else \
            [float(v) for v in scale_factor]
        out = tuple(int(math.floor(n * f)) for n, f in zip(insz, sf))
        if not recompute_scale_factor:
            scales = tuple(1.0 / f for f in sf)
    if mode == "area":
        return PL.adaptive_avg_pool(x, out)
    m = mode if mode.startswith("nearest") else "linear"
    return resize(x, out, m, bool(align_corners), scales)


def upsample(input: Tensor, size: Any = None, scale_factor: Any = None,
             mode: str = "nearest", align_corners: bool | None = None) -> Tensor:
    """Deprecated alias of :func:`interpolate`."""
    return interpolate(input, size, scale_factor, mode, align_corners)


# ----------------------------------------------------------------------------- unfold / fold
def unfold(input: Tensor, kernel_size: Any, dilation: Any = 1, padding: Any = 0,
           stride: Any = 1) -> Tensor:
    """Sliding blocks of ``(N, C, H, W)`` as columns ``(N, C * kh * kw, L)`` (im2col).

    >>> import tapegrad.torch as torch
    >>> torch.nn.functional.unfold(torch.ones(1, 2, 3, 3), 2).shape
    torch.Size([1, 8, 4])
    """
    x = _tensor(input, "unfold")
    if x._data.ndim not in (3, 4):
        raise hinted(NotImplementedError(with_hint(
            f"Input Error: Only 3D or 4D input Tensors are supported (got {x._data.ndim}D)",
            "unfold takes (N, C, H, W)")))
    x, squeeze = _batched(x, 2, "unfold")
    k = _tuple(kernel_size, 2, "kernel_size")
    p = _tuple(padding, 2, "padding")
    y = C.unfold(x, k, _tuple(stride, 2, "stride"), tuple((q, q) for q in p),
                 _tuple(dilation, 2, "dilation"))
    return _unbatch(y, squeeze)


def fold(input: Tensor, output_size: Any, kernel_size: Any, dilation: Any = 1,
         padding: Any = 0, stride: Any = 1) -> Tensor:
    """Sum columns ``(N, C * kh * kw, L)`` back into ``(N, C, *output_size)`` (col2im)."""
    x = _tensor(input, "fold")
    squeeze = x._data.ndim == 2
    if squeeze:
        x = core.reshape(x, (1,) + x._data.shape)
    k = _tuple(kernel_size, 2, "kernel_size")
    size = _tuple(output_size, 2, "output_size")
    p = tuple((q, q) for q in _tuple(padding, 2, "padding"))
    s, d = _tuple(stride, 2, "stride"), _tuple(dilation, 2, "dilation")
    kk = k[0] * k[1]
    blocks = math.prod(C.conv_output_size(size, k, s, p, d))
    if x._data.shape[1] % kk or x._data.shape[2] != blocks:
        raise hinted(RuntimeError(with_hint(
            f"Given output_size={list(size)}, kernel_size={list(k)}, dilation={list(d)}, "
            f"padding={[q[0] for q in p]}, stride={list(s)}, expected size of input's "
            f"dimension 2 to match the calculated number of sliding blocks "
            f"{' * '.join(str(b) for b in C.conv_output_size(size, k, s, p, d))} = {blocks}, "
            f"but got input.size(2)={x._data.shape[2]}." if x._data.shape[2] != blocks else
            f"Expected size of input's dimension 1 to be divisible by the product of "
            f"kernel_size, but got input.size(1)={x._data.shape[1]} and "
            f"kernel_size={tuple(k)}", "fold inverts unfold with the same arguments")))
    y = C.fold(x, size, k, s, p, d)
    return _unbatch(y, squeeze)


def pairwise_distance(x1: Tensor, x2: Tensor, p: float = 2.0, eps: float = 1e-6,
                      keepdim: bool = False) -> Tensor:
    """``||x1 - x2 + eps||_p`` over the last dim."""
    d = core.add(core.subtract(x1, x2), eps)
    if p == 2.0:
        return core.sqrt(core.sum(core.multiply(d, d), axis=-1, keepdims=keepdim))
    a = core.abs(d)
    if math.isinf(p):
        return core.amax(a, axis=-1, keepdims=keepdim)
    return core.power(core.sum(core.power(a, p), axis=-1, keepdims=keepdim), 1.0 / p)

