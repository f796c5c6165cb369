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
