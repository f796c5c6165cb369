"""``tf.function`` scenarios written once, run on ``tapegrad.tf`` and on real TensorFlow.

Each scenario takes the module ``tf`` and returns a dict of plain Python/NumPy
results (trace counts, what Python printed, what ``tf.print`` printed, values,
gradients, error types and messages), so the style tests can check them and
the conformance suite can compare them with TensorFlow's.
"""

from __future__ import annotations

import contextlib
import io
import sys
from collections.abc import Callable
from typing import Any

import numpy as np


@contextlib.contextmanager
def captured() -> Any:
    """Python's stdout and ``tf.print``'s stderr, as text."""
    out, err = io.StringIO(), io.StringIO()
    old = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = out, err
    try:
        yield out, err
    finally:
        sys.stdout, sys.stderr = old


def _err(fn: Callable[[], Any]) -> tuple[str, str]:
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - the scenario reports what was raised
        return type(e).__name__, str(e)
    return "", ""


def counts_and_side_effects(tf: Any) -> dict[str, Any]:
    calls: list[int] = []

    @tf.function
    def f(x: Any, k: Any = 2.0) -> Any:
        calls.append(1)
        tf.print("value", x)
        return x * k + 1.0

    with captured() as (out, err):
        vals = [f(tf.constant(1.0)), f(tf.constant(2.0)), f(tf.constant([1.0, 2.0])),
                f(tf.constant(3.0), 3.0), f(tf.constant(3.0), 3.0), f(tf.constant(3.0), 4.0),
                f(2), f(2), f(3)]
    return {"count": f.experimental_get_tracing_count(), "python_calls": len(calls),
            "tf_print": err.getvalue(), "values": [np.asarray(v).tolist() for v in vals]}


def python_print_is_symbolic(tf: Any) -> dict[str, Any]:
    @tf.function
    def f(x: Any) -> Any:
        print("py", x)
        return x + 1.0

    with captured() as (out, _):
        f(tf.constant(1.0))
        f(tf.constant(2.0))
    return {"stdout": out.getvalue()}


def reduce_retracing(tf: Any) -> dict[str, Any]:
    shapes: list[str] = []

    @tf.function(reduce_retracing=True)
    def f(x: Any) -> Any:
        shapes.append(str(x.shape))
        return tf.reduce_sum(x * 2.0)

    vals = [f(tf.ones([2])), f(tf.ones([3])), f(tf.ones([4])), f(tf.ones([2, 2]))]
    return {"count": f.experimental_get_tracing_count(), "shapes": shapes[:2],
            "values": [float(v) for v in vals]}


def input_signature(tf: Any) -> dict[str, Any]:
    @tf.function(input_signature=[tf.TensorSpec(shape=[None], dtype=tf.float32)])
    def g(x: Any) -> Any:
        return x * 2.0

    res = {"ok": g(tf.constant([1.0, 2.0])).numpy().tolist(),
           "list": g([1.0, 2.0, 3.0]).numpy().tolist()}
    res["count"] = g.experimental_get_tracing_count()
    for name, call in (("dtype", lambda: g(tf.constant([1, 2]))),
                       ("rank", lambda: g(tf.constant([[1.0, 2.0]]))),
                       ("extra", lambda: g(tf.constant([1.0]), tf.constant(1.0))),
                       ("scalar", lambda: g(1.0))):
        res[name] = _err(call)
    cf = g.get_concrete_function()
    res["cf"] = cf(tf.constant([1.0, 2.0])).numpy().tolist()
    res["cf_dtype"] = _err(lambda: cf(tf.constant([1, 2])))
    res["count_after"] = g.experimental_get_tracing_count()
    return res


def variables_created_once(tf: Any) -> dict[str, Any]:
    @tf.function
    def bad(x: Any) -> Any:
        v = tf.Variable(1.0)
        return v + x

    e = _err(lambda: bad(1.0))
    n: list[int] = []

    class M(tf.Module):
        def __init__(self) -> None:
            super().__init__()
            self.v: Any = None

        @tf.function
        def __call__(self, x: Any) -> Any:
            n.append(1)
            if self.v is None:
                self.v = tf.Variable(2.0)
            return self.v * x

    m1, m2 = M(), M()
    a = float(m1(tf.constant(3.0)))
    b = float(m1(tf.constant(4.0)))
    c = float(m2(tf.constant(5.0)))
    return {"error": e, "bad_count": bad.experimental_get_tracing_count(), "values": [a, b, c],
            "python_calls": len(n), "m1_count": m1.__call__.experimental_get_tracing_count(),
            "m2_count": m2.__call__.experimental_get_tracing_count()}


def assign_and_print_every_call(tf: Any) -> dict[str, Any]:
    v = tf.Variable(1.0)

    @tf.function
    def inc(d: Any) -> Any:
        v.assign_add(d)
        tf.print("v is", v)
        v.assign(v * 2.0)
        return v.read_value() + 0.0

    with captured() as (_, err):
        outs = [float(inc(tf.constant(1.0))) for _ in range(3)]
    return {"outs": outs, "v": float(v.numpy()), "printed": err.getvalue(),
            "count": inc.experimental_get_tracing_count()}


def train_step_gradients(tf: Any) -> dict[str, Any]:
    rng = np.random.default_rng(3)
    x = tf.constant(rng.normal(size=(8, 4)).astype(np.float32))
    y = tf.constant(rng.integers(0, 3, size=8))
    tf.keras.utils.set_random_seed(1)
    model = tf.keras.Sequential([tf.keras.Input((4,)), tf.keras.layers.Dense(5, activation="relu"),
                                 tf.keras.layers.Dense(3)])
    w0 = [w.numpy().copy() for w in model.trainable_variables]
    opt = tf.keras.optimizers.SGD(0.1, momentum=0.5)
    loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)

    @tf.function
    def step(x: Any, y: Any) -> Any:
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss, grads

    losses, g_last = [], None
    for _ in range(4):
        loss, grads = step(x, y)
        losses.append(float(loss))
        g_last = [g.numpy() for g in grads]
    return {"w0": w0, "losses": losses, "grads": g_last,
            "w": [w.numpy() for w in model.trainable_variables],
            "count": step.experimental_get_tracing_count()}


