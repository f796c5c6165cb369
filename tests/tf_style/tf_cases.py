"""The table of TensorFlow-style op cases.

Each case is a small program ``fn(tf, *tensors)`` written against the
TensorFlow API, so the same function runs on ``tapegrad.tf`` and on real
TensorFlow (the conformance suite), plus its input arrays.  ``torch`` (when
given) is the same computation in PyTorch's API, used by the equivalence
suite (``tape.gradient`` in tapegrad.tf vs ``.backward()`` in tapegrad.torch).
Inputs stay away from kinks and ties; the conventions at those points have
their own tests.

Imported as ``from tests.tf_style.tf_cases import CASES``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import numpy as np

Fn = Callable[..., Any]


@dataclasses.dataclass(frozen=True)
class TFCase:
    name: str
    fn: Fn
    inputs: tuple[np.ndarray, ...]
    torch: Fn | None = None
    order: int = 2
    rtol32: float = 1e-5

    def astype(self, dtype: Any) -> tuple[np.ndarray, ...]:
        return tuple(a.astype(dtype) if a.dtype.kind == "f" else a for a in self.inputs)


CASES: list[TFCase] = []
_rng = np.random.default_rng(1234)


def rand(*shape: int, lo: float = -1.0, hi: float = 1.0) -> np.ndarray:
    return _rng.uniform(lo, hi, shape)


def pos(*shape: int) -> np.ndarray:
    return _rng.uniform(0.5, 2.0, shape)


def away(*shape: int) -> np.ndarray:
    """Values with |x| in [0.3, 1.5] (away from kinks at 0)."""
    v = _rng.uniform(0.3, 1.5, shape)
    return v * _rng.choice([-1.0, 1.0], shape)


def case(name: str, fn: Fn, *inputs: np.ndarray, torch: Fn | None = None, order: int = 2,
         rtol32: float = 1e-5) -> None:
    CASES.append(TFCase(name, fn, tuple(np.asarray(a) for a in inputs), torch, order, rtol32))


def _c(tf: Any, x: Any, v: Any) -> Any:
    """A constant of x's dtype (works on both frameworks)."""
    return tf.constant(np.asarray(v), dtype=x.dtype)


# ---------------------------------------------------------------- arithmetic
case("add", lambda tf, x, y: x + y, rand(3), rand(3), torch=lambda t, x, y: x + y)
case("add_broadcast", lambda tf, x, y: tf.add(x, y), rand(2, 3), rand(3),
     torch=lambda t, x, y: t.add(x, y))
case("add_broadcast_both", lambda tf, x, y: x + y, rand(2, 1), rand(1, 3),
     torch=lambda t, x, y: x + y)
case("add_scalar", lambda tf, x: x + 2.5, rand(3), torch=lambda t, x: x + 2.5)
case("radd_scalar", lambda tf, x: 2.5 + x, rand(3), torch=lambda t, x: 2.5 + x)
case("subtract", lambda tf, x, y: tf.subtract(x, y), rand(2, 3), rand(2, 3),
     torch=lambda t, x, y: t.sub(x, y))
case("rsub_scalar", lambda tf, x: 1.5 - x, rand(3), torch=lambda t, x: 1.5 - x)
case("multiply", lambda tf, x, y: tf.multiply(x, y), rand(2, 3), rand(2, 3),
     torch=lambda t, x, y: t.mul(x, y))
case("multiply_broadcast", lambda tf, x, y: x * y, rand(4, 1, 3), rand(2, 1),
     torch=lambda t, x, y: x * y)
case("mul_self", lambda tf, x: x * x * x, rand(3), torch=lambda t, x: x * x * x)
case("divide", lambda tf, x, y: tf.divide(x, y), rand(2, 3), pos(2, 3),
     torch=lambda t, x, y: t.div(x, y))
case("truediv_op", lambda tf, x, y: x / y, rand(3), pos(1), torch=lambda t, x, y: x / y)
case("rdiv_scalar", lambda tf, x: 2.0 / x, pos(3), torch=lambda t, x: 2.0 / x)
case("negative", lambda tf, x: -x * tf.negative(x), rand(3),
     torch=lambda t, x: -x * t.neg(x))
