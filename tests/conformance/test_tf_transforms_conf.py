"""ForwardAccumulator, vectorized_map and vectorized Jacobians: the same programs on both.

Each program gets the ``tf`` module (real TensorFlow 2.21 or ``tapegrad.tf``)
and returns values or raises; results (with ``None`` where TensorFlow gives
``None``) and exception classes must match.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import tapegrad.tf as tg_tf
from tests.tf_style.tf_helpers import real_tf
from tests.tf_style.tf_programs import plain, same

PROGRAMS: dict[str, Callable[[Any], Any]] = {}
R = np.random.default_rng(5)
A = R.standard_normal((4, 3)).astype(np.float32)
W = R.standard_normal((3, 2)).astype(np.float32)


def program(fn: Callable[[Any], Any]) -> Callable[[Any], Any]:
    PROGRAMS[fn.__name__] = fn
    return fn


def run(tf: Any, name: str) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return plain(PROGRAMS[name](tf))
        except Exception as exc:  # noqa: BLE001 - the exception is the result
            return ("raises", type(exc).__name__, str(exc).split("\n[tapegrad hint]")[0])


# ------------------------------------------------------------------ ForwardAccumulator
@program
def accumulator_basic(tf: Any) -> Any:
    x = tf.constant([1.0, 2.0, 3.0])
    with tf.autodiff.ForwardAccumulator(x, tf.constant([1.0, 0.0, 2.0])) as acc:
        y = tf.reduce_sum(tf.sin(x) * x ** 2)
        z = tf.exp(x)
    return acc.jvp(y), acc.jvp(z), acc.jvp(x)


@program
def accumulator_variables_and_nests(tf: Any) -> Any:
    v = tf.Variable(A)
    b = tf.Variable([0.5, -0.5])
    with tf.autodiff.ForwardAccumulator([v, b], [tf.ones_like(v), tf.constant([1.0, 2.0])]) \
            as acc:
        out = tf.nn.tanh(tf.matmul(v, tf.constant(W)) + b)
    return acc.jvp({"o": out, "s": tf.reduce_sum(out)})


@program
def accumulator_unconnected(tf: Any) -> Any:
    x = tf.constant(1.0)
    c = tf.constant(2.0)
    with tf.autodiff.ForwardAccumulator(x, tf.constant(1.0)) as acc:
        y = c * 3.0
    return acc.jvp(y), acc.jvp(y, unconnected_gradients=tf.UnconnectedGradients.ZERO)


@program
def accumulator_after_block(tf: Any) -> Any:
    x = tf.constant([1.0, 2.0])
    with tf.autodiff.ForwardAccumulator(x, tf.constant([1.0, 1.0])) as acc:
        y = x * x
    w = y * 3.0  # outside the block: not tracked
    return acc.jvp(y), acc.jvp(w)


@program
def forward_over_reverse_hvp(tf: Any) -> Any:
    x = tf.Variable([0.3, -0.7, 1.1])
    with tf.autodiff.ForwardAccumulator(x, tf.constant([1.0, -2.0, 0.5])) as acc:
        with tf.GradientTape() as tape:
            y = tf.reduce_sum(tf.sin(x) * x ** 2)
        g = tape.gradient(y, x)
    return g, acc.jvp(g)


@program
def reverse_over_forward(tf: Any) -> Any:
    x = tf.Variable([0.3, -0.7, 1.1])
    with tf.GradientTape() as tape:
        with tf.autodiff.ForwardAccumulator(x, tf.constant([1.0, 0.0, 2.0])) as acc:
            y = tf.reduce_sum(tf.exp(x) * x)
        jv = acc.jvp(y)
    return jv, tape.gradient(jv, x)


@program
def nested_accumulators(tf: Any) -> Any:
    x = tf.constant(0.8)
    with tf.autodiff.ForwardAccumulator(x, tf.constant(1.0)) as outer:
        with tf.autodiff.ForwardAccumulator(x, tf.constant(1.0)) as inner:
            y = x ** 3
        d1 = inner.jvp(y)
    return d1, outer.jvp(d1)


# ------------------------------------------------------------------ vectorized_map
@program
def vectorized_map_basic(tf: Any) -> Any:
    x = tf.constant(A)
    return (tf.vectorized_map(lambda r: tf.reduce_sum(r * r), x),
            tf.vectorized_map(lambda r: tf.nn.softmax(r), x),
            tf.vectorized_map(lambda r: tf.linalg.matvec(tf.transpose(tf.constant(W)), r), x))


@program
def vectorized_map_nests(tf: Any) -> Any:
    x = tf.constant(A)
    y = tf.constant(A[:, :2])

    def f(pair: Any) -> Any:
        a, b = pair
        return {"s": tf.reduce_sum(a) + tf.reduce_sum(b), "p": a[:2] * b}

    return tf.vectorized_map(f, (x, y))


@program
def per_example_gradients_with_a_tape_inside(tf: Any) -> Any:
    w = tf.Variable(W)
    xs = tf.constant(A)

    def grad_one(x: Any) -> Any:
        with tf.GradientTape() as tape:
            y = tf.reduce_sum(tf.tanh(tf.matmul(tf.expand_dims(x, 0), w)) ** 2)
        return tape.gradient(y, w)

    return tf.vectorized_map(grad_one, xs)


# ------------------------------------------------------------------ jacobians
@program
def jacobian_pfor_and_loop(tf: Any) -> Any:
    x = tf.constant(A)
    with tf.GradientTape(persistent=True) as t:
        t.watch(x)
        y = tf.sin(tf.matmul(x, tf.constant(W)))
    return (t.jacobian(y, x), t.jacobian(y, x, experimental_use_pfor=False),
            t.batch_jacobian(y, x), t.batch_jacobian(y, x, experimental_use_pfor=False))


A5 = R.standard_normal((5, 5)).astype(np.float32)
BAD5 = A5.copy()
BAD5[1, 2], BAD5[3, 0] = np.inf, np.nan
X5 = R.standard_normal(5).astype(np.float32)


@program
def jacobian_w7_matvec_pfor_and_loop(tf: Any) -> Any:
    # the W7 Jacobian (tapegrad: on its structured basis when vectorized), a matrix on the
    # right, and infinities/NaN in the matrix (the dense product's NaN pattern)
    x = tf.constant(X5)
    out = []
    for m in (A5, BAD5):
        a = tf.constant(m)
        with tf.GradientTape(persistent=True) as t:
            t.watch(x)
            y = tf.tanh(tf.linalg.matvec(a, x))
            z = tf.linalg.matvec(a, x, transpose_a=True) * 2.0
            w = tf.squeeze(tf.matmul(tf.expand_dims(x, 0), a), 0)
        for target in (y, z, w):
            out += [t.jacobian(target, x), t.jacobian(target, x, experimental_use_pfor=False)]
    return out


@program
def jacobian_nested_sources_and_unconnected(tf: Any) -> Any:
    x = tf.constant([1.0, 2.0])
    z = tf.constant([3.0])
    with tf.GradientTape(persistent=True) as t:
        t.watch([x, z])
        y = x * x
    return (t.jacobian(y, [x, z]),
            t.jacobian(y, [x, z], unconnected_gradients=tf.UnconnectedGradients.ZERO))


@program
def jacobians_inside_an_accumulator(tf: Any) -> Any:
    # the accumulator sees the ops of tape.jacobian / batch_jacobian computed inside it
    x = tf.constant([1.0, 2.0])
    with tf.autodiff.ForwardAccumulator(x, tf.constant([1.0, 0.5])) as acc:
        with tf.GradientTape(persistent=True) as tape:
            tape.watch(x)
            y = tf.sin(x) * x * x
        j = tape.jacobian(y, x)
        jl = tape.jacobian(y, x, experimental_use_pfor=False)
        xb = tf.reshape(x, [2, 1])
        with tf.GradientTape(persistent=True) as t2:
            t2.watch(xb)
            yb = xb ** 3
        bj = t2.batch_jacobian(yb, xb)
        bjl = t2.batch_jacobian(yb, xb, experimental_use_pfor=False)
    return j, acc.jvp(j), acc.jvp(jl), acc.jvp(bj), acc.jvp(bjl)


@program
def jacobians_inside_tf_function(tf: Any) -> Any:
    @tf.function
    def f(x: Any) -> Any:
        with tf.GradientTape(persistent=True) as tape:
            tape.watch(x)
            y = tf.sin(x) * x
        return (tape.jacobian(y, x), tape.jacobian(y, x, experimental_use_pfor=False))

    return [f(tf.constant(v)) for v in ([1.0, 2.0], [0.5, -1.0])]


@program
def batch_jacobian_of_a_scalar(tf: Any) -> Any:
    x = tf.constant([[1.0, 2.0]])
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.reduce_sum(x)
    return tape.batch_jacobian(y, x)


@program
def batch_jacobian_of_a_vector(tf: Any) -> Any:
    x = tf.constant([[1.0, 2.0]])
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.reduce_sum(x, axis=1)
    return tape.batch_jacobian(y, x)


@program
def jacobian_of_jacobian(tf: Any) -> Any:
    x = tf.constant([0.5, 1.5])
    with tf.GradientTape() as outer:
        outer.watch(x)
        with tf.GradientTape() as inner:
            inner.watch(x)
            y = tf.reduce_sum(x ** 3) * tf.reduce_sum(x)
        g = inner.gradient(y, x)
    return outer.jacobian(g, x)


@program
def jacobian_non_persistent_without_pfor(tf: Any) -> Any:
    x = tf.constant([1.0, 2.0])
    with tf.GradientTape() as t:
        t.watch(x)
        y = x * x
    return t.jacobian(y, x, experimental_use_pfor=False)


@program
def batch_jacobian_non_persistent_without_pfor(tf: Any) -> Any:
    x = tf.constant(A)
    with tf.GradientTape() as t:
        t.watch(x)
        y = x * x
    return t.batch_jacobian(y, x, experimental_use_pfor=False)


@program
def jacobian_non_persistent_twice(tf: Any) -> Any:
    x = tf.constant([1.0, 2.0])
    with tf.GradientTape() as t:
        t.watch(x)
        y = x * x
    t.jacobian(y, x)
    return t.jacobian(y, x)


NAMES = sorted(PROGRAMS)


@pytest.fixture(scope="module")
def rtf():  # type: ignore[no-untyped-def]
    return real_tf()


@pytest.mark.parametrize("name", NAMES)
def test_program_matches_tensorflow(rtf, name: str) -> None:  # type: ignore[no-untyped-def]
    ours = run(tg_tf, name)
    theirs = run(rtf, name)
    # float32 kernels differ in the last bits (tanh, sin): a float32 tolerance
    assert same(ours, theirs, rtol=2e-5, atol=2e-6), \
        f"\ntapegrad:   {ours!r}\ntensorflow: {theirs!r}"
