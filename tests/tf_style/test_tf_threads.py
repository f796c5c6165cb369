"""Concurrent Keras apply_gradients on shared variables loses no update."""

from __future__ import annotations

import threading

import numpy as np

import tapegrad.tf as tf


def test_concurrent_apply_gradients() -> None:
    v = tf.Variable(np.zeros(1_000_000, np.float32))
    opt = tf.keras.optimizers.SGD(learning_rate=1.0)
    n_threads, steps = 4, 25
    barrier = threading.Barrier(n_threads)
    errors: list[BaseException] = []

    def work() -> None:
        try:
            barrier.wait()
            for _ in range(steps):
                opt.apply_gradients([(tf.constant(np.full(1_000_000, -1.0, np.float32)), v)])
        except BaseException as e:  # noqa: BLE001  (reported below)
            errors.append(e)

    threads = [threading.Thread(target=work) for _ in range(n_threads)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    np.testing.assert_array_equal(v.numpy(), np.full(1_000_000, float(n_threads * steps)))
    assert int(opt.iterations.numpy()) == n_threads * steps
