"""Item 1 (tensors, dtypes, variables) and item 4's conversion rules of tapegrad.tf."""

from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest

import tapegrad
import tapegrad.tf as tf


# ------------------------------------------------------------------ creation and dtypes
def test_python_floats_are_float32_and_ints_int32() -> None:
    assert tf.constant(1.0).dtype == tf.float32
    assert tf.constant([1.0, 2.0]).dtype == tf.float32
    assert tf.constant(1).dtype == tf.int32
    assert tf.constant([1, 2.5]).dtype == tf.float32
    assert tf.constant(True).dtype == tf.bool
    assert tf.constant(2 ** 40).dtype == tf.int64


def test_numpy_values_keep_their_dtype() -> None:
    assert tf.constant(np.array([1.0])).dtype == tf.float64
    assert tf.constant(np.float64(2.0)).dtype == tf.float64
    assert tf.constant(np.array([1])).dtype == tf.int64
    assert tf.convert_to_tensor(np.float32(1.0)).dtype == tf.float32


def test_constant_with_dtype_and_shape() -> None:
    assert tf.constant(1, dtype=tf.float64).dtype == tf.float64
    np.testing.assert_array_equal(tf.constant(0.0, shape=[2, 2]).numpy(), np.zeros((2, 2)))
    np.testing.assert_array_equal(tf.constant([1, 2, 3, 4], shape=[2, 2]).numpy(),
                                  [[1, 2], [3, 4]])
    with pytest.raises(TypeError, match="unsupported shape"):
        tf.constant([1, 2, 3], shape=[2, 2])
    with pytest.raises(TypeError, match="Cannot convert 1.5 to EagerTensor of dtype int32"):
        tf.constant(1.5, dtype=tf.int32)
    with pytest.raises(TypeError, match=r"Cannot convert \[1.0, 2.0\]"):
        tf.constant([1.0, 2.0], dtype=tf.int32)


def test_convert_to_tensor_passes_tensors_through() -> None:
    t = tf.constant([1.0])
    assert tf.convert_to_tensor(t) is t
    with pytest.raises(ValueError, match="Tensor conversion requested dtype float32 for Tensor "
                                         "with dtype int32"):
        tf.convert_to_tensor(tf.constant(1), dtype=tf.float32)
    assert tf.convert_to_tensor([1, 2], dtype_hint=tf.float32).dtype == tf.float32


def test_creation_functions() -> None:
    assert tf.zeros([2, 3]).dtype == tf.float32 and tf.zeros([2, 3]).shape == (2, 3)
    assert tf.ones(3, dtype=tf.int32).numpy().tolist() == [1, 1, 1]
    assert tf.zeros_like(tf.constant([1, 2])).dtype == tf.int32
    assert tf.ones_like(tf.constant([1.0, 2.0]), dtype=tf.float64).dtype == tf.float64
    assert tf.fill([2], 3).numpy().tolist() == [3, 3] and tf.fill([2], 3).dtype == tf.int32
    assert tf.fill([2], 3.0).dtype == tf.float32
    assert tf.range(5).numpy().tolist() == [0, 1, 2, 3, 4] and tf.range(5).dtype == tf.int32
    assert tf.range(1.0, 3.0).dtype == tf.float32
    np.testing.assert_allclose(tf.range(0, 1, 0.25).numpy(), [0, 0.25, 0.5, 0.75])
    np.testing.assert_allclose(tf.linspace(0.0, 1.0, 5).numpy(), [0, 0.25, 0.5, 0.75, 1.0])
    np.testing.assert_array_equal(tf.eye(2).numpy(), np.eye(2))
    assert tf.eye(2, 3, dtype=tf.float64).shape == (2, 3)


def test_cast_truncates_toward_zero() -> None:
    c = tf.cast(tf.constant([1.7, -1.7]), tf.int32)
    assert c.dtype == tf.int32 and c.numpy().tolist() == [1, -1]
    assert tf.cast(tf.constant([1, 0]), tf.bool).numpy().tolist() == [True, False]


