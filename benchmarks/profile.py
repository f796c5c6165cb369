"""``python -m benchmarks.profile``: where the time of each workload goes, per style.

For each workload (W1-W5 of :mod:`benchmarks.workloads`, the same code as the
benchmark runs) and each tapegrad style (the core API, ``tapegrad.torch``,
``tapegrad.tf``) it reports:

- the run's time (the process's CPU time, best of ``--repeats``, one BLAS
  thread, so that other processes on a busy machine count little; garbage
  collection on, as in a user's program; other frameworks' modules frozen out
  of the collector as ``python -m benchmarks`` does) and what share of it the
  backward pass (``engine.run_backward``) takes;
- the Python function calls per run, and per op where the workload has a
  count of ops (W2, W3): deterministic, so a change that saves calls shows
  even on a busy machine;
- the cyclic garbage collector's share: collections per generation and the
  time they took (``gc.callbacks``);
- the functions with the most time of their own (cProfile ``tottime``, on the CPU clock).

``--parts`` adds what one W2 step costs piece by piece (each piece timed
alone).  ``--stages`` adds, for the W2/W3 chain (``y = y * 1.0001 + 0.0001``), the
cost per op of each stage: the forward with nothing tracked, the recording
forward, and the backward pass.  ``--sizes quick`` uses the small sizes.
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import pstats
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    __package__ = "benchmarks"

import numpy as np

from benchmarks.impls import IMPLS
from benchmarks.workloads import ADD, MUL, WORKLOADS, Run

STYLES = {"core": "tapegrad core (backward)", "torch": "tapegrad.torch (backward)",
          "tf": "tapegrad.tf (tape)"}
MODULES = {"core": "tapegrad", "torch": "tapegrad.torch", "tf": "tapegrad.tf"}


def _cpu_best(run: Run, repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        gc.collect()
        t0 = time.process_time()
        run()
        best = min(best, time.process_time() - t0)
    return best


class _GCWatch:
    """Collections per generation and the (CPU) time they took, while active."""

    def __init__(self) -> None:
        self.count = [0, 0, 0]
        self.seconds = [0.0, 0.0, 0.0]
        self._t0 = 0.0

    def __call__(self, phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            self._t0 = time.process_time()
        else:
            g = int(info["generation"])
            self.count[g] += 1
            self.seconds[g] += time.process_time() - self._t0

    def __enter__(self) -> _GCWatch:
        gc.callbacks.append(self)
        return self

    def __exit__(self, *exc: object) -> None:
        gc.callbacks.remove(self)


def profile_run(run: Run, top: int) -> dict[str, Any]:
    """cProfile one run: calls, the backward share and the top functions by own time."""
    gc.collect()
    prof = cProfile.Profile(time.process_time)
    prof.enable()
    run()
    prof.disable()
    st = pstats.Stats(prof)
    raw: dict[Any, Any] = st.stats  # type: ignore[attr-defined]
    calls = sum(v[1] for v in raw.values())  # primitive + recursive calls
    total = sum(v[2] for v in raw.values())  # sum of own times = the profiled run
    bwd = sum(v[3] for k, v in raw.items() if k[2] == "run_backward" and "engine" in k[0])
    rows = sorted(raw.items(), key=lambda kv: -kv[1][2])[:top]
    funcs = [{"function": _fname(k), "calls": v[1], "own_ms": v[2] * 1e3} for k, v in rows]
    return {"calls": calls, "profiled_s": total, "backward_share": bwd / total if total else 0.0,
            "top": funcs}


def _fname(k: tuple[str, int, str]) -> str:
    path, line, name = k
    if path == "~":
        return name
    p = path.replace("\\", "/")
    for root in ("/tapegrad/", "/benchmarks/", "/site-packages/"):
        if root in p:
            p = root.strip("/") + "/" + p.split(root, 1)[1]
            break
    else:
        p = p.rsplit("/", 1)[-1]
    return f"{p}:{line}({name})"


def gc_run(run: Run) -> dict[str, Any]:
    gc.collect()
    with _GCWatch() as w:
        t0 = time.process_time()
        run()
        t = time.process_time() - t0
    return {"run_s": t, "collections": w.count, "gc_s": w.seconds}


# ---------------------------------------------------------------------------- stages
def _chain_stages(style: str, n: int, width: int, repeats: int) -> dict[str, float]:
    """Per-op cost of the chain's stages: untracked forward, recording forward, backward."""
    import importlib

    mod = importlib.import_module(MODULES[style])
    x0 = np.array(0.7) if width == 0 else np.random.default_rng(0).uniform(-1, 1, width)

    def chain(y: Any) -> Any:
        for _ in range(n):
            y = y * MUL + ADD
        return y

    def make(part: str) -> Run:
        if style == "tf":
            x = mod.constant(x0)

            def run() -> list[np.ndarray]:
                with mod.GradientTape() as tape:
                    if part != "untracked":
                        tape.watch(x)
                    y = chain(x)
                    if width:
                        y = mod.reduce_sum(y)
                if part == "backward":
                    tape.gradient(y, x)
                return []
        else:
            x = mod.tensor(x0, requires_grad=part != "untracked")

            def run() -> list[np.ndarray]:
                y = chain(x)
                if part == "backward":
                    (y.sum() if width else y).backward()
                return []
        return run

    out: dict[str, float] = {}
    for part in ("untracked", "recording", "backward"):
        run = make(part)
        run()
        out[part] = _cpu_best(run, repeats) / (2 * n) * 1e6
    out["backward"] -= out["recording"]
    return out


