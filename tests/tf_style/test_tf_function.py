"""``tf.function`` in tapegrad: TensorFlow's trace semantics and a program replayed fast.

The expected trace counts, side effects and errors are TensorFlow 2.21's (the
conformance suite, tests/conformance/test_tf_function_conf.py, compares the
same scenarios with real TensorFlow when it is installed).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import tapegrad.tf as tf
from tests.tf_style import tf_function_cases as cases


def test_one_trace_per_signature_and_side_effects() -> None:
    r = cases.counts_and_side_effects(tf)
    assert r["count"] == 6 and r["python_calls"] == 6  # Python values trace by value
    assert r["values"] == [3.0, 5.0, [3.0, 5.0], 10.0, 10.0, 13.0, 5.0, 5.0, 7.0]
    assert r["tf_print"].count("value") == 9  # tf.print runs on every call


def test_python_print_shows_the_symbolic_tensor_once() -> None:
    assert cases.python_print_is_symbolic(tf)["stdout"] == \
        'py Tensor("x:0", shape=(), dtype=float32)\n'


def test_reduce_retracing_generalizes_shapes() -> None:
    r = cases.reduce_retracing(tf)
    assert r["count"] == 3 and r["shapes"] == ["(2,)", "(None,)"]
    assert r["values"] == [4.0, 6.0, 8.0, 8.0]


def test_input_signature_binds_and_refuses() -> None:
    r = cases.input_signature(tf)
    assert r["ok"] == [2.0, 4.0] and r["list"] == [2.0, 4.0, 6.0] and r["count"] == 1
    assert r["dtype"][0] == "TypeError" and r["dtype"][1].startswith(
        "Binding inputs to tf.function failed due to `Can not cast TensorSpec(shape=(2,), "
        "dtype=tf.int32, name=None) to TensorSpec(shape=(None,), dtype=tf.float32, name=None)`")
    assert "`too many positional arguments`" in r["extra"][1]
    assert "TensorSpec(shape=(), dtype=tf.float32" in r["scalar"][1]
    assert r["cf"] == [2.0, 4.0] and r["count_after"] == 1
    assert r["cf_dtype"][0] == "InvalidArgumentError"
    assert "was expected to be a float tensor but is a int32 tensor" in r["cf_dtype"][1]


def test_variables_only_on_the_first_trace_and_per_instance_methods() -> None:
    r = cases.variables_created_once(tf)
    assert r["error"][0] == "ValueError"
    assert "tf.function only supports singleton tf.Variables created on the first call" in \
        r["error"][1]
    assert r["bad_count"] == 1
    assert r["values"] == [6.0, 8.0, 10.0]
    assert r["python_calls"] == 4 and r["m1_count"] == 2 and r["m2_count"] == 2


def test_assign_and_tf_print_run_every_call() -> None:
    r = cases.assign_and_print_every_call(tf)
    assert r["outs"] == [4.0, 10.0, 22.0] and r["v"] == 22.0 and r["count"] == 1
    assert r["printed"].splitlines() == ["v is 2", "v is 5", "v is 11"]  # TF's PrintV2 text


def test_train_step_equals_eager() -> None:
    r = cases.train_step_gradients(tf)
    assert r["count"] == 2  # Keras creates its slot variables on the first call
    tf.config.run_functions_eagerly(True)
    try:
        e = cases.train_step_gradients(tf)
    finally:
        tf.config.run_functions_eagerly(False)
    np.testing.assert_allclose(r["losses"], e["losses"], rtol=1e-6)
    for a, b in zip(r["grads"] + r["w"], e["grads"] + e["w"]):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-7)


def test_tape_outside_first_and_second_order() -> None:
    r = cases.tape_outside(tf)
    assert r["count"] == 1
    w = np.array([1.5, -0.5])
    for v, o in zip(([0.3, 0.7], [1.0, -2.0]), r["out"]):
        x = np.array(v)
        # y = sum(sin(x w) x): dy/dx = cos(xw) w x + sin(xw); d2 = -sin w^2 x + 2 cos w
        np.testing.assert_allclose(o["y"], np.sum(np.sin(x * w) * x), rtol=1e-6)
        np.testing.assert_allclose(o["gx"], np.cos(x * w) * w * x + np.sin(x * w), rtol=1e-5)
        np.testing.assert_allclose(o["gw"], np.cos(x * w) * x * x, rtol=1e-5)
        np.testing.assert_allclose(o["hxx"], -np.sin(x * w) * w * w * x + 2 * np.cos(x * w) * w,
                                   rtol=1e-4)


def test_graph_mode_errors() -> None:
    r = cases.graph_mode_errors(tf)
    assert r["bool"][0] == "OperatorNotAllowedInGraphError"
    # raised while tracing (AutoGraph on): TensorFlow's "in user code:" text ends with it
    assert r["numpy"] == ("AttributeError",
                          "    AttributeError: 'SymbolicTensor' object has no attribute 'numpy'")
    assert issubclass(tf.errors.OperatorNotAllowedInGraphError, TypeError)


def test_get_concrete_function_traces_without_running() -> None:
    r = cases.jit_compile_and_get_concrete(tf)
    assert r == {"traced_by_gcf": 1, "out": [0.0, 1.0, 4.0], "calls_after": 1, "count": 1,
                 "cf_out": [2.0, 0.0, 6.0]}
    v = tf.Variable(1.0)

    @tf.function
    def f(x: Any) -> Any:
        v.assign_add(x)
        return v + 0.0

    f.get_concrete_function(tf.TensorSpec([], tf.float32))
    assert float(v) == 1.0  # a trace without a call changes nothing


def test_replay_does_not_run_the_python_body() -> None:
    n = [0]

    @tf.function
    def f(x: Any) -> Any:
        n[0] += 1
        return tf.reduce_sum(tf.nn.relu(x) ** 2)

    for k in range(5):
        assert float(f(tf.constant([1.0, -2.0, float(k)]))) == 1.0 + k * k
    assert n[0] == 1
    prog = next(iter(f._traces[0].programs.values()))
    assert "def _replay" in prog.source()


def test_tape_inside_gradient_needs_no_engine_at_replay(monkeypatch: pytest.MonkeyPatch) -> None:
    w = tf.Variable([[1.0, 2.0], [3.0, 4.0]])

    @tf.function
    def step(x: Any) -> Any:
        with tf.GradientTape() as tape:
            y = tf.reduce_sum(tf.tanh(tf.matmul(x, w)))
        return tape.gradient(y, w)

    x0 = tf.constant([[0.1, 0.2]])
    step(x0)
    import tapegrad.engine as engine

    def boom(*a: Any, **k: Any) -> Any:
        raise AssertionError("the engine ran at replay")

    monkeypatch.setattr(engine, "run_backward", boom)
    x = np.array([[0.3, -0.1]], np.float32)
    g = step(tf.constant(x)).numpy()
    t = np.tanh(x @ w.numpy())
    np.testing.assert_allclose(g, x.T @ (1 - t * t), rtol=1e-6)


def test_keras_model_call_decorated() -> None:
    tf.keras.utils.set_random_seed(0)
    model = tf.keras.Sequential([tf.keras.Input((3,)), tf.keras.layers.Dense(2)])
    fast = tf.function(model)
    x = tf.constant(np.arange(6, dtype=np.float32).reshape(2, 3))
    np.testing.assert_allclose(fast(x).numpy(), model(x).numpy(), rtol=1e-6)
    model.layers[0].kernel.assign(tf.ones((3, 2)))
    np.testing.assert_allclose(fast(x).numpy(), model(x).numpy(), rtol=1e-6)  # reads by ref


def test_random_numbers_differ_per_call() -> None:
    tf.random.set_seed(5)

    @tf.function
    def f(x: Any) -> Any:
        return x + tf.random.normal([3])

    a, b = f(tf.zeros(3)).numpy(), f(tf.zeros(3)).numpy()
    assert not np.array_equal(a, b)
    assert f.experimental_get_tracing_count() == 1


def test_run_functions_eagerly() -> None:
    n = [0]

    @tf.function
    def f(x: Any) -> Any:
        n[0] += 1
        return x * 2

    tf.config.run_functions_eagerly(True)
    try:
        f(tf.constant(1.0))
        f(tf.constant(1.0))
    finally:
        tf.config.run_functions_eagerly(False)
    assert n[0] == 2 and f.experimental_get_tracing_count() == 0


def test_keras_subclass_method_traced_per_instance() -> None:
    class Net(tf.keras.Model):
        def __init__(self) -> None:
            super().__init__()
            self.d = tf.keras.layers.Dense(2)

        @tf.function
        def call(self, x: Any) -> Any:
            return tf.nn.relu(self.d(x))

    tf.keras.utils.set_random_seed(2)
    a, b = Net(), Net()
    x = tf.constant([[1.0, -2.0, 0.5]])
    ya, yb = a(x), b(x)
    for m, y in ((a, ya), (b, yb)):
        k, bias = m.d.kernel.numpy(), m.d.bias.numpy()
        np.testing.assert_allclose(y.numpy(), np.maximum(x.numpy() @ k + bias, 0), rtol=1e-6)
        m(x)
        # Keras variables made while tracing are lifted out (tf.init_scope): one trace
        assert m.call.experimental_get_tracing_count() == 1


def test_while_loop_on_traced_condition_is_one_program() -> None:
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)  # no signature falls back to eager
        r = cases.while_loop_traced(tf)
    # TensorFlow 2.21's results (tests/conformance compares every entry with it)
    assert [a.tolist() for a in r["grow"][0]] == [[64.0, 128.0], 6]
    assert [a.tolist() for a in r["grow"][2]] == [[300.0, 2.0], 0]
    assert r["grow_count"] == 1 and r["nested_count"] == 1 and r["ranged_count"] == 1
    assert [float(a) for a in r["accumulate"]] == [6.0, 9.0] and r["accumulate_v"] == 9.0
    assert [[float(a) for a in c] for c in r["capped"]] == [[3, 8.0], [7, 2187.0],
                                                             [10, 1024.0]]
    assert r["doubling"][1][0].tolist() == [7.0, 8.0, 8.0, 9.0, 8.0, 9.0, 9.0, 10.0]
    assert [int(a) for a in r["nested"]] == [35, 175]
    assert r["powers"][0].tolist() == [2.0, 4.0, 8.0, 0.0, 0.0]
    assert [float(a) for a in r["in_branch"]] == [2.0, 162.0, 135.0]
    assert r["empty_first"][1].tolist() == [3.0, 6.0]
    assert [float(r["ranged"][1][0])] + r["ranged"][1][1].tolist() == [6.0, 2.0, 2.0]
    assert [int(a) for a in r["concrete"]] == [8, 4]
    assert r["traced"] == ["grow", "steps"]  # Python runs once per trace
    np.testing.assert_allclose([float(a) for a in r["orbit_grads"][2]], [0.7, 1.0])
    np.testing.assert_allclose([float(a) for a in r["inner"][1]],
                               [float(a) for a in r["orbit_grads"][1]], rtol=1e-6)
    np.testing.assert_allclose(float(r["inner_second"][2]), -4.5354915, rtol=1e-5)
    np.testing.assert_allclose(r["rnn"][1][1], [[0.380207, 0.55955], [0.342006, 0.515296]],
                               rtol=1e-5)


def test_traced_while_loop_program_and_gradient_by_finite_differences() -> None:
    from tapegrad.debug import list_program

    @tf.function
    def orbit(x: Any, n: Any) -> Any:
        _, s = tf.while_loop(lambda i, s: i < n, lambda i, s: (i + 1, s * x + tf.sin(s)),
                             (0, x))
        return s

    x = tf.Variable(np.float64(0.6))
    for n in (1, 4, 6):
        with tf.GradientTape() as tape:
            y = orbit(x, tf.constant(n))
        g = float(tape.gradient(y, x))
        eps = 1e-6
        hi = float(orbit(tf.constant(0.6 + eps, tf.float64), tf.constant(n)))
        lo = float(orbit(tf.constant(0.6 - eps, tf.float64), tf.constant(n)))
        np.testing.assert_allclose(g, (hi - lo) / (2 * eps), rtol=1e-6)
    kinds = [e["kind"] for e in list_program(orbit)]
    assert "while" in kinds  # one loop instruction, not an unrolled body
    assert orbit.experimental_get_tracing_count() == 2  # a Variable, then a constant


def test_traced_while_loop_prints_every_iteration(capsys: pytest.CaptureFixture[str]) -> None:
    import sys

    @tf.function
    def count(n: Any) -> Any:
        i = tf.constant(0)
        while i < n:
            tf.print("step", i, output_stream=sys.stdout)
            i += 1
        return i

    assert int(count(tf.constant(2))) == 2 and int(count(tf.constant(3))) == 3
    assert capsys.readouterr().out.count("step") == 5
    assert count.experimental_get_tracing_count() == 1


def test_retracing_policy_and_one_program_for_every_size() -> None:
    r = cases.retracing_policy(tf)
    # TensorFlow 2.21's counts (the conformance suite compares the whole scenario)
    assert r["default"]["counts"] == [1, 2, 3, 4, 5, 6, 7, 8, 8, 9, 9]
    assert r["relaxed"]["counts"] == [1, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3]
    assert r["relaxed"]["printed"] == "trace (1,)\ntrace (None,)\ntrace <unknown>\n"
    assert r["relaxed"]["short"].splitlines()[1] == \
        "(x: TensorSpec(shape=(None,), dtype=tf.float32, name=None)) -> " \
        "TensorSpec(shape=(), dtype=tf.float32, name=None)"
    assert r["relaxed"]["values"][:4] == [3.0, 6.0, 9.0, 12.0]
    assert r["signature"]["count"] == 1 and r["signature"]["printed"] == "trace g (None, 2)\n"
    assert r["signature"]["values"][1] == [[6.0, 9.0], [0, 1, 2]]
    assert r["eye"][1] == np.eye(3).tolist() and r["eye"][2] == [[1.0]]


def test_generalized_signature_replays_one_program_without_python() -> None:
    calls: list[int] = []

    @tf.function(input_signature=[tf.TensorSpec([None], tf.float32)])
    def f(x: Any) -> Any:
        calls.append(1)
        return tf.reduce_mean(x * x) + tf.cast(tf.size(x), tf.float32)

    for n in (2, 5, 3, 7, 11):
        x = np.arange(n, dtype=np.float32)
        np.testing.assert_allclose(float(f(tf.constant(x))), np.mean(x * x) + n, rtol=1e-6)
    # the body runs for the trace and once more at a second size, to check that the
    # program does not depend on the size; every later size replays it
    assert len(calls) == 2 and f.experimental_get_tracing_count() == 1
    tr = f._traces[0]
    assert tr.generic is not None and len(tr.programs) == 2

    @tf.function(input_signature=[tf.TensorSpec([None], tf.float32)])
    def g(x: Any) -> Any:  # a size baked in (a Python number of the shape)
        calls.append(2)
        return x * float(x.shape[0] or int(tf.shape(x)[0]))

    for n in (2, 5, 3):
        assert g(tf.ones([n])).numpy().tolist() == [float(n)] * n
    assert calls.count(2) == 3 and g._traces[0].generic is None  # one program per size


def test_loop_body_python_runs_once_per_trace() -> None:
    import warnings

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", RuntimeWarning)
        r = cases.loop_body_python_once(tf)
    # TensorFlow 2.21's figures (tests/conformance compares every entry with it): the
    # condition and body's Python ran once per trace, not once more to check the body
    assert r["summed_python"] == [1, 1, 1] and r["squared_python"] == 1
    assert r["row_sum_python"] == [2, 2] and r["fixed_python"] == 1
    assert [float(a) for a in r["summed"]] == [6.0, 15.0, 0.0]
    assert [float(a) for a in r["squared"]] == [5.0, 30.0]
    assert [a.tolist() for a in r["row_sum"]] == [[3.0, 3.0], [6.0, 6.0], [4.0, 4.0]]
    assert [float(a) for a in r["fixed"]] == [6.0, 12.0]
    # a shape taken from the counter, in a body with a side effect: seen while recording
    # the body once, so that signature runs eagerly and gives TensorFlow's values
    assert [float(a) for a in r["counted"]] == [3.0, 10.0] and r["counted_v"] == 6.0
    shown = [str(w.message) for w in caught]
    assert len(shown) == 1 and "tf.function(counted): a tf.while_loop body that reads a " \
        "loop variable's value" in shown[0]


def test_where_condition_and_arg_reductions_are_part_of_the_program() -> None:
    r = cases.value_ops_traced(tf)
    # TensorFlow 2.21's values (tests/conformance compares them): the second call selects
    # by its own condition (it used to replay the first call's)
    assert [a.tolist() for a in r["mag"]] == [[1.0, 2.0], [1.0, 2.0]]
    assert r["mag_grad"].tolist() == [3.0, -5.0]
    assert [a.tolist() for a in r["doubled"]] == [[2.0, 4.0], [4.0, 4.0]]
    assert r["doubled_count"] == 1
    # the second call's own argmax/argmin/any/all (they were the first call's)
    assert [[a.tolist() for a in p] for p in r["picks"]] == [[1, 0, True, [True]],
                                                             [0, 1, True, [False]]]
    assert r["picks_count"] == 1


def test_loop_value_reads_seen_while_recording() -> None:
    """Each way of taking a loop variable's value as a Python value is seen during the one
    recording (the signature runs eagerly, with the right values); an index that becomes
    an input of the op, and shapes from tf.shape, are not value reads."""
    import warnings

    def run(step: Any, n: int) -> tuple[float, list[str]]:
        @tf.function
        def f(k: Any) -> Any:
            i, s = tf.constant(1), tf.constant(0.0)
            while i < k:
                s += step(i)
                i += 1
            return s

        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", RuntimeWarning)
            out = float(f(tf.constant(n)))
        return out, [str(w.message) for w in caught]

    xs = tf.constant([1.0, 2.0, 4.0, 8.0, 16.0])
    baked = {
        "tolist": lambda i: tf.reduce_sum(tf.ones(tf.reshape(i + 1, [1]))),
        "index": lambda i: tf.cast(len(range(i)), tf.float32),  # Tensor.__index__
        "element": lambda i: tf.reduce_sum(tf.zeros(tf.reshape(i, [1])[0])) + 1.0,
        "slice": lambda i: tf.reduce_sum(xs[:i]),  # a slice bound is not an op input
        "asarray": lambda i: tf.constant(float(np.asarray(i))),  # NumPy's view of it
        # NumPy computing from its array in the front-end: a constant, or an attribute
        "sort": lambda i: tf.sort(tf.cast(tf.stack([i, 4 - i]), tf.float32))[0],
        "range_size": lambda i: tf.reduce_sum(tf.random.stateless_uniform(
            tf.reshape(i, [1]), seed=[1, 2]) * 0.0) + tf.cast(i, tf.float32),
    }
    for name, step in baked.items():
        eager = sum(float(step(tf.constant(j))) for j in range(1, 4))
        out, shown = run(step, 4)
        assert out == pytest.approx(eager), name
        assert len(shown) == 1 and "reads a loop variable's value" in shown[0], name
    fine = {
        "gather": lambda i: xs[i],  # a traced index: an input of the op
        "shape": lambda i: tf.reduce_sum(tf.ones(tf.shape(xs)[0])) + tf.cast(i, tf.float32),
        "captured": lambda i: tf.reduce_sum(xs[:3]) * tf.cast(i, tf.float32),
        "where": lambda i: tf.where(i > 1, 2.0, 1.0),  # the condition: an op input
        "one_hot": lambda i: tf.reduce_sum(tf.one_hot(i % 3, 3) * xs[:3]),  # ops on it
        "any": lambda i: tf.where(tf.reduce_any(tf.reshape(i, [1]) > 2), 5.0, 1.0),
        "zeros_like": lambda i: tf.reduce_sum(tf.ones_like(xs) + tf.zeros_like(xs)) * 0.0
        + tf.cast(i, tf.float32),
    }
    for name, step in fine.items():
        eager = sum(float(step(tf.constant(j))) for j in range(1, 4))
        out, shown = run(step, 4)
        assert out == pytest.approx(eager) and shown == [], name


def test_loop_body_reading_a_loop_variable_value_runs_eagerly() -> None:
    @tf.function
    def f(n: Any) -> Any:
        i, s = tf.constant(1), tf.constant(0.0)
        while i < n:
            s += tf.reduce_sum(tf.ones(tf.reshape(i, [1])))  # a shape read from the counter
            i += 1
        return s

    # recorded again on the second iteration's values, the body differs: the loop does not
    # become one program, and every call gives TensorFlow's value (3.0, 10.0)
    with pytest.warns(RuntimeWarning, match="reads a loop variable's value"):
        assert float(f(tf.constant(3))) == 3.0
    assert float(f(tf.constant(5))) == 10.0

    @tf.function
    def g(x: Any, n: Any) -> Any:
        i, s = tf.constant(0), tf.constant(0.0)
        while i < n:
            s += x[i] * tf.cast(i, tf.float32)  # a traced index: an input of the op
            i += 1
        return s

    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        xs = tf.constant([1.0, 2.0, 3.0, 4.0])
        assert [float(g(xs, tf.constant(k))) for k in (2, 4)] == [2.0, 20.0]
    assert g.experimental_get_tracing_count() == 1


def _eager_warnings(fn: Any, *calls: tuple[Any, ...]) -> tuple[list[Any], list[str]]:
    import warnings

    f = tf.function(fn)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", RuntimeWarning)
        outs = [f(*a) for a in calls]
    return outs, [str(w.message) for w in caught]


def test_static_reads_of_traced_values_are_ops_or_run_eagerly() -> None:
    """Every call gives its own values: indices, masks and sort keys that the front-end
    once read as Python values at the first call (and replayed) are op inputs now, or,
    where tapegrad's front-end still needs their values, that signature runs eagerly and
    the warning names the function."""
    r = cases.static_reads_traced(tf)
    # TensorFlow 2.21's values (tests/conformance compares them all)
    assert [a.tolist() for a in r["one_hot"]] == [[[1, 0, 0], [0, 1, 0]], [[0, 0, 1], [0, 0, 0]]]
    assert [a.tolist() for a in r["gather_nd"]] == [[2.0], [3.0, 4.0]]
    assert [a.tolist() for a in r["scatter_add"]] == [[7.0, 1.0, 1.0], [1.0, 2.0, 6.0]]
    assert [a.tolist() for a in r["boolean_mask"]] == [[1.0, 3.0], [2.0, 3.0]]
    assert [a.tolist() for a in r["where1"]] == [[[0], [2]], [[1]]]
    assert [a.tolist() for a in r["sort"]] == [[1.0, 2.0, 3.0], [0.0, 1.0, 3.0]]
    assert [a.tolist() for a in r["grad_nd"]] == [[[1.0, 0.0], [0.0, 10.0]],
                                                  [[0.0, 0.0], [11.0, 0.0]]]
    assert r["grad_nd_count"] == 1 and r["ce_count"] == 1
    x = tf.constant([[1.0, 2.0], [3.0, 4.0]])
    for fn, calls in (
            (lambda i: tf.one_hot(i, 4), [(tf.constant([0, 3]),), (tf.constant([1, 1]),)]),
            (lambda i: tf.gather_nd(x, i), [(tf.constant([[0, 0]]),), (tf.constant([[1, 1]]),)]),
            (lambda i: tf.tensor_scatter_nd_add(x, i, tf.constant([1.0])),
             [(tf.constant([[0, 1]]),), (tf.constant([[1, 0]]),)])):
        outs, shown = _eager_warnings(fn, *calls)
        assert shown == []  # one program
        for o, a in zip(outs, calls):
            np.testing.assert_array_equal(o.numpy(), fn(*a).numpy())
    for fn, calls, who in (
            (lambda m: tf.boolean_mask(x, m), [(tf.constant([True, False]),),
                                              (tf.constant([False, True]),)], "boolean_mask"),
            (lambda v: tf.sort(v), [(tf.constant([2.0, 1.0]),), (tf.constant([0.0, 5.0]),)],
             "sort")):
        outs, shown = _eager_warnings(fn, *calls)
        assert len(shown) == 1 and f"by {who} (tapegrad.tf." in shown[0] \
            and "runs eagerly" in shown[0]
        for o, a in zip(outs, calls):
            np.testing.assert_array_equal(o.numpy(), fn(*a).numpy())


def test_a_front_end_value_read_outside_the_ops_is_noticed() -> None:
    """Front-end code that takes a traced value as a Python value (``int()``, ``tolist``,
    NumPy on its array, a constant made from it) makes the signature run eagerly with the
    right values, instead of replaying the first call's value."""
    from tapegrad.tf._tensor import tft

    reads = {
        "int": lambda t: tf.ones([int(t._data) + 1]),
        "tolist": lambda t: tf.constant(t._data.tolist()) * 2.0,
        "numpy_const": lambda t: tft(t._data * 3.0),  # NumPy on the array, then wrapped
        "attribute": lambda t: tf.reduce_sum(tf.ones([3]) * tft(np.maximum(t._data, 0.0))),
    }
    for name, fn in reads.items():
        calls = [(tf.constant(1.0),), (tf.constant(2.0),)]
        outs, shown = _eager_warnings(fn, *calls)
        assert len(shown) == 1 and "runs eagerly" in shown[0], name
        for o, a in zip(outs, calls):
            np.testing.assert_array_equal(o.numpy(), fn(*a).numpy(), err_msg=name)


