"""``tf.cond``, ``tf.while_loop``, ``tf.switch_case``, ``tf.case`` and ``tf.TensorArray``:
eager semantics, gradients through ``GradientTape``, TensorFlow's errors, and the graph-mode
checks a tracing level triggers (a stub tracer stands in for ``tf.function``)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import tapegrad.tf as tf
from tests.tf_style.control_stub import StubTrace


def test_cond_runs_one_branch_and_returns_any_nest() -> None:
    ran = []
    x = tf.constant(2.0)
    out = tf.cond(x > 1.0, lambda: ran.append("t") or {"a": (x * 3.0, [x])},
                  lambda: ran.append("f") or {"a": (x, [x])})
    assert ran == ["t"] and float(out["a"][0]) == 6.0 and isinstance(out["a"][1], list)
    assert tf.cond(True, lambda: 1, lambda: 2) == 1  # Python values, as eager TensorFlow
    assert tf.cond(tf.constant(False), lambda: None, lambda: None) is None
    assert isinstance(tf.cond(tf.constant(True), lambda: [x], lambda: [x]), list)


def test_cond_gradients_first_and_second_order() -> None:
    x = tf.Variable(1.5)
    with tf.GradientTape() as outer:
        with tf.GradientTape() as inner:
            y = tf.cond(x > 1.0, lambda: x ** 3, lambda: tf.sin(x))
        g = inner.gradient(y, x)
    h = outer.gradient(g, x)
    assert float(g) == pytest.approx(3 * 1.5 ** 2) and float(h) == pytest.approx(6 * 1.5)


def test_cond_argument_errors() -> None:
    with pytest.raises(TypeError, match="^'true_fn' must be callable."):
        tf.cond(True, 1, lambda: 2)
    with pytest.raises(TypeError, match="'false_fn' argument required"):
        tf.cond(True, lambda: 1)
    with pytest.raises(ValueError, match="truth value of an array"):
        tf.cond(tf.constant([True, False]), lambda: 1, lambda: 2)


def test_traced_cond_checks_the_branches() -> None:
    x = tf.constant(1.0)
    with StubTrace() as tr:
        assert float(tf.cond(x > 0, lambda: x, lambda: tf.stack([x, x]))) == 1.0  # shapes free
        with pytest.raises(TypeError) as e:
            tf.cond(x > 0, lambda: x, lambda: tf.cast(x, tf.int32))
        with pytest.raises(AssertionError, match=r"^\[2, 1\]"):
            tf.cond(x > 0, lambda: (x, x), lambda: x)
        with pytest.raises(TypeError) as e2:
            tf.cond(x > 0, lambda: {"a": x}, lambda: {"b": x})
        out = tf.cond(x > 0, lambda: 1.0, lambda: 2.0)  # Python values become tensors
    assert str(e.value).startswith(
        "true_fn and false_fn arguments to tf.cond must have the same number, type, and overall "
        "structure of return values.")
    assert "have different types" in str(e.value)
    assert "The two dictionaries don't have the same set of keys." in str(e2.value)
    assert tf.is_tensor(out) and float(out) == 1.0
    assert tr.kinds() == ["cond"] * 5


def test_while_loop_nests_and_result_structure() -> None:
    i, (a, b) = tf.while_loop(lambda i, ab: i < 3, lambda i, ab: (i + 1, (ab[0] * 2.0, ab[1] + 1)),
                              (0, (1.0, 0)))
    assert int(i) == 3 and float(a) == 8.0 and int(b) == 3 and tf.is_tensor(i)
    out = tf.while_loop(lambda i, s: i < 3, lambda i, s: [i + 1, s * 2.0], [0, 1.0])
    assert isinstance(out, list) and float(out[1]) == 8.0
    (d,) = tf.while_loop(lambda d: d["n"] < 4, lambda d: ({"n": d["n"] + 1},), ({"n": 0},))
    assert int(d["n"]) == 4


def test_while_loop_shapes_may_change_eagerly_and_maximum_iterations() -> None:
    _, s = tf.while_loop(lambda i, s: i < 3, lambda i, s: (i + 1, tf.concat([s, s], 0)),
                         (0, tf.ones([1])))
    assert s.shape == (8,)
    (i,) = tf.while_loop(lambda i: i < 10, lambda i: (i + 1,), (0,),
                         maximum_iterations=tf.constant(4))
    assert int(i) == 4
    (i,) = tf.while_loop(lambda i: i < 10, lambda i: (i + 1,), (0,), maximum_iterations=-1)
    assert int(i) == 0


def test_while_loop_gradients_and_back_prop_false() -> None:
    x = tf.Variable(1.2)
    with tf.GradientTape(persistent=True) as tape:
        _, y = tf.while_loop(lambda i, y: i < 4, lambda i, y: (i + 1, y * x), (0, 1.0))
        _, z = tf.while_loop(lambda i, y: i < 4, lambda i, y: (i + 1, y * x), (0, 1.0),
                             back_prop=False)
        with StubTrace():
            _, w = tf.while_loop(lambda i, y: i < 4, lambda i, y: (i + 1, y * x), (0, 1.0),
                                 back_prop=False)
    assert float(tape.gradient(y, x)) == pytest.approx(4 * 1.2 ** 3, rel=1e-6)
    # eager TensorFlow ignores back_prop=False; inside a trace it stops the gradient
    assert float(tape.gradient(z, x)) == pytest.approx(4 * 1.2 ** 3, rel=1e-6)
    assert tape.gradient(w, x) is None and float(w) == pytest.approx(1.2 ** 4, rel=1e-6)


def test_while_loop_errors_are_tensorflows() -> None:
    with pytest.raises(ValueError, match="^'loop_vars' must be provided."):
        tf.while_loop(lambda: False, lambda: (), ())
    with pytest.raises(TypeError, match="^'parallel_iterations' must be a positive integer."):
        tf.while_loop(lambda i: i < 1, lambda i: (i,), (0,), parallel_iterations=0)
    with pytest.raises(ValueError, match=r"must be a scalar. Received shape: \(1,\)"):
        tf.while_loop(lambda i: i < 1, lambda i: (i,), (0,), maximum_iterations=[3])
    with pytest.raises(TypeError, match="^Cannot iterate over a scalar tensor."):
        tf.while_loop(lambda i: i < 3, lambda i: i + 1, [tf.constant(0)])
    with pytest.raises(ValueError) as e:
        tf.while_loop(lambda i, s: i < 3, lambda i, s: (i + 1,), (0, 1.0))
    assert str(e.value).splitlines()[0] == \
        "The two structures don't have the same nested structure."
    assert "The two structures don't have the same number of elements." in str(e.value)
    assert str(e.value).endswith("Entire first structure:\n[., .]\nEntire second structure:\n[.]")


def test_traced_while_loop_checks_shapes_and_dtypes() -> None:
    with StubTrace() as tr:
        with pytest.raises(ValueError, match="enters the loop with shape \\(1,\\), but has shape "
                           "\\(2,\\) after one iteration"):
            tf.while_loop(lambda i, s: i < 3, lambda i, s: (i + 1, tf.concat([s, s], 0)),
                          (0, tf.ones([1])))
        _, s = tf.while_loop(lambda i, s: i < 3, lambda i, s: (i + 1, tf.concat([s, s], 0)),
                             (0, tf.ones([1])),
                             shape_invariants=(tf.TensorShape([]), tf.TensorShape([None])))
        with pytest.raises(TypeError, match="enters the loop with type <dtype: 'float32'> but "
                           "has type <dtype: 'float64'> after 1 iteration"):
            tf.while_loop(lambda i, s: i < 3, lambda i, s: (i + 1, tf.cast(s, tf.float64)),
                          (0, tf.ones([1])))
    assert s.shape == (8,)
    assert tr.kinds() == ["while_loop"] * 3
    # what the tracer receives is flat tensors (Python numbers converted)
    assert all(tf.is_tensor(v) for v in tr.calls[1][1])


def test_switch_case() -> None:
    c = tf.constant
    fns = [lambda: c(10.0), lambda: c(20.0), lambda: c(30.0)]
    assert float(tf.switch_case(c(1), fns)) == 20.0
    assert float(tf.switch_case(c(7), fns)) == 30.0  # out of range: the last branch
    assert float(tf.switch_case(c(-1), fns, default=lambda: c(0.0))) == 0.0
    assert float(tf.switch_case(c(1), {0: fns[0], 1: fns[1]})) == 20.0
    assert float(tf.switch_case(c(1), [(1, fns[0]), (0, fns[1])])) == 10.0
    x = tf.Variable(2.0)
    with tf.GradientTape() as tape:
        y = tf.switch_case(c(1), [lambda: x, lambda: x * x])
    assert float(tape.gradient(y, x)) == 4.0
    with pytest.raises(TypeError, match="^'branch_index' must be a Tensor, got <class 'int'>"):
        tf.switch_case(1, fns)
    with pytest.raises(TypeError, match="must be an integer Tensor, got <dtype: 'float32'>"):
        tf.switch_case(c(1.0), fns)
    with pytest.raises(ValueError, match=r"contiguous range of \[0 to 2\) but found \{0,2\}"):
        tf.switch_case(c(1), {0: fns[0], 2: fns[1]})
    with StubTrace() as tr:
        with pytest.raises(TypeError, match="^branches\\[0\\] and branches\\[1\\] arguments to "
                           "tf.switch_case must have the same number"):
            tf.switch_case(c(0), [lambda: c(1.0), lambda: c(1)])
    assert tr.kinds() == ["switch_case"]


def test_case() -> None:
    c = tf.constant
    x = c(3.0)
    pairs = [(x < 2.0, lambda: c(1.0)), (x < 4.0, lambda: c(2.0))]
    assert float(tf.case(pairs, default=lambda: c(3.0))) == 2.0
    assert float(tf.case(pairs)) == 2.0  # the last pair is the default
    assert float(tf.case([(x < 5.0, lambda: [c(1.0)])], default=lambda: [c(2.0)])) == 1.0
    assert isinstance(tf.case([(x < 5.0, lambda: [c(1.0)])], default=lambda: [c(2.0)],
                              strict=True), list)
    with pytest.raises(tf.errors.InvalidArgumentError) as e:
        tf.case([(x < 2.0, lambda: c(1.0)), (x < 3.0, lambda: c(2.0))])
    assert str(e.value) == ("Expected 'tf.Tensor(False, shape=(), dtype=bool)' to be true. "
                            "Summarized data: b'Input error: None of conditions evaluated as "
                            "True:'\nFalse, False")
    with pytest.raises(TypeError, match="^pred must be a Tensor, got: True"):
        tf.case([(True, lambda: c(1.0))])


# ------------------------------------------------------------------ TensorArray
def test_tensor_array_reads_writes_and_shapes() -> None:
    ta = tf.TensorArray(tf.float32, size=2)
    ta2 = ta.write(0, 1.0)
    assert ta2 is not ta
    assert ta2.write(1, tf.constant(2.0)).stack().numpy().tolist() == [1.0, 2.0]
    part = tf.TensorArray(tf.float32, size=3).write(1, [1.0, 2.0]).stack()
    assert part.numpy().tolist() == [[0, 0], [1, 2], [0, 0]]
    assert tf.TensorArray(tf.float32, size=0, dynamic_size=True).write(3, 1.0).stack().shape == (4,)
    assert tf.TensorArray(tf.float32, size=0, element_shape=[2]).stack().shape == (0, 2)
    ta = tf.TensorArray(tf.float32, size=3).unstack([[1., 2.], [3., 4.], [5., 6.]])
    assert ta.gather([2, 0]).numpy().tolist() == [[5, 6], [1, 2]]
    assert ta.read(2).numpy().tolist() == [5, 6] and int(ta.size()) == 3
    sc = tf.TensorArray(tf.float32, size=3).scatter([2, 0], [[1., 2.], [3., 4.]]).stack()
    assert sc.numpy().tolist() == [[3, 4], [0, 0], [1, 2]]
    sp = tf.TensorArray(tf.float32, size=2).split([1., 2., 3.], [1, 2])
    assert sp.read(1).numpy().tolist() == [2, 3]
    cc = tf.TensorArray(tf.float32, size=2, infer_shape=False).write(0, [1.]).write(1, [2., 3.])
    assert cc.concat().numpy().tolist() == [1, 2, 3]


def test_tensor_array_errors() -> None:
    ta = tf.TensorArray(tf.float32, size=2).write(0, 1.0)
    ta.read(0)
    with pytest.raises(tf.errors.InvalidArgumentError, match="Could not read index 0 twice"):
        ta.read(0)
    with pytest.raises(tf.errors.OutOfRangeError, match="^Tried to write to index 2 but array "
                       "is not resizeable and size is: 2 "):
        tf.TensorArray(tf.float32, size=2).write(2, 1.0)
    with pytest.raises(tf.errors.InvalidArgumentError, match="^TensorArray dtype is float32 but "
                       "Op is trying to write dtype int32 "):
        tf.TensorArray(tf.float32, size=2).write(0, tf.constant(1))
    with pytest.raises(ValueError, match=r"^Incompatible shape for value \(\(2,\)\), expected "
                       r"\(\(1,\)\)"):
        tf.TensorArray(tf.float32, size=2).write(0, [1.0]).write(1, [1.0, 2.0])
    with pytest.raises(ValueError, match="partially known TensorShape <unknown>"):
        tf.TensorArray(tf.float32, size=2).read(1)
    with pytest.raises(ValueError, match="^Size must be declared"):
        tf.TensorArray(tf.float32)
    with pytest.raises(ValueError, match="^Cannot unstack 3 tensors into a TensorArray of "
                       "static size 2 "):
        tf.TensorArray(tf.float32, size=2).unstack([1., 2., 3.])
    with pytest.raises(tf.errors.InvalidArgumentError, match="Concat saw a scalar shape"):
        tf.TensorArray(tf.float32, size=2).write(0, 1.).write(1, 2.).concat()


def test_tensor_array_gradients() -> None:
    x = tf.Variable([1.0, 2.0])
    with tf.GradientTape() as tape:
        ta = tf.TensorArray(tf.float32, size=3, clear_after_read=False)
        for i in range(3):
            ta = ta.write(i, x * float(i + 1))
        y = tf.reduce_sum(ta.stack() ** 2) + tf.reduce_sum(ta.read(1))
    assert tape.gradient(y, x).numpy().tolist() == [30.0, 58.0]  # real TensorFlow's values


def _fib(n: int) -> Any:
    ta = tf.TensorArray(tf.float32, size=n, clear_after_read=False)
    ta = ta.write(0, 0.0).write(1, 1.0)

    def body(i: Any, ta: Any) -> Any:
        return i + 1, ta.write(i, ta.read(i - 1) + ta.read(i - 2))

    _, ta = tf.while_loop(lambda i, ta: i < n, body, (tf.constant(2), ta))
    return ta.stack()


def test_tensor_array_as_a_loop_variable_eager_and_traced() -> None:
    want = [0.0, 1.0, 1.0, 2.0, 3.0, 5.0, 8.0]
    assert _fib(7).numpy().tolist() == want
    with StubTrace() as tr:
        got = _fib(7)
    assert got.numpy().tolist() == want
    # the tracer got the array as one tensor of shape (size,) + element_shape
    (kind, flat), = tr.calls
    assert kind == "while_loop" and [tuple(v.shape) for v in flat] == [(), (7,)]


def test_traced_tensor_array_gradients() -> None:
    x = tf.Variable(1.5)

    def run() -> Any:
        ta = tf.TensorArray(tf.float32, size=4, clear_after_read=False).write(0, x)

        def body(i: Any, ta: Any) -> Any:
            return i + 1, ta.write(i, ta.read(i - 1) * x)

        _, ta = tf.while_loop(lambda i, ta: i < 4, body, (tf.constant(1), ta))
        return tf.reduce_sum(ta.stack())

    with tf.GradientTape() as t1:
        eager = run()
    with StubTrace(), tf.GradientTape() as t2:
        traced = run()
    want = 1 + 2 * 1.5 + 3 * 1.5 ** 2 + 4 * 1.5 ** 3
    assert float(eager) == pytest.approx(float(traced))
    assert float(t1.gradient(eager, x)) == pytest.approx(want)
    assert float(t2.gradient(traced, x)) == pytest.approx(want)


def test_vectorized_map_with_cond_and_while_inside() -> None:
    def f(row: Any) -> Any:
        y = tf.cond(tf.reduce_sum(row) > 0, lambda: row * 2.0, lambda: -row)
        _, z = tf.while_loop(lambda i, z: tf.reduce_sum(z) < 10.0,
                             lambda i, z: (i + 1, z * 2.0 + 1.0), (0, y))
        return z

    xs = np.array([[1.0, 2.0], [-3.0, -1.0], [0.5, -2.0], [4.0, 4.0]], np.float32)
    got = tf.vectorized_map(f, tf.constant(xs)).numpy()
    want = np.stack([f(tf.constant(r)).numpy() for r in xs])
    np.testing.assert_allclose(got, want)
    # Python numbers come out as TensorFlow's dtypes (int32 counters, float32 values)
    i, _ = tf.vectorized_map(lambda r: tf.while_loop(lambda i, z: tf.reduce_sum(z) < 10.0,
                                                     lambda i, z: (i + 1, z * 2.0), (0, r)),
                             tf.constant([[1.0, 2.0], [5.0, 6.0]]))
    assert i.dtype == tf.int32 and i.numpy().tolist() == [2, 0]
    k = tf.vectorized_map(lambda r: tf.cond(tf.reduce_sum(r) > 0, lambda: 1.0, lambda: 2.0),
                          tf.constant(xs))
    assert k.dtype == tf.float32 and k.numpy().tolist() == [1.0, 2.0, 2.0, 1.0]
