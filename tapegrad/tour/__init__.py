"""The side-by-side tour: every seed example in TensorFlow style and PyTorch
style on tapegrad, with a final table of what agrees.

Run it with ``python -m tapegrad tour`` (add ``--against-real`` to also run
the installed real frameworks and compare).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
import subprocess
import sys
import textwrap
import time
import traceback
from collections.abc import Sequence
from typing import TextIO

from .examples import EXAMPLES, Example, for_tapegrad
from .expected import EXPECTED

__all__ = ["run_tour", "run_example", "EXAMPLES"]

_STYLE_TITLE = {"tf": "TensorFlow style (import tapegrad.tf as tf)",
                "torch": "PyTorch style (import tapegrad.torch as torch)"}


def run_example(ex: Example) -> tuple[str, str | None]:
    """Run one example on tapegrad in this process; return (stdout, error or None)."""
    buf = io.StringIO()
    err = None
    code = compile(for_tapegrad(ex), f"<tour: {ex.topic} ({ex.style})>", "exec")
    with contextlib.redirect_stdout(buf):
        try:
            exec(code, {"__name__": "__tour__"})
        except Exception:  # an example failing is reported, not fatal
            err = traceback.format_exc(limit=3)
    return buf.getvalue(), err


_REAL_RUNNER = r"""
import contextlib, io, json, sys, traceback
codes = json.loads(sys.stdin.read())
out = []
for code in codes:
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        try:
            exec(compile(code, "<example>", "exec"), {"__name__": "__tour__"})
        except Exception:
            print(traceback.format_exc(limit=2))
    out.append(buf.getvalue())
