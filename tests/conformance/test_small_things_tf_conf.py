"""Conformance (issue 16): small things textbook code trips on, TensorFlow style.

Float ranges bit for bit, sliced variable assignment and scatter updates,
the aliases TensorFlow 2.21 keeps, and conversion errors, each run on real
TensorFlow and on tapegrad.tf.  Skipped without TensorFlow.
"""

# ruff: noqa: B023  (each lambda is called at once, inside its loop step)
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import tapegrad.tf as tg
from tests.tf_style.tf_helpers import real_tf


@pytest.fixture(scope="module")
def rtf() -> Any:
    return real_tf()


def _run(mod: Any, fn: Callable[[Any], Any]) -> tuple[str, Any]:
    try:
        return "ok", fn(mod)
    except Exception as e:  # noqa: BLE001  (the exception type is what is compared)
        return "err", e


def _np(x: Any) -> Any:
    if isinstance(x, (tuple, list)):
        return [_np(v) for v in x]
    if x is None:
        return None
    if hasattr(x, "numpy"):
        return np.asarray(x.numpy())
    return x


def _core(msg: str) -> str:
    """TensorFlow's message without its ``{{function_node ...}}`` prefix and op suffix."""
    first = msg.split("\n")[0]
    if "}}" in first:
        first = first.split("}}", 1)[1]
    return first.split(" [Op:")[0].strip()


def same(rtf: Any, fn: Callable[[Any], Any], *, msg: bool = True) -> None:
    """``fn(tf)`` and ``fn(tapegrad.tf)``: equal values and dtypes, or the same error."""
    k1, a = _run(rtf, fn)
    k2, b = _run(tg, fn)
    assert k1 == k2, (a, b)
    if k1 == "err":
        assert type(a).__name__ == type(b).__name__, (repr(a), repr(b))
        if msg:
            assert _core(str(a)) in str(b), (str(a), str(b))
        return
    av, bv = _np(a), _np(b)
    if isinstance(av, list):
        assert len(av) == len(bv)
        for x, y in zip(av, bv):
            _eq(x, y)
    else:
        _eq(av, bv)


def _eq(a: Any, b: Any) -> None:
    if isinstance(a, np.ndarray):
        assert isinstance(b, np.ndarray), b
        assert a.dtype == b.dtype and a.shape == b.shape, (a.dtype, a.shape, b.dtype, b.shape)
        np.testing.assert_array_equal(a, b)
    else:
        assert a == b


# ============================================================================ 1. ranges
def _random_ranges(seed: int, n: int) -> list[tuple[float, float, float]]:
    rng = np.random.default_rng(seed)
    out = []
    while len(out) < n:
        start = float(np.round(rng.uniform(-10, 10), rng.integers(0, 4)))
        step = float(np.round(rng.uniform(0.001, 2), rng.integers(1, 4)))
        step *= 1 if rng.random() < 0.8 else -1
        end = start + step * int(rng.integers(0, 300)) + float(
            np.round(rng.uniform(-1, 1) * abs(step), 2))
        out.append((start, end, step))
    return out


TEXTBOOK = [(-5.5, 1.0, 0.1), (-3.0, 3.0, 0.01), (0.0, 1.0, 0.1), (1.0, 1.3, 0.1),
            (-2.0, 2.0, 0.05), (0.5, 0.0, -0.1), (0.0, 0.3, 0.1)]


def test_range_float_lengths_and_values(rtf: Any) -> None:
    for s, e, d in TEXTBOOK + _random_ranges(0, 150):
        same(rtf, lambda m: m.range(s, e, d))
        same(rtf, lambda m: m.range(s, e, d, dtype=m.float64))
        same(rtf, lambda m: m.range(s, e, d, dtype=m.float16))
        same(rtf, lambda m: m.range(np.float64(s), e, d))


def test_range_textbook_length(rtf: Any) -> None:
    assert tg.range(-5.5, 1.0, 0.1).shape == rtf.range(-5.5, 1.0, 0.1).shape == (65,)
    assert tg.range(1.0, 1.3, 0.1).shape[0] == 3 < len(np.arange(1.0, 1.3, 0.1))


