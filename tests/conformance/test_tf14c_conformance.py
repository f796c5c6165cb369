"""``ConcreteFunction.graph`` shapes of generalized traces on tapegrad and on real
TensorFlow 2.21: graph inputs, op outputs, ``outputs`` and ``structured_outputs`` show
``None`` dimensions alike."""

from __future__ import annotations

from typing import Any

import pytest

import tapegrad.tf as tg

pytest.importorskip("tensorflow")


def _shapes(ts: Any) -> list[Any]:
    return [None if t.shape.rank is None else tuple(t.shape.as_list()) for t in ts]


def _graph(tf: Any, case: str) -> dict[str, Any]:
    if case == "signature":
        @tf.function(input_signature=[tf.TensorSpec([None, 3], tf.float32)])
        def f(x: Any) -> Any:
            y = tf.matmul(x, tf.ones([3, 2]))
            return tf.reduce_sum(y, axis=1), tf.nn.relu(y) + 1.0, x * 3.0, tf.reduce_sum(x)

        cf = f.get_concrete_function()
    else:
        @tf.function(reduce_retracing=True)
        def f(x: Any) -> Any:
            return x * 2.0, tf.reduce_mean(x)

        f(tf.ones([2]))
        f(tf.ones([3]))
        cf = f.get_concrete_function(tf.TensorSpec([None], tf.float32))
    ops = sorted((op.type, tuple(_shapes(op.outputs))) for op in cf.graph.get_operations()
                 if op.type in ("MatMul", "Sum", "Relu", "AddV2", "Mul", "Mean"))
    return {"inputs": _shapes(cf.graph.inputs), "outputs": _shapes(cf.outputs),
            "structured": _shapes(tf.nest.flatten(cf.structured_outputs)),
            "reprs": [repr(t) for t in cf.outputs], "ops": ops}


@pytest.mark.parametrize("case", ["signature", "reduce_retracing"])
def test_generalized_graph_shapes(case: str) -> None:
    import tensorflow as tf

    assert _graph(tg, case) == _graph(tf, case)
