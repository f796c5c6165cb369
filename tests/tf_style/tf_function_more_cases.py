"""More ``tf.function`` scenarios, written once for ``tapegrad.tf`` and real TensorFlow:
pruning of unused ops, TensorFlow's error texts (``in user code:``, ``Graph execution
error:``, static shape errors), symbolic tensors and None dimensions, Variables as
arguments, iterating over tensors, zero-iteration loops and ``ConcreteFunction.graph``.

Each scenario takes the module (``tf``) and returns plain Python values; the unit
tests check them against TensorFlow 2.21's values, the conformance suite against real
TensorFlow.  Error texts are normalized (:func:`norm`): the ``__inference_f_N``
number, and the frames outside this file (the test runner's).
"""

from __future__ import annotations

import contextlib
import io
import re
from typing import Any

import numpy as np


def _err(fn: Any) -> tuple[str, str]:
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - the scenario reports what was raised
        return type(e).__name__, str(e)
    return "", ""


def norm(msg: str) -> str:
    """An error text without what differs between runs: the function number and the
    'defined at' frames outside this file."""
    msg = re.sub(r"__inference_(\w+?)_\d+\]", r"__inference_\1_N]", msg)
    lines = msg.split("\n")
    out: list[str] = []
    skip_blank = False
    for ln in lines:
        if ln.startswith('  File "') and __file__ not in ln:
            skip_blank = True
            continue
        if skip_blank and ln == "":
            skip_blank = False
            continue
        skip_blank = False
        out.append(ln)
    return "\n".join(out)


def pruning(tf: Any) -> dict[str, Any]:
    @tf.function
    def unused(x: Any) -> Any:
        tf.gather(x, [10])  # out of range, but nothing needs it
        return x * 2.0

    @tf.function
    def used(x: Any) -> Any:
        y = tf.gather(x, [10])
        return y + 1.0

    @tf.function
    def used_by_effect(x: Any, v: Any) -> Any:
        v.assign(tf.gather(x, [10]))
        return x

    r: dict[str, Any] = {
        "first": unused(tf.constant([1.0, 2.0])).numpy().tolist(),
        "second": unused(tf.constant([1.0, 3.0])).numpy().tolist(),
        "count": unused.experimental_get_tracing_count(),
    }
    e1 = _err(lambda: used(tf.constant([1.0, 2.0])))
    e2 = _err(lambda: used(tf.constant([1.0, 2.0])))
    r["used"] = [e1[0], norm(e1[1]), e2[0], norm(e2[1]), used.experimental_get_tracing_count()]
    v = tf.Variable([0.0])
    e3 = _err(lambda: used_by_effect(tf.constant([1.0, 2.0]), v))
    r["effect"] = [e3[0], norm(e3[1]).splitlines()[-1]]
    # the gradient of a function whose dead op would fail
    x = tf.Variable([1.0, 2.0])
    with tf.GradientTape() as t:
        y = tf.reduce_sum(unused(x) ** 2)
    r["grad"] = t.gradient(y, x).numpy().tolist()
    return r


def helper_reshape(x: Any, tf: Any) -> Any:
    y = x * 2.0
    return tf.reshape(y, [7])


class MyError(Exception):
    pass


def user_code_errors(tf: Any) -> dict[str, Any]:
    @tf.function
    def key(x: Any) -> Any:
        raise KeyError("boom")

    @tf.function
    def typ(x: Any) -> Any:
        raise TypeError("bad type here")

    @tf.function
    def mine(x: Any) -> Any:
        raise MyError("mine")

    @tf.function(autograph=False)
    def key_noag(x: Any) -> Any:
        raise KeyError("boom")

    @tf.function
    def nested(x: Any) -> Any:
        return helper_reshape(x, tf) + 1.0

    @tf.function
    def staged(x: Any) -> Any:
        raise UnicodeDecodeError("utf-8", b"\xff", 0, 1, "invalid start byte")

    r: dict[str, Any] = {}
    for name, f in (("key", key), ("typ", typ), ("mine", mine), ("key_noag", key_noag),
                    ("nested", nested), ("staged", staged)):
        try:
            f(tf.ones([2, 3]))
        except Exception as e:  # noqa: BLE001 - compared
            r[name] = [type(e).__name__, isinstance(e, KeyError), str(e)]
    return r


