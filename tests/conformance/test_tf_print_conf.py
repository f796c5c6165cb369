"""``tf.print``'s text on tapegrad and on real TensorFlow 2.21 (the ``PrintV2`` kernel's
formatting: shortest round-trip floats, summarised dimensions, structures, separators)."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import tapegrad.tf as tg
from tests.tf_style.tf_helpers import real_tf


def _programs() -> dict[str, Callable[[Any], None]]:
    rng = np.random.default_rng(3)
    f32 = rng.normal(size=(4, 9)).astype(np.float32) * np.float32(10) ** rng.integers(
        -9, 9, (4, 9)).astype(np.float32)
    f64 = rng.normal(size=(3, 3)) * 10.0 ** rng.integers(-30, 30, (3, 3))

    def out(tf: Any, *a: Any, **k: Any) -> None:
        tf.print(*a, output_stream=sys.stdout, **k)

    return {
        "scalars": lambda tf: out(tf, tf.constant(3.0), tf.constant(3.5), tf.constant(0.1),
                                  tf.constant(1 / 3), tf.constant(123456789.0),
                                  tf.constant(2.5e10), tf.constant(1e-7)),
        "special": lambda tf: out(tf, tf.constant(float("nan")), tf.constant(-float("nan")),
                                  tf.constant(float("inf")), tf.constant(-float("inf")),
                                  tf.constant(1e-45), tf.constant(3.4028235e38)),
        "float32_values": lambda tf: out(tf, tf.constant(f32), summarize=-1),
        "float64_values": lambda tf: out(tf, tf.constant(f64), tf.constant(0.1, tf.float64),
                                         tf.constant(5e-324, tf.float64)),
        "float16": lambda tf: out(tf, tf.constant([0.1, 65504.0, 1e-4], tf.float16)),
        "ints_bools": lambda tf: out(tf, tf.constant([True, False]), tf.constant(True),
                                     tf.constant(2**31 - 1), tf.constant(-5, tf.int64),
                                     tf.constant(7, tf.uint8)),
        "summarized": lambda tf: [out(tf, tf.range(20)),
                                  out(tf, tf.reshape(tf.range(70), [7, 10])),
                                  out(tf, tf.reshape(tf.range(70), [7, 10]), summarize=1),
                                  out(tf, tf.reshape(tf.range(70), [7, 10]), summarize=-1),
                                  out(tf, tf.reshape(tf.range(24), [2, 3, 4]))],
        "empty": lambda tf: [out(tf, tf.zeros([0])), out(tf, tf.zeros([2, 0]))],
        "python_values": lambda tf: [out(tf, "a", 1, 2.5, None, [1, 2]),
                                     out(tf, "a", "b", sep=",", end="!\n")],
        "structures": lambda tf: out(tf, [tf.constant(1.5), 2, "s"], {"a": tf.constant([1, 2])},
                                     (tf.constant(1), (2, tf.constant(3.0)))),
        "variable": lambda tf: out(tf, "v:", tf.Variable([1.0, 2.5])),
        "in_function": lambda tf: [tf.function(lambda x: out(tf, "x =", x * 2))(
            tf.constant(v)) for v in (1.0, 2.25)],
    }


PROGRAMS = _programs()


@pytest.fixture(scope="module")
def rtf() -> Any:
    return real_tf()


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_same_text_as_tensorflow(rtf: Any, name: str, capfd: pytest.CaptureFixture[str]
                                 ) -> None:
    PROGRAMS[name](rtf)
    sys.stdout.flush()
    real = capfd.readouterr().out
    PROGRAMS[name](tg)
    sys.stdout.flush()
    mine = capfd.readouterr().out
    assert real.strip() and mine == real
