"""Helpers shared by the TensorFlow-style tests and the TensorFlow conformance suite.

``run_case(tf, case, dtype)`` runs one op case on a TensorFlow-like module
(``tapegrad.tf`` or real ``tensorflow``) and returns the forward values and
the gradients (``tape.gradient`` of ``sum(out * u)`` with fixed weights
``u``) as NumPy arrays, so the two frameworks can be compared directly.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest


def real_tf() -> Any:
    """Real TensorFlow, imported once (skips the test when it is not installed)."""
    import pytest

    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    return pytest.importorskip("tensorflow")


def _outs(out: Any) -> list[Any]:
    return list(out) if isinstance(out, (list, tuple)) else [out]


def weights_for(shapes: list[tuple[int, ...]], seed: int = 7) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.uniform(0.5, 1.5, s) for s in shapes]


def run_case(tf: Any, fn: Any, arrays: tuple[np.ndarray, ...], seed: int = 7
             ) -> tuple[list[np.ndarray], list[np.ndarray | None]]:
    """Forward values and first-order gradients of ``fn`` on module ``tf``."""
    xs = [tf.constant(a) for a in arrays]
    diff = [x for a, x in zip(arrays, xs) if a.dtype.kind == "f"]
    with tf.GradientTape() as tape:
        for x in diff:
            tape.watch(x)
        outs = _outs(fn(tf, *xs))
        us = weights_for([tuple(o.shape) for o in outs], seed)
        total = None
        for o, u in zip(outs, us):
            term = tf.reduce_sum(o * tf.constant(u.astype(o.numpy().dtype)))
            total = term if total is None else total + term
    grads = tape.gradient(total, diff)
    return ([np.asarray(o.numpy()) for o in outs],
            [None if g is None else np.asarray(tf.convert_to_tensor(g).numpy()) for g in grads])


def run_case_second(tf: Any, fn: Any, arrays: tuple[np.ndarray, ...], seed: int = 7
                    ) -> list[np.ndarray | None]:
    """Second order with nested tapes: d/dx <grad_x sum(out * u), w>."""
    xs = [tf.constant(a) for a in arrays]
    diff = [x for a, x in zip(arrays, xs) if a.dtype.kind == "f"]
    rng = np.random.default_rng(seed + 1)
    ws = [rng.uniform(0.5, 1.5, tuple(x.shape)) for x in diff]
    with tf.GradientTape() as outer:
        for x in diff:
            outer.watch(x)
        with tf.GradientTape() as inner:
            for x in diff:
                inner.watch(x)
            outs = _outs(fn(tf, *xs))
            us = weights_for([tuple(o.shape) for o in outs], seed)
            total = None
            for o, u in zip(outs, us):
                term = tf.reduce_sum(o * tf.constant(u.astype(o.numpy().dtype)))
                total = term if total is None else total + term
        gs = inner.gradient(total, diff)
        h = None
        for g, w in zip(gs, ws):
            if g is None:
                continue
            g = tf.convert_to_tensor(g)
            term = tf.reduce_sum(g * tf.constant(w.astype(g.numpy().dtype)))
            h = term if h is None else h + term
    if h is None:
        return [None for _ in diff]
    g2 = outer.gradient(h, diff)
    return [None if g is None else np.asarray(tf.convert_to_tensor(g).numpy()) for g in g2]


def numeric_grads(tf: Any, fn: Any, arrays: tuple[np.ndarray, ...], seed: int = 7,
                  eps: float = 1e-6) -> list[np.ndarray]:
    """Central finite differences of ``sum(out * u)`` with respect to each float input."""
    def f(arrs: list[np.ndarray]) -> float:
        outs = _outs(fn(tf, *[tf.constant(a) for a in arrs]))
        us = weights_for([tuple(o.shape) for o in outs], seed)
        return float(sum(np.sum(np.asarray(o.numpy(), dtype=np.float64) * u)
                         for o, u in zip(outs, us)))

    base = [np.array(a, copy=True) for a in arrays]
    out = []
    for i, a in enumerate(arrays):
        if a.dtype.kind != "f":
            continue
        g = np.zeros_like(a, dtype=np.float64)
        for idx in np.ndindex(a.shape):
            plus = [b.copy() for b in base]
            minus = [b.copy() for b in base]
            plus[i][idx] += eps
            minus[i][idx] -= eps
            g[idx] = (f(plus) - f(minus)) / (2 * eps)
        out.append(g)
    return out


def numeric_second(tf: Any, fn: Any, arrays: tuple[np.ndarray, ...], seed: int = 7,
                   eps: float = 1e-5) -> list[np.ndarray]:
    """Finite differences of h(x) = <grad sum(out * u), w> (the second-order check)."""
    rng = np.random.default_rng(seed + 1)
    diff_idx = [i for i, a in enumerate(arrays) if a.dtype.kind == "f"]
    ws = [rng.uniform(0.5, 1.5, arrays[i].shape) for i in diff_idx]

    def h(arrs: list[np.ndarray]) -> float:
        _, gs = run_case(tf, fn, tuple(arrs), seed)
        return float(sum(np.sum(g * w) for g, w in zip(gs, ws) if g is not None))

    base = [np.array(a, copy=True) for a in arrays]
    out = []
    for i in diff_idx:
        a = arrays[i]
        g = np.zeros_like(a, dtype=np.float64)
        for idx in np.ndindex(a.shape):
            plus = [b.copy() for b in base]
            minus = [b.copy() for b in base]
            plus[i][idx] += eps
            minus[i][idx] -= eps
            g[idx] = (h(plus) - h(minus)) / (2 * eps)
        out.append(g)
    return out


@pytest.fixture
def exact_sums() -> Iterator[None]:
    """TensorFlow's float32 summation orders on for one test
    (``tf.config.set_exact_float32_sums``), restored after it."""
    from tapegrad.ops._tf_eigen import EXACT_SUMS

    old = EXACT_SUMS[0]
    EXACT_SUMS[0] = True
    yield
    EXACT_SUMS[0] = old
