"""``--clock cpu`` and ``python -m benchmarks.profile`` (quick sizes: structure, no timings)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from benchmarks import profile
from benchmarks import run as runner

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.slow


def test_cpu_clock_is_recorded_and_used(tmp_path: Path) -> None:
    out = tmp_path / "w2.json"
    res = runner.main(["--quick", "--no-peers", "--only", "W2", "--clock", "cpu", "--no-chart",
                       "--json", str(out), "--markdown", str(tmp_path / "w2.md")])
    assert res["clock"] == "cpu" and json.loads(out.read_text())["clock"] == "cpu"
    assert "Timed by the process's CPU time" in (tmp_path / "w2.md").read_text()
    cells = res["workloads"]["W2"]["results"]
    assert cells["tapegrad core (backward)"]["grad_check"] == "pass"
    assert runner._CLOCK[0] is runner.CLOCKS["cpu"]
    runner._CLOCK[0] = runner.CLOCKS["wall"]  # the module-level clock, as a fresh run has it


def test_unknown_clock_is_refused() -> None:
    with pytest.raises(SystemExit):
        runner.parse_args(["--clock", "sundial"])


def test_profile_counts_calls_and_the_collector() -> None:
    import tapegrad as tg

    x = tg.tensor(np.array(0.5), requires_grad=True)

    def run() -> list[np.ndarray]:
        y = x
        for _ in range(50):
            y = y * 1.0001 + 0.0001
        y.backward()
        return [x.grad.numpy()]

    prof = profile.profile_run(run, top=5)
    # every op is at least its __call__ and its kernel: 100 ops, more than 200 calls
    assert prof["calls"] > 200 and 0.0 < prof["backward_share"] < 1.0
    assert len(prof["top"]) == 5 and all(f["calls"] >= 1 for f in prof["top"])
    g = profile.gc_run(run)
    assert g["run_s"] >= 0.0 and len(g["collections"]) == 3 and len(g["gc_s"]) == 3


def test_w2_parts_cover_the_pieces() -> None:
    rows = dict(profile.w2_parts())
    assert len(rows) == 9 and all(v > 0 for v in rows.values())
    assert "whole op, recorded: x * 1.0001" in rows and "VJP of multiply (grad mode off)" in rows


def test_profile_entry_point_quick() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "benchmarks.profile", "--sizes", "quick", "--only", "W2,W5",
         "--styles", "core,torch", "--repeats", "1", "--top", "3", "--stages"],
        cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "W2:" in out and "W5:" in out and "calls/op" in out
    assert "Chain stages" in out and "W2 core" in out and "W3 torch" in out