@pytest.mark.parametrize("args", [(0, 10, 3), (10, 0, -3), (5, 5, 1), (-3, 7, 2), (7, -3, -2),
                                  (0, 10**6, 7), (0, 1.5, 1), (5, 2, 1), (2, 5, -1),
                                  (0, 5, 0), (0.0, 5.0, 0.0), (0.5, 0, 0.1), (-3.47, -4.15, 1.7)])
def test_range_int_forms_and_errors(rtf: Any, args: tuple[Any, ...]) -> None:
    same(rtf, lambda m: m.range(*args))
    same(rtf, lambda m: m.range(*args, dtype=m.int64))


def test_range_dtype_inference_and_keywords(rtf: Any) -> None:
    same(rtf, lambda m: m.range(0.5, 3, dtype=m.int32))
    same(rtf, lambda m: m.range(m.constant(0, m.int64), 3))
    same(rtf, lambda m: m.range(m.constant(0.0), m.constant(3, m.int32)))
    same(rtf, lambda m: m.range(m.constant(0.0, m.float64), 1.0, 0.1))
    same(rtf, lambda m: m.range(10, delta=2))
    same(rtf, lambda m: m.range(start=2, limit=5))
    same(rtf, lambda m: m.range(3, dtype=m.float32))
    same(rtf, lambda m: m.range(m.constant([1, 2])))


def test_linspace_values(rtf: Any) -> None:
    rng = np.random.default_rng(2)
    for _ in range(120):
        s = float(np.round(rng.uniform(-10, 10), rng.integers(0, 4)))
        e = float(np.round(rng.uniform(-10, 10), rng.integers(0, 4)))
        n = int(rng.integers(0, 300))
        same(rtf, lambda m: m.linspace(s, e, n))
        same(rtf, lambda m: m.linspace(m.constant(s, m.float64), e, n))
        same(rtf, lambda m: m.linspace(m.constant(s, m.float16), e, n))
        same(rtf, lambda m: m.linspace(int(s), int(e), n))


def test_linspace_forms_and_errors(rtf: Any) -> None:
    for args in [(0.0, 1.0, 0), (0.0, 1.0, -1), (0.0, 1.0, 1), (0.0, 1.0, 2), (0.0, 1.0, 3.0),
                 (0, 1.5, 3), (0.0, 1, 3)]:
        same(rtf, lambda m: m.linspace(*args))
    same(rtf, lambda m: m.linspace([0.0, 1.0], [1.0, 2.0], 3, axis=1))
    same(rtf, lambda m: m.linspace([0.0, 1.0], [1.0, 2.0], 3))
    same(rtf, lambda m: m.linspace([0.0, 1.0], 2.0, 3, axis=-1))
    same(rtf, lambda m: m.linspace([[0.0, 1.0]], [[1.0], [2.0]], 4, axis=1))
    same(rtf, lambda m: m.linspace(m.constant(0.0, m.float64), m.constant(1.0), 3))


def test_linspace_gradient(rtf: Any) -> None:
    def grads(m: Any) -> Any:
        a, b = m.Variable([0.5, -1.0]), m.Variable(2.0)
        with m.GradientTape() as tape:
            y = m.reduce_sum(m.linspace(a, b, 5, axis=1) ** 2)
        return tape.gradient(y, [a, b])
    same(rtf, grads)


def test_meshgrid_of_float_ranges(rtf: Any) -> None:
    def grid(m: Any) -> Any:
        x1, x2 = m.meshgrid(m.range(-5.5, 1.0, 0.1), m.range(-3.0, 1.0, 0.1))
        return [x1, x2]
    same(rtf, grid)
    x1, x2 = tg.meshgrid(tg.range(-5.5, 1.0, 0.1), tg.range(-3.0, 1.0, 0.1))
    assert (x1 ** 2 + 2 * x2 ** 2).shape == (40, 65)


# ============================================================================ 2. slices, scatters
def _grid(m: Any) -> Any:
    return m.Variable(m.reshape(m.range(12.0), (3, 4)))


