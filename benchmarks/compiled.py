"""Compiled variants: W1 with ``@tf.function`` and ``torch.compile``, W2 and W3 with
``@tf.function``, on tapegrad and on the real frameworks.

The setups are the eager ones of :mod:`benchmarks.impls` with the step wrapped:
the TensorFlow-style step in ``tf.function``, the PyTorch-style step (zero_grad,
forward, backward, optimizer step) in ``torch.compile``.  W2 and W3 return the
forward value with the gradient, so the forward chain is part of the program
(the gradient of ``y * a + b`` does not depend on ``x``: tracing folds it to a
constant, as XLA or Grappler would).  Each setup traces (compiles) its function
before the timed run (W1 restores the parameters afterwards); ``python -m benchmarks.compiled`` prints W1's first-call
tracing time for each style, as a ratio to one hand-NumPy step measured in the
same process.
"""

from __future__ import annotations

import argparse
import time
from typing import Any

import numpy as np

from .workloads import ADD, MUL, W1_PARAMS, WORKLOADS, Data, Run, Setup


def tf_compiled_setups(tf: Any, pretrace: bool = True) -> dict[str, Setup]:
    """W1, W2, W3 with the TensorFlow-style step in ``tf.function`` (traced in the setup
    unless ``pretrace=False``)."""

    def w1(d: Data) -> Run:
        variables = [tf.Variable(d[k]) for k in W1_PARAMS]
        x = tf.constant(d["x"])
        onehot = tf.constant(np.eye(d["W3"].shape[1], dtype=np.float32)[d["y"]])
        opt = tf.keras.optimizers.SGD(learning_rate=d["lr"])

        @tf.function
        def step(x: Any, onehot: Any) -> Any:
            W1, b1, W2, b2, W3, b3 = variables
            with tf.GradientTape() as tape:
                h = tf.nn.relu(tf.matmul(x, W1) + b1)
                h = tf.nn.relu(tf.matmul(h, W2) + b2)
                z = tf.matmul(h, W3) + b3
                loss = tf.reduce_mean(
                    tf.nn.softmax_cross_entropy_with_logits(labels=onehot, logits=z))
            grads = tape.gradient(loss, variables)
            opt.apply_gradients(zip(grads, variables))
            return grads

        if pretrace:
            step.get_concrete_function(x, onehot)  # trace now (untimed); runs nothing
        return lambda: [g.numpy() for g in step(x, onehot)]

    def chain(d: Data, total: bool) -> Run:
        x, n = tf.constant(d["x"]), d["n"]

        @tf.function
        def f(x: Any) -> Any:
            with tf.GradientTape() as tape:
                tape.watch(x)
                y = x
                for _ in range(n):
                    y = y * MUL + ADD
                s = tf.reduce_sum(y) if total else y
            return s, tape.gradient(s, x)

        def run() -> list[np.ndarray]:
            _, g = f(x)
            return [g.numpy()]

        if pretrace:
            f(x)  # trace now (untimed)
        return run

    out: dict[str, Setup] = {"W1": w1, "W2": lambda d: chain(d, False)}
    if tf.__name__ != "tensorflow":
        # real TensorFlow builds (and Grappler optimizes) a 200,000-node graph for W3's
        # forward and backward: minutes per trace here, so it is left out
        out["W3"] = lambda d: chain(d, True)
    return out


def torch_compiled_setups(torch: Any, pretrace: bool = True) -> dict[str, Setup]:
    """W1 with the PyTorch-style step (zero_grad, forward, backward, step) compiled (and
    traced in the setup, the parameters restored after, unless ``pretrace=False``)."""

    def w1(d: Data) -> Run:
        params = [torch.tensor(d[k], requires_grad=True) for k in W1_PARAMS]
        x, y = torch.tensor(d["x"]), torch.tensor(d["y"])
        opt = torch.optim.SGD(params, lr=d["lr"])
        F = torch.nn.functional

        @torch.compile
        def step(x: Any, y: Any) -> Any:
            W1, b1, W2, b2, W3, b3 = params
            opt.zero_grad()
            h = torch.relu(x @ W1 + b1)
            h = torch.relu(h @ W2 + b2)
            loss = F.cross_entropy(h @ W3 + b3, y)
            loss.backward()
            opt.step()
            return loss

        def run() -> list[np.ndarray]:
            step(x, y)
            return [p.grad.numpy() for p in params]

        if pretrace:  # trace (compile) now, untimed, then put the parameters back
            saved = [p.detach().numpy().copy() for p in params]
            step(x, y)
            with torch.no_grad():
                for p, v in zip(params, saved):
                    p.copy_(torch.tensor(v))
        return run

    return {"W1": w1}


