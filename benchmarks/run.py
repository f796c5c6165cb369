"""The benchmark runner: ``python -m benchmarks`` (or ``python benchmarks/run.py``).

Runs W1-W10 (see :mod:`benchmarks.workloads`, :mod:`benchmarks.transforms` and
:mod:`benchmarks.training`) with hand-written NumPy (the
limit), tapegrad in both styles and every installed peer (PyTorch, MyGrad,
HIPS autograd, TensorFlow, JAX), in one process:

- one warm-up run per implementation, then up to ``--repeats`` rounds; in
  each round the hand-NumPy reference runs first and each implementation's
  time is divided by it (ratios are paired run by run); medians are reported;
  slow implementations stop after 3 rounds once they have used ``--budget``
  seconds;
- W3 only: an implementation whose 100,000-op run is projected (from its
  warm-up) to take more than ``--max-run`` seconds is measured on a shorter
  chain, paired with hand NumPy on that same chain, and flagged;
- every run's gradients are checked against the hand-NumPy reference;
- W3 peak memory is measured in a fresh child process per implementation:
  peak RSS above the level after setup, via ``/proc/self/clear_refs``
  (``--tracemalloc`` adds the ``tracemalloc`` peak of NumPy-based ones);
- thread counts are equal across frameworks: PyTorch and TensorFlow are set to
  NumPy's BLAS thread count, or all to ``--threads N``;
- results print as a table, are saved as JSON (``benchmarks/results/latest.json``)
  and drawn as a chart (``latest.png``, needs matplotlib).

Options: ``--quick`` (tiny sizes, 2 rounds: for tests and CI), ``--only
W1,W3,M`` (``M``: the memory suite), ``--json PATH``, ``--chart PATH``,
``--markdown PATH``, ``--no-peers``, ``--repeats N``, ``--budget S``,
``--max-run S``, ``--threads N``, ``--clock cpu`` (time runs by the process's CPU time:
steadier on a busy machine), ``--no-memory``, ``--no-chart``.

On a terminal, a one-line status (``W10 round 2/7: PyTorch``) on stderr shows where a
run longer than two seconds is; redirected or piped, only the log lines are printed.
"""

from __future__ import annotations

import argparse
import gc
import importlib
import json
import os
import platform
import statistics
import subprocess
import sys
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any

if __package__ in (None, ""):  # run as a script: python benchmarks/run.py
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    __package__ = "benchmarks"

import numpy as np

from benchmarks import memory
from benchmarks.impls import IMPLS, Impl
from benchmarks.workloads import WORKLOADS, Run, Setup, Workload, check

RESULTS_DIR = Path(__file__).resolve().parent / "results"
SEED = 0
MIN_REPEATS = 3
#: W3 memory is measured at full size (one run) unless that run is projected longer
MEMORY_MAX_RUN = 60.0


# ---------------------------------------------------------------------------- machine
def blas_info() -> list[dict[str, Any]]:
    """NumPy's BLAS libraries and their thread counts (threadpoolctl when installed)."""
    try:
        from threadpoolctl import threadpool_info
    except ImportError:
        return []
    keep = ("internal_api", "version", "num_threads", "architecture", "threading_layer", "prefix")
    return [{k: i.get(k) for k in keep} for i in threadpool_info() if i.get("user_api") == "blas"]


def blas_threads() -> int:
    for info in blas_info():
        n = info.get("num_threads")
        if isinstance(n, int) and n > 0:
            return n
    return os.cpu_count() or 1


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            for line in fh:
                if line.lower().startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def machine_info() -> dict[str, Any]:
    return {
        "cpu": cpu_model(),
        "cores": os.cpu_count(),
        "platform": platform.platform(),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "blas": blas_info(),
    }


_LIMITS: list[Any] = []  # threadpoolctl limits kept alive for the whole run


def prepare_threads(n: int | None) -> None:
    """Before any framework is imported: pin XLA (JAX) to one thread when asked for 1."""
    if n == 1:
        os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") +
                                   " --xla_cpu_multi_thread_eigen=false "
                                   "intra_op_parallelism_threads=1").strip()


def configure_threads(mods: dict[str, Any], n: int, forced: bool = False) -> dict[str, Any]:
    """Give every framework the same thread count (NumPy's BLAS count unless ``forced``)."""
    if forced:
        try:
            from threadpoolctl import threadpool_limits
        except ImportError as exc:
            raise SystemExit("--threads needs threadpoolctl (pip install threadpoolctl)") from exc
        _LIMITS.append(threadpool_limits(limits=n))  # NumPy's BLAS, OpenMP, MKL
    threads: dict[str, Any] = {"numpy_blas": blas_threads() if forced else n}
    torch = mods.get("torch")
    if torch is not None:
        torch.set_num_threads(n)
        threads["torch"] = torch.get_num_threads()
    tf = mods.get("tensorflow")
    if tf is not None:
        try:
            tf.config.threading.set_intra_op_parallelism_threads(n)
            tf.config.threading.set_inter_op_parallelism_threads(n)
        except RuntimeError:  # already initialised
            pass
        threads["tensorflow"] = {
            "intra_op": tf.config.threading.get_intra_op_parallelism_threads() or "default",
            "inter_op": tf.config.threading.get_inter_op_parallelism_threads() or "default",
        }
    if mods.get("jax") is not None:
        threads["jax"] = 1 if "intra_op_parallelism_threads=1" in os.environ.get(
            "XLA_FLAGS", "") else f"XLA default (all {os.cpu_count()} cores)"
    return threads


