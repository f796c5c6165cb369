"""Issue 16, TensorFlow style, without TensorFlow: ranges, slice assignment, scatters.

The conformance suite compares these with real TensorFlow; here they are
pinned by their definitions (TensorFlow's formulas written out in NumPy) and
by finite differences.
"""

from __future__ import annotations

import numpy as np
import pytest

import tapegrad as tg_core
import tapegrad.tf as tf
from tapegrad.ops.scatter import scatter_extreme
from tapegrad.testing import gradcheck


# ---------------------------------------------------------------------------- ranges
@pytest.mark.parametrize("args", [(-5.5, 1.0, 0.1), (1.0, 1.3, 0.1), (-3.0, 3.0, 0.01),
                                  (0.5, 0.0, -0.1)])
def test_range_is_tensorflows_formula_in_float32(args: tuple[float, float, float]) -> None:
    s, lim, d = (np.float32(a) for a in args)
    n = int(np.ceil(np.abs((lim - s) / d)))
    want = s + np.arange(n, dtype=np.float32) * d
    got = tf.range(*args).numpy()
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, want)


def test_range_textbook_lengths() -> None:
    assert tf.range(-5.5, 1.0, 0.1).shape == (65,)
    # NumPy's float64 arange has one element more here
    assert tf.range(1.0, 1.3, 0.1).shape == (3,)
    assert len(np.arange(1.0, 1.3, 0.1)) == 4
    x1, x2 = tf.meshgrid(tf.range(-5.5, 1.0, 0.1), tf.range(-3.0, 1.0, 0.1))
    assert x1.shape == x2.shape == (40, 65)


def test_range_errors() -> None:
    with pytest.raises(tf.errors.InvalidArgumentError, match="Requires start <= limit when "
                       "delta > 0: 5/2"):
        tf.range(5, 2)
    with pytest.raises(tf.errors.InvalidArgumentError, match="Requires delta != 0: 0"):
        tf.range(0.0, 1.0, 0.0)
    with pytest.raises(TypeError, match="Cannot convert 0.5 to EagerTensor of dtype int32"):
        tf.range(0.5, 3, dtype=tf.int32)


def test_range_dtype_follows_the_widest_argument() -> None:
    assert tf.range(3).dtype == tf.int32
    assert tf.range(tf.constant(0, tf.int64), 3).dtype == tf.int64
    assert tf.range(0, 1.5).dtype == tf.float32
    assert tf.range(np.float64(0.0), 1.0, 0.25).dtype == tf.float64


def test_linspace_ends_are_exact_and_int_gives_float64() -> None:
    y = tf.linspace(-5.5, 1.0, 66).numpy()
    assert y[0] == np.float32(-5.5) and y[-1] == np.float32(1.0)
    delta = (np.float32(1.0) - np.float32(-5.5)) / np.float32(65)
    np.testing.assert_array_equal(y[1:-1], np.float32(-5.5) + delta * np.arange(
        1, 65, dtype=np.float32))
    assert tf.linspace(0, 10, 3).dtype == tf.float64
    with pytest.raises(TypeError, match="must be of type integer"):
        tf.linspace(0.0, 1.0, 3.0)


def test_linspace_gradient_matches_finite_differences() -> None:
    def f(a: tg_core.Tensor, b: tg_core.Tensor) -> tg_core.Tensor:
        return tf.reduce_sum(tf.linspace(a, b, 5, axis=1) ** 2)
    a = tf.constant([0.5, -1.0], tf.float64)
    b = tf.constant(2.0, tf.float64)
    assert gradcheck(f, [a, b])


# ---------------------------------------------------------------------------- slices
def test_sliced_assign_forms() -> None:
    v = tf.Variable(tf.reshape(tf.range(12.0), (3, 4)))
    v[1, 2].assign(9)
    v[:, 0].assign([7.0, 8.0, 9.0])
    v[2:].assign(tf.ones((4,)))
    want = np.arange(12.0, dtype=np.float32).reshape(3, 4)
    want[1, 2] = 9
    want[:, 0] = [7, 8, 9]
    want[2:] = 1
    np.testing.assert_array_equal(v.numpy(), want)
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"Cannot broadcast input shape \[3,4\] into final shape \[2,4\]"):
        v[1:3].assign(tf.ones((3, 4)))
    with pytest.raises(ValueError, match="Tensor conversion requested dtype float32"):
        v[0].assign(tf.ones((4,), tf.int32))
    with pytest.raises(AttributeError):
        v[1:3].assign_add(tf.ones((2, 4)))  # type: ignore[attr-defined]


def test_slice_of_variable_is_recorded_and_old_reads_keep_values() -> None:
    x = tf.Variable([1.0, 2.0, 3.0])
    before = x[1:]
    with tf.GradientTape() as tape:
        y = tf.reduce_sum(x[1:] ** 2) + x[0] * x[2]
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), [3.0, 4.0, 7.0])
    x[1:].assign([5.0, 6.0])
    np.testing.assert_array_equal(before.numpy(), [2.0, 3.0])
    np.testing.assert_array_equal(x.numpy(), [1.0, 5.0, 6.0])