case("pow_scalar", lambda tf, x: x ** 3, rand(3), torch=lambda t, x: x ** 3)
case("pow_half", lambda tf, x: tf.pow(x, 0.5), pos(3), torch=lambda t, x: t.pow(x, 0.5))
case("rpow", lambda tf, x: 2.0 ** x, rand(3), torch=lambda t, x: 2.0 ** x)
case("pow_tensor", lambda tf, x, y: tf.pow(x, y), pos(3), rand(3),
     torch=lambda t, x, y: t.pow(x, y))
case("square", lambda tf, x: tf.square(x), rand(2, 2), torch=lambda t, x: t.square(x))
case("squared_difference", lambda tf, x, y: tf.math.squared_difference(x, y), rand(3),
     rand(3), torch=lambda t, x, y: (x - y) ** 2)
case("divide_no_nan", lambda tf, x, y: tf.math.divide_no_nan(x, y), rand(3), pos(3))
case("xlogy", lambda tf, x, y: tf.math.xlogy(x, y), away(3), pos(3))
case("reciprocal", lambda tf, x: tf.math.reciprocal(x), pos(3),
     torch=lambda t, x: t.reciprocal(x))
case("add_n", lambda tf, x, y: tf.add_n([x, y, x]), rand(3), rand(3))

# ---------------------------------------------------------------- elementwise math
case("abs", lambda tf, x: tf.abs(x) * x, away(4), torch=lambda t, x: t.abs(x) * x)
case("sign", lambda tf, x: tf.sign(x) * x, away(4), torch=lambda t, x: t.sign(x) * x)
case("exp", lambda tf, x: tf.exp(x), rand(3), torch=lambda t, x: t.exp(x))
case("log", lambda tf, x: tf.math.log(x), pos(3), torch=lambda t, x: t.log(x))
case("log1p", lambda tf, x: tf.math.log1p(x), pos(3), torch=lambda t, x: t.log1p(x))
case("expm1", lambda tf, x: tf.math.expm1(x), rand(3), torch=lambda t, x: t.expm1(x))
case("sqrt", lambda tf, x: tf.sqrt(x), pos(3), torch=lambda t, x: t.sqrt(x))
case("rsqrt", lambda tf, x: tf.math.rsqrt(x), pos(3), torch=lambda t, x: t.rsqrt(x))
case("sin", lambda tf, x: tf.sin(x), rand(3), torch=lambda t, x: t.sin(x))
case("cos", lambda tf, x: tf.cos(x), rand(3), torch=lambda t, x: t.cos(x))
case("tan", lambda tf, x: tf.tan(x), rand(3), torch=lambda t, x: t.tan(x))
case("tanh", lambda tf, x: tf.tanh(x), rand(3), torch=lambda t, x: t.tanh(x))
case("sinh_cosh", lambda tf, x: tf.math.sinh(x) * tf.math.cosh(x), rand(3))
case("sigmoid", lambda tf, x: tf.sigmoid(x), rand(3), torch=lambda t, x: t.sigmoid(x))
case("erf", lambda tf, x: tf.math.erf(x), rand(3), torch=lambda t, x: t.erf(x))
case("maximum", lambda tf, x, y: tf.maximum(x, y), rand(5), rand(5))
case("minimum", lambda tf, x, y: tf.minimum(x, y), rand(5), rand(5))
case("maximum_broadcast", lambda tf, x: tf.maximum(x, _c(tf, x, 0.1)), away(2, 3))

# ---------------------------------------------------------------- reductions
case("reduce_sum", lambda tf, x: tf.reduce_sum(x), rand(2, 3), torch=lambda t, x: x.sum())
case("reduce_sum_axis0", lambda tf, x: tf.reduce_sum(x, axis=0), rand(2, 3),
     torch=lambda t, x: x.sum(dim=0))
case("reduce_sum_axis_neg_keep", lambda tf, x: tf.reduce_sum(x, axis=-1, keepdims=True),
     rand(2, 3), torch=lambda t, x: x.sum(dim=-1, keepdim=True))