# ---------------------------------------------------------------------------- loading
@dataclass
class Loaded:
    impl: Impl
    setups: dict[str, Setup] = field(default_factory=dict)
    skipped: str | None = None


def _import(name: str) -> Any:
    if name == "jax":
        os.environ.setdefault("JAX_PLATFORMS", "cpu")
        mod = importlib.import_module("jax")
        mod.config.update("jax_enable_x64", True)  # W3/W4 are float64
        return mod
    if name == "tensorflow":
        os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    return importlib.import_module(name)


def load_impls(no_peers: bool, only_impls: list[str] | None = None) -> tuple[list[Loaded], dict[str, Any]]:
    loaded: list[Loaded] = []
    mods: dict[str, Any] = {}
    for impl in IMPLS:
        if only_impls is not None and impl.name not in only_impls:
            continue
        if no_peers and impl.kind == "peer":
            continue
        mod: Any = None
        if impl.module is not None:
            try:
                mod = _import(impl.module)
            except ImportError as exc:
                loaded.append(Loaded(impl, skipped=f"not installed ({exc})"))
                continue
            except Exception as exc:  # a broken install
                loaded.append(Loaded(impl, skipped=f"import failed: {exc!r}"[:200]))
                continue
            missing = [a for a in impl.requires if not hasattr(mod, a)]
            if missing:
                loaded.append(Loaded(impl, skipped=f"incomplete: {impl.module} has no "
                                                    f"{', '.join(missing)}"))
                continue
            mods[impl.module] = mod
        loaded.append(Loaded(impl, impl.build(mod)))
    return loaded, mods


# ---------------------------------------------------------------------------- timing
class Progress:
    """One status line on stderr, rewritten in place (``W10 round 2/7: PyTorch``).

    Shown only when the stream is a terminal, and only once the run has taken more than
    ``after`` seconds (a quick run prints nothing extra); :meth:`clear` wipes it before
    a log line is printed.  Piped or redirected output gets only the log lines.
    """

    def __init__(self, stream: Any = None, after: float = 2.0) -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.after = after
        self.t0 = time.perf_counter()
        self.width = 0
        isatty = getattr(self.stream, "isatty", None)
        self.enabled = bool(isatty and isatty())

    def show(self, text: str) -> None:
        if not self.enabled or time.perf_counter() - self.t0 < self.after:
            return
        line = text[:78]
        self.stream.write("\r" + line.ljust(self.width))
        self.stream.flush()
        self.width = len(line)

    def clear(self) -> None:
        if self.width:
            self.stream.write("\r" + " " * self.width + "\r")
            self.stream.flush()
            self.width = 0


#: the runner's status line (replaced by :func:`main` for each run)
PROGRESS = Progress(stream=SimpleNamespace(isatty=lambda: False))


def sizes_of(w: Workload, quick: bool) -> dict[str, int]:
    return dict(w.quick_sizes if quick else w.sizes)


#: the clock runs are timed with: wall time, or with ``--clock cpu`` the process's CPU time
#: (steadier on a machine shared with other work: time spent waiting for a CPU is not counted)
CLOCKS: dict[str, Any] = {"wall": time.perf_counter, "cpu": time.process_time}
_CLOCK: list[Any] = [time.perf_counter]


def _timed(setup: Setup, data: dict[str, Any]) -> tuple[float, list[np.ndarray]]:
    run: Run = setup(data)
    gc.collect()
    clock = _CLOCK[0]
    t0 = clock()
    grads = run()
    return clock() - t0, grads


@dataclass
class _Instance:
    """A problem instance: sizes, data and its reference gradients."""

    sizes: dict[str, int]
    data: dict[str, Any]
    ref: list[np.ndarray]


def _instance(w: Workload, sz: dict[str, int]) -> _Instance:
    data = w.make_data(sz, SEED)
    return _Instance(sz, data, w.reference(data)())