def test_random_is_reproducible_with_set_seed() -> None:
    tf.random.set_seed(3)
    a = tf.random.normal([3])
    b = tf.random.uniform([3], minval=1.0, maxval=2.0)
    tf.random.set_seed(3)
    np.testing.assert_array_equal(a.numpy(), tf.random.normal([3]).numpy())
    np.testing.assert_array_equal(b.numpy(), tf.random.uniform([3], 1.0, 2.0).numpy())
    assert a.dtype == tf.float32
    assert np.all((b.numpy() >= 1.0) & (b.numpy() < 2.0))
    assert tf.random.normal([2], dtype=tf.float64).dtype == tf.float64
    assert tf.random.uniform([4], maxval=10, dtype=tf.int32).dtype == tf.int32


def test_dtypes_compare_and_print_like_tensorflow() -> None:
    assert repr(tf.float32) == "tf.float32" and str(tf.float32) == "<dtype: 'float32'>"
    assert tf.float32 == np.float32 and tf.float32 == "float32" and tf.float64 != tf.float32
    assert tf.as_dtype(np.int64) is tf.int64 and tf.as_dtype("double") is tf.float64
    assert tf.float32.as_numpy_dtype is np.float32
    assert tf.float32.is_floating and tf.int32.is_integer and tf.bool.is_bool
    with pytest.raises(TypeError):
        tf.as_dtype(None)


# ------------------------------------------------------------------ printing, shape, numpy
def test_tensor_repr_str_format() -> None:
    x = tf.constant(5.0)
    assert repr(x) == "<tf.Tensor: shape=(), dtype=float32, numpy=5.0>"
    assert str(x) == "tf.Tensor(5.0, shape=(), dtype=float32)"
    assert f"{x}" == "5.0" and f"{x:.2f}" == "5.00"
    assert repr(tf.constant(0.9)) == "<tf.Tensor: shape=(), dtype=float32, numpy=0.8999999761581421>"
    assert str(tf.constant(0.9)) == "tf.Tensor(0.9, shape=(), dtype=float32)"
    m = tf.constant([[1.0, 2.0], [3, 4]])
    assert repr(m) == ("<tf.Tensor: shape=(2, 2), dtype=float32, numpy=\narray([[1., 2.],\n"
                       "       [3., 4.]], dtype=float32)>")
    assert str(m) == "tf.Tensor(\n[[1. 2.]\n [3. 4.]], shape=(2, 2), dtype=float32)"
    assert repr(tf.constant([1, 2])) == ("<tf.Tensor: shape=(2,), dtype=int32, "
                                         "numpy=array([1, 2], dtype=int32)>")
    assert repr(tf.constant(True)) == "<tf.Tensor: shape=(), dtype=bool, numpy=True>"


def test_shape_is_a_tensorshape() -> None:
    s = tf.ones([2, 3]).shape
    assert isinstance(s, tf.TensorShape)
    assert s == (2, 3) and s == [2, 3] and s.as_list() == [2, 3] and s[0] == 2 and len(s) == 2
    assert repr(s) == "TensorShape([2, 3])" and str(s) == "(2, 3)"
    assert str(tf.constant(1.0).shape) == "()" and str(tf.ones([4]).shape) == "(4,)"
    assert s.rank == 2 and s.num_elements() == 6 and s[1:] == (3,)
    assert tf.ones([2]).get_shape() == (2,)


def test_numpy_returns_a_copy_and_scalars_for_0d() -> None:
    t = tf.constant([1.0, 2.0])
    a = t.numpy()
    a[0] = 10.0
    assert t.numpy()[0] == 1.0
    v = tf.constant(3.0).numpy()
    assert isinstance(v, np.float32) and v == 3.0
    assert float(tf.constant(3.0)) == 3.0 and int(tf.constant(3)) == 3
    assert bool(tf.constant(True)) and len(tf.ones([3, 2])) == 3
    assert np.asarray(tf.constant([1.0, 2.0])).tolist() == [1.0, 2.0]


