"""Control flow and AutoGraph against real TensorFlow 2.21: the same programs on both.

Eager programs run as they are on both modules; their results (values, gradients, Python
side effects) or their exceptions (class and exact ``str(e)``) must match.  Graph programs
run under ``tf.function`` in TensorFlow and, in tapegrad, converted by
``tf.autograph.to_graph`` under a stub tracing level (which traces every branch as
``tf.function`` does); their values and the first line of their errors must match.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import tapegrad.tf as tg_tf
from tests.tf_style.control_stub import StubTrace
from tests.tf_style.tf_helpers import real_tf
from tests.tf_style.tf_programs import plain, same

EAGER: dict[str, Callable[[Any], Any]] = {}
GRAPH: dict[str, Callable[[Any], tuple[Callable[..., Any], tuple[Any, ...]]]] = {}


def eager(fn: Callable[[Any], Any]) -> Callable[[Any], Any]:
    EAGER[fn.__name__] = fn
    return fn


def graph(fn: Callable[[Any], Any]) -> Callable[[Any], Any]:
    GRAPH[fn.__name__] = fn
    return fn


def _exc(exc: BaseException) -> tuple[str, str, str]:
    return ("raises", type(exc).__name__, str(exc))


def run_eager(tf: Any, name: str) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return plain(EAGER[name](tf))
        except Exception as exc:  # noqa: BLE001 - the exception is the result
            return _exc(exc)


def _inner(message: str) -> str:
    """The first line of TensorFlow's message inside its ``in user code:`` wrapper."""
    if message.startswith("in user code:"):
        m = re.search(r"^    (\w+): (.*)$", message, re.M)
        if m:
            return m.group(2)
    return message.splitlines()[0] if message else message


def _names(line: str) -> str:
    """Graph tensor names differ (``x:0`` in TensorFlow): compare the rest."""
    return re.sub(r"`?[\w/]+:0`?", "<name>", line)


def run_graph(tf: Any, name: str) -> Any:
    fn, args = GRAPH[name](tf)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            if tf is tg_tf:
                with StubTrace():
                    out = tg_tf.autograph.to_graph(fn)(*args)
            else:
                out = tf.function(fn)(*args)
            return plain(out)
        except Exception as exc:  # noqa: BLE001 - the exception is the result
            return ("raises", type(exc).__name__, _names(_inner(str(exc))))


R = np.random.default_rng(3)
X = R.standard_normal((3, 2)).astype(np.float32)


# ------------------------------------------------------------------ cond
@eager
def cond_values_and_gradients(tf: Any) -> Any:
    out = []
    for v in (1.5, 0.5):
        x = tf.Variable(v)
        with tf.GradientTape() as outer:
            with tf.GradientTape() as inner:
                y = tf.cond(x > 1.0, lambda x=x: x ** 3, lambda x=x: tf.sin(x) * x)
            g = inner.gradient(y, x)
        out += [y, g, outer.gradient(g, x)]
    return out


@eager
def cond_python_values_and_nests(tf: Any) -> Any:
    x = tf.constant(2.0)
    return (tf.cond(True, lambda: 1, lambda: 2),
            tf.cond(x < 0, lambda: (x, [x]), lambda: {"a": (x * 2.0, [x])}),
            tf.cond(tf.constant(1), lambda: [x], lambda: [x]))


@eager
def cond_only_taken_branch_runs(tf: Any) -> Any:
    ran: list[str] = []
    tf.cond(tf.constant(True), lambda: ran.append("t") or 1.0, lambda: ran.append("f") or 2.0)
    return ran


@eager
def cond_errors(tf: Any) -> Any:
    out = []
    for call in (lambda: tf.cond(True, 1, lambda: 2),
                 lambda: tf.cond(tf.constant([True, False]), lambda: 1, lambda: 2)):
        try:
            call()
        except Exception as e:  # noqa: BLE001
            out.append(_exc(e))
    return out


