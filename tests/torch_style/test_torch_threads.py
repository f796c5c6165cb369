"""Concurrent backward passes into one shared leaf lose no accumulation."""

from __future__ import annotations

import threading

import numpy as np

import tapegrad.torch as torch


def test_concurrent_backward_on_a_shared_leaf() -> None:
    w = torch.zeros(1_000_000, requires_grad=True)
    n_threads, steps = 4, 25
    barrier = threading.Barrier(n_threads)
    errors: list[BaseException] = []

    def work() -> None:
        try:
            barrier.wait()
            for _ in range(steps):
                ((w * 2.0).sum() + (w * 1.0).sum()).backward()
        except BaseException as e:  # noqa: BLE001  (reported below)
            errors.append(e)

    threads = [threading.Thread(target=work) for _ in range(n_threads)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    np.testing.assert_array_equal(w.grad.numpy(), np.full(1_000_000, 3.0 * n_threads * steps))
