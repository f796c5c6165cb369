"""``ConcreteFunction.graph`` of a generalized trace (``input_signature`` with ``None``
dimensions, ``reduce_retracing``): the op outputs and the function's outputs show the
``None`` dimensions that TensorFlow 2.21's static shapes have (real TensorFlow's values,
compared in tests/conformance/test_tf14c_conformance.py)."""

from __future__ import annotations

from typing import Any

import numpy as np

import tapegrad.tf as tf


def _shapes(ts: Any) -> list[Any]:
    return [None if t.shape.rank is None else tuple(t.shape.as_list()) for t in ts]


def test_signature_none_dims_in_outputs() -> None:
    @tf.function(input_signature=[tf.TensorSpec([None], tf.float32)])
    def f(x: Any) -> Any:
        return tf.reduce_sum(x * 2.0) + x[0], x * 3.0

    cf = f.get_concrete_function()
    assert _shapes(cf.graph.inputs) == [(None,)]
    assert _shapes(cf.outputs) == [(), (None,)]
    assert _shapes(cf.structured_outputs) == [(), (None,)]
    assert repr(cf.outputs[1]) == "<tf.Tensor 'Identity_1:0' shape=(None,) dtype=float32>"
    # the program still runs at any length
    out = cf(tf.constant([1.0, 2.0, 3.0, 4.0]))
    np.testing.assert_allclose(out[1].numpy(), [3.0, 6.0, 9.0, 12.0])
    np.testing.assert_allclose(float(out[0]), 21.0)


def test_op_outputs_keep_none_dims() -> None:
    @tf.function(input_signature=[tf.TensorSpec([None, 3], tf.float32)])
    def f(x: Any) -> Any:
        y = tf.matmul(x, tf.ones([3, 2]))
        return tf.reduce_sum(y, axis=1), tf.nn.relu(y) + 1.0

    cf = f.get_concrete_function()
    assert _shapes(cf.outputs) == [(None,), (None, 2)]
    ops = {op.type: _shapes(op.outputs) for op in cf.graph.get_operations()
           if op.type in ("MatMul", "Sum", "Relu", "AddV2")}
    assert ops == {"MatMul": [(None, 2)], "Sum": [(None,)], "Relu": [(None, 2)],
                   "AddV2": [(None, 2)]}
    out = cf(tf.ones([5, 3]))
    assert tuple(out[1].shape) == (5, 2)


def test_reduce_retracing_outputs() -> None:
    @tf.function(reduce_retracing=True)
    def f(x: Any) -> Any:
        return x * 2.0

    f(tf.ones([2]))
    f(tf.ones([3]))
    cf = f.get_concrete_function(tf.TensorSpec([None], tf.float32))
    assert _shapes(cf.graph.inputs) == [(None,)]
    assert _shapes(cf.outputs) == [(None,)]


def test_concrete_shapes_stay_concrete() -> None:
    @tf.function
    def f(x: Any) -> Any:
        return tf.reduce_sum(x * 2.0, axis=0)

    cf = f.get_concrete_function(tf.TensorSpec([4, 3], tf.float32))
    assert _shapes(cf.outputs) == [(3,)]