def tape_outside(tf: Any) -> dict[str, Any]:
    w = tf.Variable([1.5, -0.5])

    @tf.function
    def f(x: Any) -> Any:
        return tf.reduce_sum(tf.sin(x * w) * x)

    out = []
    for v in ([0.3, 0.7], [1.0, -2.0]):
        x = tf.constant(v)
        with tf.GradientTape(persistent=True) as outer:
            outer.watch(x)
            with tf.GradientTape() as inner:
                inner.watch(x)
                y = f(x)
            gx = inner.gradient(y, x)
        out.append({"y": float(y), "gx": gx.numpy().tolist(),
                    "gw": outer.gradient(y, w).numpy().tolist(),
                    "hxx": outer.gradient(gx, x).numpy().tolist()})
    return {"out": out, "count": f.experimental_get_tracing_count()}


def graph_mode_errors(tf: Any) -> dict[str, Any]:
    @tf.function(autograph=False)
    def b(x: Any) -> Any:
        if x > 0:
            return x
        return -x

    @tf.function
    def n(x: Any) -> Any:
        return x.numpy()

    eb = _err(lambda: b(tf.constant(1.0)))
    en = _err(lambda: n(tf.constant(1.0)))
    return {"bool": (eb[0], eb[1][:60]), "numpy": (en[0], en[1].strip().splitlines()[-1])}


def jit_compile_and_get_concrete(tf: Any) -> dict[str, Any]:
    calls: list[int] = []

    @tf.function(jit_compile=True)
    def f(x: Any) -> Any:
        calls.append(1)
        return tf.nn.relu(x) * 2.0

    cf = f.get_concrete_function(tf.TensorSpec([3], tf.float32))
    before = len(calls)
    out = f(tf.constant([-1.0, 0.5, 2.0])).numpy().tolist()
    return {"traced_by_gcf": before, "out": out, "calls_after": len(calls),
            "count": f.experimental_get_tracing_count(),
            "cf_out": cf(tf.constant([1.0, -1.0, 3.0])).numpy().tolist()}


def _vals(v: Any) -> Any:
    if isinstance(v, (list, tuple)):
        return [_vals(x) for x in v]
    return None if v is None else np.asarray(v.numpy() if hasattr(v, "numpy") else v)


