"""``torch.nn.functional``: activations, softmax, losses, ``pad``, ``linear``, ``dropout``.

Losses and softmax are single nodes named as in PyTorch (``MseLossBackward0``,
``NllLossBackward0``, ``SoftmaxBackward0``, ...), with VJPs in tapegrad ops.

>>> import tapegrad.torch as torch
>>> import tapegrad.torch.nn.functional as F
>>> x = torch.tensor([[1.0, 2.0, 3.0]], requires_grad=True)
>>> F.cross_entropy(x, torch.tensor([2]))
tensor(0.4076, grad_fn=<NllLossBackward0>)
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from ... import ops as core
from ..._core.dispatch import level_of
from ..._core.errors import hinted, with_hint
from ..._core.tensor import TORCH, Tensor, make
from ...ops.reduce import norm_axis
from .. import _ops as O
from .. import _prims as P
from .._dtype import Size, to_np


def _check(x: Any, fn: str) -> Tensor:
    if not isinstance(x, Tensor):
        raise hinted(TypeError(with_hint(f"{fn}(): argument 'input' (position 1) must be Tensor, not "
                                  f"{type(x).__name__}", "pass a tensor")))
    return x


def _float(x: Tensor, fn: str) -> Tensor:
    if x._data.dtype.kind not in "fc":
        raise hinted(RuntimeError(with_hint(f"\"{fn}\" not implemented for "
                                     f"'{_type_name(x._data.dtype)}'",
                                     "convert the input with .float() first")))
    return x


_NAMES = {"int64": "Long", "int32": "Int", "bool": "Bool", "uint8": "Byte", "int16": "Short",
          "int8": "Char", "float32": "Float", "float64": "Double", "float16": "Half"}


def _type_name(d: np.dtype) -> str:
    return _NAMES.get(np.dtype(d).name, np.dtype(d).name)


# ----------------------------------------------------------------------------- activations
def relu(input: Tensor, inplace: bool = False) -> Tensor:
    """max(x, 0); gradient 0 at 0."""
    x = _check(input, "relu")
    if inplace:
        return x.relu_()  # type: ignore[attr-defined]
    return core.relu(x)


def relu6(input: Tensor, inplace: bool = False) -> Tensor:
    return O.clamp(input, 0.0, 6.0)


def leaky_relu(input: Tensor, negative_slope: float = 0.01, inplace: bool = False) -> Tensor:
    """x for x > 0, ``negative_slope * x`` otherwise."""
    return core.leaky_relu(_float(_check(input, "leaky_relu"), "leaky_relu"),
                           negative_slope=negative_slope)


def elu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    return core.elu(_float(_check(input, "elu"), "elu"), alpha=alpha)


def gelu(input: Tensor, approximate: str = "none") -> Tensor:
    """``x * Phi(x)`` (or the tanh approximation), one ``GeluBackward0`` node."""
    x = _float(_check(input, "gelu"), "GeluKernelImpl")
    if approximate not in ("none", "tanh"):
        raise hinted(RuntimeError(with_hint("approximate argument must be either none or tanh.",
                                     "pass approximate='none' or 'tanh'")))
    return P.gelu_op(x, approximate=approximate)


def silu(input: Tensor, inplace: bool = False) -> Tensor:
    """``x * sigmoid(x)`` (``SiluBackward0``)."""
    return P.silu_op(_float(_check(input, "silu"), "silu"))


def mish(input: Tensor, inplace: bool = False) -> Tensor:
    """``x * tanh(softplus(x))`` (one ``MishBackward0`` node)."""
    from ...ops.nn_more import mish_op
    from .functional_more import _kernel_float

    x = _kernel_float(_check(input, "mish"), "mish_cpu")
    y: Tensor = mish_op(core.clone(x) if inplace else x)
    return x.copy_(y) if inplace else y  # type: ignore[attr-defined]


def softplus(input: Tensor, beta: float = 1.0, threshold: float = 20.0) -> Tensor:
    """``log(1 + exp(beta x)) / beta``, linear where ``beta x > threshold``."""
    x = _float(_check(input, "softplus"), "softplus")
    return P.softplus_op(x, beta=float(beta), threshold=float(threshold))


def sigmoid(input: Tensor) -> Tensor:
    return O.sigmoid(input)


def tanh(input: Tensor) -> Tensor:
    return O.tanh(input)


def hardtanh(input: Tensor, min_val: float = -1.0, max_val: float = 1.0,
             inplace: bool = False) -> Tensor:
    return O.clamp(input, min_val, max_val)


def logsigmoid(input: Tensor) -> Tensor:
    """``min(x, 0) - log1p(exp(-|x|))`` (one ``LogSigmoidBackward0`` node)."""
    from ...ops.nn_more import logsigmoid_op
    from .functional_more import _kernel_float

    return logsigmoid_op(_kernel_float(_check(input, "log_sigmoid_forward"),
                                       "log_sigmoid_cpu"))


def _softmax_dim(ndim: int) -> int:
    warnings.warn(
        "Implicit dimension choice for softmax has been deprecated. Change the call to include "
        "dim=X as an argument.", UserWarning, stacklevel=4)
    return 0 if ndim in (0, 1, 3) else 1


def _sm_input(input: Tensor, dim: int | None, dtype: Any, fn: str) -> tuple[Tensor, int]:
    x = _check(input, fn)
    if dtype is not None:
        x = core.cast(x, dtype=to_np(dtype))
    x = _float(x, fn)
    if dim is None:
        dim = _softmax_dim(x._data.ndim)
    ax = norm_axis(int(dim), x._data.ndim)
    return x, (ax[0] if ax else 0)


def softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3,
            dtype: Any = None) -> Tensor:
    """``exp(x) / sum(exp(x))`` along ``dim`` (one ``SoftmaxBackward0`` node).

    >>> import tapegrad.torch as torch
    >>> torch.nn.functional.softmax(torch.tensor([0.0, 0.0]), dim=0)
    tensor([0.5000, 0.5000])
    """
    x, d = _sm_input(input, dim, dtype, "softmax")
    if x._data.ndim == 0:
        return P.softmax_op(core.reshape(x, (1,)), axis=0).reshape(())
    return P.softmax_op(x, axis=d)


def log_softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3,
                dtype: Any = None) -> Tensor:
    """``x - logsumexp(x)`` along ``dim`` (one ``LogSoftmaxBackward0`` node)."""
    x, d = _sm_input(input, dim, dtype, "log_softmax")
    if x._data.ndim == 0:
        return P.log_softmax_op(core.reshape(x, (1,)), axis=0).reshape(())
    return P.log_softmax_op(x, axis=d)


def softmin(input: Tensor, dim: int | None = None, dtype: Any = None) -> Tensor:
    return softmax(core.negative(input), dim, dtype=dtype)


# ----------------------------------------------------------------------------- losses
_REDUCTIONS = ("mean", "sum", "none")


def _reduction(reduction: str, size_average: Any = None, reduce: Any = None) -> str:
    if size_average is not None or reduce is not None:
        sa = True if size_average is None else size_average
        rd = True if reduce is None else reduce
        reduction = ("mean" if sa else "sum") if rd else "none"
        warnings.warn("size_average and reduce args will be deprecated, please use "
                      f"reduction='{reduction}' instead.", UserWarning, stacklevel=3)
    if reduction not in _REDUCTIONS:
        raise hinted(ValueError(with_hint(f"{reduction} is not a valid value for reduction",
                                   "use 'mean', 'sum' or 'none'")))
    return reduction


def _target_size_warning(input: Tensor, target: Any) -> None:
    ts = target._data.shape if isinstance(target, Tensor) else np.shape(target)
    if ts != input._data.shape:
        warnings.warn(
            f"Using a target size ({Size(ts)}) that is different to the input size "
            f"({Size(input._data.shape)}). This will likely lead to incorrect results due to "
            "broadcasting. Please ensure they have the same size.", UserWarning, stacklevel=3)


def mse_loss(input: Tensor, target: Tensor, size_average: Any = None, reduce: Any = None,
             reduction: str = "mean", weight: Any = None) -> Tensor:
    """Mean squared error (``MseLossBackward0``).

    >>> import tapegrad.torch as torch
    >>> torch.nn.functional.mse_loss(torch.tensor([1.0, 3.0]), torch.tensor([0.0, 0.0]))
    tensor(5.)
    """
    x = _check(input, "mse_loss")
    r = _reduction(reduction, size_average, reduce)
    _target_size_warning(x, target)
    O._broadcast_check(x, target)
    return P.mse_loss_op(x, target, reduction=r)


def l1_loss(input: Tensor, target: Tensor, size_average: Any = None, reduce: Any = None,
            reduction: str = "mean") -> Tensor:
    x = _check(input, "l1_loss")
    r = _reduction(reduction, size_average, reduce)
    _target_size_warning(x, target)
    return _reduce(core.abs(core.subtract(x, target)), r)


def smooth_l1_loss(input: Tensor, target: Tensor, size_average: Any = None, reduce: Any = None,
                   reduction: str = "mean", beta: float = 1.0) -> Tensor:
    r = _reduction(reduction, size_average, reduce)
    d = core.abs(core.subtract(input, target))
    quad = core.divide(core.multiply(core.multiply(d, d), 0.5), beta)
    lin = core.subtract(d, 0.5 * beta)
    v = core.where(core.less(d, beta), quad, lin)
    return _reduce(v, r)


def _reduce(v: Tensor, reduction: str) -> Tensor:
    if reduction == "mean":
        return core.mean(v)
    if reduction == "sum":
        return core.sum(v)
    return v


def nll_loss(input: Tensor, target: Tensor, weight: Tensor | None = None,
             size_average: Any = None, ignore_index: int = -100, reduce: Any = None,
             reduction: str = "mean") -> Tensor:
    """Negative log-likelihood of class indices ``target`` under log-probabilities ``input``."""
    x = _check(input, "nll_loss")
    r = _reduction(reduction, size_average, reduce)
    if isinstance(target, Tensor) and level_of(target) is not None:
        return _nll_traced(x, target, weight, ignore_index, r)
    t = target._data if isinstance(target, Tensor) else np.asarray(target)
    if t.dtype.kind not in "iu":
        raise hinted(RuntimeError(with_hint(
            f"expected scalar type Long but found {_type_name(t.dtype)}",
            "class-index targets are integers (torch.long)")))
    nd = x._data.ndim
    if nd < 1:
        raise hinted(ValueError(with_hint("Expected 1 or more dimensions (got 0)",
                                   "pass (N, C) log-probabilities")))
    c = x._data.shape[0] if nd == 1 else x._data.shape[1]
    exp_t = () if nd == 1 else (x._data.shape[0],) + x._data.shape[2:]
    if t.shape != exp_t:
        if nd >= 2 and t.ndim >= 1 and t.shape[0] != x._data.shape[0]:
            raise hinted(ValueError(with_hint(
                f"Expected input batch_size ({x._data.shape[0]}) to match target batch_size "
                f"({t.shape[0]}).", f"input {list(x._data.shape)}, target {list(t.shape)}")))
        raise hinted(RuntimeError(with_hint(
            f"Expected target size {list(exp_t)}, got {list(t.shape)}",
            f"input {list(x._data.shape)}: targets are one class index per sample")))
    valid = t[t != ignore_index]
    if valid.size and (valid.min() < 0 or valid.max() >= c):
        bad = int(valid.max()) if valid.max() >= c else int(valid.min())
        raise hinted(IndexError(with_hint(f"Target {bad} is out of bounds.",
                                   f"class indices must be in [0, {c - 1}]")))
    w = None if weight is None else weight._data
    op = P.nll_loss_op if nd <= 2 else P.nll_loss2d_op
    return op(x, target=t.astype(np.int64), weight=w,
                         ignore_index=int(ignore_index), reduction=r)


def _nll_traced(x: Tensor, target: Tensor, weight: Tensor | None, ignore_index: int,
                r: str) -> Tensor:
    """nll_loss for a target that is a transform's tracer (its values are not known here,
    e.g. per-example targets under vmap): the nll op that takes the targets as an input
    (one ``NllLossBackward0`` node, one batched call under vmap); a traced ``weight``
    too: the pick written as a one-hot product of ops."""
    nd = x._data.ndim
    cdim = 0 if nd == 1 else 1
    td = target._data.dtype
    if td not in (np.int64, np.int32):
        from ...autodiff.batching import BatchLevel

        if isinstance(level_of(target), BatchLevel):  # vmap's nll_loss is a gather
            raise hinted(RuntimeError(with_hint(
                "gather(): Expected dtype int32/int64 for index",
                "class-index targets are integers (torch.long)")))
        if td.kind not in "iu":
            raise hinted(RuntimeError(with_hint(
                f"expected scalar type Long but found {_type_name(td)}",
                "class-index targets are integers (torch.long)")))
    if nd >= 1 and (weight is None or level_of(weight) is None):
        w_arr = None if weight is None else np.asarray(weight._data)
        op = P.nll_traced_op if nd <= 2 else P.nll_traced2d_op
        return op(x, target, axis=cdim, lead=0, weight=w_arr, ignore_index=int(ignore_index),
                  reduction=r, check=_target_range_error)
    c = x._data.shape[cdim]
    classes = np.arange(c).reshape((c,) + (1,) * (nd - cdim - 1))
    onehot = core.equal(core.expand_dims(target, cdim), classes)
    w = core.cast(core.not_equal(target, ignore_index), dtype=x._data.dtype)
    if weight is not None:
        wv = core.reshape(weight, (c,) + (1,) * (nd - cdim - 1))
        w = core.multiply(w, core.sum(core.multiply(onehot, wv), axis=cdim))
    picked = core.negative(core.sum(core.multiply(x, onehot), axis=cdim))
    per = core.multiply(picked, w)
    if r == "mean":
        return core.divide(core.sum(per), core.sum(w))
    if r == "sum":
        return core.sum(per)
    return per


def _target_range_error(valid: np.ndarray, c: int, lead: int, dim: int) -> None:
    """PyTorch's error for a class index outside ``[0, c)`` in a traced target (``valid``:
    the targets that are not ``ignore_index``).  Under vmap (``lead`` batch axes) nll_loss
    is a gather, which names the first bad index and the class axis ``dim`` of the batched
    input; under the other transforms it is the kernel's ``IndexError``."""
    flat = valid.reshape(-1)
    bad = flat[(flat < 0) | (flat >= c)]
    if not bad.size:
        return
    if lead:
        raise hinted(RuntimeError(with_hint(
            f"index {int(bad[0])} is out of bounds for dimension {dim} with size {c}",
            f"class indices must be in [0, {c - 1}] (or ignore_index)")))
    worst = int(flat.max()) if flat.max() >= c else int(flat.min())
    raise hinted(IndexError(with_hint(f"Target {worst} is out of bounds.",
                                      f"class indices must be in [0, {c - 1}]")))


