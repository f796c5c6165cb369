"""``tf.distribute`` in one process: ``MirroredStrategy`` (one replica) trains as without a
strategy, ``reduce``/``run``/``experimental_distribute_dataset``/``compute_average_loss``
behave as TensorFlow's with one replica.  Multi-worker runs are in ``tests/distributed``."""

from __future__ import annotations

import numpy as np
import pytest

import tapegrad.tf as tf

keras = tf.keras


def test_mirrored_strategy_basics() -> None:
    s = tf.distribute.MirroredStrategy()
    assert s.num_replicas_in_sync == 1
    assert not tf.distribute.has_strategy()
    with s.scope():
        assert tf.distribute.get_strategy() is s and tf.distribute.in_cross_replica_context()
        v = tf.Variable([1.0, 2.0])
    assert tf.distribute.get_strategy() is not s
    out = s.run(lambda a: a * 2.0, args=(v,))
    np.testing.assert_allclose(out.numpy(), [2.0, 4.0])
    assert float(s.reduce(tf.distribute.ReduceOp.SUM, out, axis=None).numpy()[1]) == 4.0
    assert float(s.reduce(tf.distribute.ReduceOp.MEAN, out, axis=0)) == 3.0
    assert float(s.reduce("SUM", out, axis=0)) == 6.0
    ds = tf.data.Dataset.from_tensor_slices(np.arange(6.0)).batch(4)
    got = [b.numpy().tolist() for b in s.experimental_distribute_dataset(ds)]
    assert got == [[0.0, 1.0, 2.0, 3.0], [4.0, 5.0]]
    loss = tf.nn.compute_average_loss(tf.constant([1.0, 2.0, 3.0]), global_batch_size=6)
    assert float(loss) == 1.0
    assert float(tf.nn.compute_average_loss(tf.constant([1.0, 3.0]))) == 2.0
    with pytest.raises(ValueError, match="Unsupported reduce op"):
        s.reduce("MAX", out, axis=None)


def test_fit_under_mirrored_strategy_equals_plain_fit() -> None:
    rng = np.random.default_rng(0)
    x = rng.standard_normal((32, 4)).astype("float32")
    y = rng.integers(0, 2, size=32)

    def train(strategy: object | None) -> tuple[list[float], list[np.ndarray]]:
        keras.utils.set_random_seed(5)

        def make() -> object:
            m = keras.Sequential([keras.Input(shape=(4,)), keras.layers.Dense(8, "relu"),
                                  keras.layers.Dense(2)])
            m.compile(optimizer=keras.optimizers.Adam(0.01),
                      loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
            return m

        if strategy is None:
            m = make()
        else:
            with strategy.scope():  # type: ignore[attr-defined]
                m = make()
        h = m.fit(x, y, batch_size=8, epochs=2, shuffle=False, verbose=0)  # type: ignore[attr-defined]
        return h.history["loss"], m.get_weights()  # type: ignore[attr-defined]

    plain = train(None)
    mirrored = train(tf.distribute.MirroredStrategy())
    np.testing.assert_allclose(plain[0], mirrored[0], rtol=1e-6)
    for a, b in zip(plain[1], mirrored[1]):
        np.testing.assert_allclose(a, b, rtol=1e-6)


def test_tf_config_must_match_the_mpi_world(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("mpi4py", reason="needs mpi4py: pip install 'tapegrad[distributed]'")
    monkeypatch.setenv("TF_CONFIG", '{"cluster": {"worker": ["a:1", "b:2"]}, '
                       '"task": {"type": "worker", "index": 0}}')
    with pytest.raises(ValueError, match="TF_CONFIG describes 2 tasks"):
        tf.distribute.MultiWorkerMirroredStrategy()
    monkeypatch.setenv("TF_CONFIG", '{"cluster": {"worker": ["a:1"]}, '
                       '"task": {"type": "worker", "index": 0}}')
    s = tf.distribute.MultiWorkerMirroredStrategy()
    assert s.num_replicas_in_sync == 1