case("reduce_sum_axes", lambda tf, x: tf.reduce_sum(x, axis=[0, 2]), rand(2, 3, 4),
     torch=lambda t, x: x.sum(dim=(0, 2)))
case("reduce_mean", lambda tf, x: tf.reduce_mean(x), rand(2, 3), torch=lambda t, x: x.mean())
case("reduce_mean_axis1", lambda tf, x: tf.reduce_mean(x, axis=1), rand(2, 3),
     torch=lambda t, x: x.mean(dim=1))
case("reduce_max", lambda tf, x: tf.reduce_max(x), rand(2, 3))
case("reduce_max_axis", lambda tf, x: tf.reduce_max(x, axis=1, keepdims=True), rand(3, 4))
case("reduce_min_axis", lambda tf, x: tf.reduce_min(x, axis=0), rand(3, 4))
case("reduce_prod", lambda tf, x: tf.reduce_prod(x, axis=1), rand(2, 3),
     torch=lambda t, x: x.prod(dim=1))
case("reduce_logsumexp", lambda tf, x: tf.reduce_logsumexp(x, axis=-1), rand(2, 3),
     torch=lambda t, x: t.logsumexp(x, dim=-1))
case("reduce_logsumexp_all", lambda tf, x: tf.reduce_logsumexp(x), rand(2, 3))
case("reduce_variance", lambda tf, x: tf.math.reduce_variance(x, axis=0), rand(4, 3))
case("reduce_std", lambda tf, x: tf.math.reduce_std(x), rand(4, 3))
case("cumsum", lambda tf, x: tf.cumsum(x, axis=1), rand(2, 4),
     torch=lambda t, x: t.cumsum(x, dim=1))
case("cumsum_exclusive_reverse",
     lambda tf, x: tf.cumsum(x, axis=0, exclusive=True, reverse=True), rand(4, 2))
case("norm", lambda tf, x: tf.norm(x), rand(2, 3), torch=lambda t, x: t.sqrt((x * x).sum()))
case("norm_axis", lambda tf, x: tf.norm(x, axis=1), rand(2, 3))
case("euclidean_norm", lambda tf, x: tf.math.reduce_euclidean_norm(x, axis=0), rand(2, 3))

# ---------------------------------------------------------------- linear algebra
case("matmul", lambda tf, a, b: tf.matmul(a, b), rand(2, 3), rand(3, 4),
     torch=lambda t, a, b: t.matmul(a, b))
case("matmul_op", lambda tf, a, b: a @ b, rand(2, 3), rand(3, 2), torch=lambda t, a, b: a @ b)
case("matmul_transpose_a", lambda tf, a, b: tf.matmul(a, b, transpose_a=True), rand(3, 2),
     rand(3, 4), torch=lambda t, a, b: t.matmul(a.T, b))
case("matmul_transpose_b", lambda tf, a, b: tf.matmul(a, b, transpose_b=True), rand(2, 3),
     rand(4, 3), torch=lambda t, a, b: t.matmul(a, b.T))
case("matmul_batched", lambda tf, a, b: tf.matmul(a, b), rand(2, 2, 3), rand(2, 3, 2),
     torch=lambda t, a, b: t.matmul(a, b))
case("matmul_broadcast_batch", lambda tf, a, b: tf.matmul(a, b), rand(2, 2, 3), rand(3, 2),
     torch=lambda t, a, b: t.matmul(a, b))
case("matvec", lambda tf, a, v: tf.linalg.matvec(a, v), rand(2, 3), rand(3))
case("tensordot", lambda tf, a, b: tf.tensordot(a, b, axes=1), rand(2, 3), rand(3, 2))
case("tensordot_pairs", lambda tf, a, b: tf.tensordot(a, b, axes=[[0, 1], [1, 0]]),
     rand(2, 3), rand(3, 2))
case("einsum", lambda tf, a, b: tf.einsum("ij,jk->ik", a, b), rand(2, 3), rand(3, 2),
     torch=lambda t, a, b: t.einsum("ij,jk->ik", a, b))
case("trace", lambda tf, a: tf.linalg.trace(a), rand(3, 3))

