"""tf.train checkpoints cross between tapegrad and real TensorFlow, both directions.

Module trees (variables of every dtype both have, in lists, dicts and nested
modules) saved on one side restore on the other with ``assert_consumed()``;
``CheckpointManager`` directories and ``latest_checkpoint`` are shared.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import tapegrad.tf as tg
from tests.tf_style.tf_helpers import real_tf

DTYPES = ["float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8",
          "uint16", "uint32", "uint64", "bool", "complex64", "complex128"]


@pytest.fixture(scope="module")
def rtf() -> Any:
    return real_tf()


def _value(name: str, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed + DTYPES.index(name))
    a = rng.normal(size=(2, 3)) * 30
    if name.startswith("complex"):
        a = a + 1j * rng.normal(size=(2, 3))
    return (a > 0) if name == "bool" else a.astype(name)


def _tree(tf: Any, seed: int) -> Any:
    class Inner(tf.Module):
        def __init__(self) -> None:
            super().__init__()
            self.scalar = tf.Variable(np.float32(seed))

    class Tree(tf.Module):
        def __init__(self) -> None:
            super().__init__()
            self.by_dtype = {n: tf.Variable(_value(n, seed)) for n in DTYPES}
            self.stack = [tf.Variable(np.full(3, seed, np.float32)), Inner()]

    return Tree()


def _numpy(t: Any) -> dict[str, np.ndarray]:
    out = {n: np.asarray(v.numpy()) for n, v in t.by_dtype.items()}
    out["stack0"] = np.asarray(t.stack[0].numpy())
    out["scalar"] = np.asarray(t.stack[1].scalar.numpy())
    return out


@pytest.mark.parametrize("direction", ["tapegrad_to_tf", "tf_to_tapegrad"])
def test_module_trees_cross(rtf: Any, tmp_path: Path, direction: str) -> None:
    src, dst = (tg, rtf) if direction == "tapegrad_to_tf" else (rtf, tg)
    a = _tree(src, 1)
    ck = src.train.Checkpoint(tree=a, extra=src.Variable(np.int64(7)))
    path = ck.save(str(tmp_path / "ckpt"))
    assert dst.train.latest_checkpoint(str(tmp_path)) == path
    assert sorted(k for k, _ in dst.train.list_variables(path)) == \
        sorted(k for k, _ in src.train.list_variables(path))
    b = _tree(dst, 0)
    ck2 = dst.train.Checkpoint(tree=b, extra=dst.Variable(np.int64(0)))
    ck2.restore(path).assert_consumed()
    want, got = _numpy(a), _numpy(b)
    for k in want:
        assert got[k].dtype == want[k].dtype
        np.testing.assert_array_equal(got[k], want[k])
    assert int(ck2.save_counter.numpy()) == 1 and int(ck2.extra.numpy()) == 7


@pytest.mark.parametrize("direction", ["tapegrad_to_tf", "tf_to_tapegrad"])
def test_manager_directories_are_shared(rtf: Any, tmp_path: Path, direction: str) -> None:
    src, dst = (tg, rtf) if direction == "tapegrad_to_tf" else (rtf, tg)
    v = src.Variable(0.0)
    mgr = src.train.CheckpointManager(src.train.Checkpoint(v=v), str(tmp_path), max_to_keep=2)
    for i in range(3):
        v.assign(float(i + 1))
        mgr.save()
    w = dst.Variable(0.0)
    ck = dst.train.Checkpoint(v=w)
    other = dst.train.CheckpointManager(ck, str(tmp_path), max_to_keep=2)
    assert other.checkpoints == mgr.checkpoints
    assert other.restore_or_initialize() == mgr.latest_checkpoint
    assert float(w.numpy()) == 3.0
    nxt = other.save()
    assert os.path.basename(nxt) == "ckpt-4"
    assert sorted(f for f in os.listdir(tmp_path) if f.endswith(".index")) == \
        ["ckpt-3.index", "ckpt-4.index"]
    assert src.train.latest_checkpoint(str(tmp_path)) == nxt


def test_shape_mismatch_is_refused_by_both(rtf: Any, tmp_path: Path) -> None:
    path = tg.train.Checkpoint(v=tg.Variable(np.zeros(3, np.float32))).save(str(tmp_path / "c"))
    for fw in (rtf, tg):
        with pytest.raises(ValueError, match=r"Received incompatible tensor with shape \(3,\) "
                                             r"when attempting to restore variable with shape "
                                             r"\(4,\)"):
            fw.train.Checkpoint(v=fw.Variable(np.zeros(4, np.float32))).restore(path)
