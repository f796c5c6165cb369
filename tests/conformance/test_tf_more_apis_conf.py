"""Conformance: the TensorFlow APIs of tapegrad.tf._ops_extra, tf.image, tf.signal and
tf.nn's extras against real TensorFlow.

Differentiable cases (tests/tf_style/tf_more_apis_cases.py) compare values, dtypes,
first (and some second) derivatives in float64 and float32; the others compare results
(values, dtypes, shapes, structure) or the exception type and message text.
Skipped without TensorFlow.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import tapegrad.tf as tg
from tests.conformance.test_tf_more_ops_conf import _same
from tests.tf_style.tf_helpers import real_tf, run_case, run_case_second
from tests.tf_style.tf_more_apis_cases import CASES
from tests.tf_style.tf_more_cases import MoreCase

pytest.importorskip("tensorflow")


@pytest.fixture(scope="module")
def rtf() -> Any:
    tf = real_tf()
    tf.get_logger().setLevel("ERROR")
    return tf


def _tol(dtype: type) -> dict[str, float]:
    return {"rtol": 1e-9, "atol": 1e-10} if dtype is np.float64 else {"rtol": 2e-5, "atol": 2e-5}


# TensorFlow registers no gradient for ResizeArea and AdjustContrastv2 (tape.gradient raises
# LookupError); tapegrad differentiates them (checked against finite differences in
# tests/tf_style/test_tf_more_apis.py), so only their values are compared here
NO_TF_GRADIENT = {"resize_area", "adjust"}
# TensorFlow's ScaleAndTranslateGrad refuses float64 images (its forward casts them to
# float32 but the gradient kernel is float32-only)
F64_GRADIENT_FAILS = {"resize_antialias_down", "resize_scale_translate"}


@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["f64", "f32"])
@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_values_and_gradients_match_tensorflow(rtf: Any, case: MoreCase, dtype: type) -> None:
    arrays = case.astype(dtype)
    o_tg, g_tg = run_case(tg, case.fn, arrays)
    tf_fails = case.name in NO_TF_GRADIENT or (case.name in F64_GRADIENT_FAILS
                                               and dtype is np.float64)
    if tf_fails:
        with pytest.raises((LookupError, rtf.errors.InvalidArgumentError)):
            run_case(rtf, case.fn, arrays)
        out = case.fn(rtf, *[rtf.constant(a) for a in arrays])
        o_tf = [np.asarray(o.numpy()) for o in (out if isinstance(out, (tuple, list)) else [out])]
    else:
        o_tf, g_tf = run_case(rtf, case.fn, arrays)
    assert len(o_tg) == len(o_tf)
    tol = _tol(dtype)
    inside32 = ("resize", "rgb_to_hsv", "grayscale", "per_image", "lrn", "adjust", "ssim",
                "crop_and_resize")
    if case.name.startswith(inside32) and dtype is np.float64:
        tol = _tol(np.float32)  # TensorFlow's kernels compute these in float32
    for a, b in zip(o_tg, o_tf):
        assert a.shape == b.shape and a.dtype == b.dtype, (a.shape, b.shape, a.dtype, b.dtype)
        np.testing.assert_allclose(a, b, **tol)
    if tf_fails:
        return
    assert len(g_tg) == len(g_tf)
    for a, b in zip(g_tg, g_tf):
        assert (a is None) == (b is None), (a, b)
        if a is not None and b is not None:
            assert a.dtype == b.dtype
            np.testing.assert_allclose(a, b, **tol)


SECOND = [c for c in CASES if c.order >= 2]


@pytest.mark.parametrize("case", SECOND, ids=[c.name for c in SECOND])
def test_second_derivatives_match_tensorflow(rtf: Any, case: MoreCase) -> None:
    arrays = case.astype(np.float64)
    for a, b in zip(run_case_second(tg, case.fn, arrays), run_case_second(rtf, case.fn, arrays)):
        assert (a is None) == (b is None)
        if a is not None and b is not None:
            np.testing.assert_allclose(a, b, rtol=1e-7, atol=1e-9)


_X = [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]
_U8 = np.array([[[0, 128, 255], [7, 60, 200]]], np.uint8)
_RGB = np.random.default_rng(5).uniform(0, 1, (2, 3, 3)).astype(np.float32)
_BIG = np.random.default_rng(6).uniform(0, 1, (181, 179, 1)).astype(np.float32)

def _st(tf: Any) -> Any:
    return tf.sparse.SparseTensor(indices=[[0, 0], [1, 2]], values=[1.0, 2.0], dense_shape=[3, 4])


ERRORS: dict[str, Callable[[Any], Any]] = {
    "assert_tensor_condition": lambda tf: tf.Assert(tf.constant(False), ["x", tf.constant(3.5)]),
    "assert_summarize": lambda tf: tf.Assert(False, [tf.range(10)], summarize=2),
    "strided_slice_length_error": lambda tf: tf.strided_slice(tf.range(4), [0, 1], [2], [1]),
    "roll_length_error": lambda tf: tf.roll(tf.range(4), [1, 2], [0]),
    "histogram_nbins_error": lambda tf: tf.histogram_fixed_width(tf.constant([1.0]), [0.0, 1.0],
                                                                 nbins=0),
    "histogram_range_error": lambda tf: tf.histogram_fixed_width(tf.constant([1.0]), [1.0, 0.0]),
    "invert_permutation_range_error": lambda tf: tf.math.invert_permutation([0, 5, 1]),
    "sequence_mask_maxlen_error": lambda tf: tf.sequence_mask([1, 2], [3, 4]),
    "dynamic_stitch_length_error": lambda tf: tf.dynamic_stitch([[0], [1]], [tf.constant([1.0])]),
    "unravel_index_dtype_error": lambda tf: tf.unravel_index(tf.constant([1], tf.int64), [3, 3]),
    "pad_offset_error": lambda tf: tf.image.pad_to_bounding_box(np.ones((3, 3, 1)), -1, 0, 5, 5),
    "crop_target_error": lambda tf: tf.image.crop_to_bounding_box(np.ones((3, 3, 1)), 0, 0, 0, 2),
    "adjust_gamma_error": lambda tf: tf.image.adjust_gamma(np.ones((2, 2, 1), np.float32), -1.0),
    "random_brightness_error": lambda tf: tf.image.random_brightness(np.ones((2, 2, 1)), -1.0),
    "random_contrast_error": lambda tf: tf.image.random_contrast(np.ones((2, 2, 1)), 1.0, 0.5),
    "grayscale_to_rgb_error": lambda tf: tf.image.grayscale_to_rgb(tf.ones((2, 2, 3))),
    "adjust_hue_error": lambda tf: tf.image.adjust_hue(np.ones((2, 2, 3), np.float32), 1.5),
    "space_to_depth_error": lambda tf: tf.nn.space_to_depth(tf.ones([1, 3, 4, 1]), 2),
    "depth_to_space_error": lambda tf: tf.nn.depth_to_space(tf.ones([1, 2, 2, 3]), 2),
    "nextafter_int_error": lambda tf: tf.math.nextafter(tf.constant([1]), tf.constant([2])),
    "complex_int_error": lambda tf: tf.complex(tf.constant([1]), tf.constant([2])),
    "polyval_type_error": lambda tf: tf.math.polyval(tf.constant([1.0, 2.0]), tf.constant(1.0)),
    "searchsorted_side_error": lambda tf: tf.searchsorted(tf.constant([1, 2]), tf.constant([1]),
                                                          side="middle"),
    "bitcast_bool_error": lambda tf: tf.bitcast(tf.constant([1.0]), tf.float64),
    "irfft_int_error": lambda tf: tf.signal.irfft(tf.constant([1.0, 2.0])),
    "scan_structure_error": lambda tf: tf.scan(lambda a, x: (a, a), tf.constant([1.0, 2.0])),
    "scan_sequence_type_error": lambda tf: tf.scan(lambda a, x: [a[0] + x],
                                                   tf.constant([1.0, 2.0]),
                                                   initializer=(tf.constant(0.0),)),
    "foldl_structure_error": lambda tf: tf.foldl(lambda a, x: (a, a), tf.constant([1.0, 2.0])),
    "rfft_int_error": lambda tf: tf.signal.rfft(tf.constant([1, 2])),
    "assert_default_summary": lambda tf: tf.Assert(False, [tf.constant([[1, 2], [3, 4]])]),
}


RESULTS: dict[str, Callable[[Any], Any]] = {
    # slicing
    "slice_size_error": lambda tf: tf.slice(tf.constant(_X), [0, 1], [2, 4]),
    "slice_begin_error": lambda tf: tf.slice(tf.constant(_X), [0, 4], [2, 1]),
    "slice_rank_error": lambda tf: tf.slice(tf.constant(_X), [0], [2]),
    "strided_slice_ints": lambda tf: tf.strided_slice(tf.range(10), [8], [1], [-3]),
    "strided_slice_clamp": lambda tf: tf.strided_slice(tf.range(10), [-20], [20], [2]),
    "strided_slice_shrink_error": lambda tf: tf.strided_slice(tf.constant(_X), [0, 5], [1, 9],
                                                              shrink_axis_mask=2),
    "strided_slice_stride_error": lambda tf: tf.strided_slice(tf.constant(_X), [0], [1], [0]),
    "roll_ints": lambda tf: tf.roll(tf.reshape(tf.range(12), [3, 4]), [1, 5, -2], [0, 1, 1]),
    "roll_axis_error": lambda tf: tf.roll(tf.constant(_X), 1, 5),
    # unique / searchsorted / sequence_mask
    "unique": lambda tf: tf.unique(tf.constant([1, 1, 2, 4, 4, 4, 7, 8, 8])),
    "unique_int64_idx": lambda tf: tf.unique(tf.constant([3.0, 1.0, 3.0]), out_idx=tf.int64),
    "unique_with_counts": lambda tf: tf.unique_with_counts(tf.constant([5, 1, 5, 5, 2])),
    "unique_rank_error": lambda tf: tf.unique(tf.constant([[1, 1]])),
    "searchsorted": lambda tf: tf.searchsorted(tf.constant([[0, 3, 9, 9, 10], [1, 2, 3, 4, 5]]),
                                               tf.constant([[2, 4, 9], [0, 2, 6]])),
    "searchsorted_right_int64": lambda tf: tf.searchsorted(
        tf.constant([0.0, 3.0, 9.0, 9.0]), tf.constant([9.0, -1.0, 20.0]), side="right",
        out_type=tf.int64),
    "searchsorted_error": lambda tf: tf.searchsorted(tf.constant([[0, 3, 9]]),
                                                     tf.constant([[2, 4, 9], [0, 2, 6]])),
    "sequence_mask": lambda tf: tf.sequence_mask([1, 3, 2], 5),
    "sequence_mask_2d": lambda tf: tf.sequence_mask([[1, 3], [2, 0]]),
    "sequence_mask_float": lambda tf: tf.sequence_mask(tf.constant([1, 3]), 4, dtype=tf.float32),
    # loops
    "scan": lambda tf: tf.scan(lambda a, x: a + x, tf.constant([1.0, 2.0, 3.0])),
    "scan_init": lambda tf: tf.scan(lambda a, x: a + x, tf.constant([1, 2, 3]),
                                    initializer=tf.constant(10)),
    "scan_reverse": lambda tf: tf.scan(lambda a, x: a * 2 + x, tf.constant([1.0, 2.0, 3.0]),
                                       reverse=True),
    "scan_struct": lambda tf: tf.scan(lambda a, x: {"s": a["s"] + x[0], "p": a["p"] * x[1]},
                                      (tf.constant([1.0, 2.0]), tf.constant([3.0, 4.0])),
                                      initializer={"s": tf.constant(0.0), "p": tf.constant(1.0)}),
    "foldl": lambda tf: tf.foldl(lambda a, x: a - x, tf.constant([1.0, 2.0, 3.0])),
    "foldr": lambda tf: tf.foldr(lambda a, x: a * 2 + x, tf.constant([1.0, 2.0, 3.0])),
    "foldl_init": lambda tf: tf.foldl(lambda a, x: a + x, tf.constant([[1, 2], [3, 4]]),
                                      initializer=tf.constant([10, 20])),
    "foldl_scalar_error": lambda tf: tf.foldl(lambda a, x: a + x, tf.constant(1.0)),
    "scan_scalar_error": lambda tf: tf.scan(lambda a, x: a + x, tf.constant(1.0)),
    # histogram, bitcast, partition/stitch, unravel
    "histogram_fixed_width": lambda tf: tf.histogram_fixed_width(
        tf.constant([-1.0, 0.0, 1.5, 2.0, 5.0, 15.0]), [0.0, 5.0], nbins=5),
    "histogram_ints": lambda tf: tf.histogram_fixed_width(tf.constant([0, 1, 2, 9, 3]), [0, 10],
                                                          nbins=4),
    "bitcast_down": lambda tf: tf.bitcast(tf.constant([1.0, 2.0]), tf.uint8),
    "bitcast_up": lambda tf: tf.bitcast(tf.constant([[1, 2, 3, 4]], tf.uint8), tf.int32),
    "bitcast_same": lambda tf: tf.bitcast(tf.constant([-1, 2]), tf.uint32),
    "bitcast_error": lambda tf: tf.bitcast(tf.constant([1, 2, 3], tf.uint8), tf.int32),
    "dynamic_partition": lambda tf: tf.dynamic_partition(tf.constant([[1, 2], [3, 4], [5, 6]]),
                                                         [1, 0, 1], 3),
    "dynamic_partition_error": lambda tf: tf.dynamic_partition(
        tf.constant([10.0, 20.0, 30.0, 40.0]), [0, 1, 0, 3], 2),
    "dynamic_stitch": lambda tf: tf.dynamic_stitch([[0, 3], [1, 2]],
                                                   [tf.constant([1.0, 2.0]), tf.constant([3.0, 4.0])]),
    "dynamic_stitch_gaps": lambda tf: tf.dynamic_stitch(
        [[0, 4], [1, 1]], [tf.constant([1.0, 2.0]), tf.constant([3.0, 4.0])]),
    "unravel_index": lambda tf: tf.unravel_index([3, 5, 7], [3, 3]),
    "unravel_index_scalar": lambda tf: tf.unravel_index(7, [3, 3]),
    "unravel_index_error": lambda tf: tf.unravel_index([3, 10], [3, 3]),
    # Assert / tuple / bitwise
    "assert_false": lambda tf: tf.Assert(False, [tf.constant([1, 2]), "msg"]),
    "assert_true": lambda tf: tf.Assert(tf.constant(True), [tf.constant([1, 2])]),
    "tuple": lambda tf: tf.tuple([tf.constant(1.0), None, tf.constant([2, 3])]),
    "left_shift": lambda tf: tf.bitwise.left_shift(tf.constant([1, 2, 3], tf.int8),
                                                   tf.constant([7, 9, 1], tf.int8)),
    "right_shift": lambda tf: tf.bitwise.right_shift(tf.constant([-8, 2]), tf.constant([1, 40])),
    "invert": lambda tf: tf.bitwise.invert(tf.constant([0, 5], tf.uint8)),
    "and_or_xor": lambda tf: [tf.bitwise.bitwise_and(tf.constant([12, 10]), tf.constant([10, 3])),
                              tf.bitwise.bitwise_or(tf.constant([12, 10]), tf.constant([10, 3])),
                              tf.bitwise.bitwise_xor(tf.constant([12, 10]), tf.constant([10, 3]))],
    "bitwise_float_error": lambda tf: tf.bitwise.bitwise_and(tf.constant([1.0]), tf.constant([1.0])),
    # tf.math
    "cumsum_exclusive_reverse": lambda tf: tf.math.cumsum(tf.constant([1.0, 2.0, 3.0]),
                                                          exclusive=True, reverse=True),
    "cumprod_exclusive_reverse": lambda tf: tf.math.cumprod(tf.constant([1.0, 2.0, 3.0]),
                                                            exclusive=True, reverse=True),
    "cumulative_logsumexp": lambda tf: tf.math.cumulative_logsumexp(tf.constant([1.0, 2.0, 3.0]),
                                                                    exclusive=True),
    "reduce_std_variance": lambda tf: [tf.math.reduce_std(tf.constant(_X), axis=1),
                                       tf.math.reduce_variance(tf.constant(_X))],
    "angle_real": lambda tf: tf.math.angle(tf.constant([-1.0, 2.0])),
    "angle_complex": lambda tf: tf.math.angle(tf.constant([-1 + 1j, 2j])),
    "invert_permutation": lambda tf: tf.math.invert_permutation([3, 4, 0, 2, 1]),
    "invert_permutation_error": lambda tf: tf.math.invert_permutation([3, 3, 0, 2, 1]),
    "monotone": lambda tf: [tf.math.is_non_decreasing([1, 1, 2]),
                            tf.math.is_strictly_increasing([1, 1, 2]),
                            tf.math.is_strictly_increasing(tf.constant([[1.0, 2.0], [3.0, 4.0]]))],
    "lbeta": lambda tf: tf.math.lbeta(tf.constant([[1.0, 2.0], [3.0, 4.0]])),
    "scalar_mul_error": lambda tf: tf.math.scalar_mul(tf.constant([2.0, 3.0]), tf.constant([1.0])),
    "xlog1py": lambda tf: tf.math.xlog1py(tf.constant([0.0, 1.0]), tf.constant([-2.0, 1.0])),
    "nextafter": lambda tf: tf.math.nextafter(tf.constant([1.0, 2.0]), tf.constant([2.0, 1.0])),
    "polygamma": lambda tf: tf.math.polygamma(tf.constant([0.0, 1.0, 2.0]),
                                              tf.constant([1.5, 1.5, 1.5])),
    "accumulate_n": lambda tf: tf.math.accumulate_n([tf.constant([1.0, 2.0]),
                                                     tf.constant([1.0, 2.0])]),
    "ndtri": lambda tf: tf.math.ndtri(tf.constant([0.1, 0.5, 0.975], tf.float64)),
    "bessel_values": lambda tf: [f(tf.constant([-40.0, -3.0, -0.5, 0.0, 0.7, 5.0, 29.9, 31.0, 80.0],
                                                tf.float64))
                                 for f in (tf.math.bessel_i0e, tf.math.bessel_i1e,
                                           tf.math.bessel_i0, tf.math.bessel_i1)],
    "bessel_error": lambda tf: tf.math.bessel_i0(tf.constant([1, 2])),
    "igamma_values": lambda tf: [f(tf.constant([0.5, 2.0, 3.0, 10.0, 0.1, 50.0, 5.0, 1.0, 2.0],
                                               tf.float64),
                                   tf.constant([1.0, 3.0, 0.5, 12.0, 5.0, 40.0, 100.0, 1e-3, 0.0],
                                               tf.float64))
                                 for f in (tf.math.igamma, tf.math.igammac)],
    "igamma_error": lambda tf: tf.math.igamma(tf.constant([1, 2]), tf.constant([1, 2])),
    "zeta_error": lambda tf: tf.math.zeta(tf.constant([1, 2]), tf.constant([1, 2])),
    "ndtri_error": lambda tf: tf.math.ndtri(tf.constant([1, 2])),
    "zeta_values": lambda tf: tf.math.zeta(tf.constant([2.0, 3.0, 1.5, 4.5, 10.0, 1.01, 0.5, 1.0]),
                                           tf.constant([1.0, 2.0, 0.3, 7.0, 0.5, 1.0, 1.0, 2.0])),
    "complex": lambda tf: tf.complex(tf.constant([1.0]), tf.constant([2.0])),
    # tf.image
    "resize_dtypes": lambda tf: [tf.image.resize(_U8, [3, 5], method=m) for m in
                                 ("bilinear", "nearest", "bicubic", "area")],
    "resize_nearest_f64": lambda tf: tf.image.resize(np.arange(12.0).reshape(3, 4, 1), [5, 3],
                                                     method="nearest"),
    "resize_rank_error": lambda tf: tf.image.resize(np.ones((2, 2)), [2, 2]),
    "resize_size_error": lambda tf: tf.image.resize(np.ones((2, 2, 1)), [2, 2, 2]),
    "resize_method_error": lambda tf: tf.image.resize(np.ones((2, 2, 1)), [3, 3], method="foo"),
    "crop_error": lambda tf: tf.image.crop_to_bounding_box(np.ones((1, 4, 5, 3)), 3, 1, 2, 2),
    "pad_error": lambda tf: tf.image.pad_to_bounding_box(np.ones((1, 4, 5, 3)), 1, 1, 3, 7),
    "convert_u8_f32": lambda tf: tf.image.convert_image_dtype(_U8, tf.float32),
    "convert_f32_u8": lambda tf: tf.image.convert_image_dtype(tf.constant([[[0.0, 0.5, 1.0]]]),
                                                              tf.uint8),
    "convert_f32_u8_saturate": lambda tf: tf.image.convert_image_dtype(
        tf.constant([[[-0.5, 0.5, 1.5]]]), tf.uint8, saturate=True),
    "convert_u8_i32": lambda tf: tf.image.convert_image_dtype(_U8, tf.int32),
    "convert_i32_u8": lambda tf: tf.image.convert_image_dtype(
        np.array([[[0, 1 << 20, 1 << 30]]], np.int32), tf.uint8),
    "convert_f32_f64": lambda tf: tf.image.convert_image_dtype(tf.constant([[[0.0, 0.5]]]),
                                                               tf.float64),
    "adjust_uint8": lambda tf: [tf.image.adjust_brightness(_U8, 0.1),
                                tf.image.adjust_contrast(_U8, 2.0),
                                tf.image.adjust_gamma(_U8, 2.0),
                                tf.image.rgb_to_grayscale(_U8)],
    "adjust_saturation_hue": lambda tf: [tf.image.adjust_saturation(_RGB, 1.7),
                                         tf.image.adjust_saturation(_RGB, 0.3),
                                         tf.image.adjust_hue(_RGB, 0.2),
                                         tf.image.adjust_hue(_RGB, -0.7)],
    "hsv_roundtrip": lambda tf: tf.image.hsv_to_rgb(tf.image.rgb_to_hsv(_RGB)),
    "per_image_standardization_u8": lambda tf: tf.image.per_image_standardization(_U8),
    "per_image_standardization_const": lambda tf: tf.image.per_image_standardization(
        np.ones((2, 2, 1), np.float32)),
    "random_flip_batch": lambda tf: (tf.random.set_seed(1), [tf.image.random_flip_left_right(
        np.arange(12.0).reshape(2, 3, 2, 1)) for _ in range(3)])[1],
    "random_flip_single": lambda tf: (tf.random.set_seed(1), [tf.image.random_flip_up_down(
        np.arange(6.0).reshape(3, 2, 1), seed=5) for _ in range(3)])[1],
    "random_brightness_contrast": lambda tf: (tf.random.set_seed(2), [
        tf.image.random_brightness(np.ones((1, 1, 1), np.float32), 0.5),
        tf.image.random_contrast(np.arange(4.0, dtype=np.float32).reshape(2, 2, 1), 0.5, 1.5)])[1],
    "random_saturation_hue_crop": lambda tf: (tf.random.set_seed(4), [
        tf.image.random_saturation(_RGB, 0.5, 1.5), tf.image.random_hue(_RGB, 0.3, seed=2),
        tf.image.random_crop(np.arange(60.0).reshape(3, 4, 5), [2, 2, 3]),
        tf.image.random_crop(np.arange(60.0).reshape(3, 4, 5), [1, 3, 5], seed=7)])[1],
    "non_max_suppression": lambda tf: [tf.image.non_max_suppression(
        tf.constant([[0, 0, 1, 1], [0, 0.1, 1, 1.1], [0, -0.1, 1, 0.9], [0, 10, 1, 11],
                     [0, 10.1, 1, 11.1], [0, 100, 1, 101]], tf.float32),
        tf.constant([0.9, 0.75, 0.6, 0.95, 0.5, 0.3]), k, iou, st)
        for k, iou, st in ((3, 0.5, float("-inf")), (6, 0.5, 0.4), (6, 0.0, float("-inf")))],
    "central_crop_error": lambda tf: tf.image.central_crop(np.ones((4, 4, 1)), 1.5),
    # tf.signal
    "windows": lambda tf: [tf.signal.hann_window(5), tf.signal.hann_window(6, periodic=False),
                           tf.signal.hamming_window(7, dtype=tf.float64),
                           tf.signal.hann_window(1)],
    "frame_ints": lambda tf: [tf.signal.frame(tf.range(7), 3, 2),
                              tf.signal.frame(tf.range(7), 3, 2, pad_end=True)],
    "frame_axis0": lambda tf: [tf.signal.frame(tf.reshape(tf.range(14), [7, 2]), 3, 2, axis=0),
                               tf.signal.frame(tf.reshape(tf.range(14), [2, 7]), 4, 2,
                                               pad_end=True, pad_value=-1)],
    "strided_slice_negative_clamp": lambda tf: [
        tf.strided_slice(tf.range(10), [20], [-20], [-3]),
        tf.strided_slice(tf.reshape(tf.range(12), [3, 4]), [-1, 5], [-4, -6], [-1, -2])],
    "pool_1d_3d": lambda tf: [tf.nn.pool(tf.reshape(tf.range(12.0), [1, 6, 2]), [2], "MAX",
                                         strides=[2]),
                              tf.nn.pool(tf.reshape(tf.range(64.0), [1, 4, 4, 4, 1]), [2, 2, 2],
                                         "AVG", strides=[2, 2, 2], padding="SAME")],
    "fft_float_error": lambda tf: tf.signal.fft(tf.constant([1.0, 2.0])),
    "rfft_crop": lambda tf: [tf.signal.rfft(tf.constant([1.0, 2.0, 3.0, 4.0]), [3]),
                             tf.signal.irfft(tf.constant([1 + 1j, 2 - 1j, 3j, 1 + 0j]), [3]),
                             tf.signal.rfft2d(tf.ones([3, 4]), [2, 6])],
    "lrn_float64_error": lambda tf: tf.nn.local_response_normalization(
        tf.ones([1, 1, 1, 3], tf.float64)),
    "rfft_dtype": lambda tf: tf.signal.rfft(tf.constant([1.0, 2.0, 3.0], tf.float64)),
    # tf.sparse / tf.sets (a SparseTensor compares as its three parts)
    "sparse_repr": lambda tf: repr(_st(tf)),
    "sparse_parts": lambda tf: [_st(tf).indices, _st(tf).values, _st(tf).dense_shape,
                                _st(tf).shape.as_list(), _st(tf).dtype.name],
    "sparse_to_dense_default": lambda tf: tf.sparse.to_dense(_st(tf), default_value=-1.0),
    "sparse_to_dense_order_error": lambda tf: tf.sparse.to_dense(
        tf.sparse.SparseTensor([[1, 2], [0, 0]], [1.0, 2.0], [3, 4])),
    "sparse_to_dense_bounds_error": lambda tf: tf.sparse.to_dense(
        tf.sparse.SparseTensor([[1, 2], [5, 0]], [1.0, 2.0], [3, 4])),
    "sparse_from_dense": lambda tf: repr(tf.sparse.from_dense(tf.constant([[0.0, 1.0], [2.0, 0.0]]))),
    "sparse_dense_matmul": lambda tf: [tf.sparse.sparse_dense_matmul(_st(tf), tf.ones([4, 2])),
                                       tf.sparse.sparse_dense_matmul(tf.ones([2, 3]), _st(tf)),
                                       tf.sparse.sparse_dense_matmul(
                                           tf.reshape(tf.range(8.0), [4, 2]), _st(tf),
                                           adjoint_a=True, adjoint_b=True)],
    "sparse_matmul_dtype_error": lambda tf: tf.sparse.sparse_dense_matmul(
        _st(tf), tf.ones([4, 2], tf.float64)),
    "sparse_reduce_sum": lambda tf: [tf.sparse.reduce_sum(_st(tf)),
                                     tf.sparse.reduce_sum(_st(tf), axis=0, keepdims=True)],
    "sparse_add": lambda tf: [repr(tf.sparse.add(_st(tf), tf.sparse.SparseTensor(
        [[0, 0], [2, 3]], [5.0, 6.0], [3, 4]))), tf.sparse.add(_st(tf), tf.ones([3, 4]))],
    "sparse_reorder_retain_slice": lambda tf: [
        repr(tf.sparse.reorder(tf.sparse.SparseTensor([[1, 2], [0, 0]], [1.0, 2.0], [3, 4]))),
        repr(tf.sparse.retain(_st(tf), [False, True])),
        repr(tf.sparse.slice(_st(tf), [1, 1], [2, 3]))],
    "sparse_shape_error": lambda tf: tf.sparse.SparseTensor([[0, 0]], [1.0, 2.0], [3, 4]),
    "sets": lambda tf: [repr(tf.sets.intersection(tf.constant([[1, 2, 3], [4, 5, 6]]),
                                                  tf.constant([[1, 3, 7], [4, 4, 4]]))),
                        repr(tf.sets.union(tf.constant([[1, 2]]), tf.constant([[3, 1]]))),
                        repr(tf.sets.difference(tf.constant([[1, 2, 5]]), tf.constant([[3, 1]]))),
                        tf.sets.size(tf.sparse.from_dense(tf.constant([[1, 2, 2], [4, 5, 0]])))],
    "sets_size_error": lambda tf: tf.sets.size(tf.constant([[1, 2, 2], [4, 5, 6]])),
    # tf.nn
    "zero_fraction": lambda tf: tf.nn.zero_fraction(tf.constant([0.0, 1.0, 0.0, 3.0])),
    "scale_regularization_loss": lambda tf: tf.nn.scale_regularization_loss(
        tf.constant([1.0, 2.5])),
    "space_to_depth_ints": lambda tf: tf.nn.space_to_depth(tf.reshape(tf.range(16), [1, 4, 4, 1]),
                                                           2),
    "depth_to_space_ints": lambda tf: tf.nn.depth_to_space(tf.reshape(tf.range(16), [1, 1, 2, 8]),
                                                           2),
}


@pytest.mark.parametrize("key", list(RESULTS))
def test_results_and_errors_match_tensorflow(rtf: Any, key: str) -> None:
    _same(rtf, RESULTS[key])


@pytest.mark.parametrize("key", list(ERRORS))
def test_more_errors_match_tensorflow(rtf: Any, key: str) -> None:
    # the text up to the class name of a tensor type (TensorFlow's EagerTensor path)
    # foldl: TensorFlow's text is its while_loop's (about loop variables); the type agrees
    _same(rtf, ERRORS[key], "prefix" if key == "polyval_type_error" else
          "type" if key == "foldl_structure_error" else "full")


def test_ssim_multiscale_default_scales_match_tensorflow(rtf: Any) -> None:
    # five scales of float32 filtering: agreement to float32 rounding (rtol 1e-5)
    b = _BIG[:, ::-1] * 0.5 + _BIG * 0.5
    a = tg.image.ssim_multiscale(_BIG, b, 1.0).numpy()
    want = rtf.image.ssim_multiscale(_BIG, b, 1.0).numpy()
    assert a.dtype == want.dtype and a.shape == want.shape
    np.testing.assert_allclose(a, want, rtol=1e-5)
