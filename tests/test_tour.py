"""The tour: every seed example runs on tapegrad and prints what the real framework prints."""

from __future__ import annotations

import io
import subprocess
import sys

import pytest

from tapegrad.tour import EXAMPLES, run_example, run_tour
from tapegrad.tour.expected import EXPECTED


def test_every_topic_has_both_styles() -> None:
    topics: dict[str, set[str]] = {}
    for ex in EXAMPLES:
        topics.setdefault(ex.topic, set()).add(ex.style)
    assert all(styles == {"tf", "torch"} for styles in topics.values())
    assert len(EXPECTED) == len(EXAMPLES)


@pytest.mark.parametrize("index", range(len(EXAMPLES)),
                         ids=[f"{e.topic.split('.')[0]}-{e.style}" for e in EXAMPLES])
def test_example_prints_what_the_real_framework_prints(index: int) -> None:
    text, err = run_example(EXAMPLES[index])
    assert err is None, err
    assert text == EXPECTED[index]


def test_tour_output_and_exit_status() -> None:
    out = io.StringIO()
    status = run_tour(stream=out, progress=io.StringIO())
    text = out.getvalue()
    assert status == 0, text
    assert f"{len(EXAMPLES)} of {len(EXAMPLES)} examples print exactly" in text
    assert "TensorFlow style" in text and "PyTorch style" in text
    # the two columns of the first topic appear on one line
    assert any("TensorFlow y: 5.0" in line and "PyTorch y: 5.0" in line
               for line in text.splitlines())


def test_tour_fails_on_disagreement(monkeypatch: pytest.MonkeyPatch) -> None:
    import tapegrad.tour as tour

    bad = list(EXPECTED)
    bad[0] = "something else\n"
    monkeypatch.setattr(tour, "EXPECTED", bad)
    out = io.StringIO()
    assert tour.run_tour(stream=out, progress=io.StringIO()) == 1
    assert "differs" in out.getvalue()


def test_cli_runs() -> None:
    r = subprocess.run([sys.executable, "-m", "tapegrad", "tour"], capture_output=True,
                       text=True, timeout=300)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    assert "What agrees" in r.stdout