def while_loop_traced(tf: Any) -> dict[str, Any]:
    """``tf.while_loop`` and AutoGraph ``while``/``for`` loops whose condition depends on
    the function's inputs: one trace runs for every trip count (values, side effects in
    the body on every iteration, Python side effects once per trace, gradients)."""
    res: dict[str, Any] = {}
    traced: list[str] = []

    @tf.function
    def grow(x: Any) -> Any:
        n = tf.constant(0)
        traced.append("grow")
        while tf.reduce_sum(x) < 100.0:  # AutoGraph: a tensor condition
            x = x * 2.0
            n += 1
        return x, n

    res["grow"] = _vals([grow(tf.constant([1.0, 2.0])), grow(tf.constant([30.0, 2.0])),
                         grow(tf.constant([300.0, 2.0]))])
    res["grow_count"] = grow.experimental_get_tracing_count()

    v = tf.Variable(0.0)

    @tf.function
    def accumulate(n: Any) -> Any:
        i = tf.constant(0)
        while i < n:
            v.assign_add(tf.cast(i, tf.float32))  # a side effect of every iteration
            i += 1
        return v.read_value() * 1.0

    res["accumulate"] = _vals([accumulate(tf.constant(4)), accumulate(tf.constant(3))])
    res["accumulate_v"] = float(v.numpy())
    res["accumulate_count"] = accumulate.experimental_get_tracing_count()

    @tf.function
    def capped(x: Any, m: Any) -> Any:
        return tf.while_loop(lambda i, s: s < 1000.0, lambda i, s: (i + 1, s * x), (0, 1.0),
                             maximum_iterations=m, parallel_iterations=4)

    res["capped"] = _vals([capped(tf.constant(2.0), 3), capped(tf.constant(3.0), 30),
                           capped(tf.constant(2.0), 30)])

    @tf.function
    def doubling(x: Any) -> Any:
        return tf.while_loop(lambda s: tf.reduce_sum(s) < 50.0,
                             lambda s: (tf.concat([s, s + 1.0], 0),), [x],
                             shape_invariants=[tf.TensorShape([None])])

    res["doubling"] = _vals([doubling(tf.constant([1.0])), doubling(tf.constant([7.0]))])

    @tf.function
    def nested(n: Any) -> Any:
        i, tot = tf.constant(0), tf.constant(0)
        while i < n:
            j = tf.constant(0)
            while j < i:
                tot += i * j
                j += 1
            i += 1
        return tot

    res["nested"] = _vals([nested(tf.constant(5)), nested(tf.constant(7))])
    res["nested_count"] = nested.experimental_get_tracing_count()

    @tf.function
    def powers(x: Any, n: Any) -> Any:
        ta = tf.TensorArray(tf.float32, size=5, element_shape=[])

        def body(i: Any, ta: Any, s: Any) -> Any:
            s = s * x
            return i + 1, ta.write(i, s), s

        _, ta, _ = tf.while_loop(lambda i, ta, s: i < n, body, (0, ta, tf.constant(1.0)))
        return ta.stack()

    res["powers"] = _vals([powers(tf.constant(2.0), tf.constant(3)),
                           powers(tf.constant(3.0), tf.constant(5))])

    @tf.function
    def orbit(x: Any, n: Any) -> Any:
        _, s = tf.while_loop(lambda i, s: i < n, lambda i, s: (i + 1, s * x + tf.sin(s)),
                             (0, x))
        return s

    w = tf.Variable(0.7)
    grads = []
    for n in (3, 5, 0):
        with tf.GradientTape() as tape:
            r = orbit(w, tf.constant(n))
        grads.append([r, tape.gradient(r, w)])
    c = tf.constant(0.3)
    with tf.GradientTape() as t2:
        t2.watch(c)
        with tf.GradientTape() as t1:
            t1.watch(c)
            r = orbit(c, tf.constant(4))
        g = t1.gradient(r, c)
    grads.append([r, g, t2.gradient(g, c)])
    res["orbit_grads"] = _vals(grads)
    res["orbit_count"] = orbit.experimental_get_tracing_count()

    @tf.function
    def inner(x: Any, n: Any) -> Any:
        with tf.GradientTape() as tape:
            tape.watch(x)
            _, s = tf.while_loop(lambda i, s: i < n, lambda i, s: (i + 1, s * x + tf.sin(s)),
                                 (0, x))
        return s, tape.gradient(s, x)

    res["inner"] = _vals([inner(tf.constant(0.7), tf.constant(3)),
                          inner(tf.constant(0.7), tf.constant(5))])
    c = tf.constant(0.7)
    with tf.GradientTape() as tape:  # a tape outside differentiates the inner gradient
        tape.watch(c)
        s, g = inner(c, tf.constant(4))
    res["inner_second"] = _vals([s, g, tape.gradient(g, c)])

    w_rnn = tf.Variable([[0.5, -0.2], [0.1, 0.3]])

    @tf.function
    def rnn(xs: Any) -> Any:
        with tf.GradientTape() as tape:
            h = tf.zeros([1, 2])
            for i in tf.range(tf.shape(xs)[0]):  # the Variable read in the body: a capture
                h = tf.tanh(tf.matmul(h, w_rnn) + xs[i])
            loss = tf.reduce_sum(h * h)
        return loss, tape.gradient(loss, w_rnn)

    res["rnn"] = _vals([rnn(tf.reshape(tf.range(2 * n, dtype=tf.float32) / 10.0, [n, 1, 2]))
                        for n in (3, 5)])
    res["rnn_count"] = rnn.experimental_get_tracing_count()

    @tf.function
    def empty_first(x: Any, n: Any) -> Any:
        _, s = tf.while_loop(lambda i, s: i < n, lambda i, s: (i + 1, s + x),
                             (0, tf.zeros_like(x)))
        return s

    res["empty_first"] = _vals([empty_first(tf.constant([1.0, 2.0]), tf.constant(0)),
                                empty_first(tf.constant([1.0, 2.0]), tf.constant(3))])

    @tf.function
    def in_branch(x: Any) -> Any:
        if x > 0:  # the loop would never end for x <= 0: it runs only when taken
            y = tf.while_loop(lambda s: s < 100.0, lambda s: (s * 3.0,), [x])[0]
        else:
            y = -x
        return y

    res["in_branch"] = _vals([in_branch(tf.constant(-2.0)), in_branch(tf.constant(2.0)),
                              in_branch(tf.constant(5.0))])

    u = tf.Variable([1.0, 2.0])

    @tf.function
    def ranged(x: Any, n: Any) -> Any:
        s = tf.zeros([2])
        for i in tf.range(n):  # a traced bound: one trace for every n
            s = s + u * x * tf.cast(i, tf.float32)
        return tf.reduce_sum(s)

    out = []
    for n in (4, 2):
        with tf.GradientTape() as tape:
            r = ranged(tf.constant(2.0), tf.constant(n))
        out.append([r, tape.gradient(r, u)])
    res["ranged"] = _vals(out)
    res["ranged_count"] = ranged.experimental_get_tracing_count()

    @tf.function
    def steps(n: Any) -> Any:
        traced.append("steps")
        return tf.while_loop(lambda i: i < n, lambda i: (i + 2,), (0,))

    cf = steps.get_concrete_function(tf.TensorSpec([], tf.int32))
    res["concrete"] = _vals([cf(tf.constant(7))[0], steps(tf.constant(4))[0]])
    res["traced"] = list(traced)
    return res


def loop_body_python_once(tf: Any) -> dict[str, Any]:
    """A loop body's Python (list appends, a counter) runs once per trace, as TensorFlow
    traces ``tf.while_loop``'s condition and body once: with ``tf.while_loop``, AutoGraph
    ``while`` and ``for ... in tf.range``; a value baked from a capture is still one
    program; a body with a side effect that takes a loop counter's value as a shape gives
    TensorFlow's values (tapegrad runs that signature eagerly)."""
    res: dict[str, Any] = {}
    seen: list[int] = []
    ticks = {"cond": 0, "body": 0}

    @tf.function
    def summed(n: Any) -> Any:
        def cond(i: Any, s: Any) -> Any:
            ticks["cond"] += 1
            return i < n

        def body(i: Any, s: Any) -> Any:
            seen.append(1)
            ticks["body"] += 1
            return i + 1, s + tf.cast(i, tf.float32)

        return tf.while_loop(cond, body, (tf.constant(0), tf.constant(0.0)))[1]

    res["summed"] = _vals([summed(tf.constant(4)), summed(tf.constant(6)),
                           summed(tf.constant(0))])
    res["summed_python"] = [len(seen), ticks["cond"], ticks["body"]]

    squares: list[int] = []

    @tf.function
    def squared(n: Any) -> Any:
        s, i = tf.constant(0.0), tf.constant(0)
        while i < n:  # AutoGraph
            squares.append(1)
            s += tf.cast(i * i, tf.float32)
            i += 1
        return s

    res["squared"] = _vals([squared(tf.constant(3)), squared(tf.constant(5))])
    res["squared_python"] = len(squares)

    rows: list[int] = []

    @tf.function
    def row_sum(xs: Any) -> Any:
        s = tf.zeros([2])
        for i in tf.range(tf.shape(xs)[0]):  # AutoGraph over tf.range
            rows.append(1)
            s += xs[i]
        return s

    res["row_sum"] = _vals([row_sum(tf.ones([3, 2])), row_sum(tf.ones([3, 2]) * 2.0),
                            row_sum(tf.ones([4, 2]))])
    res["row_sum_python"] = [len(rows), row_sum.experimental_get_tracing_count()]

    const_seen: list[int] = []

    @tf.function
    def fixed(n: Any) -> Any:
        three = tf.constant(3)  # not a loop variable: its value may be used as a shape
        i, s = tf.constant(0), tf.constant(0.0)
        while i < n:
            const_seen.append(1)
            s += tf.reduce_sum(tf.ones(tf.reshape(three, [1])))
            i += 1
        return s

    res["fixed"] = _vals([fixed(tf.constant(2)), fixed(tf.constant(4))])
    res["fixed_python"] = len(const_seen)

    v = tf.Variable(0.0)

    @tf.function
    def counted(n: Any) -> Any:
        i, s = tf.constant(1), tf.constant(0.0)
        while i < n:
            v.assign_add(1.0)  # a side effect on every iteration
            s += tf.reduce_sum(tf.ones(tf.reshape(i, [1])))  # a shape from the counter
            i += 1
        return s

    res["counted"] = _vals([counted(tf.constant(3)), counted(tf.constant(5))])
    res["counted_v"] = float(v.numpy())
    return res


