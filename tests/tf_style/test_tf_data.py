"""``tf.data.Dataset``: sources, transformations, specs, cardinality, errors."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import tapegrad.tf as tf

D = tf.data.Dataset


def vals(ds: D) -> list:
    return [np.asarray(v).tolist() if not isinstance(v, (tuple, dict)) else v
            for v in ds.as_numpy_iterator()]


def test_from_tensor_slices_tuple_and_dict() -> None:
    x = np.arange(6, dtype=np.float32).reshape(3, 2)
    y = np.array([0, 1, 0])
    ds = D.from_tensor_slices((x, y))
    got = [(a.numpy().tolist(), int(b)) for a, b in ds]
    assert got == [([0.0, 1.0], 0), ([2.0, 3.0], 1), ([4.0, 5.0], 0)]
    assert isinstance(next(iter(ds))[0], tf.Tensor)
    d = D.from_tensor_slices({"b": [1.0, 2.0], "a": np.array([1, 2])})
    first = next(iter(d))
    assert list(first) == ["b", "a"] and first["b"].dtype == tf.float32
    assert first["a"].dtype == tf.int64
    assert repr(d.element_spec) == ("{'b': TensorSpec(shape=(), dtype=tf.float32, name=None), "
                                    "'a': TensorSpec(shape=(), dtype=tf.int64, name=None)}")


def test_dtypes_follow_tensorflow_inference() -> None:
    assert D.from_tensor_slices([1.5, 2.0]).element_spec.dtype == tf.float32
    assert D.from_tensor_slices(np.array([1.5])).element_spec.dtype == tf.float64
    assert D.from_tensor_slices([1, 2]).element_spec.dtype == tf.int32
    assert D.range(3).element_spec.dtype == tf.int64


def test_from_tensor_slices_mismatched_rows() -> None:
    with pytest.raises(ValueError, match="Dimensions 3 and 2 are not compatible"):
        D.from_tensor_slices((np.zeros(3), np.zeros(2)))


def test_range_map_filter_batch() -> None:
    ds = D.range(10).map(lambda x: x * 3).filter(lambda x: x % 2 == 0).batch(2)
    assert vals(ds) == [[0, 6], [12, 18], [24]]
    assert int(ds.cardinality()) == -2
    assert vals(D.range(2, 9, 3)) == [2, 5, 8]
    assert vals(D.range(5, 0, -2)) == [5, 3, 1]


def test_map_unpacks_tuples_and_returns_structures() -> None:
    ds = D.from_tensor_slices(([1.0, 2.0], [10, 20])).map(
        lambda x, y: {"x": x * 2.0, "y": y + 1}, num_parallel_calls=tf.data.AUTOTUNE)
    assert [(float(e["x"]), int(e["y"])) for e in ds] == [(2.0, 11), (4.0, 21)]
    assert ds.element_spec["x"].dtype == tf.float32


def test_batch_drop_remainder_and_spec() -> None:
    ds = D.range(7)
    assert vals(ds.batch(3)) == [[0, 1, 2], [3, 4, 5], [6]]
    assert vals(ds.batch(3, drop_remainder=True)) == [[0, 1, 2], [3, 4, 5]]
    assert str(ds.batch(3).element_spec.shape) == "(None,)"
    assert ds.batch(3, drop_remainder=True).element_spec.shape == (3,)
    assert len(ds.batch(3)) == 3 and len(ds.batch(3, drop_remainder=True)) == 2
    with pytest.raises(tf.errors.InvalidArgumentError, match="Batch size must be greater"):
        ds.batch(0)


def test_batch_of_different_shapes_fails_and_padded_batch_pads() -> None:
    ds = D.range(1, 4).map(lambda x: tf.fill([x], x))
    with pytest.raises(tf.errors.InvalidArgumentError, match="Cannot batch tensors"):
        list(ds.batch(3))
    assert vals(ds.padded_batch(2)) == [[[1, 0], [2, 2]], [[3, 3, 3]]]
    got = vals(ds.padded_batch(3, padded_shapes=[4], padding_values=tf.constant(-1, tf.int64)))
    assert got == [[[1, -1, -1, -1], [2, 2, -1, -1], [3, 3, 3, -1]]]


def test_unbatch_inverts_batch() -> None:
    x = np.arange(10).reshape(5, 2)
    ds = D.from_tensor_slices(x).batch(2).unbatch()
    assert vals(ds) == x.tolist()
    assert ds.element_spec.shape == (2,)


def test_repeat_take_skip_concatenate_zip_enumerate() -> None:
    ds = D.range(3)
    assert vals(ds.repeat(2)) == [0, 1, 2, 0, 1, 2]
    assert vals(ds.repeat().take(7)) == [0, 1, 2, 0, 1, 2, 0]
    assert int(ds.repeat().cardinality()) == -1
    assert int(ds.repeat().take(4).cardinality()) == 4
    assert vals(ds.skip(1)) == [1, 2] and vals(ds.skip(5)) == []
    assert vals(ds.take(-1)) == [0, 1, 2]
    assert vals(ds.concatenate(D.range(7, 9))) == [0, 1, 2, 7, 8]
    z = D.zip((ds, D.range(10, 20)))
    assert [(int(a), int(b)) for a, b in z] == [(0, 10), (1, 11), (2, 12)]
    assert int(z.cardinality()) == 3
    assert [(int(i), int(v)) for i, v in ds.enumerate(start=4)] == [(4, 0), (5, 1), (6, 2)]
    with pytest.raises(TypeError, match="Incompatible dataset elements"):
        ds.concatenate(ds.map(lambda x: tf.cast(x, tf.float32)))


def test_len_infinite_and_unknown() -> None:
    with pytest.raises(TypeError, match="The dataset is infinite."):
        len(D.range(2).repeat())
    with pytest.raises(TypeError, match="The dataset length is unknown."):
        len(D.range(2).filter(lambda x: x > 0))


def test_shuffle_is_a_permutation_reproducible_with_seed() -> None:
    tf.random.set_seed(3)
    ds = D.range(20).shuffle(20, seed=5)
    a, b = vals(ds), vals(ds)
    assert sorted(a) == list(range(20)) and sorted(b) == list(range(20))
    assert a != b  # reshuffle_each_iteration defaults to True
    tf.random.set_seed(3)
    ds2 = D.range(20).shuffle(20, seed=5)
    assert vals(ds2) == a and vals(ds2) == b
    fixed = D.range(20).shuffle(20, seed=5, reshuffle_each_iteration=False)
    assert vals(fixed) == vals(fixed)


def test_shuffle_small_buffer_only_moves_elements_locally() -> None:
    tf.random.set_seed(0)
    out = vals(D.range(100).shuffle(2))
    assert sorted(out) == list(range(100))
    # with a buffer of 2 the i-th output is at most 1 ahead of its position
    assert all(v <= i + 1 for i, v in enumerate(out))


def test_uniform_shuffle_statistics() -> None:
    tf.random.set_seed(1)
    ds = D.range(4).shuffle(4)
    firsts = np.bincount([vals(ds)[0] for _ in range(2000)], minlength=4)
    assert firsts.min() > 400  # each element first about 1/4 of the time


def test_from_generator_and_signature_checks() -> None:
    def gen():
        for i in range(3):
            yield i, np.full(i, float(i))

    sig = (tf.TensorSpec((), tf.int32), tf.TensorSpec((None,), tf.float32))
    ds = D.from_generator(gen, output_signature=sig)
    got = [(int(a), b.numpy().tolist()) for a, b in ds]
    assert got == [(0, []), (1, [1.0]), (2, [2.0, 2.0])]
    assert got == [(int(a), b.numpy().tolist()) for a, b in ds]  # re-iterable
    assert next(iter(ds))[1].dtype == tf.float32
    assert int(ds.cardinality()) == -2
    bad = D.from_generator(lambda: iter([np.zeros(3)]),
                           output_signature=tf.TensorSpec((2,), tf.float32))
    with pytest.raises(tf.errors.InvalidArgumentError):
        list(bad)
    old = D.from_generator(lambda: iter([1, 2]), output_types=tf.int64, output_shapes=())
    assert vals(old) == [1, 2]


def test_cache_replays_first_pass() -> None:
    calls = []

    def f(x):
        calls.append(1)
        return x + 1

    ds = D.range(3).map(f).cache()
    assert vals(ds) == [1, 2, 3] and vals(ds) == [1, 2, 3]
    assert len(calls) == 3  # the second pass replays the cache
    assert repr(ds).startswith("<CacheDataset")


def test_reduce_flat_map_prefetch_iterator() -> None:
    ds = D.range(5)
    assert int(ds.reduce(np.int64(0), lambda s, x: s + x)) == 10
    fm = ds.take(3).flat_map(lambda x: D.from_tensors(x).repeat(2))
    assert vals(fm) == [0, 0, 1, 1, 2, 2]
    assert vals(ds.prefetch(tf.data.AUTOTUNE)) == [0, 1, 2, 3, 4]
    it = iter(ds.take(1))
    assert int(it.get_next()) == 0
    with pytest.raises(tf.errors.OutOfRangeError):
        it.get_next()


def test_reprs() -> None:
    ds = D.from_tensor_slices(np.arange(6))
    assert repr(ds) == ("<_TensorSliceDataset element_spec=TensorSpec(shape=(), "
                        "dtype=tf.int64, name=None)>")
    assert repr(ds.batch(2)).startswith("<_BatchDataset element_spec=TensorSpec(shape=(None,)")
    assert repr(tf.TensorSpec((None, 3), name="x")) == \
        "TensorSpec(shape=(None, 3), dtype=tf.float32, name='x')"
    assert tf.data.experimental.AUTOTUNE == tf.data.AUTOTUNE == -1


def test_assert_cardinality() -> None:
    ds = D.range(4).filter(lambda x: x >= 0).apply(tf.data.experimental.assert_cardinality(4))
    assert len(ds) == 4 and vals(ds) == [0, 1, 2, 3]
    bad = D.range(4).apply(tf.data.experimental.assert_cardinality(3))
    with pytest.raises(tf.errors.InvalidArgumentError, match="expected to contain 3"):
        list(bad)


def _stacked(ds: D, n: int, drop: bool) -> list:
    elems = list(ds.as_numpy_iterator())
    out = []
    for i in range(0, len(elems), n):
        part = elems[i:i + n]
        if len(part) < n and drop:
            break
        out.append((np.stack([p[0] for p in part]).tolist(),
                    np.stack([p[1] for p in part]).tolist()))
    return out


@pytest.mark.parametrize("drop", [False, True])
@pytest.mark.parametrize("buffer", [None, 3, 50])
def test_batches_of_slices_equal_stacked_elements(buffer: int | None, drop: bool) -> None:
    x = np.arange(46, dtype=np.float32).reshape(23, 2)
    y = np.arange(23)

    def make() -> D:
        tf.random.set_seed(11)
        ds = D.from_tensor_slices((x, y))
        return ds if buffer is None else ds.shuffle(buffer, seed=2)

    batched = [(a.tolist(), b.tolist()) for a, b in make().batch(5, drop_remainder=drop)
               .as_numpy_iterator()]
    assert batched == _stacked(make(), 5, drop)
    first = next(iter(make().batch(5)))
    assert first[0].dtype == tf.float32 and first[1].dtype == tf.int64


def test_slices_copy_the_input() -> None:
    x = np.zeros(3, np.float32)
    ds = D.from_tensor_slices(x)
    x[:] = 7.0
    assert vals(ds) == [0.0, 0.0, 0.0] and vals(ds.batch(2)) == [[0.0, 0.0], [0.0]]


def test_custom_training_walkthrough_program(tmp_path: Any) -> None:
    """The TensorFlow 'custom training walkthrough', on a synthetic iris-like CSV."""
    rng = np.random.default_rng(0)
    feats = rng.normal(size=(120, 4)).astype(np.float32)
    labels = np.argmax(feats[:, :3], axis=1)
    path = tmp_path / "iris_training.csv"
    lines = ["120,4,setosa,versicolor,virginica"]
    lines += [",".join(f"{v:.3f}" for v in row) + f",{lab}" for row, lab in zip(feats, labels)]
    path.write_text("\n".join(lines) + "\n")
    column_names = ["sepal_length", "sepal_width", "petal_length", "petal_width", "species"]
    tf.keras.utils.set_random_seed(0)  # Keras draws initializer seeds from Python's random
    train_dataset = tf.data.experimental.make_csv_dataset(
        str(path), 32, column_names=column_names, label_name="species", num_epochs=1)
    features, labels_b = next(iter(train_dataset))
    assert list(features) == column_names[:4] and labels_b.dtype == tf.int32

    def pack_features_vector(features: Any, labels: Any) -> Any:
        return tf.stack(list(features.values()), axis=1), labels

    train_dataset = train_dataset.map(pack_features_vector)
    features, labels_b = next(iter(train_dataset))
    assert features.shape == (32, 4)
    with pytest.warns(UserWarning, match="input_shape"):
        model = tf.keras.Sequential([
            tf.keras.layers.Dense(10, activation=tf.nn.relu, input_shape=(4,)),
            tf.keras.layers.Dense(10, activation=tf.nn.relu),
            tf.keras.layers.Dense(3)])
    loss_object = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)

    def grad(model: Any, inputs: Any, targets: Any) -> Any:
        with tf.GradientTape() as tape:
            loss_value = loss_object(y_true=targets, y_pred=model(inputs, training=True))
        return loss_value, tape.gradient(loss_value, model.trainable_variables)

    optimizer = tf.keras.optimizers.SGD(learning_rate=0.05)
    accs = []
    for epoch in range(40):
        epoch_loss_avg = tf.keras.metrics.Mean()
        epoch_accuracy = tf.keras.metrics.SparseCategoricalAccuracy()
        for x, y in train_dataset:
            loss_value, grads = grad(model, x, y)
            optimizer.apply_gradients(zip(grads, model.trainable_variables))
            epoch_loss_avg.update_state(loss_value)
            epoch_accuracy.update_state(y, model(x, training=True))
        accs.append(float(epoch_accuracy.result()))
        text = f"Epoch {epoch:03d}: Loss: {epoch_loss_avg.result():.3f}, Accuracy: {epoch_accuracy.result():.3%}"
        assert text.startswith(f"Epoch {epoch:03d}: Loss: ") and text.endswith("%")
    assert accs[-1] > 0.8 > accs[0] - 0.2
    test_accuracy = tf.keras.metrics.Accuracy()
    for x, y in train_dataset:
        prediction = tf.math.argmax(model(x, training=False), axis=1, output_type=tf.int64)
        test_accuracy(prediction, y)
    assert float(test_accuracy.result()) > 0.8
    assert int(optimizer.iterations.numpy()) == 40 * 4


def test_window() -> None:
    ds = D.range(7).window(3, shift=2)
    assert [[int(x) for x in w] for w in ds] == [[0, 1, 2], [2, 3, 4], [4, 5, 6], [6]]
    assert int(ds.cardinality()) == 4
    dropped = D.range(7).window(3, shift=2, drop_remainder=True)
    assert int(dropped.cardinality()) == 3 and len(list(dropped)) == 3
    flat = D.range(6).window(2, stride=2).flat_map(lambda w: w.batch(2))
    assert vals(flat) == [[0, 2], [2, 4], [4]]
    with pytest.raises(tf.errors.InvalidArgumentError, match="greater than zero"):
        D.range(3).window(0)


def test_scan_unique_choose_from_datasets() -> None:
    ds = D.range(5).scan(tf.constant(0, tf.int64), lambda s, x: (s + x, s * 10))
    assert vals(ds) == [0, 0, 10, 30, 60]
    assert vals(D.from_tensor_slices([4, 4, 1, 4, 2]).unique()) == [4, 1, 2]
    with pytest.raises(TypeError, match="only supports scalar int32 and int64"):
        D.from_tensor_slices([1.0, 2.0]).unique()
    pick = D.from_tensor_slices(np.array([1, 1, 0, 1], np.int64))
    chosen = D.choose_from_datasets([D.range(2), D.range(50, 52)], pick)
    assert vals(chosen) == [50, 51, 0]  # the third choice of dataset 1 finds it empty: stop
    with pytest.raises(TypeError, match="scalar `tf.int64`"):
        D.choose_from_datasets([D.range(2)], D.from_tensor_slices([0, 1]))


def test_shuffle_of_gathered_indices_is_the_ring_buffer_order() -> None:
    """The bulk order of a gathered dataset equals the element-by-element ShuffleDataset."""
    from tapegrad.tf.data.dataset import _shuffled, _shuffled_order

    for n, size, seed in [(10, 3, 1), (100, 100, 5), (1000, 7, 9), (5, 10, 2), (0, 4, 1),
                          (37, 36, 3), (60, 59, 4), (1, 1, 8)]:
        expected = list(_shuffled(iter(range(n)), size, seed, seed + 11))
        assert list(_shuffled_order(range(n), size, seed, seed + 11)) == expected
        # a second shuffle of an already shuffled pass (an index array) is the same ring
        # buffer over those indices
        again = [expected[i] for i in _shuffled(iter(range(n)), size, seed + 1, seed)]
        assert list(_shuffled_order(np.asarray(expected), size, seed + 1, seed)) == again
