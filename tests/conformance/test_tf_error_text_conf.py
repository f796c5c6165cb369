"""Conformance: ``str(e)`` of TensorFlow-style errors is eager TensorFlow's, exactly.

Kernel errors carry TensorFlow's ``{{function_node __wrapped__...}}`` prefix
(with the attributes and oneDNN kernel names TensorFlow puts in it); type
errors found before a kernel runs do not.  Skipped without TensorFlow.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import tapegrad.tf as tg_tf
from tests.tf_style.tf_helpers import real_tf


@pytest.fixture(scope="module")
def rtf() -> Any:
    return real_tf()


PROGRAMS: dict[str, Callable[[Any], Any]] = {
    "range_delta": lambda tf: tf.range(0, 5, 0),
    "reduce_axis": lambda tf: tf.reduce_sum(tf.ones([2, 2]), axis=2),
    "reshape": lambda tf: tf.reshape(tf.ones([6]), [8]),
    "reshape_two_unknown": lambda tf: tf.reshape(tf.ones([6]), [-1, -1]),
    "transpose_size": lambda tf: tf.transpose(tf.ones([2, 3]), [0]),
    "transpose_duplicate": lambda tf: tf.transpose(tf.ones([2, 3]), [0, 0]),
    "concat_axis": lambda tf: tf.concat([tf.ones([2]), tf.ones([2])], 3),
    "concat_rank": lambda tf: tf.concat([tf.ones([2]), tf.ones([2, 2])], 0),
    "concat_three": lambda tf: tf.concat([tf.ones([2, 2]), tf.ones([3, 3]), tf.ones([3, 3])], 0),
    "concat_dtypes": lambda tf: tf.concat([tf.ones([1]), tf.ones([1], tf.int32)], 0),
    "stack_shapes": lambda tf: tf.stack([tf.ones([2]), tf.ones([3])]),
    "stack_dtypes": lambda tf: tf.stack([tf.ones([1]), tf.ones([1], tf.int32)]),
    "split_even": lambda tf: tf.split(tf.ones([5]), 2),
    "split_sizes": lambda tf: tf.split(tf.ones([5]), [2, 2]),
    "squeeze_index": lambda tf: tf.squeeze(tf.ones([2, 1]), 3),
    "squeeze_size": lambda tf: tf.squeeze(tf.ones([2, 1]), 0),
    "expand_dims": lambda tf: tf.expand_dims(tf.ones([2]), 5),
    "broadcast_to": lambda tf: tf.broadcast_to(tf.ones([3]), [2, 4]),
    "tile": lambda tf: tf.tile(tf.ones([3]), [2, 2]),
    "gather_index": lambda tf: tf.gather(tf.ones([3]), 7),
    "gather_float_indices": lambda tf: tf.gather(tf.ones([3]), tf.constant([0.0])),
    "where_condition": lambda tf: tf.where(tf.constant([1.0]), 1.0, 2.0),
    "sparse_xent_label": lambda tf: tf.nn.sparse_softmax_cross_entropy_with_logits(
        labels=[5], logits=[[1.0, 2.0]]),
    "matmul_1d": lambda tf: tf.matmul(tf.ones([3]), tf.ones([3, 2])),
    "matmul_b_1d": lambda tf: tf.matmul(tf.ones([3, 2]), tf.ones([2])),
    "matmul_batched_1d": lambda tf: tf.matmul(tf.ones([2, 3, 2]), tf.ones([2])),
    "matmul_batch_dims": lambda tf: tf.matmul(tf.ones([2, 2, 3]), tf.ones([3, 3, 2])),
    "matmul_inner_batched": lambda tf: tf.matmul(tf.ones([2, 2, 3]), tf.ones([2, 2, 2])),
    "matmul_inner_float64": lambda tf: tf.matmul(tf.ones([2, 3], tf.float64),
                                                 tf.ones([2, 2], tf.float64)),
    "matmul_dtypes": lambda tf: tf.matmul(tf.ones([2, 2]), tf.ones([2, 2], tf.float64)),
    "mul_broadcast": lambda tf: tf.ones([2]) * tf.ones([3]),
    "sub_broadcast": lambda tf: tf.ones([2]) - tf.ones([3]),
    "add_dtypes": lambda tf: tf.constant(1.0) + tf.constant(1, dtype=tf.int32),
    "softmax_int": lambda tf: tf.nn.softmax(tf.constant([4])),
    "log_softmax_int": lambda tf: tf.nn.log_softmax(tf.constant([4])),
    "softplus_int": lambda tf: tf.nn.softplus(tf.constant([4])),
    "exp_int": lambda tf: tf.exp(tf.constant([1])),
    "one_hot_depth": lambda tf: tf.one_hot([1], -2),
    "variable_shape": lambda tf: tf.Variable(1.0).assign([1.0, 2.0]),
    "index": lambda tf: tf.ones([3])[5],
    "index_negative": lambda tf: tf.ones([3])[-5],
    "index_second_dim": lambda tf: tf.ones([2, 3])[1, 7],
    "index_after_slice": lambda tf: tf.ones([2, 3])[:, 3],
    "transpose_out_of_range": lambda tf: tf.transpose(tf.ones([2, 3]), [0, 2]),
    "argmax_axis": lambda tf: tf.argmax(tf.ones([2]), axis=2),
    "argmax_negative_axis": lambda tf: tf.argmax(tf.ones([2, 3]), axis=-3),
    "argmin_axis": lambda tf: tf.argmin(tf.ones([2]), axis=1),
    "softmax_ce_shapes": lambda tf: tf.nn.softmax_cross_entropy_with_logits(tf.ones([2, 3]),
                                                                            tf.ones([2, 4])),
    "zeros_negative": lambda tf: tf.zeros([-1]),
    "ones_negative": lambda tf: tf.ones([-2]),
    "fill_not_scalar": lambda tf: tf.fill([2], tf.ones([2])),
    "pad_rank": lambda tf: tf.pad(tf.ones([2]), [[1, 1], [1, 1]]),
    "pad_columns": lambda tf: tf.pad(tf.ones([2]), [[1, 1, 1]]),
    "mirror_pad_rank": lambda tf: tf.pad(tf.ones([2, 2]), [[1, 1]], mode="REFLECT"),
    "conv2d_rank": lambda tf: tf.keras.layers.Conv2D(2, 3, name="conv_r")(tf.ones([1, 5, 5])),
    "conv2d_channels": lambda tf: (lambda c: (c(tf.ones([1, 5, 5, 3])),
                                              c(tf.ones([1, 5, 5, 4]))))(
        tf.keras.layers.Conv2D(2, 3, name="conv_c")),
    "fit_uncompiled": lambda tf: tf.keras.Sequential([tf.keras.layers.Dense(1)]).fit(
        np.ones((2, 2)), np.ones((2, 1)), verbose=0),
}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_error_text_is_tensorflows(rtf: Any, name: str) -> None:
    results = []
    for tf in (tg_tf, rtf):
        with pytest.raises(Exception) as info:  # noqa: B017 - the type is compared below
            PROGRAMS[name](tf)
        results.append((type(info.value).__name__, str(info.value)))
    assert results[0] == results[1]