# ---------------------------------------------------------------------------- parts
def _per_call(stmt: str, ns: dict[str, Any], number: int = 20_000, repeats: int = 7) -> float:
    """CPU nanoseconds per execution of ``stmt`` (best of ``repeats``)."""
    import timeit

    timer = timeit.Timer(stmt, globals=ns, timer=time.process_time)
    return min(timer.repeat(repeat=repeats, number=number)) / number * 1e9


def w2_parts() -> list[tuple[str, float]]:
    """What one W2 step (``y * 1.0001 + 0.0001``, 0-d float64, core API) costs, piece by piece.

    Each piece is timed alone (CPU time, best of 7), so the pieces add up to
    about the whole; the difference is what timing them alone leaves out.
    """
    import tapegrad as tg
    from tapegrad._core import mode
    from tapegrad._core.registry import _EMPTY, _result_node
    from tapegrad._core.tensor import make
    from tapegrad.ops import add, multiply

    x = tg.tensor(np.array(0.7), requires_grad=True)
    c = tg.tensor(np.array(0.7))
    y = x * MUL
    node = y._node
    g = make(np.array(1.0))
    ns: dict[str, Any] = {"x": x, "c": c, "MUL": MUL, "ADD": ADD, "multiply": multiply,
                          "add": add, "np": np, "out": y._data, "nxt": (node, None),
                          "rn": _result_node, "E": _EMPTY, "make": make, "g": g,
                          "mvjp": multiply.vjp, "avjp": add.vjp, "needs": (True, False),
                          "asarray": np.asarray, "mfwd": multiply.fwd, "d": c._data}
    rows = [
        ("whole op, recorded: x * 1.0001", _per_call("x * MUL", ns)),
        ("whole op, nothing tracked: c * 1.0001", _per_call("c * MUL", ns)),
        ("  of which the kernel (scalar path): multiply.fwd(array, 1.0001)",
         _per_call("mfwd(d, MUL)", ns)),
        ("  of which wrapping the scalar result: np.asarray(float)",
         _per_call("asarray(0.7)", ns)),
        ("  of which the result tensor: make(array)", _per_call("make(out)", ns)),
        ("  recording: _result_node (node, tensor, saved values)",
         _per_call("rn(multiply, nxt, (), True, E, out, 0, (x, MUL), None)", ns)),
        ("  the 0-d ufunc the kernel replaces: np.multiply(array, 1.0001)",
         _per_call("np.multiply(d, MUL)", ns)),
    ]
    prev = mode.STATE.grad_enabled
    mode.STATE.grad_enabled = False  # as in a first-order backward pass
    try:
        rows += [
            ("VJP of multiply (grad mode off)", _per_call("mvjp(g, None, MUL, needs=needs)", ns)),
            ("VJP of add", _per_call("avjp(g)", ns)),
        ]
    finally:
        mode.STATE.grad_enabled = prev
    return rows


