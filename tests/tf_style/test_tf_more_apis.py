"""The TensorFlow APIs of tapegrad.tf._ops_extra, tf.image, tf.signal and tf.nn's extras:
gradients against finite differences, forward mode against reverse mode, batching
against loops, values against NumPy, errors, tf.function.  Runs without TensorFlow."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import tapegrad.tf as tf
from tests.tf_style.tf_helpers import numeric_grads, numeric_second, run_case, run_case_second
from tests.tf_style.tf_more_apis_cases import CASES
from tests.tf_style.tf_more_cases import MoreCase

# no gradient by TensorFlow's registration (HSVToRGB is not differentiable)
NO_GRAD = {"hsv_to_rgb"}
# TensorFlow's rules, not derivatives: dynamic_stitch's overwritten rows (tested below),
# nearest crop_and_resize's box gradient (the bilinear one)
NOT_THE_DERIVATIVE = {"dynamic_stitch_overlap", "crop_and_resize_nearest"}
# computed in float32 whatever the input (as TensorFlow's kernels): finite differences
# need a wide step there (the functions are linear or smooth at that scale)
FLOAT32_INSIDE = ("resize", "adjust", "grayscale", "per_image", "psnr", "lrn", "ssim",
                  "crop_and_resize")


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_gradient_matches_finite_differences(case: MoreCase) -> None:
    arrays = case.astype(np.float64)
    _, grads = run_case(tf, case.fn, arrays)
    if case.name in NO_GRAD:
        assert all(g is None for g in grads)
        return
    if case.name in NOT_THE_DERIVATIVE:
        return
    wide = case.name.startswith(FLOAT32_INSIDE)
    # a nonlinear float32 computation (standardization, psnr's log of the mse): the float32
    # noise over the step bounds what finite differences can tell; a wrong rule is off by O(1)
    rough = case.name.startswith(("per_image", "psnr", "ssim"))
    num = numeric_grads(tf, case.fn, arrays, eps=1e-2 if rough else 3e-3 if wide else 1e-6)
    assert len(grads) == len(num)
    for g, n in zip(grads, num):
        if case.name == "log_poisson_loss" and g is grads[0]:
            continue  # targets: the Stirling term's log(0) at target 0 (not a smooth point)
        assert g is not None
        tol = {"rtol": 2e-2, "atol": 2e-3} if rough else {"rtol": 2e-3, "atol": 2e-4} if wide \
            else {"rtol": 1e-5, "atol": 1e-6}
        np.testing.assert_allclose(g, n, **tol)


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
    o64, _ = run_case(tf, case.fn, case.astype(np.float64))
    for a, b in zip(o32, o64):
        assert a.dtype in (np.float32, np.complex64)
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-4)
    for g in g32:
        assert g is None or g.dtype == np.float32


# ------------------------------------------------------------------ forward mode, batching
R = np.random.default_rng(2)
A = R.uniform(-1, 1, (3, 8))
B = R.uniform(-1, 1, (3, 5))
JVP_FNS = {
    "rfft": lambda x: tf.math.imag(tf.signal.rfft(x)) + 0.0,
    "irfft": lambda x: tf.signal.irfft(tf.complex(x[:, :5], x[:, 3:])),
    "fft2d": lambda x: tf.math.real(tf.signal.fft2d(tf.complex(x, x * x))),
    "ifft": lambda x: tf.math.imag(tf.signal.ifft(tf.complex(x, -x))),
    "ndtri": lambda x: tf.math.ndtri(x * 0.4 + 0.5),
    "dynamic_stitch": lambda x: tf.dynamic_stitch([[2, 0], [1, 0]], [x[:2], x[1:] * 2.0]),
    "bessel": lambda x: tf.math.bessel_i0(x * 3.0) + tf.math.bessel_i1e(x * 40.0)
    + tf.math.bessel_i0e(x) * tf.math.bessel_i1(x),
    "zeta": lambda x: tf.math.zeta(tf.fill([3, 8], tf.constant(2.5, tf.float64)), x + 1.5),
    "igamma": lambda x: tf.math.igamma(x + 1.5, x * x + 0.5) + tf.math.igammac(x + 2.0, 3.0 - x),
    "resize_bicubic": lambda x: tf.image.resize(tf.reshape(x, [1, 4, 6, 1]), [5, 3],
                                                method="bicubic"),
}


@pytest.mark.parametrize("name", list(JVP_FNS))
def test_forward_mode_agrees_with_reverse_mode(name: str) -> None:
    fn = JVP_FNS[name]
    x = tf.constant(A)
    v = tf.constant(R.uniform(-1, 1, A.shape))
    with tf.autodiff.ForwardAccumulator(x, v) as acc:
        y = fn(x)
    jv = acc.jvp(y).numpy()
    u = R.uniform(-1, 1, y.shape)
    with tf.GradientTape() as tape:
        tape.watch(x)
        s = tf.reduce_sum(fn(x) * tf.constant(u.astype(y.numpy().dtype)))
    g = tape.gradient(s, x).numpy()
    if name == "dynamic_stitch":  # TensorFlow's VJP is not the adjoint where rows overlap
        g = g.copy()
        g[1] = tape_free_adjoint(u)
    rtol = 1e-5 if name.startswith("resize") else 1e-10  # resize computes in float32
    np.testing.assert_allclose(np.sum(jv * u), np.sum(g * v.numpy()), rtol=rtol)


def tape_free_adjoint(u: np.ndarray) -> np.ndarray:
    """The true adjoint's row 1 of the dynamic_stitch case: x[1] lands (doubled) in row 1
    only -- its first write (row 0) is overwritten by x[2] * 2."""
    return 2.0 * u[1]


@pytest.mark.parametrize("name", list(JVP_FNS))
def test_vectorized_map_agrees_with_a_loop(name: str) -> None:
    fn = JVP_FNS[name]
    xs = R.uniform(-1, 1, (4,) + A.shape)
    batched = tf.vectorized_map(fn, tf.constant(xs)).numpy()
    looped = np.stack([fn(tf.constant(x)).numpy() for x in xs])
    np.testing.assert_allclose(batched, looped, rtol=1e-12, atol=1e-12)


def test_dynamic_stitch_gradient_is_tensorflows() -> None:
    # every data row gets its target row's cotangent, overwritten or not
    a, b = tf.constant([1.0, 2.0]), tf.constant([3.0, 4.0])
    with tf.GradientTape() as tape:
        tape.watch([a, b])
        y = tf.dynamic_stitch([[0, 1], [1, 2]], [a, b])
        s = tf.reduce_sum(y * tf.constant([10.0, 20.0, 30.0]))
    ga, gb = tape.gradient(s, [a, b])
    assert y.numpy().tolist() == [1.0, 3.0, 4.0]
    assert ga.numpy().tolist() == [10.0, 20.0] and gb.numpy().tolist() == [20.0, 30.0]


# ------------------------------------------------------------------ values against NumPy
def test_slicing_matches_numpy() -> None:
    x = np.arange(60).reshape(3, 4, 5)
    t = tf.constant(x)
    assert (tf.slice(t, [1, 0, 2], [2, -1, 2]).numpy() == x[1:3, :, 2:4]).all()
    assert (tf.strided_slice(t, [0, 3], [0, 0], [1, -1], begin_mask=1, end_mask=1).numpy()
            == x[:, 3:0:-1]).all()
    assert (tf.strided_slice(t, [0, 1], [0, 2], ellipsis_mask=1).numpy() == x[..., 1:2]).all()
    assert (tf.strided_slice(t, [1, 0, 0], [2, 0, 5], [1, 1, 2], shrink_axis_mask=1,
                             new_axis_mask=2).numpy() == x[1, None, ::2]).all()
    assert (tf.roll(t, [2, -1, 7], [0, 2, 1]).numpy()
            == np.roll(x, (2, -1, 7), (0, 2, 1))).all()


def test_unique_searchsorted_sequence_mask() -> None:
    y, idx = tf.unique(tf.constant([4, 1, 4, 3, 1]))
    assert y.numpy().tolist() == [4, 1, 3] and idx.numpy().tolist() == [0, 1, 0, 2, 1]
    assert idx.dtype == tf.int32
    c = tf.unique_with_counts(tf.constant([2.0, 2.0, 5.0]), out_idx=tf.int64)
    assert c.count.numpy().tolist() == [2, 1] and c.count.dtype == tf.int64
    s = np.sort(R.uniform(0, 1, (3, 6)), axis=1)
    v = R.uniform(0, 1, (3, 4))
    for side in ("left", "right"):
        got = tf.searchsorted(tf.constant(s), tf.constant(v), side=side).numpy()
        want = np.stack([np.searchsorted(s[i], v[i], side=side) for i in range(3)])
        assert (got == want).all()
    m = tf.sequence_mask(tf.constant([[0, 2], [3, 1]]), 3)
    assert m.shape == (2, 2, 3) and m.dtype == tf.bool
    assert m.numpy().tolist() == [[[False] * 3, [True, True, False]],
                                  [[True] * 3, [True, False, False]]]


def test_histogram_bitcast_partition_unravel_bitwise() -> None:
    v = R.uniform(-2, 12, 50)
    got = tf.histogram_fixed_width(tf.constant(v), [0.0, 10.0], nbins=7).numpy()
    want = np.bincount(np.clip(np.floor(v / 10.0 * 7), 0, 6).astype(int), minlength=7)
    assert (got == want).all()
    f = np.array([1.5, -2.0], np.float32)
    assert (tf.bitcast(tf.constant(f), tf.uint8).numpy() == f.view(np.uint8).reshape(2, 4)).all()
    assert (tf.bitcast(tf.bitcast(tf.constant(f), tf.uint16), tf.float32).numpy() == f).all()
    parts = tf.dynamic_partition(tf.constant([[1, 2], [3, 4], [5, 6]]), [2, 0, 2], 3)
    assert [p.numpy().tolist() for p in parts] == [[[3, 4]], [], [[1, 2], [5, 6]]]
    assert parts[1].shape == (0, 2)
    assert tf.unravel_index([5, 11], [3, 4]).numpy().tolist() == [[1, 2], [1, 3]]
    a, b = np.array([12, -7, 5], np.int32), np.array([10, 3, 1], np.int32)
    assert (tf.bitwise.bitwise_xor(a, b).numpy() == a ^ b).all()
    assert (tf.bitwise.right_shift(a, b).numpy() == a >> b).all()
    assert (tf.bitwise.left_shift(a, tf.constant([40, 1, 1])).numpy() == [0, -14, 10]).all()


def test_fft_values_match_numpy() -> None:
    x = R.uniform(-1, 1, (2, 3, 8))
    z = x + 1j * R.uniform(-1, 1, x.shape)
    np.testing.assert_allclose(tf.signal.fft(tf.constant(z)).numpy(), np.fft.fft(z), atol=1e-12)
    np.testing.assert_allclose(tf.signal.ifft2d(tf.constant(z)).numpy(), np.fft.ifft2(z),
                               atol=1e-12)
    r = tf.signal.rfft(tf.constant(x.astype(np.float32)), [6])
    assert r.dtype == tf.complex64 and r.shape == (2, 3, 4)
    np.testing.assert_allclose(r.numpy(), np.fft.rfft(x[..., :6]), atol=1e-5)
    np.testing.assert_allclose(tf.signal.irfft2d(tf.constant(np.fft.rfft2(x))).numpy(), x,
                               atol=1e-12)
    np.testing.assert_allclose(tf.signal.fftshift(tf.constant(x)).numpy(), np.fft.fftshift(x))
    np.testing.assert_allclose(tf.signal.ifftshift(tf.constant(x), axes=[1, 2]).numpy(),
                               np.fft.ifftshift(x, axes=(1, 2)))
    n = np.arange(8)
    np.testing.assert_allclose(tf.signal.hann_window(8).numpy(),
                               0.5 - 0.5 * np.cos(2 * np.pi * n / 8), atol=1e-7)
    np.testing.assert_allclose(tf.signal.hamming_window(8, periodic=False).numpy(),
                               0.54 - 0.46 * np.cos(2 * np.pi * n / 7), atol=1e-7)
    fr = tf.signal.frame(tf.constant(np.arange(10)), 4, 3).numpy()
    assert fr.tolist() == [[0, 1, 2, 3], [3, 4, 5, 6], [6, 7, 8, 9]]


def test_resize_kernels() -> None:
    img = tf.constant(np.array([0.0, 1.0], np.float32).reshape(1, 2, 1))
    np.testing.assert_allclose(tf.image.resize(img, [1, 4]).numpy().ravel(),
                               [0.0, 0.25, 0.75, 1.0])
    np.testing.assert_allclose(tf.image.resize(img, [1, 4], method="nearest").numpy().ravel(),
                               [0.0, 0.0, 1.0, 1.0])
    ramp = np.tile(np.arange(8.0, dtype=np.float32), (3, 1))[..., None]
    down = tf.image.resize(ramp, [3, 4], method="area").numpy()[..., 0]
    np.testing.assert_allclose(down, np.tile([0.5, 2.5, 4.5, 6.5], (3, 1)))
    # the Keys kernel reproduces a linear ramp away from the border, constants everywhere
    up = tf.image.resize(ramp, [3, 16], method="bicubic").numpy()[0, :, 0]
    src = (np.arange(16) + 0.5) * 0.5 - 0.5
    np.testing.assert_allclose(up[3:-3], src[3:-3], atol=2e-3)  # the table's 1/1024 steps
    const = tf.image.resize(np.full((4, 5, 2), 0.7, np.float32), [9, 3], method="bicubic")
    np.testing.assert_allclose(const.numpy(), 0.7, rtol=1e-6)
    u8 = np.arange(12, dtype=np.uint8).reshape(3, 4, 1)
    assert tf.image.resize(u8, [2, 2], method="nearest").dtype == tf.uint8
    assert tf.image.resize(u8, [2, 2]).dtype == tf.float32


def test_image_dtype_conversions_and_adjustments() -> None:
    u8 = np.array([[[0, 128, 255]]], np.uint8)
    f = tf.image.convert_image_dtype(u8, tf.float32)
    np.testing.assert_allclose(f.numpy(), u8 / 255.0, rtol=1e-6)
    assert tf.image.convert_image_dtype(tf.constant([[[0.0, 0.5, 1.0]]]),
                                        tf.uint8).numpy().tolist() == [[[0, 127, 255]]]
    assert tf.image.convert_image_dtype(u8, tf.int16).numpy().tolist() == [[[0, 16384, 32640]]]
    assert tf.image.adjust_brightness(u8, 0.1).numpy().tolist() == [[[25, 153, 255]]]
    rgb = R.uniform(0, 1, (4, 5, 3)).astype(np.float32)
    hsv = tf.image.rgb_to_hsv(rgb)
    np.testing.assert_allclose(tf.image.hsv_to_rgb(hsv).numpy(), rgb, atol=1e-6)
    same = tf.image.adjust_saturation(rgb, 1.0).numpy()
    np.testing.assert_allclose(same, rgb, atol=1e-6)
    gray = tf.image.adjust_saturation(rgb, 0.0).numpy()
    np.testing.assert_allclose(gray, np.repeat(rgb.max(-1, keepdims=True), 3, -1), atol=1e-6)
    np.testing.assert_allclose(tf.image.adjust_hue(rgb, 1.0).numpy(), rgb, atol=1e-5)
    std = tf.image.per_image_standardization(rgb).numpy()
    np.testing.assert_allclose([std.mean(), std.std()], [0.0, 1.0], atol=1e-5)


def test_random_flips_follow_the_global_seed() -> None:
    x = np.arange(24.0).reshape(4, 3, 2, 1)
    tf.random.set_seed(3)
    a = [tf.image.random_flip_left_right(x).numpy() for _ in range(3)]
    tf.random.set_seed(3)
    b = [tf.image.random_flip_left_right(x).numpy() for _ in range(3)]
    for p, q in zip(a, b):
        assert (p == q).all()
        for i in range(4):  # each image is itself or its mirror
            assert (p[i] == x[i]).all() or (p[i] == x[i, :, ::-1]).all()


# ------------------------------------------------------------------ errors
def test_errors() -> None:
    x = tf.constant([[1.0, 2.0, 3.0]])
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"Expected size\[1\] in \[0, 2\]"):
        tf.slice(x, [0, 1], [1, 4])
    with pytest.raises(tf.errors.InvalidArgumentError, match="strides\\[0\\] must be non-zero"):
        tf.strided_slice(x, [0], [1], [0])
    with pytest.raises(tf.errors.InvalidArgumentError, match="unique expects a 1D vector"):
        tf.unique(x)
    with pytest.raises(tf.errors.InvalidArgumentError, match="Cannot bitcast from 4 to 3"):
        tf.bitcast(tf.constant([1, 2, 3], tf.uint8), tf.int32)
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"partitions\[1\] = 5"):
        tf.dynamic_partition(tf.constant([1, 2]), [0, 5], 2)
    with pytest.raises(tf.errors.InvalidArgumentError, match="Summarized data: 1, 2"):
        tf.Assert(False, [tf.constant([1, 2])])
    with pytest.raises(ValueError, match="must have either 3 or 4 dimensions"):
        tf.image.resize(np.ones((2, 2)), [3, 3])
    with pytest.raises(ValueError, match="height must be >= target \\+ offset"):
        tf.image.crop_to_bounding_box(np.ones((3, 3, 1)), 2, 0, 2, 2)
    with pytest.raises(tf.errors.InvalidArgumentError, match="not in the list of allowed"):
        tf.signal.fft(tf.constant([1.0]))
    with pytest.raises(tf.errors.InvalidArgumentError, match="not in the list of allowed"):
        tf.bitwise.invert(tf.constant([1.0]))
    with pytest.raises(ValueError, match="The input scalar must be a 0-D value"):
        tf.math.scalar_mul(tf.constant([1.0, 2.0]), x)


# ------------------------------------------------------------------ tf.function
def test_scan_and_fold_in_tf_function_with_gradients() -> None:
    @tf.function
    def f(v: Any) -> Any:
        with tf.GradientTape() as tape:
            tape.watch(v)
            s = tf.reduce_sum(tf.scan(lambda a, e: a * e + 1.0, v)) + tf.foldl(
                lambda a, e: a + e * e, v) + tf.foldr(lambda a, e: a * 0.5 + e, v)
        return s, tape.gradient(s, v)

    for vals in ([1.0, 2.0, 3.0], [0.5, -1.0, 2.0]):
        v = tf.constant(vals, tf.float64)
        s, g = f(v)
        with tf.GradientTape() as tape:
            tape.watch(v)
            s2 = tf.reduce_sum(tf.scan(lambda a, e: a * e + 1.0, v)) + tf.foldl(
                lambda a, e: a + e * e, v) + tf.foldr(lambda a, e: a * 0.5 + e, v)
        np.testing.assert_allclose(s.numpy(), s2.numpy())
        np.testing.assert_allclose(g.numpy(), tape.gradient(s2, v).numpy())


def test_unique_in_tf_function_follows_each_call() -> None:
    @tf.function
    def f(v: Any) -> Any:
        return tf.unique(v).y

    with pytest.warns(RuntimeWarning):  # a data-dependent shape: the signature runs eagerly
        assert f(tf.constant([1, 1, 2])).numpy().tolist() == [1, 2]
    assert f(tf.constant([3, 4, 4])).numpy().tolist() == [3, 4]


# ------------------------------------------------------------------ tf.sparse, tf.sets
def test_sparse_basics() -> None:
    st = tf.sparse.SparseTensor(indices=[[0, 0], [1, 2]], values=[1.0, 2.0], dense_shape=[3, 4])
    assert isinstance(st, tf.SparseTensor) and st.shape == (3, 4) and st.dtype == tf.float32
    assert st.indices.dtype == tf.int64 and st.dense_shape.dtype == tf.int64
    dense = np.zeros((3, 4), np.float32)
    dense[0, 0], dense[1, 2] = 1.0, 2.0
    assert (tf.sparse.to_dense(st).numpy() == dense).all()
    b = R.uniform(-1, 1, (4, 2)).astype(np.float32)
    np.testing.assert_allclose(tf.sparse.sparse_dense_matmul(st, b).numpy(), dense @ b, rtol=1e-6)
    np.testing.assert_allclose(tf.sparse.sparse_dense_matmul(st, b[:3], adjoint_a=True).numpy(),
                               dense.T @ b[:3], rtol=1e-6)
    back = tf.sparse.from_dense(dense)
    assert back.indices.numpy().tolist() == [[0, 0], [1, 2]]
    assert tf.sparse.reduce_sum(st, axis=1).numpy().tolist() == [1.0, 2.0, 0.0]
    s2 = tf.sparse.add(st, tf.sparse.SparseTensor([[0, 0], [2, 3]], [5.0, 6.0], [3, 4]))
    assert s2.values.numpy().tolist() == [6.0, 2.0, 6.0]
    r = tf.sparse.reorder(tf.sparse.SparseTensor([[1, 2], [0, 0]], [1.0, 2.0], [3, 4]))
    assert r.indices.numpy().tolist() == [[0, 0], [1, 2]] and r.values.numpy().tolist() == [2, 1]
    sl = tf.sparse.slice(st, [1, 1], [2, 3])
    assert sl.indices.numpy().tolist() == [[0, 1]] and sl.dense_shape.numpy().tolist() == [2, 3]
    with pytest.raises(tf.errors.InvalidArgumentError, match="is out of order"):
        tf.sparse.to_dense(tf.sparse.SparseTensor([[1, 2], [0, 0]], [1.0, 2.0], [3, 4]))


def test_sets() -> None:
    a, b = tf.constant([[1, 2, 3], [4, 5, 6]]), tf.constant([[1, 3, 7], [4, 4, 4]])
    inter = tf.sets.intersection(a, b)
    assert tf.sparse.to_dense(inter).numpy().tolist() == [[1, 3], [4, 0]]
    assert tf.sparse.to_dense(tf.sets.union(a, b)).numpy().tolist() == [
        [1, 2, 3, 7], [4, 5, 6, 0]]
    assert tf.sparse.to_dense(tf.sets.difference(a, b)).numpy().tolist() == [[2, 0], [5, 6]]
    assert tf.sets.size(inter).numpy().tolist() == [2, 1]
    with pytest.raises(TypeError, match="Expected `SparseTensor`"):
        tf.sets.size(a)


def test_random_crop_nms_and_random_colour() -> None:
    x = np.arange(60.0).reshape(3, 4, 5)
    tf.random.set_seed(9)
    c = tf.image.random_crop(x, [2, 2, 3]).numpy()
    o = [int(v) for v in np.argwhere(x == c[0, 0, 0])[0]]
    assert (c == x[o[0]:o[0] + 2, o[1]:o[1] + 2, o[2]:o[2] + 3]).all()
    boxes = tf.constant([[0, 0, 1, 1], [0, 0.1, 1, 1.1], [0, 10, 1, 11]], tf.float32)
    keep = tf.image.non_max_suppression(boxes, tf.constant([0.9, 0.95, 0.5]), 3)
    assert keep.dtype == tf.int32 and keep.numpy().tolist() == [1, 2]
    rgb = R.uniform(0, 1, (3, 4, 3)).astype(np.float32)
    for out in (tf.image.random_saturation(rgb, 0.5, 1.5), tf.image.random_hue(rgb, 0.2)):
        v = out.numpy()
        assert v.shape == rgb.shape and v.min() >= 0 and v.max() <= 1 + 1e-6
        np.testing.assert_allclose(v.max(-1), rgb.max(-1), atol=1e-6)  # HSV value kept
