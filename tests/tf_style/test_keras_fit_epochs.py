"""How ``fit`` reads a ``tf.data.Dataset`` from epoch to epoch, as Keras 3's
``EpochIterator`` does: iterators are made when Keras makes them (a reshuffling
dataset moves on two orders per epoch with a known length), and running out of data
warns.  Orders are checked against the dataset's own successive iterations."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

import tapegrad.tf as tf
from tapegrad.tf import keras


def _data() -> tuple[Any, Any]:
    keras.utils.set_random_seed(1)
    x = tf.random.normal((40, 3))
    return x, tf.cast(tf.range(40), tf.float32)[:, None]


def _shuffled(x: Any, y: Any) -> Any:
    return tf.data.Dataset.from_tensor_slices((x, y)).shuffle(40, seed=3)


def _firsts(ds: Any, n: int) -> list[int]:
    """The first label of each of ``n`` successive iterations of ``ds``."""
    return [int(next(iter(ds))[1].numpy().ravel()[0]) for _ in range(n)]


def _fit_firsts(ds: Any, **kw: Any) -> tuple[list[int], list[str]]:
    inp = keras.Input(shape=(3,))
    model = keras.Model(inp, keras.layers.Dense(1)(inp))
    model.compile(optimizer="sgd", loss="mse", run_eagerly=True)
    seen: list[int] = []
    step = model.train_step

    def train_step(data: Any) -> Any:
        seen.append(int(data[1].numpy()[0, 0]))
        return step(data)

    model.train_step = train_step  # type: ignore[method-assign]
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        model.fit(ds, verbose=0, shuffle=False, **kw)
    return seen, [str(m.message) for m in w if "ran out of data" in str(m.message)]


def test_known_length_makes_two_iterators_per_epoch() -> None:
    x, y = _data()
    orders = _firsts(_shuffled(x, y).batch(8), 9)
    assert len(set(orders)) > 4  # the dataset does reshuffle
    seen, ran_out = _fit_firsts(_shuffled(x, y).batch(8), epochs=4)
    assert seen[::5] == orders[0:8:2]  # epoch k reads the order of iteration 2k
    assert ran_out == []


def test_steps_per_epoch_goes_on_with_the_iterator_made_at_the_end() -> None:
    x, y = _data()
    orders = _firsts(_shuffled(x, y).batch(8), 4)
    seen, ran_out = _fit_firsts(_shuffled(x, y).batch(8), epochs=3, steps_per_epoch=5)
    assert [seen[0], seen[5], seen[10]] == orders[:3]
    # 3 steps of 2 a pass: 3 + 2 (the pass ends, warns) + 3 ...
    seen, ran_out = _fit_firsts(_shuffled(x, y).batch(8), epochs=3, steps_per_epoch=3)
    assert len(seen) == 3 + 2 + 3 and len(ran_out) == 1


def test_unknown_length_warns_each_epoch_and_reads_one_iterator() -> None:
    x, y = _data()
    ds = _shuffled(x, y).filter(lambda a, b: b[0] < 30).batch(8)
    orders = _firsts(_shuffled(x, y).filter(lambda a, b: b[0] < 30).batch(8), 3)
    seen, ran_out = _fit_firsts(ds, epochs=3)
    assert len(seen) == 12 and seen[::4] == orders
    assert len(ran_out) == 3


def test_an_iterator_takes_its_shuffle_seeds_when_made() -> None:
    x, y = _data()
    ds = _shuffled(x, y)
    orders = _firsts(ds, 3)
    ds = _shuffled(x, y)
    it1, it2 = iter(ds), iter(ds)
    assert int(next(it2)[1].numpy()[0]) == orders[1]
    assert int(next(it1)[1].numpy()[0]) == orders[0]
    # a finished cache makes no input iterator: later passes draw no seeds
    sh = _shuffled(x, y)
    cached = sh.cache()
    passes = [[int(v[1].numpy()[0]) for v in cached] for _ in range(3)]
    assert passes[0] == passes[1] == passes[2]
    assert np.array_equal(sorted(passes[0]), np.arange(40))
    assert passes[0][0] == orders[0] and int(next(iter(sh))[1].numpy()[0]) == orders[1]