def value_ops_traced(tf: Any) -> dict[str, Any]:
    """``tf.where`` on a traced condition, in a function and in a loop body: the condition
    is an input of the program (each call selects by its own values), with gradients;
    ``argmax``/``argmin``/``reduce_any``/``reduce_all`` of a traced tensor are ops of the
    program, not constants of the first call."""
    res: dict[str, Any] = {}

    @tf.function
    def mag(x: Any) -> Any:
        return tf.where(x > 0.0, x, -x)

    res["mag"] = _vals([mag(tf.constant([1.0, -2.0])), mag(tf.constant([-1.0, 2.0]))])
    x = tf.Variable([1.0, -2.0])
    with tf.GradientTape() as tape:
        y = tf.reduce_sum(mag(x) * tf.constant([3.0, 5.0]))
    res["mag_grad"] = _vals(tape.gradient(y, x))

    @tf.function
    def doubled(x: Any, n: Any) -> Any:
        i = tf.constant(0)
        while i < n:
            x = tf.where(x > 3.0, x, x * 2.0)  # the condition changes every iteration
            i += 1
        return x

    res["doubled"] = _vals([doubled(tf.constant([1.0, 2.0]), tf.constant(k)) for k in (1, 3)])
    res["doubled_count"] = doubled.experimental_get_tracing_count()

    @tf.function
    def picks(x: Any) -> Any:  # ops whose result is not a float: part of the program too
        return (tf.argmax(x), tf.argmin(x, output_type=tf.int32), tf.reduce_any(x > 2.0),
                tf.reduce_all(x > 0.0, axis=0, keepdims=True))

    res["picks"] = _vals([picks(tf.constant(v)) for v in ([1.0, 3.0, 2.0], [5.0, -1.0, 0.0])])
    res["picks_count"] = picks.experimental_get_tracing_count()
    return res


def retracing_policy(tf: Any) -> dict[str, Any]:
    """TensorFlow's retracing over a sequence of shapes: by default every new shape traces;
    ``reduce_retracing=True`` traces the second shape as ``None`` dimensions (later shapes
    of that rank reuse it) and a new rank as unknown; ``input_signature`` with ``None``
    runs one trace for every size.  ``print`` shows what each counted trace saw."""
    res: dict[str, Any] = {}
    seq = [[1], [2], [3], [4], [2, 2], [3, 3], [3, 4], [5], [1], [1, 1, 1], [2]]
    for relax in (False, True):
        @tf.function(reduce_retracing=relax)
        def f(x: Any) -> Any:
            print("trace", x.shape)
            return tf.reduce_sum(x) * 2.0 + tf.cast(tf.shape(x)[0], tf.float32)

        counts, vals = [], []
        with captured() as (out, _):
            for sh in seq:
                vals.append(float(f(tf.ones(sh))))
                counts.append(f.experimental_get_tracing_count())
        key = "relaxed" if relax else "default"
        res[key] = {"counts": counts, "values": vals, "printed": out.getvalue(),
                    "signatures": f.pretty_printed_concrete_signatures(),
                    "short": f.pretty_printed_concrete_signatures(verbose=False)}

    @tf.function(input_signature=[tf.TensorSpec([None, 2], tf.float32)])
    def g(x: Any) -> Any:
        print("trace g", x.shape)
        n = tf.shape(x)[0]
        return tf.reduce_mean(x, axis=0) * tf.cast(n, tf.float32), tf.range(n)

    outs = []
    with captured() as (out, _):
        for n in (1, 3, 2, 6):
            a, b = g(tf.reshape(tf.range(2 * n, dtype=tf.float32), [n, 2]))
            outs.append([a.numpy().tolist(), b.numpy().tolist()])
    res["signature"] = {"values": outs, "count": g.experimental_get_tracing_count(),
                        "printed": out.getvalue(),
                        "signatures": g.pretty_printed_concrete_signatures()}

    @tf.function(input_signature=[tf.TensorSpec([None], tf.float32)])
    def h(x: Any) -> Any:  # a value read from the shape (tf.eye's size) holds per size
        return tf.eye(tf.shape(x)[0]) * x

    res["eye"] = [h(tf.ones([n])).numpy().tolist() for n in (2, 3, 1, 3)]
    res["eye_count"] = h.experimental_get_tracing_count()
    return res