def _marked_tensors() -> list[Any]:
    import gc

    from tapegrad._core.tensor import Tensor

    return [o for o in gc.get_objects() if issubclass(type(o), Tensor)
            and o.__dict__.get("_data") is not None
            and o._data.__class__ is not np.ndarray and isinstance(o._data, np.ndarray)]


def test_no_traced_array_outlives_its_trace() -> None:
    """The marks that notice value reads stay inside the trace: after a traced training
    step (variables assigned, optimizer slots created, gradients, results, Python side
    effects) no tensor holds a marked array."""
    keep: list[Any] = []
    model = tf.keras.Sequential([tf.keras.layers.Dense(4, activation="tanh"),
                                 tf.keras.layers.Dense(3)])
    opt = tf.keras.optimizers.Adam(0.01)
    metric = tf.keras.metrics.Mean()

    @tf.function
    def step(x: Any, y: Any) -> Any:
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits(
                tf.one_hot(y, 3), model(x)))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        metric.update_state(loss)
        keep.append(loss)
        return loss, grads

    x = tf.random.normal([8, 5])
    y = tf.constant([0, 1, 2, 0, 1, 2, 0, 1])
    out = [step(x, y) for _ in range(3)]
    assert _marked_tensors() == []
    assert out[0][0].numpy().sum().__class__ is np.float32  # a plain array's reduction