def test_tensorflow_indexing_rules() -> None:
    t = tf.reshape(tf.range(12.0), (3, 4))
    assert float(t[[0, 2]]) == 2.0                      # a list reads like a tuple
    with pytest.raises(TypeError, match="Only integers, slices"):
        t[np.array([0, 2])]
    with pytest.raises(tf.errors.InvalidArgumentError, match="slice index 5 of dimension 0"):
        t[5]
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"strides\[0\] must be non-zero"):
        t[::0]
    assert t[t > 5.0].shape == (6,)


# ---------------------------------------------------------------------------- scatters
def test_scatter_values() -> None:
    t = tf.reshape(tf.range(12.0), (3, 4))
    want = t.numpy().copy()
    want[0, 0], want[2, 3] = 100, 200
    np.testing.assert_array_equal(
        tf.tensor_scatter_nd_update(t, [[0, 0], [2, 3]], [100.0, 200.0]).numpy(), want)
    added = tf.tensor_scatter_nd_add(t, [[0, 0], [0, 0]], [1.0, 2.0]).numpy()
    assert added[0, 0] == 3.0
    np.testing.assert_array_equal(tf.scatter_nd([[1], [1]], [5.0, 6.0], [3]).numpy(),
                                  [0.0, 11.0, 0.0])
    with pytest.raises(tf.errors.InvalidArgumentError, match="does not index into shape"):
        tf.tensor_scatter_nd_update(t, [[5, 0]], [1.0])
    with pytest.raises(tf.errors.InvalidArgumentError, match="Outer dimensions of indices"):
        tf.tensor_scatter_nd_update(t, [[0, 0]], [1.0, 2.0])


@pytest.mark.parametrize("fn", [tf.tensor_scatter_nd_update, tf.tensor_scatter_nd_add,
                                tf.tensor_scatter_nd_sub])
def test_scatter_gradients_match_finite_differences(fn: object) -> None:
    def f(a: tg_core.Tensor, b: tg_core.Tensor) -> tg_core.Tensor:
        return fn(a * a, [[0], [2]], b * b)  # type: ignore[operator]
    assert gradcheck(f, [tf.constant([1.0, 2.0, 3.0], tf.float64),
                         tf.constant([0.5, -1.5], tf.float64)], order=2)


def test_variable_scatter_methods() -> None:
    v = tf.Variable(tf.zeros((3, 2)))
    v.scatter_nd_update([[0, 0]], [5.0])
    v.scatter_add(tf.IndexedSlices(tf.ones((2, 2)), [1, 1]))
    v.scatter_nd_max([[2, 1]], [7.0])
    np.testing.assert_array_equal(v.numpy(), [[5.0, 0.0], [2.0, 2.0], [0.0, 7.0]])
    np.testing.assert_array_equal(v.sparse_read([1]).numpy(), [[2.0, 2.0]])


# ---------------------------------------------------------------------------- scatter_extreme
IDX = (np.array([0, 1, 2, 0]),)


@pytest.mark.parametrize("mode", ["max", "min"])
def test_scatter_extreme_vjp_matches_finite_differences(mode: str) -> None:
    rng = np.random.default_rng(0)
    x = tg_core.tensor(rng.normal(size=4))
    y = tg_core.tensor(rng.normal(size=4))
    assert gradcheck(lambda a, b: scatter_extreme(a, b, index=IDX, mode=mode), [x, y])


@pytest.mark.parametrize("mode", ["max", "min"])
def test_scatter_extreme_jvp_rule_matches_finite_differences(mode: str) -> None:
    rng = np.random.default_rng(1)
    x, y = rng.normal(size=4), rng.normal(size=4)
    dx, dy = rng.normal(size=4), rng.normal(size=4)
    out = scatter_extreme(tg_core.tensor(x), tg_core.tensor(y), index=IDX, mode=mode)
    rule = scatter_extreme.jvp
    assert rule is not None
    tangent = rule(tg_core.tensor(dx), tg_core.tensor(dy), tg_core.tensor(x), tg_core.tensor(y),
                   out=out, index=IDX, mode=mode)
    eps = 1e-6

    def at(s: float) -> np.ndarray:
        return scatter_extreme(tg_core.tensor(x + s * dx), tg_core.tensor(y + s * dy),
                               index=IDX, mode=mode).numpy()
    fd = (at(eps) - at(-eps)) / (2 * eps)
    np.testing.assert_allclose(tangent.numpy(), fd, rtol=1e-6, atol=1e-8)
    only_x = rule(tg_core.tensor(dx), None, tg_core.tensor(x), tg_core.tensor(y), out=out,
                  index=IDX, mode=mode)
    fdx = (scatter_extreme(tg_core.tensor(x + eps * dx), tg_core.tensor(y), index=IDX,
                           mode=mode).numpy() - out.numpy()) / eps
    np.testing.assert_allclose(only_x.numpy(), fdx, rtol=1e-5, atol=1e-6)