# ------------------------------------------------------------------ while_loop
@eager
def while_gradients_second_order(tf: Any) -> Any:
    x = tf.Variable(1.3)
    with tf.GradientTape() as outer:
        with tf.GradientTape() as inner:
            _, y = tf.while_loop(lambda i, y: i < 4, lambda i, y: (i + 1, y * x + tf.sin(y)),
                                 (0, 1.0))
        g = inner.gradient(y, x)
    return y, g, outer.gradient(g, x)


@eager
def while_back_prop_false_is_ignored_eagerly(tf: Any) -> Any:
    x = tf.Variable(1.2)
    with tf.GradientTape() as tape:
        _, z = tf.while_loop(lambda i, y: i < 4, lambda i, y: (i + 1, y * x), (0, 1.0),
                             back_prop=False)
    return z, tape.gradient(z, x)


@graph
def graph_back_prop_false(tf: Any) -> Any:
    def f(x: Any) -> Any:
        with tf.GradientTape() as tape:
            tape.watch(x)
            _, z = tf.while_loop(lambda i, y: i < 4, lambda i, y: (i + 1, y * x), (0, 1.0),
                                 back_prop=False)
        return z, tape.gradient(z, x)

    return f, (tf.constant(1.2),)


@eager
def while_structures(tf: Any) -> Any:
    a = tf.while_loop(lambda i, ab: i < 3, lambda i, ab: (i + 1, (ab[0] * 2.0, ab[1] + 1)),
                      (0, (1.0, 0)))
    b = tf.while_loop(lambda i, s: i < 3, lambda i, s: [i + 1, s * 2.0], [0, 1.0])
    c = tf.while_loop(lambda i, s: i < 0, lambda i, s: [i + 1, s], (0, 1.0))
    d = tf.while_loop(lambda i: i < 3, lambda i: [i + 1], [tf.constant(0)])
    e = tf.while_loop(lambda i, s: i < 3, lambda i, s: (i + 1, tf.concat([s, s], 0)),
                      (0, tf.ones([1])))
    return a, b, c, d, e


@eager
def while_maximum_iterations(tf: Any) -> Any:
    calls: list[int] = []

    def cond(i: Any, s: Any) -> Any:
        calls.append(1)
        return i < 10

    r1 = tf.while_loop(cond, lambda i, s: (i + 1, s * 2.0), (0, 1.0), maximum_iterations=3)
    r2 = tf.while_loop(lambda i: i < 10, lambda i: (i + 1,), (0,),
                       maximum_iterations=tf.constant(4))
    r3 = tf.while_loop(lambda i: i < 10, lambda i: (i + 1,), (0,), maximum_iterations=-1)
    return r1, r2, r3, len(calls)


@eager
def while_errors(tf: Any) -> Any:
    out = []
    for call in (
            lambda: tf.while_loop(lambda i, s: i < 3, lambda i, s: (i + 1, (s, s)), (0, 1.0)),
            lambda: tf.while_loop(lambda i, s: i < 3, lambda i, s: (i + 1,), (0, 1.0)),
            lambda: tf.while_loop(lambda i: i < 3, lambda i: i + 1, [0], maximum_iterations=3),
            lambda: tf.while_loop(lambda d: d["i"] < 3, lambda d: {"i": d["i"] + 1},
                                  ({"i": 0},)),
            lambda: tf.while_loop(lambda i: i < 3, lambda i: i + 1, tf.constant(0)),
            lambda: tf.while_loop(lambda i: i < 3, lambda i: i + 1, [tf.constant(0)]),
            lambda: tf.while_loop(lambda i: i < 9, lambda i: (i,), (0,), parallel_iterations=0),
            lambda: tf.while_loop(lambda i: i < 9, lambda i: (i,), (0,),
                                  maximum_iterations=[3]),
            lambda: tf.while_loop(1, lambda i: i, (0,))):
        try:
            call()
        except Exception as e:  # noqa: BLE001
            out.append(_exc(e))
    return out