# ---------------------------------------------------------------------------- main
def _setups(styles: list[str]) -> dict[str, dict[str, Callable[..., Run]]]:
    import importlib

    out: dict[str, dict[str, Callable[..., Run]]] = {}
    for impl in IMPLS:
        for st in styles:
            if impl.name == STYLES[st]:
                out[st] = impl.build(importlib.import_module(MODULES[st]))
    return out


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(prog="python -m benchmarks.profile",
                                description=__doc__.split("\n")[0])
    p.add_argument("--only", default="W1,W2,W3,W4,W5", help="workloads, comma-separated")
    p.add_argument("--styles", default="core,torch,tf", help="core, torch, tf")
    p.add_argument("--sizes", choices=("full", "quick"), default="full")
    p.add_argument("--repeats", type=int, default=5, help="runs for the best time")
    p.add_argument("--top", type=int, default=8, help="functions listed per run")
    p.add_argument("--parts", action="store_true",
                   help="also what one W2 step costs piece by piece (core API)")
    p.add_argument("--stages", action="store_true",
                   help="also the W2/W3 chain's per-op stages (untracked, recording, backward)")
    args = p.parse_args(argv)
    try:
        from threadpoolctl import threadpool_limits

        limits = threadpool_limits(limits=1)  # noqa: F841 (kept for the whole run)
    except ImportError:
        print("threadpoolctl is not installed: BLAS may use several threads")
    styles = [s.strip() for s in args.styles.split(",") if s.strip()]
    setups = _setups(styles)
    gc.collect()
    gc.freeze()  # the frameworks' own objects, as python -m benchmarks does
    for wkey in [w.strip().upper() for w in args.only.split(",") if w.strip()]:
        w = WORKLOADS[wkey]
        sz = dict(w.quick_sizes if args.sizes == "quick" else w.sizes)
        data = w.make_data(sz, 0)
        ops = w.ops(sz) if w.ops else None
        ref = _cpu_best(w.reference(data), args.repeats)
        print(f"\n{wkey}: {w.title}" + (f" [{sz}]" if args.sizes == "quick" else ""))
        print(f"  hand NumPy: {ref * 1e3:.3f} ms")
        for st in styles:
            setup = setups[st].get(wkey)
            if setup is None:
                continue
            run = setup(data)
            run()
            best = _cpu_best(run, args.repeats)
            g = gc_run(run)
            prof = profile_run(run, args.top)
            per_op = f", {prof['calls'] / ops:.1f} calls/op, {best / ops * 1e6:.2f} us/op" \
                if ops else ""
            print(f"  {st}: {best * 1e3:.3f} ms ({best / ref:.2f}x hand NumPy), "
                  f"{prof['calls']} Python calls{per_op}; backward {prof['backward_share']:.0%} "
                  f"of the profiled run; gc: {g['collections']} collections (gen 0/1/2), "
                  f"{sum(g['gc_s']) / g['run_s']:.0%} of the run")
            for f in prof["top"]:
                print(f"      {f['own_ms']:9.3f} ms {f['calls']:8d}  {f['function']}")
    if args.parts:
        print("\nW2 step, piece by piece (ns, CPU time, best of 7):")
        for label, ns_ in w2_parts():
            print(f"  {ns_:8.0f}  {label}")
    if args.stages:
        print("\nChain stages, us per op (CPU time, best of runs):")
        for wkey, (n, width) in (("W2", (1000, 0)), ("W3", (50_000, 16))):
            if args.sizes == "quick":
                n = 50
            for st in styles:
                s = _chain_stages(st, n, width, max(3, args.repeats if wkey == "W2" else 3))
                print(f"  {wkey} {st:5s}: untracked forward {s['untracked']:.2f}, recording "
                      f"forward {s['recording']:.2f}, backward {s['backward']:.2f}, total "
                      f"{s['recording'] + s['backward']:.2f}")


if __name__ == "__main__":
    main()