def index_values_traced(tf: Any) -> dict[str, Any]:
    """``tf.gather`` with traced indices (a function argument, a stack of a loop counter),
    ``tf.fill`` of a traced value and ``tf.tensor_scatter_nd_update`` at traced indices:
    each call (and each loop iteration) uses its own values, with gradients; one trace."""
    res: dict[str, Any] = {}
    x = tf.constant([10.0, 20.0, 30.0])

    @tf.function
    def pick(x: Any, i: Any) -> Any:
        return tf.gather(x, i)

    res["pick"] = _vals([pick(x, tf.constant([0])), pick(x, tf.constant([2, 1]))])
    res["pick_count"] = pick.experimental_get_tracing_count()

    @tf.function
    def pair(x: Any, i: Any) -> Any:
        return tf.gather(x, tf.stack([i, i + 1]))

    res["pair"] = _vals([pair(x, tf.constant(0)), pair(x, tf.constant(1))])

    @tf.function
    def filled(v: Any) -> Any:
        return tf.fill([2], v)

    res["filled"] = _vals([filled(tf.constant(1.5)), filled(tf.constant(-4.0))])

    @tf.function
    def put(t: Any, idx: Any, u: Any) -> Any:
        return tf.tensor_scatter_nd_update(t, idx, u)

    z = tf.zeros([4])
    res["put"] = _vals([put(z, tf.constant([[1]]), tf.constant([5.0])),
                        put(z, tf.constant([[3], [0]]), tf.constant([7.0, 8.0]))])

    @tf.function
    def windows(xs: Any) -> Any:
        i = tf.constant(0)
        acc = tf.constant(0.0)
        while i < 2:
            acc += tf.reduce_sum(tf.gather(xs, tf.stack([i, i + 1])))
            i += 1
        return acc

    res["windows"] = _vals([windows(tf.constant([1.0, 2.0, 4.0])),
                            windows(tf.constant([10.0, 20.0, 40.0]))])
    v = tf.Variable([1.0, 2.0, 3.0])

    @tf.function
    def grad_of_pick(i: Any) -> Any:
        with tf.GradientTape() as tape:
            y = tf.reduce_sum(tf.gather(v, i) ** 2)
        return tape.gradient(y, v)

    res["grad"] = _vals([tf.convert_to_tensor(grad_of_pick(tf.constant([0, 0]))),
                         tf.convert_to_tensor(grad_of_pick(tf.constant([2])))])
    return res


def static_reads_traced(tf: Any) -> dict[str, Any]:
    """Functions whose arguments tapegrad's front-end once read as Python values (and so
    froze at the first call): ``tf.one_hot``'s, ``tf.gather_nd``'s and the scatter ops'
    indices, ``tf.boolean_mask``'s mask, one-argument ``tf.where``, ``tf.sort``.  Each call
    uses its own values, gradients included."""
    import warnings

    res: dict[str, Any] = {}
    cases: dict[str, Any] = {
        "one_hot": (lambda i: tf.one_hot(i, 3), [tf.constant([0, 1]), tf.constant([2, -1])]),
        "one_hot_axis": (lambda i: tf.one_hot(i, 3, on_value=5.0, off_value=-1.0, axis=0),
                         [tf.constant([0, 1]), tf.constant([2, 2])]),
        "gather_nd": (lambda i: tf.gather_nd(tf.constant([[1.0, 2.0], [3.0, 4.0]]), i),
                      [tf.constant([[0, 1]]), tf.constant([[1, 0], [1, 1]])]),
        "scatter_add": (lambda i: tf.tensor_scatter_nd_add(tf.ones([3]), i,
                                                           tf.constant([5.0, 1.0])),
                        [tf.constant([[0], [0]]), tf.constant([[2], [1]])]),
        "scatter_sub": (lambda i: tf.tensor_scatter_nd_sub(tf.ones([3]), i,
                                                           tf.constant([5.0, 1.0])),
                        [tf.constant([[0], [1]]), tf.constant([[2], [2]])]),
        "boolean_mask": (lambda m: tf.boolean_mask(tf.constant([1.0, 2.0, 3.0]), m),
                         [tf.constant([True, False, True]), tf.constant([False, True, True])]),
        "where1": (lambda c: tf.where(c), [tf.constant([True, False, True]),
                                           tf.constant([False, True, False])]),
        "sort": (lambda x: tf.sort(x), [tf.constant([3.0, 1.0, 2.0]),
                                        tf.constant([1.0, 3.0, 0.0])]),
    }
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # tapegrad: "runs eagerly"
        for name, (fn, inputs) in cases.items():
            f = tf.function(fn)
            res[name] = _vals([f(a) for a in inputs])
        w = tf.Variable([[1.0, 2.0], [3.0, 4.0]])

        @tf.function
        def grad_nd(i: Any) -> Any:
            with tf.GradientTape() as tape:
                y = tf.reduce_sum(tf.gather_nd(w, i) * tf.constant([1.0, 10.0]))
            return tape.gradient(y, w)

        res["grad_nd"] = _vals([tf.convert_to_tensor(grad_nd(tf.constant([[0, 0], [1, 1]]))),
                                tf.convert_to_tensor(grad_nd(tf.constant([[1, 0], [1, 0]])))])
        res["grad_nd_count"] = grad_nd.experimental_get_tracing_count()

        @tf.function
        def loss(logits: Any, labels: Any) -> Any:
            return tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits(
                tf.one_hot(labels, 3), logits))

        lg = tf.constant([[1.0, 2.0, 0.5], [0.1, 0.2, 3.0]])
        res["ce"] = _vals([loss(lg, tf.constant([0, 2])), loss(lg, tf.constant([1, 1]))])
        res["ce_count"] = loss.experimental_get_tracing_count()
    return res


