"""W11: W1's MLP (784-256-256-10, float32, SGD) trained data-parallel on N MPI ranks.

``python -m benchmarks.distributed [--ranks 2] [--rounds 7] [--steps 20] [--json PATH]``
starts the ranks with ``mpiexec`` and, on each, times in interleaved rounds at the same
per-rank batch (128):

- ``numpy``: the hand-written NumPy step on one rank's batch, no communication (the base
  of every ratio);
- ``numpy+barrier``: the same plus a barrier per step (what merely waiting for the
  slower rank costs, without moving a byte);
- ``numpy+allreduce``: the same plus one MPI all-reduce of the gradients (the physical
  minimum of communication);
- ``allreduce alone``: that all-reduce back to back, without the step (what moving the
  bytes costs when no rank waits for another);
- ``tapegrad.torch`` alone and under ``DistributedDataParallel``;
- ``tapegrad.tf`` alone and under ``MultiWorkerMirroredStrategy`` (``strategy.run`` with
  ``apply_gradients``);
- real PyTorch alone and under DDP with the gloo backend (where torch is installed).

Reported: each step time as a ratio to the NumPy step measured in the same run, the
all-reduce overhead (data-parallel step / same step alone - 1), and the bytes each rank
hands to the all-reduce per step against the model's size.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np

D_IN, H, OUT, BATCH, LR = 784, 256, 10, 128, 0.01


def _data(rank: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(0)

    def he(a: int, b: int) -> np.ndarray:
        return (rng.standard_normal((a, b)) * np.sqrt(2.0 / a)).astype(np.float32)

    params = {"W1": he(D_IN, H), "b1": np.zeros(H, np.float32), "W2": he(H, H),
              "b2": np.zeros(H, np.float32), "W3": he(H, OUT), "b3": np.zeros(OUT, np.float32)}
    local = np.random.default_rng(100 + rank)
    params["x"] = local.standard_normal((BATCH, D_IN)).astype(np.float32)
    params["y"] = local.integers(0, OUT, size=BATCH)
    return params


def _numpy_step(d: dict[str, np.ndarray], reduce: Callable[[list[np.ndarray]], None] | None
                ) -> Callable[[], None]:
    ps = [d[k].copy() for k in ("W1", "b1", "W2", "b2", "W3", "b3")]
    x, y = d["x"], d["y"]
    rows = np.arange(len(y))

    def step() -> None:
        W1, b1, W2, b2, W3, b3 = ps
        h1 = np.maximum(x @ W1 + b1, 0)
        h2 = np.maximum(h1 @ W2 + b2, 0)
        z = h2 @ W3 + b3
        z -= z.max(axis=1, keepdims=True)
        p = np.exp(z)
        p /= p.sum(axis=1, keepdims=True)
        p[rows, y] -= 1.0
        p /= len(y)
        g3, gb3 = h2.T @ p, p.sum(0)
        d2 = (p @ W3.T) * (h2 > 0)
        g2, gb2 = h1.T @ d2, d2.sum(0)
        d1 = (d2 @ W2.T) * (h1 > 0)
        g1, gb1 = x.T @ d1, d1.sum(0)
        grads = [g1, gb1, g2, gb2, g3, gb3]
        if reduce is not None:
            reduce(grads)
        for w, g in zip(ps, grads):
            w -= np.float32(LR) * g

    return step


def _torch_step(torch: Any, d: dict[str, np.ndarray], ddp: Any) -> tuple[Callable[[], None], Any]:
    nn = torch.nn
    model = nn.Sequential(nn.Linear(D_IN, H), nn.ReLU(), nn.Linear(H, H), nn.ReLU(),
                          nn.Linear(H, OUT))
    with torch.no_grad():
        for lin, (w, b) in zip([model[0], model[2], model[4]],
                               [("W1", "b1"), ("W2", "b2"), ("W3", "b3")]):
            lin.weight.copy_(torch.tensor(d[w].T.copy()))
            lin.bias.copy_(torch.tensor(d[b]))
    net = ddp(model) if ddp is not None else model
    opt = torch.optim.SGD(net.parameters(), lr=LR)
    x, y = torch.tensor(d["x"]), torch.tensor(d["y"])

    def step() -> None:
        opt.zero_grad()
        nn.functional.cross_entropy(net(x), y).backward()
        opt.step()

    return step, net


def _tf_step(tf: Any, d: dict[str, np.ndarray], strategy: Any) -> Callable[[], None]:
    keras = tf.keras

    def build() -> tuple[Any, Any]:
        m = keras.Sequential([keras.Input(shape=(D_IN,)), keras.layers.Dense(H, "relu"),
                              keras.layers.Dense(H, "relu"), keras.layers.Dense(OUT)])
        m.set_weights([d["W1"], d["b1"], d["W2"], d["b2"], d["W3"], d["b3"]])
        return m, keras.optimizers.SGD(LR)

    if strategy is not None:
        with strategy.scope():
            model, opt = build()
    else:
        model, opt = build()
    x, y = tf.constant(d["x"]), tf.constant(d["y"])
    lossf = keras.losses.SparseCategoricalCrossentropy(from_logits=True, reduction="none")
    n = 1 if strategy is None else strategy.num_replicas_in_sync

    def inner() -> None:
        with tf.GradientTape() as tape:
            loss = tf.nn.compute_average_loss(lossf(y, model(x)), global_batch_size=BATCH * n)
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))

    if strategy is None:
        return inner
    return lambda: strategy.run(inner)


def worker(rounds: int, steps: int, out: str) -> None:
    import tapegrad.torch as tt
    import tapegrad.torch.distributed as tdist
    from tapegrad import comm
    from tapegrad.torch.nn.parallel import DistributedDataParallel as TDDP

    tdist.init_process_group("gloo")
    w = comm.world()
    rank, size = w.rank, w.size
    d = _data(rank)

    def mpi_allreduce(grads: list[np.ndarray]) -> None:
        flat = np.concatenate([g.ravel() for g in grads])
        w.allreduce(flat)
        flat /= np.float32(size)
        off = 0
        for g in grads:
            g[...] = flat[off:off + g.size].reshape(g.shape)
            off += g.size

    flat_grads = np.zeros(sum(d[k].size for k in ("W1", "b1", "W2", "b2", "W3", "b3")),
                          np.float32)

    import tapegrad.tf as ttf

    variants: dict[str, Callable[[], None]] = {
        "numpy": _numpy_step(d, None),
        "numpy+barrier": _numpy_step(d, lambda grads: w.barrier()),
        "numpy+allreduce": _numpy_step(d, mpi_allreduce),
        "allreduce alone": lambda: w.allreduce(flat_grads),
        "tapegrad.torch": _torch_step(tt, d, None)[0],
    }
    ddp_step, ddp_net = _torch_step(tt, d, TDDP)
    variants["tapegrad.torch DDP"] = ddp_step
    variants["tapegrad.tf"] = _tf_step(ttf, d, None)
    variants["tapegrad.tf MultiWorkerMirrored"] = _tf_step(
        ttf, d, ttf.distribute.MultiWorkerMirroredStrategy())
    real = None
    try:
        import torch as real  # type: ignore[no-redef]
        import torch.distributed as rdist

        os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
        os.environ.setdefault("MASTER_PORT", "29611")
        real.set_num_threads(1)
        rdist.init_process_group("gloo", rank=rank, world_size=size)
        variants["PyTorch"] = _torch_step(real, d, None)[0]
        variants["PyTorch DDP (gloo)"] = _torch_step(
            real, d, real.nn.parallel.DistributedDataParallel)[0]
    except ImportError:
        pass
    model_bytes = sum(int(p.detach().numpy().nbytes) for p in ddp_net.parameters())
    for fn in variants.values():  # warm up (and equalise the ranks' start)
        fn()
    times: dict[str, list[float]] = {k: [] for k in variants}
    moved: list[int] = []
    for _ in range(rounds):
        for name, fn in variants.items():
            w.barrier()
            before = w.bytes_sent
            t0 = time.perf_counter()
            for _ in range(steps):
                fn()
            times[name].append((time.perf_counter() - t0) / steps)
            if name == "tapegrad.torch DDP":
                moved.append((w.bytes_sent - before) // steps)
    gathered = w.allgather_object(times)
    if rank == 0:
        # a data-parallel step is as slow as its slowest rank: the max over ranks per round
        med = {k: statistics.median(max(g[k][i] for g in gathered) for i in range(rounds))
               for k in variants}
        res = {"ranks": size, "rounds": rounds, "steps": steps, "batch_per_rank": BATCH,
               "model_bytes": model_bytes, "ddp_bytes_per_step": int(statistics.median(moved)),
               "ddp_buckets": len(ddp_net.bucket_sizes()), "median_s": med,
               "ratio_to_numpy": {k: v / med["numpy"] for k, v in med.items()}}
        with open(out, "w") as f:
            json.dump(res, f, indent=2)
    if real is not None:
        import torch.distributed as rdist

        rdist.destroy_process_group()
    tdist.destroy_process_group()


def _table(res: dict[str, Any]) -> str:
    med, ratio = res["median_s"], res["ratio_to_numpy"]
    pairs = [("numpy+barrier", "numpy"), ("numpy+allreduce", "numpy"), ("tapegrad.torch DDP", "tapegrad.torch"),
             ("tapegrad.tf MultiWorkerMirrored", "tapegrad.tf"),
             ("PyTorch DDP (gloo)", "PyTorch")]
    lines = [f"W11: W1's MLP, {res['ranks']} ranks, batch {res['batch_per_rank']} per rank "
             f"({res['rounds']} rounds x {res['steps']} steps, median of the slowest rank)",
             "", "| step | time | / numpy step | all-reduce overhead |", "|---|---|---|---|"]
    for k in med:
        over = ""
        for dp, alone in pairs:
            if k == dp and alone in med:
                over = f"{100 * (med[dp] / med[alone] - 1):+.1f}%"
        lines.append(f"| {k} | {1000 * med[k]:.2f} ms | {ratio[k]:.2f}x | {over} |")
    mb = res["model_bytes"]
    lines += ["", f"bytes handed to the all-reduce per DDP step: {res['ddp_bytes_per_step']:,} "
              f"for a model of {mb:,} bytes ({res['ddp_bytes_per_step'] / mb:.2f}x; "
              f"{res['ddp_buckets']} buckets; the minimum is 1.00x: one all-reduce of the "
              "gradients)"]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.distributed",
                                description=__doc__.split("\n")[0])
    p.add_argument("--ranks", type=int, default=2)
    p.add_argument("--rounds", type=int, default=7)
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--json", default="w11.json", help="where rank 0 writes the results")
    p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    a = p.parse_args(argv)
    if a.worker:
        worker(a.rounds, a.steps, a.json)
        return 0
    from tapegrad.launch import find_mpiexec, mpiexec_command

    mpiexec = find_mpiexec()
    if mpiexec is None:
        print("W11 needs mpiexec: pip install 'tapegrad[distributed]'", file=sys.stderr)
        return 2
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1",
               MKL_NUM_THREADS="1", TF_CPP_MIN_LOG_LEVEL="3")
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env["PYTHONPATH"] = root + os.pathsep + env.get("PYTHONPATH", "")
    cmd = mpiexec_command(a.ranks, mpiexec) + [sys.executable, "-m", "benchmarks.distributed",
           "--worker", "--rounds", str(a.rounds), "--steps", str(a.steps), "--json", a.json]
    r = subprocess.run(cmd, env=env, cwd=root)
    if r.returncode != 0:
        return r.returncode
    with open(os.path.join(root, a.json) if not os.path.isabs(a.json) else a.json) as f:
        print(_table(json.load(f)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
