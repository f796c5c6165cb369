"""Keras saving: .weights.h5 and .keras round trips, layout, registration, bad files."""

from __future__ import annotations

import io
import json
import sys
import zipfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import tapegrad.tf as tf

keras = tf.keras
h5py = pytest.importorskip("h5py")


def _seq(units: int = 4, input_dim: int = 3) -> Any:
    return keras.Sequential([keras.Input((input_dim,)),
                             keras.layers.Dense(units, activation="relu"),
                             keras.layers.Dense(2, use_bias=False)])


@keras.saving.register_keras_serializable(package="Tests")
class Net(keras.Model):
    def __init__(self, units: int = 4, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.units = units
        self.hidden = keras.layers.Dense(units, activation="tanh")
        self.out = keras.layers.Dense(1)

    def call(self, x: Any) -> Any:
        return self.out(self.hidden(x))

    def get_config(self) -> dict[str, Any]:
        return {**super().get_config(), "units": self.units}


@keras.saving.register_keras_serializable(package="Tests")
class Scale(keras.layers.Layer):
    """A layer with a trainable and a non-trainable weight (non-trainable saved last)."""

    def build(self, input_shape: Any) -> None:
        self.count = self.add_weight(shape=(), initializer="zeros", trainable=False,
                                     name="count")
        self.s = self.add_weight(shape=(input_shape[-1],), initializer="ones", name="s")

    def call(self, x: Any) -> Any:
        return x * self.s


def _tree(path: Path) -> dict[str, Any]:
    out: dict[str, Any] = {}
    with h5py.File(path, "r") as f:
        f.visititems(lambda n, o: out.__setitem__(n, (dict(o.attrs), getattr(o, "shape", None))))
    return out


def _perturb(model: Any, seed: int = 0) -> None:
    rng = np.random.default_rng(seed)
    model.set_weights([rng.normal(size=w.shape).astype(np.float32) for w in model.get_weights()])


def test_sequential_weights_layout_and_round_trip(tmp_path: Path) -> None:
    m = _seq()
    _perturb(m)
    p = tmp_path / "m.weights.h5"
    m.save_weights(p)
    tree = _tree(p)
    assert tree["vars"] == ({"name": m.name}, None)
    assert tree["layers/dense/vars"][0] == {"name": m.layers[0].name}
    assert tree["layers/dense/vars/0"][1] == (3, 4) and tree["layers/dense/vars/1"][1] == (4,)
    assert tree["layers/dense_1/vars/0"][1] == (4, 2) and "layers/dense_1/vars/1" not in tree
    m2 = _seq()
    m2.load_weights(p)
    for a, b in zip(m.get_weights(), m2.get_weights()):
        np.testing.assert_array_equal(a, b)


def test_subclassed_and_custom_layer_paths(tmp_path: Path) -> None:
    n = Net(3)
    n(np.ones((2, 5), np.float32))
    p = tmp_path / "n.weights.h5"
    n.save_weights(p)
    tree = _tree(p)
    # Keras: attributes in name order, then the `layers` list (already-saved ones skipped)
    assert tree["hidden/vars/0"][1] == (5, 3) and tree["layers/dense_1/vars/0"][1] == (3, 1)
    s = keras.Sequential([keras.Input((2,)), Scale()])
    s.layers[0].count.assign(5.0)
    s.layers[0].s.assign([2.0, 3.0])
    p2 = tmp_path / "s.weights.h5"
    s.save_weights(p2)
    with h5py.File(p2) as f:
        assert f["layers/scale/vars/0"][()].tolist() == [2.0, 3.0]
        assert f["layers/scale/vars/1"][()] == 5.0
    s2 = keras.Sequential([keras.Input((2,)), Scale()])
    s2.load_weights(p2)
    assert s2.layers[0].count.numpy() == 5.0


def test_keras_zip_round_trip(tmp_path: Path) -> None:
    m = _seq()
    _perturb(m, 1)
    p = tmp_path / "m.keras"
    m.save(p)
    with zipfile.ZipFile(p) as z:
        assert sorted(z.namelist()) == ["config.json", "metadata.json", "model.weights.h5"]
        cfg = json.loads(z.read("config.json"))
    assert cfg["class_name"] == "Sequential" and cfg["config"]["build_input_shape"] == [None, 3]
    dense = cfg["config"]["layers"][1]
    assert dense["class_name"] == "Dense" and dense["config"]["activation"] == "relu"
    assert dense["config"]["kernel_initializer"]["class_name"] == "GlorotUniform"
    m2 = keras.models.load_model(p)
    x = np.random.default_rng(0).normal(size=(5, 3)).astype(np.float32)
    np.testing.assert_array_equal(m2(x).numpy(), m(x).numpy())
    assert [layer.name for layer in m2.layers] == [layer.name for layer in m.layers]
    m3 = _seq()
    m3.load_weights(p)  # load_weights also reads a .keras file
    np.testing.assert_array_equal(m3(x).numpy(), m(x).numpy())
    n = Net(2)
    n(x)
    n.save(tmp_path / "n.keras")
    n2 = keras.models.load_model(tmp_path / "n.keras")
    assert type(n2) is Net and n2.units == 2
    np.testing.assert_array_equal(n2(x).numpy(), n(x).numpy())


def test_unregistered_classes_are_not_found_and_nothing_is_imported(tmp_path: Path) -> None:
    n = Net(2)
    n(np.ones((1, 3), np.float32))
    p = tmp_path / "n.keras"
    n.save(p)
    with zipfile.ZipFile(p) as z:
        cfg = json.loads(z.read("config.json"))
        weights = z.read("model.weights.h5")
    cfg["registered_name"] = "Evil>Thing"
    cfg["module"] = "os"
    cfg["class_name"] = "system"
    bad = tmp_path / "bad.keras"
    with zipfile.ZipFile(bad, "w") as z:
        z.writestr("config.json", json.dumps(cfg))
        z.writestr("metadata.json", "{}")
        z.writestr("model.weights.h5", weights)
    with pytest.raises(TypeError, match="Could not locate class 'system'"):
        keras.models.load_model(bad)
    with keras.saving.custom_object_scope({"Evil>Thing": Net}):
        assert type(keras.models.load_model(bad)) is Net
    assert type(keras.models.load_model(bad, custom_objects={"Evil>Thing": Net})) is Net
    with pytest.raises(ValueError, match="Cannot save an instance of Plain"):
        class Plain(keras.Model):
            def call(self, x: Any) -> Any:
                return x

        q = Plain()
        q(np.ones((1, 2), np.float32))
        q.save(tmp_path / "q.keras")


def test_mismatched_weights_change_nothing(tmp_path: Path) -> None:
    small = _seq(units=4)
    p = tmp_path / "s.weights.h5"
    small.save_weights(p)
    big = _seq(units=5)
    before = [w.copy() for w in big.get_weights()]
    with pytest.raises(ValueError) as info:
        big.load_weights(p)
    msg = str(info.value)
    assert msg.startswith("A total of 2 objects could not be loaded. Example error message for "
                          "object <Dense name=")
    assert "The shape of the target variable and the shape of the target value in " \
           "`variable.assign(value)` must match. variable.shape=(3, 5), Received: " \
           "value.shape=(3, 4)." in msg
    for a, b in zip(before, big.get_weights()):
        np.testing.assert_array_equal(a, b)
    other = keras.Sequential([keras.Input((3,)), keras.layers.Dense(4, activation="relu"),
                              keras.layers.Dense(2)])  # has a bias the file lacks
    with pytest.raises(ValueError, match=r"Layer '.*' expected 2 variables, but received 1 "
                                         r"variables during loading. Expected: \['kernel', "
                                         r"'bias'\]"):
        other.load_weights(p)
    with pytest.warns(UserWarning, match="could not be loaded"):
        other.load_weights(p, skip_mismatch=True)
    np.testing.assert_array_equal(other.layers[0].kernel.numpy(), small.layers[0].kernel.numpy())


def test_suffixes_unbuilt_and_missing_files(tmp_path: Path) -> None:
    m = _seq()
    with pytest.raises(ValueError, match=r"The filename must end in `.weights.h5`. Received: "
                                         r"filepath=.*x.h5"):
        m.save_weights(tmp_path / "x.h5")
    with pytest.raises(ValueError, match="Invalid filepath extension for saving. Please add "
                                         "either a `.keras` extension"):
        m.save(tmp_path / "x.pt")
    with pytest.raises(ValueError, match="File format not supported: filepath=.*x.foo. Keras 3 "
                                         "only supports V3 `.keras` files, `.weights.h5`"):
        m.load_weights(tmp_path / "x.foo")
    with pytest.raises(ValueError, match="File format not supported: filepath=.*x.foo. Keras 3 "
                                         "only supports V3 `.keras` files, legacy H5"):
        keras.models.load_model(tmp_path / "x.foo")
    with pytest.raises(ValueError, match="File not found: filepath=.*nope.keras. Please ensure"):
        keras.models.load_model(tmp_path / "nope.keras")
    unbuilt = keras.Sequential([keras.layers.Dense(2)])
    with pytest.raises(ValueError, match="You are saving a model that has not yet been built."):
        unbuilt.save_weights(tmp_path / "u.weights.h5")
    with pytest.raises(ValueError, match="You are loading weights into a model that has not yet "
                                         "been built."):
        unbuilt.load_weights(tmp_path / "u.weights.h5")
    (tmp_path / "junk.keras").write_bytes(b"not a zip")
    with pytest.raises(ValueError, match="Invalid .keras file"):
        keras.models.load_model(tmp_path / "junk.keras")


def test_links_and_external_data_are_refused(tmp_path: Path) -> None:
    secret = tmp_path / "secret.h5"
    with h5py.File(secret, "w") as f:
        f["data"] = np.arange(12, dtype=np.float32).reshape(3, 4)
    m = _seq()
    p = tmp_path / "m.weights.h5"
    m.save_weights(p)
    with h5py.File(p, "a") as f:
        del f["layers/dense/vars/0"]
        f["layers/dense/vars/0"] = h5py.ExternalLink(str(secret), "data")
    before = [w.copy() for w in m.get_weights()]
    with pytest.raises(ValueError, match="Refusing to follow the HDF5 link '0' \\(ExternalLink\\)"):
        m.load_weights(p)
    for a, b in zip(before, m.get_weights()):
        np.testing.assert_array_equal(a, b)
    raw = tmp_path / "raw.bin"
    raw.write_bytes(np.ones(12, np.float32).tobytes())
    with h5py.File(p, "a") as f:
        del f["layers/dense/vars/0"]
        f.create_dataset("layers/dense/vars/0", shape=(3, 4), dtype="f4",
                         external=[(str(raw), 0, 48)])
    with pytest.raises(ValueError, match="its data lives in another file"):
        m.load_weights(p)


def test_registration() -> None:
    assert keras.saving.get_registered_name(Net) == "Tests>Net"
    assert keras.saving.get_registered_object("Tests>Net") is Net
    assert keras.saving.get_custom_objects()["Tests>Scale"] is Scale

    @keras.saving.register_keras_serializable(package="Tests", name="my_act")
    def my_act(x: Any) -> Any:
        return x * 2

    m = keras.Sequential([keras.Input((2,)), keras.layers.Dense(2, activation=my_act)])
    cfg = keras.saving.serialize_keras_object(m)
    act = cfg["config"]["layers"][1]["config"]["activation"]
    assert act["registered_name"] == "Tests>my_act"
    m2 = keras.saving.deserialize_keras_object(cfg)
    assert m2.layers[0].activation is my_act


def test_missing_h5py_names_the_extra(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "h5py", None)
    m = _seq()
    with pytest.raises(ImportError, match=r"pip install 'tapegrad\[h5\]'"):
        m.save_weights(tmp_path / "m.weights.h5")
    with pytest.raises(ImportError, match=r"tapegrad\[h5\]"):
        m.save(tmp_path / "m.keras")


@pytest.mark.parametrize("opt", ["adam", "amsgrad", "sgd_momentum", "rmsprop_centered",
                                 "nadam", "adagrad", "ftrl", "adamax", "lion", "adadelta",
                                 "adamw", "adam_ema"])
def test_load_model_restores_the_optimizer_state(tmp_path: Any, opt: str) -> None:
    """Training goes on after ``load_model`` exactly as on the saved model (Keras 3
    restores iterations and every slot variable from ``optimizer/vars``)."""
    keras = tf.keras
    make = {"adam": lambda: keras.optimizers.Adam(0.01),
            "amsgrad": lambda: keras.optimizers.Adam(0.01, amsgrad=True),
            "sgd_momentum": lambda: keras.optimizers.SGD(0.01, momentum=0.9),
            "rmsprop_centered": lambda: keras.optimizers.RMSprop(0.01, momentum=0.5,
                                                                 centered=True),
            "nadam": lambda: keras.optimizers.Nadam(0.01),
            "adagrad": lambda: keras.optimizers.Adagrad(0.1),
            "ftrl": lambda: keras.optimizers.Ftrl(0.1),
            "adamax": lambda: keras.optimizers.Adamax(0.01),
            "lion": lambda: keras.optimizers.Lion(0.001),
            "adadelta": lambda: keras.optimizers.Adadelta(1.0),
            "adamw": lambda: keras.optimizers.AdamW(0.01),
            "adam_ema": lambda: keras.optimizers.Adam(0.01, use_ema=True)}[opt]
    keras.utils.set_random_seed(2)
    x = np.random.default_rng(0).standard_normal((48, 3)).astype(np.float32)
    y = x @ np.array([[1.0], [-1.0], [2.0]], np.float32)
    m = keras.Sequential([keras.Input((3,)), keras.layers.Dense(4, activation="tanh"),
                          keras.layers.Dense(1)])
    m.compile(optimizer=make(), loss="mse")
    m.fit(x, y, epochs=2, batch_size=16, verbose=0, shuffle=False)
    path = str(tmp_path / "m.keras")
    m.save(path)
    with h5py.File(io.BytesIO(zipfile.ZipFile(path).read("model.weights.h5"))) as f:
        stored = len(f["optimizer"]["vars"])
    loaded = keras.models.load_model(path)
    assert int(loaded.optimizer.iterations) == 6
    assert stored == len(m.optimizer._state_arrays(list(m.trainable_weights)))
    h1 = m.fit(x, y, epochs=2, batch_size=16, verbose=0, shuffle=False).history["loss"]
    h2 = loaded.fit(x, y, epochs=2, batch_size=16, verbose=0, shuffle=False).history["loss"]
    assert h1 == h2
    for a, b in zip(m.get_weights(), loaded.get_weights()):
        np.testing.assert_array_equal(a, b)
    # a fresh optimizer (what loading gave before) trains on another path
    fresh = keras.models.load_model(path, compile=False)
    fresh.compile(optimizer=make(), loss="mse")
    fresh.fit(x, y, epochs=2, batch_size=16, verbose=0, shuffle=False)
    assert any(not np.array_equal(a, b) for a, b in zip(m.get_weights(), fresh.get_weights()))