def bench_workload(w: Workload, loaded: list[Loaded], quick: bool, repeats: int,
                   budget: float, log: Any, max_run: float = 8.0) -> dict[str, Any]:
    sz = sizes_of(w, quick)
    full = _instance(w, sz)
    tol = w.tolerance()
    warm_sz = w.warmup_sizes(sz) if w.warmup_sizes else sz
    warm_data = w.make_data(warm_sz, SEED) if w.warmup_sizes else full.data
    cells: dict[str, dict[str, Any]] = {}
    inst: dict[str, _Instance] = {}
    active: list[Loaded] = []
    for ld in loaded:
        cell: dict[str, Any] = {"status": "ok", "note": ld.impl.note, "times_s": [],
                                "ratios": [], "grad_ok": [], "grad_err": []}
        cells[ld.impl.name] = cell
        if ld.skipped is not None:
            cell.update(status="skipped", note=ld.skipped)
            continue
        setup = ld.setups.get(w.key)
        if setup is None:
            cell.update(status="none", note=ld.impl.note or "not supported")
            continue
        try:
            PROGRESS.show(f"{w.key} warm-up: {ld.impl.name}")
            run = setup(warm_data)
            t0 = _CLOCK[0]()
            run()
            t_warm = _CLOCK[0]() - t0
        except Exception as exc:
            cell.update(status="failed", note=_err(exc))
            log(f"  {ld.impl.name}: warm-up failed: {_err(exc)}")
            continue
        inst[ld.impl.name] = full
        if w.scale is not None and w.ops is not None and ld.impl.kind != "limit":
            projected = t_warm * w.ops(sz) / w.ops(warm_sz)
            if projected > max_run * 1.5:  # well over: a little over is not worth a flag
                rsz = w.scale(sz, max_run / projected)
                if rsz != sz:
                    inst[ld.impl.name] = _instance(w, rsz)
                    cell["sizes"] = rsz
                    cell["projected_full_s"] = round(projected, 1)
                    cell["reduced_note"] = (
                        f"measured on {w.ops(rsz):,} ops: a full run was projected at "
                        f"{projected:.0f} s (over --max-run {max_run:g} s); ratio to hand NumPy "
                        "on the same size")
                    log(f"  {ld.impl.name}: full size projected at {projected:.0f} s; "
                        f"measuring {w.ops(rsz):,} ops")
        active.append(ld)
    ref_times: list[float] = []
    for rnd in range(repeats):
        todo = [ld for ld in active if ld.impl.kind != "limit" and _wants_more(
            cells[ld.impl.name], repeats, budget)]
        if not todo and ref_times:
            break
        t_ref, _g = _timed(w.reference, full.data)
        ref_times.append(t_ref)
        for ld in todo:
            cell = cells[ld.impl.name]
            ins = inst[ld.impl.name]
            t_pair = t_ref
            if ins is not full:  # pair with the reference on the same (smaller) size
                t_pair, _g = _timed(w.reference, ins.data)
            PROGRESS.show(f"{w.key} round {rnd + 1}/{repeats}: {ld.impl.name}")
            try:
                t, grads = _timed(ld.setups[w.key], ins.data)
            except Exception as exc:
                cell.update(status="failed", note=_err(exc))
                log(f"  {ld.impl.name}: failed: {_err(exc)}")
                active.remove(ld)
                continue
            ok, err = check(grads, ins.ref, tol)
            cell["times_s"].append(t)
            cell["ratios"].append(t / t_pair)
            cell["grad_ok"].append(ok)
            cell["grad_err"].append(err)
            if not ok:
                log(f"  {ld.impl.name}: gradient check FAILED (relative error {err:.3g})")
    # the limit's own cell
    for ld in loaded:
        if ld.impl.kind == "limit" and cells[ld.impl.name]["status"] == "ok":
            cells[ld.impl.name].update(times_s=ref_times, ratios=[1.0] * len(ref_times),
                                       grad_ok=[True] * len(ref_times),
                                       grad_err=[0.0] * len(ref_times))
    for name, cell in cells.items():
        if cell["status"] != "ok":
            continue
        if not cell["times_s"]:
            cell["status"] = "failed"
            continue
        cell["median_s"] = statistics.median(cell["times_s"])
        cell["median_ratio"] = statistics.median(cell["ratios"])
        cell["repeats"] = len(cell["times_s"])
        cell["grad_check"] = "pass" if all(cell["grad_ok"]) else "FAIL"
        if w.ops:
            cell["us_per_op"] = cell["median_s"] / w.ops(cell.get("sizes", sz)) * 1e6
        log(f"  {name:28s} {_fmt_time(cell['median_s']):>10s}  {cell['median_ratio']:8.2f}x  "
            f"grad {cell['grad_check']}  ({cell['repeats']} runs)"
            + (f"  [{w.ops(cell['sizes']):,} ops]" if "sizes" in cell and w.ops else ""))
    return {"title": w.title, "sizes": sz, "dtype": w.dtype,
            "ops": w.ops(sz) if w.ops else None, "tolerance": tol, "results": cells}


def _wants_more(cell: dict[str, Any], repeats: int, budget: float) -> bool:
    if cell["status"] != "ok":
        return False
    n = len(cell["times_s"])
    if n >= repeats:
        return False
    return n < MIN_REPEATS or sum(cell["times_s"]) < budget


def _err(exc: BaseException) -> str:
    s = f"{type(exc).__name__}: {exc}".replace("\n", " ")
    return s if len(s) < 300 else s[:297] + "..."


