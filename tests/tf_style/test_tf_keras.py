"""Item 5: the small Keras (layers, models, losses, optimizers)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import tapegrad.tf as tf
from tapegrad.optim.rules import adam_update, sgd_update

keras = tf.keras


# ------------------------------------------------------------------ Dense
def test_dense_is_built_on_first_call() -> None:
    d = keras.layers.Dense(3, activation="relu")
    assert not d.built
    with pytest.raises(AttributeError, match="You must build the layer before accessing "
                                             "`kernel`"):
        _ = d.kernel
    y = d(tf.ones([2, 4]))
    assert d.built and y.shape == (2, 3) and y.dtype == tf.float32
    assert d.kernel.shape == (4, 3) and d.bias.shape == (3,)
    assert d.kernel.name == "kernel" and d.bias.name == "bias"
    assert d.kernel.path == f"{d.name}/kernel"
    assert isinstance(d.kernel, tf.Variable) and d.kernel.trainable
    assert [w.name for w in d.trainable_variables] == ["kernel", "bias"]


def test_dense_defaults_glorot_uniform_and_zeros() -> None:
    tf.random.set_seed(0)
    d = keras.layers.Dense(300)
    d.build((None, 200))
    k = d.kernel.numpy()
    limit = np.sqrt(6.0 / (200 + 300))
    assert np.all(np.abs(k) <= limit) and k.std() > 0.5 * limit / np.sqrt(3)
    assert np.all(d.bias.numpy() == 0.0)
    assert d.kernel.dtype == "float32"


def test_dense_build_and_input_check() -> None:
    d = keras.layers.Dense(2, use_bias=False)
    d.build((None, 5))
    assert d.kernel.shape == (5, 2) and d.bias is None and len(d.weights) == 1
    with pytest.raises(ValueError, match="expected axis -1 of input shape to have value 5"):
        d(tf.ones([2, 4]))


def test_dense_forward_values_and_activation() -> None:
    d = keras.layers.Dense(2, activation="relu", kernel_initializer="ones")
    d.build((None, 3))
    d.set_weights([np.array([[1.0, -1.0], [1.0, -1.0], [1.0, -1.0]]), np.array([0.5, 0.5])])
    np.testing.assert_array_equal(d(np.ones((1, 3))).numpy(), [[3.5, 0.0]])
    assert d(np.ones((1, 3))).dtype == tf.float32  # numpy float64 input is cast
    assert d(tf.ones([1, 3], dtype=tf.float64)).dtype == tf.float32


def test_get_and_set_weights() -> None:
    d = keras.layers.Dense(3)
    d(tf.ones([2, 4]))
    ws = d.get_weights()
    assert [w.shape for w in ws] == [(4, 3), (3,)] and isinstance(ws[0], np.ndarray)
    ws[0][0, 0] = 123.0
    assert d.kernel.numpy()[0, 0] != 123.0  # copies
    d.set_weights([np.ones((4, 3)), np.zeros(3)])
    np.testing.assert_array_equal(d(tf.ones([1, 4])).numpy(), [[4.0, 4.0, 4.0]])
    with pytest.raises(ValueError, match="with a weight list of length 1, but the layer was "
                                         "expecting 2 weights"):
        d.set_weights([np.zeros((4, 3))])
    with pytest.raises(ValueError, match=r"weight shape \(4, 3\) is not compatible with "
                                         r"provided weight shape \(4, 2\)"):
        d.set_weights([np.zeros((4, 2)), np.zeros(3)])


def test_layer_names_are_unique() -> None:
    a, b = keras.layers.Dense(1), keras.layers.Dense(1)
    assert a.name != b.name and a.name.startswith("dense") and b.name.startswith("dense")
    assert keras.layers.Dense(1, name="mine").name == "mine"


# ------------------------------------------------------------------ models
def test_sequential() -> None:
    m = keras.Sequential([keras.layers.Dense(4, activation="tanh"), keras.layers.Dense(1)])
    assert m.trainable_variables == []
    y = m(tf.ones([2, 3]))
    assert y.shape == (2, 1)
    assert [v.name for v in m.trainable_variables] == ["kernel", "bias", "kernel", "bias"]
    assert m.trainable_weights == m.trainable_variables
    assert all(v.path.startswith(m.name + "/") for v in m.trainable_variables)
    assert len(m.layers) == 2 and len(m.get_weights()) == 4


def test_sequential_with_input_builds_at_once() -> None:
    m = keras.Sequential([keras.Input(shape=(3,)), keras.layers.Dense(2)])
    assert len(m.trainable_variables) == 2
    m2 = keras.Sequential()
    m2.add(keras.layers.Dense(2))
    m2.build((None, 5))
    assert m2.layers[0].kernel.shape == (5, 2)


def test_subclassed_model_tracks_layers() -> None:
    class Net(keras.Model):
        def __init__(self) -> None:
            super().__init__()
            self.hidden = keras.layers.Dense(4, activation="tanh")
            self.out = keras.layers.Dense(1)

        def call(self, x: tf.Tensor) -> tf.Tensor:
            return self.out(self.hidden(x))

    net = Net()
    assert net(tf.ones([2, 3])).shape == (2, 1)
    tv = net.trainable_variables
    assert [v.shape for v in tv] == [(3, 4), (4,), (4, 1), (1,)]
    net.hidden.trainable = False
    assert len(net.trainable_variables) == 2 and len(net.weights) == 4


def test_model_gradient_with_tape() -> None:
    m = keras.Sequential([keras.layers.Dense(1)])
    m.build((None, 1))
    m.set_weights([np.array([[2.0]]), np.array([1.0])])
    x = tf.constant([[1.0], [2.0]])
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(m(x) - tf.constant([[0.0], [0.0]])))
    gw, gb = tape.gradient(loss, m.trainable_variables)
    # loss = mean((2x + 1)^2): dw = mean(2 (2x+1) x) = (6 + 20)/2, db = mean(2 (2x+1)) = 8
    assert float(gw[0, 0]) == 13.0 and float(gb[0]) == 8.0


# ------------------------------------------------------------------ losses
def test_mean_squared_error() -> None:
    mse = keras.losses.MeanSquaredError()
    assert float(mse(tf.constant([[1.0, 2.0]]), tf.constant([[0.0, 0.0]]))) == 2.5
    assert float(mse([1.0, 2.0], [0.0, 0.0])) == 2.5
    assert float(mse(tf.constant([1.0, 3.0]), tf.constant([[0.0], [1.0]]))) == 2.5
    assert mse(tf.zeros([2, 2]), tf.ones([2, 2])).dtype == tf.float32
    none = keras.losses.MeanSquaredError(reduction=None)
    assert none(tf.zeros([2, 2]), tf.ones([2, 2])).shape == (2,)
    s = keras.losses.MeanSquaredError(reduction="sum")
    assert float(s(tf.zeros([2, 2]), tf.ones([2, 2]))) == 2.0


def test_sparse_categorical_crossentropy() -> None:
    logits = np.array([[1.0, 2.0, 3.0], [1.0, 0.0, -1.0]], dtype=np.float32)
    lab = np.array([0, 2])
    lf = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    lse = np.log(np.exp(logits).sum(1))
    expected = np.mean(lse - logits[np.arange(2), lab])
    np.testing.assert_allclose(float(lf(lab, logits)), expected, rtol=1e-6)
    probs = np.array([[0.2, 0.3, 0.5], [0.1, 0.1, 0.8]], dtype=np.float32)
    lp = keras.losses.SparseCategoricalCrossentropy()
    np.testing.assert_allclose(float(lp(lab, probs)), np.mean(-np.log([0.2, 0.8])), rtol=1e-6)
    # labels of shape (N, 1) are accepted
    np.testing.assert_allclose(float(lf(lab[:, None], logits)), expected, rtol=1e-6)
    x = tf.Variable(logits)
    with tf.GradientTape() as tape:
        loss = lf(lab, x)
    sm = np.exp(logits) / np.exp(logits).sum(1, keepdims=True)
    onehot = np.eye(3)[lab]
    np.testing.assert_allclose(tape.gradient(loss, x).numpy(), (sm - onehot) / 2, rtol=1e-5)


# ------------------------------------------------------------------ optimizers
@pytest.mark.parametrize("kw", [{}, {"momentum": 0.9}, {"momentum": 0.9, "nesterov": True}],
                         ids=["plain", "momentum", "nesterov"])
def test_sgd_matches_the_shared_keras_rule(kw: dict[str, object]) -> None:
    opt = keras.optimizers.SGD(learning_rate=0.1, **kw)  # type: ignore[arg-type]
    w = tf.Variable([1.0, -2.0, 0.5])
    p = np.array([1.0, -2.0, 0.5], dtype=np.float32)
    st: dict[str, object] = {}
    for _ in range(5):
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(w * w * w)
        g = tape.gradient(loss, w)
        opt.apply_gradients(zip([g], [w]))
        sgd_update(p, 3 * p * p, st, lr=float(np.float32(0.1)), momentum=kw.get("momentum", 0.0),
                   nesterov=bool(kw.get("nesterov", False)), style="keras")
    np.testing.assert_allclose(w.numpy(), p, rtol=1e-6)
    assert int(opt.iterations) == 5


def test_adam_matches_the_shared_keras_rule_and_defaults() -> None:
    opt = keras.optimizers.Adam(learning_rate=0.01)
    assert opt.epsilon == 1e-7 and opt.beta_1 == 0.9 and opt.beta_2 == 0.999
    assert keras.optimizers.Adam().learning_rate.numpy() == np.float32(0.001)
    w = tf.Variable([1.0, -2.0, 0.5])
    p = np.array([1.0, -2.0, 0.5], dtype=np.float32)
    st: dict[str, object] = {}
    for _ in range(5):
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(w * w * w)
        opt.apply_gradients([(tape.gradient(loss, w), w)])
        adam_update(p, 3 * p * p, st, lr=float(np.float32(0.01)), eps=1e-7, style="keras")
    np.testing.assert_allclose(w.numpy(), p, rtol=1e-6)


def test_apply_gradients_checks() -> None:
    opt = keras.optimizers.SGD(learning_rate=0.1)
    w, v = tf.Variable(1.0), tf.Variable(2.0)
    with pytest.raises(ValueError, match="No gradients provided for any variable."):
        opt.apply_gradients(zip([None, None], [w, v]))
    with pytest.warns(UserWarning, match="Gradients do not exist for variables"):
        opt.apply_gradients([(tf.constant(1.0), w), (None, v)])
    assert float(w) == pytest.approx(0.9) and float(v) == 2.0
    with pytest.raises(tf.errors.InvalidArgumentError, match="Cannot update variable with shape"):
        opt.apply_gradients(zip([tf.constant([1.0, 2.0])], [w]))


def test_an_optimizer_updates_only_the_variables_it_was_built_on() -> None:
    # Keras 3: the first apply (or build) fixes the variables; a new one raises, and
    # apply(grads) without variables uses the built ones
    opt = keras.optimizers.Adam(learning_rate=0.1)
    w, u = tf.Variable([1.0, 2.0]), tf.Variable(3.0)
    with pytest.raises(ValueError, match="must already be built"):
        opt.apply([tf.constant([1.0, 1.0])])
    assert not opt.built
    opt.apply([tf.constant([1.0, 1.0])], [w])
    assert opt.built
    with pytest.raises(ValueError) as e:
        opt.apply_gradients([(tf.constant(1.0), u)])
    assert str(e.value).startswith("Unknown variable: <tf.Variable")
    assert "originally built with" in str(e.value) and e.value.__notes__
    assert float(u) == 3.0 and int(opt.iterations) == 1  # nothing half-updated
    opt.apply([tf.constant([1.0, 1.0])])  # the built variables
    assert int(opt.iterations) == 2
    assert opt.apply([]) is None
    with pytest.raises(ValueError, match="not enough values to unpack"):
        opt.apply_gradients([])


def test_optimizer_learning_rate_variable() -> None:
    opt = keras.optimizers.SGD(learning_rate=0.1)
    assert opt.learning_rate.dtype == "float32"
    opt.learning_rate = 0.5
    assert float(opt.learning_rate) == 0.5
    assert opt.name == "sgd" and keras.optimizers.Adam().name == "adam"


def test_seed_style_manual_training_loop() -> None:
    tf_model = keras.Sequential([keras.layers.Dense(1)])
    tf_model.build((None, 1))
    tf_model.set_weights([np.array([[0.5]]), np.array([0.0])])
    x = tf.constant([[1.0], [2.0], [3.0], [4.0]])
    y = tf.constant([[2.0], [4.0], [6.0], [8.0]])
    [w, b] = tf_model.trainable_variables
    for _ in range(200):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(tf_model(x) - y))
        w_grad, b_grad = tape.gradient(loss, tf_model.trainable_variables)
        w.assign(w - w_grad * 0.05)
        b.assign(b - b_grad * 0.05)
    assert abs(float(w[0, 0]) - 2.0) < 0.05 and abs(float(b[0])) < 0.1


def test_functional_layers_in_keras_order() -> None:
    """Keras 3 orders a functional model's layers by depth from the outputs (deepest
    first; an input used deeper in the graph comes later), then by the order a walk from
    the outputs, dict outputs by sorted key, meets them; weights follow."""
    k = tf.keras
    t, b = k.Input(shape=(5,), name="title"), k.Input(shape=(6,), name="body")
    g = k.Input(shape=(12,), name="tags")
    tf_ = k.layers.Dense(16, name="tf")(k.layers.Dense(8, name="te")(t))
    bf = k.layers.Dense(8, name="bf")(k.layers.Dense(8, name="be")(b))
    x = k.layers.concatenate([tf_, bf, g], name="cat")
    m = k.Model([t, b, g], {"priority": k.layers.Dense(1, name="priority")(x),
                            "department": k.layers.Dense(4, name="department")(x)})
    assert [la.name for la in m.layers] == ["title", "body", "te", "be", "tf", "bf", "tags",
                                            "cat", "department", "priority"]
    assert [w.path.split("/")[0] for w in m.weights][::2] == \
        ["te", "be", "tf", "bf", "department", "priority"]
    a = k.Input((3,), name="a")
    u = k.Input((2,), name="unused")  # an input no output needs: depth 0, ahead of d
    assert [la.name for la in k.Model([a, u], k.layers.Dense(1, name="d")(a)).layers] == \
        ["a", "unused", "d"]


def test_unknown_sizes_stay_unknown_through_functional_layers() -> None:
    """A variable-length sequence (``Input(shape=(None,))``) builds: convolutions get a
    window to run on, and the sizes that follow the unknown one are ``None``, as in Keras
    (the text-classification guide's model raised while building)."""
    k = tf.keras
    inp = k.Input(shape=(None,), dtype="int64")
    e = k.layers.Embedding(50, 8)(inp)
    c = k.layers.Conv1D(4, 7, strides=3, activation="relu")(e)
    c = k.layers.Conv1D(4, 7, strides=3)(c)
    out = k.layers.Dense(1)(k.layers.GlobalMaxPooling1D()(c))
    m = k.Model(inp, out)
    assert e.shape == (None, None, 8) and c.shape == (None, None, 4)
    assert m.output_shape == (None, 1) and m.input_shape == (None, None)
    assert m(np.zeros((2, 40), np.int64)).shape == (2, 1)
    seq = k.Sequential([k.Input((3,)), k.layers.Dense(2)])
    assert seq.output_shape == (None, 2)
    with pytest.raises(AttributeError, match="has no defined output shape yet"):
        _ = k.Sequential([k.layers.Dense(2)]).output_shape


def test_a_model_subclass_built_from_inputs_and_outputs_is_functional() -> None:
    # the "customizing fit" guide: CustomModel(inputs, outputs) with its own train_step
    from tapegrad.tf.keras.models import Functional

    calls: list[int] = []

    class CustomModel(keras.Model):
        def train_step(self, data: Any) -> Any:
            calls.append(1)
            return super().train_step(data)

    inputs = keras.Input(shape=(3,))
    outputs = keras.layers.Dense(1)(inputs)
    model = CustomModel(inputs, outputs)
    assert isinstance(model, Functional) and isinstance(model, CustomModel)
    assert model.name.startswith("custom_model")
    assert [la.name for la in model.layers][0].startswith("input_layer")
    model.compile(optimizer="sgd", loss="mse")
    x, y = np.ones((4, 3), np.float32), np.zeros((4, 1), np.float32)
    model.fit(x, y, epochs=1, batch_size=2, verbose=0)
    assert len(calls) == 2
    np.testing.assert_allclose(model(x).numpy(), model.predict(x, verbose=0), rtol=1e-6)
    assert CustomModel(inputs=inputs, outputs=outputs, name="zz").name == "zz"

    class Plain(keras.Model):  # a subclass with call() stays a subclassed model
        def __init__(self) -> None:
            super().__init__()
            self.d = keras.layers.Dense(2)

        def call(self, x: Any) -> Any:
            return self.d(x)

    assert not isinstance(Plain(), Functional)


def test_sequential_with_an_input_has_symbolic_inputs_outputs_and_layer_outputs() -> None:
    # the Sequential guide's feature extraction
    layers = keras.layers
    initial = keras.Sequential([keras.Input(shape=(8, 8, 3)), layers.Conv2D(4, 3, name="c1"),
                                layers.Conv2D(4, 3, activation="relu", name="mid"),
                                layers.Flatten(name="flat")])
    assert [t.shape for t in initial.inputs] == [(None, 8, 8, 3)]
    assert initial.outputs[0].shape == (None, 64)
    assert initial.get_layer(name="mid").output.shape == (None, 4, 4, 4)
    assert initial.get_layer(index=0).name == "c1"
    extractor = keras.Model(inputs=initial.inputs,
                            outputs=[layer.output for layer in initial.layers])
    x = np.random.default_rng(0).standard_normal((2, 8, 8, 3)).astype(np.float32)
    feats = extractor(tf.constant(x))
    assert [tuple(f.shape) for f in feats] == [(2, 6, 6, 4), (2, 4, 4, 4), (2, 64)]
    np.testing.assert_allclose(feats[-1].numpy(), initial(tf.constant(x)).numpy(), rtol=1e-6)
    mid = keras.Model(initial.inputs, initial.get_layer("mid").output)(tf.constant(x))
    np.testing.assert_allclose(mid.numpy(), feats[1].numpy(), rtol=1e-6)
    with pytest.raises(ValueError, match=r"No such layer: nope. Existing layers are: \['c1'"):
        initial.get_layer("nope")
    with pytest.raises(ValueError, match="Was asked to retrieve layer at index 7"):
        initial.get_layer(index=7)
    with pytest.raises(ValueError, match="Provide either a layer name or layer index"):
        initial.get_layer()
    with pytest.raises(AttributeError, match="has no defined inputs yet"):
        keras.Sequential([layers.Dense(2)]).inputs  # noqa: B018
    with pytest.raises(AttributeError, match="has never been called and thus has no defined "
                                             "output"):
        layers.Dense(2, name="lonely").output  # noqa: B018