def test_masked_rnn_and_tensor_arguments_in_tf_function() -> None:
    """A Keras RNN's mask differs between batches: inside tf.function the masked steps
    select by ops on it (one program); tensor paddings and TensorArray indices that the
    front-end reads as values make that signature run eagerly, with every call right."""
    import warnings

    tf.keras.utils.set_random_seed(3)
    lstm = tf.keras.layers.LSTM(3)

    def run(x: Any) -> Any:
        return lstm(x, mask=tf.reduce_any(tf.not_equal(x, 0.0), axis=-1))

    f = tf.function(run)
    rng = np.random.default_rng(0)
    xs = []
    for cut in (2, 4):
        x = rng.normal(size=(2, 5, 2)).astype(np.float32)
        x[0, cut:] = 0.0  # padded steps
        xs.append(tf.constant(x))
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        outs = [f(x) for x in xs]
    for o, x in zip(outs, xs):
        np.testing.assert_allclose(o.numpy(), run(x).numpy(), rtol=1e-6, atol=1e-7)
    assert f.experimental_get_tracing_count() == 1
    x = tf.constant([[1.0, 2.0]])
    for fn, args in ((lambda p: tf.pad(x, p), [tf.constant([[0, 0], [1, 0]]),
                                              tf.constant([[1, 0], [0, 2]])]),
                     (lambda i: tf.TensorArray(tf.float32, size=3).unstack(
                         tf.constant([1.0, 2.0, 3.0])).gather(i),
                      [tf.constant([0, 1]), tf.constant([2, 1])])):
        outs, shown = _eager_warnings(fn, *[(a,) for a in args])
        assert len(shown) == 1 and "runs eagerly" in shown[0]
        for o, a in zip(outs, args):
            np.testing.assert_array_equal(o.numpy(), fn(a).numpy())