def cross_entropy(input: Tensor, target: Tensor, weight: Tensor | None = None,
                  size_average: Any = None, ignore_index: int = -100, reduce: Any = None,
                  reduction: str = "mean", label_smoothing: float = 0.0) -> Tensor:
    """``nll_loss(log_softmax(input, 1), target)``; class indices or class probabilities.

    >>> import tapegrad.torch as torch
    >>> torch.nn.functional.cross_entropy(torch.zeros(2, 4), torch.tensor([0, 3]))
    tensor(1.3863)
    """
    x = _check(input, "cross_entropy")
    r = _reduction(reduction, size_average, reduce)
    traced = isinstance(target, Tensor) and level_of(target) is not None and \
        target._data.dtype.kind in "iu"
    if traced and label_smoothing <= 0:
        return _nll_traced(log_softmax(x, 0 if x._data.ndim == 1 else 1), target, weight,
                           ignore_index, r)
    if traced:
        return _smoothed(x, target, weight, ignore_index, r, label_smoothing)
    t = target._data if isinstance(target, Tensor) else np.asarray(target)
    cdim = 0 if x._data.ndim == 1 else 1
    lp = log_softmax(x, cdim)
    if t.shape == x._data.shape and t.dtype.kind in "fc":
        # class probabilities
        c = x._data.shape[cdim]
        tt = target if isinstance(target, Tensor) else make(t, None, False, TORCH)
        if label_smoothing > 0:
            tt = core.add(core.multiply(tt, 1 - label_smoothing), label_smoothing / c)
        if weight is not None:
            shape = [1] * x._data.ndim
            shape[cdim] = c
            tt = core.multiply(tt, core.reshape(weight, tuple(shape)))
        per = core.negative(core.sum(core.multiply(lp, tt), axis=cdim))
        if r == "mean":
            n = x._data.shape[0] if x._data.ndim > 1 else 1
            n = int(np.prod(per._data.shape)) if per._data.ndim else 1
            return core.divide(core.sum(per), float(n)) if per._data.ndim else per
        return _reduce(per, r)
    if t.dtype.kind not in "iu":
        raise hinted(RuntimeError(with_hint(
            f"expected target dtype to be Long or Byte, but got {_type_name(t.dtype)}",
            "class-index targets are integers; for probabilities pass a float target shaped "
            "like the input")))
    if label_smoothing <= 0:
        return nll_loss(lp, target, weight, ignore_index=ignore_index, reduction=r)
    tt = target if isinstance(target, Tensor) else make(t, None, False, TORCH)
    return _smoothed(x, tt, weight, ignore_index, r, label_smoothing)


