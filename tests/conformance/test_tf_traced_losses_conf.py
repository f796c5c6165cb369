"""sparse_softmax_cross_entropy_with_logits under tf.vectorized_map, and matvec's gradient.

Under ``vectorized_map`` the labels are a tracer, so tapegrad computes the
loss with the op that takes them as an input (``nll_loss_traced``);
``tf.linalg.matvec(a, b, transpose_a=True)`` is ``b^T a`` (its gradient in
``a``'s own layout).  Each program runs on real TensorFlow 2.21 and on
``tapegrad.tf``; values, dtypes and exception classes must agree.
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
R = np.random.default_rng(8)
X1 = R.standard_normal((6, 4))        # per example: logits of 4 classes
Y1 = np.array([0, 3, 1, 2, 2, 1])
X2 = R.standard_normal((5, 3, 4))     # per example: 3 rows of logits
Y2 = R.integers(0, 4, (5, 3))
A = R.standard_normal((4, 3))
B = R.standard_normal(4)


def program(fn: Callable[[Any], Any]) -> Callable[[Any], Any]:
    PROGRAMS[fn.__name__] = fn
    return fn


def _dtypes(out: Any) -> list[str]:
    return [str(np.asarray(o.numpy()).dtype) for o in out]


def _per_example(tf: Any, x: np.ndarray, y: np.ndarray, dtype: Any) -> Any:
    def one(e: Any) -> Any:
        z = e[0]
        with tf.GradientTape() as tape:
            tape.watch(z)
            loss = tf.reduce_sum(
                tf.nn.sparse_softmax_cross_entropy_with_logits(labels=e[1], logits=z) * 1.5)
        return loss, tape.gradient(loss, z)

    out = tf.vectorized_map(one, (tf.constant(x, dtype=dtype), tf.constant(y)))
    return list(out) + [_dtypes(out)]


@program
def sparse_xent_rows_float64(tf: Any) -> Any:
    return _per_example(tf, X2, Y2, tf.float64), _per_example(tf, X1, Y1, tf.float64)


@program
def sparse_xent_rows_float32(tf: Any) -> Any:
    return _per_example(tf, X2, Y2, tf.float32), _per_example(tf, X1, Y1, tf.float32)


@program
def sparse_xent_values_only(tf: Any) -> Any:
    return tf.vectorized_map(
        lambda e: tf.nn.sparse_softmax_cross_entropy_with_logits(labels=e[1], logits=e[0]),
        (tf.constant(X2), tf.constant(Y2)))


@program
def sparse_xent_int32_labels(tf: Any) -> Any:
    return _per_example(tf, X1, Y1.astype(np.int32), tf.float64)


@program
def sparse_xent_forward_accumulator(tf: Any) -> Any:
    v = np.cos(np.arange(X1[0].size)).reshape(X1[0].shape)

    def one(e: Any) -> Any:
        with tf.autodiff.ForwardAccumulator(e[0], tf.constant(v)) as acc:
            loss = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=e[1], logits=e[0])
        return acc.jvp(loss)

    return tf.vectorized_map(one, (tf.constant(X1), tf.constant(Y1)))


@program
def sparse_xent_second_order(tf: Any) -> Any:
    def one(e: Any) -> Any:
        z = e[0]
        with tf.GradientTape() as outer:
            outer.watch(z)
            with tf.GradientTape() as inner:
                inner.watch(z)
                loss = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=e[1], logits=z)
            g = inner.gradient(loss, z)
            s = tf.reduce_sum(g * g)
        return outer.gradient(s, z)

    return tf.vectorized_map(one, (tf.constant(X1), tf.constant(Y1)))


@program
def sparse_xent_label_out_of_range_class(tf: Any) -> Any:
    bad = Y1.copy()
    bad[2] = 9
    try:
        tf.vectorized_map(
            lambda e: tf.nn.sparse_softmax_cross_entropy_with_logits(labels=e[1], logits=e[0]),
            (tf.constant(X1), tf.constant(bad)))
    except Exception as exc:  # noqa: BLE001 - the class is the result (texts differ: pfor)
        return type(exc).__name__, "Received a label value of 9" in str(exc)
    return "no error"


@program
def sparse_xent_label_rank_error(tf: Any) -> Any:
    def one(e: Any) -> Any:
        return tf.nn.sparse_softmax_cross_entropy_with_logits(labels=e[1], logits=e[0])

    try:
        tf.vectorized_map(one, (tf.constant(X1), tf.constant(Y2[:, :1].repeat(2, 1)[:1]
                                                              .repeat(6, 0))))
    except Exception as exc:  # noqa: BLE001
        return type(exc).__name__
    return "no error"


@program
def matvec_transpose_a_gradients(tf: Any) -> Any:
    a, b = tf.constant(A), tf.constant(B)
    with tf.GradientTape(persistent=True) as tape:
        tape.watch([a, b])
        y = tf.linalg.matvec(a, b, transpose_a=True)
        s = tf.reduce_sum(y * tf.constant([1.0, -2.0, 0.5], dtype=tf.float64))
    ga, gb = tape.gradient(s, [a, b])
    return y, ga, gb, tape.jacobian(y, a)


@program
def matvec_transpose_a_errors(tf: Any) -> Any:
    out = []
    for a, b in ((np.ones((4, 3)), np.ones(3)), (np.ones((4, 3), np.float32), np.ones(4))):
        try:
            tf.linalg.matvec(tf.constant(a), tf.constant(b), transpose_a=True)
            out.append("no error")
        except Exception as exc:  # noqa: BLE001
            out.append(type(exc).__name__)
    return out


@program
def w6_mlp_per_sample_small(tf: Any) -> Any:
    # the benchmark's TensorFlow-style program in small
    rng = np.random.default_rng(0)
    ps = [tf.constant(rng.standard_normal(s)) for s in ((4, 6), (6,), (6, 3), (3,))]
    x = tf.constant(rng.standard_normal((5, 4)))
    y = tf.constant(np.array([0, 2, 1, 1, 0]))

    def grads(e: Any) -> Any:
        W1, b1, W2, b2 = ps
        with tf.GradientTape() as tape:
            tape.watch(ps)
            h = tf.tanh(tf.linalg.matvec(W1, e[0], transpose_a=True) + b1)
            z = tf.linalg.matvec(W2, h, transpose_a=True) + b2
            loss = tf.nn.sparse_softmax_cross_entropy_with_logits(
                labels=tf.expand_dims(e[1], 0), logits=tf.expand_dims(z, 0))[0]
        return tape.gradient(loss, ps)

    return tf.vectorized_map(grads, (x, y))


NAMES = sorted(PROGRAMS)


def run(tf: Any, name: str) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return plain(PROGRAMS[name](tf))
        except Exception as exc:  # noqa: BLE001 - the exception is the result
            return ("raises", type(exc).__name__, str(exc).split("\n[tapegrad hint]")[0])


@pytest.fixture(scope="module")
def rtf():  # type: ignore[no-untyped-def]
    return real_tf()


@pytest.mark.parametrize("name", NAMES)
def test_program_matches_tensorflow(rtf, name: str) -> None:  # type: ignore[no-untyped-def]
    ours = run(tg_tf, name)
    theirs = run(rtf, name)
    assert same(ours, theirs, rtol=2e-5, atol=2e-6), \
        f"\ntapegrad:   {ours!r}\ntensorflow: {theirs!r}"


def test_matvec_transpose_a_gradient_is_in_the_matrix_layout() -> None:
    a = tg_tf.constant(R.standard_normal((64, 32)))
    xs = tg_tf.constant(R.standard_normal((8, 64)))

    def one(x: Any) -> Any:
        with tg_tf.GradientTape() as tape:
            tape.watch(a)
            s = tg_tf.reduce_sum(tg_tf.tanh(tg_tf.linalg.matvec(a, x, transpose_a=True)))
        return tape.gradient(s, a)

    g = tg_tf.vectorized_map(one, xs)
    assert g._data.flags.c_contiguous  # not a transposed view: .numpy() is a plain copy
    for i in range(8):
        want = np.outer(xs.numpy()[i], 1 - np.tanh(xs.numpy()[i] @ a.numpy()) ** 2)
        np.testing.assert_allclose(g.numpy()[i], want, rtol=1e-12, atol=1e-14)


def test_forward_accumulator_inside_vectorized_map_against_finite_differences() -> None:
    # an accumulator whose primal is vectorized_map's tracer (it used to fail: KeyError)
    v = np.cos(np.arange(4.0))

    def loss_of(x: np.ndarray, y: int) -> float:
        lp = x - np.log(np.exp(x).sum())
        return float(-lp[y])

    def one(e: Any) -> Any:
        with tg_tf.autodiff.ForwardAccumulator(e[0], tg_tf.constant(v)) as acc:
            loss = tg_tf.nn.sparse_softmax_cross_entropy_with_logits(labels=e[1], logits=e[0])
        return acc.jvp(loss)

    got = tg_tf.vectorized_map(one, (tg_tf.constant(X1), tg_tf.constant(Y1))).numpy()
    eps = 1e-6
    for i in range(len(X1)):
        fd = (loss_of(X1[i] + eps * v, Y1[i]) - loss_of(X1[i] - eps * v, Y1[i])) / (2 * eps)
        assert got[i] == pytest.approx(fd, rel=1e-6, abs=1e-9)
