"""Conformance: the batches ``fit`` reads from a reshuffling ``tf.data.Dataset``,
epoch after epoch, and the ``ran out of data`` warnings, against real Keras 3 (its
``EpochIterator`` makes a second iterator at each epoch's end when the length is
known).  Skipped without TensorFlow."""

from __future__ import annotations

import warnings
from typing import Any

import pytest

import tapegrad.tf as tg_tf
from tests.tf_style.tf_helpers import real_tf


@pytest.fixture(scope="module")
def rtf():  # type: ignore[no-untyped-def]
    return real_tf()


def _program(tf: Any, case: str) -> tuple[list[int], int, int]:
    keras = tf.keras
    keras.utils.set_random_seed(1)
    x = tf.random.normal((60, 3))
    y = tf.cast(tf.range(60), tf.float32)[:, None]

    def make() -> Any:
        ds = tf.data.Dataset.from_tensor_slices((x, y)).shuffle(60, seed=3)
        if "unknown" in case:
            ds = ds.filter(lambda a, b: b[0] < 45)
        return ds.batch(8)

    inp = keras.Input(shape=(3,))
    model = keras.Model(inp, keras.layers.Dense(1)(inp))
    model.compile(optimizer="sgd", loss="mse", run_eagerly=True)
    seen: list[int] = []
    step = model.train_step

    def train_step(data: Any) -> Any:
        seen.append(int(data[1].numpy()[0, 0]))
        return step(data)

    model.train_step = train_step
    ds = make()
    kw: dict[str, Any] = {}
    if "steps" in case:
        kw["steps_per_epoch"] = int(case.rsplit("steps", 1)[1])
    if "val" in case:
        kw["validation_data"] = ds
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        model.fit(ds, epochs=3, verbose=0, shuffle=False, **kw)
        model.evaluate(ds, verbose=0)
    ran_out = sum("ran out of data" in str(m.message) for m in w)
    return seen, ran_out, int(next(iter(ds))[1].numpy()[0, 0])


@pytest.mark.parametrize("case", ["known", "val", "steps3", "steps12", "unknown",
                                  "unknown-steps3"])
def test_fit_reads_the_orders_keras_reads(rtf: Any, case: str) -> None:
    assert _program(tg_tf, case) == _program(rtf, case)


def test_iterators_draw_shuffle_seeds_when_made(rtf: Any) -> None:
    def run(tf: Any) -> list[int]:
        tf.random.set_seed(5)
        sh = tf.data.Dataset.from_tensor_slices(tf.range(12)).shuffle(12, seed=2)
        out = [int(next(iter(sh))) for _ in range(2)]
        a, b = iter(sh), iter(sh)
        out += [int(next(b)), int(next(a))]
        c = sh.cache()
        out += [int(next(iter(c))) for _ in range(1)]
        out += [int(v) for v in c][:2] + [int(v) for v in c][:2]
        return out + [int(next(iter(sh.repeat(2).batch(5))) [0])]
    assert run(tg_tf) == run(rtf)
