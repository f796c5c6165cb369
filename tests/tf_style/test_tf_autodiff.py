"""Item 3: stop_gradient, custom_gradient, identity, ForwardAccumulator, explain."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import tapegrad.tf as tf


# ------------------------------------------------------------------ stop_gradient, identity
def test_stop_gradient_cuts_the_path() -> None:
    x = tf.Variable(3.0)
    with tf.GradientTape(persistent=True) as tape:
        y = tf.stop_gradient(x) * x
        z = tf.stop_gradient(x * x)
    assert float(tape.gradient(y, x)) == 3.0
    assert tape.gradient(z, x) is None
    assert float(z) == 9.0


def test_identity_passes_the_gradient() -> None:
    x = tf.Variable(3.0)
    with tf.GradientTape() as tape:
        y = tf.identity(x) * 2.0
    assert float(tape.gradient(y, x)) == 2.0


# ------------------------------------------------------------------ custom_gradient
@tf.custom_gradient
def log1pexp(x: tf.Tensor) -> object:
    e = tf.exp(x)

    def grad(upstream: tf.Tensor) -> tf.Tensor:
        return upstream * (1 - 1 / (1 + e))

    return tf.math.log(1 + e), grad


def test_custom_gradient_is_used() -> None:
    x = tf.constant(100.0)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = log1pexp(x)
    assert float(tape.gradient(y, x)) == 1.0  # the naive gradient would be NaN
    assert y._node.name() == "CustomGradientBackward0"


def test_custom_gradient_second_order() -> None:
    @tf.custom_gradient
    def f(x: tf.Tensor) -> object:
        y = x * x

        def grad(dy: tf.Tensor) -> tf.Tensor:
            return dy * 3.0 * x  # deliberately not 2x: proves grad_fn is what runs

        return y, grad

    x = tf.constant(100.0)
    with tf.GradientTape() as outer:
        outer.watch(x)
        with tf.GradientTape() as inner:
            inner.watch(x)
            y = f(x)
        g = inner.gradient(y, x)
    assert float(g) == 300.0
    assert float(outer.gradient(g, x)) == 3.0


def test_custom_gradient_second_order_through_captured_intermediates() -> None:
    x = tf.constant(0.5)
    with tf.GradientTape() as outer:
        outer.watch(x)
        with tf.GradientTape() as inner:
            inner.watch(x)
            y = log1pexp(x)
        g = inner.gradient(y, x)
    s = 1 / (1 + np.exp(-0.5))
    np.testing.assert_allclose(float(g), s, rtol=1e-6)
    np.testing.assert_allclose(float(outer.gradient(g, x)), s * (1 - s), rtol=1e-5)


def test_custom_gradient_several_inputs_and_outputs() -> None:
    @tf.custom_gradient
    def f5(a: tf.Tensor, b: tf.Tensor) -> object:
        def grad(dy: tf.Tensor) -> object:
            return dy * b, dy * a

        return a * b, grad

    a, b = tf.constant(2.0), tf.constant(5.0)
    with tf.GradientTape() as tape:
        tape.watch([a, b])
        y = f5(a, b)
    assert [float(g) for g in tape.gradient(y, [a, b])] == [5.0, 2.0]

    @tf.custom_gradient
    def two(x: tf.Tensor) -> object:
        def grad(d1: tf.Tensor, d2: tf.Tensor) -> tf.Tensor:
            return d1 * 10.0 + d2 * 100.0

        return (x * 2.0, x * 3.0), grad

    x = tf.constant([1.0, 2.0])
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        p, q = two(x)
    np.testing.assert_array_equal(tape.gradient(p, x).numpy(), [10.0, 10.0])
    np.testing.assert_array_equal(tape.gradient(q, x).numpy(), [100.0, 100.0])
    np.testing.assert_array_equal(tape.gradient([p, q], x).numpy(), [110.0, 110.0])
    np.testing.assert_array_equal(p.numpy(), [2.0, 4.0])


def test_custom_gradient_variables_form() -> None:
    v = tf.Variable(2.0)

    @tf.custom_gradient
    def f3(x: tf.Tensor) -> object:
        y = x * v

        def grad(dy: tf.Tensor, variables: object = None) -> object:
            assert variables == [v] or variables[0] is v  # type: ignore[index]
            return dy * v, [dy * x * 10.0]

        return y, grad

    xc = tf.constant(100.0)
    with tf.GradientTape() as tape:
        tape.watch(xc)
        y = f3(xc)
    g = tape.gradient(y, [xc, v])
    assert [float(t) for t in g] == [2.0, 1000.0]


def test_custom_gradient_errors() -> None:
    v = tf.Variable(2.0)

    @tf.custom_gradient
    def f4(x: tf.Tensor) -> object:
        def grad(dy: tf.Tensor) -> tf.Tensor:
            return dy * v

        return x * v, grad

    with pytest.raises(TypeError, match="grad_fn must accept keyword argument 'variables', "
                                        "since function uses variables"):
        f4(tf.constant(1.0))

    @tf.custom_gradient
    def wrong(a: tf.Tensor, b: tf.Tensor) -> object:
        return a * b, lambda dy: dy

    a = tf.constant(1.0)
    with tf.GradientTape() as tape:
        tape.watch(a)
        y = wrong(a, tf.constant(2.0))
    with pytest.raises(ValueError, match="expected to return 2 gradients, but returned 1"):
        tape.gradient(y, a)


# ------------------------------------------------------------------ forward mode
def test_forward_accumulator_jvp() -> None:
    x = tf.constant([1.0, 2.0])
    with tf.autodiff.ForwardAccumulator(primals=x, tangents=tf.constant([1.0, 0.0])) as acc:
        y = tf.reduce_sum(x * x * x)
        z = tf.sin(x)
    assert float(acc.jvp(y)) == 3.0
    np.testing.assert_allclose(acc.jvp(z).numpy(), [np.cos(1.0), 0.0], rtol=1e-6)
    assert acc.jvp(tf.constant(3.0)) is None
    assert float(acc.jvp(tf.constant(3.0), unconnected_gradients="zero")) == 0.0
    np.testing.assert_array_equal(acc.jvp(x).numpy(), [1.0, 0.0])  # jvp of a primal


def test_forward_accumulator_with_variables_and_nests() -> None:
    v = tf.Variable([1.0, 2.0])
    w = tf.Variable(3.0)
    with tf.autodiff.ForwardAccumulator([v, w], [tf.constant([1.0, 1.0]), tf.constant(2.0)]) \
            as acc:
        y = v * v * w
    np.testing.assert_allclose(acc.jvp(y).numpy(), 2 * np.array([1, 2]) * 3 + np.array([1, 4]) * 2)
    out = acc.jvp({"y": y, "l": [y]})
    np.testing.assert_allclose(out["l"][0].numpy(), out["y"].numpy())


def test_forward_over_reverse_hessian_vector_product() -> None:
    v = tf.Variable([1.0, 2.0])
    with tf.autodiff.ForwardAccumulator(v, tf.constant([1.0, 1.0])) as acc:
        with tf.GradientTape() as t:
            y = tf.reduce_sum(v * v * v)
        g = t.gradient(y, v)
    np.testing.assert_allclose(acc.jvp(g).numpy(), [6.0, 12.0])


def test_forward_accumulator_through_sqrt_where_and_matmul() -> None:
    x = tf.constant([[0.5, 2.0], [1.0, 3.0]])
    t = tf.constant([[1.0, 0.0], [0.5, 1.0]])
    with tf.autodiff.ForwardAccumulator(x, t) as acc:
        y = tf.where(x > 1.0, tf.sqrt(x), x * x)
        m = tf.matmul(x, x)
    xn, tn = x.numpy(), t.numpy()
    np.testing.assert_allclose(acc.jvp(y).numpy(),
                               np.where(xn > 1, 0.5 / np.sqrt(xn), 2 * xn) * tn, rtol=1e-6)
    np.testing.assert_allclose(acc.jvp(m).numpy(), tn @ xn + xn @ tn, rtol=1e-6)


def test_forward_accumulator_shape_check() -> None:
    with pytest.raises(ValueError, match="does not match primal shape"):
        tf.autodiff.ForwardAccumulator(tf.constant([1.0, 2.0]), tf.constant([1.0]))


# ------------------------------------------------------------------ explain
def _why(tape: tf.GradientTape, target: object, source: object) -> str:
    return str(tf.explain.why_none(tape, target, source))


def test_explain_not_watched_constant() -> None:
    x = tf.constant(3.0)
    with tf.GradientTape() as tape:
        y = x * x
    assert tape.gradient(y, x) is None
    assert "not watched" in _why(tape, y, x) and "tape.watch" in _why(tape, y, x)


def test_explain_non_trainable_and_no_auto_watch() -> None:
    nt = tf.Variable(1.0, trainable=False)
    x = tf.Variable(2.0)
    with tf.GradientTape(persistent=True) as tape:
        y = nt * x
    assert "non-trainable" in _why(tape, y, nt)
    with tf.GradientTape(watch_accessed_variables=False) as t2:
        y2 = x * x
    assert "watch_accessed_variables=False" in t2.explain(y2, x)
    with tf.GradientTape() as t3:
        y3 = nt * 2.0
    assert "not read inside" in _why(t3, y3, x)


def test_explain_computed_before_the_tape() -> None:
    x = tf.Variable(2.0)
    with tf.GradientTape() as t0:
        pre = x * 3.0
    with tf.GradientTape() as tape:
        y = pre * pre
    assert "outside this tape's `with` block" in _why(tape, y, pre)
    del t0


def test_explain_integer_source() -> None:
    ci = tf.constant(2)
    with tf.GradientTape() as tape:
        y = tf.cast(ci, tf.float32) * 2.0
    assert "integer dtype int32" in _why(tape, y, ci)


def test_explain_stop_gradient() -> None:
    x = tf.Variable(2.0)
    with tf.GradientTape() as tape:
        y = tf.stop_gradient(x * x) + tf.stop_gradient(x)
    assert tape.gradient(y, x) is None
    assert "tf.stop_gradient" in _why(tape, y, x)


def test_explain_gradient_outside_the_outer_block() -> None:
    x = tf.Variable(2.0)
    with tf.GradientTape() as t2:
        with tf.GradientTape() as t1:
            y = x * x * x
    g1 = t1.gradient(y, x)
    assert t2.gradient(g1, x) is None
    assert "outer" in _why(t2, g1, x) and "inside" in _why(t2, g1, x)


def test_explain_unconnected_and_connected() -> None:
    x, z = tf.Variable(2.0), tf.Variable(1.0)
    with tf.GradientTape(persistent=True) as tape:
        y = x * x
        w = z * 1.0
    assert "does not depend on the source" in _why(tape, y, z)
    assert "unconnected_gradients='zero'" in _why(tape, y, z)
    assert _why(tape, y, x).startswith("gradient(target, source) is not None")
    out = tf.explain.why_none(tape, y, {"x": x, "z": z})
    assert set(out) == {"x", "z"}
    del w


def test_explain_target_outside_block() -> None:
    x = tf.Variable(2.0)
    with tf.GradientTape() as tape:
        y = x * x
    z = y * 2.0
    assert "not recorded by this tape" in _why(tape, z, x)


def test_jacobians_inside_an_accumulator_and_a_tf_function() -> None:
    # d/dt J(x + t v) for y = x^3: J = diag(3 x^2), its tangent diag(6 x v)
    x = tf.constant([1.0, 2.0])
    v = tf.constant([1.0, 0.5])
    with tf.autodiff.ForwardAccumulator(x, v) as acc:
        with tf.GradientTape(persistent=True) as tape:
            tape.watch(x)
            y = x * x * x
        j = tape.jacobian(y, x)
        jl = tape.jacobian(y, x, experimental_use_pfor=False)
        xb = tf.reshape(x, [2, 1])
        with tf.GradientTape(persistent=True) as t2:
            t2.watch(xb)
            yb = xb * xb * xb
        bj = t2.batch_jacobian(yb, xb)
    want = np.diag([6.0, 6.0])
    np.testing.assert_allclose(acc.jvp(j).numpy(), want)
    np.testing.assert_allclose(acc.jvp(jl).numpy(), want)
    np.testing.assert_allclose(acc.jvp(bj).numpy(), [[[6.0]], [[6.0]]])  # 6 x v per example

    @tf.function
    def f(x: Any) -> Any:
        with tf.GradientTape(persistent=True) as tape:
            tape.watch(x)
            y = tf.sin(x) * x
        return tape.jacobian(y, x), tape.jacobian(y, x, experimental_use_pfor=False)

    for xs in ([1.0, 2.0], [0.5, -1.0]):  # the second call replays: not the first's values
        a = np.array(xs)
        d = np.diag(np.cos(a) * a + np.sin(a))
        for jac in f(tf.constant(xs)):
            np.testing.assert_allclose(jac.numpy(), d, rtol=1e-6, atol=1e-6)