def test_tf_tensors_are_core_tensors() -> None:
    t = tf.constant(1.0)
    v = tf.Variable(1.0)
    assert isinstance(t, tapegrad.Tensor) and isinstance(v, tapegrad.Tensor)
    assert tf.is_tensor(t) and tf.is_tensor(v) and not tf.is_tensor(1.0)
    assert isinstance(t, tf.Tensor)


def test_tensors_are_immutable() -> None:
    x = tf.constant(1.0)
    y = x
    y += 1
    assert y is not x and float(x) == 1.0 and float(y) == 2.0
    with pytest.raises(AttributeError, match="__setitem__"):
        tf.ones([2])[0] = 1.0


def test_ref_is_hashable() -> None:
    t = tf.constant([1.0])
    d = {t.ref(): 1}
    assert d[t.ref()] == 1 and t.ref().deref() is t


# ------------------------------------------------------------------ operators and dtypes
def test_mixed_dtypes_are_refused() -> None:
    with pytest.raises(tf.errors.InvalidArgumentError) as e:
        tf.constant(1.0) + tf.constant(1, dtype=tf.int32)
    msg = str(e.value)
    assert msg == ("cannot compute AddV2 as input #1(zero-based) was expected to be a "
                   "float tensor but is a int32 tensor [Op:AddV2] name: ")
    assert getattr(e.value, "__notes__", [])[0].startswith("[tapegrad hint] ")
    assert isinstance(e.value, tf.errors.OpError) and isinstance(e.value, ValueError)
    with pytest.raises(tf.errors.InvalidArgumentError, match="Mul as input #1.*double"):
        tf.constant(1.0) * tf.constant(2.0, tf.float64)
    with pytest.raises(TypeError, match=r"`x` and `y` must have the same dtype, got tf.float32 "
                                        r"!= tf.float64."):
        tf.constant(1.0) / tf.constant(2.0, tf.float64)
    with pytest.raises(tf.errors.InvalidArgumentError, match="cannot compute Mul"):
        tf.multiply(tf.constant(1.0), tf.constant(2))
    with pytest.raises(tf.errors.InvalidArgumentError, match="float tensor but is a double"):
        tf.add(1.0, tf.constant(2.0, tf.float64))


def test_python_scalars_take_the_tensor_dtype() -> None:
    assert (tf.constant(1.0, tf.float64) + 1.5).dtype == tf.float64
    assert (2 * tf.constant([1.0])).dtype == tf.float32
    assert (tf.constant([1, 2]) * 2).dtype == tf.int32
    assert (tf.constant(1.0) + True).numpy() == 2.0
    assert (tf.constant(1.0) + np.array(1.0)).dtype == tf.float32  # numpy data is cast
    assert (tf.constant([1]) + np.array([1.5])).numpy().tolist() == [2]
    with pytest.raises(tf.errors.InvalidArgumentError, match="int32 tensor but is a float"):
        tf.constant(1) + 1.5
    with pytest.raises(TypeError, match="Cannot convert 0.5 to EagerTensor of dtype int32"):
        tf.constant(2) ** 0.5


def test_integer_division_is_true_division_to_float64() -> None:
    r = tf.constant([1, 2]) / tf.constant([2, 4])
    assert r.dtype == tf.float64 and r.numpy().tolist() == [0.5, 0.5]
    assert (tf.constant([1, 2]) / 2).dtype == tf.float64


def test_shape_errors_name_both_shapes() -> None:
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"Incompatible shapes: \[2\] vs. \[3\] \[Op:AddV2\]"):
        tf.constant([1.0, 2.0]) + tf.constant([1.0, 2.0, 3.0])
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"Matrix size-incompatible: In\[0\]: \[2,3\], In\[1\]: \[2,2\]"):
        tf.matmul(tf.ones([2, 3]), tf.ones([2, 2]))
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"Input to reshape is a tensor with 6 values, but the requested "
                             r"shape has 8"):
        tf.reshape(tf.ones([6]), [4, 2])