ASSIGNS: dict[str, Callable[[Any, Any], Any]] = {
    "element": lambda m, v: v[1, 2].assign(9),
    "column": lambda m, v: v[:, 0].assign([7.0, 8.0, 9.0]),
    "rows_scalar": lambda m, v: v[1:3].assign(0.0),
    "rows_broadcast": lambda m, v: v[1:3].assign(m.ones((4,))),
    "strided": lambda m, v: v[::2, ::-1].assign(m.reshape(m.range(8.0), (2, 4))),
    "ellipsis": lambda m, v: v[..., 1].assign([1.0, 2.0, 3.0]),
    "newaxis": lambda m, v: v[None, 0].assign([[1.0, 2.0, 3.0, 4.0]]),
    "tensor_index": lambda m, v: v[m.constant(1)].assign([0.0, 0.0, 0.0, 0.0]),
    "negative": lambda m, v: v[-1, -1].assign(-5.0),
    "bad_shape": lambda m, v: v[1:3].assign(m.ones((3, 4))),
    "bad_dtype": lambda m, v: v[1:3].assign(m.ones((2, 4), m.int32)),
    "out_of_range": lambda m, v: v[5].assign(1.0),
    "assign_add_missing": lambda m, v: v[1:3].assign_add(m.ones((2, 4))),
    "read_value_kw": lambda m, v: v[0].assign([1.0, 2.0, 3.0, 4.0], read_value=False),
    "constant_has_no_assign": lambda m, v: m.constant([1.0, 2.0])[0].assign(3.0),
}


@pytest.mark.parametrize("form", list(ASSIGNS))
def test_sliced_variable_assignment(rtf: Any, form: str) -> None:
    def run(m: Any) -> Any:
        v = _grid(m)
        out = ASSIGNS[form](m, v)
        return [v, out]
    # the real message names TensorFlow's own classes and closures
    same(rtf, run, msg=form not in ("assign_add_missing", "read_value_kw",
                                    "constant_has_no_assign"))


def test_slice_assign_keeps_values_already_read(rtf: Any) -> None:
    def run(m: Any) -> Any:
        v = m.Variable([1.0, 2.0, 3.0])
        before = v[1:]
        v[1:].assign([5.0, 6.0])
        return [before, v]
    same(rtf, run)


INDEXES: dict[str, Any] = {
    "list_is_tuple": [0, 2], "int_out_of_range": 5, "negative_out_of_range": -4,
    "numpy_int_array": np.array([0, 2]), "float": 1.0, "list_of_lists": [[0, 1]],
    "slice_past_end": slice(1, 10), "zero_step": slice(None, None, 0),
    "list_in_tuple": (0, [1, 2]), "python_bool": True, "too_many": (0, 0, 0),
    "ellipsis_middle": (Ellipsis, 1), "newaxis": (None, 1, None),
}


@pytest.mark.parametrize("name", list(INDEXES))
def test_tensor_indexing_rules(rtf: Any, name: str) -> None:
    key = INDEXES[name]
    same(rtf, lambda m: m.reshape(m.range(12.0), (3, 4))[key], msg=name != "too_many")


def test_mask_and_tensor_indices(rtf: Any) -> None:
    same(rtf, lambda m: m.reshape(m.range(12.0), (3, 4))[m.reshape(m.range(12.0), (3, 4)) > 5])
    same(rtf, lambda m: m.reshape(m.range(12.0), (3, 4))[m.constant(1, m.int64)])
    same(rtf, lambda m: m.reshape(m.range(12.0), (3, 4))[m.constant([0, 1])])


def test_gradients_through_the_read_side(rtf: Any) -> None:
    def run(m: Any) -> Any:
        x = m.Variable([1.0, 2.0, 3.0])
        with m.GradientTape(persistent=True) as tape:
            y = m.reduce_sum(x[1:] ** 2) + x[0] * x[2]
            z = m.reduce_sum(x[::-1][:2] * m.constant([1.0, 10.0]))
        return [tape.gradient(y, x), tape.gradient(z, x)]
    same(rtf, run)