def metrics_in_train_step(tf: Any) -> dict[str, Any]:
    """Keras's "training loop from scratch": metrics updated inside a ``tf.function`` step,
    results read inside and outside it, reset between epochs, a loss with integer labels."""
    import warnings

    rng = np.random.default_rng(4)
    tf.keras.utils.set_random_seed(4)
    model = tf.keras.Sequential([tf.keras.layers.Dense(3)])
    model.build((None, 5))
    opt = tf.keras.optimizers.SGD(0.1)
    loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    acc = tf.keras.metrics.SparseCategoricalAccuracy()
    mean = tf.keras.metrics.Mean()
    prec = tf.keras.metrics.Precision()
    auc = tf.keras.metrics.AUC(num_thresholds=20)

    @tf.function
    def step(x: Any, y: Any) -> Any:
        with tf.GradientTape() as tape:
            logits = model(x, training=True)
            loss = loss_fn(y, logits)
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        acc.update_state(y, logits)
        mean.update_state(loss)
        p = tf.nn.softmax(logits)[:, 0]
        t = tf.cast(tf.equal(y, 0), tf.float32)
        prec.update_state(t, p)
        auc.update_state(t, p)
        return loss, acc.result()

    res: dict[str, Any] = {"steps": [], "epochs": []}
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)  # one program (no eager fallback)
        for _ in range(2):
            for _ in range(3):
                x = tf.constant(rng.normal(size=(8, 5)).astype(np.float32))
                y = tf.constant(rng.integers(0, 3, 8).astype(np.int32))
                res["steps"].append(_vals(step(x, y)))
            res["epochs"].append([float(m.result()) for m in (acc, mean, prec, auc)])
            for m in (acc, mean, prec, auc):
                m.reset_state()
    res["count"] = step.experimental_get_tracing_count()
    res["w"] = model.trainable_variables[0].numpy()
    return res


def concrete_function_binding(tf: Any) -> dict[str, Any]:
    """A concrete function binds its call to the structured signature (Python values as
    literals), falls back to the flat one (tensors only) and names both reasons."""

    @tf.function
    def double(a: Any) -> Any:
        return a + a

    @tf.function
    def pw(a: Any, b: Any) -> Any:
        return a ** b

    @tf.function
    def f(a: Any, b: Any, c: Any = 3) -> Any:
        return a[0] + a[1] * b + c

    d = double.get_concrete_function(tf.constant(2, dtype=tf.int64))
    sq = pw.get_concrete_function(a=tf.TensorSpec(None, tf.float32), b=2)
    cf = f.get_concrete_function((tf.TensorSpec([], tf.float32), tf.TensorSpec([], tf.float32)),
                                 tf.TensorSpec([2], tf.float32), 3)
    x = tf.constant(10.0)
    pair = (tf.constant(1.0), tf.constant(2.0))
    v = tf.constant([1.0, 2.0])

    def val(r: Any) -> Any:
        return np.asarray(r).tolist()

    return {
        "kw": val(d(a=tf.constant(3, dtype=tf.int64))),
        "python_int": val(d(3)),
        "str": str(d), "repr": repr(d).split(" at 0x")[0],
        "sig": repr(cf.structured_input_signature),
        "square": [val(sq(x)), val(sq(tf.constant([10.0, 3.0]))),
                   val(sq(a=tf.constant([10.0, 3.0])))],
        "nested": [val(cf(pair, v, 3)), val(cf((1.0, 2.0), [1.0, 2.0], 3)),
                   val(cf(pair[0], pair[1], v))],
        "errors": [_err(lambda: sq(x, b=3)), _err(lambda: sq(x, 3)),
                   _err(lambda: d(tf.constant(1, tf.int64), tf.constant(1, tf.int64))),
                   _err(lambda: d()), _err(lambda: cf(pair, v)),
                   _err(lambda: cf(pair, v, 3, d=3))],
        "dtype": _err(lambda: d(tf.constant(1.5)))[0],
        "count": [double.experimental_get_tracing_count(), pw.experimental_get_tracing_count()],
    }


def outputs_and_leaks(tf: Any) -> dict[str, Any]:
    """What a call returns (every leaf but None a tensor, a Variable read at the end) and
    what is left of the trace's own tensors (symbolic: no value)."""
    v = tf.Variable(1.0)
    n = tf.Variable(0)

    @tf.function
    def outs(x: Any) -> Any:
        return {"v": v, "b": [v.assign(5.0), 2, 2.5, True, None], "x": (x, np.float64(1.5))}

    @tf.function
    def step() -> Any:
        return n.assign_add(1)

    leaked: list[Any] = []

    @tf.function
    def leaky(a: Any) -> Any:
        leaked.append(a + 1)
        return a + 2

    @tf.function
    def leaky2(a: Any) -> Any:
        leaked.append(a + 1)
        return leaked[-1]

    @tf.function(reduce_retracing=True)
    def same(x: Any) -> Any:
        return x, x * 2

    @tf.function
    def sizes(k: Any) -> Any:
        z = tf.zeros([k + 1, 2])  # a size from a traced value
        z.set_shape([None, 2])
        return tf.reduce_sum(z + 1.0)

    def kinds(r: Any) -> list[str]:
        return [type(t).__name__ for t in tf.nest.flatten(r)]

    r = outs(tf.constant(1.0))
    r2 = outs(tf.constant(1.0))
    res: dict[str, Any] = {
        "kinds": [kinds(r) == kinds(r2), [t is None for t in tf.nest.flatten(r)]],
        "values": [np.asarray(t).tolist() for t in tf.nest.flatten(r2) if t is not None],
        "dtypes": [t.dtype.name for t in tf.nest.flatten(r2) if t is not None],
        "variable_out": [isinstance(t, tf.Variable) for t in tf.nest.flatten(r)],
        "step": [repr(step()), repr(step())],
        "leaky": int(leaky(tf.constant(1))),
        "leaky2": int(leaky2(tf.constant(1))),
    }
    res["leak_numpy"] = [_err(lambda: leaked[0].numpy()), _err(lambda: leaked[1].numpy())]

    @tf.function
    def uses_leaked(b: Any) -> Any:
        return b + leaked[0]

    kind, msg = _err(lambda: uses_leaked(tf.constant(2)))
    res["leak_use"] = [kind, msg.splitlines()[0]]
    same(tf.ones([2]))
    a, b = same(tf.ones([3]))
    res["shapes"] = [a.shape.as_list(), b.shape.as_list()]
    res["sizes"] = [float(sizes(tf.constant(2))), float(sizes(tf.constant(4)))]
    return res