def test_matmul_rejects_1d_operands() -> None:
    # float32 runs oneDNN's kernel in TensorFlow's default x86 build: its wording
    with pytest.raises(tf.errors.InvalidArgumentError) as e:
        tf.matmul(tf.ones([3]), tf.ones([3, 2]))
    assert str(e.value) == ("{{function_node __wrapped____MklMatMul_device_/job:localhost/"
                            "replica:0/task:0/device:CPU:0}} In[0] ndims must be >= 2 "
                            "[Op:MatMul] name: ")
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"In\[0\] and In\[1\] has different ndims: \[3\] vs. \[3,2\]"):
        tf.matmul(tf.ones([3], tf.int32), tf.ones([3, 2], tf.int32))
    with pytest.raises(tf.errors.InvalidArgumentError, match="ndims must be == 2: 1"):
        tf.ones([3], tf.float64) @ tf.ones([3], tf.float64)
    assert tf.matmul(tf.ones([2, 3, 4]), tf.ones([4, 5])).shape == (2, 3, 5)


def test_float_only_kernels_refuse_integers() -> None:
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match="Value for attr 'T' of int32 is not in the list of allowed values"):
        tf.sqrt(tf.constant(4))
    with pytest.raises(tf.errors.InvalidArgumentError, match="node Log"):
        tf.math.log(tf.constant([1, 2]))


def test_integer_reductions_keep_the_dtype() -> None:
    assert tf.reduce_sum(tf.constant([1, 2])).dtype == tf.int32
    m = tf.reduce_mean(tf.constant([1, 2]))
    assert m.dtype == tf.int32 and int(m) == 1
    assert int(tf.reduce_mean(tf.constant([-1, -2]))) == -1
    assert tf.argmax(tf.constant([[1.0, 3.0], [4.0, 0.0]])).numpy().tolist() == [1, 0]
    assert tf.argmax(tf.constant([1.0, 3.0])).dtype == tf.int64
    with pytest.raises(tf.errors.InvalidArgumentError, match="Invalid reduction dimension"):
        tf.reduce_sum(tf.ones([2, 2]), axis=2)


# ------------------------------------------------------------------ variables
def test_variable_basics() -> None:
    w = tf.Variable(2.0, name="weight")
    assert w.name == "weight:0" and w.trainable and w.dtype == tf.float32 and w.shape == ()
    assert repr(w) == "<tf.Variable 'weight:0' shape=() dtype=float32, numpy=2.0>"
    assert str(w) == repr(w)
    assert tf.Variable(1.0).name == "Variable:0"
    assert tf.Variable(1).dtype == tf.int32
    assert tf.Variable(1, dtype=tf.float64).dtype == tf.float64
    assert tf.Variable(lambda: tf.ones([2])).shape == (2,)
    assert not tf.Variable(1.0, trainable=False).trainable
    v = tf.Variable([[1.0, 2.0]])
    assert repr(v) == ("<tf.Variable 'Variable:0' shape=(1, 2) dtype=float32, "
                       "numpy=array([[1., 2.]], dtype=float32)>")
    with pytest.raises(ValueError, match="initial_value"):
        tf.Variable()


def test_variable_assign_family() -> None:
    v = tf.Variable(1.0)
    u = v.assign(3)   # TensorFlow's _UnreadVariable: the variable, read when used
    assert type(v).__name__ == "ResourceVariable" and isinstance(u, tf.Variable)
    assert repr(u) == "<tf.Variable 'UnreadVariable' shape=() dtype=float32, numpy=3.0>"
    assert float(v) == 3.0
    v.assign(4.0)
    assert float(u) == 4.0
    u.assign(3.0)
    assert float(v) == 3.0
    v.assign_add(1.0)
    v.assign_sub(0.5)
    assert float(v) == 3.5 and v.numpy().dtype == np.float32
    assert float(v.read_value()) == 3.5 and float(v.value()) == 3.5
    assert v.assign(1.0, read_value=False) is None
    with pytest.raises(ValueError, match="Shape mismatch"):
        v.assign([1.0, 2.0])
    with pytest.raises(ValueError, match="Tensor conversion requested dtype float32 for Tensor "
                                         "with dtype float64"):
        v.assign(tf.constant(1.0, dtype=tf.float64))
    with pytest.raises(RuntimeError, match=r"`variable \+= value` with `tf.Variable`s is not "
                                           r"supported"):
        v += 1.0


