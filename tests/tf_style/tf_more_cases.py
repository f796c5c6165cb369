"""Differentiable cases of the TensorFlow APIs added in tapegrad.tf._ops_more.

Each case is ``fn(tf, *tensors)`` on float inputs; tests/tf_style/test_tf_more_ops.py
checks the gradients against finite differences, and
tests/conformance/test_tf_more_ops_conf.py the values, dtypes and gradients against
real TensorFlow.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

_R = np.random.default_rng(3)


@dataclass
class MoreCase:
    name: str
    fn: Callable[..., Any]
    arrays: tuple[np.ndarray, ...]
    order: int = 1  # 2: also compare second derivatives

    def astype(self, dtype: type) -> tuple[np.ndarray, ...]:
        return tuple(a.astype(dtype) if a.dtype.kind == "f" else a for a in self.arrays)


def _u(lo: float, hi: float, *shape: int) -> np.ndarray:
    return _R.uniform(lo, hi, shape)


X23 = _u(-0.9, 0.9, 2, 3)
P23 = _u(1.2, 3.0, 2, 3)
D43 = np.array([[0.3, -1.2, 0.7], [1.1, 0.4, -0.2], [-0.6, 0.9, 1.3], [0.2, 0.8, -1.0]])

CASES: list[MoreCase] = [
    MoreCase("asin", lambda tf, x: tf.math.asin(x), (X23,), 2),
    MoreCase("acos", lambda tf, x: tf.acos(x), (X23,), 2),
    MoreCase("atan", lambda tf, x: tf.atan(x * 3.0), (X23,), 2),
    MoreCase("atan2", lambda tf, y, x: tf.math.atan2(y, x), (X23, _u(-1, 1, 2, 3)), 2),
    MoreCase("asinh", lambda tf, x: tf.asinh(x * 4.0), (X23,), 2),
    MoreCase("acosh", lambda tf, x: tf.math.acosh(x), (P23,), 2),
    MoreCase("atanh", lambda tf, x: tf.math.atanh(x), (X23,), 2),
    MoreCase("lgamma", lambda tf, x: tf.math.lgamma(x), (_u(0.2, 6.0, 2, 3),), 2),
    MoreCase("lgamma_negative", lambda tf, x: tf.math.lgamma(x - 3.0), (_u(0.1, 0.9, 4),)),
    MoreCase("digamma", lambda tf, x: tf.math.digamma(x), (_u(0.3, 9.0, 2, 3),), 2),
    MoreCase("digamma_negative", lambda tf, x: tf.math.digamma(x - 2.0), (_u(0.1, 0.9, 4),), 2),
    MoreCase("erfinv", lambda tf, x: tf.math.erfinv(x), (X23,), 2),
    MoreCase("log_sigmoid", lambda tf, x: tf.math.log_sigmoid(x * 5.0), (X23,), 2),
    MoreCase("softsign", lambda tf, x: tf.math.softsign(x), (X23,)),
    MoreCase("reciprocal_no_nan", lambda tf, x: tf.math.reciprocal_no_nan(x), (P23,)),
    MoreCase("multiply_no_nan", lambda tf, x, y: tf.math.multiply_no_nan(x, y),
             (X23, _u(-1, 1, 3))),
    MoreCase("xdivy", lambda tf, x, y: tf.math.xdivy(x, y), (X23, P23)),
    MoreCase("xlogy", lambda tf, x, y: tf.math.xlogy(x, y), (X23, P23)),
    MoreCase("cumprod", lambda tf, x: tf.math.cumprod(x, axis=1), (P23,), 2),
    MoreCase("cumprod_exclusive_reverse",
             lambda tf, x: tf.math.cumprod(x, axis=0, exclusive=True, reverse=True), (P23,)),
    MoreCase("top_k", lambda tf, x: tf.math.top_k(x, k=2).values, (X23,)),
    MoreCase("nn_top_k", lambda tf, x: tf.nn.top_k(x[0], 3)[0], (X23,)),
    MoreCase("repeat_flat", lambda tf, x: tf.repeat(x, 2), (X23,)),
    MoreCase("repeat_axis", lambda tf, x: tf.repeat(x, [2, 0, 1], axis=1), (X23,)),
    MoreCase("segment_sum", lambda tf, d: tf.math.segment_sum(d, [0, 0, 2, 2]), (D43,)),
    MoreCase("segment_mean", lambda tf, d: tf.math.segment_mean(d, [0, 1, 1, 1]), (D43,)),
    MoreCase("segment_max", lambda tf, d: tf.math.segment_max(d, [0, 0, 1, 3]), (D43,)),
    MoreCase("segment_max_ties",
             lambda tf, d: tf.math.segment_max(tf.concat([d, d], 0), [0, 0, 0, 0, 1, 1, 1, 1]),
             (D43,)),
    MoreCase("unsorted_segment_sum",
             lambda tf, d: tf.math.unsorted_segment_sum(d, [2, -1, 0, 2], 4), (D43,)),
    MoreCase("unsorted_segment_mean",
             lambda tf, d: tf.math.unsorted_segment_mean(d, [2, -1, 0, 2], 4), (D43,)),
    MoreCase("unsorted_segment_max",
             lambda tf, d: tf.math.unsorted_segment_max(d, [1, -1, 0, 1], 2), (D43,)),
    MoreCase("unsorted_segment_min",
             lambda tf, d: tf.math.unsorted_segment_min(d, [1, 1, 0, 1], 2), (D43,)),
    MoreCase("map_fn", lambda tf, x: tf.map_fn(lambda r: tf.reduce_sum(r * r) * r, x), (X23,), 2),
    MoreCase("map_fn_nested",
             lambda tf, x, y: tf.map_fn(lambda p: (p[0] * p[1], p[0] + 1.0), (x, y)),
             (X23, P23)),
    MoreCase("map_fn_signature",
             lambda tf, x: tf.map_fn(lambda r: tf.reduce_max(r), x,
                                     fn_output_signature=tf.TensorSpec([], x.dtype)), (X23,)),
    MoreCase("clip_by_global_norm",
             lambda tf, x, y: tf.clip_by_global_norm([x, None, y * 3.0], 1.5)[0][::2], (X23, P23)),
    MoreCase("clip_by_global_norm_norm",
             lambda tf, x, y: tf.clip_by_global_norm([x, y], 100.0)[1], (X23, P23)),
    MoreCase("global_norm", lambda tf, x, y: tf.linalg.global_norm([x, y]), (X23, P23)),
    MoreCase("identity_n", lambda tf, x, y: tf.identity_n([x, y]), (X23, P23)),
    MoreCase("ensure_shape", lambda tf, x: tf.ensure_shape(x, [None, 3]) * 2.0, (X23,)),
]
