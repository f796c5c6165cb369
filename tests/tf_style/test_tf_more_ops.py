"""The TensorFlow APIs added in tapegrad.tf._ops_more: gradients against finite
differences, values against hand-computed (or NumPy/math-module) values, errors.
Runs without TensorFlow."""

from __future__ import annotations

import math

import numpy as np
import pytest

import tapegrad.tf as tf
from tests.tf_style.tf_helpers import numeric_grads, numeric_second, run_case, run_case_second
from tests.tf_style.tf_more_cases import CASES, MoreCase


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_gradient_matches_finite_differences(case: MoreCase) -> None:
    arrays = case.astype(np.float64)
    _, grads = run_case(tf, case.fn, arrays)
    num = numeric_grads(tf, case.fn, arrays)
    assert len(grads) == len(num)
    for g, n in zip(grads, num):
        assert g is not None
        np.testing.assert_allclose(g, n, rtol=1e-6, atol=1e-7)


SECOND = [c for c in CASES if c.order >= 2]


@pytest.mark.parametrize("case", SECOND, ids=[c.name for c in SECOND])
def test_second_order_matches_finite_differences(case: MoreCase) -> None:
    arrays = case.astype(np.float64)
    for g, n in zip(run_case_second(tf, case.fn, arrays), numeric_second(tf, case.fn, arrays)):
        assert g is not None
        np.testing.assert_allclose(g, n, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_float32_keeps_its_dtype_and_agrees_with_float64(case: MoreCase) -> None:
    o32, g32 = run_case(tf, case.fn, case.astype(np.float32))
    o64, g64 = run_case(tf, case.fn, case.astype(np.float64))
    for a, b in zip(o32 + g32, o64 + g64):
        assert a is not None and b is not None
        assert a.dtype == np.float32
        np.testing.assert_allclose(a, b, rtol=2e-5, atol=2e-5)


def test_inverse_and_special_functions_values() -> None:
    x = np.array([-0.7, -0.1, 0.0, 0.4, 0.95])
    t = tf.constant(x)
    np.testing.assert_allclose(tf.asin(t).numpy(), np.arcsin(x), rtol=1e-15)
    np.testing.assert_allclose(tf.acos(t).numpy(), np.arccos(x), rtol=1e-15)
    np.testing.assert_allclose(tf.atanh(t).numpy(), np.arctanh(x), rtol=1e-15)
    np.testing.assert_allclose(tf.math.atan2(t, tf.constant(-x - 0.5)).numpy(),
                               np.arctan2(x, -x - 0.5), rtol=1e-15)
    for v in (0.3, 1.0, 2.5, 7.0, -1.5, -0.25):
        assert tf.math.lgamma(tf.constant(v, tf.float64)).numpy() == pytest.approx(
            math.lgamma(v), rel=1e-14)
    # digamma(1) = -Euler's gamma, digamma(1/2) = -gamma - 2 log 2, recurrence digamma(x+1)
    eg = 0.5772156649015329
    d = tf.math.digamma(tf.constant([1.0, 0.5, 3.3, 4.3, -0.5], tf.float64)).numpy()
    np.testing.assert_allclose(d[:2], [-eg, -eg - 2 * math.log(2)], rtol=1e-12)
    assert d[3] - d[2] == pytest.approx(1 / 3.3, rel=1e-12)
    assert d[4] == pytest.approx(-eg - 2 * math.log(2) + 2.0, rel=1e-12)  # psi(1/2) + 1/(-1/2)
    u = np.array([-0.99, -0.3, 0.0, 0.5, 0.999999])
    np.testing.assert_allclose([math.erf(v) for v in tf.math.erfinv(tf.constant(u)).numpy()], u,
                               rtol=1e-14, atol=1e-15)


def test_special_values_at_poles_and_edges() -> None:
    inf = float("inf")
    lg = tf.math.lgamma(tf.constant([0.0, -2.0, inf, -inf])).numpy()
    assert np.all(lg == inf)
    assert np.isnan(tf.math.digamma(tf.constant([0.0, -3.0, -inf]))).numpy().all()
    assert tf.math.erfinv(tf.constant([1.0, -1.0])).numpy().tolist() == [inf, -inf]
    assert np.isnan(tf.math.erfinv(tf.constant([1.5]))).numpy().all()
    assert tf.math.atanh(tf.constant([1.0])).numpy().tolist() == [inf]
    assert np.isnan(tf.math.acosh(tf.constant([0.5]))).numpy().all()


def test_elementwise_helpers_values() -> None:
    assert tf.math.rint(tf.constant([0.5, 1.5, -2.5, 2.7])).numpy().tolist() == [0, 2, -2, 3]
    r = tf.math.multiply_no_nan(tf.constant([float("inf"), float("nan"), 2.0]),
                                tf.constant([0.0, 0.0, 3.0]))
    assert r.numpy().tolist() == [0.0, 0.0, 6.0]
    assert tf.math.reciprocal_no_nan(tf.constant([0.0, 4.0])).numpy().tolist() == [0.0, 0.25]
    assert tf.math.xdivy(tf.constant([0.0, 3.0]), tf.constant([0.0, 2.0])).numpy().tolist() == \
        [0.0, 1.5]
    ls = tf.math.log_sigmoid(tf.constant([-100.0, 0.0, 100.0])).numpy()
    np.testing.assert_allclose(ls, [-100.0, -math.log(2), 0.0], atol=1e-7)
    assert tf.math.softsign(tf.constant([3.0])).numpy().tolist() == [0.75]


def test_float_only_ops_refuse_integers() -> None:
    for fn in (tf.asin, tf.math.lgamma, tf.math.digamma, tf.math.erfinv, tf.math.rint,
               tf.math.softsign, tf.math.log_sigmoid, tf.math.reciprocal_no_nan):
        with pytest.raises(tf.errors.InvalidArgumentError, match="Value for attr 'T' of int32"):
            fn(tf.constant([1, 2]))
    with pytest.raises(tf.errors.InvalidArgumentError, match="allowed values: bfloat16, half, "
                       "float, double\n"):
        tf.math.atan2(tf.constant([1]), tf.constant([2]))


def test_cumprod_values() -> None:
    x = tf.constant([[1, 2, 3], [4, 5, 6]])
    assert tf.math.cumprod(x, axis=1).numpy().tolist() == [[1, 2, 6], [4, 20, 120]]
    assert tf.math.cumprod(x, axis=1).dtype == tf.int32
    assert tf.math.cumprod(x, axis=0, exclusive=True).numpy().tolist() == [[1, 1, 1], [1, 2, 3]]
    assert tf.math.cumprod(tf.constant([1.0, 2.0, 3.0]), exclusive=True, reverse=True
                           ).numpy().tolist() == [6.0, 3.0, 1.0]
    with pytest.raises(tf.errors.InvalidArgumentError, match="Expected scan axis in the range"):
        tf.math.cumprod(tf.constant([1.0]), axis=1)


def test_top_k() -> None:
    r = tf.math.top_k(tf.constant([[1.0, 3.0, 3.0, 2.0], [0.0, -1.0, 5.0, 4.0]]), k=2)
    assert r.values.numpy().tolist() == [[3.0, 3.0], [5.0, 4.0]]
    assert r.indices.numpy().tolist() == [[1, 2], [2, 3]]
    assert r.indices.dtype == tf.int32
    v, i = tf.nn.top_k(tf.constant([4, 9, 1]), 1)
    assert v.numpy().tolist() == [9] and i.numpy().tolist() == [1]
    assert tf.math.top_k(tf.constant([1.0]), index_type=tf.int64).indices.dtype == tf.int64
    x = tf.Variable([1.0, 5.0, 3.0])
    with tf.GradientTape() as tape:
        y = tf.reduce_sum(tf.math.top_k(x, 2).values * tf.constant([10.0, 1.0]))
    assert tape.gradient(y, x).numpy().tolist() == [0.0, 10.0, 1.0]
    with pytest.raises(tf.errors.InvalidArgumentError, match="input must have at least k columns. "
                       "Had 1, needed 2"):
        tf.math.top_k(tf.constant([1.0]), k=2)
    with pytest.raises(tf.errors.InvalidArgumentError, match="Need k >= 0, got -1"):
        tf.math.top_k(tf.constant([1.0]), k=-1)
    with pytest.raises(tf.errors.InvalidArgumentError, match="input must be >= 1-D"):
        tf.math.top_k(tf.constant(1.0))


def test_in_top_k_and_confusion_matrix() -> None:
    p = tf.constant([[0.1, 0.9, 0.5], [0.3, 0.3, 0.1]])
    assert tf.math.in_top_k(tf.constant([1, 1]), p, 1).numpy().tolist() == [True, True]
    assert tf.math.in_top_k(tf.constant([2, 2]), p, 1).numpy().tolist() == [False, False]
    assert tf.nn.in_top_k(tf.constant([0, 5]), p, 3).numpy().tolist() == [True, False]
    m = tf.math.confusion_matrix([0, 1, 1, 2], [0, 1, 0, 2])
    assert m.numpy().tolist() == [[1, 0, 0], [1, 1, 0], [0, 0, 1]] and m.dtype == tf.int32
    w = tf.math.confusion_matrix([0, 1], [1, 1], num_classes=3, weights=[2.0, 0.5],
                                 dtype=tf.float32)
    assert w.numpy().tolist() == [[0, 2, 0], [0, 0.5, 0], [0, 0, 0]]
    with pytest.raises(tf.errors.InvalidArgumentError, match="`labels` contains negative values"):
        tf.math.confusion_matrix([-1], [0])
    with pytest.raises(tf.errors.InvalidArgumentError, match="`predictions` out of bound"):
        tf.math.confusion_matrix([0], [3], num_classes=2)


def test_counting() -> None:
    c = tf.math.count_nonzero(tf.constant([[1, 0, 3], [0, 0, 2]]), axis=1)
    assert c.numpy().tolist() == [2, 1] and c.dtype == tf.int64
    assert tf.math.count_nonzero(tf.constant([0.0, 2.0]), dtype=tf.int32).dtype == tf.int32
    assert int(tf.math.count_nonzero(tf.constant([True, False, True]))) == 2
    b = tf.math.bincount(tf.constant([3, 1, 1, 0]))
    assert b.numpy().tolist() == [1, 2, 0, 1] and b.dtype == tf.int32
    assert tf.math.bincount(tf.constant([3, 1]), minlength=6).numpy().tolist() == [0, 1, 0, 1, 0, 0]
    assert tf.math.bincount(tf.constant([3, 1]), maxlength=2).numpy().tolist() == [0, 1]
    wb = tf.math.bincount(tf.constant([1, 1, 2]), weights=tf.constant([0.5, 0.25, 2.0]))
    assert wb.numpy().tolist() == [0.0, 0.75, 2.0] and wb.dtype == tf.float32
    rows = tf.math.bincount(tf.constant([[1, 1], [0, 2]]), axis=-1)
    assert rows.numpy().tolist() == [[0, 2, 0], [1, 0, 1]]
    with pytest.raises(tf.errors.InvalidArgumentError, match="Input arr must be non-negative!"):
        tf.math.bincount(tf.constant([-1]))


def test_repeat() -> None:
    x = tf.constant([[1, 2], [3, 4]])
    assert tf.repeat(x, 2).numpy().tolist() == [1, 1, 2, 2, 3, 3, 4, 4]
    assert tf.repeat(x, [1, 2], axis=0).numpy().tolist() == [[1, 2], [3, 4], [3, 4]]
    assert tf.repeat(x, tf.constant([0, 3]), axis=-1).numpy().tolist() == [[2, 2, 2], [4, 4, 4]]
    with pytest.raises(ValueError, match="Dimensions 2 and 3 are not compatible"):
        tf.repeat(x, [1, 2, 3], axis=0)
    with pytest.raises(ValueError, match="axis=2 out of bounds"):
        tf.repeat(x, 2, axis=2)
    with pytest.raises(tf.errors.InvalidArgumentError, match="but got -1"):
        tf.repeat(x, -1, axis=0)


def test_segments() -> None:
    d = tf.constant([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    assert tf.math.segment_sum(d, [0, 0, 2]).numpy().tolist() == [[4, 6], [0, 0], [5, 6]]
    assert tf.math.segment_mean(d, [0, 0, 2]).numpy().tolist() == [[2, 3], [0, 0], [5, 6]]
    assert tf.math.segment_max(d, [0, 0, 2]).numpy().tolist() == [[3, 4], [0, 0], [5, 6]]
    assert tf.math.segment_min(d, [0, 0, 1]).numpy().tolist() == [[1, 2], [5, 6]]
    assert tf.math.segment_mean(tf.constant([1, 2, 4]), [0, 0, 1]).numpy().tolist() == [1, 4]
    u = tf.math.unsorted_segment_sum(d, [2, -1, 0], 3)
    assert u.numpy().tolist() == [[5, 6], [0, 0], [1, 2]]
    with pytest.raises(tf.errors.InvalidArgumentError, match="segment ids are not increasing"):
        tf.math.segment_sum(d, [1, 0, 2])
    with pytest.raises(tf.errors.InvalidArgumentError, match="should be the same size"):
        tf.math.segment_sum(d, [0, 0])
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"segment_ids\[1\] = 5 is out of "):
        tf.math.unsorted_segment_sum(d, [2, 5, 0], 3)
    with pytest.raises(tf.errors.InvalidArgumentError, match="Value for attr 'Tindices' of float"):
        tf.math.segment_sum(d, tf.constant([0.0, 0.0, 1.0]))
    lo = np.finfo(np.float32).min
    um = tf.math.unsorted_segment_max(d, [1, -1, 1], 3).numpy()
    assert um.tolist() == [[lo, lo], [5, 6], [lo, lo]]
    assert tf.math.unsorted_segment_min(d, [0, 0, 0], 2).numpy().tolist()[0] == [1, 2]
    assert tf.math.unsorted_segment_mean(d, [1, 0, 1], 3).numpy().tolist() == \
        [[3, 4], [3, 4], [0, 0]]
    im = tf.math.unsorted_segment_mean(tf.constant([1, 2, 4]), [0, 0, 1], 3)
    assert im.dtype == tf.float64 and im.numpy().tolist() == [1.5, 4.0, 0.0]
    # the gradient of a tied maximum is split between the ties
    x = tf.Variable([2.0, 2.0, 1.0])
    with tf.GradientTape() as tape:
        y = tf.reduce_sum(tf.math.segment_max(x, [0, 0, 0]))
    assert tape.gradient(y, x).numpy().tolist() == [0.5, 0.5, 0.0]


def test_map_fn() -> None:
    x = tf.constant([[1.0, 2.0], [3.0, 4.0]])
    r = tf.map_fn(lambda row: tf.reduce_sum(row), x)
    assert r.numpy().tolist() == [3.0, 7.0]
    a, b = tf.map_fn(lambda p: (p[0] * 2.0, p[1] + 1), (tf.constant([1.0, 2.0]), tf.constant([5, 6])))
    assert a.numpy().tolist() == [2.0, 4.0] and b.numpy().tolist() == [6, 7]
    d = tf.map_fn(lambda e: {"s": e["v"] * 3.0}, {"v": tf.constant([1.0])},
                  fn_output_signature={"s": tf.float32})
    assert d["s"].numpy().tolist() == [3.0]
    i = tf.map_fn(lambda v: tf.cast(v, tf.int32), tf.constant([1.5, 2.5]),
                  fn_output_signature=tf.int32)
    assert i.dtype == tf.int32 and i.numpy().tolist() == [1, 2]
    assert tf.map_fn(lambda v: v, tf.zeros([0, 3])).shape == (0,)
    with pytest.raises(tf.errors.InvalidArgumentError, match="TensorArray dtype is float32 but Op "
                       "is trying to write dtype int32"):
        tf.map_fn(lambda v: tf.cast(v, tf.int32), tf.constant([1.0]))
    with pytest.raises(ValueError, match="1\\+ dimensional Tensors, not scalars"):
        tf.map_fn(lambda v: v, tf.constant(1.0))
    with pytest.raises(ValueError, match="does not contain any Tensors"):
        tf.map_fn(lambda v: v, [])
    with pytest.raises(ValueError, match="Dimensions 1 and 2 are not compatible"):
        tf.map_fn(lambda v: v, (tf.constant([1.0]), tf.constant([1.0, 2.0])))
    # gradients flow through the slices and the stack
    w = tf.Variable([1.0, 2.0, 3.0])
    with tf.GradientTape() as tape:
        y = tf.reduce_sum(tf.map_fn(lambda v: v * v * v, w))
    assert tape.gradient(y, w).numpy().tolist() == [3.0, 12.0, 27.0]


def test_clip_by_global_norm() -> None:
    a, b = tf.constant([3.0, 4.0]), tf.constant([[12.0]])
    (ca, none, cb), norm = tf.clip_by_global_norm([a, None, b], 6.5)
    assert float(norm) == 13.0 and none is None
    np.testing.assert_allclose(ca.numpy(), [1.5, 2.0], rtol=1e-6)
    np.testing.assert_allclose(cb.numpy(), [[6.0]], rtol=1e-6)
    (same,), _ = tf.clip_by_global_norm([a], 100.0)
    np.testing.assert_allclose(same.numpy(), [3.0, 4.0], rtol=1e-6)
    (nan,), n = tf.clip_by_global_norm([tf.constant([float("inf"), 1.0])], 1.0)
    assert np.isnan(nan.numpy()).all() and float(n) == float("inf")
    (u,), n = tf.clip_by_global_norm([a], 1.0, use_norm=tf.constant(10.0))
    np.testing.assert_allclose(u.numpy(), [0.3, 0.4], rtol=1e-6)
    assert float(n) == 10.0
    with pytest.raises(TypeError, match="`t_list` should be a sequence of tensors"):
        tf.clip_by_global_norm(a, 1.0)
    assert float(tf.linalg.global_norm([a, None, b])) == 13.0


def test_eager_no_ops_and_static_values() -> None:
    calls: list[int] = []
    with tf.control_dependencies([tf.constant(1.0), lambda: calls.append(1)]):
        y = tf.constant(2.0) + 1.0
    assert calls == [1] and float(y) == 3.0
    with tf.control_dependencies(None):
        pass
    assert tf.no_op() is None and tf.group(tf.constant(1.0)) is None
    i = tf.identity_n([tf.constant(1), tf.constant([2.0])])
    assert [v.numpy().tolist() for v in i] == [1, [2.0]]
    v = tf.get_static_value(tf.constant([1, 2]))
    assert isinstance(v, np.ndarray) and v.tolist() == [1, 2]
    assert tf.get_static_value(3) == 3
    assert tf.get_static_value(tf.Variable(1.0)) is None
    assert tf.ensure_shape(tf.ones([2, 3]), [None, 3]).shape == (2, 3)
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"Shape of tensor input \[2,3\] is "
                       r"not compatible with expected shape \[2,4\]\."):
        tf.ensure_shape(tf.ones([2, 3]), [2, 4])


def test_assertions() -> None:
    assert tf.debugging.assert_equal(tf.constant([1, 2]), tf.constant([1, 2])) is None
    assert tf.assert_less(tf.constant([1]), tf.constant([2])) is None
    assert tf.assert_greater(tf.constant([3.0]), 2.0) is None
    assert tf.debugging.assert_rank(tf.ones([2, 3]), 2) is None
    with pytest.raises(tf.errors.InvalidArgumentError) as e:
        tf.debugging.assert_equal(tf.constant([1, 2]), tf.constant([1, 3]))
    assert str(e.value).startswith(
        "Condition x == y did not hold.\nIndices of first 1 different values:\n[[1]]\n"
        "Corresponding x values:\n[2]\nCorresponding y values:\n[3]\n"
        "First 2 elements of x:\n[1 2]\nFirst 2 elements of y:\n[1 3]")
    with pytest.raises(tf.errors.InvalidArgumentError) as e:
        tf.assert_greater(tf.constant([1.0, 5.0]), 2.0, message="too small")
    assert str(e.value).startswith("too small\nCondition x > y did not hold.\n"
                                   "First 2 elements of x:\n[1. 5.]\nFirst 1 elements of y:\n[2.]")
    with pytest.raises(tf.errors.InvalidArgumentError, match="Condition x < y did not hold"):
        tf.debugging.assert_less(tf.constant([2]), tf.constant([2]))
    with pytest.raises(ValueError, match=r"Tensor  must have rank 1.  Received rank 2, "
                       r"shape \(2, 3\)"):
        tf.assert_rank(tf.ones([2, 3]), 1)


@pytest.mark.filterwarnings("ignore:tf.function:RuntimeWarning")  # value-dependent: runs eagerly
def test_runs_under_tf_function() -> None:
    @tf.function
    def f(x: object, ids: object) -> object:
        return (tf.math.top_k(x, k=2).values, tf.repeat(x, 2), tf.math.segment_sum(x, ids),
                tf.map_fn(lambda r: r * 2.0, x))

    for x, ids in (([1.0, 3.0, 2.0], [0, 0, 1]), ([5.0, 0.0, 7.0], [0, 1, 1])):
        out = [t.numpy().tolist() for t in f(tf.constant(x), tf.constant(ids))]  # type: ignore[attr-defined]
        xs = np.array(x)
        assert out[0] == sorted(x, reverse=True)[:2]
        assert out[1] == np.repeat(xs, 2).tolist()
        assert out[2] == np.bincount(ids, weights=xs).tolist()
        assert out[3] == (xs * 2).tolist()


_PRIMITIVES = {
    "asin": lambda tf, x: tf.math.asin(x),
    "acos": lambda tf, x: tf.math.acos(x),
    "atan": lambda tf, x: tf.math.atan(x),
    "asinh": lambda tf, x: tf.math.asinh(x),
    "acosh": lambda tf, x: tf.math.acosh(x + 2.0),
    "atanh": lambda tf, x: tf.math.atanh(x),
    "atan2": lambda tf, x: tf.math.atan2(x, x * x + 1.0),
    "lgamma": lambda tf, x: tf.math.lgamma(x + 1.0),
    "digamma": lambda tf, x: tf.math.digamma(x + 1.0),
    "erfinv": lambda tf, x: tf.math.erfinv(x),
    "cumprod": lambda tf, x: tf.math.cumprod(x + 2.0),
}


@pytest.mark.parametrize("name", list(_PRIMITIVES))
def test_forward_mode_jacobian_and_vectorized_map(name: str) -> None:
    f = _PRIMITIVES[name]
    x0 = np.array([0.3, -0.4, 0.6])
    v = np.array([1.0, 0.5, -2.0])
    eps = 1e-6

    def num(d: np.ndarray) -> np.ndarray:
        return (f(tf, tf.constant(x0 + eps * d)).numpy()
                - f(tf, tf.constant(x0 - eps * d)).numpy()) / (2 * eps)

    xt = tf.constant(x0)
    with tf.autodiff.ForwardAccumulator(xt, tf.constant(v)) as acc:
        y = f(tf, xt)
    np.testing.assert_allclose(acc.jvp(y).numpy(), num(v), rtol=1e-6, atol=1e-8)
    xv = tf.Variable(x0)
    with tf.GradientTape() as tape:
        y = f(tf, xv)
    np.testing.assert_allclose(tape.jacobian(y, xv).numpy(),
                               np.stack([num(e) for e in np.eye(3)], axis=1), rtol=1e-6, atol=1e-8)
    rows = np.stack([x0, x0 * 0.5])
    np.testing.assert_allclose(tf.vectorized_map(lambda r: f(tf, r), tf.constant(rows)).numpy(),
                               np.stack([f(tf, tf.constant(r)).numpy() for r in rows]), rtol=1e-15)


def test_higher_derivatives_of_digamma_and_lgamma() -> None:
    # d2/dx2 digamma = psi2 (was silently zero: trigamma had no gradient), d3/dx3 lgamma too
    from tapegrad.ops.special import _trigamma_np

    x64 = np.array([0.3, 1.0, 2.5, 7.0, -0.5, -2.3])
    x = tf.constant(x64)
    with tf.GradientTape() as t2:
        t2.watch(x)
        with tf.GradientTape() as t1:
            t1.watch(x)
            y = tf.math.digamma(x)
        g = t1.gradient(y, x)
    gg = t2.gradient(g, x).numpy()
    h = 1e-5
    fd = (_trigamma_np(x64 + h) - _trigamma_np(x64 - h)) / (2 * h)
    np.testing.assert_allclose(gg, fd, rtol=1e-5)
    np.testing.assert_allclose(gg[1], -2 * 1.2020569031595942, rtol=1e-12)  # -2 zeta(3)
    with tf.GradientTape() as t3:
        t3.watch(x)
        with tf.GradientTape() as t2b:
            t2b.watch(x)
            with tf.GradientTape() as t1b:
                t1b.watch(x)
                z = tf.math.lgamma(x)
            d1 = t1b.gradient(z, x)
        d2 = t2b.gradient(d1, x)
    np.testing.assert_allclose(t3.gradient(d2, x).numpy(), gg, rtol=1e-12)
