"""tf.train.Checkpoint / CheckpointManager / latest_checkpoint: round trips and bad files."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import tapegrad.tf as tf
from tapegrad.tf import checkpoint as ckmod


class Net(tf.Module):
    def __init__(self, fill: float = 0.0) -> None:
        super().__init__()
        self.w = tf.Variable(np.full((2, 3), fill, np.float32))
        self.layers = [tf.Variable(np.float64(fill)), tf.Variable(np.int64(fill))]
        self.flags = {"on": tf.Variable([fill > 0, False])}
        self.inner = Inner(fill)


class Inner(tf.Module):
    def __init__(self, fill: float) -> None:
        super().__init__()
        self.b = tf.Variable(np.full(4, fill, np.float16))


def _values(n: Net) -> list[np.ndarray]:
    return [n.w.numpy(), n.layers[0].numpy(), n.layers[1].numpy(), n.flags["on"].numpy(),
            n.inner.b.numpy()]


def test_crc32c_known_value() -> None:
    assert ckmod.crc32c(b"123456789") == 0xE3069283


def test_save_restore_write_read(tmp_path: Path) -> None:
    a = Net(1.5)
    ck = tf.train.Checkpoint(net=a)
    p1 = ck.save(str(tmp_path / "ckpt"))
    p2 = ck.save(str(tmp_path / "ckpt"))
    assert (os.path.basename(p1), os.path.basename(p2)) == ("ckpt-1", "ckpt-2")
    assert os.path.exists(p2 + ".index") and os.path.exists(p2 + ".data-00000-of-00001")
    assert (tmp_path / "checkpoint").read_text() == ('model_checkpoint_path: "ckpt-2"\n'
                                                     'all_model_checkpoint_paths: "ckpt-2"\n')
    assert tf.train.latest_checkpoint(str(tmp_path)) == p2
    keys = [k for k, _ in tf.train.list_variables(p2)]
    assert "net/inner/b/.ATTRIBUTES/VARIABLE_VALUE" in keys
    assert "net/layers/1/.ATTRIBUTES/VARIABLE_VALUE" in keys and "_CHECKPOINTABLE_OBJECT_GRAPH" in keys
    b = Net(0.0)
    ck2 = tf.train.Checkpoint(net=b)
    ck2.restore(p2).assert_consumed()
    for x, y in zip(_values(a), _values(b)):
        np.testing.assert_array_equal(x, y)
        assert x.dtype == y.dtype
    assert int(ck2.save_counter.numpy()) == 2
    assert os.path.basename(ck2.save(str(tmp_path / "ckpt"))) == "ckpt-3"
    w = ck.write(str(tmp_path / "exact"))
    assert w == str(tmp_path / "exact") and tf.train.latest_checkpoint(str(tmp_path)).endswith("3")
    c = Net(0.0)
    tf.train.Checkpoint(net=c).read(w).assert_consumed()
    np.testing.assert_array_equal(c.w.numpy(), a.w.numpy())
    assert tf.train.Checkpoint(net=Net()).restore(None).expect_partial() is not None


def test_keras_models_round_trip(tmp_path: Path) -> None:
    def model() -> Any:
        return tf.keras.Sequential([tf.keras.Input((3,)), tf.keras.layers.Dense(4),
                                    tf.keras.layers.Dense(1)])

    m = model()
    path = tf.train.Checkpoint(model=m).save(str(tmp_path / "k"))
    m2 = model()
    tf.train.Checkpoint(model=m2).restore(path).assert_consumed()
    for x, y in zip(m.get_weights(), m2.get_weights()):
        np.testing.assert_array_equal(x, y)


def test_manager_keeps_the_newest(tmp_path: Path) -> None:
    v = tf.Variable(0.0)
    ck = tf.train.Checkpoint(v=v)
    mgr = tf.train.CheckpointManager(ck, str(tmp_path), max_to_keep=2)
    assert mgr.latest_checkpoint is None and mgr.restore_or_initialize() is None
    for i in range(4):
        v.assign(float(i))
        mgr.save()
    assert [os.path.basename(p) for p in mgr.checkpoints] == ["ckpt-3", "ckpt-4"]
    assert sorted(os.listdir(tmp_path)) == ["checkpoint", "ckpt-3.data-00000-of-00001",
                                            "ckpt-3.index", "ckpt-4.data-00000-of-00001",
                                            "ckpt-4.index"]
    state = (tmp_path / "checkpoint").read_text()
    assert state.count("all_model_checkpoint_timestamps") == 2 and "last_preserved" in state
    again = tf.train.CheckpointManager(tf.train.Checkpoint(v=tf.Variable(9.0)), str(tmp_path),
                                       max_to_keep=2)
    assert again.checkpoints == mgr.checkpoints
    assert again.restore_or_initialize() == mgr.latest_checkpoint
    assert again.checkpoint.v.numpy() == 3.0
    assert os.path.basename(mgr.save(checkpoint_number=100)) == "ckpt-100"
    with pytest.raises(ValueError, match="Expected a positive integer or `None` for "
                                         "`max_to_keep`"):
        tf.train.CheckpointManager(ck, str(tmp_path), max_to_keep=0)
    keep_all = tf.train.CheckpointManager(ck, str(tmp_path / "all"), max_to_keep=None)
    for _ in range(3):
        keep_all.save()
    assert len(keep_all.checkpoints) == 3


def test_latest_checkpoint_missing_or_stale(tmp_path: Path) -> None:
    assert tf.train.latest_checkpoint(str(tmp_path / "nope")) is None
    (tmp_path / "checkpoint").write_text('model_checkpoint_path: "gone-1"\n')
    assert tf.train.latest_checkpoint(str(tmp_path)) is None
    (tmp_path / "checkpoint").write_text("garbage \x00 not a proto\n")
    assert tf.train.latest_checkpoint(str(tmp_path)) is None


def test_mismatches_change_nothing(tmp_path: Path) -> None:
    a = Net(2.0)
    path = tf.train.Checkpoint(net=a).save(str(tmp_path / "c"))
    b = Net(0.0)
    b.inner.b = tf.Variable(np.zeros(5, np.float16))  # shape differs from the file
    with pytest.raises(ValueError, match=r"Received incompatible tensor with shape \(4,\) when "
                                         r"attempting to restore variable with shape \(5,\) and "
                                         r"name net/inner/b/.ATTRIBUTES/VARIABLE_VALUE."):
        tf.train.Checkpoint(net=b).restore(path)
    assert b.w.numpy().sum() == 0.0  # nothing assigned
    extra = Net(0.0)
    extra.more = tf.Variable(1.0)
    status = tf.train.Checkpoint(net=extra).restore(path)
    with pytest.raises(AssertionError, match="not found in the checkpoint"):
        status.assert_existing_objects_matched()
    fewer = tf.train.Checkpoint(other=tf.Variable(0.0))
    with pytest.raises(AssertionError, match="Unresolved object in checkpoint"):
        fewer.restore(path).assert_consumed()
    with pytest.raises(ValueError, match="`Checkpoint` was expecting a trackable object"):
        tf.train.Checkpoint(x=1)
    with pytest.raises(tf.errors.NotFoundError, match="Failed to find any matching files"):
        tf.train.Checkpoint(net=Net()).restore(str(tmp_path / "missing-7"))


def test_corrupt_files_give_data_loss(tmp_path: Path) -> None:
    path = tf.train.Checkpoint(net=Net(1.0)).save(str(tmp_path / "c"))
    index = Path(path + ".index").read_bytes()
    data = Path(path + ".data-00000-of-00001").read_bytes()
    rng = np.random.default_rng(0)
    for trial in range(60):
        bad_index, bad_data = bytearray(index), bytearray(data)
        target = bad_index if trial % 2 else bad_data
        for _ in range(1 + trial % 3):
            target[int(rng.integers(len(target)))] ^= 1 << int(rng.integers(8))
        if trial % 5 == 4:
            bad_index = bad_index[: int(rng.integers(len(bad_index)))]
        Path(path + ".index").write_bytes(bytes(bad_index))
        Path(path + ".data-00000-of-00001").write_bytes(bytes(bad_data))
        n = Net(0.0)
        before = _values(n)
        try:
            tf.train.Checkpoint(net=n).restore(path)
        except (tf.errors.DataLossError, tf.errors.NotFoundError, ValueError):
            for x, y in zip(before, _values(n)):
                np.testing.assert_array_equal(x, y)
    Path(path + ".index").write_bytes(b"\x00" * 10)
    with pytest.raises(tf.errors.DataLossError, match="not an sstable"):
        tf.train.Checkpoint(net=Net()).restore(path)
    Path(path + ".index").write_bytes(index)
    Path(path + ".data-00000-of-00001").write_bytes(data[:-20])
    with pytest.raises(tf.errors.DataLossError):
        tf.train.Checkpoint(net=Net()).restore(path)


@pytest.mark.parametrize("opt", ["sgd_momentum", "adam"])
def test_model_and_optimizer_resume_identically(tmp_path: Path, opt: str) -> None:
    def make() -> tuple[Any, Any]:
        tf.random.set_seed(0)
        m = tf.keras.Sequential([tf.keras.Input((3,)), tf.keras.layers.Dense(2)])
        o = (tf.keras.optimizers.SGD(0.05, momentum=0.9) if opt == "sgd_momentum"
             else tf.keras.optimizers.Adam(0.1))
        return m, o

    x = np.random.default_rng(0).normal(size=(4, 3)).astype(np.float32)

    def step(m: Any, o: Any) -> None:
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(m(x) ** 2)
        grads = tape.gradient(loss, m.trainable_variables)
        o.apply_gradients(zip(grads, m.trainable_variables))

    m1, o1 = make()
    for _ in range(3):
        step(m1, o1)
    path = tf.train.Checkpoint(model=m1, optimizer=o1).save(str(tmp_path / "c"))
    keys = [k for k, _ in tf.train.list_variables(path)]
    assert any("/.OPTIMIZER_SLOT/optimizer/" in k for k in keys)
    m2, o2 = make()
    m2.set_weights([w * 0 for w in m2.get_weights()])
    tf.train.Checkpoint(model=m2, optimizer=o2).restore(path).assert_consumed()
    assert int(o2.iterations.numpy()) == 3
    for _ in range(3):
        step(m1, o1)
        step(m2, o2)
    for a, b in zip(m1.get_weights(), m2.get_weights()):
        np.testing.assert_array_equal(a, b)
