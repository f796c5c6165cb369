"""More of ``torch.nn.functional``: activations (prelu, glu, selu, celu, hardswish, ...),
margin / ranking / embedding losses, ``huber_loss``, ``poisson_nll_loss``,
``gaussian_nll_loss``, ``ctc_loss``, ``pixel_shuffle``, ``channel_shuffle``,
``grid_sample``, ``affine_grid``, ``embedding_bag``, ``local_response_norm``, ``pdist``,
``lp_pool1d`` / ``lp_pool2d``, ``rrelu``, ``gumbel_softmax``.

Each is PyTorch's formula written in tapegrad ops (so differentiable again, with
PyTorch's gradients, including at the kinks: the comparisons are PyTorch's kernels'),
except ``ctc_loss`` whose forward/backward is its own op record
(:mod:`tapegrad.ops.nn_more`).

>>> import tapegrad.torch as torch
>>> import tapegrad.torch.nn.functional as F
>>> F.hardswish(torch.tensor([-4.0, 0.0, 1.0, 4.0]))
tensor([-0.0000, 0.0000, 0.6667, 4.0000])
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from ... import ops as core
from ..._core.errors import hinted, with_hint
from ..._core.tensor import TORCH, Tensor, make
from ...ops import nn_more as K
from ...ops.reduce import norm_axis
from .. import _ops as O
from .._dtype import Size
from . import _functional_conv as FC
from .functional import (
    _check,
    _reduce,
    _reduction,
    _target_size_warning,
    _type_name,
    logsigmoid,
    softmax,
)

_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946

# fractional max pooling's window maxima: a gather under PyTorch's node name
_FMP_GATHER = K.fractional_max_pool2d_op.renamed("FractionalMaxPool2DBackward0")


def _t(a: Any, like: Tensor) -> Tensor:
    """``a`` as a tensor (a Python number or list in ``like``'s dtype)."""
    if isinstance(a, Tensor):
        return a
    arr = np.asarray(a)
    if not isinstance(a, np.ndarray):
        arr = arr.astype(like._data.dtype)
    return make(arr, None, False, TORCH)


def _axis(dim: int, ndim: int) -> int:
    ax = norm_axis(int(dim), ndim)
    assert ax is not None
    return int(ax[0])


def _kernel_float(x: Tensor, kernel: str) -> Tensor:
    """PyTorch's dispatch error for an integer or bool input of a float-only kernel."""
    if x._data.dtype.kind not in "fc":
        raise hinted(NotImplementedError(with_hint(
            f"\"{kernel}\" not implemented for '{_type_name(x._data.dtype)}'",
            "convert the input with .float() first")))
    return x


def _zeros(x: Tensor) -> Tensor:
    return make(np.zeros(x._data.shape, x._data.dtype), None, False, TORCH)


def _src(x: Tensor, inplace: bool) -> Tensor:
    """The op's input: for ``inplace=True`` a clone, so that what the op saves for its
    gradient is not the tensor then overwritten."""
    return core.clone(x) if inplace else x


def _inplace(input: Tensor, out: Tensor) -> Tensor:
    """``input`` overwritten with ``out`` (the ``inplace=True`` flavours)."""
    return input.copy_(out)  # type: ignore[attr-defined]


# ----------------------------------------------------------------------------- activations
def prelu(input: Tensor, weight: Tensor) -> Tensor:
    """``x`` where ``x > 0``, ``weight * x`` elsewhere; ``weight`` has one value or one per
    channel (dim 1).

    >>> import tapegrad.torch as torch
    >>> torch.nn.functional.prelu(torch.tensor([-2.0, 3.0]), torch.tensor([0.25]))
    tensor([-0.5000,  3.0000])
    """
    x = _check(input, "prelu")
    _kernel_float(x, "prelu_cpu")
    if not isinstance(weight, Tensor):
        raise hinted(TypeError(with_hint(
            f"prelu(): argument 'weight' (position 2) must be Tensor, not "
            f"{type(weight).__name__}", "pass a tensor")))
    nw = weight._data.size
    nd = x._data.ndim
    if nw != 1:
        if nd == 0:
            raise hinted(RuntimeError(with_hint(
                "Not allow zero-dim input tensor.", "pass a tensor with a channel dimension")))
        ch = x._data.shape[1] if nd >= 2 else 1
        if nw != ch:
            raise hinted(RuntimeError(with_hint(
                f"Mismatch of parameter numbers and input channel size. Found parameter "
                f"numbers = {nw} and channel size = {ch}.",
                "weight has one value or one per channel (dim 1)")))
    if weight._data.ndim > 1:
        raise hinted(RuntimeError(with_hint(
            f"prelu: Expected `weight` to be a scalar or 1D tensor, but got: ndim = "
            f"{weight._data.ndim}", "pass a 1-D weight")))
    w = weight
    if nw != 1 or weight._data.ndim == 1:
        shape = (nw,) + (1,) * max(nd - 2, 0) if nd >= 2 else (nw,) if nd == 1 else ()
        w = core.reshape(weight, shape)
    return K.prelu_op(x, w)


def glu(input: Tensor, dim: int = -1) -> Tensor:
    """``a * sigmoid(b)`` of the two halves of ``input`` along ``dim``."""
    x = _check(input, "glu")
    _kernel_float(x, "glu_cpu")
    if x._data.ndim == 0:
        raise hinted(RuntimeError(with_hint(
            "glu does not support scalars because halving size must be even",
            "pass a tensor with an even dimension")))
    d = _axis(dim, x._data.ndim)
    n = x._data.shape[d]
    if n % 2:
        raise hinted(RuntimeError(with_hint(
            f"Halving dimension must be even, but dimension {d} is size {n}",
            "the dimension is split into two equal halves")))
    return K.glu_op(x, axis=d)


def selu(input: Tensor, inplace: bool = False) -> Tensor:
    """``scale * elu(x, alpha)`` with the self-normalising constants."""
    x = _kernel_float(_check(input, "selu"), "elu_cpu")
    y = K.selu_op(_src(x, inplace))
    return _inplace(x, y) if inplace else y


def celu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))``."""
    x = _kernel_float(_check(input, "celu"), "elu_cpu")
    if alpha == 0:
        raise hinted(RuntimeError(with_hint("ZeroDivisionError: alpha cannot be 0 for CELU",
                                            "alpha must not be 0")))
    y = K.celu_op(_src(x, inplace), alpha=float(alpha))
    return _inplace(x, y) if inplace else y


def hardswish(input: Tensor, inplace: bool = False) -> Tensor:
    """``x * relu6(x + 3) / 6`` (PyTorch's CPU gradient: ``x / 3 + 0.5`` on ``(-3, 3)``,
    0 at -3, 1 at 3)."""
    x = _kernel_float(_check(input, "hardswish"), "hardswish_cpu")
    y = K.hardswish_op(_src(x, inplace))
    return _inplace(x, y) if inplace else y


def hardsigmoid(input: Tensor, inplace: bool = False) -> Tensor:
    """``relu6(x + 3) / 6`` (gradient ``1/6`` strictly inside ``(-3, 3)``)."""
    x = _kernel_float(_check(input, "hardsigmoid"), "hardsigmoid_cpu")
    y = K.hardsigmoid_op(_src(x, inplace))
    return _inplace(x, y) if inplace else y


def hardtanh_(input: Tensor, min_val: float = -1.0, max_val: float = 1.0) -> Tensor:
    return _inplace(input, O.clamp(_src(input, True), min_val, max_val))


def softsign(input: Tensor) -> Tensor:
    """``x / (1 + |x|)``."""
    x = _check(input, "softsign")
    return O.div(x, O.add(O.abs(x), 1))


def tanhshrink(input: Tensor) -> Tensor:
    """``x - tanh(x)``."""
    x = _check(input, "tanhshrink")
    return core.subtract(x, core.tanh(x))


def _lambd(lambd: float, dt: np.dtype, fn: str) -> None:
    if lambd < 0:
        hi = float(np.finfo(dt).max)
        raise hinted(RuntimeError(with_hint(
            f"lambda must be in range [0, {hi:g}] for input dtype {_type_name(dt)}, but found "
            f"{float(lambd):g}", f"{fn} needs lambd >= 0")))


def softshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    """``x - lambd`` above ``lambd``, ``x + lambd`` below ``-lambd``, 0 between."""
    x = _kernel_float(_check(input, "softshrink"), "softshrink_check")
    _lambd(lambd, x._data.dtype, "softshrink")
    return K.softshrink_op(x, lambd=float(lambd))


def hardshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    """``x`` where ``|x| > lambd``, 0 elsewhere."""
    x = _kernel_float(_check(input, "hardshrink"), "hardshrink_cpu")
    return K.hardshrink_op(x, lambd=float(lambd))


def threshold(input: Tensor, threshold: float, value: float, inplace: bool = False) -> Tensor:
    """``x`` where ``x > threshold``, ``value`` elsewhere."""
    x = _check(input, "threshold")
    y = K.threshold_op(_src(x, inplace), threshold=threshold, value=value)
    return _inplace(x, y) if inplace else y


def threshold_(input: Tensor, threshold: float, value: float) -> Tensor:
    fn: Callable[..., Tensor] = globals()["threshold"]
    return fn(input, threshold, value, inplace=True)


def relu_(input: Tensor) -> Tensor:
    return input.relu_()  # type: ignore[attr-defined]


def elu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    return _inplace(input, core.elu(_src(input, True), alpha=alpha))


def leaky_relu_(input: Tensor, negative_slope: float = 0.01) -> Tensor:
    return _inplace(input, core.leaky_relu(_src(input, True),
                                        negative_slope=negative_slope))


def selu_(input: Tensor) -> Tensor:
    return selu(input, inplace=True)


def celu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    return celu(input, alpha, inplace=True)


def rrelu(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False,
          inplace: bool = False) -> Tensor:
    """Randomized leaky ReLU: in training each non-positive element is scaled by its own
    U(lower, upper) draw (one double draw per such element, in order, from the torch
    generator as PyTorch's CPU kernel); in eval by ``(lower + upper) / 2``."""
    x = _kernel_float(_check(input, "rrelu"),
                      "rrelu_with_noise_out_cpu" if training else "leaky_relu_cpu")
    if lower > upper:
        raise hinted(RuntimeError(with_hint(
            "Lower bound should be less than or equal to the upper bound",
            "pass lower <= upper")))
    if not training:
        slope = np.asarray((lower + upper) / 2).astype(x._data.dtype)
        y = K.rrelu_op(_src(x, inplace), noise=np.broadcast_to(slope, x._data.shape))
        return _inplace(x, y) if inplace else y
    from .._random import gen

    flat = x._data.reshape(-1)
    neg = flat <= 0
    noise = np.ones(flat.shape, dtype=x._data.dtype)
    k = int(neg.sum())
    if k:
        g = gen(None)
        draws = g.uniform(k, np.dtype(np.float64), float(lower), float(upper))
        noise[neg] = draws.astype(x._data.dtype)
    y = K.rrelu_op(_src(x, inplace), noise=noise.reshape(x._data.shape))
    return _inplace(x, y) if inplace else y


def rrelu_(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3,
           training: bool = False) -> Tensor:
    return rrelu(input, lower, upper, training, inplace=True)


def gumbel_softmax(logits: Tensor, tau: float = 1, hard: bool = False, eps: float = 1e-10,
                   dim: int = -1) -> Tensor:
    """``softmax((logits + g) / tau)`` with Gumbel(0, 1) noise ``g = -log(Exp(1))``; with
    ``hard`` the one-hot of the argmax, with the soft sample's gradient (straight through)."""
    x = _check(logits, "gumbel_softmax")
    if x._data.dtype.kind != "f":
        raise hinted(RuntimeError(with_hint(
            "Exponential distribution is a continuous probability distribution. dtype must be "
            f"a floating point but you specified {_type_name(x._data.dtype)}",
            "pass float logits")))
    if eps != 1e-10:
        warnings.warn("`eps` parameter is deprecated and has no effect.", UserWarning,
                      stacklevel=2)
    from .._random import gen

    e = gen(None).exponential(x._data.size, x._data.dtype).reshape(x._data.shape)
    with np.errstate(divide="ignore"):
        gumbels = make(-np.log(e), None, False, TORCH)
    y = softmax(core.divide(core.add(x, gumbels), tau), dim)
    if not hard:
        return y
    d = _axis(dim, max(y._data.ndim, 1))
    idx = np.argmax(y._data, axis=d) if y._data.ndim else np.zeros((), np.int64)
    hard_arr = np.zeros(y._data.shape, y._data.dtype)
    if y._data.ndim:
        np.put_along_axis(hard_arr, np.expand_dims(idx, d), 1.0, axis=d)
    else:
        hard_arr[...] = 1.0
    y_hard = make(hard_arr, None, False, TORCH)
    return core.add(core.subtract(y_hard, y.detach()), y)


def softmax2d_check(input: Tensor) -> None:
    nd = input._data.ndim
    if nd not in (3, 4):
        raise hinted(ValueError(with_hint(
            f"Softmax2d: expected input to be 3D or 4D, got {nd}D instead",
            "pass (C, H, W) or (N, C, H, W)")))


# ----------------------------------------------------------------------------- losses
def huber_loss(input: Tensor, target: Tensor, reduction: str = "mean", delta: float = 1.0,
               weight: Tensor | None = None) -> Tensor:
    """``0.5 d^2`` where ``|d| < delta``, ``delta (|d| - 0.5 delta)`` elsewhere."""
    x = _kernel_float(_check(input, "huber_loss"), "huber_cpu")
    if weight is None:
        r = _reduction(reduction)
    _target_size_warning(x, target)
    O._broadcast_check(x, target)
    if weight is None:
        return K.huber_loss_op(x, target, reduction=r,
                               delta=float(delta))
    v = K.huber_loss_op(x, target, reduction="none", delta=float(delta))
    if tuple(weight._data.shape) != tuple(x._data.shape):
        raise hinted(ValueError(with_hint("Weights and input must have the same size.",
                                          f"input {list(x._data.shape)}")))
    v = core.multiply(v, weight)
    if reduction not in ("none", "sum", "mean"):
        raise hinted(ValueError(with_hint(
            f"Invalid reduction mode: {reduction}. Expected one of 'none', 'mean', 'sum'.",
            "use 'mean', 'sum' or 'none'")))
    return _reduce(v, reduction)


def _same_dims(fn: str, *ts: tuple[str, Tensor]) -> None:
    if len({t._data.ndim for _, t in ts}) > 1:
        sizes = ", ".join(f"{n}: {Size(t._data.shape)}" for n, t in ts)
        raise hinted(RuntimeError(with_hint(
            f"{fn} : All input tensors should have same dimension but got sizes: {sizes} ",
            "pass inputs and target with the same number of dimensions")))


def margin_ranking_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0,
                        size_average: Any = None, reduce: Any = None,
                        reduction: str = "mean") -> Tensor:
    """``max(0, -target * (input1 - input2) + margin)``."""
    r = _reduction(reduction, size_average, reduce)
    _same_dims("margin_ranking_loss", ("input1", input1), ("input2", input2),
               ("target", target))
    v = core.add(core.multiply(core.negative(target), core.subtract(input1, input2)),
                 float(margin))
    return _reduce(O.clamp_min(v, 0), r)