SCATTERS: dict[str, Callable[[Any, Any], Any]] = {
    "update": lambda m, t: m.tensor_scatter_nd_update(t, [[0, 0], [2, 3]], [100.0, 200.0]),
    "update_rows": lambda m, t: m.tensor_scatter_nd_update(t, [[1]], [[9.0, 9.0, 9.0, 9.0]]),
    "update_python_ints": lambda m, t: m.tensor_scatter_nd_update(t, [[0, 0]], [1]),
    "add_repeated": lambda m, t: m.tensor_scatter_nd_add(t, [[0, 0], [0, 0]], [1.0, 2.0]),
    "sub": lambda m, t: m.tensor_scatter_nd_sub(t, [[0, 0]], [1.0]),
    "max": lambda m, t: m.tensor_scatter_nd_max(t, [[0, 0], [1, 1]], [100.0, -1.0]),
    "min": lambda m, t: m.tensor_scatter_nd_min(t, [[0, 1]], [-100.0]),
    "out_of_range": lambda m, t: m.tensor_scatter_nd_update(t, [[5, 0]], [1.0]),
    "bad_updates_shape": lambda m, t: m.tensor_scatter_nd_update(t, [[0, 0]], [1.0, 2.0]),
    "scatter_nd": lambda m, t: m.scatter_nd([[1], [3]], [5.0, 6.0], [5]),
    "scatter_nd_repeated": lambda m, t: m.scatter_nd([[1], [1]], [5.0, 6.0], [5]),
}


@pytest.mark.parametrize("name", list(SCATTERS))
def test_tensor_scatter(rtf: Any, name: str) -> None:
    same(rtf, lambda m: SCATTERS[name](m, m.reshape(m.range(12.0), (3, 4))))


def test_tensor_scatter_gradients(rtf: Any) -> None:
    def run(m: Any) -> Any:
        a, b = m.Variable([1.0, 2.0, 3.0]), m.Variable([10.0, 20.0])
        w = m.constant([1.0, 2.0, 3.0])
        with m.GradientTape(persistent=True) as tape:
            z1 = m.reduce_sum(m.tensor_scatter_nd_update(a * 1.0, [[0], [2]], b * b) * w)
            z2 = m.reduce_sum(m.tensor_scatter_nd_add(a * 1.0, [[0], [0]], b * b) * w)
            z3 = m.reduce_sum(m.tensor_scatter_nd_sub(a * a, [[1], [2]], b) * w)
            z4 = m.reduce_sum(m.scatter_nd([[2], [2]], b * b, [3]) * w)
        return [g for z in (z1, z2, z3, z4) for g in tape.gradient(z, [a, b])]
    same(rtf, run)


VAR_SCATTERS: dict[str, Callable[[Any, Any], Any]] = {
    "scatter_nd_update": lambda m, v: v.scatter_nd_update([[0, 0], [2, 3]], [100.0, 200.0]),
    "scatter_nd_add": lambda m, v: v.scatter_nd_add([[0, 0], [0, 0]], [1.0, 2.0]),
    "scatter_nd_sub": lambda m, v: v.scatter_nd_sub([[0, 0]], [1.0]),
    "scatter_nd_max": lambda m, v: v.scatter_nd_max([[0, 0]], [50.0]),
    "scatter_nd_min": lambda m, v: v.scatter_nd_min([[2, 2]], [-50.0]),
    "scatter_update": lambda m, v: v.scatter_update(m.IndexedSlices(m.zeros((1, 4)), [1])),
    "scatter_add": lambda m, v: v.scatter_add(m.IndexedSlices(m.ones((2, 4)), [1, 1])),
    "scatter_sub": lambda m, v: v.scatter_sub(m.IndexedSlices(m.ones((1, 4)), [2])),
    "scatter_mul": lambda m, v: v.scatter_mul(m.IndexedSlices(2 * m.ones((1, 4)), [2])),
    "scatter_div": lambda m, v: v.scatter_div(m.IndexedSlices(2 * m.ones((1, 4)), [0])),
    "scatter_max": lambda m, v: v.scatter_max(m.IndexedSlices(6 * m.ones((1, 4)), [1])),
    "scatter_min": lambda m, v: v.scatter_min(m.IndexedSlices(6 * m.ones((1, 4)), [2])),
    "sparse_read": lambda m, v: v.sparse_read([0, 2]),
    "gather_nd": lambda m, v: v.gather_nd([[0, 1], [2, 2]]),
}