def test_variable_in_every_op() -> None:
    v = tf.Variable([1.0, 2.0])
    assert (v + 1.0).numpy().tolist() == [2.0, 3.0]
    assert tf.reduce_sum(v * v).numpy() == 5.0
    assert tf.matmul(tf.reshape(v, [1, 2]), tf.ones([2, 1])).numpy().tolist() == [[3.0]]
    assert np.sin(v).dtype == tf.float32  # NumPy ufuncs dispatch too
    assert (-v).numpy().tolist() == [-1.0, -2.0] and v[1].numpy() == 2.0


def test_values_read_before_assign_keep_their_value() -> None:
    v = tf.Variable(2.0)
    r = v.read_value()
    y = v + 0.0
    i = tf.identity(v)
    v.assign(5.0)
    assert float(r) == 2.0 and float(y) == 2.0 and float(i) == 2.0 and float(v) == 5.0


def test_assign_is_not_recorded_and_gradient_uses_the_value_read() -> None:
    v = tf.Variable(2.0)
    with tf.GradientTape(persistent=True) as tape:
        y = v * v
        v.assign(10.0)  # not recorded; y already read v == 2
    assert float(tape.gradient(y, v)) == 4.0
    with tf.GradientTape() as tape:
        v.assign(3.0)
    assert tape.watched_variables() == ()


def test_variable_copy_and_pickle() -> None:
    v = tf.Variable([1.0, 2.0], name="w")
    c = copy.deepcopy(v)
    assert c is not v and c.numpy().tolist() == [1.0, 2.0] and c.name == "w:0"
    p = pickle.loads(pickle.dumps(v))
    assert p.numpy().tolist() == [1.0, 2.0] and p.name == "w:0"


def test_module_collects_variables() -> None:
    class Lin(tf.Module):
        def __init__(self) -> None:
            super().__init__()
            self.w = tf.Variable(1.0)
            self.layers = [tf.Variable(2.0), tf.Variable(3.0, trainable=False)]

    m = Lin()
    assert len(m.trainable_variables) == 2 and len(m.variables) == 3


def test_function_and_print(capsys: pytest.CaptureFixture[str]) -> None:
    @tf.function
    def f(x: tf.Tensor) -> tf.Tensor:
        return x * 2

    assert float(f(tf.constant(2.0))) == 4.0
    tf.print(tf.constant([1, 2, 3]), "done")
    assert capsys.readouterr().err == "[1 2 3] done\n"
    assert tf.executing_eagerly()


def test_tf_print_text_is_tensorflows(capsys: pytest.CaptureFixture[str]) -> None:
    """tf.print's PrintV2 formatting (TensorFlow 2.21's text; the conformance suite
    compares many more): shortest round-trip floats, booleans as 1/0, summarised rows."""
    import sys

    tf.print(tf.constant(3.0), tf.constant(1 / 3), tf.constant(123456789.0), tf.constant(True),
             tf.constant(0.1, tf.float64), output_stream=sys.stdout)
    tf.print(tf.reshape(tf.range(70), [7, 10]), output_stream=sys.stdout)
    tf.print([tf.constant(1.5), "s"], output_stream=sys.stdout)
    assert capsys.readouterr().out == (
        "3 0.333333343 123456792 1 0.1\n"
        "[[0 1 2 ... 7 8 9]\n [10 11 12 ... 17 18 19]\n [20 21 22 ... 27 28 29]\n ...\n"
        " [40 41 42 ... 47 48 49]\n [50 51 52 ... 57 58 59]\n [60 61 62 ... 67 68 69]]\n"
        "[1.5, 's']\n")