def _fmt_time(s: float) -> str:
    if s >= 1:
        return f"{s:.2f} s"
    if s >= 1e-3:
        return f"{s * 1e3:.1f} ms"
    return f"{s * 1e6:.0f} us"


# ---------------------------------------------------------------------------- W3 memory
def _read_status(key: str) -> int | None:
    try:
        with open("/proc/self/status", encoding="utf-8") as fh:
            for line in fh:
                if line.startswith(key + ":"):
                    return int(line.split()[1]) * 1024
    except OSError:
        return None
    return None


def _reset_peak_rss() -> bool:
    try:
        with open("/proc/self/clear_refs", "w", encoding="utf-8") as fh:
            fh.write("5")
        return True
    except OSError:
        return False


def memory_child(wkey: str, impl_name: str, quick: bool,
                 sizes: dict[str, int] | None = None, threads: int | None = None,
                 tracemalloc_too: bool = False) -> dict[str, Any]:
    """In a fresh process: peak memory of one run of ``impl_name`` on ``wkey``."""
    import resource
    import tracemalloc

    prepare_threads(threads)
    loaded, mods = load_impls(False, [impl_name])
    configure_threads(mods, threads or blas_threads(), forced=threads is not None)
    gc.collect()
    gc.freeze()
    ld = loaded[0]
    if ld.skipped:
        return {"status": "skipped", "note": ld.skipped}
    w = WORKLOADS[wkey]
    sz = sizes or sizes_of(w, quick)
    setup = ld.setups[wkey]
    warm = w.make_data(w.warmup_sizes(sz), SEED) if w.warmup_sizes else w.make_data(sz, SEED)
    setup(warm)()
    data = w.make_data(sz, SEED)
    run = setup(data)
    gc.collect()
    out: dict[str, Any] = {"status": "ok", "sizes": sz}
    rss0 = _read_status("VmRSS")
    if rss0 is not None and _reset_peak_rss():
        run()
        hwm = _read_status("VmHWM") or rss0
        out["rss_peak_mb"] = max(0, hwm - rss0) / memory.MB
        out["rss_method"] = "VmHWM after clear_refs, minus VmRSS after setup"
    else:
        ru0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
        base = rss0 if rss0 is not None else ru0
        run()
        ru1 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
        out["rss_peak_mb"] = max(0, ru1 - base) / memory.MB
        out["rss_method"] = "ru_maxrss minus RSS after setup (lower bound)"
    if tracemalloc_too and ld.impl.memory == "tracemalloc":
        run = setup(data)
        gc.collect()
        tracemalloc.start()
        run()
        out["tracemalloc_peak_mb"] = tracemalloc.get_traced_memory()[1] / memory.MB
        tracemalloc.stop()
    return out


def measure_memory(wkey: str, cells: dict[str, dict[str, Any]], quick: bool, log: Any,
                   threads: int | None = None, tracemalloc_too: bool = False) -> None:
    for name, cell in cells.items():
        if cell["status"] != "ok":
            continue
        cmd = [sys.executable, "-m", "benchmarks.run", "--memory-child", wkey, name]
        if quick:
            cmd.append("--quick")
        if "sizes" in cell and cell.get("projected_full_s", 0.0) > MEMORY_MAX_RUN:
            cmd += ["--memory-sizes", json.dumps(cell["sizes"])]
        if threads is not None:
            cmd += ["--threads", str(threads)]
        if tracemalloc_too:
            cmd.append("--tracemalloc")
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=900,
                                  cwd=str(Path(__file__).resolve().parent.parent))
            res = json.loads(proc.stdout.strip().splitlines()[-1])
        except Exception as exc:
            cell["memory"] = {"status": "failed", "note": _err(exc)}
            log(f"  {name}: memory measurement failed: {_err(exc)}")
            continue
        cell["memory"] = res
        if "rss_peak_mb" in res:
            cell["peak_mb"] = res["rss_peak_mb"]

            log(f"  {name:28s} peak RSS +{res['rss_peak_mb']:.1f} MB"
                + (f", tracemalloc peak {res['tracemalloc_peak_mb']:.1f} MB"
                   if "tracemalloc_peak_mb" in res else ""))