@pytest.mark.parametrize("name", list(VAR_SCATTERS))
def test_variable_scatter_methods(rtf: Any, name: str) -> None:
    def run(m: Any) -> Any:
        v = _grid(m)
        out = VAR_SCATTERS[name](m, v)
        return [v, out]
    same(rtf, run)


def test_tensor_scatter_max_min_gradients(rtf: Any) -> None:
    def run(m: Any) -> Any:
        a = m.Variable([1.0, 2.0, 3.0, 4.0])
        b = m.Variable([5.0, 2.0, 0.5, 5.0])
        w = m.constant([1.0, 2.0, 3.0, 4.0])
        idx = [[0], [1], [2], [0]]   # place 1 ties (2 == 2), place 0 gets two equal winners
        with m.GradientTape(persistent=True) as tape:
            z1 = m.reduce_sum(m.tensor_scatter_nd_max(a * 1.0, idx, b * 1.0) * w)
            z2 = m.reduce_sum(m.tensor_scatter_nd_min(a * 1.0, idx, b * 1.0) * w)
        return [g for z in (z1, z2) for g in tape.gradient(z, [a, b])]
    same(rtf, run)


# ============================================================================ 4. aliases TF keeps
ALIAS_NAMES = {
    "initializers": ["Zeros", "Ones", "Constant", "RandomNormal", "RandomUniform",
                     "TruncatedNormal", "GlorotUniform", "GlorotNormal", "HeNormal", "HeUniform",
                     "LecunNormal", "LecunUniform", "Identity", "Orthogonal", "VarianceScaling",
                     "zeros", "ones", "constant", "glorot_uniform", "glorot_normal", "he_normal",
                     "he_uniform", "lecun_normal", "lecun_uniform", "random_normal",
                     "random_uniform", "truncated_normal", "identity", "orthogonal",
                     "variance_scaling", "get", "Initializer"],
    "optimizers": ["SGD", "Adam", "AdamW", "Optimizer", "get"],
    "losses": ["MeanSquaredError", "MeanAbsoluteError", "BinaryCrossentropy",
               "CategoricalCrossentropy", "SparseCategoricalCrossentropy", "Loss", "mse", "MSE",
               "mae", "MAE", "binary_crossentropy", "categorical_crossentropy",
               "sparse_categorical_crossentropy", "get"],
    "metrics": ["Mean", "Sum", "MeanSquaredError", "MeanAbsoluteError", "RootMeanSquaredError",
                "Accuracy", "BinaryAccuracy", "CategoricalAccuracy", "SparseCategoricalAccuracy",
                "MeanMetricWrapper", "Metric", "binary_accuracy",
                "categorical_accuracy", "sparse_categorical_accuracy", "mse", "MSE", "mae", "MAE",
                "get"],
}


@pytest.mark.parametrize("module", list(ALIAS_NAMES))
def test_tf_module_aliases_exist_where_tensorflow_has_them(rtf: Any, module: str) -> None:
    for name in ALIAS_NAMES[module]:
        assert hasattr(getattr(rtf, module), name), (module, name)        # TF 2.21 has it
        assert hasattr(getattr(rtf.keras, module), name), (module, name)
        ours = getattr(getattr(tg, module), name)
        assert ours is getattr(getattr(tg.keras, module), name), (module, name)


def test_lowercase_initializer_spellings_are_the_classes(rtf: Any) -> None:
    for low, cls in [("zeros", "Zeros"), ("glorot_uniform", "GlorotUniform"),
                     ("truncated_normal", "TruncatedNormal"), ("identity", "Identity")]:
        assert (getattr(rtf.keras.initializers, low) is getattr(rtf.keras.initializers, cls)) \
            == (getattr(tg.keras.initializers, low) is getattr(tg.keras.initializers, cls))