def test_keras_metrics_update_at_every_call_of_a_traced_step() -> None:
    """Built-in metrics updated inside a traced step are effects of the program (they
    used to update only while tracing, and result() replayed the first call's value);
    plain SGD creates no slot variables, so the step traces once, as in TensorFlow."""
    import warnings

    def make() -> tuple[Any, ...]:
        return (tf.keras.metrics.SparseCategoricalAccuracy(), tf.keras.metrics.Mean(),
                tf.keras.metrics.Precision(), tf.keras.metrics.AUC(num_thresholds=10))

    def step_of(ms: tuple[Any, ...]) -> Any:
        acc, mean, prec, auc = ms

        def step(y: Any, logits: Any) -> Any:
            acc.update_state(y, logits)
            mean.update_state(tf.reduce_sum(logits))
            p = tf.nn.softmax(logits)[:, 0]
            t = tf.cast(tf.equal(y, 0), tf.float32)
            prec.update_state(t, p)
            auc.update_state(t, p)
            return acc.result(), mean.result()
        return step

    rng = np.random.default_rng(1)
    batches = [(tf.constant(rng.integers(0, 3, 8)),
                tf.constant(rng.normal(size=(8, 3)).astype(np.float32))) for _ in range(4)]
    eager_ms, traced_ms = make(), make()
    eager, traced = step_of(eager_ms), tf.function(step_of(traced_ms))
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        for y, lg in batches:
            e, t = eager(y, lg), traced(y, lg)
            assert [float(a) for a in e] == [float(a) for a in t]
    assert [float(m.result()) for m in eager_ms] == [float(m.result()) for m in traced_ms]
    assert traced.experimental_get_tracing_count() == 1

    model = tf.keras.Sequential([tf.keras.layers.Dense(2)])
    model.build((None, 3))
    for opt, count in ((tf.keras.optimizers.SGD(0.1), 1), (tf.keras.optimizers.Adam(0.1), 2)):
        @tf.function
        def train(x: Any, opt: Any = opt) -> Any:
            with tf.GradientTape() as tape:
                loss = tf.reduce_sum(model(x) ** 2)
            opt.apply_gradients(zip(tape.gradient(loss, model.trainable_variables),
                                    model.trainable_variables))
            return loss
        for _ in range(3):
            train(tf.ones([2, 3]))
        assert train.experimental_get_tracing_count() == count  # TensorFlow 2.21's counts