def _smoothed(x: Tensor, target: Tensor, weight: Tensor | None, ignore_index: int, r: str,
              label_smoothing: float) -> Tensor:
    """Class-index cross-entropy with label smoothing, as ATen's
    ``cross_entropy_loss_label_smoothing``: ``(1 - ls) * nll + ls / C * smooth``, where
    ``smooth`` is ``-sum_c w_c log p_c`` (0 at ignored targets), summed or divided by the
    targets' total weight (their count without ``weight``) for "mean"."""
    cdim = 0 if x._data.ndim == 1 else 1
    lp = log_softmax(x, cdim)
    nll = nll_loss(lp, target, weight, ignore_index=ignore_index, reduction=r)
    c = x._data.shape[cdim]
    if weight is not None:
        shape = [1] * x._data.ndim
        shape[cdim] = c
        smooth = core.negative(core.sum(core.multiply(lp, core.reshape(weight, tuple(shape))),
                                        axis=cdim))
    else:
        smooth = core.negative(core.sum(lp, axis=cdim))
    keep = core.not_equal(target, ignore_index)
    smooth = core.where(keep, smooth, 0.0)
    if r == "mean":
        if weight is not None:
            tw = core.take(weight, core.where(keep, target, 0))
            denom = core.sum(core.where(keep, tw, 0.0))
        else:
            denom = core.cast(core.sum(core.cast(keep, dtype=np.int64)), dtype=lp._data.dtype)
        with np.errstate(all="ignore"):
            smooth = core.divide(core.sum(smooth), denom)
    elif r == "sum":
        smooth = core.sum(smooth)
    return core.add(core.multiply(nll, 1 - label_smoothing),
                    core.multiply(smooth, label_smoothing / c))