INITS: dict[str, Callable[[Any], Any]] = {
    "tf_zeros_initializer": lambda m: m.zeros_initializer()((2, 3)),
    "tf_ones_initializer": lambda m: m.ones_initializer()((2,), dtype=m.float64),
    "tf_constant_initializer": lambda m: m.constant_initializer(3.0)((2,)),
    "initializers_constant": lambda m: m.initializers.Constant(2.0)((2, 2)),
    "initializers_zeros_int": lambda m: m.initializers.Zeros()((2,), dtype="int32"),
    "identity": lambda m: m.keras.initializers.Identity()((2, 3)),
    "identity_gain": lambda m: m.keras.initializers.Identity(gain=2.0)((2, 2)),
    "identity_1d": lambda m: m.keras.initializers.Identity()((2,)),
    "get_class_name": lambda m: m.keras.initializers.get("Zeros")((2,)),
    "get_config": lambda m: m.keras.initializers.get({"class_name": "Ones", "config": {}})((2,)),
    "get_unknown": lambda m: m.keras.initializers.get("no_such_initializer"),
}


@pytest.mark.parametrize("name", list(INITS))
def test_deterministic_initializers(rtf: Any, name: str) -> None:
    same(rtf, INITS[name], msg=name != "get_unknown")


@pytest.mark.parametrize("name", ["RandomNormal", "TruncatedNormal", "GlorotUniform",
                                  "LecunNormal", "LecunUniform", "Orthogonal"])
def test_random_initializers_shape_dtype_and_spread(rtf: Any, name: str) -> None:
    a = getattr(rtf.keras.initializers, name)(seed=3)((200, 50)).numpy()
    b = getattr(tg.keras.initializers, name)(seed=3)((200, 50)).numpy()
    assert a.shape == b.shape and a.dtype == b.dtype
    assert abs(a.std() - b.std()) < 0.1 * a.std()
    assert abs(a.max() - b.max()) < 0.25 * a.max()
    if name == "Orthogonal":
        np.testing.assert_allclose(b.T @ b, np.eye(50), atol=1e-5)


METRICS: dict[str, Callable[[Any], Any]] = {
    "mean": lambda m: _stream(m.metrics.Mean(), [([1.0, 2.0, 3.0],), (5.0, 2.0)]),
    "sum": lambda m: _stream(m.metrics.Sum(), [([1, 3, 5, 7],)]),
    "mse": lambda m: _stream(m.metrics.MeanSquaredError(),
                             [([[0.0, 1.0], [0.0, 0.0]], [[1.0, 1.0], [1.0, 0.0]])]),
    "mae_weighted": lambda m: _stream(m.metrics.MeanAbsoluteError(),
                                      [([[0.0, 1.0], [0.0, 0.0]], [[1.0, 1.0], [1.0, 0.0]],
                                        [1.0, 0.0])]),
    "rmse": lambda m: _stream(m.metrics.RootMeanSquaredError(),
                              [([[0, 1], [0, 0]], [[1, 1], [0, 0]])]),
    "sparse_cat_acc": lambda m: _stream(m.metrics.SparseCategoricalAccuracy(),
                                        [([[2], [1]], [[0.1, 0.6, 0.3], [0.05, 0.95, 0.0]])]),
    "sparse_cat_acc_flat": lambda m: _stream(m.metrics.SparseCategoricalAccuracy(),
                                             [([2, 1], [[0.1, 0.6, 0.3], [0.05, 0.95, 0.0]])]),
    "binary_acc": lambda m: _stream(m.metrics.BinaryAccuracy(),
                                    [([[1], [1], [0], [0]], [[0.98], [1], [0], [0.6]])]),
    "cat_acc": lambda m: _stream(m.metrics.CategoricalAccuracy(),
                                 [([[0, 0, 1], [0, 1, 0]], [[0.1, 0.9, 0.8], [0.05, 0.95, 0]])]),
    "accuracy": lambda m: _stream(m.metrics.Accuracy(),
                                  [([[1], [2], [3], [4]], [[0], [2], [3], [4]])]),
    "fn_sparse": lambda m: m.metrics.sparse_categorical_accuracy(
        [2, 1], [[0.1, 0.6, 0.3], [0.05, 0.95, 0.0]]),
    "fn_binary": lambda m: m.metrics.binary_accuracy([[1.0], [0.0]], [[0.7], [0.2]]),
    "fn_mse": lambda m: m.metrics.mse([[0.0, 1.0]], [[1.0, 1.0]]),
    "losses_MSE": lambda m: m.losses.MSE([[0.0, 1.0]], [[1.0, 1.0]]),
    "losses_mae": lambda m: m.losses.mae([[0.0, 1.0]], [[1.0, 3.0]]),
}


