"""Memory benchmarks (issue 6, item 3).

- W1 training for 100 steps: memory held after each step and the peak within
  each step, measured with ``tracemalloc`` (which sees every NumPy buffer and
  every Python object, so every node and saved array of a NumPy-based
  engine).  After a few warm-up steps the held memory must stay flat: no graph
  survives a step.
- A persistent tape against a non-persistent one (and, PyTorch style,
  ``retain_graph=True`` against the default): peak memory of one W1 forward +
  gradient, what is still held after the gradient call while the tape (or the
  loss) is alive, and after it is released.  A non-persistent tape frees each
  node's saved arrays during the backward pass; a persistent one keeps them
  until the tape is deleted.
"""

from __future__ import annotations

import gc
import tracemalloc
from collections.abc import Callable
from typing import Any

import numpy as np

from .workloads import W1_PARAMS, Data, Run

MB = 1024.0 * 1024.0


def steps_profile(setup: Callable[[Data], Run], data: Data, steps: int,
                  warmup: int = 50) -> dict[str, Any]:
    """Held and peak memory (MB, relative to after setup) for ``steps`` W1 steps."""
    gc.collect()
    tracemalloc.start()
    try:
        run = setup(data)
        gc.collect()
        base = tracemalloc.get_traced_memory()[0]
        held: list[float] = []
        peaks: list[float] = []
        for _ in range(steps):
            tracemalloc.reset_peak()
            run()
            cur, peak = tracemalloc.get_traced_memory()
            held.append((cur - base) / MB)
            peaks.append((peak - base) / MB)
    finally:
        tracemalloc.stop()
    after = held[warmup:] if len(held) > warmup else held
    growth = (max(after) - min(after)) if after else 0.0
    # flat: held memory after warm-up grows by less than 10% of one step's peak.  A step
    # that kept its graph or its gradients would add at least the size of the gradients
    # (here most of a step's peak) every step; what remains below that is Python's own
    # free lists and caches filling up, which stops by itself (a few KB per step, then 0)
    flat = growth <= max(0.10 * float(np.median(peaks)) if peaks else 0.0, 64 / 1024)
    return {
        "steps": steps,
        "warmup_steps": warmup,
        "held_mb": [round(v, 4) for v in held],
        "peak_mb": [round(v, 4) for v in peaks],
        "median_peak_mb": float(np.median(peaks)) if peaks else 0.0,
        "held_growth_after_warmup_mb": round(growth, 4),
        "flat": bool(flat),
    }


def _measure(forward: Callable[[], Any], backward: Callable[[Any], Any]) -> dict[str, float]:
    """Run forward then backward under tracemalloc; report MB at each stage."""
    gc.collect()
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        handle = forward()
        after_fwd = tracemalloc.get_traced_memory()[0]
        grads = backward(handle)
        gc.collect()
        after_grad = tracemalloc.get_traced_memory()[0]
        peak = tracemalloc.get_traced_memory()[1]
        del handle
        gc.collect()
        after_release = tracemalloc.get_traced_memory()[0]
        del grads
    finally:
        tracemalloc.stop()
    return {
        "peak_mb": round((peak - base) / MB, 3),
        "after_forward_mb": round((after_fwd - base) / MB, 3),
        "held_after_gradient_mb": round((after_grad - base) / MB, 3),
        "after_release_mb": round((after_release - base) / MB, 3),
        # what the tape (or retained graph) still holds once the gradients are computed
        "held_by_graph_mb": round((after_grad - after_release) / MB, 3),
    }


def tape_persistence(tf: Any, data: Data) -> dict[str, dict[str, float]]:
    """W1 forward + gradient with ``GradientTape(persistent=False/True)`` (TF style)."""
    variables = [tf.Variable(data[k]) for k in W1_PARAMS]
    x = tf.constant(data["x"])
    onehot = tf.constant(np.eye(data["W3"].shape[1], dtype=np.float32)[data["y"]])
    out: dict[str, dict[str, float]] = {}
    for persistent in (False, True):

        def forward(persistent: bool = persistent) -> Any:
            W1, b1, W2, b2, W3, b3 = variables
            tape = tf.GradientTape(persistent=persistent)
            with tape:
                h = tf.nn.relu(tf.matmul(x, W1) + b1)
                h = tf.nn.relu(tf.matmul(h, W2) + b2)
                z = tf.matmul(h, W3) + b3
                loss = tf.reduce_mean(
                    tf.nn.softmax_cross_entropy_with_logits(labels=onehot, logits=z))
            return [tape, loss]

        def backward(handle: list[Any]) -> Any:
            tape, loss = handle
            return tape.gradient(loss, variables)

        out["persistent" if persistent else "non-persistent"] = _measure(forward, backward)
    return out


def retain_graph(torch: Any, data: Data) -> dict[str, dict[str, float]]:
    """W1 forward + backward with ``retain_graph=False/True`` (PyTorch style)."""
    params = [torch.tensor(data[k], requires_grad=True) for k in W1_PARAMS]
    x, y = torch.tensor(data["x"]), torch.tensor(data["y"])
    F = torch.nn.functional
    out: dict[str, dict[str, float]] = {}
    for retain in (False, True):

        def forward() -> Any:
            W1, b1, W2, b2, W3, b3 = params
            h = torch.relu(x @ W1 + b1)
            h = torch.relu(h @ W2 + b2)
            return [F.cross_entropy(h @ W3 + b3, y)]

        def backward(handle: list[Any], retain: bool = retain) -> Any:
            for p in params:
                p.grad = None
            handle[0].backward(retain_graph=retain)
            return [p.grad for p in params]

        out["retain_graph=True" if retain else "retain_graph=False"] = _measure(forward, backward)
    return out