def binary_cross_entropy(input: Tensor, target: Tensor, weight: Tensor | None = None,
                         size_average: Any = None, reduce: Any = None,
                         reduction: str = "mean") -> Tensor:
    x = _check(input, "binary_cross_entropy")
    r = _reduction(reduction, size_average, reduce)
    if isinstance(target, Tensor) and target._data.shape != x._data.shape:
        raise hinted(ValueError(with_hint(
            f"Using a target size ({Size(target._data.shape)}) that is different to the input "
            f"size ({Size(x._data.shape)}) is deprecated. Please ensure they have the same size.",
            "pass a target shaped like the input")))
    if np.any((x._data < 0) | (x._data > 1)):
        raise hinted(RuntimeError(with_hint("all elements of input should be between 0 and 1",
                                     "pass probabilities (apply sigmoid), or use "
                                     "binary_cross_entropy_with_logits")))
    if weight is None:
        return P.bce_op(x, target, reduction=r)
    v = core.multiply(P.bce_op(x, target, reduction="none"), weight)
    return _reduce(v, r)


def binary_cross_entropy_with_logits(input: Tensor, target: Tensor,
                                     weight: Tensor | None = None, size_average: Any = None,
                                     reduce: Any = None, reduction: str = "mean",
                                     pos_weight: Tensor | None = None) -> Tensor:
    """``max(x, 0) - x t + log(1 + exp(-|x|))``, stable for large logits."""
    x = _check(input, "binary_cross_entropy_with_logits")
    r = _reduction(reduction, size_average, reduce)
    if isinstance(target, Tensor) and target._data.shape != x._data.shape:
        raise hinted(ValueError(with_hint(
            f"Target size ({Size(target._data.shape)}) must be the same as input size "
            f"({Size(x._data.shape)})", "pass a target shaped like the input")))
    if pos_weight is None and weight is None:
        return P.bce_logits_op(x, target, reduction=r)
    if pos_weight is None:
        v = core.sigmoid_cross_entropy_with_logits(target, x)
    else:
        lw = core.add(core.multiply(core.subtract(pos_weight, 1.0), target), 1.0)
        v = core.add(core.multiply(core.subtract(1.0, target), x),
                     core.multiply(lw, logsigmoid(core.negative(x)) * -1.0))
    if weight is not None:
        v = core.multiply(v, weight)
    return _reduce(v, r)