def loops_that_grow(tf: Any) -> dict[str, Any]:
    """Loops whose state TensorFlow keeps symbolic and tapegrad cannot hold in one fixed-
    shape program (an inner range of the outer counter's length, a TensorArray that grows
    or has no element shape yet): the values of every call are TensorFlow's."""

    @tf.function
    def nested(n: Any) -> Any:
        s = tf.constant(0)
        for i in tf.range(n):
            for j in tf.range(i):
                s += j
        return s

    @tf.function
    def squares(n: Any) -> Any:
        ta = tf.TensorArray(tf.float32, size=0, dynamic_size=True)
        for i in tf.range(n):
            ta = ta.write(i, tf.cast(i, tf.float32) ** 2)
        return ta.stack()

    @tf.function
    def halve(x: Any) -> Any:
        ta = tf.TensorArray(tf.float32, size=0, dynamic_size=True)
        i = 0
        while tf.reduce_sum(x) > 1.0:
            x = x / 2.0
            ta = ta.write(i, tf.reduce_sum(x))
            i += 1
        return ta.stack(), i

    class RNN(tf.Module):  # the guide's "Accumulating values in a loop"
        def __init__(self) -> None:
            self.w = tf.Variable([[0.5, -0.2], [0.1, 0.3]])

        def cell(self, x: Any, state: Any) -> Any:
            out = tf.nn.relu(tf.matmul(x, self.w) + state)
            return out, out

        @tf.function
        def __call__(self, data: Any) -> Any:
            state = tf.zeros([tf.shape(data)[0], 2])
            data = tf.transpose(data, [1, 0, 2])
            states = tf.TensorArray(tf.float32, size=data.shape[0])
            for i in tf.range(data.shape[0]):
                out, state = self.cell(data[i], state)
                states = states.write(i, out)
            return tf.transpose(states.stack(), [1, 0, 2])

    v = tf.Variable(2.0)

    @tf.function
    def grad_ta(x: Any) -> Any:
        with tf.GradientTape() as t:
            ta = tf.TensorArray(tf.float32, size=0, dynamic_size=True)
            for i in tf.range(3):
                ta = ta.write(i, v * x * tf.cast(i, tf.float32))
            y = tf.reduce_sum(ta.stack())
        return t.gradient(y, v)

    @tf.function
    def last_of(n: Any) -> Any:
        for i in tf.range(n):
            x = i * 3  # first set in the loop, used after it
        return x

    r = RNN()
    data = tf.reshape(tf.range(12, dtype=tf.float32) / 10.0, [2, 3, 2])
    return {
        "nested": [int(nested(tf.constant(5))), int(nested(tf.constant(4)))],
        "squares": [squares(tf.constant(4)).numpy().tolist(),
                    squares(tf.constant(2)).numpy().tolist()],
        "halve": [[np.asarray(t).tolist() for t in halve(tf.constant(x))]
                  for x in ([3.0, 5.0], [3.0, 1.0])],
        "rnn": [r(data).numpy().tolist(), r(data * 2.0).numpy().tolist()],
        "grad": [float(grad_ta(tf.constant(1.5))), float(grad_ta(tf.constant(2.0)))],
        "defined_in_loop": [int(last_of(tf.constant(3))), int(last_of(tf.constant(5)))],
    }


def nested_functions(tf: Any) -> dict[str, Any]:
    """A tf.function called by another is traced once per signature (its Python print
    shows once), and a later call of it with that signature traces nothing new."""

    @tf.function
    def inner(a: Any) -> Any:
        print("trace inner", a.dtype.name)
        return a * 2

    @tf.function
    def outer(a: Any) -> Any:
        print("trace outer")
        return inner(a) + inner(a + 1) + tf.cast(inner(tf.cast(a, tf.float32)), tf.int32)

    with captured() as (out, _):
        vals = [int(outer(tf.constant(1))), int(outer(tf.constant(2)))]
        counts = [inner.experimental_get_tracing_count(), outer.experimental_get_tracing_count()]
        vals.append(int(inner(tf.constant(5))))
        counts.append(inner.experimental_get_tracing_count())
        vals.append(inner(tf.constant([5.0])).numpy().tolist())
        counts.append(inner.experimental_get_tracing_count())
    return {"values": vals, "counts": counts, "stdout": out.getvalue()}


def python_literals(tf: Any) -> dict[str, Any]:
    """Python numbers match by value (1, 1.0 and True are one signature, the first call's
    trace serves the others); NumPy scalars and arrays are tensors (by shape and dtype)."""
    seen: list[str] = []

    @tf.function
    def f(x: Any, flag: Any = None) -> Any:
        seen.append(f"{type(x).__name__ if not hasattr(x, 'dtype') else x.dtype.name} {flag}")
        if flag:
            return x + 1
        return x - 1

    vals = [f(1.0), f(1.0), f(2.0), f(1), f(True), f(tf.constant(1.0), flag=True),
            f(tf.constant(1.0), True), f(tf.constant(1.0), flag=1), f(tf.constant(1.0), 1.0),
            f(np.float32(1.0)), f(np.float32(5.0)), f(np.array([1.0, 2.0])),
            f(np.array([3.0, 4.0]))]
    return {"values": [np.asarray(v).tolist() for v in vals],
            "dtypes": [v.dtype.name for v in vals], "traced": seen,
            "count": f.experimental_get_tracing_count()}