def shape_errors(tf: Any) -> dict[str, Any]:
    @tf.function
    def mm(a: Any, b: Any) -> Any:
        return tf.matmul(a, b)

    @tf.function
    def add(a: Any, b: Any) -> Any:
        return a + b

    @tf.function
    def mul(a: Any, b: Any) -> Any:
        return a * b

    @tf.function
    def rs(a: Any) -> Any:
        return tf.reshape(a, [4, 2])

    @tf.function
    def cc(a: Any, b: Any) -> Any:
        return tf.concat([a, b], 0)

    @tf.function(autograph=False)
    def mm_noag(a: Any, b: Any) -> Any:
        return tf.matmul(a, b)

    v = tf.Variable([1.0, 2.0])

    @tf.function
    def inc(x: Any) -> Any:
        v.assign_add(x)
        return x

    @tf.function
    def mixed(a: Any, b: Any) -> Any:
        return a + b

    @tf.function
    def mixed_mm(a: Any, b: Any) -> Any:
        return tf.matmul(a, b)

    x32, x64 = tf.ones([1, 1]), tf.ones([1, 1], tf.float64)
    a, b = tf.ones([2, 3]), tf.ones([4, 5])
    return {
        "dtypes": [_err(lambda: mixed(x32, x64)), _err(lambda: mixed_mm(x32, x64))],
        "assign_add": [_err(lambda: inc(tf.ones([3])))[1].strip().splitlines()[-1],
                       _err(lambda: inc(tf.ones([2, 2])))[1].strip().splitlines()[-1]],
        "matmul": _err(lambda: mm(a, b)),
        "add": _err(lambda: add(a, b)),
        "mul": _err(lambda: mul(tf.ones([3, 2]), tf.ones([3]))),
        "reshape": _err(lambda: rs(a)),
        "concat": _err(lambda: cc(a, b)),
        "matmul_noag": _err(lambda: mm_noag(a, b)),
        "eager": _err(lambda: tf.matmul(a, b))[0],
    }


def symbolic_tensors(tf: Any) -> dict[str, Any]:
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        r = _symbolic_tensors(tf)
    r["printed"] = buf.getvalue().splitlines()
    return r


def _symbolic_tensors(tf: Any) -> dict[str, Any]:
    class Seen:  # what the Python body saw, printed (a Python side effect of tracing)
        def append(self, x: Any) -> None:
            print(x)

        def extend(self, xs: Any) -> None:
            for x in xs:
                print(x)

    seen = Seen()

    @tf.function
    def f(x: Any) -> Any:
        y = x + 1.0
        seen.extend([type(x).__name__, type(y).__name__, str(y), repr(y), str(x)])
        return y

    @tf.function(input_signature=[tf.TensorSpec([None, 3], tf.float32)])
    def g(x: Any) -> Any:
        s = tf.shape(x)[0]
        y = tf.reduce_sum(x, axis=1)
        m = tf.matmul(x, tf.ones([3, 2]))
        seen.extend([str(x.shape), x.shape[0], x.shape[1], type(s).__name__, str(y),
                     str(y.shape), str(m.shape), str((x * 2.0).shape),
                     str(tf.reshape(x, [-1]).shape), str(tf.reduce_sum(x).shape)])
        return y * tf.cast(s, tf.float32)

    @tf.function(reduce_retracing=True)
    def h(x: Any) -> Any:
        seen.append(str(x * 2.0))
        return x * 2.0

    out = f(tf.constant([1.0, 2.0])).numpy().tolist()
    g1, g2 = g(tf.ones([2, 3])).numpy().tolist(), g(tf.ones([4, 3])).numpy().tolist()
    for n in (2, 3, 4):
        h(tf.ones([n]))
    h(tf.ones([4, 2]))
    return {"out": out, "g": [g1, g2], "counts": [
        g.experimental_get_tracing_count(), h.experimental_get_tracing_count()],
        "after": type(f(tf.constant([1.0, 5.0]))).__name__}