# ------------------------------------------------------------------ switch_case, case
@eager
def switch_case_values_gradients_errors(tf: Any) -> Any:
    c = tf.constant
    x = tf.Variable(2.0)
    fns = [lambda: tf.identity(x), lambda: x * x, lambda: tf.exp(x)]
    out: list[Any] = []
    for k in (0, 1, 2, 7, -1):
        with tf.GradientTape() as tape:
            y = tf.switch_case(c(k), fns)
        out += [y, tape.gradient(y, x)]
    out.append(tf.switch_case(c(5), fns, default=lambda: x * 0.0))
    out.append(tf.switch_case(c(1), [(1, fns[0]), (0, fns[1])]))
    for call in (lambda: tf.switch_case(1, fns), lambda: tf.switch_case(c(1.0), fns),
                 lambda: tf.switch_case(c(1), []),
                 lambda: tf.switch_case(c(1), {0: fns[0], 2: fns[1]}),
                 lambda: tf.switch_case(c(1), [(0, 1)])):
        try:
            call()
        except Exception as e:  # noqa: BLE001
            out.append(_exc(e))
    return out


@eager
def case_values_and_errors(tf: Any) -> Any:
    c = tf.constant
    x = c(3.0)
    out: list[Any] = [
        tf.case([(x < 2.0, lambda: c(1.0)), (x < 4.0, lambda: c(2.0))], default=lambda: c(3.0)),
        tf.case([(x < 2.0, lambda: c(1.0)), (x < 4.0, lambda: c(2.0))]),
        tf.case([(x < 5.0, lambda: [c(1.0)])], default=lambda: [c(2.0)]),
        tf.case([(x < 5.0, lambda: [c(1.0)])], default=lambda: [c(2.0)], strict=True),
    ]
    for call in (lambda: tf.case([(x < 2.0, lambda: c(1.0)), (x < 3.0, lambda: c(2.0))]),
                 lambda: tf.case([(True, lambda: c(1.0))]),
                 lambda: tf.case(5), lambda: tf.case([(x < 1.0,)])):
        try:
            call()
        except Exception as e:  # noqa: BLE001
            out.append(_exc(e))
    return out


# ------------------------------------------------------------------ TensorArray
@eager
def tensor_array_methods(tf: Any) -> Any:
    TA = tf.TensorArray
    f32 = tf.float32
    return (
        TA(f32, size=2).write(0, 1.0).write(1, tf.constant(2.0)).stack(),
        TA(f32, size=3, element_shape=[2]).write(0, [1.0, 2.0]).stack(),
        TA(f32, size=3).write(1, [1.0, 2.0]).stack(),
        TA(f32, size=0, dynamic_size=True).write(3, 1.0).stack(),
        TA(f32, size=3).unstack(X).read(2),
        TA(f32, size=4).unstack(X).size(),
        TA(f32, size=3).unstack(X).gather([2, 0]),
        TA(f32, size=3).scatter([2, 0], X[:2]).stack(),
        TA(f32, size=2).split([1.0, 2.0, 3.0], [1, 2]).read(1),
        TA(f32, size=0).stack(),
        TA(f32, size=0, element_shape=[2]).stack(),
        TA(f32, size=1).write(0, 3).stack(),
        TA(f32, size=1).write(0, 3.0).write(0, 4.0).stack(),
        TA(f32, size=2, element_shape=[3]).read(1),
        TA(f32, size=1, dynamic_size=True).dynamic_size,
    )