def tracing_cost(repeats: int = 5, quick: bool = False) -> dict[str, Any]:
    """W1's first call (trace + run) in each style, with hand NumPy's step in the same run.

    Times are this process's CPU time (``time.process_time``), steadier than wall time
    on a shared machine; with one BLAS thread they equal the work done.  ``tracing_ms``
    is the first call's time minus a replay's."""
    import tapegrad.tf as tf
    import tapegrad.torch as torch

    w = WORKLOADS["W1"]
    data = w.make_data(w.quick_sizes if quick else w.sizes, 0)
    hand = w.reference(data)
    hand()
    out: dict[str, Any] = {}
    for name, build in (("tapegrad.tf @tf.function", tf_compiled_setups(tf, False)["W1"]),
                        ("tapegrad.torch torch.compile",
                         torch_compiled_setups(torch, False)["W1"])):
        firsts, steps, hands = [], [], []
        for _ in range(repeats):
            run = build(data)
            t0 = time.process_time()
            run()
            firsts.append(time.process_time() - t0)
            t0 = time.process_time()
            run()
            steps.append(time.process_time() - t0)
            t0 = time.process_time()
            hand()
            hands.append(time.process_time() - t0)
        first, step, h = (float(np.median(v)) for v in (firsts, steps, hands))
        out[name] = {"first_call_ms": first * 1e3, "replay_ms": step * 1e3,
                     "hand_numpy_ms": h * 1e3, "tracing_ms": (first - step) * 1e3}
    return out


def cpu_ratios(keys: tuple[str, ...] = ("W1", "W2", "W3"), rounds: int = 9,
               peers: bool = True) -> dict[str, dict[str, float]]:
    """Median CPU-time ratios to hand NumPy (paired run by run, ``time.process_time``):
    tapegrad eager and compiled in both styles, and the real frameworks' compiled
    functions where installed.  Steadier than wall time on a shared machine."""
    import importlib

    from .impls import IMPLS

    builds = {i.name: i.build for i in IMPLS}
    mods: dict[str, Any] = {"tapegrad.tf": importlib.import_module("tapegrad.tf"),
                            "tapegrad.torch": importlib.import_module("tapegrad.torch")}
    variants: dict[str, dict[str, Setup]] = {
        "tapegrad.tf (tape)": builds["tapegrad.tf (tape)"](mods["tapegrad.tf"]),
        "tapegrad.tf (@tf.function)": tf_compiled_setups(mods["tapegrad.tf"]),
        "tapegrad.torch (backward)": builds["tapegrad.torch (backward)"](mods["tapegrad.torch"]),
        "tapegrad.torch (torch.compile)": torch_compiled_setups(mods["tapegrad.torch"]),
    }
    if peers:
        for mod, name, fn in (("tensorflow", "TensorFlow (tf.function)", tf_compiled_setups),
                              ("torch", "PyTorch (torch.compile)", torch_compiled_setups)):
            try:
                variants[name] = fn(importlib.import_module(mod))
            except ImportError:
                pass
    out: dict[str, dict[str, float]] = {}
    for key in keys:
        w = WORKLOADS[key]
        data = w.make_data(w.sizes, 0)
        hand = w.reference(data)
        ref = hand()
        row: dict[str, float] = {"hand_numpy_ms": 0.0}
        hs: list[float] = []
        for name, setups in variants.items():
            if key not in setups:
                continue
            run = setups[key](data)
            got = run()
            tol = w.tolerance() * max(float(np.abs(r).max()) for r in ref)
            if not all(np.abs(np.asarray(a) - b).max() <= tol for a, b in zip(got, ref)):
                row[name] = float("nan")  # wrong gradients: no figure
                continue
            rs = []
            for _ in range(rounds):
                t0 = time.process_time()
                hand()
                th = time.process_time() - t0
                t0 = time.process_time()
                run()
                tr = time.process_time() - t0
                rs.append(tr / max(th, 1e-9))
                hs.append(th)
            row[name] = float(np.median(rs))
        row["hand_numpy_ms"] = float(np.median(hs)) * 1e3
        out[key] = row
    return out


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(prog="python -m benchmarks.compiled",
                                description="W1's first-call tracing time (both styles) "
                                "and CPU-time ratios of the compiled variants")
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--quick", action="store_true",
                   help="W1's quick sizes: the first call is then almost all tracing")
    p.add_argument("--ratios", action="store_true",
                   help="also W1-W3's CPU-time ratios to hand NumPy (eager and compiled)")
    args = p.parse_args(argv)
    if args.ratios:
        for key, row in cpu_ratios().items():
            cells = ", ".join(f"{k} {v:.2f}x" for k, v in row.items() if k != "hand_numpy_ms")
            print(f"{key} (hand NumPy {row['hand_numpy_ms']:.3g} ms CPU): {cells}")
    for name, r in tracing_cost(args.repeats, args.quick).items():
        print(f"{name:32s} first call {r['first_call_ms']:7.1f} ms  (tracing "
              f"{r['tracing_ms']:6.1f} ms; replay {r['replay_ms']:6.2f} ms; hand NumPy "
              f"{r['hand_numpy_ms']:6.2f} ms)")


if __name__ == "__main__":
    main()

_ = (ADD, MUL)
