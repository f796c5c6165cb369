"""``tf.function`` scenarios on tapegrad and on real TensorFlow 2.21: same trace counts,
Python side effects, errors, values and gradients."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import tapegrad.tf as tg
from tests.tf_style import tf_function_cases as cases
from tests.tf_style.tf_helpers import real_tf


@pytest.fixture(scope="module")
def rtf() -> Any:
    return real_tf()


def _same(a: Any, b: Any, path: str = "") -> None:
    if isinstance(a, dict):
        assert set(a) == set(b), path
        for k in a:
            _same(a[k], b[k], f"{path}.{k}")
    elif isinstance(a, (list, tuple)) and not (a and isinstance(a[0], str)):
        assert len(a) == len(b), path
        for i, (x, y) in enumerate(zip(a, b)):
            _same(x, y, f"{path}[{i}]")
    elif isinstance(a, (np.ndarray, float)):
        np.testing.assert_allclose(a, b, rtol=2e-5, atol=1e-6, err_msg=path)
    else:
        assert a == b, path


@pytest.mark.parametrize("name", ["counts_and_side_effects", "python_print_is_symbolic",
                                  "reduce_retracing", "train_step_gradients", "tape_outside",
                                  "jit_compile_and_get_concrete", "while_loop_traced",
                                  "loop_body_python_once", "value_ops_traced", "index_values_traced",
                                  "retracing_policy", "static_reads_traced",
                                  "metrics_in_train_step", "concrete_function_binding",
                                  "outputs_and_leaks", "loops_that_grow", "nested_functions",
                                  "python_literals", "python_calls_inside",
                                  "signature_converts_python_values", "random_inside",
                                  "integer_reductions"])
def test_same_as_tensorflow(rtf: Any, name: str) -> None:
    mine, real = cases.SCENARIOS[name](tg), cases.SCENARIOS[name](rtf)
    mine.pop("tf_print", None), real.pop("tf_print", None)  # TF's print bypasses sys.stderr
    _same(mine, real)


def test_errors_as_tensorflow(rtf: Any) -> None:
    mine, real = cases.input_signature(tg), cases.input_signature(rtf)
    for k in ("ok", "list", "count", "cf", "count_after"):
        assert mine[k] == real[k], k
    for k in ("dtype", "rank", "extra", "scalar"):
        assert mine[k] == real[k], k
    assert mine["cf_dtype"][0] == real["cf_dtype"][0]
    m, r = cases.variables_created_once(tg), cases.variables_created_once(rtf)
    assert m["error"][0] == r["error"][0] and m["error"][1] in r["error"][1]
    for k in ("bad_count", "values", "python_calls", "m1_count", "m2_count"):
        assert m[k] == r[k], k
    m, r = cases.graph_mode_errors(tg), cases.graph_mode_errors(rtf)
    assert m["bool"] == r["bool"]
    assert m["numpy"] == r["numpy"]  # both "in user code:" texts end with the same line


def test_assign_and_print_as_tensorflow(rtf: Any, capfd: pytest.CaptureFixture[str]) -> None:
    real = cases.assign_and_print_every_call(rtf)
    printed = capfd.readouterr().err
    mine = cases.assign_and_print_every_call(tg)
    for k in ("outs", "v", "count"):
        assert mine[k] == real[k], k
    assert printed.count("v is") == mine["printed"].count("v is") == 3


def _outer_tape_through_inner_gradient(tf: Any) -> list[Any]:
    """An outer tape differentiates a traced function whose result is an inner tape's
    gradient, after a first call outside any tape (the trace saw no outer tape)."""

    class G(tf.Module):
        def __init__(self) -> None:
            super().__init__()
            self.w = tf.Variable([1.0, 2.0, 3.0], dtype=tf.float64)

        @tf.function(input_signature=[tf.TensorSpec([3], tf.float64)])
        def grad(self, x: Any) -> Any:
            with tf.GradientTape() as t:
                y = tf.reduce_sum(tf.sin(self.w * x) ** 2)
            return t.gradient(y, self.w)

    m = G()
    x = tf.constant(np.array([0.3, -0.2, 1.0]))
    first = m.grad(x).numpy()
    with tf.GradientTape() as outer:
        outer.watch(x)
        s = tf.reduce_sum(m.grad(x))
    return [first, outer.gradient(s, x).numpy()]


def test_outer_tape_through_a_gradient_computed_inside_tf_function(rtf: Any) -> None:
    for a, b in zip(_outer_tape_through_inner_gradient(tg),
                    _outer_tape_through_inner_gradient(rtf)):
        np.testing.assert_allclose(a, b, rtol=1e-10)