def hinge_embedding_loss(input: Tensor, target: Tensor, margin: float = 1.0,
                         size_average: Any = None, reduce: Any = None,
                         reduction: str = "mean") -> Tensor:
    """``x`` where ``target == 1``, ``max(0, margin - x)`` where ``target == -1``."""
    x = _check(input, "hinge_embedding_loss")
    r = _reduction(reduction, size_average, reduce)
    zeros = _zeros(x)
    mc = O.clamp_min(core.subtract(float(margin), x), 0)
    om = core.where(core.not_equal(target, 1), mc, zeros)
    os_ = core.where(core.not_equal(target, -1), x, zeros)
    return _reduce(core.add(om, os_), r)


def soft_margin_loss(input: Tensor, target: Tensor, size_average: Any = None,
                     reduce: Any = None, reduction: str = "mean") -> Tensor:
    """``log(1 + exp(-target * input))``."""
    x = _check(input, "soft_margin_loss")
    r = _reduction(reduction, size_average, reduce)
    _not_differentiable(target, "soft_margin_loss")
    O._broadcast_check(x, target)
    return K.soft_margin_loss_op(x, target, reduction=r)


def _not_differentiable(target: Any, fn: str) -> None:
    from ..._core import mode

    if isinstance(target, Tensor) and target.requires_grad and mode.is_grad_enabled():
        raise hinted(RuntimeError(with_hint(
            f"The function '{fn}' is not differentiable with respect to argument 'target'. "
            "This input cannot have requires_grad True.", "pass target.detach()")))