@eager
def tensor_array_errors(tf: Any) -> Any:
    TA = tf.TensorArray
    f32 = tf.float32

    def twice() -> Any:
        ta = TA(f32, size=2).write(0, 1.0)
        ta.read(0)
        return ta.read(0)

    out = []
    for call in (twice, lambda: TA(f32, size=2).write(2, 1.0),
                 lambda: TA(f32, size=2).write(-1, 1.0), lambda: TA(f32, size=2).read(2),
                 lambda: TA(f32, size=2).read(1), lambda: TA(f32, size=2).write(0, tf.constant(1)),
                 lambda: TA(f32, size=2).write(0, [1.0]).write(1, [1.0, 2.0]),
                 lambda: TA(f32, size=2, element_shape=[3]).write(0, [1.0]),
                 lambda: TA(f32, size=2).unstack(X),
                 lambda: TA(f32, size=2).write(0, 1.0).write(1, 2.0).concat(),
                 lambda: TA(f32, size=2).split([1.0, 2.0, 3.0], [1, 1]),
                 lambda: TA(f32, size=3).split([1.0, 2.0, 3.0], [1, 2]),
                 lambda: TA(f32)):
        try:
            call()
        except Exception as e:  # noqa: BLE001
            out.append(_exc(e))
    return out


@eager
def tensor_array_gradients(tf: Any) -> Any:
    x = tf.Variable([1.0, 2.0])
    with tf.GradientTape() as tape:
        ta = tf.TensorArray(tf.float32, size=3, clear_after_read=False)
        for i in range(3):
            ta = ta.write(i, x * float(i + 1))
        y = tf.reduce_sum(ta.stack() ** 2) + tf.reduce_sum(ta.read(1)) + \
            tf.reduce_sum(ta.gather([0, 2]) * 3.0)
    return y, tape.gradient(y, x)


@eager
def tensor_array_clear_after_read_in_loop(tf: Any) -> Any:
    x = tf.Variable(1.5)
    with tf.GradientTape() as tape:
        ta = tf.TensorArray(tf.float32, size=4).write(0, x)
        _, ta = tf.while_loop(lambda i, ta: i < 4,
                              lambda i, ta: (i + 1, ta.write(i, ta.read(i - 1) * x)),
                              (tf.constant(1), ta))
        y = tf.reduce_sum(ta.stack())  # the elements read were cleared: zeros
    return y, tape.gradient(y, x)


# ------------------------------------------------------------------ AutoGraph (eager)
def _ag_break(tf: Any, x: Any) -> Any:
    s = tf.constant(0.0)
    for i in tf.range(10):
        if s > x:
            break
        s += tf.cast(i, tf.float32)
    return s


def _ag_continue(tf: Any, x: Any) -> Any:
    s = tf.constant(0)
    i = tf.constant(0)
    while i < 10:
        i += 1
        if i % 2 == 0:
            continue
        s += i
    return s


def _ag_grad_loop(tf: Any, x: Any) -> Any:
    y = x
    for _ in tf.range(3):
        if y > 2.0:
            y = y * x
        else:
            y = y + x
    return y


def _ag_returns(tf: Any, x: Any) -> Any:
    if x > 0:
        return x * 2.0
    elif x > -1:
        return x * 3.0
    return x * 4.0


def _ag_logic(tf: Any, x: Any) -> Any:
    if (x > 0 and x < 3) or not x > -5:
        return x * 10.0
    return x * 2.0 if x > -2 else x * 4.0


def _ag_for_tensor(tf: Any, x: Any) -> Any:
    total = tf.zeros([2])
    for row in x:
        total += row * 2.0
    return total


def _ag_nested(tf: Any, n: Any) -> Any:
    total = tf.constant(0)
    i = tf.constant(0)
    while i < n:
        j = tf.constant(0)
        while j < i:
            total += j
            j += 1
        i += 1
    return total


def _ag_fib(tf: Any, n: Any) -> Any:
    ta = tf.TensorArray(tf.float32, size=n, clear_after_read=False)
    ta = ta.write(0, 0.0).write(1, 1.0)
    for i in tf.range(2, n):
        ta = ta.write(i, ta.read(i - 1) + ta.read(i - 2))
    return ta.stack()


AG_VALUES = [(_ag_break, [5.0, 100.0]), (_ag_continue, [0.0]), (_ag_returns, [1.0, -0.5, -3.0]),
             (_ag_logic, [1.0, -1.0, -3.0, -7.0, 5.0]), (_ag_nested, [5]), (_ag_fib, [7])]