# ---------------------------------------------------------------- shapes and indexing
case("reshape", lambda tf, x: tf.reshape(x, [3, -1]) * _c(tf, x, [[1.0], [2.0], [3.0]]),
     rand(2, 3))
case("transpose", lambda tf, x: tf.transpose(x) * _c(tf, x, np.arange(6.0).reshape(3, 2)),
     rand(2, 3))
case("transpose_perm", lambda tf, x: tf.transpose(x, perm=[1, 2, 0]), rand(2, 3, 4),
     torch=lambda t, x: x.permute(1, 2, 0))
case("concat", lambda tf, x, y: tf.concat([x, y, x], axis=0), rand(1, 3), rand(2, 3),
     torch=lambda t, x, y: t.cat([x, y, x], dim=0))
case("concat_axis1", lambda tf, x, y: tf.concat([x, y], axis=-1), rand(2, 1), rand(2, 3),
     torch=lambda t, x, y: t.cat([x, y], dim=-1))
case("stack", lambda tf, x, y: tf.stack([x, y], axis=1), rand(2, 3), rand(2, 3),
     torch=lambda t, x, y: t.stack([x, y], dim=1))
case("unstack", lambda tf, x: tf.unstack(x, axis=1), rand(2, 3))
case("split_sizes", lambda tf, x: tf.split(x, [1, -1], axis=1), rand(2, 4))
case("split_equal", lambda tf, x: tf.split(x, 2, axis=0), rand(4, 2))
case("squeeze", lambda tf, x: tf.squeeze(x, axis=1), rand(3, 1, 2),
     torch=lambda t, x: x.squeeze(1))
case("expand_dims", lambda tf, x: tf.expand_dims(x, 0) * _c(tf, x, [[1.0], [2.0]]), rand(3))
case("broadcast_to", lambda tf, x: tf.broadcast_to(x, [2, 3]), rand(1, 3),
     torch=lambda t, x: t.broadcast_to(x, (2, 3)))
case("tile", lambda tf, x: tf.tile(x, [2, 3]), rand(2, 2))
case("pad", lambda tf, x: tf.pad(x, [[1, 0], [2, 1]]), rand(2, 2))
case("reverse", lambda tf, x: tf.reverse(x, [1]), rand(2, 3),
     torch=lambda t, x: t.flip(x, dims=[1]))
case("gather", lambda tf, x: tf.gather(x, [2, 0, 2]), rand(4, 2))
case("gather_axis1", lambda tf, x: tf.gather(x, [1, 1, 0], axis=1), rand(2, 3))
case("gather_nd", lambda tf, x: tf.gather_nd(x, [[0, 1], [2, 0], [0, 1]]), rand(3, 2))
case("getitem_slices", lambda tf, x: x[1:, ::2], rand(3, 4), torch=lambda t, x: x[1:, ::2])
case("getitem_int", lambda tf, x: x[1] * x[..., 0], rand(3, 3),
     torch=lambda t, x: x[1] * x[..., 0])
case("getitem_newaxis", lambda tf, x: x[None, :, 1], rand(3, 2),
     torch=lambda t, x: x[None, :, 1])
case("where", lambda tf, x, y: tf.where(x > 0, x * y, y), away(2, 3), rand(2, 3))
case("where_broadcast", lambda tf, x: tf.where(x > 0, x, _c(tf, x, 0.5)), away(2, 3))
case("clip_by_value", lambda tf, x: tf.clip_by_value(x, -0.5, 0.5), rand(6))
case("clip_by_norm", lambda tf, x: tf.clip_by_norm(x, 0.5), rand(4))
case("cast_roundtrip", lambda tf, x: tf.cast(tf.cast(x, tf.float64), x.dtype) * x, rand(3),
     order=1, rtol32=1e-5)
case("identity", lambda tf, x: tf.identity(x) * x, rand(3))