def test_a_trace_keeps_none_of_its_values() -> None:
    # the values computed while tracing (here an 8 MB intermediate) are let go once the
    # program is built: a Function holds its programs, not the trace's arrays
    import gc
    import tracemalloc

    x = tf.constant(np.ones((1024, 1024), np.float64))
    v = tf.Variable(np.ones(4, np.float32))

    @tf.function
    def f(x: Any) -> Any:
        big = tf.exp(x) * 2.0  # 8 MB while tracing
        v.assign_add(tf.ones(4))
        return tf.reduce_sum(big)

    gc.collect()
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        f.get_concrete_function(x)
        out = f(x)
        gc.collect()
        held = tracemalloc.get_traced_memory()[0] - base
    finally:
        tracemalloc.stop()
    assert float(out) == pytest.approx(2 * np.e * 1024 * 1024)
    assert held < 2_000_000, held


def test_a_keras_step_updates_the_variables_in_place_from_the_first_call() -> None:
    # an SGD step in a traced function writes the variables' arrays (TensorFlow's resource
    # update); the first call used to copy them (the trace still held their arrays)
    w = tf.Variable(np.ones((3, 2), np.float32))
    opt = tf.keras.optimizers.SGD(learning_rate=0.5)

    @tf.function
    def step(x: Any) -> Any:
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(tf.matmul(x, w))
        opt.apply_gradients([(tape.gradient(loss, w), w)])
        return loss

    x = tf.constant(np.ones((4, 3), np.float32))
    import weakref

    step.get_concrete_function(x)
    before = weakref.ref(w._data)  # a strong reference would itself force the copy
    for k in range(2):
        assert float(step(x)) == pytest.approx(24.0 - 48.0 * k)
        assert before() is w._data
    np.testing.assert_allclose(w.numpy(), np.full((3, 2), -3.0))