def multilabel_soft_margin_loss(input: Tensor, target: Tensor, weight: Tensor | None = None,
                                size_average: Any = None, reduce: Any = None,
                                reduction: str = "mean") -> Tensor:
    """``-(t log sigmoid(x) + (1 - t) log sigmoid(-x))`` averaged over the classes."""
    x = _check(input, "multilabel_soft_margin_loss")
    if size_average is not None or reduce is not None:
        reduction = _reduction(reduction, size_average, reduce)
    loss = core.negative(core.add(core.multiply(target, logsigmoid(x)),
                                  core.multiply(core.subtract(1.0, target),
                                                logsigmoid(core.negative(x)))))
    if weight is not None:
        loss = core.multiply(loss, weight)
    cd = x._data.ndim - 1
    c = x._data.shape[cd]
    loss = core.divide(core.sum(loss, axis=cd), float(c))
    if reduction not in ("none", "mean", "sum"):
        raise hinted(ValueError(with_hint(reduction + " is not valid",
                                          "use 'mean', 'sum' or 'none'")))
    return _reduce(loss, reduction)


def _targets_np(target: Any) -> np.ndarray:
    return target._data if isinstance(target, Tensor) else np.asarray(target)


def multi_margin_loss(input: Tensor, target: Tensor, p: int = 1, margin: float = 1.0,
                      weight: Tensor | None = None, size_average: Any = None,
                      reduce: Any = None, reduction: str = "mean") -> Tensor:
    """``sum_{j != y} max(0, margin - x[y] + x[j])^p / C`` per sample (times ``weight[y]``)."""
    x = _check(input, "multi_margin_loss")
    r = _reduction(reduction, size_average, reduce)
    if p not in (1, 2):
        raise hinted(ValueError(with_hint("only p == 1 and p == 2 supported",
                                          "pass p=1 or p=2")))
    t = _targets_np(target)
    nd = x._data.ndim
    if nd > 2 or (nd == 2 and x._data.shape[1] == 0) or (nd <= 1 and x._data.size == 0):
        raise hinted(RuntimeError(with_hint(
            f"Expected non-empty vector or matrix with optional 0-dim batch size, but got: "
            f"{list(x._data.shape)}", "pass (C,) or (N, C) scores")))
    x2 = core.reshape(x, (1, -1)) if nd <= 1 else x
    n, c = x2._data.shape
    tf = t.reshape(-1).astype(np.int64)
    if tf.size != n or t.ndim > 1:
        raise hinted(RuntimeError(with_hint(
            "multi_margin_loss: target tensor should be 1-D with size equal to the number of "
            f"input samples (batch size). Expected target size [{n}], but got "
            f"{list(t.shape)}. Input has shape {list(x._data.shape)}.",
            "one class index per sample")))
    if tf.size and (tf.min() < 0 or tf.max() >= c):
        raise hinted(RuntimeError(with_hint("target out of range",
                                            f"class indices must be in [0, {c - 1}]")))
    w = None if weight is None else np.asarray(weight._data)
    return K.multi_margin_loss_op(x, target=tf, p=int(p), margin=float(margin), weight=w,
                                  reduction=r, out_shape=tuple(t.shape) if nd <= 1 else (n,))