# ---------------------------------------------------------------- nn
case("relu", lambda tf, x: tf.nn.relu(x) * x, away(5), torch=lambda t, x: t.relu(x) * x)
case("relu6", lambda tf, x: tf.nn.relu6(x * 4.0), away(5))
case("leaky_relu", lambda tf, x: tf.nn.leaky_relu(x) * x, away(5))
case("elu", lambda tf, x: tf.nn.elu(x), away(5),
     torch=lambda t, x: t.nn.functional.elu(x))
case("selu", lambda tf, x: tf.nn.selu(x), away(5))
# (not paired with PyTorch: TensorFlow rounds gelu's 1/sqrt(2) through float32, also
# for float64 inputs, and tapegrad.tf does the same)
case("gelu", lambda tf, x: tf.nn.gelu(x), rand(5))
case("gelu_tanh", lambda tf, x: tf.nn.gelu(x, approximate=True), rand(5))
case("silu", lambda tf, x: tf.nn.silu(x), rand(5), torch=lambda t, x: t.nn.functional.silu(x))
case("softplus", lambda tf, x: tf.nn.softplus(x), away(5))
case("softsign", lambda tf, x: tf.nn.softsign(x), away(5), order=1)  # TF has no SoftsignGrad grad
case("softmax", lambda tf, x: tf.nn.softmax(x) * _c(tf, x, [1.0, 2.0, 3.0]), rand(2, 3),
     torch=lambda t, x: t.softmax(x, dim=-1) * t.tensor([1.0, 2.0, 3.0], dtype=x.dtype))
case("softmax_axis0", lambda tf, x: tf.nn.softmax(x, axis=0), rand(3, 2))
case("log_softmax", lambda tf, x: tf.nn.log_softmax(x), rand(2, 3),
     torch=lambda t, x: t.log_softmax(x, dim=-1))
case("sigmoid_xent", lambda tf, z, x: tf.nn.sigmoid_cross_entropy_with_logits(
    labels=z, logits=x), _rng.uniform(0, 1, (2, 3)), away(2, 3))
# TensorFlow's fused op drops the labels term of the second derivative: order 1 here,
# second order with respect to the logits below
case("softmax_xent", lambda tf, z, x: tf.nn.softmax_cross_entropy_with_logits(
    labels=z, logits=x), np.array([[0.2, 0.3, 0.5], [1.0, 0.0, 0.0]]), rand(2, 3), order=1)
case("softmax_xent_logits", lambda tf, x: tf.nn.softmax_cross_entropy_with_logits(
    labels=_c(tf, x, [[0.2, 0.3, 0.5], [1.0, 0.0, 0.0]]), logits=x), rand(2, 3))
case("erfc", lambda tf, x: tf.math.erfc(x), rand(4))
case("sparse_softmax_xent", lambda tf, x: tf.nn.sparse_softmax_cross_entropy_with_logits(
    labels=np.array([2, 0]), logits=x), rand(2, 3),
     torch=lambda t, x: t.nn.functional.cross_entropy(x, t.tensor([2, 0]), reduction="none"))
case("l2_loss", lambda tf, x: tf.nn.l2_loss(x), rand(2, 3))
case("l2_normalize", lambda tf, x: tf.math.l2_normalize(x, axis=1), rand(2, 3))
case("moments", lambda tf, x: list(tf.nn.moments(x, axes=[0])), rand(4, 3),
     order=1)  # TF stops the mean's gradient in the variance: 2nd order differs on purpose
case("bias_add", lambda tf, x, b: tf.nn.bias_add(x, b), rand(2, 3), rand(3))
case("mlp", lambda tf, x, w, b: tf.reduce_mean(tf.square(tf.nn.relu(tf.matmul(x, w) + b))),
     rand(4, 3), rand(3, 2), rand(2))

NAMES = [c.name for c in CASES]
assert len(set(NAMES)) == len(NAMES)


# ============================================================================ conventions
@dataclasses.dataclass(frozen=True)
class Convention:
    """A gradient at a non-differentiable point, with TensorFlow's value."""

    name: str
    fn: Fn
    inputs: tuple[np.ndarray, ...]
    expected: tuple[Any, ...]  # the gradient for each float input (NaN/inf allowed)


CONVENTIONS: list[Convention] = []