def test_concrete_function_binds_structured_then_flat() -> None:
    r = cases.concrete_function_binding(tf)
    assert r["kw"] == 6 and r["python_int"] == 6
    assert r["square"] == [100.0, [100.0, 9.0], [100.0, 9.0]]
    assert r["nested"] == [[6.0, 8.0]] * 3
    assert r["str"].startswith("ConcreteFunction Input Parameters:\n  a (POSITIONAL_OR_KEYWORD): "
                               "TensorSpec(shape=(), dtype=tf.int64, name=None)\nOutput Type:")
    assert r["repr"] == ("<ConcreteFunction (a: TensorSpec(shape=(), dtype=tf.int64, name=None))"
                         " -> TensorSpec(shape=(), dtype=tf.int64, name=None)")
    assert "name='a_0'" in r["sig"] and "name='b'" in r["sig"]
    kinds = [e[0] for e in r["errors"]]
    assert kinds == ["TypeError"] * 6
    assert r["errors"][0][1].startswith(
        "Binding inputs to tf.function failed due to `Can not cast 3 to Literal[2]`.")
    assert r["errors"][0][1].endswith(
        "Fallback to flat signature also failed due to: pw(a) got unexpected keyword "
        "arguments: b.")
    assert r["errors"][1][1].endswith("pw(a) takes 1 positional arguments, got 2.")
    assert "`missing a required argument: 'c'`" in r["errors"][4][1]
    assert r["errors"][4][1].endswith("f(a, a_1, b) missing required arguments: b.")
    assert r["dtype"] == "InvalidArgumentError"
    assert r["count"] == [1, 1]