def kl_div(input: Tensor, target: Tensor, size_average: Any = None, reduce: Any = None,
           reduction: str = "mean", log_target: bool = False) -> Tensor:
    if reduction == "batchmean" and size_average is None and reduce is None:
        r = "batchmean"  # the sum divided by the batch size (PyTorch's KL divergence)
    else:
        r = _reduction(reduction, size_average, reduce)
        if r == "mean" and size_average is None and reduce is None:
            warnings.warn(
                "reduction: 'mean' divides the total loss by both the batch size and the "
                "support size.'batchmean' divides only by the batch size, and aligns with the "
                "KL div math definition.'mean' will be changed to behave the same as "
                "'batchmean' in the next major release.", UserWarning, stacklevel=2)
    if log_target:
        v = core.multiply(core.exp(target), core.subtract(target, input))
    else:
        t = target
        v = core.where(core.greater(t, 0), core.multiply(t, core.subtract(
            core.log(core.where(core.greater(t, 0), t, 1.0)), input)), 0.0)
    if r == "batchmean":
        total = core.sum(v)
        return total if input._data.ndim == 0 else core.divide(total,
                                                               float(input._data.shape[0]))
    return _reduce(v, r)


# ----------------------------------------------------------------------------- layers
def linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """``input @ weight.T + bias`` (``AddmmBackward0`` for 2-D input with bias).

    >>> import tapegrad.torch as torch
    >>> torch.nn.functional.linear(torch.ones(1, 2), torch.ones(3, 2), torch.zeros(3))
    tensor([[2., 2., 2.]])
    """
    x = _check(input, "linear")
    if x._data.dtype != weight._data.dtype:
        raise hinted(RuntimeError(with_hint(
            f"mat1 and mat2 must have the same dtype, but got {_type_name(x._data.dtype)} and "
            f"{_type_name(weight._data.dtype)}",
            "convert the input (x.float()) or the module (model.double())")))
    k = x._data.shape[-1] if x._data.ndim else 1
    if weight._data.ndim != 2 or (x._data.ndim and k != weight._data.shape[1]):
        rows = int(np.prod(x._data.shape[:-1])) if x._data.ndim > 1 else 1
        raise hinted(RuntimeError(with_hint(
            f"mat1 and mat2 shapes cannot be multiplied ({rows}x{k} and "
            f"{weight._data.shape[1]}x{weight._data.shape[0]})",
            f"the layer expects {weight._data.shape[1]} input features, the input has {k} "
            f"(shape {list(x._data.shape)})")))
    if bias is not None and x._data.ndim == 2:
        return P.linear_op(x, weight, bias)
    if bias is not None and x._data.ndim >= 1:
        # PyTorch flattens the batch dims, runs one addmm and views the result back
        y2 = P.linear_op(core.reshape(x, (-1, k)), weight, bias)
        return core.reshape(y2, x._data.shape[:-1] + (weight._data.shape[0],))
    y = O.matmul(x, O.t(weight))
    if bias is not None:
        y = core.add(y, bias)
    return y