def _stream(metric: Any, batches: list[tuple[Any, ...]]) -> Any:
    out = []
    for b in batches:
        if len(b) == 3 or (len(b) == 2 and isinstance(b[1], float)):
            metric.update_state(*b[:-1], sample_weight=b[-1])
        else:
            metric.update_state(*b)
        out.append(metric.result())
    metric.reset_state()
    out.append(metric.result())
    return out + [metric.name]


@pytest.mark.parametrize("name", list(METRICS))
def test_metrics(rtf: Any, name: str) -> None:
    same(rtf, METRICS[name])


def test_tf_optimizers_alias_trains_like_keras(rtf: Any) -> None:
    def run(m: Any) -> Any:
        w = m.Variable([1.0, -2.0])
        opt = m.optimizers.SGD(learning_rate=0.1, momentum=0.9)
        for _ in range(3):
            with m.GradientTape() as tape:
                loss = m.reduce_sum(w * w)
            opt.apply_gradients(zip([tape.gradient(loss, w)], [w]))
        return w
    same(rtf, run)


# ============================================================================ 6. conversion errors
def _data_cases(m: Any) -> dict[str, Any]:
    c = m.constant
    return {
        "ragged": [[1, 2], [3]], "ragged3": [[[1, 2], [3, 4]], [[5, 6]]],
        "ragged_float": [[1.0, 2.0], [3.0]], "ragged_first_short": [[1], [2, 3]],
        "scalar_then_list": [1, [2, 3]], "list_then_scalar": [[2, 3], 1],
        "tensor_then_number": [c(1.0), 2.0], "number_then_tensor": [1.0, c(2.0)],
        "tensors": [c(1.0), c(2.0)], "tensor_rows": [c([1.0, 2.0]), c([3.0, 4.0])],
        "tensor_row_and_list": [c([1.0, 2.0]), [3.0, 4.0]],
        "ragged_tensors": [c([1.0, 2.0]), c([3.0])],
        "nested_tensor_and_numbers": [[c(1.0), 2.0], [3.0, 4.0]],
        "later_nested_tensor": [[1.0, 2.0], [c(3.0), 4.0]],
        "int_tensor_and_float": [c(1), 2.5], "int_tensor_and_int": [c(1), 2],
        "tensor_dtypes_mixed": [c(1.0), c(2)], "variable_and_number": [m.Variable(1.0), 2.0],
        "str_then_int": ["a", 1], "float_then_none": [1.0, None], "dict": {"a": 1},
        "numpy_scalar_and_number": [np.float64(1.0), 2.0],
        "numpy_row_and_list": [np.array([1.0, 2.0]), [3.0, 4.0]], "set": {1, 2},
        "empty_then_row": [[], [1]], "row_then_empty": [[1], []], "bool_then_float": [True, 1.5],
        "float_then_bool": [1.5, True], "int_then_bool": [1, True], "bool_then_int": [True, 1],
        "int_then_float": [1, 2.5], "complex_and_float": [1j, 1.0], "tuple_ragged": ((1, 2), (3,)),
        "object": [object()], "int_past_int32": [2**40], "int_past_int64": [2**63],
        "int64_min": [-(2**63)], "nan": [float("nan")],
    }


CONVERSIONS = list(_data_cases(tg))