def test_outputs_are_tensors_and_the_trace_s_own_tensors_are_symbolic() -> None:
    r = cases.outputs_and_leaks(tf)
    # None stays None; Variables, Python and NumPy values come back as tensors
    assert r["kinds"] == [True, [False, False, False, False, True, False, False, False]]
    assert not any(r["variable_out"])
    assert r["values"] == [5.0, 2, 2.5, True, 5.0, 1.0, 1.5]
    assert r["dtypes"] == ["float32", "int32", "float32", "bool", "float32", "float32",
                           "float64"]
    assert r["step"] == ["<tf.Tensor: shape=(), dtype=int32, numpy=1>",
                         "<tf.Tensor: shape=(), dtype=int32, numpy=2>"]
    assert r["leaky"] == 3 and r["leaky2"] == 2
    # a tensor kept from the trace (even one it returned) has no value outside it
    assert r["leak_numpy"] == [("AttributeError",
                                "'SymbolicTensor' object has no attribute 'numpy'")] * 2
    assert r["leak_use"] == [
        "TypeError", "<tf.Tensor 'add:0' shape=() dtype=int32> is out of scope and cannot be "
        "used here. Use return values, explicit Python locals or TensorFlow collections to "
        "access it."]
    assert r["shapes"] == [[3], [3]]  # not the generalized signature's [None]
    assert r["sizes"] == [6.0, 10.0]


def test_set_shape_checks_eagerly_and_fills_open_dimensions_when_traced() -> None:
    x = tf.constant([1.0, 2.0, 3.0])
    x.set_shape([3])
    x.set_shape([None])
    x.set_shape(None)
    with pytest.raises(ValueError, match=r"Tensor's shape \(3,\) is not compatible with "
                       r"supplied shape \(4,\)\."):
        x.set_shape([4])
    seen: list[Any] = []

    @tf.function(input_signature=[tf.TensorSpec([None, None])])
    def f(y: Any) -> Any:
        y.set_shape([None, 4])
        seen.append(y.shape.as_list())
        for bad, msg in (([2, 5], "Dimension 1 in both shapes must be equal, but are 4 and 5. "
                                  "Shapes are [?,4] and [2,5]."),
                         ([3], "Shapes must be equal rank, but are 2 and 1")):
            with pytest.raises(ValueError) as e:
                y.set_shape(bad)
            assert str(e.value).splitlines()[0] == msg
        return y * 2.0

    out = f(tf.ones([2, 4]))
    assert seen == [[None, 4]] and out.shape.as_list() == [2, 4]


def test_loops_that_grow_give_every_call_s_values() -> None:
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # those signatures run eagerly
        r = cases.loops_that_grow(tf)
        tf.config.run_functions_eagerly(True)
        try:
            e = cases.loops_that_grow(tf)
        finally:
            tf.config.run_functions_eagerly(False)
    # sum over i < n of 0 + 1 + ... + (i - 1): the first call (the trace) too
    assert r["nested"] == [10, 4]
    assert r["squares"] == [[0.0, 1.0, 4.0, 9.0], [0.0, 1.0]]
    assert r["halve"] == [[[4.0, 2.0, 1.0], 3], [[2.0, 1.0], 2]]
    assert r["grad"] == [4.5, 6.0]  # d/dv of v * x * (0 + 1 + 2)
    assert r["defined_in_loop"] == [6, 12] and e["defined_in_loop"] == [6, 12]
    np.testing.assert_allclose(r["rnn"], e["rnn"], rtol=1e-6)
    assert np.asarray(r["rnn"]).shape == (2, 2, 3, 2)


def test_a_nested_tf_function_is_traced_once_per_signature() -> None:
    r = cases.nested_functions(tf)
    assert r["values"] == [8, 14, 10, [10.0]]
    assert r["counts"] == [2, 1, 2, 3]
    assert r["stdout"] == ("trace outer\ntrace inner int32\ntrace inner float32\n"
                           "trace inner float32\n")


def test_tf_print_of_the_first_call_comes_after_the_tracing(
        capsys: pytest.CaptureFixture[str]) -> None:
    import sys

    @tf.function
    def f(x: Any) -> Any:
        print("Tracing")
        tf.print("Executing", x, output_stream=sys.stdout)
        print("Tracing 2")
        for i in tf.range(2):
            tf.print("loop", i, output_stream=sys.stdout)
        print("Tracing 3")
        return x

    f(tf.constant(1))
    f(tf.constant(2))

    @tf.function
    def bad(x: Any) -> Any:
        tf.print("never shown", output_stream=sys.stdout)
        return x + tf.ones([3])  # fails while tracing: nothing ran

    with pytest.raises(ValueError, match="Dimensions must be equal"):  # TensorFlow's graph
        bad(tf.ones([2]))
    assert capsys.readouterr().out == (
        "Tracing\nTracing 2\nTracing 3\nExecuting 1\nloop 0\nloop 1\n"
        "Executing 2\nloop 0\nloop 1\n")