@eager
def autograph_eager_values(tf: Any) -> Any:
    out = []
    for fn, inputs in AG_VALUES:
        g = tf.autograph.to_graph(fn)
        out += [g(tf, tf.constant(v)) for v in inputs]
    out.append(tf.autograph.to_graph(_ag_for_tensor)(tf, tf.constant(X)))
    return out


@eager
def autograph_eager_gradients(tf: Any) -> Any:
    out = []
    for v in (1.5, 0.3):
        x = tf.Variable(v)
        with tf.GradientTape() as tape:
            y = tf.autograph.to_graph(_ag_grad_loop)(tf, x)
        out += [y, tape.gradient(y, x)]
    return out


def _e_undef(tf: Any, x: Any) -> Any:
    if x > 0:
        y = x
    return y  # noqa: F821 - on purpose


def _e_dtype_loop(tf: Any, x: Any) -> Any:
    s = 0
    for _ in tf.range(3):
        s += x
    return s


def _e_shape_loop(tf: Any, x: Any) -> Any:
    while tf.reduce_sum(x) < 10.0:
        x = tf.concat([x, x], 0)
    return x


def _e_return_in_loop(tf: Any, x: Any) -> Any:
    for i in tf.range(10):
        if tf.cast(i, tf.float32) > x:
            return tf.cast(i, tf.float32)
    return tf.constant(-1.0)


def _e_one_sided(tf: Any, x: Any) -> Any:
    if x > 0:
        return x * 2.0


def _e_nonscalar(tf: Any, x: Any) -> Any:
    if x > 0:
        x = x + 1.0
    return x


def _e_int_cond(tf: Any, x: Any) -> Any:
    if tf.constant(1):
        x = x + 1.0
    return x


def _e_while_else(tf: Any, x: Any) -> Any:
    while x < 10.0:
        x = x * 2.0
    else:
        x = -x
    return x


@eager
def autograph_eager_errors(tf: Any) -> Any:
    out = []
    for fn, arg in ((_e_undef, -1.0), (_e_dtype_loop, 1.0), (_e_shape_loop, [1.0]),
                    (_e_return_in_loop, 5.0), (_e_one_sided, -1.0), (_e_nonscalar, [1.0, 2.0]),
                    (_e_int_cond, 1.0), (_e_while_else, 1.0)):
        try:
            tf.autograph.to_graph(fn)(tf, tf.constant(arg))
        except Exception as e:  # noqa: BLE001
            out.append(("raises", type(e).__name__, str(e).split("\n")[0]))
    return out


# ------------------------------------------------------------------ graph mode
@graph
def graph_values(tf: Any) -> Any:
    def f(x: Any, n: Any) -> Any:
        return (_ag_break(tf, x), _ag_continue(tf, x), _ag_returns(tf, x - 6.0),
                _ag_nested(tf, n), _ag_fib(tf, 7), _ag_for_tensor(tf, tf.constant(X)))

    return f, (tf.constant(5.0), tf.constant(5))


@graph
def graph_gradient(tf: Any) -> Any:
    def f(x: Any) -> Any:
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = _ag_grad_loop(tf, x)
        return y, tape.gradient(y, x)

    return f, (tf.constant(1.5),)


@graph
def graph_cond_dtype_error(tf: Any) -> Any:
    return (lambda x: tf.cond(x > 0, lambda: x, lambda: tf.cast(x, tf.int32))), \
        (tf.constant(1.0),)


@graph
def graph_cond_count_error(tf: Any) -> Any:
    return (lambda x: tf.cond(x > 0, lambda: (x, x), lambda: x)), (tf.constant(1.0),)


@graph
def graph_switch_dtype_error(tf: Any) -> Any:
    return (lambda i: tf.switch_case(i, [lambda: tf.constant(1.0), lambda: tf.constant(1)])), \
        (tf.constant(0),)