def test_scatter_extreme_ties_share_the_gradient() -> None:
    x = tg_core.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = tg_core.tensor([2.0, 3.0], requires_grad=True)
    out = scatter_extreme(x, y, index=(np.array([1, 2]),), mode="max")
    gx, gy = tg_core.grad(out.sum(), [x, y])
    np.testing.assert_array_equal(gx.numpy(), [1.0, 0.5, 0.5])
    np.testing.assert_array_equal(gy.numpy(), [0.5, 0.5])


# ---------------------------------------------------------------------------- aliases
def test_module_aliases_tensorflow_keeps() -> None:
    assert tf.initializers is tf.keras.initializers
    assert tf.optimizers.SGD is tf.keras.optimizers.SGD
    assert tf.losses.MSE is tf.keras.losses.mean_squared_error
    assert tf.metrics.Mean is tf.keras.metrics.Mean
    assert tf.keras.initializers.glorot_uniform is tf.keras.initializers.GlorotUniform
    np.testing.assert_array_equal(tf.zeros_initializer()((2,)).numpy(), [0.0, 0.0])
    np.testing.assert_array_equal(tf.constant_initializer(3.0)((2,)).numpy(), [3.0, 3.0])
    assert isinstance(tf.keras.initializers.get("GlorotUniform"), tf.keras.initializers.GlorotUniform)
    assert isinstance(tf.keras.initializers.get({"class_name": "Ones", "config": {}}),
                      tf.keras.initializers.Ones)
    q = tf.keras.initializers.Orthogonal(seed=0)((6, 4)).numpy()
    np.testing.assert_allclose(q.T @ q, np.eye(4), atol=1e-5)
    with pytest.raises(ValueError, match="Identity matrix initializer can only be used for 2D"):
        tf.keras.initializers.Identity()((3,))


def test_metrics_stream() -> None:
    m = tf.keras.metrics.Mean()
    m.update_state([1.0, 2.0, 3.0])
    m.update_state(5.0, sample_weight=2.0)
    assert float(m.result()) == pytest.approx(3.2)
    m.reset_state()
    assert float(m.result()) == 0.0
    acc = tf.metrics.SparseCategoricalAccuracy()
    acc.update_state([[2], [1]], [[0.1, 0.6, 0.3], [0.05, 0.95, 0.0]])
    assert float(acc.result()) == 0.5 and acc.name == "sparse_categorical_accuracy"
    rmse = tf.keras.metrics.RootMeanSquaredError()
    assert float(rmse([[0, 1], [0, 0]], [[1, 1], [0, 0]])) == 0.5


# ---------------------------------------------------------------------------- conversion, types
@pytest.mark.parametrize("data, msg", [
    ([[1, 2], [3]], "non-rectangular"), ([1, [2, 3]], "mixed types"),
    ([[2, 3], 1], "non-rectangular"), ([True, 1.5], "mixed types"),
    ([1.0, None], "mixed types"), ([2**63], "out-of-range integer"),
])
def test_conversion_value_errors(data: object, msg: str) -> None:
    with pytest.raises(ValueError, match=msg):
        tf.constant(data)
    with pytest.raises(ValueError, match=msg):
        tf.convert_to_tensor(data)


def test_nested_tensors_constant_refuses_convert_packs() -> None:
    with pytest.raises(ValueError, match="Scalar tensor has no `len\\(\\)`"):
        tf.constant([tf.constant(1.0), 2.0])
    with pytest.raises(ValueError, match="mixed types"):
        tf.constant([1.0, tf.constant(2.0)])
    packed = tf.convert_to_tensor([[tf.constant(1.0), 2.0], [3.0, 4.0]])
    assert packed.dtype == tf.float32 and packed.shape == (2, 2)
    with pytest.raises(TypeError, match="Cannot convert 2.5 to EagerTensor of dtype int32"):
        tf.convert_to_tensor([tf.constant(1), 2.5])
    with pytest.raises(tf.errors.InvalidArgumentError, match="cannot compute Pack"):
        tf.convert_to_tensor([tf.constant(1.0), tf.constant(2)])
    with pytest.raises(tf.errors.InvalidArgumentError, match="Shapes of all inputs must match"):
        tf.convert_to_tensor([tf.constant([1.0, 2.0]), tf.constant([3.0])])
    assert tf.constant([[], [1]]).shape == (2, 0)


def test_isinstance_of_variables() -> None:
    v = tf.Variable(1.0)
    assert not isinstance(v, tf.Tensor) and isinstance(v, tf.Variable) and tf.is_tensor(v)
    assert isinstance(v * 2.0, tf.Tensor) and isinstance(tf.constant(1.0), tf.Tensor)
