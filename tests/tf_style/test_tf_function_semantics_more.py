"""More of TensorFlow 2.21's ``tf.function`` semantics in tapegrad: pruning of unused
ops, TensorFlow's error texts, symbolic tensors and None dimensions, Variables as
arguments, iterating over tensors, zero-iteration loops, ``ConcreteFunction.graph``.

The expected values are real TensorFlow's (the conformance suite,
tests/conformance/test_tf_function_more_conf.py, compares the same scenarios with it).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import tapegrad.tf as tf
from tests.tf_style import tf_function_more_cases as cases

FILE = cases.__file__
_NOT_ALLOWED = (
    "Iterating over a symbolic `tf.Tensor` is not allowed. You can attempt the following "
    "resolutions to the problem: If you are running in Graph mode, use Eager execution mode or "
    "decorate this function with @tf.function. If you are using AutoGraph, you can try "
    "decorating this function with @tf.function. If that does not work, then you may be using "
    "an unsupported feature or your source code may not be visible to AutoGraph. See "
    "https://github.com/tensorflow/tensorflow/blob/master/tensorflow/python/autograph/g3doc/"
    "reference/limitations.md#access-to-source-code for more information.")


def line(text: str, after: str = "") -> int:
    """The line number of the first line of the scenarios file holding ``text`` (after
    the first one holding ``after``)."""
    with open(FILE) as fh:
        lines = fh.read().splitlines()
    start = next(i for i, ln in enumerate(lines) if after in ln) if after else 0
    return next(i for i, ln in enumerate(lines) if i >= start and text in ln) + 1


def user_code(frames: list[tuple[int, str, str]], cause: str) -> str:
    body = "".join(f'    File "{FILE}", line {n}, in {fn}  *\n        {code}\n'
                   for n, fn, code in frames)
    return f"in user code:\n\n{body}\n    {cause}\n"


def graph_error(frames: list[tuple[int, str]], node: str, msg: str, fn: str) -> str:
    body = "".join(f'  File "{FILE}", line {n}, in {f}\n\n' for n, f in frames)
    return (f"Graph execution error:\n\nDetected at node {node} defined at (most recent call "
            f"last):\n{body}{msg}\n\t [[{{{{node {node}}}}}]] [Op:__inference_{fn}_N]")


# ---------------------------------------------------------------------------- 1. pruning
def test_unused_ops_are_pruned_and_needed_ones_fail_as_the_graph_does() -> None:
    r = cases.pruning(tf)
    # the out-of-range gather nobody needs never runs: no error, on the trace or later
    assert r["first"] == [2.0, 4.0] and r["second"] == [2.0, 6.0] and r["count"] == 1
    call = line('e1 = _err(lambda: used(tf.constant([1.0, 2.0])))')
    want = graph_error([(call, "pruning"), (line("fn()"), "_err"), (call, "<lambda>"),
                        (line("y = tf.gather(x, [10])"), "used")], "GatherV2",
                       "indices[0] = 10 is not in [0, 2)", "used")
    # a needed one fails on the first call and on the replay (where it was traced from)
    assert r["used"] == ["InvalidArgumentError", want, "InvalidArgumentError", want, 1]
    assert r["effect"] == ["InvalidArgumentError",
                           "\t [[{{node GatherV2}}]] [Op:__inference_used_by_effect_N]"]
    assert r["grad"] == [8.0, 16.0]


def test_a_pruned_op_leaves_the_program_without_it() -> None:
    @tf.function
    def f(x: Any) -> Any:
        tf.gather(x, [10])
        tf.sin(x)  # unused too
        return x * 2.0

    f(tf.constant([1.0, 2.0]))
    prog = f.get_concrete_function(tf.constant([1.0, 2.0])).program
    assert [i.name for i in prog.instrs if i.kind == "op"] == ["multiply"]
    assert prog.failed is None


# ---------------------------------------------------------------------------- 2. errors
def test_python_errors_while_tracing_are_in_user_code() -> None:
    r = cases.user_code_errors(tf)
    assert r["key"] == ["KeyError", True, user_code(
        [(line('raise KeyError("boom")'), "key", 'raise KeyError("boom")')], "KeyError: 'boom'")]
    assert r["typ"] == ["TypeError", False, user_code(
        [(line('raise TypeError("bad'), "typ", 'raise TypeError("bad type here")')],
        "TypeError: bad type here")]
    assert r["mine"] == ["MyError", False, user_code(
        [(line('raise MyError("mine")'), "mine", 'raise MyError("mine")')], "MyError: mine")]
    assert r["key_noag"] == ["KeyError", True, "'boom'"]  # AutoGraph off: as raised
    # a class with a constructor of its own: AutoGraph's StagingError
    assert r["staged"] == ["StagingError", False, user_code(
        [(line("raise UnicodeDecodeError("), "staged",
          'raise UnicodeDecodeError("utf-8", b"\\xff", 0, 1, "invalid start byte")')],
        "UnicodeDecodeError: 'utf-8' codec can't decode byte 0xff in position 0: invalid "
        "start byte")]
    assert r["nested"] == ["ValueError", False, user_code(
        [(line("return helper_reshape(x, tf) + 1.0"), "nested",
          "return helper_reshape(x, tf) + 1.0"),
         (line("return tf.reshape(y, [7])"), "helper_reshape", "return tf.reshape(y, [7])")],
        "ValueError: Cannot reshape a tensor with 6 elements to shape [7] (7 elements) for "
        "'{{node Reshape}} = Reshape[T=DT_FLOAT, Tshape=DT_INT32](mul, Reshape/shape)' with "
        "input shapes: [2,3], [1] and with input tensors computed as partial shapes: "
        "input[1] = [7].")]


def test_a_key_error_keeps_its_type_and_the_hint_notes() -> None:
    @tf.function
    def f(x: Any) -> Any:
        return {"a": x}["b"]

    with pytest.raises(KeyError) as ei:
        f(tf.constant(1.0))
    assert str(ei.value).startswith("in user code:") and "KeyError: 'b'" in str(ei.value)


def test_index_errors_at_replay_are_the_graph_s_kernel_errors() -> None:
    r = cases.replay_index_errors(tf)
    assert r["ok"] == [[4.0, 2.0], 4.0] and r["counts"] == [1, 1]
    # "defined at": where the function was traced from (the first call), as TensorFlow
    assert r["gather"] == ["InvalidArgumentError", graph_error(
        [(line('{"ok": [g(x, tf.constant([1, 0]))'), "replay_index_errors"),
         (line("return tf.gather(x, i) * 2.0"), "g")], "GatherV2",
        "indices[1] = 7 is not in [0, 2)", "g")]
    assert r["slice"] == ["InvalidArgumentError", graph_error(
        [(line("float(s(x, tf.constant(1)))"), "replay_index_errors"),
         (line("return x[i] * 2.0"), "s")], "strided_slice",
        "slice index 5 of dimension 0 out of bounds.", "s")]


def test_assertions_are_effects_checked_on_every_call() -> None:
    r = cases.asserts(tf)
    assert r["ok"] == [2.0] and r["counts"] == [1, 1]
    assert r["less"] == ["InvalidArgumentError", graph_error(
        [(line('r: dict[str, Any] = {"ok": f(tf.constant([1.0]))'), "asserts"),
         (line('tf.debugging.assert_less(x, 3.0, message="small")'), "f")],
        "assert_less/Assert/AssertGuard/Assert",
        "assertion failed: [small] [Condition x < y did not hold element-wise:] [x (x:0) = ] "
        "[5] [y (assert_less/y:0) = ] [3]", "f")]
    assert r["equal"] == ["InvalidArgumentError",
                          "assertion failed: [Condition x == y did not hold element-wise:] "
                          "[x (x:0) = ] [1 2 3...] [y (y:0) = ] [9 9 9...]\n\t [[{{node "
                          "assert_equal_1/Assert/AssertGuard/Assert}}]] [Op:__inference_g_N]"]


# ---------------------------------------------------------------------------- 3. shapes
def test_static_shape_errors_while_tracing_are_value_errors() -> None:
    r = cases.shape_errors(tf)
    mm = ("Dimensions must be equal, but are 3 and 4 for '{{node MatMul}} = MatMul[T=DT_FLOAT, "
          "grad_a=false, grad_b=false, transpose_a=false, transpose_b=false](a, b)' with input "
          "shapes: [2,3], [4,5].")
    assert r["matmul"] == ("ValueError", user_code(
        [(line("return tf.matmul(a, b)"), "mm", "return tf.matmul(a, b)")], "ValueError: " + mm))
    assert r["matmul_noag"] == ("ValueError", mm)
    assert r["add"] == ("ValueError", user_code(
        [(line("return a + b"), "add", "return a + b")],
        "ValueError: Dimensions must be equal, but are 2 and 4 for '{{node add}} = "
        "AddV2[T=DT_FLOAT](a, b)' with input shapes: [2,3], [4,5]."))
    assert r["mul"][1].endswith(
        "ValueError: Dimensions must be equal, but are 2 and 3 for '{{node mul}} = "
        "Mul[T=DT_FLOAT](a, b)' with input shapes: [3,2], [3].\n")
    assert r["reshape"][1].endswith(
        "ValueError: Cannot reshape a tensor with 6 elements to shape [4,2] (8 elements) for "
        "'{{node Reshape}} = Reshape[T=DT_FLOAT, Tshape=DT_INT32](a, Reshape/shape)' with input "
        "shapes: [2,3], [2] and with input tensors computed as partial shapes: input[1] = "
        "[4,2].\n")
    assert r["concat"][1].endswith(
        "ValueError: Dimension 0 in both shapes must be equal, but are 3 and 5. Shapes are [3] "
        "and [5]. for '{{node concat}} = ConcatV2[N=2, T=DT_FLOAT, Tidx=DT_INT32](a, b, "
        "concat/axis)' with input shapes: [2,3], [4,5], [] and with computed input tensors: "
        "input[2] = <0>.\n")
    assert r["eager"] == "InvalidArgumentError"  # eagerly: the kernel's error
    assert r["dtypes"][0] == ("TypeError", user_code(
        [(line("return a + b", "def mixed("), "mixed", "return a + b")],
        "TypeError: Input 'y' of 'AddV2' Op has type float64 that does not match type float32 "
        "of argument 'x'."))
    assert r["dtypes"][1][1].endswith("TypeError: Input 'b' of 'MatMul' Op has type float64 "
                                      "that does not match type float32 of argument 'a'.\n")
    node = ("for '{{node AssignAddVariableOp}} = AssignAddVariableOp[dtype=DT_FLOAT]"
            "(AssignAddVariableOp/resource, x)' with input shapes: [], ")
    assert r["assign_add"] == [
        "    ValueError: Dimension 0 in both shapes must be equal, but are 2 and 3. Shapes are "
        "[2] and [3]. " + node + "[3].",
        "    ValueError: Shapes must be equal rank, but are 1 and 2 " + node + "[2,2]."]


# ---------------------------------------------------------------------------- 4. symbolic
def test_traced_tensors_are_symbolic_with_none_dimensions() -> None:
    r = cases.symbolic_tensors(tf)
    assert r["printed"] == [
        "SymbolicTensor", "SymbolicTensor", 'Tensor("add:0", shape=(2,), dtype=float32)',
        "<tf.Tensor 'add:0' shape=(2,) dtype=float32>", 'Tensor("x:0", shape=(2,), dtype=float32)',
        "(None, 3)", "None", "3", "SymbolicTensor",
        'Tensor("Sum:0", shape=(None,), dtype=float32)', "(None,)", "(None, 2)", "(None, 3)",
        "(None,)", "()", 'Tensor("mul:0", shape=(2,), dtype=float32)',
        'Tensor("mul:0", shape=(None,), dtype=float32)', 'Tensor("mul:0", dtype=float32)']
    assert r["out"] == [2.0, 3.0] and r["g"] == [[6.0, 6.0], [12.0, 12.0, 12.0, 12.0]]
    assert r["counts"] == [1, 3] and r["after"] == "EagerTensor"


# ---------------------------------------------------------------------------- 5. variables
def test_variables_are_keyed_by_shape_and_dtype() -> None:
    r = cases.variables_by_spec(tf)
    assert r["outs"] == [[2.0, 4.0], [6.0, 8.0], [2.0, 4.0, 6.0], [2.0, 4.0]]
    assert r["python_calls"] == 2 and r["count"] == 2
    assert r["incs"] == [[2.0, 3.0], [4.0, 5.0], [3.0, 4.0]] and r["inc_count"] == 1
    assert r["values"] == [[3.0, 4.0], [4.0, 5.0]]
    assert r["grad"] == [32.0, 40.0]  # d/dv sum((2v)^2) = 8v at v = [4, 5]


def test_a_rebound_program_writes_the_new_variable_only() -> None:
    @tf.function
    def step(v: Any, x: Any) -> Any:
        v.assign(v * x)
        return v + 0.0

    a, b = tf.Variable([1.0, 2.0]), tf.Variable([5.0, 6.0])
    step(a, tf.constant(2.0))
    step(b, tf.constant(3.0))
    assert a.numpy().tolist() == [2.0, 4.0] and b.numpy().tolist() == [15.0, 18.0]
    assert step.experimental_get_tracing_count() == 1
    with tf.GradientTape() as t:  # replayed through the ops under a tape: b's own value
        y = tf.reduce_sum(step(b, tf.constant(1.0)))
    assert float(y) == 33.0 and t.gradient(y, b).numpy().tolist() == [1.0, 1.0]


# ---------------------------------------------------------------------------- 6. iteration
def test_iterating_over_a_traced_tensor() -> None:
    r = cases.iterating(tf)
    assert r["rows"] == [18.0, 22.0, 26.0] and r["rows2"] == [2.0, 2.0, 2.0]
    assert r["noag"] == ("OperatorNotAllowedInGraphError", _NOT_ALLOWED)
    assert r["unpack"] == ("OperatorNotAllowedInGraphError", user_code(
        [(line("a, b = x"), "unpack", "a, b = x")],
        "OperatorNotAllowedInGraphError: " + _NOT_ALLOWED))
    assert r["list"][0] == "OperatorNotAllowedInGraphError"
    assert r["grad"] == [[3.0] * 3] * 3


# ---------------------------------------------------------------------------- 7. zero loops
@pytest.mark.filterwarnings("ignore:tf.function.first_set_inside.:RuntimeWarning")
def test_zero_iteration_loops() -> None:
    r = cases.zero_iterations(tf)
    assert r["carried"] == [5.0, 8.0, 5.0, 6.0] and r["carried_count"] == 1
    assert r["rows_empty"] == [0.0, 0.0, 0.0] and r["rows_full"] == [4.0, 4.0, 4.0]
    call = line("e = _err(lambda: first_set_inside(tf.constant(0)))")
    assert r["first_set_zero"] == ["InvalidArgumentError", graph_error(
        [(call, "zero_iterations"), (line("fn()"), "_err"), (call, "<lambda>"),
         (line("for i in tf.range(n):", "def first_set_inside"), "first_set_inside")],
        "Assert/Assert", "assertion failed: [loop must iterate at least once to initialize y]",
        "first_set_inside")]
    assert r["first_set_three"] == 2.0
    assert r["first_set_zero_again"][1] == [
        "assertion failed: [loop must iterate at least once to initialize y]",
        "\t [[{{node Assert/Assert}}]] [Op:__inference_first_set_inside_N]"]
    assert r["while_zero"][1].endswith(
        "assertion failed: [loop must iterate at least once to initialize z]\n"
        "\t [[{{node Assert/Assert}}]] [Op:__inference_while_first_set_N]")
    assert r["grad_zero"] == 3.0


def test_zero_iteration_loop_is_one_program_and_its_gradient_checks() -> None:
    @tf.function
    def f(x: Any, n: Any) -> Any:
        s = x * x
        for i in tf.range(n):
            s = s * x + tf.cast(i, tf.float64)
        return s

    x0 = np.array([0.7, -1.3])
    for n in (0, 3):
        x = tf.Variable(x0)
        with tf.GradientTape() as t:
            y = tf.reduce_sum(f(x, tf.constant(n)))
        g = t.gradient(y, x).numpy()
        eps = 1e-6
        fd = [(float(tf.reduce_sum(f(tf.constant(x0 + eps * e), tf.constant(n))))
               - float(tf.reduce_sum(f(tf.constant(x0 - eps * e), tf.constant(n))))) / (2 * eps)
              for e in np.eye(2)]
        np.testing.assert_allclose(g, fd, rtol=1e-6)
    # one trace for the Variables (the second one of the same spec is bound to it), one for
    # the constant tensors; whatever n is, and no signature runs eagerly
    assert f.experimental_get_tracing_count() == 2
    assert not f.eager_reasons


# ---------------------------------------------------------------------------- 8. graph
def test_concrete_function_graph() -> None:
    r = cases.concrete_graph(tf)
    assert r["ops"] == [("x", "Placeholder", [], ["x:0"]), ("mul/y", "Const", [], ["mul/y:0"]),
                        ("mul", "Mul", ["x:0", "mul/y:0"], ["mul:0"]),
                        ("add/y", "Const", [], ["add/y:0"]),
                        ("add", "AddV2", ["mul:0", "add/y:0"], ["add:0"]),
                        ("Identity", "Identity", ["add:0"], ["Identity:0"])]
    assert r["graph_def"] == [("x", "Placeholder", []), ("mul/y", "Const", []),
                              ("mul", "Mul", ["x", "mul/y"]), ("add/y", "Const", []),
                              ("add", "AddV2", ["mul", "add/y"]), ("Identity", "Identity", ["add"])]
    assert r["graph"] == ["FuncGraph", "h", "[<tf.Tensor 'x:0' shape=(2,) dtype=float32>]",
                          "[<tf.Tensor 'Identity:0' shape=(2,) dtype=float32>]"]
    assert r["cf"] == ["[<tf.Tensor 'x:0' shape=(2,) dtype=float32>]",
                       "[<tf.Tensor 'Identity:0' shape=(2,) dtype=float32>]",
                       'Tensor("Identity:0", shape=(2,), dtype=float32)',
                       "((TensorSpec(shape=(2,), dtype=tf.float32, name='x'),), {})", True]
    assert r["node"] == ('name: "mul"\nop: "Mul"\ninput: "x"\ninput: "mul/y"\nattr {\n  key: "T"\n'
                         '  value {\n    type: DT_FLOAT\n  }\n}\n')
    assert r["ops3"] == [("x", "Placeholder"), ("y", "Placeholder"), ("Const", "Const"),
                         ("Sum", "Sum"), ("Sin", "Sin"), ("sub", "Sub"), ("Identity", "Identity"),
                         ("Identity_1", "Identity")]
    assert r["cf3"][2] == ("{'a': <tf.Tensor 'Identity:0' shape=() dtype=float32>, "
                           "'b': <tf.Tensor 'Identity_1:0' shape=(2,) dtype=float32>}")
    assert r["call"] == [3.0, 5.0]


def test_concrete_function_variables_and_reads() -> None:
    v = tf.Variable(2.0)

    @tf.function
    def f(x: Any) -> Any:
        v.assign_add(1.0)
        return x * v

    cf = f.get_concrete_function(tf.TensorSpec([], tf.float32))
    assert cf.variables == (v,)
    types = [o.type for o in cf.graph.get_operations()]
    assert "ReadVariableOp" in types and "AssignVariableOp" in types and types[0] == "Placeholder"
    assert cf.name.startswith(b"__inference_f_")
