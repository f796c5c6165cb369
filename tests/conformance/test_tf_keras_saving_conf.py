"""Keras files cross between tapegrad's Keras and real Keras 3, both directions.

``.weights.h5`` and ``.keras`` files of Sequential models and of a registered
subclassed model, written on one side, load on the other and give the same
outputs; a mismatched load fails with the same leading message.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

import tapegrad.tf as tg_tf
from tests.tf_style.tf_helpers import real_tf

pytest.importorskip("h5py")
pytestmark = pytest.mark.filterwarnings("ignore:__array__ implementation:DeprecationWarning")

X = np.random.default_rng(3).normal(size=(6, 3)).astype(np.float32)


@pytest.fixture(scope="module")
def rk() -> Any:
    real_tf()
    return pytest.importorskip("keras")


def _seq(k: Any, units: int = 4) -> Any:
    return k.Sequential([k.Input((3,)), k.layers.Dense(units, activation="tanh"),
                         k.layers.Dense(units, activation="relu"),
                         k.layers.Dense(2, use_bias=False)])


def _net_class(k: Any) -> Any:
    class Net(k.Model):
        def __init__(self, units: int = 4, **kwargs: Any) -> None:
            super().__init__(**kwargs)
            self.units = units
            self.hidden = k.layers.Dense(units, activation="tanh")
            self.out = k.layers.Dense(1)

        def call(self, x: Any) -> Any:
            return self.out(self.hidden(x))

        def get_config(self) -> dict[str, Any]:
            return {**super().get_config(), "units": self.units}

    return Net


def _random_weights(model: Any, seed: int) -> None:
    rng = np.random.default_rng(seed)
    model.set_weights([rng.normal(size=w.shape).astype(np.float32) for w in model.get_weights()])


def _out(model: Any) -> np.ndarray:
    return np.asarray(model(X))


@pytest.mark.parametrize("direction", ["tapegrad_to_keras", "keras_to_tapegrad"])
def test_weights_h5_crosses(rk: Any, tmp_path: Path, direction: str) -> None:
    src, dst = (tg_tf.keras, rk) if direction == "tapegrad_to_keras" else (rk, tg_tf.keras)
    a = _seq(src)
    _random_weights(a, 0)
    path = tmp_path / "m.weights.h5"
    a.save_weights(str(path))
    b = _seq(dst)
    b.load_weights(str(path))
    np.testing.assert_allclose(_out(b), _out(a), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("direction", ["tapegrad_to_keras", "keras_to_tapegrad"])
def test_keras_zip_sequential_crosses(rk: Any, tmp_path: Path, direction: str) -> None:
    src, dst = (tg_tf.keras, rk) if direction == "tapegrad_to_keras" else (rk, tg_tf.keras)
    a = _seq(src)
    _random_weights(a, 1)
    path = tmp_path / "m.keras"
    a.save(str(path))
    b = dst.models.load_model(str(path))
    assert [layer.name for layer in b.layers] == [layer.name for layer in a.layers]
    np.testing.assert_allclose(_out(b), _out(a), rtol=1e-6, atol=1e-6)
    c = _seq(dst)
    c.load_weights(str(path))
    np.testing.assert_allclose(_out(c), _out(a), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("direction", ["tapegrad_to_keras", "keras_to_tapegrad"])
def test_registered_subclassed_model_crosses(rk: Any, tmp_path: Path, direction: str) -> None:
    src, dst = (tg_tf.keras, rk) if direction == "tapegrad_to_keras" else (rk, tg_tf.keras)
    src_net = src.saving.register_keras_serializable(package="Conf")(_net_class(src))
    dst_net = dst.saving.register_keras_serializable(package="Conf")(_net_class(dst))
    a = src_net(3)
    a(X)
    _random_weights(a, 2)
    a.save_weights(str(tmp_path / "n.weights.h5"))
    b = dst_net(3)
    b(X)
    b.load_weights(str(tmp_path / "n.weights.h5"))
    np.testing.assert_allclose(_out(b), _out(a), rtol=1e-6, atol=1e-6)
    a.save(str(tmp_path / "n.keras"))
    c = dst.models.load_model(str(tmp_path / "n.keras"))
    assert type(c) is dst_net and c.units == 3
    np.testing.assert_allclose(_out(c), _out(a), rtol=1e-6, atol=1e-6)


def test_mismatch_messages_agree(rk: Any, tmp_path: Path) -> None:
    path = tmp_path / "small.weights.h5"
    _seq(rk, units=4).save_weights(str(path))
    msgs = []
    for k in (rk, tg_tf.keras):
        with pytest.raises(ValueError) as info:
            _seq(k, units=5).load_weights(str(path))
        msgs.append(str(info.value))
    for m in msgs:
        assert m.startswith("A total of 3 objects could not be loaded.")
        assert ("`variable.assign(value)` must match. variable.shape=(3, 5), Received: "
                "value.shape=(3, 4).") in m


def test_functional_models_from_keras_load(rk: Any, tmp_path: Path) -> None:
    inp = rk.Input((3,))
    model = rk.Model(inp, rk.layers.Dense(2)(inp))
    model.save(str(tmp_path / "f.keras"))
    ours = tg_tf.keras.models.load_model(str(tmp_path / "f.keras"))
    x = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    np.testing.assert_allclose(ours(tg_tf.constant(x)).numpy(), model(x).numpy(), rtol=1e-6)