print(json.dumps(out))
"""


def run_real(style: str, examples: Sequence[Example]) -> list[str] | None:
    """Run examples on the installed real framework (one subprocess); None if absent."""
    module = "tensorflow" if style == "tf" else "torch"
    probe = subprocess.run([sys.executable, "-c", f"import {module}"], capture_output=True)
    if probe.returncode != 0:
        return None
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
    r = subprocess.run([sys.executable, "-c", _REAL_RUNNER], input=json.dumps(
        [e.code for e in examples]), capture_output=True, text=True, env=env)
    if r.returncode != 0:
        return None
    return list(json.loads(r.stdout.strip().splitlines()[-1]))


def _columns(left: str, right: str, width: int) -> str:
    col = (width - 3) // 2
    lw = [w for line in left.rstrip("\n").splitlines() for w in (textwrap.wrap(line, col) or [""])]
    rw = [w for line in right.rstrip("\n").splitlines() for w in (textwrap.wrap(line, col) or [""])]
    n = max(len(lw), len(rw))
    lw += [""] * (n - len(lw))
    rw += [""] * (n - len(rw))
    return "\n".join(f"{a:<{col}} | {b}" for a, b in zip(lw, rw))


class _Progress:
    """Prints 'running k/N' on stderr once the tour has taken more than a second."""

    def __init__(self, total: int, stream: TextIO) -> None:
        self.total = total
        self.start = time.perf_counter()
        self.stream = stream
        self.shown = False

    def step(self, k: int, what: str) -> None:
        if time.perf_counter() - self.start > 1.0 and self.stream.isatty():
            self.stream.write(f"\r  running {k}/{self.total}: {what[:50]:<50}")
            self.stream.flush()
            self.shown = True
        elif time.perf_counter() - self.start > 1.0 and not self.shown:
            self.stream.write(f"  running {k}/{self.total} ...\n")
            self.shown = True

    def done(self) -> None:
        if self.shown and self.stream.isatty():
            self.stream.write("\r" + " " * 70 + "\r")


def run_tour(
    against_real: bool = False,
    show_code: bool = False,
    stream: TextIO | None = None,
    progress: TextIO | None = None,
    record: bool = False,
) -> int:
    """Run the tour; return the exit status (0 when everything agrees)."""
    out = stream or sys.stdout
    prog = _Progress(len(EXAMPLES) + (2 if against_real else 0), progress or sys.stderr)
    width = max(80, min(shutil.get_terminal_size((120, 20)).columns, 160))
    results: list[tuple[Example, str, str | None]] = []
    for k, ex in enumerate(EXAMPLES, 1):
        prog.step(k, f"{ex.topic} ({ex.style})")
        text, err = run_example(ex)
        results.append((ex, text, err))
    real: dict[str, list[str] | None] = {}
    if against_real:
        for style in ("tf", "torch"):
            prog.step(len(EXAMPLES) + (1 if style == "tf" else 2), f"real {style}")
            exs = [e for e in EXAMPLES if e.style == style]
            real[style] = run_real(style, exs)
    prog.done()
    real_by_index: dict[int, str] = {}
    for style in ("tf", "torch"):
        outs = real.get(style)
        if outs is None:
            continue
        idx = [i for i, e in enumerate(EXAMPLES) if e.style == style]
        real_by_index.update(dict(zip(idx, outs)))

    out.write("tapegrad tour: the same examples in TensorFlow style and PyTorch style, "
              "on one engine\n")
    topics: list[str] = list(dict.fromkeys(e.topic for e in EXAMPLES))
    for topic in topics:
        pair = {ex.style: (i, ex, text, err) for i, (ex, text, err) in enumerate(results)
                if ex.topic == topic}
        out.write("\n" + "=" * width + f"\n{topic}\n" + "=" * width + "\n")
        left_title, right_title = _STYLE_TITLE["tf"], _STYLE_TITLE["torch"]
        out.write(_columns(left_title, right_title, width) + "\n")
        out.write(_columns("-" * 40, "-" * 40, width) + "\n")
        if show_code:
            lc = pair["tf"][1].code.strip() if "tf" in pair else ""
            rc = pair["torch"][1].code.strip() if "torch" in pair else ""
            out.write(_columns(lc, rc, width) + "\n" + _columns("-" * 40, "-" * 40, width) + "\n")
        lt = _shown(pair.get("tf"))
        rt = _shown(pair.get("torch"))
        out.write(_columns(lt, rt, width) + "\n")

    out.write("\nWhat agrees (tapegrad's output vs what the real framework prints)\n")
    header = f"{'example':<42} {'style':<6} {'tapegrad = recorded':<20}"
    if against_real:
        header += f" {'tapegrad = real now':<20}"
    out.write(header + "\n" + "-" * len(header) + "\n")
    bad = 0
    for i, (ex, text, err) in enumerate(results):
        ok_rec = err is None and text == EXPECTED[i]
        row = f"{ex.topic:<42} {ex.style:<6} {_mark(ok_rec):<20}"
        bad += not ok_rec
        if against_real:
            r = real_by_index.get(i)
            if r is None:
                row += f" {'not installed':<20}"
            else:
                ok_real = err is None and text == r
                bad += not ok_real
                row += f" {_mark(ok_real):<20}"
        out.write(row + "\n")
    n = len(results)
    out.write(f"\n{n - sum(1 for i, r in enumerate(results) if r[2] is not None or r[1] != EXPECTED[i])}"
              f" of {n} examples print exactly what the real framework prints.\n")
    for i, (ex, text, err) in enumerate(results):
        if err is not None or text != EXPECTED[i]:
            out.write(f"\n--- {ex.topic} ({ex.style}) differs ---\nexpected:\n{EXPECTED[i]}"
                      f"got:\n{text}{err or ''}\n")
    if record and real_by_index:
        _record(real_by_index)
    return 1 if bad else 0


def _shown(item: tuple[int, Example, str, str | None] | None) -> str:
    if item is None:
        return ""
    _, _, text, err = item
    if err is not None:
        return text + "ERROR:\n" + err
    return text


def _mark(ok: bool) -> str:
    return "yes" if ok else "NO"


def _record(real: dict[int, str]) -> None:
    path = os.path.join(os.path.dirname(__file__), "expected.py")
    exp = [real.get(i, EXPECTED[i]) for i in range(len(EXAMPLES))]
    with open(path, encoding="utf-8") as f:
        head = f.read().split("EXPECTED: list[str] = [")[0]
    body = "".join(f"    {e!r},\n" for e in exp)
    with open(path, "w", encoding="utf-8") as f:
        f.write(head + "EXPECTED: list[str] = [\n" + body + "]\n")