# ---------------------------------------------------------------------------- memory suite
def memory_suite(loaded: list[Loaded], quick: bool, log: Any) -> dict[str, Any]:
    w = WORKLOADS["W1"]
    data = w.make_data(sizes_of(w, quick), SEED)
    steps = 10 if quick else 100
    out: dict[str, Any] = {"workload": "W1", "sizes": sizes_of(w, quick), "steps": steps,
                           "method": "tracemalloc (NumPy buffers + Python objects)",
                           "training": {}, "persistence": {}}
    for ld in loaded:
        if ld.skipped or ld.impl.kind == "peer" or "W1" not in ld.setups:
            continue
        try:
            prof = memory.steps_profile(ld.setups["W1"], data, steps, warmup=min(50, steps // 2))
        except Exception as exc:
            out["training"][ld.impl.name] = {"status": "failed", "note": _err(exc)}
            continue
        out["training"][ld.impl.name] = prof
        log(f"  {ld.impl.name:28s} W1 x{steps}: median step peak {prof['median_peak_mb']:.2f} MB, "
            f"held growth after warm-up {prof['held_growth_after_warmup_mb']:.3f} MB "
            f"({'flat' if prof['flat'] else 'NOT flat'})")
    names = {ld.impl.name for ld in loaded if not ld.skipped}
    if "tapegrad.tf (tape)" in names:
        tf = importlib.import_module("tapegrad.tf")
        try:
            out["persistence"]["tapegrad.tf GradientTape"] = memory.tape_persistence(tf, data)
        except Exception as exc:
            out["persistence"]["tapegrad.tf GradientTape"] = {"status": "failed", "note": _err(exc)}
    if "tapegrad.torch (backward)" in names:
        torch_mod: Any = importlib.import_module("tapegrad.torch")
        label = "tapegrad.torch backward"
    else:
        tg = importlib.import_module("tapegrad")
        torch_mod = SimpleNamespace(tensor=tg.tensor, relu=tg.relu,
                                    nn=SimpleNamespace(functional=SimpleNamespace(
                                        cross_entropy=tg.cross_entropy)))
        label = "tapegrad core backward"
    try:
        out["persistence"][label] = memory.retain_graph(torch_mod, data)
    except Exception as exc:
        out["persistence"][label] = {"status": "failed", "note": _err(exc)}
    for lab, res in out["persistence"].items():
        if res.get("status") == "failed":
            log(f"  {lab}: failed: {res['note']}")
            continue
        for mode, m in res.items():
            if isinstance(m, dict):
                log(f"  {lab} {mode}: peak {m['peak_mb']:.2f} MB, held after gradient "
                    f"{m['held_after_gradient_mb']:.2f} MB, of which the tape/graph "
                    f"{m['held_by_graph_mb']:.2f} MB")
    return out


# ---------------------------------------------------------------------------- output
def _cell_text(wkey: str, cell: dict[str, Any], limit: bool) -> str:
    st = cell.get("status")
    if st == "skipped":
        return "not installed"
    if st == "none":
        return "none"
    if st != "ok":
        return "failed"
    bad = "" if cell.get("grad_check") == "pass" else " (grad FAIL)"
    if limit:
        if "us_per_op" in cell:
            text = f"{cell['us_per_op']:.2f} µs/op"
        else:
            text = _fmt_time(cell["median_s"]).replace("us", "µs")
    elif "us_per_op" in cell and wkey == "W2":
        text = f"{cell['us_per_op']:.1f} µs ({cell['median_ratio']:.1f}x)"
    else:
        text = f"{cell['median_ratio']:.2f}x" if cell["median_ratio"] < 10 else \
            f"{cell['median_ratio']:.0f}x"
    if "peak_mb" in cell:
        text += f" ({cell['peak_mb']:.0f} MB)" if cell["peak_mb"] >= 10 else \
            f" ({cell['peak_mb']:.1f} MB)"
    if "sizes" in cell:
        text += "*"
    return text + bad


def footnotes(results: dict[str, Any]) -> list[str]:
    out: list[str] = []
    for wkey, wres in results["workloads"].items():
        for name, cell in wres["results"].items():
            if cell.get("status") == "ok" and "reduced_note" in cell:
                mem = cell.get("memory", {}).get("sizes")
                where = ""
                if mem is not None:
                    where = ("; peak memory at full size" if mem == wres["sizes"] else
                             "; peak memory on that shorter chain too")
                out.append(f"* {name}, {wkey}: {cell['reduced_note']}{where}.")
    return out


def table_rows(results: dict[str, Any]) -> tuple[list[str], list[list[str]]]:
    names: list[str] = []
    for wres in results["workloads"].values():
        for n in wres["results"]:
            if n not in names:
                names.append(n)
    header = ["workload"] + names
    rows: list[list[str]] = []
    for wkey, wres in results["workloads"].items():
        row = [f"{wkey} {wres['title']}"]
        for n in names:
            cell = wres["results"].get(n)
            row.append("" if cell is None else _cell_text(wkey, cell, n == "numpy (hand)"))
        rows.append(row)
    return header, rows


def format_table(results: dict[str, Any]) -> str:
    header, rows = table_rows(results)
    widths = [max(len(r[i]) for r in [header] + rows) for i in range(len(header))]
    lines = ["  ".join(c.ljust(wd) for c, wd in zip(header, widths))]
    lines.append("  ".join("-" * wd for wd in widths))
    lines += ["  ".join(c.ljust(wd) for c, wd in zip(r, widths)) for r in rows]
    return "\n".join(lines + footnotes(results))


def markdown(results: dict[str, Any], chart: str | None = None) -> str:
    header, rows = table_rows(results)
    m = results["machine"]
    blas = ", ".join(f"{b.get('internal_api')} {b.get('version')} ({b.get('architecture')}, "
                     f"{_threads_text(b.get('num_threads'))})" for b in m["blas"]) or "unknown"
    thr = results["threads"]
    load = results.get("load_average_at_start")
    out = [
        f"Measured {results['date']} on {m['cpu']}, {m['cores']} cores, Python {m['python']}, "
        f"NumPy {m['numpy']} with {blas}. Threads: "
        + ", ".join(f"{k} {v if not isinstance(v, dict) else v['intra_op']}"
                    for k, v in thr.items()) + "."
        + (f" Load average before the run: {load[0]}." if load else "")
        + (" Timed by the process's CPU time (`--clock cpu`)."
           if results.get("clock") == "cpu" else ""),
        "",
        "Versions: " + ", ".join(f"{k} {v}" for k, v in results["versions"].items()) + ".",
        "",
        "Cells: median time ratio to hand-written NumPy (paired run by run; lower is better); "
        "the hand-NumPy column is its absolute time. W2 also gives µs per op; W3 the peak "
        "memory above the level after setup (RSS).",
        "",
        "| " + " | ".join(header) + " |",
        "|" + "|".join("---" for _ in header) + "|",
    ]
    out += ["| " + " | ".join(r) + " |" for r in rows]
    notes_ = footnotes(results)
    if notes_:
        out += [""] + [n.replace("* ", "\\* ", 1) for n in notes_]
    if chart:
        out += ["", f"![ratios to hand-written NumPy]({chart})"]
    mem = results.get("memory")
    if mem:
        out += ["", f"Memory (tracemalloc), W1 for {mem['steps']} training steps:", "",
                "| implementation | median peak per step | held-memory growth after warm-up | flat |",
                "|---|---|---|---|"]
        for name, prof in mem["training"].items():
            if "median_peak_mb" in prof:
                out.append(f"| {name} | {prof['median_peak_mb']:.1f} MB | "
                           f"{prof['held_growth_after_warmup_mb']:.3f} MB | "
                           f"{'yes' if prof['flat'] else 'NO'} |")
        if mem["persistence"]:
            out += ["", "One W1 forward + gradient: persistent vs non-persistent tape "
                    "(and retain_graph):", "",
                    "| front-end | mode | peak | held after the gradient call | "
                    "of which the tape/graph (freed on release) |",
                    "|---|---|---|---|---|"]
            for lab, res in mem["persistence"].items():
                for mode, r in res.items():
                    if isinstance(r, dict):
                        out.append(f"| {lab} | {mode} | {r['peak_mb']:.2f} MB | "
                                   f"{r['held_after_gradient_mb']:.2f} MB | "
                                   f"{r['held_by_graph_mb']:.2f} MB |")
    notes = results.get("notes") or []
    if notes:
        out += [""] + [f"- {n}" for n in notes]
    return "\n".join(out) + "\n"


def make_chart(results: dict[str, Any], path: Path) -> bool:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    wkeys = list(results["workloads"])
    names: list[str] = []
    for wres in results["workloads"].values():
        for n, c in wres["results"].items():
            if n != "numpy (hand)" and c.get("status") == "ok" and n not in names:
                names.append(n)
    if not names:
        return False
    fig, ax = plt.subplots(figsize=(max(8.0, 1.6 * len(wkeys) + 4), 5.8))
    width = 0.8 / len(names)
    cmap = plt.get_cmap("tab10")
    for j, n in enumerate(names):
        xs, ys, marks = [], [], []
        for i, wk in enumerate(wkeys):
            c = results["workloads"][wk]["results"].get(n)
            if c and c.get("status") == "ok":
                xs.append(i + (j - (len(names) - 1) / 2) * width)
                ys.append(c["median_ratio"])
                marks.append("*" if "sizes" in c else "")
        bars = ax.bar(xs, ys, width=width * 0.95, label=n, color=cmap(j % 10),
                      hatch="//" if n.startswith("tapegrad") else None, edgecolor="white")
        for b, y, mk in zip(bars, ys, marks):
            ax.text(b.get_x() + b.get_width() / 2, y * 1.05,
                    (f"{y:.1f}" if y < 10 else f"{y:.0f}") + mk,
                    ha="center", va="bottom", fontsize=6.5, rotation=90)
        for i, wk in enumerate(wkeys):  # workloads this implementation cannot do
            c = results["workloads"][wk]["results"].get(n)
            if c and c.get("status") in ("none", "failed"):
                ax.text(i + (j - (len(names) - 1) / 2) * width, 1.05, c["status"],
                        ha="center", va="bottom", fontsize=6.5, rotation=90, color="#777777")
    ax.axhline(1.0, color="black", lw=1, ls="--", label="hand-written NumPy (= 1)")
    ax.set_yscale("log")
    lows = [c["median_ratio"] for wres in results["workloads"].values()
            for c in wres["results"].values() if c.get("status") == "ok"]
    ax.set_xlim(-0.5, len(wkeys) - 0.5)
    ax.set_xticks(range(len(wkeys)))
    ax.set_xticklabels([f"{k}\n{_short(results['workloads'][k]['title'])}" for k in wkeys],
                       fontsize=8)
    ax.set_ylabel("time / hand-written NumPy time\n(log scale, lower is better)")
    m = results["machine"]
    thr = results.get("threads", {}).get("numpy_blas")
    ax.set_title(f"tapegrad vs hand-written NumPy and peers: {m['cpu']}, {m['cores']} cores, "
                 f"{_threads_text(thr)} each, NumPy {m['numpy']}"
                 + (" (quick sizes)" if results.get("quick") else ""), fontsize=9)
    ax.set_ylim(bottom=min([0.5] + [v * 0.6 for v in lows]), top=ax.get_ylim()[1] * 2.5)
    ax.legend(fontsize=7.5, ncol=5, loc="upper center", bbox_to_anchor=(0.5, -0.13),
              frameon=False)
    if any("sizes" in c for wres in results["workloads"].values()
           for c in wres["results"].values()):
        fig.text(0.01, 0.01, "* measured on a shorter chain (see the JSON / README notes)",
                 fontsize=7)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=130)
    plt.close(fig)
    return True


def _threads_text(n: Any) -> str:
    return f"{n} thread" + ("" if n == 1 else "s")


def _short(title: str) -> str:
    return {"MLP": "MLP SGD step", "2,0": "scalar ops", "100": "100k-op chain",
            "Hes": "Hessian-vector", "sum": "matmul+bias"}.get(title[:3], title[:14])


def versions(mods: dict[str, Any]) -> dict[str, str]:
    out = {"numpy": np.__version__}
    for name in ("tapegrad", "torch", "mygrad", "autograd", "tensorflow", "jax"):
        mod = mods.get(name)
        if mod is None:
            continue
        v = getattr(mod, "__version__", None)
        if v is None:
            try:
                from importlib.metadata import version

                v = version(name)
            except Exception:
                v = "?"
        out[name] = str(v)
    return out


# ---------------------------------------------------------------------------- main
def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__.split("\n")[0])
    p.add_argument("--quick", action="store_true", help="tiny sizes and 2 rounds (tests, CI)")
    p.add_argument("--only", default=None,
                   help="comma-separated workloads: W1,W2,W3,W4,W5 and M (memory suite)")
    p.add_argument("--json", default=None, help="where to save the JSON results")
    p.add_argument("--chart", default=None, help="where to save the PNG chart")
    p.add_argument("--markdown", default=None, help="where to save a Markdown table")
    p.add_argument("--no-peers", action="store_true", help="only hand NumPy and tapegrad")
    p.add_argument("--impls", default=None,
                   help="comma-separated parts of implementation names to run (hand NumPy "
                        "always runs), e.g. 'tf.function,torch.compile'")
    p.add_argument("--no-chart", action="store_true")
    p.add_argument("--repeats", type=int, default=None, help="rounds per workload (default 7)")
    p.add_argument("--budget", type=float, default=15.0,
                   help="seconds per implementation and workload after which it stops at "
                        f"{MIN_REPEATS} rounds")
    p.add_argument("--no-memory", action="store_true", help="skip W3 memory and the memory suite")
    p.add_argument("--max-run", type=float, default=8.0,
                   help="seconds: an implementation whose full-size W3 run is projected to "
                        "take longer is measured on a shorter chain (flagged in the results)")
    p.add_argument("--threads", type=int, default=None,
                   help="threads for every framework (default: NumPy's BLAS thread count); "
                        "1 gives steadier timings on a busy machine")
    p.add_argument("--clock", choices=sorted(CLOCKS), default="wall",
                   help="what runs are timed with: wall time (default) or the process's CPU "
                        "time (steadier when other processes compete for the CPUs; use with "
                        "--threads 1)")
    p.add_argument("--tracemalloc", action="store_true",
                   help="W3: also measure the tracemalloc peak of NumPy-based "
                        "implementations (one more run each, slow)")
    p.add_argument("--from-json", default=None,
                   help="do not measure: print/draw/write the results saved in this JSON file")
    p.add_argument("--memory-child", nargs=2, metavar=("WORKLOAD", "IMPL"),
                   help=argparse.SUPPRESS)
    p.add_argument("--memory-sizes", default=None, help=argparse.SUPPRESS)
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> dict[str, Any]:
    args = parse_args(argv)
    if args.memory_child:
        try:
            res = memory_child(args.memory_child[0], args.memory_child[1], args.quick,
                               json.loads(args.memory_sizes) if args.memory_sizes else None,
                               args.threads, args.tracemalloc)
        except Exception as exc:
            traceback.print_exc()
            res = {"status": "failed", "note": _err(exc)}
        print(json.dumps(res))
        return res

    global PROGRESS
    PROGRESS = Progress()

    def log(msg: str) -> None:
        PROGRESS.clear()
        print(msg, file=sys.stderr, flush=True)

    if args.from_json:
        saved: dict[str, Any] = json.loads(Path(args.from_json).read_text())
        return _outputs(saved, args, log, save_json=False)

    selected = [s.strip().upper() for s in args.only.split(",")] if args.only else \
        list(WORKLOADS) + ["M"]
    unknown = [s for s in selected if s not in WORKLOADS and s != "M"]
    if unknown:
        raise SystemExit(f"unknown workload(s) {unknown}: choose from {list(WORKLOADS)} and M")
    repeats = args.repeats or (2 if args.quick else 7)
    _CLOCK[0] = CLOCKS[args.clock]
    prepare_threads(args.threads)
    only_impls = None
    if args.impls:
        parts = [p.strip().lower() for p in args.impls.split(",") if p.strip()]
        only_impls = [i.name for i in IMPLS if i.kind == "limit"
                      or any(p in i.name.lower() for p in parts)]
    loaded, mods = load_impls(args.no_peers, only_impls)
    threads = configure_threads(mods, args.threads or blas_threads(),
                                forced=args.threads is not None)
    tg = importlib.import_module("tapegrad")
    mods.setdefault("tapegrad", tg)
    results: dict[str, Any] = {
        "date": time.strftime("%Y-%m-%d"),
        "quick": args.quick,
        "repeats": repeats,
        "budget_s": args.budget,
        "max_run_s": args.max_run,
        "clock": args.clock,
        "machine": machine_info(),
        "load_average_at_start": _loadavg(),
        "threads": threads,
        "versions": versions(mods),
        "implementations": {ld.impl.name: {"kind": ld.impl.kind, "module": ld.impl.module,
                                           "status": "skipped" if ld.skipped else "ok",
                                           "note": ld.skipped or ld.impl.note}
                            for ld in loaded},
        "workloads": {},
        "notes": [],
    }
    # All frameworks share this process (so that ratios are paired run by run); their
    # modules are ~500k Python objects that a user's process with one framework does not
    # have.  Freezing them keeps each full collection (ours before every run, and the
    # interpreter's own during graph-heavy runs) at the cost of the run's own objects.
    gc.collect()
    gc.freeze()
    for ld in loaded:
        if ld.skipped:
            results["notes"].append(f"{ld.impl.name} skipped: {ld.skipped}")
            log(f"{ld.impl.name}: skipped ({ld.skipped})")
    load = results["load_average_at_start"]
    if load and load[0] > 0.5:
        log(f"warning: load average {load[0]} before the run: other processes compete for "
            "the CPUs, timings will be noisy")
    t_start = time.perf_counter()
    try:
        for wkey in WORKLOADS:
            if wkey not in selected:
                continue
            w = WORKLOADS[wkey]
            log(f"{wkey}: {w.title}" + (" [quick sizes]" if args.quick else ""))
            wres = bench_workload(w, loaded, args.quick, repeats, args.budget, log,
                                  args.max_run)
            if w.measure_memory and not args.no_memory:
                measure_memory(wkey, wres["results"], args.quick, log, args.threads,
                               args.tracemalloc)
            results["workloads"][wkey] = wres
        if "M" in selected and not args.no_memory:
            log("M: memory (W1 training steps; persistent vs non-persistent tape)")
            results["memory"] = memory_suite(loaded, args.quick, log)
    finally:
        PROGRESS.clear()
        gc.unfreeze()
    results["elapsed_s"] = round(time.perf_counter() - t_start, 1)
    results["load_average_at_end"] = _loadavg()

    return _outputs(results, args, log, save_json=True)


