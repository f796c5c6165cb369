"""The benchmark runner in --quick --no-peers mode: structure and gradient checks (no timings)."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from benchmarks import run as runner
from benchmarks.impls import IMPLS
from benchmarks.workloads import WORKLOADS, check

ROOT = Path(__file__).resolve().parents[2]

# the runner runs every workload (tiny sizes) and starts child processes: a few seconds
pytestmark = pytest.mark.slow


def _complete(module: str) -> bool:
    try:
        mod = importlib.import_module(module)
    except ImportError:
        return False
    impl = next(i for i in IMPLS if i.module == module)
    return all(hasattr(mod, a) for a in impl.requires)


@pytest.fixture(scope="module")
def quick(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], Path]:
    out = tmp_path_factory.mktemp("bench")
    res = runner.main(["--quick", "--no-peers", "--tracemalloc", "--json", str(out / "r.json"),
                       "--chart", str(out / "r.png"), "--markdown", str(out / "r.md")])
    return res, out


def test_json_structure(quick: tuple[dict[str, Any], Path]) -> None:
    res, out = quick
    saved = json.loads((out / "r.json").read_text())
    assert saved["workloads"].keys() == res["workloads"].keys() == set(WORKLOADS)
    assert saved["quick"] is True
    for key in ("machine", "threads", "versions", "implementations", "repeats", "memory"):
        assert key in saved
    assert saved["machine"]["cores"] >= 1 and saved["machine"]["numpy"] == np.__version__
    assert saved["threads"]["numpy_blas"] >= 1
    # no peers were run
    kinds = {v["kind"] for v in saved["implementations"].values()}
    assert kinds <= {"limit", "tapegrad"}
    for wkey, w in saved["workloads"].items():
        assert w["sizes"] == WORKLOADS[wkey].quick_sizes
        cells = w["results"]
        ref = cells["numpy (hand)"]
        assert ref["status"] == "ok" and ref["median_ratio"] == 1.0
        core = cells["tapegrad core (backward)"]
        assert core["status"] == "ok", core.get("note")
        assert len(core["times_s"]) == len(core["ratios"]) == core["repeats"] >= 1
        assert core["median_s"] > 0 and core["median_ratio"] > 0


def test_every_gradient_check_passes(quick: tuple[dict[str, Any], Path]) -> None:
    res, _ = quick
    for w in res["workloads"].values():
        for name, cell in w["results"].items():
            if cell["status"] == "ok":
                assert cell["grad_check"] == "pass", (name, cell["grad_err"])
                assert all(cell["grad_ok"]) and len(cell["grad_ok"]) == cell["repeats"]
                assert max(cell["grad_err"]) <= w["tolerance"]


def test_front_ends_run_when_installed(quick: tuple[dict[str, Any], Path]) -> None:
    res, _ = quick
    for impl in IMPLS:
        if impl.kind != "tapegrad" or impl.module is None:
            continue
        if not _complete(impl.module):
            continue
        declared = impl.build(importlib.import_module(impl.module))
        for wkey, w in res["workloads"].items():
            if wkey not in declared:  # e.g. the compiled variants cover W1-W3 only
                continue
            cell = w["results"][impl.name]
            assert cell["status"] == "ok", (impl.name, wkey, cell.get("note"))


def test_per_op_time_and_memory(quick: tuple[dict[str, Any], Path]) -> None:
    res, _ = quick
    assert res["workloads"]["W2"]["ops"] == 2 * WORKLOADS["W2"].quick_sizes["n"]
    assert res["workloads"]["W2"]["results"]["tapegrad core (backward)"]["us_per_op"] > 0
    w3 = res["workloads"]["W3"]["results"]["tapegrad core (backward)"]
    assert w3["memory"]["status"] == "ok"
    assert w3["peak_mb"] >= 0 and w3["memory"]["tracemalloc_peak_mb"] > 0
    mem = res["memory"]
    prof = mem["training"]["tapegrad core (backward)"]
    assert len(prof["held_mb"]) == len(prof["peak_mb"]) == mem["steps"]
    assert prof["flat"], prof["held_mb"]
    assert mem["persistence"]
    for modes in mem["persistence"].values():
        assert "status" not in modes, modes
        for m in modes.values():
            assert m["peak_mb"] >= m["after_release_mb"]


def test_table_chart_and_markdown(quick: tuple[dict[str, Any], Path]) -> None:
    res, out = quick
    table = runner.format_table(res)
    assert table.splitlines()[0].startswith("workload")
    assert len(table.splitlines()) == 2 + len(WORKLOADS)
    md = (out / "r.md").read_text()
    assert "| workload |" in md and res["machine"]["cpu"] in md
    pytest.importorskip("matplotlib")
    assert (out / "r.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_check_rejects_wrong_gradients() -> None:
    ref = [np.array([1.0, 2.0])]
    assert check([np.array([1.0, 2.0])], ref, 1e-7) == (True, 0.0)
    assert not check([np.array([1.0, 2.1])], ref, 1e-7)[0]
    assert not check([np.array([1.0])], ref, 1e-7)[0]
    assert not check([np.array([np.nan, 2.0])], ref, 1e-7)[0]
    assert not check([], ref, 1e-7)[0]


def test_reference_gradients_match_finite_differences() -> None:
    # the hand-written NumPy limit is itself correct (W5: a directional derivative)
    w = WORKLOADS["W5"]
    d = w.make_data(w.quick_sizes, 0)
    gA, gB, gb = w.reference(d)()
    rng = np.random.default_rng(1)
    dA = rng.standard_normal(d["A"].shape)

    def f(A: np.ndarray) -> float:
        A64 = A.astype(np.float64)
        return float(np.sum((A64 @ d["B"].astype(np.float64) + d["bias"]) ** 2))

    eps = 1e-4
    A0 = d["A"].astype(np.float64)
    fd = (f(A0 + eps * dA) - f(A0 - eps * dA)) / (2 * eps)
    assert np.isclose(fd, float(np.sum(gA * dA)), rtol=1e-3)
    # W4: H v against a difference of gradients
    w4 = WORKLOADS["W4"]
    d4 = w4.make_data(w4.quick_sizes, 0)
    (hv,) = w4.reference(d4)()
    X, w0, v = d4["X"], d4["w"], d4["v"]

    def grad(wv: np.ndarray) -> np.ndarray:
        return X.T @ (1 - np.tanh(X @ wv) ** 2)

    fd4 = (grad(w0 + 1e-6 * v) - grad(w0 - 1e-6 * v)) / 2e-6
    assert np.allclose(hv, fd4, rtol=1e-5, atol=1e-8)


def test_script_entry_point_and_only(tmp_path: Path) -> None:
    out = tmp_path / "w2.json"
    proc = subprocess.run(
        [sys.executable, "benchmarks/run.py", "--quick", "--no-peers", "--only", "W2",
         "--no-chart", "--json", str(out)],
        cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    res = json.loads(out.read_text())
    assert list(res["workloads"]) == ["W2"] and "memory" not in res
    assert "W2" in proc.stdout


def test_unknown_workload_is_refused() -> None:
    with pytest.raises(SystemExit, match="unknown workload"):
        runner.main(["--only", "W99"])


def test_outputs_can_be_redrawn_from_json(quick: tuple[dict[str, Any], Path],
                                          tmp_path: Path) -> None:
    _, out = quick
    res = runner.main(["--from-json", str(out / "r.json"), "--no-chart",
                       "--markdown", str(tmp_path / "again.md")])
    assert set(res["workloads"]) == set(WORKLOADS)
    assert "| workload |" in (tmp_path / "again.md").read_text()