def multilabel_margin_loss(input: Tensor, target: Tensor, size_average: Any = None,
                           reduce: Any = None, reduction: str = "mean") -> Tensor:
    """``sum_{j in y, k not in y} max(0, 1 - (x[j] - x[k])) / C``; ``target`` lists each
    sample's classes, ended by the first ``-1``."""
    x = _check(input, "multilabel_margin_loss")
    r = _reduction(reduction, size_average, reduce)
    t = _targets_np(target)
    nd = x._data.ndim
    if nd > 2 or (nd == 2 and x._data.shape[1] == 0) or (nd <= 1 and x._data.size == 0):
        raise hinted(RuntimeError(with_hint(
            f"Expected non-empty vector or matrix with optional 0-dim batch size, but got: "
            f"{list(x._data.shape)}", "pass (C,) or (N, C) scores")))
    if t.shape != x._data.shape:
        raise hinted(RuntimeError(with_hint(
            f"inconsistent target size: {list(t.shape)} for input of size: "
            f"{list(x._data.shape)}", "target is shaped like the input")))
    c = x._data.shape[-1]
    t2 = t.reshape(-1, c).astype(np.int64)
    for i in range(t2.shape[0]):
        for v in t2[i]:
            if v < 0:
                break
            if v >= c:
                raise hinted(RuntimeError(with_hint(
                    f"target index {v} is out of range", f"classes are [0, {c - 1}]")))
    return K.multilabel_margin_loss_op(x, target=t2, reduction=r,
                                       out_shape=() if nd <= 1 else (t2.shape[0],))


def cosine_embedding_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0,
                          size_average: Any = None, reduce: Any = None,
                          reduction: str = "mean") -> Tensor:
    """``1 - cos(x1, x2)`` where ``target == 1``, ``max(0, cos - margin)`` where ``-1``."""
    r = _reduction(reduction, size_average, reduce)
    nd1, nd2 = input1._data.ndim, input2._data.ndim
    tdim = target._data.ndim
    if tdim > 1:
        raise hinted(RuntimeError(with_hint(
            "0D or 1D target tensor expected, multi-target not supported",
            "target is (N,) for (N, D) inputs, () for (D,)")))
    if nd1 != tdim + 1 or nd2 != tdim + 1:
        raise hinted(RuntimeError(with_hint(
            f"{tdim}D target tensor expects {tdim + 1}D input tensors, but found inputs with "
            f"sizes {list(input1._data.shape)} and {list(input2._data.shape)}.",
            "target is (N,) for (N, D) inputs, () for (D,)")))
    d = tdim
    eps = 1e-12
    prod = core.sum(core.multiply(input1, input2), axis=d)
    m1 = core.add(core.sum(core.multiply(input1, input1), axis=d), eps)
    m2 = core.add(core.sum(core.multiply(input2, input2), axis=d), eps)
    cos = core.divide(prod, core.sqrt(core.multiply(m1, m2)))
    zeros = _zeros(cos)
    pos = core.subtract(1.0, cos)
    neg = O.clamp_min(core.subtract(cos, float(margin)), 0)
    out = core.add(core.where(core.equal(target, 1), pos, zeros),
                   core.where(core.equal(target, -1), neg, zeros))
    return _reduce(out, r)


def poisson_nll_loss(input: Tensor, target: Tensor, log_input: bool = True, full: bool = False,
                     size_average: Any = None, eps: float = 1e-8, reduce: Any = None,
                     reduction: str = "mean") -> Tensor:
    """``exp(x) - t x`` (``log_input``) or ``x - t log(x + eps)``, plus Stirling's term for
    ``t > 1`` with ``full``."""
    x = _check(input, "poisson_nll_loss")
    if size_average is not None or reduce is not None:
        reduction = _reduction(reduction, size_average, reduce)
    if reduction not in ("none", "mean", "sum"):
        raise hinted(ValueError(with_hint(reduction + " is not a valid value for reduction",
                                          "use 'mean', 'sum' or 'none'")))
    if log_input:
        loss = core.subtract(core.exp(x), core.multiply(target, x))
    else:
        loss = core.subtract(x, core.multiply(target, core.log(core.add(x, eps))))
    if full:
        tt = target if isinstance(target, Tensor) else _t(target, x)
        with np.errstate(all="ignore"):
            st = core.add(core.subtract(core.multiply(tt, core.log(tt)), tt),
                          core.multiply(core.log(core.multiply(tt, 2 * math.pi)), 0.5))
        st = core.where(core.less_equal(tt, 1),
                        make(np.zeros((), st._data.dtype), None, False, TORCH), st)
        loss = core.add(loss, st)
    return _reduce(loss, reduction)


def gaussian_nll_loss(input: Tensor, target: Tensor, var: Any, full: bool = False,
                      eps: float = 1e-6, reduction: str = "mean") -> Tensor:
    """``0.5 (log(max(var, eps)) + (x - t)^2 / max(var, eps))`` (+ ``0.5 log 2 pi``); the
    clamp is not differentiated (PyTorch clamps under ``no_grad``)."""
    x = _check(input, "gaussian_nll_loss")
    if isinstance(var, float):
        if var < 0:
            raise ValueError("var has negative entry/entries")
        var = make(np.full(x._data.shape, var, x._data.dtype), None, False, TORCH)
    elif np.any(var._data < 0):
        raise ValueError("var has negative entry/entries")
    xs, vs = tuple(x._data.shape), tuple(var._data.shape)
    if vs != xs:
        if xs[:-1] == vs:
            var = core.expand_dims(var, -1)
        elif len(xs) == len(vs) and sum(b for a, b in zip(xs, vs) if a != b) == 1:
            pass
        else:
            raise ValueError("var is of incorrect size")
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not valid")
    # var.clone(); with no_grad: var.clamp_(min=eps): the values clamped, the gradient not
    clamped = np.maximum(var._data, np.asarray(eps, var._data.dtype))
    var = core.add(var, make(clamped - var._data, None, False, TORCH))
    d = core.subtract(x, target)
    loss = core.multiply(core.add(core.log(var), core.divide(core.multiply(d, d), var)), 0.5)
    if full:
        loss = core.add(loss, 0.5 * math.log(2 * math.pi))
    return _reduce(loss, reduction)


def _dist_checks(anchor: Tensor, positive: Tensor, negative: Tensor) -> None:
    a, p, n = anchor._data.ndim, positive._data.ndim, negative._data.ndim
    if not (a == p == n):
        raise hinted(RuntimeError(with_hint(
            "The anchor, positive, and negative tensors are expected to have the same number "
            f"of dimensions, but got: anchor {a}D, positive {p}D, and negative {n}D inputs",
            "pass tensors of the same rank")))


def triplet_margin_loss(anchor: Tensor, positive: Tensor, negative: Tensor,
                        margin: float = 1.0, p: float = 2, eps: float = 1e-6,
                        swap: bool = False, size_average: Any = None, reduce: Any = None,
                        reduction: str = "mean") -> Tensor:
    """``max(d(a, p) - d(a, n) + margin, 0)`` with ``d`` the pairwise ``p``-distance."""
    r = _reduction(reduction, size_average, reduce)
    _dist_checks(anchor, positive, negative)
    dp = FC.pairwise_distance(anchor, positive, p, eps)
    dn = FC.pairwise_distance(anchor, negative, p, eps)
    if swap:
        ds = FC.pairwise_distance(positive, negative, p, eps)
        dn = O.minimum(dn, ds)
    return _reduce(O.clamp_min(core.add(core.subtract(dp, dn), float(margin)), 0), r)


