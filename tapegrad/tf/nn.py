"""``tf.nn``: activations and losses under TensorFlow's names.

Composites follow TensorFlow's own formulas where the gradient at a boundary
depends on the formula (``sigmoid_cross_entropy_with_logits`` at logits 0,
``moments``' stop-gradient on the mean); ``softplus`` and ``relu6`` are ops
with TensorFlow's gradients (``sigmoid(x)``; 0 at both kinks of relu6).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import ops
from .._core.errors import hinted, with_hint
from .._core.tensor import Tensor
from ..ops.fused import nll_traced_op, relu6_op, softplus_op
from ._ops import (
    _int,
    _invalid,
    _pow,
    erfc,
    gather,
    reduce_mean,
    reduce_sum,
    sigmoid,
    stop_gradient,
    tanh,
)
from ._tensor import binary_args, convert, convert_like, ensure_float, tft

__all__ = [
    "relu", "relu6", "leaky_relu", "elu", "selu", "gelu", "silu", "swish", "sigmoid", "tanh",
    "softplus", "softsign", "softmax", "log_softmax", "sigmoid_cross_entropy_with_logits",
    "softmax_cross_entropy_with_logits", "sparse_softmax_cross_entropy_with_logits", "l2_loss",
    "l2_normalize", "bias_add", "dropout", "moments", "embedding_lookup",
]


def _t(x: Any) -> Tensor:
    return convert(x)


def relu(features: Any, name: str | None = None) -> Tensor:
    """``max(x, 0)``; gradient 0 at 0.

    >>> import tapegrad.tf as tf
    >>> tf.nn.relu(tf.constant([-1.0, 2.0])).numpy()
    array([0., 2.], dtype=float32)
    """
    return ops.relu(_t(features))


_relu6 = relu6_op


def relu6(features: Any, name: str | None = None) -> Tensor:
    """``min(max(x, 0), 6)``; gradient 0 at both 0 and 6 (as TensorFlow).

    >>> import tapegrad.tf as tf
    >>> tf.nn.relu6(tf.constant([-1.0, 3.0, 8.0]))
    <tf.Tensor: shape=(3,), dtype=float32, numpy=array([0., 3., 6.], dtype=float32)>
    """
    return _relu6(_t(features))


def leaky_relu(features: Any, alpha: float = 0.2, name: str | None = None) -> Tensor:
    """``x`` for ``x > 0``, ``alpha * x`` otherwise (TensorFlow's default alpha 0.2).

    >>> import tapegrad.tf as tf
    >>> tf.nn.leaky_relu(tf.constant([-1.0, 2.0]))
    <tf.Tensor: shape=(2,), dtype=float32, numpy=array([-0.2,  2. ], dtype=float32)>
    """
    # TensorFlow stores alpha as a float32 attribute, also for float64 kernels
    return ops.leaky_relu(_t(features), negative_slope=float(np.float32(alpha)))


def elu(features: Any, name: str | None = None) -> Tensor:
    """``x`` for ``x > 0``, ``exp(x) - 1`` otherwise (gradient 1 at 0).

    >>> import tapegrad.tf as tf
    >>> tf.nn.elu(tf.constant([-1.0, 2.0]))
    <tf.Tensor: shape=(2,), dtype=float32, numpy=array([-0.63212055,  2.        ], dtype=float32)>
    """
    return ops.elu(_t(features), alpha=1.0, kernel="tf")


def selu(features: Any, name: str | None = None) -> Tensor:
    """Scaled ELU with TensorFlow's constants.

    >>> import tapegrad.tf as tf
    >>> tf.nn.selu(tf.constant([0.0, 1.0]))
    <tf.Tensor: shape=(2,), dtype=float32, numpy=array([0.      , 1.050701], dtype=float32)>
    """
    # TensorFlow's Selu kernel: scale_alpha * (exp(x) - 1) below 0, scale * x otherwise
    # (gradient g * (out + scale_alpha) below 0, g * scale otherwise: SeluGrad's bits)
    scale_alpha, scale = 1.7580993408473768599402175208123, 1.0507009873554804934193349852946
    return ops.elu(_t(features), alpha=scale_alpha, scale=scale, kernel="tf")


def gelu(features: Any, approximate: bool = False, name: str | None = None) -> Tensor:
    """Gaussian error linear unit (``approximate=True``: the tanh form), TensorFlow's formulas.

    ``0.5 x erfc(-x / sqrt(2))``, or
    ``0.5 x (1 + tanh(0.7978845608028654 (x + 0.044715 x^3)))``.

    >>> import tapegrad.tf as tf
    >>> tf.nn.gelu(tf.constant([0.0, 1.0]))
    <tf.Tensor: shape=(2,), dtype=float32, numpy=array([0.       , 0.8413447], dtype=float32)>
    """
    x = _t(features)
    if x._data.dtype.kind != "f":
        raise hinted(ValueError(with_hint(
            f"`features.dtype` must be a floating point tensor.Received:features.dtype="
            f"{x.dtype!r}", "cast the input to a float dtype")))
    dt = x._data.dtype
    half = ops.multiply(0.5, x)
    if approximate:
        # TensorFlow casts its Python constants through float32 (math_ops.cast(0.044715, ..))
        coeff = tft(np.asarray(np.float32(0.044715), dtype=dt))
        cube = _pow(x, tft(np.asarray(3.0, dtype=dt)))
        inner = ops.multiply(0.7978845608028654, ops.add(x, ops.multiply(coeff, cube)))
        return ops.multiply(half, ops.add(1.0, ops.tanh(inner, kernel="tf")))
    c = tft(np.asarray(np.float32(0.7071067811865476), dtype=dt))
    return ops.multiply(half, erfc(ops.multiply(ops.negative(x), c)))


def silu(features: Any, beta: float = 1.0) -> Tensor:
    """``x * sigmoid(beta * x)``.

    >>> import tapegrad.tf as tf
    >>> tf.nn.silu(tf.constant([0.0, 1.0]))
    <tf.Tensor: shape=(2,), dtype=float32, numpy=array([0.       , 0.7310586], dtype=float32)>
    """
    from ..ops.fused import silu_tf_op

    x = _t(features)
    if x._data.dtype.kind == "f" and isinstance(beta, (int, float)):
        return silu_tf_op(x, beta=float(beta))
    bx = x if beta == 1.0 else ops.multiply(x, beta)
    return ops.multiply(x, ops.sigmoid(bx, kernel="tf"))


swish = silu


def softplus(features: Any, name: str | None = None) -> Tensor:
    """``log(exp(x) + 1)``, gradient ``sigmoid(x)`` (0.5 at 0, as TensorFlow).

    >>> import tapegrad.tf as tf
    >>> tf.nn.softplus(tf.constant(0.0))
    <tf.Tensor: shape=(), dtype=float32, numpy=0.6931471824645996>
    """
    x = _t(features)
    ensure_float(x, "Softplus")
    return softplus_op(x, beta=1.0, threshold=None)


def softsign(features: Any, name: str | None = None) -> Tensor:
    """``x / (1 + |x|)``.

    >>> import tapegrad.tf as tf
    >>> tf.nn.softsign(tf.constant([1.0, -3.0]))
    <tf.Tensor: shape=(2,), dtype=float32, numpy=array([ 0.5 , -0.75], dtype=float32)>
    """
    x = _t(features)
    ensure_float(x, "Softsign")
    return ops.divide(x, ops.add(ops.abs(x), 1.0))


def _axis(axis: Any) -> int:
    return -1 if axis is None else _int(axis)


def softmax(logits: Any, axis: Any = None, name: str | None = None) -> Tensor:
    """``exp(x) / sum(exp(x))`` along ``axis`` (last by default).

    Values are TensorFlow's CPU kernels' bit for bit (float32: oneDNN's softmax;
    float64 and float16: Eigen's; see ``tapegrad/ops/_tf_softmax.py``); the
    gradient is ``y * (g - sum(g * y))``.

    >>> import tapegrad.tf as tf
    >>> tf.nn.softmax(tf.constant([0.0, 0.0]))
    <tf.Tensor: shape=(2,), dtype=float32, numpy=array([0.5, 0.5], dtype=float32)>
    """
    x = _t(logits)
    ensure_float(x, "Softmax")
    return ops.softmax(x, axis=_axis(axis), kernel="tf")


def log_softmax(logits: Any, axis: Any = None, name: str | None = None) -> Tensor:
    """``x - logsumexp(x)`` along ``axis`` (last by default).

    float32, float64 and float16 values are TensorFlow's CPU kernel's bit for
    bit (Eigen's kernel).

    >>> import tapegrad.tf as tf
    >>> tf.nn.log_softmax(tf.constant([0.0, 0.0]))
    <tf.Tensor: shape=(2,), dtype=float32, numpy=array([-0.6931472, -0.6931472], dtype=float32)>
    """
    x = _t(logits)
    ensure_float(x, "LogSoftmax")
    return ops.log_softmax(x, axis=_axis(axis), kernel="tf")


def sigmoid_cross_entropy_with_logits(labels: Any = None, logits: Any = None,
                                      name: str | None = None) -> Tensor:
    """Elementwise logistic loss, TensorFlow's stable formula.

    ``max(x, 0) - x * z + log(1 + exp(-|x|))`` written with ``where`` as
    TensorFlow does, so the gradient at ``x = 0`` is ``sigmoid(0) - z``.

    >>> import tapegrad.tf as tf
    >>> float(tf.nn.sigmoid_cross_entropy_with_logits(labels=1.0, logits=0.0))
    0.6931471824645996
    """
    if labels is None or logits is None:
        raise hinted(ValueError(with_hint("Both labels and logits must be provided.",
                                   "call with labels=..., logits=...")))
    x = _t(logits)
    z = convert_like(labels, x._data.dtype, False) if not isinstance(labels, Tensor) else labels
    x, z = binary_args(x, z, "Mul")
    if x._data.shape != z._data.shape:
        raise hinted(ValueError(with_hint(
            f"`logits` and `labels` must have the same shape, received "
            f"({tuple(x._data.shape)} vs {tuple(z._data.shape)}).",
            "labels and logits must have one shape")))
    cond = x._data >= 0
    relu_logits = ops.where(cond, x, 0.0)
    neg_abs = ops.where(cond, ops.negative(x), x)
    return ops.add(ops.subtract(relu_logits, ops.multiply(x, z)),
                   ops.log1p(ops.exp(neg_abs, kernel="tf"), kernel="tf"))


def softmax_cross_entropy_with_logits(labels: Any, logits: Any, axis: int = -1,
                                      name: str | None = None) -> Tensor:
    """``-sum(labels * log_softmax(logits))`` along ``axis`` (gradient to both).

    >>> import tapegrad.tf as tf
    >>> tf.nn.softmax_cross_entropy_with_logits(labels=[[1.0, 0.0]], logits=[[0.0, 0.0]])
    <tf.Tensor: shape=(1,), dtype=float32, numpy=array([0.6931472], dtype=float32)>
    """
    x = _t(logits)
    ensure_float(x, "SoftmaxCrossEntropyWithLogits")
    z = labels if isinstance(labels, Tensor) else convert_like(labels, x._data.dtype, False)
    zs = tuple(np.shape(z._data if isinstance(z, Tensor) else z))
    if x._data.shape != zs:   # the kernel's own check comes before any broadcasting
        try:
            np.broadcast_shapes(x._data.shape, zs)
        except ValueError:
            raise _invalid(
                "logits and labels must be broadcastable: logits_size="
                + str(list(x._data.shape)).replace(" ", "") + " labels_size="
                + str(list(zs)).replace(" ", ""),
                "labels and logits must have one shape", "SoftmaxCrossEntropyWithLogits"
            ) from None
    x, z = binary_args(x, z, "SoftmaxCrossEntropyWithLogits")
    return ops.softmax_cross_entropy_with_logits(z, x, axis=axis, kernel="tf")


def sparse_softmax_cross_entropy_with_logits(labels: Any = None, logits: Any = None,
                                             name: str | None = None) -> Tensor:
    """``-log_softmax(logits)[..., labels]`` for integer class labels.

    >>> import tapegrad.tf as tf
    >>> loss = tf.nn.sparse_softmax_cross_entropy_with_logits(
    ...     labels=[0], logits=[[2.0, 0.0]])
    >>> loss.shape
    TensorShape([1])
    """
    x = _t(logits)
    ensure_float(x, "SparseSoftmaxCrossEntropyWithLogits")
    traced = isinstance(labels, Tensor) and labels._lvl is not None and labels._lvl.active
    # a traced label's ``_data`` stands for one example: its shape and dtype are real
    lab = labels._data if isinstance(labels, Tensor) else np.asarray(labels)
    if lab.dtype.kind not in "iu":
        raise hinted(ValueError(with_hint(f"labels must be integers, got dtype {lab.dtype}",
                                   "pass integer class indices")))
    if lab.shape != x._data.shape[:-1]:
        raise hinted(ValueError(with_hint(
            f"`labels.shape.rank` must equal `logits.shape.rank - 1`. Received: "
            f"labels.shape={tuple(lab.shape)} of rank {lab.ndim} and "
            f"logits.shape={tuple(x._data.shape)} of rank {x._data.ndim}",
            "labels holds one class index per row of logits")))
    if traced:
        # per-example labels (vectorized_map): their values are not known here, so the nll
        # op that takes them as an input (one op, batched as one call; it checks the range)
        return nll_traced_op(ops.log_softmax(x, axis=-1), labels, axis=x._data.ndim - 1,
                             lead=0, weight=None, ignore_index=None, reduction="none",
                             check=_label_range_error)
    _label_range_error(lab, x._data.shape[-1], 0, 0)
    if x._data.dtype == np.float32 and x._data.ndim >= 1 and x._data.size:
        # one op on one-hot labels: the loss is -log_softmax at the label (the same bits as
        # below) and the gradient TensorFlow's kernel's, g * (softmax - onehot)
        onehot = np.zeros(x._data.shape, np.float32)
        np.put_along_axis(onehot, lab[..., None].astype(np.intp), np.float32(1), axis=-1)
        return ops.softmax_cross_entropy_with_logits(tft(onehot), x, axis=-1, kernel="tf")
    lp = ops.log_softmax(x, axis=-1)
    index = tuple(np.indices(lab.shape, sparse=True)) + (lab,) if lab.ndim else (int(lab),)
    return ops.negative(ops.getitem(lp, index))


def _label_range_error(lab: np.ndarray, c: int, lead: int, dim: int) -> None:
    """TensorFlow's error for class labels outside ``[0, c)`` (nothing when all are inside;
    ``lead`` and ``dim``, the batch axes and class axis of a vectorized call, are unused)."""
    if lab.size and (lab.min() < 0 or lab.max() >= c):
        vals = " ".join(str(int(v)) for v in lab.ravel())
        bad = int(lab.max()) if lab.max() >= c else int(lab.min())
        raise _invalid(f"Received a label value of {bad} which is outside the valid range of "
                       f"[0, {c}).  Label values: {vals}", f"class indices must be in [0, {c})",
                       "SparseSoftmaxCrossEntropyWithLogits")


def l2_loss(t: Any, name: str | None = None) -> Tensor:
    """``sum(t ** 2) / 2``.

    >>> import tapegrad.tf as tf
    >>> tf.nn.l2_loss(tf.constant([1.0, 2.0]))
    <tf.Tensor: shape=(), dtype=float32, numpy=2.5>
    """
    x = _t(t)
    return ops.divide(ops.sum(ops.square(x)), 2.0)


def l2_normalize(x: Any, axis: Any = None, epsilon: float = 1e-12, name: str | None = None,
                 dim: Any = None) -> Tensor:
    """``x / sqrt(max(sum(x ** 2), epsilon))`` along ``axis``.

    >>> import tapegrad.tf as tf
    >>> tf.math.l2_normalize(tf.constant([3.0, 4.0]))
    <tf.Tensor: shape=(2,), dtype=float32, numpy=array([0.6, 0.8], dtype=float32)>
    """
    t = _t(x)
    ax = dim if axis is None else axis
    sq = reduce_sum(ops.square(t), axis=ax, keepdims=True)
    inv = ops.reciprocal(ops.sqrt(ops.maximum(sq, epsilon, ties="first"), zero_safe=True))
    return ops.multiply(t, inv)


def bias_add(value: Any, bias: Any, data_format: Any = None, name: str | None = None) -> Tensor:
    """Add a 1-D ``bias`` along the last axis.

    >>> import tapegrad.tf as tf
    >>> tf.nn.bias_add(tf.zeros([1, 2]), tf.constant([1.0, 2.0]))
    <tf.Tensor: shape=(1, 2), dtype=float32, numpy=array([[1., 2.]], dtype=float32)>
    """
    v = _t(value)
    b = bias if isinstance(bias, Tensor) else convert_like(bias, v._data.dtype, False)
    v, b = binary_args(v, b, "BiasAdd")
    if b._data.ndim != 1 or b._data.shape[0] != v._data.shape[-1]:
        raise hinted(ValueError(with_hint(
            f"Dimensions must be equal, but are {v._data.shape[-1]} and "
            f"{b._data.shape[0] if b._data.ndim else 0} for 'BiasAdd'",
            "bias must be 1-D with the size of value's last axis")))
    return ops.add(v, b)


def dropout(x: Any, rate: float, noise_shape: Any = None, seed: Any = None,
            name: str | None = None) -> Tensor:
    """Zero elements with probability ``rate`` and scale the rest by ``1 / (1 - rate)``.

    >>> import tapegrad.tf as tf
    >>> tf.nn.dropout(tf.ones([3]), rate=0.0)
    <tf.Tensor: shape=(3,), dtype=float32, numpy=array([1., 1., 1.], dtype=float32)>
    """
    from . import random as _random

    return _random.dropout_with(
        x, rate, noise_shape,
        lambda shp, npd: _random.uniform(shp, dtype=npd, seed=seed),
        lambda: _random.get_seed(seed))


def moments(x: Any, axes: Any, shift: Any = None, keepdims: bool = False,
            name: str | None = None) -> tuple[Tensor, Tensor]:
    """Mean and variance over ``axes`` (TensorFlow's formula: the variance stops the mean's gradient).

    >>> import tapegrad.tf as tf
    >>> [float(t) for t in tf.nn.moments(tf.constant([1.0, 3.0]), axes=[0])]
    [2.0, 1.0]
    """
    t = _t(x)
    mean = reduce_mean(t, axes, keepdims=True)
    var = reduce_mean(ops.square(ops.subtract(t, stop_gradient(mean))), axes, keepdims=True)
    if not keepdims:
        ax = tuple(int(a) % t._data.ndim for a in ([axes] if isinstance(axes, int) else axes))
        shp = tuple(s for i, s in enumerate(t._data.shape) if i not in ax)
        mean = ops.reshape(mean, shp)
        var = ops.reshape(var, shp)
    return mean, var


def embedding_lookup(params: Any, ids: Any, max_norm: Any = None, name: str | None = None) -> Tensor:
    """Rows of ``params`` at ``ids`` (``tf.gather``).

    >>> import tapegrad.tf as tf
    >>> tf.nn.embedding_lookup(tf.constant([[1.0], [2.0]]), [1, 1])
    <tf.Tensor: shape=(2, 1), dtype=float32, numpy=
    array([[2.],
           [2.]], dtype=float32)>
    """
    return gather(params, ids)



# conv nets (issue 12): conv1d/2d/3d, conv2d_transpose, depthwise_conv2d, pooling,
# batch_normalization
from .nn_conv import *  # noqa: E402,F403
from .nn_conv import __all__ as _conv_all  # noqa: E402

__all__ += [n for n in _conv_all if n not in __all__]


def compute_average_loss(per_example_loss: Any, sample_weight: Any = None,
                         global_batch_size: int | None = None) -> Tensor:
    """``tf.nn.compute_average_loss``: sum of the per-example losses over the global batch
    size (default: this replica's batch times ``num_replicas_in_sync``)."""
    from .distribute import compute_average_loss as average

    return average(per_example_loss, sample_weight, global_batch_size)


__all__ += ["compute_average_loss"]

from ._ops_more import in_top_k, top_k  # noqa: E402

__all__ += ["in_top_k", "top_k"]

from ._nn_extra import (  # noqa: E402
    atrous_conv2d,
    depth_to_space,
    local_response_normalization,
    log_poisson_loss,
    lrn,
    normalize_moments,
    pool,
    scale_regularization_loss,
    separable_conv2d,
    space_to_depth,
    weighted_cross_entropy_with_logits,
    weighted_moments,
    zero_fraction,
)

__all__ += [
    "atrous_conv2d", "depth_to_space", "local_response_normalization", "log_poisson_loss",
    "lrn", "normalize_moments", "pool", "scale_regularization_loss", "separable_conv2d",
    "space_to_depth", "weighted_cross_entropy_with_logits", "weighted_moments",
    "zero_fraction",
]