def _outputs(results: dict[str, Any], args: argparse.Namespace, log: Any,
             save_json: bool) -> dict[str, Any]:
    """Print the table; write the JSON, the chart and the Markdown table."""
    if results["workloads"]:
        print(format_table(results))
    if save_json:
        json_path = Path(args.json) if args.json else RESULTS_DIR / "latest.json"
        json_path.parent.mkdir(parents=True, exist_ok=True)
        json_path.write_text(json.dumps(results, indent=1, default=_json_default) + "\n")
        log(f"saved {json_path}")
    chart_rel: str | None = None
    if not args.no_chart and results["workloads"]:
        chart_path = Path(args.chart) if args.chart else RESULTS_DIR / "latest.png"
        if make_chart(results, chart_path):
            log(f"saved {chart_path}")
            md_dir = Path(args.markdown).resolve().parent if args.markdown else RESULTS_DIR
            chart_rel = os.path.relpath(chart_path.resolve(), md_dir)
        else:
            log("chart skipped: matplotlib is not installed")
    if args.markdown:
        Path(args.markdown).write_text(markdown(results, chart_rel))
        log(f"saved {args.markdown}")
    return results


def _loadavg() -> list[float] | None:
    try:
        return [round(v, 2) for v in os.getloadavg()]
    except (OSError, AttributeError):
        return None


def _json_default(o: Any) -> Any:
    if isinstance(o, (np.floating, np.integer)):
        return o.item()
    if isinstance(o, np.bool_):
        return bool(o)
    if isinstance(o, np.ndarray):
        return o.tolist()
    return str(o)


if __name__ == "__main__":
    main()