@pytest.mark.parametrize("name", CONVERSIONS)
@pytest.mark.parametrize("how", ["constant", "convert_to_tensor"])
def test_conversion_results_and_errors(rtf: Any, name: str, how: str) -> None:
    # the object's address differs between runs: compare the exception type only there
    same(rtf, lambda m: getattr(m, how)(_data_cases(m)[name]), msg=name != "object")


def test_conversion_with_dtype(rtf: Any) -> None:
    same(rtf, lambda m: m.convert_to_tensor([m.constant(1), 2], dtype=m.float32))
    same(rtf, lambda m: m.constant([[], [1]], dtype=m.int32))
    same(rtf, lambda m: m.constant(2**63))


def test_packing_keeps_gradients(rtf: Any) -> None:
    def run(m: Any) -> Any:
        a = m.Variable(2.0)
        with m.GradientTape() as tape:
            y = m.reduce_sum(m.convert_to_tensor([[a * a, 1.0], [3.0, a]]) ** 2)
        return tape.gradient(y, a)
    same(rtf, run)


# ============================================================================ 5. isinstance
def test_isinstance_answers_as_tensorflow(rtf: Any) -> None:
    def facts(m: Any) -> Any:
        t, v = m.constant([1.0]), m.Variable([1.0])
        return [isinstance(t, m.Tensor), isinstance(v, m.Tensor), isinstance(v, m.Variable),
                isinstance(t, m.Variable), m.is_tensor(t), m.is_tensor(v),
                isinstance(v + 1.0, m.Tensor), isinstance(v.read_value(), m.Tensor),
                isinstance(m.reduce_sum(v), m.Tensor), m.Tensor.__name__]
    same(rtf, facts)


WHOLE_ASSIGNS: dict[str, Callable[[Any, Any], Any]] = {
    "assign_scalar_broadcasts": lambda m, v: v.assign(0.0),
    "assign_add_scalar_refused": lambda m, v: v.assign_add(1.0),
    "assign_sub_wrong_shape": lambda m, v: v.assign_sub([1.0, 2.0]),
    "assign_add_python_ints": lambda m, v: v.assign_add([1, 2, 3]),
    "assign_python_ints": lambda m, v: v.assign([1, 2, 3]),
    "assign_numpy_float64": lambda m, v: v.assign(np.array([1.0, 2.0, 3.0])),
    "assign_wrong_shape": lambda m, v: v.assign([1.0, 2.0]),
    "assign_read_value_false": lambda m, v: v.assign([4.0, 5.0, 6.0], read_value=False),
}


@pytest.mark.parametrize("form", list(WHOLE_ASSIGNS))
def test_whole_variable_assignment_forms(rtf: Any, form: str) -> None:
    def run(m: Any) -> Any:
        v = m.Variable([1.0, 2.0, 3.0])
        out = WHOLE_ASSIGNS[form](m, v)
        return [v, None if out is None else m.convert_to_tensor(out)]
    same(rtf, run, msg=form != "assign_wrong_shape")


def test_indexed_slices_convert_to_dense(rtf: Any) -> None:
    same(rtf, lambda m: m.convert_to_tensor(
        m.IndexedSlices(m.ones([2, 2]), [1, 1], dense_shape=[3, 2])))
    same(rtf, lambda m: m.convert_to_tensor(m.IndexedSlices(m.ones([2, 2]), [1, 1])), msg=False)


# ----------------------------------------------------------------------------- 5: type names
def test_type_names_and_isinstance_as_tensorflow(rtf: Any) -> None:
    for mod in (rtf, tg):
        t, v = mod.constant([1.0, 2.0]), mod.Variable([1.0, 2.0])
        assert type(t).__name__ == "EagerTensor"
        assert type(v).__name__ == "ResourceVariable"
        assert isinstance(t, mod.Tensor) and not isinstance(v, mod.Tensor)
        assert isinstance(v, mod.Variable) and not isinstance(t, mod.Variable)
        assert type(t + 1).__name__ == "EagerTensor" and type(v + 1).__name__ == "EagerTensor"
        assert type(v.read_value()).__name__ == "EagerTensor"
        assert not hasattr(t, "unsqueeze") and hasattr(t, "get_shape")