def python_calls_inside(tf: Any) -> dict[str, Any]:
    """tf.py_function / tf.numpy_function and a tf.custom_gradient function (or any
    functools.wraps decorator) called inside tf.function."""
    import functools

    @tf.function
    def pyf(x: Any) -> Any:
        y = tf.py_function(lambda a: a.numpy() * 3, [x], tf.float32)
        z = tf.numpy_function(lambda a: (a + 1).astype(np.float32), [x], tf.float32)
        return y + z

    @tf.custom_gradient
    def clip_grad(x: Any) -> Any:
        def grad(dy: Any) -> Any:
            return tf.clip_by_value(dy, -0.5, 0.5)
        return x * 3, grad

    @tf.function
    def cg(x: Any) -> Any:
        with tf.GradientTape() as t:
            t.watch(x)
            y = clip_grad(x)
        return t.gradient(y, x)

    calls: list[int] = []

    def counted(fn: Any) -> Any:
        @functools.wraps(fn)
        def wrapper(*a: Any) -> Any:
            calls.append(1)
            return fn(*a) + 100
        return wrapper

    @counted
    def sq(x: Any) -> Any:
        if x > 0:  # AutoGraph converts the wrapped function too
            return x * x
        return -x

    @tf.function
    def uses(x: Any) -> Any:
        return sq(x)

    x = tf.constant([1.0, 2.0])
    with tf.GradientTape() as t:
        t.watch(x)
        eager = tf.reduce_sum(tf.py_function(lambda a: a ** 2, [x], tf.float32))
    return {
        "pyf": [pyf(x).numpy().tolist(), pyf(tf.constant([3.0, 4.0])).numpy().tolist()],
        "outs": [[np.asarray(t).tolist() for t in tf.py_function(
            lambda a, b: (a, b + 1), [x, 2], [tf.float32, tf.int32])],
            tf.py_function(lambda a: None, [x], []),
            tf.py_function(lambda a: 3, [x], tf.float32).dtype.name],
        "eager_grad": t.gradient(eager, x).numpy().tolist(),
        "custom": cg(x).numpy().tolist(),
        "wrapped": [float(uses(tf.constant(3.0))), float(uses(tf.constant(-2.0))),
                    len(calls) > 0],
    }


def signature_converts_python_values(tf: Any) -> dict[str, Any]:
    """Python values passed for an input_signature's TensorSpec take its dtype."""

    @tf.function(input_signature=[tf.TensorSpec([None], tf.float32)])
    def f(x: Any) -> Any:
        return x * 2

    @tf.function(input_signature=[tf.TensorSpec([], tf.int32)])
    def g(x: Any) -> Any:
        return x * 2

    def run(fn: Any, v: Any) -> Any:
        try:
            r = fn(v)
        except TypeError as e:
            return ["TypeError", str(e).split("`")[1]]
        return [np.asarray(r).tolist(), r.dtype.name]

    return {"f": [run(f, v) for v in ([1, 2], [1.5, 2.5], (3, 4), [True, False])],
            "g": [run(g, v) for v in (3, 3.0, 3.5, True, [1.5])],
            "count": [f.experimental_get_tracing_count(), g.experimental_get_tracing_count()]}


def random_inside(tf: Any) -> dict[str, Any]:
    """A tf.random.Generator draws new numbers at every call of a tf.function; a stateless
    op's traced seed picks its draws at every call."""
    g = tf.random.Generator.from_seed(7)

    @tf.function
    def gen() -> Any:
        return g.normal([2])

    @tf.function
    def stateless(seed: Any) -> Any:
        return tf.random.stateless_uniform([2], seed=seed)

    return {"gen": [gen().numpy().tolist() for _ in range(3)],
            "state": g.state.numpy().tolist(),
            "stateless": [stateless(tf.constant([1, s])).numpy().tolist() for s in (2, 3, 2)]}


def integer_reductions(tf: Any) -> dict[str, Any]:
    """Integer reductions inside tf.function reduce every call's values."""

    @tf.function
    def f(x: Any) -> Any:
        return (tf.reduce_sum(x), tf.reduce_mean(x), tf.reduce_max(x), tf.reduce_min(x),
                tf.reduce_prod(x), tf.reduce_sum(x, axis=0, keepdims=True),
                tf.reduce_mean(x, axis=1), tf.reduce_sum(tf.range(x[0, 0])))

    xs = [tf.constant([[1, 5, 2], [4, 1, 3]]), tf.constant([[7, 1, 1], [2, 9, 8]])]
    return {"values": [[np.asarray(t).tolist() for t in f(x)] for x in xs + xs[:1]],
            "count": f.experimental_get_tracing_count()}


SCENARIOS: dict[str, Callable[[Any], dict[str, Any]]] = {
    "metrics_in_train_step": metrics_in_train_step,
    "static_reads_traced": static_reads_traced,
    "counts_and_side_effects": counts_and_side_effects,
    "python_print_is_symbolic": python_print_is_symbolic,
    "reduce_retracing": reduce_retracing,
    "input_signature": input_signature,
    "variables_created_once": variables_created_once,
    "assign_and_print_every_call": assign_and_print_every_call,
    "train_step_gradients": train_step_gradients,
    "tape_outside": tape_outside,
    "graph_mode_errors": graph_mode_errors,
    "jit_compile_and_get_concrete": jit_compile_and_get_concrete,
    "while_loop_traced": while_loop_traced,
    "loop_body_python_once": loop_body_python_once,
    "value_ops_traced": value_ops_traced,
    "index_values_traced": index_values_traced,
    "retracing_policy": retracing_policy,
    "concrete_function_binding": concrete_function_binding,
    "outputs_and_leaks": outputs_and_leaks,
    "loops_that_grow": loops_that_grow,
    "nested_functions": nested_functions,
    "python_literals": python_literals,
    "python_calls_inside": python_calls_inside,
    "signature_converts_python_values": signature_converts_python_values,
    "random_inside": random_inside,
    "integer_reductions": integer_reductions,
}