def variables_by_spec(tf: Any) -> dict[str, Any]:
    traced: list[int] = []

    @tf.function
    def f(v: Any) -> Any:
        traced.append(1)
        return v * 2.0

    @tf.function
    def inc(v: Any) -> Any:
        v.assign_add(tf.ones_like(v))
        return v.read_value()

    v1, v2 = tf.Variable([1.0, 2.0]), tf.Variable([3.0, 4.0])
    v3 = tf.Variable([1.0, 2.0, 3.0])
    outs = [f(v1).numpy().tolist(), f(v2).numpy().tolist(), f(v3).numpy().tolist(),
            f(v1).numpy().tolist()]
    incs = [inc(v1).numpy().tolist(), inc(v2).numpy().tolist(), inc(v1).numpy().tolist()]
    with tf.GradientTape() as t:
        y = tf.reduce_sum(f(v2) ** 2)
    return {"outs": outs, "python_calls": len(traced), "count": f.experimental_get_tracing_count(),
            "incs": incs, "inc_count": inc.experimental_get_tracing_count(),
            "values": [v1.numpy().tolist(), v2.numpy().tolist()],
            "grad": t.gradient(y, v2).numpy().tolist()}


def iterating(tf: Any) -> dict[str, Any]:
    @tf.function
    def rows(x: Any) -> Any:
        s = tf.zeros([3])
        for row in x:
            s = s + row
        return s

    @tf.function(autograph=False)
    def rows_noag(x: Any) -> Any:
        s = tf.zeros([3])
        for row in x:
            s = s + row
        return s

    @tf.function
    def unpack(x: Any) -> Any:
        a, b = x
        return a + b

    @tf.function
    def as_list(x: Any) -> Any:
        return list(x)

    x = tf.constant(np.arange(12.0, dtype=np.float32).reshape(4, 3))
    r: dict[str, Any] = {"rows": rows(x).numpy().tolist(),
                         "rows2": rows(tf.ones([2, 3])).numpy().tolist(),
                         "noag": _err(lambda: rows_noag(x)),
                         "unpack": _err(lambda: unpack(tf.ones([2, 3]))),
                         "list": _err(lambda: as_list(tf.ones([2, 3])))}
    xv = tf.Variable(np.ones((3, 3), np.float32))
    with tf.GradientTape() as t:
        y = tf.reduce_sum(rows(xv * 3.0))
    r["grad"] = t.gradient(y, xv).numpy().tolist()
    return r


def zero_iterations(tf: Any) -> dict[str, Any]:
    @tf.function
    def carried(n: Any) -> Any:
        s = tf.constant(5.0)
        for i in tf.range(n):
            s = s + tf.cast(i, tf.float32)
        return s

    @tf.function
    def first_set_inside(n: Any) -> Any:
        for i in tf.range(n):
            y = tf.cast(i, tf.float32)
        return y

    @tf.function
    def while_first_set(n: Any) -> Any:
        i = tf.constant(0)
        while i < n:
            z = i * 2
            i += 1
        return z

    @tf.function
    def rows(x: Any) -> Any:
        s = tf.zeros([3])
        for row in x:
            s = s + row * 2.0
        return s

    r: dict[str, Any] = {
        "carried": [float(carried(tf.constant(k))) for k in (0, 3, 0, 2)],
        "carried_count": carried.experimental_get_tracing_count(),
        "rows_empty": rows(tf.zeros([0, 3])).numpy().tolist(),
        "rows_full": rows(tf.ones([2, 3])).numpy().tolist(),
    }
    e = _err(lambda: first_set_inside(tf.constant(0)))
    r["first_set_zero"] = [e[0], norm(e[1])]
    r["first_set_three"] = float(first_set_inside(tf.constant(3)))
    e = _err(lambda: first_set_inside(tf.constant(0)))
    r["first_set_zero_again"] = [e[0], norm(e[1]).splitlines()[-2:]]
    e = _err(lambda: while_first_set(tf.constant(0)))
    r["while_zero"] = [e[0], norm(e[1])]
    x = tf.Variable(2.0)
    with tf.GradientTape() as t:
        y = carried_x(tf, x, tf.constant(0))
    r["grad_zero"] = float(t.gradient(y, x))
    return r


