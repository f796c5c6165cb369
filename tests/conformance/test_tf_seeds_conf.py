"""Conformance: each TensorFlow seed snippet, run as a script twice (``import tensorflow
as tf`` and ``import tapegrad.tf as tf``), prints exactly the same stdout.

The real-TensorFlow runs start together (TensorFlow takes seconds to import).
Skipped without TensorFlow.
"""

from __future__ import annotations

import importlib.util
import subprocess
from pathlib import Path

import pytest

from tests.tf_style.test_tf_seeds import EXPECTED, SEEDS, run_script, tapegrad_source

pytestmark = pytest.mark.skipif(importlib.util.find_spec("tensorflow") is None,
                                reason="TensorFlow is not installed")


@pytest.fixture(scope="module")
def tf_outputs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[int, str, str]]:
    tmp = tmp_path_factory.mktemp("tf_seeds")
    procs = {name: run_script((SEEDS / name).read_text(), tmp, name) for name in EXPECTED}
    out: dict[str, tuple[int, str, str]] = {}
    for name, proc in procs.items():
        try:
            so, se = proc.communicate(timeout=300)
        except subprocess.TimeoutExpired:  # pragma: no cover
            proc.kill()
            so, se = proc.communicate()
        out[name] = (proc.returncode, so, se)
    return out


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_seed_prints_the_same_as_tensorflow(name: str, tf_outputs: dict[str, tuple[int, str, str]],
                                            tmp_path: Path) -> None:
    rc, tf_out, tf_err = tf_outputs[name]
    assert rc == 0, tf_err
    proc = run_script(tapegrad_source(SEEDS / name), tmp_path, name)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    assert out == tf_out
    assert out == EXPECTED[name]