def bilinear(input1: Tensor, input2: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    y = core.einsum("bi,oij,bj->bo", input1, weight, input2)
    return core.add(y, bias) if bias is not None else y


def dropout(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """Zero elements with probability ``p`` and scale the rest by ``1/(1-p)`` (training only).

    The mask is PyTorch's: ``torch.manual_seed(s)`` then ``F.dropout(x)`` zeroes the elements
    PyTorch zeroes and leaves the generator where PyTorch leaves it.
    """
    from ._functional_conv import _tensor, dropout_impl

    return dropout_impl(_tensor(input, "dropout"), p, training, inplace)


def pad(input: Tensor, pad: Any, mode: str = "constant", value: float | None = None) -> Tensor:
    """Pad the last dims: ``pad = (left, right, top, bottom, ...)`` from the last dim backwards.

    >>> import tapegrad.torch as torch
    >>> torch.nn.functional.pad(torch.ones(2), (1, 2))
    tensor([0., 1., 1., 0., 0.])
    """
    x = _check(input, "pad")
    pad = tuple(int(p) for p in pad)
    if len(pad) % 2:
        raise hinted(RuntimeError(with_hint("Padding length must be divisible by 2",
                                     "pass (left, right[, top, bottom, ...])")))
    if len(pad) // 2 > x._data.ndim:
        raise hinted(RuntimeError(with_hint(
            "Padding length should be less than or equal to two times the input dimension but "
            f"got padding length {len(pad)} and input of dimension {x._data.ndim}",
            "pad at most every dimension")))
    nd = x._data.ndim
    widths = [(0, 0)] * nd
    for i in range(len(pad) // 2):
        widths[nd - 1 - i] = (pad[2 * i], pad[2 * i + 1])
    if mode != "constant":
        np_mode = {"reflect": "reflect", "replicate": "edge", "circular": "wrap"}.get(mode)
        if np_mode is None:
            raise hinted(NotImplementedError(with_hint(f"Unsupported padding mode: {mode}",
                                                "use constant, reflect, replicate or circular")))
        idx = []
        for d, (a, b) in enumerate(widths):
            n = x._data.shape[d]
            src = np.pad(np.arange(n), (a, b), mode=np_mode)  # type: ignore[call-overload]
            idx.append(src)
        grids = np.ix_(*idx)
        return core.getitem(x, grids)
    # negative padding crops first
    crop = tuple(slice(-a if a < 0 else None, b if b < 0 else None) for a, b in widths)
    if any(a < 0 or b < 0 for a, b in widths):
        x = core.getitem(x, crop)
        widths = [(max(a, 0), max(b, 0)) for a, b in widths]
    return core.pad(x, widths, constant_values=0.0 if value is None else value)


def one_hot(tensor: Tensor, num_classes: int = -1) -> Tensor:
    t = tensor._data
    if t.dtype.kind not in "iu":
        raise hinted(RuntimeError(with_hint("one_hot is only applicable to index tensor of type "
                                     "LongTensor.", "pass integer class indices")))
    if O._vmapped(tensor):  # a vmap tracer: no values to read
        if num_classes < 0:
            raise hinted(RuntimeError(with_hint(
                "When vmap-ing torch.nn.functional.one_hot, please provide an explicit positive "
                "num_classes argument.", "the number of classes cannot come from the values")))
        return core.cast(core.equal(core.expand_dims(tensor, -1),
                                    np.arange(num_classes, dtype=np.int64)), dtype=np.int64)
    if num_classes >= 0 and O._traced(tensor):
        # indices that differ between calls (torch.compile): the encoding is ops on them,
        # checked now on this call's values
        from ...autodiff.tracing import quiet_values

        with quiet_values():
            if t.size and (t.min() < 0 or t.max() >= num_classes):
                raise hinted(RuntimeError(with_hint(
                    "Class values must be smaller than num_classes.",
                    f"num_classes={num_classes}")))
        return core.cast(core.equal(core.expand_dims(tensor, -1),
                                    np.arange(num_classes, dtype=np.int64)), dtype=np.int64)
    n = int(t.max()) + 1 if num_classes < 0 else num_classes
    if t.size and (t.min() < 0 or t.max() >= n):
        raise hinted(RuntimeError(with_hint("Class values must be smaller than num_classes.",
                                     f"num_classes={n}")))
    return make(np.eye(n, dtype=np.int64)[t], None, False, TORCH)


def normalize(input: Tensor, p: float = 2.0, dim: int = 1, eps: float = 1e-12) -> Tensor:
    n = O.norm(input, p, dim, keepdim=True)
    return core.divide(input, core.maximum(n, eps))


def cosine_similarity(x1: Tensor, x2: Tensor, dim: int = 1, eps: float = 1e-8) -> Tensor:
    """``sum(x1 / max(||x1||, eps) * x2 / max(||x2||, eps))`` over ``dim``: ATen's order of
    operations (its bits), the last node ``SumBackward1`` as in PyTorch."""
    n1 = O.clamp_min(O.norm(x1, 2, dim, keepdim=True), eps)
    n2 = O.clamp_min(O.norm(x2, 2, dim, keepdim=True), eps)
    return core.sum(core.multiply(core.divide(x1, n1), core.divide(x2, n2)), axis=dim)


def layer_norm(input: Tensor, normalized_shape: Any, weight: Tensor | None = None,
               bias: Tensor | None = None, eps: float = 1e-5) -> Tensor:
    shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    axes = tuple(range(input._data.ndim - len(shape), input._data.ndim))
    m = core.mean(input, axis=axes, keepdims=True)
    c = core.subtract(input, m)
    v = core.mean(core.multiply(c, c), axis=axes, keepdims=True)
    y = core.divide(c, core.sqrt(core.add(v, eps)))
    if weight is not None:
        y = core.multiply(y, weight)
    if bias is not None:
        y = core.add(y, bias)
    return y


__all__ = [
    "relu", "relu6", "leaky_relu", "elu", "gelu", "silu", "mish", "softplus", "sigmoid",
    "tanh", "hardtanh", "logsigmoid", "softmax", "log_softmax", "softmin", "mse_loss",
    "l1_loss", "smooth_l1_loss", "nll_loss", "cross_entropy", "binary_cross_entropy",
    "binary_cross_entropy_with_logits", "kl_div", "linear", "bilinear", "dropout", "pad",
    "one_hot", "normalize", "cosine_similarity", "layer_norm",
]

# conv nets: conv, pooling, normalization, embedding (padding_idx, max_norm), dropout family,
# interpolate, unfold/fold (replaces nothing above but embedding, defined there)
from ._functional_conv import *  # noqa: E402,F403
from ._functional_conv import __all__ as _conv_all  # noqa: E402

__all__ += [n for n in _conv_all if n not in __all__]


def scaled_dot_product_attention(query: Tensor, key: Tensor, value: Tensor, attn_mask: Any = None,
                                 dropout_p: float = 0.0, is_causal: bool = False,
                                 scale: float | None = None, enable_gqa: bool = False) -> Tensor:
    """``softmax(Q K^T * scale + mask) V``: see :mod:`tapegrad.torch.nn.attention`."""
    from .attention import scaled_dot_product_attention as sdpa

    return sdpa(query, key, value, attn_mask, dropout_p, is_causal, scale, enable_gqa)


__all__ += ["scaled_dot_product_attention"]

# more activations, losses and layers (prelu, glu, huber_loss, grid_sample, ctc_loss, ...)
from .functional_more import *  # noqa: E402,F403
from .functional_more import __all__ as _more_all  # noqa: E402

__all__ += [n for n in _more_all if n not in __all__]