def carried_x(tf: Any, x: Any, n: Any) -> Any:
    @tf.function
    def f(x: Any, n: Any) -> Any:
        s = x * 3.0
        for _ in tf.range(n):
            s = s * x
        return s

    return f(x, n)


def concrete_graph(tf: Any) -> dict[str, Any]:
    @tf.function
    def h(x: Any) -> Any:
        return x * 2.0 + 1.0

    @tf.function
    def h3(x: Any, y: Any) -> Any:
        return {"a": tf.reduce_sum(x), "b": tf.sin(y) - x}

    cf = h.get_concrete_function(tf.TensorSpec([2], tf.float32))
    cf3 = h3.get_concrete_function(tf.TensorSpec([2], tf.float32),
                                   tf.TensorSpec([2], tf.float32))
    g = cf.graph
    return {
        "ops": [(o.name, o.type, [i.name for i in o.inputs], [t.name for t in o.outputs])
                for o in g.get_operations()],
        "graph_def": [(n.name, n.op, list(n.input)) for n in g.as_graph_def().node],
        "graph": [type(g).__name__, g.name, repr(g.inputs), repr(g.outputs)],
        "cf": [repr(cf.inputs), repr(cf.outputs), str(cf.structured_outputs),
               repr(cf.structured_input_signature), cf.name.startswith(b"__inference_h_")],
        "node": str(g.get_operations()[2]),
        "ops3": [(o.name, o.type) for o in cf3.graph.get_operations()],
        "cf3": [repr(cf3.inputs), repr(cf3.outputs), repr(cf3.structured_outputs)],
        "call": cf(tf.constant([1.0, 2.0])).numpy().tolist(),
    }


def replay_index_errors(tf: Any) -> dict[str, Any]:
    @tf.function
    def g(x: Any, i: Any) -> Any:
        return tf.gather(x, i) * 2.0

    @tf.function
    def s(x: Any, i: Any) -> Any:
        return x[i] * 2.0

    x = tf.constant([1.0, 2.0])
    r: dict[str, Any] = {"ok": [g(x, tf.constant([1, 0])).numpy().tolist(),
                                float(s(x, tf.constant(1)))]}
    e = _err(lambda: g(x, tf.constant([0, 7])))  # a replay: the trace saw valid indices
    r["gather"] = [e[0], norm(e[1])]
    e = _err(lambda: s(x, tf.constant(5)))
    r["slice"] = [e[0], norm(e[1])]
    r["counts"] = [g.experimental_get_tracing_count(), s.experimental_get_tracing_count()]
    return r


def asserts(tf: Any) -> dict[str, Any]:
    @tf.function
    def f(x: Any) -> Any:
        tf.debugging.assert_less(x, 3.0, message="small")  # unused: an effect, it stays
        return x * 2.0

    @tf.function
    def g(x: Any, y: Any) -> Any:
        tf.debugging.assert_equal(x, y)
        return x

    r: dict[str, Any] = {"ok": f(tf.constant([1.0])).numpy().tolist()}
    e = _err(lambda: f(tf.constant([5.0])))  # a replay
    r["less"] = [e[0], norm(e[1])]
    g(tf.constant([1.0, 2.0, 3.0, 4.0]), tf.constant([1.0, 2.0, 3.0, 4.0]))
    e = _err(lambda: g(tf.constant([1.0, 2.0, 3.0, 4.0]), tf.constant([9.0, 9.0, 9.0, 9.0])))
    r["equal"] = [e[0], norm(e[1]).split("\n\n")[-1]]
    r["counts"] = [f.experimental_get_tracing_count(), g.experimental_get_tracing_count()]
    return r


SCENARIOS = {f.__name__: f for f in (pruning, user_code_errors, shape_errors, symbolic_tensors,
                                      variables_by_spec, iterating, zero_iterations,
                                      concrete_graph, replay_index_errors, asserts)}


def capture(fn: Any, tf: Any) -> tuple[dict[str, Any], str]:
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        r = fn(tf)
    return r, buf.getvalue()
