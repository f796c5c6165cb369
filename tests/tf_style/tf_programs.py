"""Small TensorFlow programs for the conformance suite (tape semantics, item 3, errors).

Each program takes a TensorFlow-like module and returns a nest of plain
values (NumPy arrays, floats, None, lists/tuples/dicts, strings); an
exception is returned as ``("raises", class name, first line)``.  The suite
runs each program on ``tapegrad.tf`` and on real TensorFlow and compares the
results (see ``same``).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

PROGRAMS: dict[str, Callable[[Any], Any]] = {}
# exceptions whose class must match but whose wording is tapegrad's own (clearer) one
OWN_WORDING: set[str] = set()


def program(fn: Callable[[Any], Any]) -> Callable[[Any], Any]:
    PROGRAMS[fn.__name__] = fn
    return fn


def plain(x: Any) -> Any:
    """Turn tensors (and nests of them) into NumPy values."""
    if x is None or isinstance(x, (str, bool, int, float)):
        return x
    if isinstance(x, dict):
        return {k: plain(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return type(x)(plain(v) for v in x) if not hasattr(x, "_fields") else tuple(
            plain(v) for v in x)
    if hasattr(x, "numpy"):
        return np.asarray(x.numpy())
    return np.asarray(x)


def run(tf: Any, name: str) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return plain(PROGRAMS[name](tf))
        except Exception as exc:  # noqa: BLE001 - the exception is the result
            return ("raises", type(exc).__name__, str(exc))


def same(a: Any, b: Any, rtol: float = 1e-6, atol: float = 1e-7) -> bool:
    """Structural equality with float tolerance (NaN equals NaN)."""
    if isinstance(a, tuple) and len(a) == 3 and isinstance(a[0], str) and a[0] == "raises":
        # the same exception type and exactly the same str(e) (tapegrad's hint is a note)
        return isinstance(b, tuple) and len(b) == 3 and b[0] == "raises" and a[1:] == b[1:]
    if a is None or b is None:
        return a is None and b is None
    if isinstance(a, dict):
        return isinstance(b, dict) and set(a) == set(b) and all(
            same(a[k], b[k], rtol, atol) for k in a)
    if isinstance(a, (list, tuple)):
        return (isinstance(b, (list, tuple)) and type(a) is type(b) and len(a) == len(b)
                and all(same(x, y, rtol, atol) for x, y in zip(a, b)))
    if isinstance(a, str):
        return a == b
    aa, bb = np.asarray(a), np.asarray(b)
    if aa.shape != bb.shape:
        return False
    if aa.dtype.kind in "fc" or bb.dtype.kind in "fc":
        return bool(np.allclose(aa, bb, rtol=rtol, atol=atol, equal_nan=True))
    return bool(np.array_equal(aa, bb))


# ------------------------------------------------------------------ recording
@program
def auto_watch(tf: Any) -> Any:
    x = tf.Variable(3.0)
    with tf.GradientTape() as t:
        y = x * x
    return t.gradient(y, x)


@program
def constant_not_watched(tf: Any) -> Any:
    c = tf.constant(2.0)
    with tf.GradientTape() as t:
        y = c * c
    with tf.GradientTape() as t2:
        t2.watch(c)
        y2 = c * c
    return [t.gradient(y, c), t2.gradient(y2, c)]


@program
def unwatched_input(tf: Any) -> Any:
    x, y = tf.constant(2.0), tf.constant(3.0)
    with tf.GradientTape(persistent=True) as t:
        t.watch(x)
        z = x * y
    return [t.gradient(z, x), t.gradient(z, y)]


@program
def before_block(tf: Any) -> Any:
    x = tf.Variable(2.0)
    pre = x * 3.0
    with tf.GradientTape() as t:
        y = pre * pre
    with tf.GradientTape() as t2:
        t2.watch(pre)
        y2 = pre * pre
    return [t.gradient(y, [x, pre]), t2.gradient(y2, pre)]


@program
def after_block(tf: Any) -> Any:
    x = tf.Variable(2.0)
    with tf.GradientTape() as t:
        y = x * x
    return t.gradient(y * 2.0, x)


@program
def non_trainable(tf: Any) -> Any:
    nt, x = tf.Variable(2.0, trainable=False), tf.Variable(3.0)
    with tf.GradientTape(persistent=True) as t:
        y = nt * x
    with tf.GradientTape() as t2:
        t2.watch(nt)
        y2 = nt * x
    return [t.gradient(y, [nt, x]), t2.gradient(y2, [nt, x]), len(t.watched_variables())]


@program
def no_auto_watch(tf: Any) -> Any:
    x = tf.Variable(3.0)
    with tf.GradientTape(watch_accessed_variables=False) as t:
        y = x * x
    with tf.GradientTape(watch_accessed_variables=False) as t2:
        t2.watch(x)
        y2 = x * x
    return [t.gradient(y, x), len(t.watched_variables()), t2.gradient(y2, x)]


@program
def watched_variables_order(tf: Any) -> Any:
    a, b = tf.Variable(1.0, name="a"), tf.Variable(2.0, name="b")
    with tf.GradientTape() as t:
        b * a + b
    return [v.name for v in t.watched_variables()]


@program
def integer_sources(tf: Any) -> Any:
    ci = tf.constant(2)
    vi = tf.Variable(2)
    with tf.GradientTape() as t:
        t.watch(ci)
        y = tf.cast(ci * vi, tf.float32) * 2.0
    return [t.gradient(y, [ci, vi]), len(t.watched_variables())]


@program
def integer_target(tf: Any) -> Any:
    x = tf.constant(1.0)
    with tf.GradientTape() as t:
        t.watch(x)
        yi = tf.constant(3) * 2
    return t.gradient(yi, x)


@program
def watch_nest(tf: Any) -> Any:
    a, b = tf.constant(1.0), tf.constant(2.0)
    with tf.GradientTape() as t:
        t.watch([a, {"k": (b,)}])
        y = a * b
    return t.gradient(y, [a, b])


# ------------------------------------------------------------------ gradient()
@program
def sources_nest(tf: Any) -> Any:
    w, b, z = tf.Variable(2.0), tf.Variable(1.0), tf.Variable(5.0)
    with tf.GradientTape() as t:
        y = w * w + b
    return t.gradient(y, {"w": w, "nested": [b, (w, z)], "b": b})


@program
def sources_tuple(tf: Any) -> Any:
    w, b = tf.Variable(2.0), tf.Variable(1.0)
    with tf.GradientTape() as t:
        y = w * b
    return t.gradient(y, (w, b))


@program
def summed_targets(tf: Any) -> Any:
    x = tf.Variable(3.0)
    with tf.GradientTape(persistent=True) as t:
        y = x * tf.constant([1.0, 2.0, 3.0])
        z = x * x
    return [t.gradient(y, x), t.gradient([y, z], x), t.gradient({"a": y, "b": [z]}, x)]


@program
def output_gradients(tf: Any) -> Any:
    x = tf.Variable(3.0)
    with tf.GradientTape(persistent=True) as t:
        y = x * tf.constant([1.0, 2.0, 3.0])
        z = x * x
    return [t.gradient(y, x, output_gradients=tf.constant([1.0, 1.0, 2.0])),
            t.gradient(z, x, output_gradients=tf.constant(2.0))]


@program
def unconnected(tf: Any) -> Any:
    x, z = tf.Variable(3.0), tf.Variable([1.0, 2.0])
    with tf.GradientTape(persistent=True) as t:
        y = x * x
    return [t.gradient(y, z), t.gradient(y, z, unconnected_gradients="zero"),
            t.gradient(y, z, unconnected_gradients=tf.UnconnectedGradients.ZERO),
            t.gradient(y, [x, z], unconnected_gradients="none")]


@program
def unconnected_bad_value(tf: Any) -> Any:
    x = tf.Variable(3.0)
    with tf.GradientTape() as t:
        y = x * x
    return t.gradient(y, x, unconnected_gradients="bogus")


@program
def target_is_source(tf: Any) -> Any:
    x = tf.Variable(2.0)
    with tf.GradientTape() as t:
        _ = x * 1.0
    return t.gradient(x, x)


@program
def intermediate_source(tf: Any) -> Any:
    x = tf.Variable(2.0)
    with tf.GradientTape() as t:
        m = x * 3.0
        y = m * m
    return t.gradient(y, m)


@program
def target_none(tf: Any) -> Any:
    x = tf.Variable(2.0)
    with tf.GradientTape() as t:
        _ = x * x
    return t.gradient(None, x)


# ------------------------------------------------------------------ persistence
@program
def second_call_non_persistent(tf: Any) -> Any:
    x = tf.Variable(3.0)
    with tf.GradientTape() as t:
        y = x * x
    t.gradient(y, x)
    return t.gradient(y, x)


@program
def jacobian_after_gradient(tf: Any) -> Any:
    x = tf.Variable(3.0)
    with tf.GradientTape() as t:
        y = x * x
    t.gradient(y, x)
    return t.jacobian(y, x)


@program
def persistent_repeated(tf: Any) -> Any:
    x = tf.Variable(3.0)
    with tf.GradientTape(persistent=True) as t:
        y = x * x
        z = y * x
    return [t.gradient(y, x), t.gradient(z, x), t.gradient(y, x)]


@program
def stop_recording(tf: Any) -> Any:
    x = tf.constant(4.0)
    with tf.GradientTape(persistent=True) as t:
        t.watch(x)
        with t.stop_recording():
            y = x ** 2
        z = x * 3.0 + y
    return [t.gradient(y, x), t.gradient(z, x)]


@program
def stop_recording_unused_tape(tf: Any) -> Any:
    with tf.GradientTape().stop_recording():
        pass


@program
def reset(tf: Any) -> Any:
    x = tf.Variable(2.0)
    with tf.GradientTape(persistent=True) as t:
        y = x * x
        t.reset()
        z = x * 2.0
    return [t.gradient(y, x), t.gradient(z, x)]


@program
def gradient_inside_block(tf: Any) -> Any:
    x = tf.Variable(2.0)
    with tf.GradientTape() as t:
        y = x * x
        g = t.gradient(y, x)
        z = x * 3.0
    return [g, z]


@program
def persistent_gradient_inside_block(tf: Any) -> Any:
    x = tf.Variable(2.0)
    with tf.GradientTape(persistent=True) as t:
        y = x * x * x
        g = t.gradient(y, x)
    return [g, t.gradient(g, x)]


# ------------------------------------------------------------------ higher order
@program
def third_derivative(tf: Any) -> Any:
    x = tf.Variable(2.0)
    with tf.GradientTape() as t3:
        with tf.GradientTape() as t2:
            with tf.GradientTape() as t1:
                y = x * x * x
            g1 = t1.gradient(y, x)
        g2 = t2.gradient(g1, x)
    return [g1, g2, t3.gradient(g2, x)]


@program
def outside_outer_block(tf: Any) -> Any:
    x = tf.Variable(2.0)
    with tf.GradientTape() as t2:
        with tf.GradientTape() as t1:
            y = x * x * x
    g1 = t1.gradient(y, x)
    return [g1, t2.gradient(g1, x)]


@program
def second_order_vector(tf: Any) -> Any:
    x = tf.Variable([1.0, 2.0])
    with tf.GradientTape() as outer:
        with tf.GradientTape() as inner:
            y = tf.reduce_sum(tf.sin(x) * x + tf.exp(x) * x * x)
        g = inner.gradient(y, x)
    return [g, outer.gradient(g, x)]


@program
def jacobians(tf: Any) -> Any:
    w = tf.Variable([[1.0, 2.0], [3.0, 4.0]])
    v = tf.Variable(1.0)
    with tf.GradientTape(persistent=True) as g:
        y = w * w * v
    return [g.jacobian(y, w), g.jacobian(y, v), g.jacobian(tf.reduce_sum(y), [w, v])]


@program
def batch_jacobian(tf: Any) -> Any:
    x = tf.constant([[1.0, 2.0], [3.0, 4.0]])
    m = tf.constant([[1.0, 0.5, 0.0], [0.0, 1.0, 2.0]])
    with tf.GradientTape(persistent=True) as g:
        g.watch(x)
        y = x * x
        z = tf.matmul(x, m)
    return [g.batch_jacobian(y, x), g.batch_jacobian(z, x)]


@program
def two_tapes(tf: Any) -> Any:
    x, y = tf.constant(2.0), tf.constant(3.0)
    with tf.GradientTape() as ta, tf.GradientTape() as tb:
        ta.watch(x)
        tb.watch(y)
        z = x * y
    return [ta.gradient(z, [x, y]), tb.gradient(z, [x, y])]


# ------------------------------------------------------------------ item 3
@program
def stop_gradient(tf: Any) -> Any:
    x = tf.Variable(3.0)
    with tf.GradientTape(persistent=True) as t:
        y = tf.stop_gradient(x) * x
        z = tf.stop_gradient(x * x)
    return [t.gradient(y, x), t.gradient(z, x)]


@program
def custom_gradient_plain(tf: Any) -> Any:
    @tf.custom_gradient
    def log1pexp(x: Any) -> Any:
        e = tf.exp(x)

        def grad(upstream: Any) -> Any:
            return upstream * (1 - 1 / (1 + e))

        return tf.math.log(1 + e), grad

    x = tf.constant([100.0, 0.5])
    with tf.GradientTape() as outer:
        outer.watch(x)
        with tf.GradientTape() as t:
            t.watch(x)
            y = log1pexp(x)
        g = t.gradient(y, x)
    return [y, g, outer.gradient(g, x)]


@program
def custom_gradient_second_order(tf: Any) -> Any:
    @tf.custom_gradient
    def f(x: Any) -> Any:
        def grad(dy: Any) -> Any:
            return dy * 3.0 * x

        return x * x, grad

    x = tf.constant(100.0)
    with tf.GradientTape() as outer:
        outer.watch(x)
        with tf.GradientTape() as inner:
            inner.watch(x)
            y = f(x)
        g = inner.gradient(y, x)
    return [g, outer.gradient(g, x)]


@program
def custom_gradient_variables(tf: Any) -> Any:
    v = tf.Variable(2.0)

    @tf.custom_gradient
    def f(x: Any) -> Any:
        def grad(dy: Any, variables: Any = None) -> Any:
            return dy * v, [dy * x * 10.0]

        return x * v, grad

    xc = tf.constant(100.0)
    with tf.GradientTape() as t:
        t.watch(xc)
        y = f(xc)
    return t.gradient(y, [xc, v])


@program
def custom_gradient_missing_variables(tf: Any) -> Any:
    v = tf.Variable(2.0)

    @tf.custom_gradient
    def f(x: Any) -> Any:
        return x * v, lambda dy: dy * v

    with tf.GradientTape():
        return f(tf.constant(1.0))


@program
def custom_gradient_two_inputs(tf: Any) -> Any:
    @tf.custom_gradient
    def f(a: Any, b: Any) -> Any:
        def grad(dy: Any) -> Any:
            return dy * b, dy * a

        return a * b, grad

    a, b = tf.constant(2.0), tf.constant(5.0)
    with tf.GradientTape() as t:
        t.watch([a, b])
        y = f(a, b)
    return t.gradient(y, [a, b])


@program
def forward_accumulator(tf: Any) -> Any:
    x = tf.constant([1.0, 2.0])
    with tf.autodiff.ForwardAccumulator(primals=x, tangents=tf.constant([1.0, 0.5])) as acc:
        y = tf.reduce_sum(x * x * x)
        z = tf.sin(x) * tf.exp(x)
        m = tf.matmul(tf.reshape(x, [1, 2]), tf.reshape(x, [2, 1]))
    return [acc.jvp(y), acc.jvp(z), acc.jvp(m), acc.jvp(tf.constant(3.0)),
            acc.jvp(tf.constant(3.0), unconnected_gradients="zero")]


@program
def forward_over_reverse(tf: Any) -> Any:
    v = tf.Variable([1.0, 2.0])
    with tf.autodiff.ForwardAccumulator(v, tf.constant([1.0, 1.0])) as acc:
        with tf.GradientTape() as t:
            y = tf.reduce_sum(v * v * v)
        g = t.gradient(y, v)
    return acc.jvp(g)


# ------------------------------------------------------------------ errors
@program
def err_mixed_dtypes(tf: Any) -> Any:
    return tf.constant(1.0) + tf.constant(1, dtype=tf.int32)


@program
def err_mixed_float_widths(tf: Any) -> Any:
    return tf.constant(1.0) * tf.constant(2.0, tf.float64)


@program
def err_truediv_dtypes(tf: Any) -> Any:
    return tf.constant(1.0) / tf.constant(2.0, tf.float64)


@program
def err_int_plus_float(tf: Any) -> Any:
    return tf.constant(1) + 1.5


@program
def err_int_pow_float(tf: Any) -> Any:
    return tf.constant(2) ** 0.5


@program
def err_broadcast(tf: Any) -> Any:
    return tf.constant([1.0, 2.0]) + tf.constant([1.0, 2.0, 3.0])


@program
def err_matmul_1d(tf: Any) -> Any:
    return tf.matmul(tf.ones([3]), tf.ones([3, 2]))


@program
def err_matmul_inner(tf: Any) -> Any:
    return tf.matmul(tf.ones([2, 3]), tf.ones([2, 2]))


@program
def err_reshape(tf: Any) -> Any:
    return tf.reshape(tf.ones([6]), [4, 2])


@program
def err_sqrt_int(tf: Any) -> Any:
    return tf.sqrt(tf.constant(4))


@program
def err_gather_range(tf: Any) -> Any:
    return tf.gather(tf.constant([1.0, 2.0]), [0, 5])


@program
def err_concat(tf: Any) -> Any:
    return tf.concat([tf.ones([2, 2]), tf.ones([3, 3])], axis=0)


@program
def err_reduce_axis(tf: Any) -> Any:
    return tf.reduce_sum(tf.ones([2, 2]), axis=2)


@program
def err_variable_iadd(tf: Any) -> Any:
    v = tf.Variable(1.0)
    v += 1.0
    return v


@program
def err_assign_shape(tf: Any) -> Any:
    return tf.Variable(1.0).assign([1.0, 2.0])


@program
def err_assign_dtype(tf: Any) -> Any:
    return tf.Variable(1.0).assign(tf.constant(1.0, dtype=tf.float64))


@program
def err_constant_dtype(tf: Any) -> Any:
    return tf.constant(1.5, dtype=tf.int32)


@program
def err_convert_dtype(tf: Any) -> Any:
    return tf.convert_to_tensor(tf.constant(1), dtype=tf.float32)


@program
def err_watch_float(tf: Any) -> Any:
    with tf.GradientTape() as t:
        t.watch(1.0)


@program
def err_reenter(tf: Any) -> Any:
    t = tf.GradientTape()
    with t:
        t.__enter__()


@program
def err_float_source(tf: Any) -> Any:
    x = tf.Variable(2.0)
    with tf.GradientTape() as t:
        y = x * x
    return t.gradient(y, 1.0)


# tapegrad raises a clear TypeError where TensorFlow fails with AttributeError
OWN_WORDING.add("err_float_source")