@graph
def graph_while_shape_error(tf: Any) -> Any:
    return (lambda x: tf.while_loop(lambda i, s: i < 3,
                                    lambda i, s: (i + 1, tf.concat([s, s], 0)), (0, x))), \
        (tf.ones([1]),)


@graph
def graph_while_shape_invariants(tf: Any) -> Any:
    return (lambda x: tf.while_loop(lambda i, s: i < 3,
                                    lambda i, s: (i + 1, tf.concat([s, s], 0)), (0, x),
                                    shape_invariants=(tf.TensorShape([]),
                                                      tf.TensorShape([None])))), \
        (tf.ones([1]),)


@graph
def graph_while_dtype_error(tf: Any) -> Any:
    return (lambda x: tf.while_loop(lambda i, s: i < 3,
                                    lambda i, s: (i + 1, tf.cast(s, tf.float64)), (0, x))), \
        (tf.ones([1]),)


@graph
def graph_autograph_undefined(tf: Any) -> Any:
    def f(x: Any) -> Any:
        return _e_undef(tf, x)

    return f, (tf.constant(1.0),)


@graph
def graph_autograph_branch_dtypes(tf: Any) -> Any:
    def f(x: Any) -> Any:
        if x > 0:
            y = x
        else:
            y = 1
        return y

    return f, (tf.constant(1.0),)


@graph
def graph_autograph_one_sided_return(tf: Any) -> Any:
    def f(x: Any) -> Any:
        return _e_one_sided(tf, x)

    return f, (tf.constant(1.0),)


# ------------------------------------------------------------------ the tests
@pytest.mark.parametrize("name", sorted(EAGER))
def test_eager_programs_match_tensorflow(name: str) -> None:
    tf = real_tf()
    want = run_eager(tf, name)
    got = run_eager(tg_tf, name)
    assert same(want, got, rtol=1e-5, atol=1e-6), f"\nTensorFlow: {want}\ntapegrad:   {got}"


@pytest.mark.parametrize("name", sorted(GRAPH))
def test_graph_programs_match_tf_function(name: str) -> None:
    tf = real_tf()
    want = run_graph(tf, name)
    got = run_graph(tg_tf, name)
    assert same(want, got, rtol=1e-5, atol=1e-6), f"\nTensorFlow: {want}\ntapegrad:   {got}"


# ------------------------------------------------------- tf.function x AutoGraph x tracing
def _traced_program(tf: Any) -> list[Any]:
    """Python ``if``/``for`` on tensors (AutoGraph) and ``tf.while_loop`` inside
    ``tf.function``, with gradients through the traced programs and the trace count."""

    @tf.function
    def f(x: Any, n: Any) -> Any:
        if tf.reduce_sum(x) > 0:
            y = x * 2.0
        else:
            y = x - 1.0
        s = tf.constant(0.0)
        for i in tf.range(n):
            s = s + tf.reduce_sum(y) * tf.cast(i, tf.float32)
        return s

    @tf.function
    def g(x: Any) -> Any:
        def c(i: Any, v: Any) -> Any:
            return i < 3

        def b(i: Any, v: Any) -> Any:
            return i + 1, v * x

        _, v = tf.while_loop(c, b, (tf.constant(0), tf.ones_like(x)))
        return tf.reduce_sum(v)

    x = tf.Variable([1.0, 2.0])
    out = [f(tf.constant([1.0, 2.0]), 4).numpy(), f(tf.constant([-1.0, -2.0]), 3).numpy(),
           f.experimental_get_tracing_count()]
    with tf.GradientTape() as t:
        r = g(x)
    out += [r.numpy(), t.gradient(r, x).numpy()]
    with tf.GradientTape() as t:
        r = f(x * 1.0, 2)
    out += [r.numpy(), t.gradient(r, x).numpy(), f.experimental_get_tracing_count()]
    return out


def test_autograph_and_while_loop_inside_tf_function_as_tensorflow() -> None:
    real = real_tf()
    ours, theirs = _traced_program(tg_tf), _traced_program(real)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-6)