def triplet_margin_with_distance_loss(
        anchor: Tensor, positive: Tensor, negative: Tensor, *,
        distance_function: Callable[[Tensor, Tensor], Tensor] | None = None,
        margin: float = 1.0, swap: bool = False, reduction: str = "mean") -> Tensor:
    """``max(d(a, p) - d(a, n) + margin, 0)`` with any distance function."""
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    _dist_checks(anchor, positive, negative)
    dist = distance_function if distance_function is not None else FC.pairwise_distance
    dp = dist(anchor, positive)
    dn = dist(anchor, negative)
    if swap:
        dn = O.minimum(dn, dist(positive, negative))
    return _reduce(O.clamp_min(core.add(core.subtract(dp, dn), float(margin)), 0), reduction)


def _lengths(v: Any, fn: str) -> np.ndarray:
    a = v._data if isinstance(v, Tensor) else np.asarray(v)
    return a.astype(np.int64).reshape(-1)


def ctc_loss(log_probs: Tensor, targets: Tensor, input_lengths: Any, target_lengths: Any,
             blank: int = 0, reduction: str = "mean", zero_infinity: bool = False) -> Tensor:
    """Connectionist temporal classification loss of ``(T, N, C)`` (or ``(T, C)``)
    log-probabilities; one op with PyTorch's forward/backward (alpha-beta) algorithm."""
    from ...ops.nn_more import ctc_loss_op

    lp = _check(log_probs, "ctc_loss")
    r = _reduction(reduction)
    batched = lp._data.ndim == 3
    if lp._data.ndim not in (2, 3):
        raise hinted(RuntimeError(with_hint(
            f"ctc_loss(): log_probs must be 2-D (T, C) or 3-D (T, N, C), got "
            f"{lp._data.ndim}-D", "pass (T, N, C) log-probabilities")))
    x = lp if batched else core.expand_dims(lp, 1)
    t_arr = _targets_np(targets)
    il = _lengths(input_lengths, "input_lengths")
    tl = _lengths(target_lengths, "target_lengths")
    if not batched and t_arr.ndim == 1:
        t_arr = t_arr.reshape(1, -1)
    tmax, n, c = x._data.shape
    if not 0 <= blank < c:
        raise hinted(RuntimeError(with_hint("blank must be in label range",
                                            f"blank in [0, {c - 1}]")))
    if il.size != n:
        raise hinted(RuntimeError(with_hint(
            "input_lengths must be of size batch_size",
            f"batch size {n}")))
    if tl.size != n:
        raise hinted(RuntimeError(with_hint(
            "target_lengths must be of size batch_size",
            f"batch size {n}")))
    for b in range(n):
        if il[b] > tmax:
            raise hinted(RuntimeError(with_hint(
                f"Expected input_lengths to have value at most {tmax}, but got value "
                f"{il[b]} (while checking arguments for ctc_loss_allocate_outputs)",
                "input lengths are at most T")))
    if t_arr.ndim == 2:
        tgt = [t_arr[b, :tl[b]].astype(np.int64) for b in range(n)]
        for b in range(n):
            if tl[b] > t_arr.shape[1]:
                raise hinted(RuntimeError(with_hint(
                    f"Expected tensor to have size at least {tl[b]} at dimension 1, but got "
                    f"size {t_arr.shape[1]} for argument #2 'targets' (while checking "
                    "arguments for ctc_loss_allocate_outputs)", "targets are (N, S) padded")))
    else:
        offs = np.concatenate([[0], np.cumsum(tl)])
        tgt = [t_arr[offs[b]:offs[b + 1]].astype(np.int64) for b in range(n)]
    out = ctc_loss_op(x, targets=tuple(tuple(int(v) for v in t) for t in tgt),
                      input_lengths=tuple(int(v) for v in il), blank=int(blank),
                      zero_infinity=bool(zero_infinity))
    if r == "mean":
        div = np.maximum(tl, 1).astype(out._data.dtype)
        return core.mean(core.divide(out, make(div, None, False, TORCH)))
    if r == "sum":
        return core.sum(out)
    return out if batched else core.reshape(out, ())


# ----------------------------------------------------------------------------- layers
def _pixel_checks(input: Tensor, name: str, arg: str, factor: int) -> tuple[Tensor, int]:
    """The checks ``pixel_shuffle`` and ``pixel_unshuffle`` share: at least 3 dimensions and a
    positive factor (PyTorch's texts); returns the tensor and the factor."""
    x = _check(input, name)
    nd = x._data.ndim
    r = int(factor)
    if nd < 3:
        raise hinted(RuntimeError(with_hint(
            f"{name} expects input to have at least 3 dimensions, but got input with "
            f"{nd} dimension(s)", "pass (*, C, H, W)")))
    if r <= 0:
        raise hinted(RuntimeError(with_hint(
            f"{name} expects a positive {arg}, but got {r}", f"pass {arg} >= 1")))
    return x, r


def pixel_shuffle(input: Tensor, upscale_factor: int) -> Tensor:
    """``(*, C r^2, H, W) -> (*, C, H r, W r)``."""
    x, r = _pixel_checks(input, "pixel_shuffle", "upscale_factor", upscale_factor)
    c = x._data.shape[-3]
    if c % (r * r):
        raise hinted(RuntimeError(with_hint(
            f"pixel_shuffle expects its input's 'channel' dimension to be divisible by the "
            f"square of upscale_factor, but input.size(-3)={c} is not divisible by {r * r}",
            "channels must be a multiple of upscale_factor ** 2")))
    return K.pixel_shuffle_op(x, r=r)


def pixel_unshuffle(input: Tensor, downscale_factor: int) -> Tensor:
    """``(*, C, H r, W r) -> (*, C r^2, H, W)``."""
    x, r = _pixel_checks(input, "pixel_unshuffle", "downscale_factor", downscale_factor)
    for what, d, n in (("height", -2, x._data.shape[-2]), ("width", -1, x._data.shape[-1])):
        if n % r:
            raise hinted(RuntimeError(with_hint(
                f"pixel_unshuffle expects {what} to be divisible by downscale_factor, but "
                f"input.size({d})={n} is not divisible by {r}", f"{what} must be a multiple")))
    return K.pixel_unshuffle_op(x, r=r)


def channel_shuffle(input: Tensor, groups: int) -> Tensor:
    """``(N, g * k, *) -> (N, k * g, *)``: channels regrouped."""
    x = _check(input, "channel_shuffle")
    s = x._data.shape
    g = int(groups)
    if g <= 0:
        raise hinted(RuntimeError(with_hint(
            f"Number of groups to divide channels in must be positive. Value of groups:{g}",
            "pass groups >= 1")))
    if len(s) <= 2:
        raise hinted(RuntimeError(with_hint(
            f"channel_shuffle expects input with > 2 dims, but got input with sizes "
            f"{list(s)}", "pass (N, C, *)")))
    c = s[1]
    if c % g:
        raise hinted(RuntimeError(with_hint(
            f"Number of channels must be divisible by groups. Got {c} channels and {g} groups.",
            "channels must be a multiple of groups")))
    return K.channel_shuffle_op(x, groups=g)