def test_python_numbers_match_by_value_and_numpy_values_are_tensors() -> None:
    r = cases.python_literals(tf)
    assert r["traced"] == ["float None", "float None", "float32 True", "float32 None",
                           "float64 None"]
    assert r["count"] == 5
    assert r["values"] == [0.0, 0.0, 1.0, 0.0, 0.0, 2.0, 2.0, 2.0, 2.0, 0.0, 4.0,
                           [0.0, 1.0], [2.0, 3.0]]
    assert r["dtypes"][:11] == ["float32"] * 11 and r["dtypes"][11:] == ["float64"] * 2


def test_frequent_retracing_warns_as_tensorflow(capsys: pytest.CaptureFixture[str]) -> None:
    @tf.function
    def k(x: Any) -> Any:
        return tf.reduce_sum(x)

    for n in range(1, 9):
        k(tf.ones([n]))
    err = capsys.readouterr().err.splitlines()
    assert [e.split(" calls to ")[0] for e in err] == [
        "WARNING:tensorflow:5 out of the last 5", "WARNING:tensorflow:6 out of the last 6"]
    assert err[0].split(" calls to ")[1].startswith(f"{k.python_function!r} triggered "
                                                    "tf.function retracing. Tracing is")
    tf.get_logger().setLevel("ERROR")
    try:
        @tf.function
        def j(x: Any) -> Any:
            return x

        for n in range(1, 9):
            j(tf.ones([n]))
    finally:
        tf.get_logger().setLevel("NOTSET")
    assert capsys.readouterr().err == ""


def test_python_calls_and_decorated_functions_inside_tf_function() -> None:
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # py_function: runs eagerly
        r = cases.python_calls_inside(tf)
    assert r["pyf"] == [[5.0, 9.0], [13.0, 17.0]]  # 3a + (a + 1), each call's values
    assert r["outs"] == [[[1.0, 2.0], 3], [], "float32"]
    assert r["eager_grad"] == [2.0, 4.0]  # the tape records the Python function's ops
    assert r["custom"] == [0.5, 0.5]  # the custom gradient, clipped
    assert r["wrapped"] == [109.0, 102.0, True]  # the decorator kept, the body converted


def test_input_signature_converts_python_values_to_its_dtype() -> None:
    r = cases.signature_converts_python_values(tf)
    assert r["f"] == [[[2.0, 4.0], "float32"], [[3.0, 5.0], "float32"],
                      [[6.0, 8.0], "float32"], [[2.0, 0.0], "float32"]]
    assert r["g"] == [[6, "int32"],
                      ["TypeError", "Cannot convert 3.0 to EagerTensor of dtype int32"],
                      ["TypeError", "Cannot convert 3.5 to EagerTensor of dtype int32"],
                      [2, "int32"],
                      ["TypeError", "Cannot convert [1.5] to EagerTensor of dtype int32"]]
    assert r["count"] == [1, 1]


def test_traced_tensors_print_with_tensorflow_op_names(capsys: pytest.CaptureFixture[str]) -> None:
    @tf.function
    def f(x: Any, y: Any) -> Any:
        for t in (x + y, x * y, x - y, x / y, tf.matmul(x, y), tf.reduce_sum(x), tf.shape(x),
                  tf.nn.relu(x), tf.cast(x, tf.int32), x ** 2, -x, x[0], x * y):
            print(t)
        return x

    f(tf.ones([2, 2]), tf.ones([2, 2]))
    names = [ln.split('"')[1] for ln in capsys.readouterr().out.splitlines()]
    assert names == ["add:0", "mul:0", "sub:0", "truediv:0", "MatMul:0", "Sum:0", "Shape:0",
                     "Relu:0", "Cast:0", "pow:0", "Neg:0", "strided_slice:0", "mul_1:0"]


def test_random_generator_and_traced_stateless_seeds_draw_at_every_call() -> None:
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # those signatures run eagerly
        r = cases.random_inside(tf)
    g = tf.random.Generator.from_seed(7)
    assert r["gen"] == [g.normal([2]).numpy().tolist() for _ in range(3)]
    assert r["state"] == g.state.numpy().tolist()
    a, b, c = r["stateless"]
    assert a == c and a != b
    assert a == tf.random.stateless_uniform([2], seed=[1, 2]).numpy().tolist()
    assert b == tf.random.stateless_uniform([2], seed=[1, 3]).numpy().tolist()


def test_integer_reductions_are_part_of_the_program() -> None:
    r = cases.integer_reductions(tf)
    assert r["values"] == [[16, 2, 5, 1, 120, [[5, 6, 5]], [2, 2], 0],
                           [28, 4, 9, 1, 1008, [[9, 10, 9]], [3, 6], 21],
                           [16, 2, 5, 1, 120, [[5, 6, 5]], [2, 2], 0]]
    assert r["count"] == 1


def test_tf_print_to_stdout_every_call_of_a_generalized_signature(
        capsys: pytest.CaptureFixture[str]) -> None:
    import sys

    @tf.function(reduce_retracing=True)
    def f(x: Any) -> Any:
        tf.print("n", tf.size(x), output_stream=sys.stdout)
        print("py", x.shape)
        return x

    for n in (1, 2, 3, 4, 4, 3):
        f(tf.ones([n]))
    assert capsys.readouterr().out == ("py (1,)\nn 1\npy (None,)\nn 2\nn 3\nn 4\nn 4\nn 3\n")
