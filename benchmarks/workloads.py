"""The five workloads W1-W5: sizes, data, and the hand-written NumPy limit.

Each workload defines its data (seeded), its size in full and ``--quick``
mode, and a hand-written NumPy forward + backward using only the kernels the
computation needs: the physical limit for an autograd engine built on NumPy.
Every implementation (tapegrad or a peer) is a *setup* function
``setup(data) -> run`` where ``run()`` performs one timed forward + backward
(and, for W1, the SGD update) and returns the gradients as NumPy arrays, in
the order of :attr:`Workload.grad_names`, so they can be checked against the
reference in every run.

- W1: MLP 784-256-256-10 (ReLU, softmax cross-entropy, mean over the batch),
  batch 128, float32, one SGD step (lr 0.01).
- W2: 2,000 scalar ops (``y = y * 1.0001 + 0.0001`` x 1000) + backward.
- W3: a 100,000-op elementwise chain on 16 float64 (``y = y * 1.0001 +
  0.0001`` x 50,000, then ``sum``) + backward; peak memory is measured too.
- W4: Hessian-vector product of ``sum(tanh(X @ w))``, X 256x512, float64.
- W5: ``sum((A @ B + bias) ** 2)`` forward + backward, 512x512, float32.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

Data = dict[str, Any]
Run = Callable[[], list[np.ndarray]]
Setup = Callable[[Data], Run]

LR = 0.01
MUL, ADD = 1.0001, 0.0001  # the W2/W3 chain: y = y * MUL + ADD
W1_PARAMS = ("W1", "b1", "W2", "b2", "W3", "b3")


@dataclass
class Workload:
    """One benchmark workload."""

    key: str
    title: str
    sizes: dict[str, int]
    quick_sizes: dict[str, int]
    make_data: Callable[[dict[str, int], int], Data]
    reference: Setup
    grad_names: tuple[str, ...]
    dtype: str
    #: ops per run, for a per-op time (W2)
    ops: Callable[[dict[str, int]], int] | None = None
    #: sizes for the (discarded) warm-up run, when smaller than the measured one
    warmup_sizes: Callable[[dict[str, int]], dict[str, int]] | None = None
    measure_memory: bool = False
    #: a smaller instance (fraction ``f`` of the work) for implementations too slow to
    #: run the full size within ``--max-run`` seconds
    scale: Callable[[dict[str, int], float], dict[str, int]] | None = None
    notes: list[str] = field(default_factory=list)

    def tolerance(self) -> float:
        """Largest accepted error, relative to the largest reference gradient entry."""
        return 2e-3 if self.dtype == "float32" else 1e-7


# ---------------------------------------------------------------------------- W1
def w1_data(sz: dict[str, int], seed: int) -> Data:
    rng = np.random.default_rng(seed)
    d_in, h, out, n = sz["d_in"], sz["hidden"], sz["classes"], sz["batch"]
    f32 = np.float32

    def he(fan_in: int, fan_out: int) -> np.ndarray:
        return (rng.standard_normal((fan_in, fan_out)) * np.sqrt(2.0 / fan_in)).astype(f32)

    return {
        "W1": he(d_in, h), "b1": (0.01 * rng.standard_normal(h)).astype(f32),
        "W2": he(h, h), "b2": (0.01 * rng.standard_normal(h)).astype(f32),
        "W3": he(h, out), "b3": (0.01 * rng.standard_normal(out)).astype(f32),
        "x": rng.standard_normal((n, d_in)).astype(f32),
        "y": rng.integers(0, out, size=n).astype(np.int64),
        "lr": LR,
    }


def w1_numpy(d: Data) -> Run:
    params = [np.array(d[k], copy=True) for k in W1_PARAMS]
    x, y, lr = d["x"], d["y"], d["lr"]
    n = x.shape[0]
    rows = np.arange(n)

    def run() -> list[np.ndarray]:
        W1, b1, W2, b2, W3, b3 = params
        a1 = x @ W1
        a1 += b1
        h1 = np.maximum(a1, 0)
        a2 = h1 @ W2
        a2 += b2
        h2 = np.maximum(a2, 0)
        z = h2 @ W3
        z += b3
        m = z.max(axis=1, keepdims=True)
        e = np.exp(z - m)
        s = e.sum(axis=1, keepdims=True)
        loss = np.mean(np.log(s[:, 0]) + m[:, 0] - z[rows, y])  # noqa: F841 (the forward value)
        dz = e / s
        dz[rows, y] -= 1
        dz /= n
        gW3 = h2.T @ dz
        gb3 = dz.sum(axis=0)
        dh2 = dz @ W3.T
        dh2 *= a2 > 0
        gW2 = h1.T @ dh2
        gb2 = dh2.sum(axis=0)
        dh1 = dh2 @ W2.T
        dh1 *= a1 > 0
        gW1 = x.T @ dh1
        gb1 = dh1.sum(axis=0)
        grads = [gW1, gb1, gW2, gb2, gW3, gb3]
        for p, g in zip(params, grads):
            p -= lr * g
        return grads

    return run


# ---------------------------------------------------------------------------- W2 / W3
def w2_data(sz: dict[str, int], seed: int) -> Data:
    rng = np.random.default_rng(seed)
    return {"x": np.array(rng.uniform(0.5, 1.5)), "n": sz["n"]}


def w2_numpy(d: Data) -> Run:
    x0, n = d["x"], d["n"]

    def run() -> list[np.ndarray]:
        y = x0
        for _ in range(n):
            y = y * MUL + ADD
        g = np.float64(1.0)
        for _ in range(n):  # d(y*a + b)/dy = a
            g = g * MUL
        return [np.asarray(g)]

    return run


def w3_data(sz: dict[str, int], seed: int) -> Data:
    rng = np.random.default_rng(seed)
    return {"x": rng.uniform(-1.0, 1.0, size=sz["width"]), "n": sz["n"]}


def w3_numpy(d: Data) -> Run:
    x0, n = d["x"], d["n"]

    def run() -> list[np.ndarray]:
        y = x0
        for _ in range(n):
            y = y * MUL
            y = y + ADD
        s = y.sum()  # noqa: F841 (the forward value)
        g = np.ones_like(x0)
        for _ in range(n):
            g = g * MUL
        return [g]

    return run


# ---------------------------------------------------------------------------- W4
def w4_data(sz: dict[str, int], seed: int) -> Data:
    rng = np.random.default_rng(seed)
    m, k = sz["rows"], sz["cols"]
    return {
        "X": rng.standard_normal((m, k)) / np.sqrt(k),
        "w": rng.standard_normal(k),
        "v": rng.standard_normal(k),
    }


def w4_numpy(d: Data) -> Run:
    X, w, v = d["X"], d["w"], d["v"]

    def run() -> list[np.ndarray]:
        # f = sum(tanh(X w)); grad = X^T (1 - t^2); H v = X^T (-2 t (1 - t^2) * (X v))
        t = np.tanh(X @ w)
        f = t.sum()  # noqa: F841 (the forward value)
        s = 1.0 - t * t
        u = X @ v
        u *= s
        u *= t
        u *= -2.0
        return [X.T @ u]

    return run


# ---------------------------------------------------------------------------- W5
def w5_data(sz: dict[str, int], seed: int) -> Data:
    rng = np.random.default_rng(seed)
    n = sz["n"]
    f32 = np.float32
    return {
        "A": (rng.standard_normal((n, n)) / np.sqrt(n)).astype(f32),
        "B": rng.standard_normal((n, n)).astype(f32),
        "bias": rng.standard_normal(n).astype(f32),
    }


def w5_numpy(d: Data) -> Run:
    A, B, bias = d["A"], d["B"], d["bias"]

    def run() -> list[np.ndarray]:
        Y = A @ B
        Y += bias
        loss = np.square(Y).sum()  # noqa: F841 (the forward value)
        Y *= 2.0  # dloss/dY
        return [Y @ B.T, A.T @ Y, Y.sum(axis=0)]

    return run


WORKLOADS: dict[str, Workload] = {
    "W1": Workload(
        key="W1",
        title="MLP 784-256-256-10, batch 128, float32, one SGD step",
        sizes={"d_in": 784, "hidden": 256, "classes": 10, "batch": 128},
        quick_sizes={"d_in": 32, "hidden": 16, "classes": 4, "batch": 8},
        make_data=w1_data,
        reference=w1_numpy,
        grad_names=W1_PARAMS,
        dtype="float32",
    ),
    "W2": Workload(
        key="W2",
        title="2,000 scalar ops (y = y*1.0001 + 0.0001 x1000) + backward",
        sizes={"n": 1000},
        quick_sizes={"n": 20},
        make_data=w2_data,
        reference=w2_numpy,
        grad_names=("x",),
        dtype="float64",
        ops=lambda sz: 2 * sz["n"],
    ),
    "W3": Workload(
        key="W3",
        title="100,000-op elementwise chain on 16 float64 + backward",
        sizes={"n": 50_000, "width": 16},
        quick_sizes={"n": 200, "width": 16},
        make_data=w3_data,
        reference=w3_numpy,
        grad_names=("x",),
        dtype="float64",
        ops=lambda sz: 2 * sz["n"],
        warmup_sizes=lambda sz: {"n": min(sz["n"], 500), "width": sz["width"]},
        measure_memory=True,
        scale=lambda sz, f: {"n": max(min(sz["n"], 500), int(sz["n"] * f) // 500 * 500),
                             "width": sz["width"]},
    ),
    "W4": Workload(
        key="W4",
        title="Hessian-vector product of sum(tanh(X @ w)), X 256x512, float64",
        sizes={"rows": 256, "cols": 512},
        quick_sizes={"rows": 8, "cols": 16},
        make_data=w4_data,
        reference=w4_numpy,
        grad_names=("Hv",),
        dtype="float64",
    ),
    "W5": Workload(
        key="W5",
        title="sum((A @ B + bias) ** 2) fwd+bwd, 512x512, float32",
        sizes={"n": 512},
        quick_sizes={"n": 16},
        make_data=w5_data,
        reference=w5_numpy,
        grad_names=("A", "B", "bias"),
        dtype="float32",
    ),
}


def check(grads: list[np.ndarray], ref: list[np.ndarray], tol: float) -> tuple[bool, float]:
    """Compare gradients with the reference: (ok, largest error relative to max |ref|)."""
    if len(grads) != len(ref):
        return False, float("inf")
    worst = 0.0
    for g, r in zip(grads, ref):
        g = np.asarray(g, dtype=np.float64)
        r = np.asarray(r, dtype=np.float64)
        if g.shape != r.shape:
            return False, float("inf")
        scale = float(np.max(np.abs(r))) if r.size else 0.0
        err = float(np.max(np.abs(g - r))) if r.size else 0.0
        if not np.isfinite(err):
            return False, float("inf")
        worst = max(worst, err / (scale if scale > 0 else 1.0))
    return worst <= tol, worst


# W4F, W6/W6L and W7R/W7F/W7L live in benchmarks/transforms.py, which adds them to WORKLOADS
from . import transforms as _transforms  # noqa: E402,F401