def native_channel_shuffle(input: Tensor, groups: int) -> Tensor:
    return channel_shuffle(input, groups)


def local_response_norm(input: Tensor, size: int, alpha: float = 1e-4, beta: float = 0.75,
                        k: float = 1.0) -> Tensor:
    """``x / (k + alpha * mean of x^2 over size neighbouring channels)^beta``."""
    x = _check(input, "local_response_norm")
    dim = x._data.ndim
    if dim < 3:
        raise ValueError(f"Expected 3D or higher dimensionality                          input "
                         f"(got {dim} dimensions)")
    if x._data.size == 0:
        return x
    from .functional import pad

    div = core.multiply(x, x)
    if dim == 3:
        div = core.expand_dims(div, 1)
        div = pad(div, (0, 0, size // 2, (size - 1) // 2))
        div = core.squeeze(FC.avg_pool2d(div, (size, 1), stride=1), 1)
    else:
        s = x._data.shape
        div = core.reshape(div, (s[0], 1, s[1], s[2], -1))
        div = pad(div, (0, 0, 0, 0, size // 2, (size - 1) // 2))
        div = core.squeeze(FC.avg_pool3d(div, (size, 1, 1), stride=1), 1)
        div = core.reshape(div, s)
    div = core.power(core.add(core.multiply(div, alpha), k), beta)
    return core.divide(x, div)


def pdist(input: Tensor, p: float = 2) -> Tensor:
    """The ``p``-norm distances between the rows of an ``(N, M)`` input, for ``i < j``."""
    x = _check(input, "pdist")
    if x._data.ndim != 2:
        raise hinted(RuntimeError(with_hint(
            f"pdist only supports 2D tensors, got: {x._data.ndim}D", "pass (N, M)")))
    if p < 0:
        raise hinted(RuntimeError(with_hint("pdist only supports non-negative p values",
                                            "pass p >= 0")))
    return K.pdist_op(x, p=float(p))


def _lp_out(out: Tensor, mul: int, norm_type: float) -> Tensor:
    v = core.multiply(core.multiply(core.sign(out), core.relu(core.abs(out))), float(mul))
    return core.power(v, 1.0 / norm_type)


def lp_pool1d(input: Tensor, norm_type: float, kernel_size: int, stride: Any = None,
              ceil_mode: bool = False) -> Tensor:
    """``(sum over the window of x^p)^(1/p)``."""
    x = _check(input, "lp_pool1d")
    if norm_type == float("inf"):
        return FC.max_pool1d(core.abs(x), kernel_size, stride, 0, 1, ceil_mode)
    if norm_type == -float("inf"):
        return core.negative(FC.max_pool1d(core.negative(core.abs(x)), kernel_size, stride, 0,
                                           1, ceil_mode))
    xp = core.power(x, norm_type)
    out = FC.avg_pool1d(xp, kernel_size, stride, 0, ceil_mode) if stride is not None else \
        FC.avg_pool1d(xp, kernel_size, padding=0, ceil_mode=ceil_mode)
    k = kernel_size[0] if isinstance(kernel_size, (tuple, list)) else kernel_size
    return _lp_out(out, int(k), norm_type)


def lp_pool2d(input: Tensor, norm_type: float, kernel_size: Any, stride: Any = None,
              ceil_mode: bool = False) -> Tensor:
    """``(sum over the window of x^p)^(1/p)`` over 2-d windows."""
    x = _check(input, "lp_pool2d")
    kw, kh = (kernel_size, kernel_size) if isinstance(kernel_size, int) else kernel_size
    if norm_type == float("inf"):
        return FC.max_pool2d(core.abs(x), kernel_size, stride, 0, 1, ceil_mode)
    if norm_type == -float("inf"):
        return core.negative(FC.max_pool2d(core.negative(core.abs(x)), kernel_size, stride, 0,
                                           1, ceil_mode))
    xp = core.power(x, norm_type)
    out = FC.avg_pool2d(xp, kernel_size, stride, 0, ceil_mode) if stride is not None else \
        FC.avg_pool2d(xp, kernel_size, padding=0, ceil_mode=ceil_mode)
    return _lp_out(out, int(kw) * int(kh), norm_type)


def _type_repr(v: Any) -> str:
    return "<class 'torch.Tensor'>" if isinstance(v, Tensor) else str(type(v))


def embedding_bag(input: Tensor, weight: Tensor, offsets: Tensor | None = None,
                  max_norm: float | None = None, norm_type: float = 2,
                  scale_grad_by_freq: bool = False, mode: str = "mean", sparse: bool = False,
                  per_sample_weights: Tensor | None = None, include_last_offset: bool = False,
                  padding_idx: int | None = None) -> Tensor:
    """Sums, means or maxima of bags of rows of ``weight``: a 2-D ``input`` is one bag per
    row, a 1-D one is cut into bags at ``offsets``; empty bags give zeros.  One
    ``EmbeddingBagBackward0`` node (:func:`tapegrad.ops.nn_more.embedding_bag_op`)."""
    it = _check(input, "embedding_bag")
    if mode not in ("sum", "mean", "max"):
        raise hinted(ValueError(with_hint("mode has to be one of sum, mean or max",
                                          "use 'sum', 'mean' or 'max'")))
    if per_sample_weights is not None and mode != "sum":
        raise hinted(NotImplementedError(with_hint(
            "embedding_bag: per_sample_weights was not None. per_sample_weights is only "
            f"supported for mode='sum' (got mode='{mode}'). Please open a feature request on "
            "GitHub.", "use mode='sum' with per_sample_weights")))
    idx = it._data
    if idx.ndim == 2:
        if offsets is not None:
            raise hinted(ValueError(with_hint(
                "if input is 2D, then offsets has to be None, as input is treated is a "
                "mini-batch of fixed length sequences. However, found offsets of type "
                f"{_type_repr(offsets)}", "drop offsets")))
        starts = np.arange(0, idx.size, max(idx.shape[1], 1))[:idx.shape[0]]
        flat = idx.reshape(-1)
        if per_sample_weights is not None:
            per_sample_weights = core.reshape(per_sample_weights, (-1,))
    elif idx.ndim == 1:
        if offsets is None:
            raise hinted(ValueError(with_hint("offsets has to be a 1D Tensor but got None",
                                              "pass the bag start offsets")))
        if offsets._data.ndim != 1:
            raise hinted(ValueError(with_hint("offsets has to be a 1D Tensor",
                                              "pass the bag start offsets")))
        starts = offsets._data.astype(np.int64, copy=False)
        if include_last_offset:
            starts = starts[:-1]
        flat = idx
    else:
        raise hinted(ValueError(with_hint(
            f"input has to be 1D or 2D Tensor, but got Tensor of dimension {idx.ndim}",
            "pass (B, L) indices or 1-D indices with offsets")))
    rows = weight._data.shape[0]
    if padding_idx is not None:
        if not -rows <= padding_idx < rows:
            raise hinted(AssertionError(with_hint("padding_idx must be within num_embeddings",
                                                  f"0 <= padding_idx < {rows}")))
        padding_idx = padding_idx % rows
    if flat.dtype.kind not in "iu":
        raise hinted(RuntimeError(with_hint(
            "Expected tensor for argument #1 'indices' to have one of the following scalar "
            f"types: Long, Int; but got torch.{_type_name(flat.dtype)}Tensor instead (while "
            "checking arguments for embedding_bag)", "indices must be integers")))
    bad = np.flatnonzero((flat < 0) | (flat >= rows))
    if bad.size:
        raise hinted(RuntimeError(with_hint(
            f"Index {int(bad[0])} of input takes value {int(flat[bad[0]])} which is not in the "
            f"valid range [0, {rows})", f"indices must be in [0, {rows - 1}]")))
    if max_norm is not None:  # the rows looked up are renormalised in place first
        FC.embedding(make(flat, None, False, TORCH), weight, None, max_norm, norm_type)
    ends = list(starts[1:]) + [flat.size] if include_last_offset is False or idx.ndim == 2 \
        else list(offsets._data[1:])  # type: ignore[union-attr]
    nb = len(starts)
    bag = np.full(flat.size, -1, dtype=np.int64)
    for b, (a, e) in enumerate(zip(starts, ends)):
        bag[int(a):int(e)] = b
    if padding_idx is not None:
        bag[flat == padding_idx] = -1
    plan = K.BagPlan(flat.astype(np.int64), bag, nb, mode)
    if per_sample_weights is not None:
        return K.embedding_bag_psw_op(weight, core.reshape(per_sample_weights, (-1,)),
                                      plan=plan)
    return K.embedding_bag_op(weight, plan=plan)


def _intervals(sample: np.ndarray, in_size: int, out_size: int, pool: int) -> np.ndarray:
    """ATen's ``generate_intervals``: the window starts of each plane (``sample``: one
    U(0, 1) per plane), in the input's float arithmetic."""
    dt = sample.dtype.type
    seq = np.empty(sample.shape + (out_size,), dtype=np.int64)
    if out_size > 1:
        alpha = dt(in_size - pool) / dt(out_size - 1)
        i = np.arange(out_size - 1, dtype=sample.dtype)
        a = ((i + sample[..., None]) * alpha).astype(np.int64)
        seq[..., :-1] = a - (sample[..., None] * alpha).astype(np.int64)
    if out_size > 0:
        seq[..., -1] = in_size - pool
    return seq


def fractional_max_pool2d(input: Tensor, kernel_size: Any, output_size: Any = None,
                          output_ratio: Any = None, return_indices: bool = False,
                          _random_samples: Tensor | None = None) -> Any:
    """Max pooling over pseudo-random windows (Graham's fractional max pooling): one
    U(0, 1) pair per plane, drawn from the torch generator as PyTorch draws them, places the
    windows; the gradient goes to each window's (first) maximum."""
    x = _check(input, "fractional_max_pool2d")
    if output_size is None and output_ratio is None:
        raise ValueError("fractional_max_pool2d requires specifying either an output_size or "
                         "an output_ratio")
    nd = x._data.ndim
    if nd not in (3, 4):
        raise hinted(RuntimeError(with_hint(
            f"fractional_max_pool2d(): Expected 3D or 4D tensor, but got: "
            f"{list(x._data.shape)}", "pass (C, H, W) or (N, C, H, W)")))
    kh, kw = (kernel_size, kernel_size) if isinstance(kernel_size, int) else kernel_size
    ih, iw = x._data.shape[-2:]
    if output_size is None:
        ratio = (output_ratio, output_ratio) if isinstance(output_ratio, (int, float)) \
            else tuple(output_ratio)
        if len(ratio) > 2:
            raise ValueError("fractional_max_pool2d requires output_ratio to either be a single "
                             "Int or tuple of Ints.")
        oh, ow = int(ih * ratio[0]), int(iw * ratio[1])
    else:
        oh, ow = (output_size, output_size) if isinstance(output_size, int) else output_size
    nb = 1 if nd == 3 else x._data.shape[0]
    c = x._data.shape[-3]
    if _random_samples is None:
        from .._random import gen

        samples = gen(None).uniform(nb * c * 2, x._data.dtype).reshape(nb, c, 2)
    else:
        samples = np.asarray(_random_samples._data)
    if oh + kh - 1 > ih:
        raise hinted(RuntimeError(with_hint(
            f"fractional_max_pool2d(): pool height {kh} too large relative to input height "
            f"{ih}", "output_size + kernel_size - 1 must not exceed the input size")))
    if ow + kw - 1 > iw:
        raise hinted(RuntimeError(with_hint(
            f"fractional_max_pool2d(): pool width {kw} too large relative to input width "
            f"{iw}", "output_size + kernel_size - 1 must not exceed the input size")))
    x4 = x if nd == 4 else core.expand_dims(x, 0)
    sw = _intervals(samples[..., 0], iw, ow, kw)  # (N, C, ow)
    sh = _intervals(samples[..., 1], ih, oh, kh)  # (N, C, oh)
    rows = sh[:, :, :, None, None, None] + np.arange(kh)[:, None]  # (N, C, oh, 1, kh, 1)
    cols = sw[:, :, None, :, None, None] + np.arange(kw)  # (N, C, 1, ow, 1, kw)
    pos = (rows * iw + cols).reshape(nb, c, oh, ow, kh * kw)
    flat = x4._data.reshape(nb, c, ih * iw)
    ni = np.arange(nb)[:, None, None, None, None]
    ci = np.arange(c)[None, :, None, None, None]
    vals = flat[ni, ci, pos]
    best = np.argmax(np.where(np.isnan(vals), np.inf, vals), axis=-1)
    idx = np.take_along_axis(pos, best[..., None], -1)[..., 0]  # (N, C, oh, ow)
    y = _FMP_GATHER(core.reshape(x4, (nb, c, ih * iw)),
                                   index=(ni[..., 0], ci[..., 0], idx))
    ind = make(idx, None, False, TORCH)
    if nd == 3:
        y = _FMP_GATHER(core.reshape(x, (c, ih * iw)),
                                       index=(ci[0, :, :, :, 0], idx[0]))
        ind = make(idx[0], None, False, TORCH)
    return (y, ind) if return_indices else y


def fractional_max_pool2d_with_indices(input: Tensor, kernel_size: Any, output_size: Any = None,
                                       output_ratio: Any = None, return_indices: bool = False,
                                       _random_samples: Tensor | None = None) -> Any:
    return fractional_max_pool2d(input, kernel_size, output_size, output_ratio, True,
                                 _random_samples)


# ----------------------------------------------------------------------------- sampling
_ALIGN_WARN = ("Default grid_sample and affine_grid behavior has changed to align_corners=False "
               "since 1.3.0. Please specify align_corners=True if the old behavior is desired. "
               "See the documentation of grid_sample for details.")


def _base_coords(n: int, align: bool, dtype: np.dtype) -> np.ndarray:
    from .. import linspace

    g = linspace(-1, 1, n, dtype=_torch_dtype(dtype))._data
    if not align:
        g = (g * np.asarray(n - 1, dtype) / np.asarray(n, dtype)).astype(dtype)
    return g


def _torch_dtype(dt: np.dtype) -> Any:
    from .._dtype import from_np

    return from_np(np.dtype(dt))


def affine_grid(theta: Tensor, size: Any, align_corners: bool | None = None) -> Tensor:
    """The sampling grid ``(N, H, W, 2)`` (or ``(N, D, H, W, 3)``) of the affine maps
    ``theta`` ``(N, 2, 3)`` (``(N, 3, 4)``), for :func:`grid_sample`."""
    if align_corners is None:
        warnings.warn(_ALIGN_WARN, UserWarning, stacklevel=2)
        align_corners = False
    th = _check(theta, "affine_grid")
    if th._data.dtype.kind != "f":
        raise ValueError(f"Expected theta to have floating point type, but got {th.dtype}")
    shown = str(size)
    size = [int(s) for s in size]
    ts = th._data.shape
    if len(size) == 4:
        if th._data.ndim != 3 or ts[-2] != 2 or ts[-1] != 3:
            raise ValueError(f"Expected a batch of 2D affine matrices of shape Nx2x3 for size "
                             f"{shown}. Got {Size(ts)}.")
        spatial = size[-2:]
    elif len(size) == 5:
        if th._data.ndim != 3 or ts[-2] != 3 or ts[-1] != 4:
            raise ValueError(f"Expected a batch of 3D affine matrices of shape Nx3x4 for size "
                             f"{shown}. Got {Size(ts)}.")
        spatial = size[-3:]
    else:
        raise NotImplementedError(
            f"affine_grid only supports 4D and 5D sizes, for 2D and 3D affine transforms, "
            f"respectively. Got size {shown}.")
    if min(size) <= 0:
        raise ValueError(f"Expected non-zero, positive output size. Got {shown}")
    dt = th._data.dtype
    n = size[0]
    if len(size) == 4:
        h, w = spatial
        base = np.ones((h, w, 3), dt)
        base[..., 0] = _base_coords(w, align_corners, dt)
        base[..., 1] = _base_coords(h, align_corners, dt)[:, None]
        pts = h * w
        out_shape: tuple[int, ...] = (n, h, w, 2)
    else:
        d, h, w = spatial
        base = np.ones((d, h, w, 4), dt)
        base[..., 0] = _base_coords(w, align_corners, dt)
        base[..., 1] = _base_coords(h, align_corners, dt)[:, None]
        base[..., 2] = _base_coords(d, align_corners, dt)[:, None, None]
        pts = d * h * w
        out_shape = (n, d, h, w, 3)
    b = np.broadcast_to(base.reshape(1, pts, -1), (n, pts, base.shape[-1])).copy()
    return K.affine_grid_op(th, base=b, out_shape=out_shape)


def grid_sample(input: Tensor, grid: Tensor, mode: str = "bilinear",
                padding_mode: str = "zeros", align_corners: bool | None = None) -> Tensor:
    """Sample ``input`` ``(N, C, H, W)`` at the normalised ``grid`` ``(N, Ho, Wo, 2)``
    locations (``x``, ``y`` in ``[-1, 1]``), bilinearly or at the nearest pixel, with
    zeros / border / reflection padding; differentiable in the input and the grid."""
    if mode not in ("bilinear", "nearest", "bicubic"):
        raise ValueError(f"nn.functional.grid_sample(): expected mode to be 'bilinear', "
                         f"'nearest' or 'bicubic', but got: '{mode}'")
    if padding_mode not in ("zeros", "border", "reflection"):
        raise ValueError(f"nn.functional.grid_sample(): expected padding_mode to be 'zeros', "
                         f"'border', or 'reflection', but got: '{padding_mode}'")
    if mode == "bicubic" and input._data.ndim != 4:
        raise ValueError("Bicubic interpolation only supports 4D input")
    if align_corners is None:
        warnings.warn(_ALIGN_WARN, UserWarning, stacklevel=2)
        align_corners = False
    x = _check(input, "grid_sample")
    if x._data.dtype != grid._data.dtype:
        raise hinted(RuntimeError(with_hint(
            f"expected scalar type {_type_name(x._data.dtype)} but found "
            f"{_type_name(grid._data.dtype)}",
            "cast one of them")))
    if x._data.ndim != 4 or grid._data.ndim != 4:
        if x._data.ndim == 5 and grid._data.ndim == 5:
            raise hinted(NotImplementedError(with_hint(
                "grid_sample of 5-D (volumetric) input is not implemented in tapegrad",
                "sample each depth slice with 4-D grid_sample")))
        raise hinted(RuntimeError(with_hint(
            f"grid_sampler(): expected 4D or 5D input and grid with same number of dimensions, "
            f"but got input with sizes {list(x._data.shape)} and grid with sizes "
            f"{list(grid._data.shape)}", "pass (N, C, H, W) input and (N, Ho, Wo, 2) grid")))
    n, c, h, w = x._data.shape
    gn, ho, wo, two = grid._data.shape
    if gn != n:
        raise hinted(RuntimeError(with_hint(
            f"grid_sampler(): expected grid and input to have same batch size, but got input "
            f"with sizes {list(x._data.shape)} and grid with sizes {list(grid._data.shape)}",
            "one grid per input")))
    if two != 2:
        raise hinted(RuntimeError(with_hint(
            f"grid_sampler(): expected grid to have size 2 in last dimension, but got grid "
            f"with sizes {list(grid._data.shape)}", "grid holds (x, y) pairs")))
    if mode == "bicubic":
        raise hinted(NotImplementedError(with_hint(
            "grid_sample(mode='bicubic') is not implemented in tapegrad",
            "use mode='bilinear' or 'nearest'")))
    return K.grid_sampler_2d_op(x, grid, mode=mode, padding=padding_mode,
                                align=bool(align_corners))


__all__: list[str] = [
    "prelu", "glu", "selu", "celu", "hardswish", "hardsigmoid", "softsign", "tanhshrink",
    "softshrink", "hardshrink", "threshold", "threshold_", "relu_", "elu_", "leaky_relu_",
    "hardtanh_", "selu_", "celu_", "rrelu", "rrelu_", "gumbel_softmax", "huber_loss",
    "margin_ranking_loss", "hinge_embedding_loss", "soft_margin_loss",
    "multilabel_soft_margin_loss", "multi_margin_loss", "multilabel_margin_loss",
    "cosine_embedding_loss", "poisson_nll_loss", "gaussian_nll_loss", "triplet_margin_loss",
    "triplet_margin_with_distance_loss", "ctc_loss", "pixel_shuffle", "pixel_unshuffle",
    "channel_shuffle", "native_channel_shuffle", "local_response_norm", "pdist", "lp_pool1d",
    "lp_pool2d", "embedding_bag", "affine_grid", "grid_sample", "fractional_max_pool2d",
    "fractional_max_pool2d_with_indices",
]
