"""tf.saved_model.save / load: round trips, gradients through loaded functions, signatures,
errors for unsaved signatures, and hostile or corrupted directories (refused before anything
is built or run)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import tapegrad.tf as tf
from tapegrad.tf import saved_model as sm


class Net(tf.Module):
    def __init__(self) -> None:
        super().__init__()
        rng = np.random.default_rng(0)
        self.w = tf.Variable(rng.standard_normal((3, 2)), name="w")
        self.b = tf.Variable(rng.standard_normal(2), name="b", trainable=False)
        self.calls = tf.Variable(0, name="calls")
        self.inner = Inner()

    @tf.function(input_signature=[tf.TensorSpec([None, 3], tf.float64)])
    def predict(self, x: Any) -> Any:
        return tf.tanh(tf.matmul(x, self.w) + self.b) * self.inner.scale

    @tf.function
    def pair(self, x: Any, y: Any, power: int = 2) -> Any:
        self.calls.assign_add(1)
        return {"prod": tf.reduce_sum(x * y) ** power, "diff": (x - y, tf.exp(-x))}

    @tf.function
    def branch(self, x: Any) -> Any:
        return tf.cond(tf.reduce_sum(x) > 0, lambda: tf.sin(x) * self.inner.scale,
                       lambda: tf.square(x))


class Inner(tf.Module):
    def __init__(self) -> None:
        super().__init__()
        self.scale = tf.Variable(1.5, dtype=tf.float64, name="scale")


X = np.random.default_rng(1).standard_normal((4, 3))
A = np.array([1.0, -2.0, 0.5])
B = np.array([0.3, 0.7, -1.1])


@pytest.fixture()
def saved(tmp_path: Path) -> tuple[Net, Any, Path]:
    m = Net()
    m.pair(tf.constant(A), tf.constant(B))
    m.pair(tf.constant(A), tf.constant(B), 3)
    m.branch(tf.constant(A))
    m.branch(tf.constant(-A))  # same signature: the traced cond holds both branches
    d = tmp_path / "sm"
    tf.saved_model.save(m, str(d))
    return m, tf.saved_model.load(str(d)), d


def test_files_are_json_and_npz(saved: tuple[Net, Any, Path]) -> None:
    _, _, d = saved
    assert sorted(p.name for p in d.iterdir()) == ["saved_model.json", "variables.npz"]
    doc = json.loads((d / "saved_model.json").read_text())
    assert doc["format"] == "tapegrad.saved_model" and doc["version"] == 1
    with np.load(d / "variables.npz", allow_pickle=False) as z:
        assert all(z[k].dtype != object for k in z.files)


def test_variables_restored(saved: tuple[Net, Any, Path]) -> None:
    m, ld, _ = saved
    assert isinstance(ld.w, tf.Variable) and isinstance(ld.inner.scale, tf.Variable)
    np.testing.assert_array_equal(ld.w.numpy(), m.w.numpy())
    np.testing.assert_array_equal(ld.b.numpy(), m.b.numpy())
    assert ld.w.name == "w:0" and ld.b.name == "b:0" and ld.inner.scale.name == "scale:0"
    assert ld.w.trainable and not ld.b.trainable
    assert ld.w.dtype == tf.float64 and ld.calls.dtype == tf.int32
    assert int(ld.calls.numpy()) == 2


def test_values_equal_originals(saved: tuple[Net, Any, Path]) -> None:
    m, ld, _ = saved
    np.testing.assert_array_equal(ld.predict(tf.constant(X)).numpy(),
                                  m.predict(tf.constant(X)).numpy())
    # a None dimension: another batch size works as in TensorFlow
    np.testing.assert_allclose(ld.predict(tf.constant(X[:2])).numpy(),
                               m.predict(tf.constant(X[:2])).numpy(), rtol=1e-15)
    for p in (2, 3):
        got = ld.pair(tf.constant(A), tf.constant(B), p)
        want = m.pair(tf.constant(A), tf.constant(B), p)
        assert sorted(got) == ["diff", "prod"] and isinstance(got["diff"], tuple)
        np.testing.assert_allclose(got["prod"].numpy(), want["prod"].numpy(), rtol=1e-14)
        np.testing.assert_allclose(got["diff"][1].numpy(), want["diff"][1].numpy())
    for x in (A, -A):
        np.testing.assert_allclose(ld.branch(tf.constant(x)).numpy(),
                                   m.branch(tf.constant(x)).numpy(), rtol=1e-15)


def test_keyword_arguments_and_effects(saved: tuple[Net, Any, Path]) -> None:
    m, ld, _ = saved
    before = int(ld.calls.numpy())
    got = ld.pair(tf.constant(A), y=tf.constant(B))
    assert int(ld.calls.numpy()) == before + 1  # the stored assign_add runs
    np.testing.assert_allclose(got["prod"].numpy(), float(np.sum(A * B)) ** 2)
    assert int(m.calls.numpy()) == 2  # the original is untouched


def test_gradients_through_loaded_function(saved: tuple[Net, Any, Path]) -> None:
    m, ld, _ = saved
    x = tf.constant(X)

    def grads(obj: Any) -> list[np.ndarray]:
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = tf.reduce_sum(obj.predict(x) ** 2)
        return [g.numpy() for g in tape.gradient(y, [obj.w, obj.inner.scale, x])]

    for g, h in zip(grads(ld), grads(m)):
        np.testing.assert_allclose(g, h, rtol=1e-12)
    # and against finite differences of the loaded function
    w0 = ld.w.numpy().copy()
    eps = 1e-6
    fd = np.zeros_like(w0)
    for idx in np.ndindex(*w0.shape):
        vals = []
        for s in (1, -1):
            w = w0.copy()
            w[idx] += s * eps
            ld.w.assign(w)
            vals.append(float(tf.reduce_sum(ld.predict(x) ** 2).numpy()))
        fd[idx] = (vals[0] - vals[1]) / (2 * eps)
    ld.w.assign(w0)
    np.testing.assert_allclose(grads(ld)[0], fd, rtol=1e-6, atol=1e-8)


def test_gradient_through_cond_branch(saved: tuple[Net, Any, Path]) -> None:
    _, ld, _ = saved
    for x0, want in ((A, 2 * A), (-A, 1.5 * np.cos(A))):  # sum(A) < 0
        x = tf.constant(x0)
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = tf.reduce_sum(ld.branch(x))
        np.testing.assert_allclose(tape.gradient(y, x).numpy(), want, rtol=1e-12)


def test_signatures(saved: tuple[Net, Any, Path]) -> None:
    m, ld, _ = saved
    assert list(ld.signatures) == ["serving_default"]
    sig = ld.signatures["serving_default"]
    assert repr(sig.structured_input_signature) == (
        "((), {'x': TensorSpec(shape=(None, 3), dtype=tf.float64, name='x')})")
    out = sig(x=tf.constant(X))
    assert list(out) == ["output_0"]
    np.testing.assert_array_equal(out["output_0"].numpy(), m.predict(tf.constant(X)).numpy())


def test_explicit_signatures(tmp_path: Path) -> None:
    m = Net()
    m.pair(tf.constant(A), tf.constant(B))
    cf = m.pair.get_concrete_function(tf.TensorSpec([3], tf.float64),
                                      tf.TensorSpec([3], tf.float64))
    tf.saved_model.save(m, str(tmp_path), signatures={"pairs": cf, "pred": m.predict})
    ld = tf.saved_model.load(str(tmp_path))
    assert sorted(ld.signatures) == ["pairs", "pred"]
    sig = ld.signatures["pairs"]
    assert sorted(sig.structured_input_signature[1]) == ["x", "y"]
    out = sig(x=tf.constant(A), y=tf.constant(B))
    # a nested output is flattened: output_0 = diff[0], output_1 = diff[1], output_2 = prod
    assert sorted(out) == ["output_0", "output_1", "output_2"]
    np.testing.assert_allclose(out["output_2"].numpy(), float(np.sum(A * B)) ** 2)
    np.testing.assert_allclose(out["output_0"].numpy(), A - B)
    p = ld.signatures["pred"](x=tf.constant(X))["output_0"]
    np.testing.assert_array_equal(p.numpy(), m.predict(tf.constant(X)).numpy())


def test_unsaved_signature_is_tensorflows_error(saved: tuple[Net, Any, Path]) -> None:
    _, ld, _ = saved
    with pytest.raises(ValueError) as e:
        ld.pair(tf.constant([1.0, 2.0]), tf.constant([1.0, 2.0]))
    msg = str(e.value).split("\n[tapegrad hint]")[0]
    assert msg.startswith(
        "Could not find matching concrete function to call loaded from the SavedModel. Got:\n"
        "  Positional arguments (3 total):\n"
        "    * <tf.Tensor 'x:0' shape=(2,) dtype=float32>\n"
        "    * <tf.Tensor 'y:0' shape=(2,) dtype=float32>\n"
        "    * 2\n")
    assert "Expected these arguments to match one of the following 2 option(s):" in msg
    assert "    * TensorSpec(shape=(3,), dtype=tf.float64, name='x')" in msg
    with pytest.raises(TypeError, match="Binding inputs to tf.function failed due to `Can not "
                       r"cast TensorSpec\(shape=\(4, 3\), dtype=tf.float32"):
        ld.predict(tf.constant(X.astype(np.float32)))


def test_keras_sequential_call(tmp_path: Path) -> None:
    keras = tf.keras
    model = keras.Sequential([keras.layers.Dense(4, activation="relu"), keras.layers.Dense(2)])
    model(np.zeros((1, 3), np.float32))

    class Serve(tf.Module):
        def __init__(self, model: Any) -> None:
            super().__init__()
            self.model = model

        @tf.function(input_signature=[tf.TensorSpec([None, 3], tf.float32)])
        def __call__(self, x: Any) -> Any:
            return self.model(x)

    tf.saved_model.save(Serve(model), str(tmp_path))
    ld = tf.saved_model.load(str(tmp_path))
    x = tf.constant(np.random.default_rng(2).standard_normal((5, 3)).astype(np.float32))
    np.testing.assert_allclose(ld(x).numpy(), model(x).numpy(), rtol=1e-6)
    kernel = ld.model._sublayers[0]._kernel
    with tf.GradientTape() as tape:
        y = tf.reduce_sum(ld(x))
    with tf.GradientTape() as tape2:
        y2 = tf.reduce_sum(model(x))
    k0: Any = model.layers[0]
    np.testing.assert_allclose(tape.gradient(y, kernel).numpy(),
                               tape2.gradient(y2, k0.kernel).numpy(), rtol=1e-6)


def test_what_cannot_be_saved(tmp_path: Path) -> None:
    class P(tf.Module):
        @tf.function
        def f(self, x: Any) -> Any:
            tf.print(x)
            return x + 1.0

        @tf.function
        def never(self, x: Any) -> Any:
            return x

    p = P()
    p.f(tf.constant(1.0))
    with pytest.raises(ValueError, match="tf.print"):
        tf.saved_model.save(p, str(tmp_path / "a"), signatures={})
    assert not (tmp_path / "a" / "saved_model.json").exists()
    # a function never traced is stored without concrete functions, as in TensorFlow

    class Q(tf.Module):
        @tf.function
        def never(self, x: Any) -> Any:
            return x

    tf.saved_model.save(Q(), str(tmp_path / "b"))
    with pytest.raises(ValueError, match=r"one of the following 0 option\(s\)"):
        tf.saved_model.load(str(tmp_path / "b")).never(tf.constant(1.0))


def test_missing_directory(tmp_path: Path) -> None:
    with pytest.raises(tf.errors.NotFoundError, match="Could not find SavedModel"):
        tf.saved_model.load(str(tmp_path / "nothing"))


# ---------------------------------------------------------------------------- hostile files
def _tamper(d: Path, fn: Any) -> None:
    p = d / "saved_model.json"
    doc = json.loads(p.read_text())
    fn(doc)
    p.write_text(json.dumps(doc))


def _first_op(doc: dict[str, Any]) -> dict[str, Any]:
    for f in doc["functions"]:
        for c in f["concrete"]:
            for ins in c["program"]["instrs"]:
                if ins["k"] == "op":
                    return ins
    raise AssertionError("no op")


HOSTILE = {
    "builtin eval": lambda d: _first_op(d).update(op="builtins:eval"),
    "os.system": lambda d: _first_op(d).update(op="os:system"),
    "tapegrad non-op": lambda d: _first_op(d).update(op="tapegrad.tf.saved_model:save"),
    "op name only": lambda d: _first_op(d).update(op="tanh"),
    "unknown attr": lambda d: _first_op(d)["attrs"].update(__class__=1),
    "unknown tag": lambda d: _first_op(d)["attrs"].update(x={"__reduce__": ["os.system"]}),
    "undefined slot": lambda d: _first_op(d).update(args=[9999]),
    "unknown kind": lambda d: d["functions"][0]["concrete"][0]["program"]["instrs"].insert(
        0, {"k": "effect", "fn": "os:system", "args": []}),
    "bad variable index": lambda d: d["root"]["variables"].update(w=99),
    "dunder attribute": lambda d: d["root"]["variables"].update(__class__=0),
    "wrong format": lambda d: d.update(format="pickle"),
    "bad dtype": lambda d: d["variables"][0].update(dtype="object"),
    "wrong shape": lambda d: d["variables"][0].update(shape=[7, 7]),
    "negative slot": lambda d: _first_op(d).update(out=-1),
    "bad slice": lambda d: _first_op(d)["attrs"].update(x={"slice": ["a", 1, 2]}),
}


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_hostile_json_refused(saved: tuple[Net, Any, Path], case: str,
                              monkeypatch: pytest.MonkeyPatch) -> None:
    _, _, d = saved
    _tamper(d, HOSTILE[case])
    made: list[Any] = []
    orig = tf.Variable.__init__

    def counting(self: Any, *a: Any, **k: Any) -> None:
        made.append(self)
        orig(self, *a, **k)

    monkeypatch.setattr(tf.Variable, "__init__", counting)
    with pytest.raises(ValueError, match="Invalid tapegrad SavedModel") as e:
        tf.saved_model.load(str(d))
    assert any("[tapegrad hint]" in n for n in getattr(e.value, "__notes__", []))
    assert made == []  # refused before any variable was built (and before any op ran)


def test_not_json(saved: tuple[Net, Any, Path]) -> None:
    _, _, d = saved
    (d / "saved_model.json").write_text("{'format': __import__('os')}")
    with pytest.raises(ValueError, match="is not valid JSON"):
        tf.saved_model.load(str(d))


def test_deeply_nested_json_refused(saved: tuple[Net, Any, Path]) -> None:
    _, _, d = saved
    doc = json.loads((d / "saved_model.json").read_text())
    text = json.dumps(doc).replace('"root": {', '"root": ' + '{"tuple": [' * 50000 + "1"
                                   + "]}" * 50000 + ', "_": {', 1)
    (d / "saved_model.json").write_text(text)
    with pytest.raises(ValueError, match="Invalid tapegrad SavedModel"):
        tf.saved_model.load(str(d))


def test_pickled_array_refused(saved: tuple[Net, Any, Path]) -> None:
    _, _, d = saved
    with np.load(d / "variables.npz", allow_pickle=False) as z:
        arrays = {k: z[k] for k in z.files}
    arrays["v0"] = np.array([{"evil": 1}], dtype=object)
    np.savez(d / "variables.npz", **arrays)
    with pytest.raises(ValueError, match="cannot be read without pickle"):
        tf.saved_model.load(str(d))


def test_wrong_array_shape_refused(saved: tuple[Net, Any, Path]) -> None:
    _, _, d = saved
    with np.load(d / "variables.npz", allow_pickle=False) as z:
        arrays = {k: z[k] for k in z.files}
    arrays["v0"] = np.zeros((5, 5), arrays["v0"].dtype)
    np.savez(d / "variables.npz", **arrays)
    with pytest.raises(ValueError, match="does not have the declared dtype"):
        tf.saved_model.load(str(d))


def test_value_codec_round_trip() -> None:
    arrays = sm._Arrays()
    vals = [None, True, 3, -2.5, float("inf"), "same", (1, [2, 3]), {"a": (None,)},
            np.dtype("int16"), slice(1, None, -1), Ellipsis, 1 + 2j, np.float32(1.5),
            np.arange(6).reshape(2, 3)]
    enc = json.loads(json.dumps([sm._enc(v, arrays) for v in vals], allow_nan=False))
    dec = [sm._dec(v, arrays.arrays) for v in enc]
    for a, b in zip(vals, dec):
        if isinstance(a, np.ndarray):
            np.testing.assert_array_equal(a, b)
        else:
            assert a == b and type(a) is type(b)
    with pytest.raises(ValueError, match="cannot be stored"):
        sm._enc(object(), arrays)


def test_tape_inside_function_and_second_order(tmp_path: Path) -> None:
    class G(tf.Module):
        def __init__(self) -> None:
            super().__init__()
            self.w = tf.Variable([1.0, 2.0, 3.0], dtype=tf.float64)

        @tf.function(input_signature=[tf.TensorSpec([3], tf.float64)])
        def grad(self, x: Any) -> Any:
            with tf.GradientTape() as t:
                y = tf.reduce_sum(tf.sin(self.w * x) ** 2)
            return t.gradient(y, self.w)

    m = G()
    tf.saved_model.save(m, str(tmp_path))
    ld = tf.saved_model.load(str(tmp_path))
    x0 = np.array([0.3, -0.2, 1.0])
    w = np.array([1.0, 2.0, 3.0])
    np.testing.assert_allclose(ld.grad(tf.constant(x0)).numpy(), np.sin(2 * w * x0) * x0,
                               rtol=1e-12)
    # the stored backward ops are differentiable again: d/dx sum(grad) through the program
    x = tf.constant(x0)
    with tf.GradientTape() as outer:
        outer.watch(x)
        s = tf.reduce_sum(ld.grad(x))
    want = np.sin(2 * w * x0) + 2 * w * x0 * np.cos(2 * w * x0)
    np.testing.assert_allclose(outer.gradient(s, x).numpy(), want, rtol=1e-10)