def convention(name: str, fn: Fn, inputs: tuple[Any, ...], expected: tuple[Any, ...]) -> None:
    CONVENTIONS.append(Convention(name, fn, tuple(np.asarray(a, dtype=np.float32)
                                                   for a in inputs), expected))


_inf, _nan = np.inf, np.nan
convention("reduce_max_ties_split", lambda tf, x: tf.reduce_max(x),
           ([1.0, 3.0, 3.0, 2.0],), ([0.0, 0.5, 0.5, 0.0],))
convention("reduce_max_axis_ties_split", lambda tf, x: tf.reduce_max(x, axis=1),
           ([[1.0, 3.0], [3.0, 3.0]],), ([[0.0, 1.0], [0.5, 0.5]],))
convention("reduce_min_ties_split", lambda tf, x: tf.reduce_min(x),
           ([2.0, 1.0, 1.0, 1.0],), ([0.0, 1 / 3, 1 / 3, 1 / 3],))
convention("maximum_ties_first", lambda tf, x, y: tf.maximum(x, y),
           ([1.0, 2.0, 3.0], [1.0, 3.0, 3.0]), ([1.0, 0.0, 1.0], [0.0, 1.0, 0.0]))
convention("minimum_ties_first", lambda tf, x, y: tf.minimum(x, y),
           ([1.0, 2.0, 3.0], [1.0, 3.0, 3.0]), ([1.0, 1.0, 1.0], [0.0, 0.0, 0.0]))
convention("clip_at_bounds", lambda tf, x: tf.clip_by_value(x, 1.0, 2.0),
           ([0.0, 1.0, 1.5, 2.0, 3.0],), ([0.0, 1.0, 1.0, 1.0, 0.0],))
convention("where_sqrt_at_zero", lambda tf, x: tf.where(x > 0, tf.sqrt(x), 0.0),
           ([0.0, 1.0, 4.0],), ([0.0, 0.5, 0.25],))
convention("where_nan_branch_not_taken", lambda tf, x: tf.where(x > 0, tf.math.log(x), x),
           ([2.0, -1.0],), ([0.5, 1.0],))
convention("sqrt_at_zero", lambda tf, x: tf.sqrt(x), ([0.0, 4.0],), ([_inf, 0.25],))
convention("relu_at_zero", lambda tf, x: tf.nn.relu(x), ([-1.0, 0.0, 1.0],), ([0.0, 0.0, 1.0],))
convention("relu6_at_kinks", lambda tf, x: tf.nn.relu6(x), ([0.0, 3.0, 6.0, 7.0],),
           ([0.0, 1.0, 0.0, 0.0],))
convention("abs_at_zero", lambda tf, x: tf.abs(x), ([-1.0, 0.0, 1.0],), ([-1.0, 0.0, 1.0],))
convention("leaky_relu_at_zero", lambda tf, x: tf.nn.leaky_relu(x), ([0.0],),
           ([np.float32(0.2)],))
convention("elu_at_zero", lambda tf, x: tf.nn.elu(x), ([0.0],), ([1.0],))
convention("softplus_at_zero", lambda tf, x: tf.nn.softplus(x), ([0.0],), ([0.5],))
convention("sigmoid_xent_at_zero", lambda tf, x: tf.nn.sigmoid_cross_entropy_with_logits(
    labels=tf.constant([0.0, 1.0, 0.25]), logits=x), ([0.0, 0.0, 0.0],), ([0.5, -0.5, 0.25],))
convention("pow_zero_base", lambda tf, x, y: tf.pow(x, y),
           ([0.0, 0.0, 2.0], [0.0, 2.0, 3.0]), ([_nan, 0.0, 12.0], [0.0, 0.0, 8 * np.log(2)]))
convention("pow_negative_base", lambda tf, x, y: tf.pow(x, y), ([-2.0], [2.0]),
           ([-4.0], [0.0]))
convention("norm_at_zero", lambda tf, x: tf.norm(x), ([0.0, 0.0],), ([_nan, _nan],))
convention("prod_with_zero", lambda tf, x: tf.reduce_prod(x), ([2.0, 0.0, 3.0],),
           ([0.0, 6.0, 0.0],))
