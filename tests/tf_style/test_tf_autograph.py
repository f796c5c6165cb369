"""``tf.autograph``: the converter behaves like the function eagerly, turns tensor conditions
into ``cond``/``while_loop`` (a stub tracing level sees them, and does not see Python ones),
and raises TensorFlow's errors."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import tapegrad.tf as tf
from tests.tf_style.control_stub import StubTrace, SymbolicStub

c = tf.constant


def f_if(x: Any) -> Any:
    if x > 0:
        y = x * 2.0
    else:
        y = -x
    return y


def f_elif(x: Any) -> Any:
    if x > 2:
        y = x * 1.0
    elif x > 1:
        y = x * 2.0
    else:
        y = x * 3.0
    return y


def f_return_in_if(x: Any) -> Any:
    if x > 0:
        return x * 2.0
    return x * 3.0


def f_while(x: Any) -> Any:
    n = c(0)
    while x < 100.0:
        x = x * 2.0
        n += 1
    return x, n


def f_for_range(n: Any) -> Any:
    s = c(0)
    for i in tf.range(n):
        s += i * i
    return s


def f_for_tensor(x: Any) -> Any:
    total = c(0.0)
    for row in x:
        total += tf.reduce_sum(row) * 2.0
    return total


def f_break_continue(x: Any) -> Any:
    s = c(0.0)
    for i in tf.range(20):
        v = tf.cast(i, tf.float32)
        if v % 2.0 == 0.0:
            continue
        if s > x:
            break
        s += v
    return s


def f_logic(x: Any) -> Any:
    if x > 0 and x < 3 or not x > -5:
        return x * 10.0
    return x * 2.0 if x > -2 else x * 4.0


def _helper(y: Any) -> Any:
    if y > 0:
        return y * 10.0
    return y


def f_calls(x: Any) -> Any:
    return _helper(x) + 1.0


def f_nested_def(x: Any) -> Any:
    def g(y: Any) -> Any:
        while y < 5.0:
            y = y + 1.5
        return y

    return g(x) * 2.0


def f_python_control(x: Any, flag: bool, k: int) -> Any:
    if flag:
        x = x + 1.0
    for _ in range(k):
        x = x * 2.0
    return x


CASES = [
    (f_if, [(c(1.5),), (c(-2.0),)]),
    (f_elif, [(c(3.0),), (c(1.5),), (c(0.5),)]),
    (f_return_in_if, [(c(1.0),), (c(-1.0),)]),
    (f_while, [(c(3.0),), (c(300.0),)]),
    (f_for_range, [(c(5),), (c(0),)]),
    (f_for_tensor, [(c([[1.0, 2.0], [3.0, 4.0]]),)]),
    (f_break_continue, [(c(5.0),), (c(100.0),)]),
    (f_logic, [(c(1.0),), (c(-1.0),), (c(-3.0),), (c(-7.0),), (c(5.0),)]),
    (f_calls, [(c(2.0),), (c(-2.0),)]),
    (f_nested_def, [(c(1.0),), (c(7.0),)]),
    (f_python_control, [(c(1.0), True, 3), (c(1.0), False, 0)]),
]


def _values(x: Any) -> Any:
    if isinstance(x, (tuple, list)):
        return [_values(v) for v in x]
    return np.asarray(x.numpy() if hasattr(x, "numpy") else x).tolist()


@pytest.mark.parametrize("fn, inputs", CASES, ids=[f.__name__ for f, _ in CASES])
def test_converted_function_behaves_like_the_function(fn: Any, inputs: Any) -> None:
    g = tf.autograph.to_graph(fn)
    assert g is not fn and g.__name__ == fn.__name__
    for args in inputs:
        assert _values(g(*args)) == _values(fn(*args))
        with StubTrace():  # as a tracer would run it: every branch traced
            assert _values(g(*args)) == _values(fn(*args))
        with SymbolicStub() as lv:  # symbolic inputs: nothing may read a tensor's value
            sym = [lv.trace(a) if tf.is_tensor(a) else a for a in args]
            out = _nest_map(lv.value, g(*sym))
        assert _values(out) == _values(fn(*args))


def _nest_map(f: Any, x: Any) -> Any:
    if isinstance(x, (tuple, list)):
        return type(x)(_nest_map(f, v) for v in x)
    return f(x)


def test_the_hook_sees_tensor_conditions_and_not_python_ones() -> None:
    g = tf.autograph.to_graph(f_python_control)
    with StubTrace() as tr:
        g(c(1.0), True, 3)
    assert tr.calls == []
    for fn, args, kinds in [(f_if, (c(1.0),), ["cond"]), (f_while, (c(1.0),), ["while_loop"]),
                            (f_for_range, (c(3),), ["while_loop"]),
                            (f_break_continue, (c(5.0),), ["while_loop"])]:
        with StubTrace() as tr:
            tf.autograph.to_graph(fn)(*args)
        assert tr.kinds()[:1] == kinds, fn.__name__
    with StubTrace() as tr:
        tf.autograph.to_graph(f_if)(1.0)  # a Python float: the if stays Python
    assert tr.calls == []


def test_converted_source_uses_the_operators() -> None:
    code = tf.autograph.to_code(f_break_continue)
    assert "ag__.for_stmt(" in code and "ag__.if_stmt(" in code and "break_" in code
    assert "ag__.while_stmt(" in tf.autograph.to_code(f_while)
    assert "ag__.and_(" in tf.autograph.to_code(f_logic)


def test_gradients_through_converted_code() -> None:
    def f(x: Any) -> Any:
        y = x
        for _ in tf.range(3):
            if y > 2.0:
                y = y * x
            else:
                y = y + x
        return y

    x = tf.Variable(1.5)
    with tf.GradientTape() as tape:
        y = tf.autograph.to_graph(f)(x)
    assert float(y) == 6.75 and float(tape.gradient(y, x)) == 13.5  # real TensorFlow's values


def test_tensor_array_in_a_converted_loop() -> None:
    def fib(n: Any) -> Any:
        ta = tf.TensorArray(tf.float32, size=n, clear_after_read=False)
        ta = ta.write(0, 0.0).write(1, 1.0)
        for i in tf.range(2, n):
            ta = ta.write(i, ta.read(i - 1) + ta.read(i - 2))
        return ta.stack()

    want = [0.0, 1.0, 1.0, 2.0, 3.0, 5.0, 8.0]
    assert fib(c(7)).numpy().tolist() == want
    assert tf.autograph.to_graph(fib)(c(7)).numpy().tolist() == want
    with StubTrace():
        assert tf.autograph.to_graph(fib)(c(7)).numpy().tolist() == want


def test_methods_and_do_not_convert() -> None:
    class M(tf.Module):
        def __init__(self) -> None:
            super().__init__()
            self.w = tf.Variable(2.0)

        def __call__(self, x: Any) -> Any:
            if x > 0:
                x = x * self.w
            return x

    m = M()
    g = tf.autograph.to_graph(m.__call__)
    assert float(g(c(3.0))) == 6.0 and float(g(c(-3.0))) == -3.0

    @tf.autograph.experimental.do_not_convert
    def raw(x: Any) -> Any:
        return x

    assert tf.autograph.to_graph(raw) is raw


# ------------------------------------------------------------------ errors
def _undef(x: Any) -> Any:
    if x > 0:
        y = x
    return y  # noqa: F821 - set in one branch only, on purpose


def _dtypes(x: Any) -> Any:
    if x > 0:
        y = x
    else:
        y = 1
    return y


def _grow(x: Any) -> Any:
    while tf.reduce_sum(x) < 10.0:
        x = tf.concat([x, x], 0)
    return x


def _int_sum(x: Any) -> Any:
    s = 0
    for _ in tf.range(3):
        s += x
    return s


def _return_in_loop(x: Any) -> Any:
    for i in tf.range(10):
        if tf.cast(i, tf.float32) > x:
            return tf.cast(i, tf.float32)
    return c(-1.0)


def _one_sided_return(x: Any) -> Any:
    if x > 0:
        return x * 2


def _while_else(x: Any) -> Any:
    while x < 10.0:
        x = x * 2.0
    else:
        x = -x
    return x


def test_errors_as_tensorflow_raises_them() -> None:
    with pytest.raises(ValueError, match="^'y' must also be initialized in the else branch"):
        tf.autograph.to_graph(_undef)(c(-1.0))
    assert float(tf.autograph.to_graph(_undef)(c(1.0))) == 1.0  # eagerly: the taken branch
    with StubTrace(), pytest.raises(ValueError, match="must also be initialized in the else"):
        tf.autograph.to_graph(_undef)(c(1.0))  # traced: both branches
    with StubTrace(), pytest.raises(TypeError, match="^'y' has dtype float32 in the main "
                                    "branch, but dtype int32 in the else branch"):
        tf.autograph.to_graph(_dtypes)(c(1.0))
    with pytest.raises(ValueError, match=r"^'x' has shape \(1,\) before the loop, but shape "
                       r"\(2,\) after one iteration. Use tf.autograph.experimental"):
        tf.autograph.to_graph(_grow)(c([1.0]))
    with pytest.raises(TypeError, match="^'s' has dtype int32 before the loop, but dtype "
                       "float32 after one iteration"):
        tf.autograph.to_graph(_int_sum)(c(1.0))
    with pytest.raises(NotImplementedError, match="^a return statement cannot be placed inside "
                       "this TensorFlow loop"):
        tf.autograph.to_graph(_return_in_loop)(c(5.0))
    with StubTrace(), pytest.raises(ValueError, match="^the else branch must also have a return "
                                    "statement."):
        tf.autograph.to_graph(_one_sided_return)(c(1.0))
    with pytest.raises(ValueError, match="^the else branch must also have a return statement."):
        tf.autograph.to_graph(_one_sided_return)(c(-1.0))  # eagerly too, when it is taken
    assert float(tf.autograph.to_graph(_one_sided_return)(c(1.0))) == 2.0
    with pytest.raises(ValueError, match="condition of if statement expected to be `tf.bool` "
                       "scalar, got"):
        tf.autograph.to_graph(f_if)(c([1.0, 2.0]))
    with pytest.raises(NotImplementedError, match="^while/else statement not yet supported"):
        tf.autograph.to_graph(_while_else)
    err = tf.autograph.operator_not_allowed("Using a symbolic `tf.Tensor` as a Python `bool`")
    assert isinstance(err, tf.errors.OperatorNotAllowedInGraphError) and isinstance(err, TypeError)
    assert str(err).startswith("Using a symbolic `tf.Tensor` as a Python `bool` is not allowed. "
                               "You can attempt the following resolutions to the problem:")


def test_to_graph_needs_a_function_with_source() -> None:
    with pytest.raises(ValueError, match="Cannot apply autograph to a function"):
        tf.autograph.to_graph(len)
    ns: dict[str, Any] = {}
    exec("def h(x):\n    return x\n", ns)  # noqa: S102 - code without a source file
    with pytest.raises(ValueError, match="Unable to locate the source code"):
        tf.autograph.to_graph(ns["h"])


COUNTER = 0


def _bump(x: Any) -> Any:
    global COUNTER
    if x > 0:
        COUNTER = COUNTER + 1
    return x


def test_globals_super_and_reads_of_undefined_variables() -> None:
    global COUNTER
    COUNTER = 0
    g = tf.autograph.to_graph(_bump)
    g(c(1.0))
    g(2.0)
    g(c(-1.0))
    assert COUNTER == 2

    class Base(tf.Module):
        def f(self, x: Any) -> Any:
            return x * 2.0

    class Sub(Base):
        def f(self, x: Any) -> Any:
            if x > 0:
                x = super().f(x)
            return x

    assert float(tf.autograph.to_graph(Sub().f)(c(3.0))) == 6.0

    def late(x: Any) -> Any:
        if x > 0:  # a Python condition: no TensorFlow check, the read fails as in Python
            y = x
        return y + 1.0  # noqa: F821

    with pytest.raises(UnboundLocalError, match="^'y' is used before assignment"):
        tf.autograph.to_graph(late)(-1.0)


def test_readme_autograph_example_runs_from_a_file(tmp_path: Any) -> None:
    import re
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    readme = (root / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Control flow", 1)[1].split("\n## ", 1)[0]
    (code,) = re.findall(r"```py\n(.*?)```", section, re.S)  # AutoGraph needs a source file
    script = tmp_path / "example.py"
    script.write_text(code, encoding="utf-8")
    r = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                       timeout=120, cwd=root, env={**__import__("os").environ,
                                                   "PYTHONPATH": str(root)})
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.splitlines() == ["tf.Tensor(111, shape=(), dtype=int32) 111", "True"]


def test_symbolic_tensors_need_the_converter() -> None:
    def f(x: Any) -> Any:
        if x > 0:
            x = x * 2.0
        while tf.reduce_sum(x) < 20.0:
            x = x + 3.0
        return x

    with SymbolicStub() as lv:
        x = lv.trace(c(1.5))
        with pytest.raises(tf.errors.OperatorNotAllowedInGraphError) as e:
            f(x)  # not converted: the Python if reads the tensor
        out = tf.autograph.to_graph(f)(x)
        assert out._lvl is lv
        value = lv.value(out)
    assert str(e.value).startswith("Using a symbolic `tf.Tensor` as a Python `bool` is not "
                                   "allowed.")
    assert float(value) == float(f(c(1.5))) == 21.0
    assert lv.kinds() == ["cond", "while_loop"]


def test_unreachable_statements_stay_unreached() -> None:
    ran: list[str] = []

    def f(x: Any) -> Any:
        if x > 0:
            return x * 2.0
        else:
            return x * 3.0
        ran.append("after return")  # noqa: F821 - unreachable on purpose

    def g(x: Any) -> Any:
        for i in range(3):
            if i == 1:
                break
                ran.append("after break")
            x = x + 1.0
        return x

    assert float(tf.autograph.to_graph(f)(c(1.0))) == 2.0
    assert float(tf.autograph.to_graph(g)(c(1.0))) == 2.0
    assert ran == []


def test_tensor_arrays_through_a_traced_if_and_conditions_under_vmap() -> None:
    def f(x: Any) -> Any:
        ta = tf.TensorArray(tf.float32, size=2, clear_after_read=False)
        ta = ta.write(0, x)
        if x > 0:
            ta = ta.write(1, x * 2.0)
        else:
            ta = ta.write(1, x * 3.0)
        return ta.stack()

    g = tf.autograph.to_graph(f)
    assert g(c(1.0)).numpy().tolist() == [1.0, 2.0]
    with StubTrace():
        assert g(c(-1.0)).numpy().tolist() == [-1.0, -3.0]

    def h(x: Any) -> Any:
        if tf.reduce_sum(x) > 0:
            y = 1.0
        else:
            y = 2.0
        return y

    out = tf.vectorized_map(tf.autograph.to_graph(h), c([[1.0], [-1.0], [3.0]]))
    assert out.dtype == tf.float32 and out.numpy().tolist() == [1.0, 2.0, 1.0]


def test_set_loop_options_shape_invariants() -> None:
    def grow(x: Any) -> Any:
        while tf.reduce_sum(x) < 10.0:
            tf.autograph.experimental.set_loop_options(
                shape_invariants=[(x, tf.TensorShape([None]))])
            x = tf.concat([x, x], 0)
        return x

    g = tf.autograph.to_graph(grow)
    assert g(c([1.0])).shape == (16,)
    with StubTrace():
        assert g(c([1.0])).shape == (16,)
    with pytest.raises(ValueError, match=r"^'x' has shape \(2,\) after one iteration, which "
                       r"does not conform with the shape invariant \(1,\)\."):
        def bad(x: Any) -> Any:
            while tf.reduce_sum(x) < 10.0:
                tf.autograph.experimental.set_loop_options(
                    shape_invariants=[(x, tf.TensorShape([1]))])
                x = tf.concat([x, x], 0)
            return x

        tf.autograph.to_graph(bad)(c([1.0]))
