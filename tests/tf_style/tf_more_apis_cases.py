"""Differentiable cases of the TensorFlow APIs of tapegrad.tf._ops_extra, image, signal
and _nn_extra.

Each case is ``fn(tf, *tensors)`` on float inputs; tests/tf_style/test_tf_more_apis.py
checks the gradients against finite differences, tests/conformance/
test_tf_more_apis_conf.py the values, dtypes and gradients against real TensorFlow.
"""

from __future__ import annotations

import numpy as np

from tests.tf_style.tf_more_cases import MoreCase

_R = np.random.default_rng(11)


def _u(lo: float, hi: float, *shape: int) -> np.ndarray:
    return _R.uniform(lo, hi, shape)


X34 = _u(-1, 1, 3, 4)
IMG = _u(0.05, 0.95, 2, 5, 6, 3)   # a batch of two 5x6 RGB images in [0, 1]
IMG1 = _u(0.05, 0.95, 4, 5, 1)     # one gray 4x5 image
SIG = _u(-1, 1, 2, 8)

CASES: list[MoreCase] = [
    MoreCase("slice", lambda tf, x: tf.slice(x, [1, 0], [2, -1]), (X34,)),
    MoreCase("strided_slice_masks", lambda tf, x: tf.strided_slice(
        x, [0, 3], [2, 0], [1, -2], begin_mask=1, end_mask=2, new_axis_mask=0), (X34,)),
    MoreCase("strided_slice_shrink_newaxis", lambda tf, x: tf.strided_slice(
        x, [1, 0, 0], [2, 0, 4], [1, 1, 2], shrink_axis_mask=1, new_axis_mask=2), (X34,)),
    MoreCase("strided_slice_ellipsis", lambda tf, x: tf.strided_slice(
        x, [0, 1], [0, 3], [1, 1], ellipsis_mask=1), (X34,)),
    MoreCase("roll", lambda tf, x: tf.roll(x, [1, -3], [0, 1]), (X34,)),
    MoreCase("scan", lambda tf, x: tf.scan(lambda a, e: a * e + 1.0, x), (X34,), 2),
    MoreCase("scan_init_reverse", lambda tf, x, y: tf.scan(
        lambda a, e: a * 0.5 + e * a[0], x, initializer=y, reverse=True), (X34, _u(0.5, 1, 4))),
    MoreCase("scan_nested", lambda tf, x: tf.scan(
        lambda a, e: (a[0] + e[0], a[1] * e[1]), (x, x * 0.5), initializer=(x[0] * 0.0, x[0] + 1.0)),
             (X34,)),
    MoreCase("foldl", lambda tf, x: tf.foldl(lambda a, e: a * e + e, x), (X34,), 2),
    MoreCase("foldr_init", lambda tf, x: tf.foldr(lambda a, e: a * 2.0 - e * e, x,
                                                  initializer=x[0]), (X34,)),
    MoreCase("dynamic_partition", lambda tf, x: tf.dynamic_partition(
        x, [0, 2, 0], 3), (X34,)),
    MoreCase("dynamic_stitch", lambda tf, x, y: tf.dynamic_stitch(
        [[0, 4], [1, 2, 5]], [x[:2], y]), (X34, _u(-1, 1, 3, 4))),
    # overwritten rows: TensorFlow's gradient still sends them their target's cotangent
    # (not the derivative, so no finite-difference check)
    MoreCase("dynamic_stitch_overlap", lambda tf, x, y: tf.dynamic_stitch(
        [[0, 4], [1, 1, 0]], [x[:2], y]), (X34, _u(-1, 1, 3, 4))),
    MoreCase("cumulative_logsumexp", lambda tf, x: tf.math.cumulative_logsumexp(
        x * 3.0, axis=1), (X34,), 2),
    MoreCase("cumulative_logsumexp_excl_rev", lambda tf, x: tf.math.cumulative_logsumexp(
        x, axis=0, exclusive=True, reverse=True)[:2], (X34,)),
    MoreCase("lbeta", lambda tf, x: tf.math.lbeta(x + 2.0), (X34,), 2),
    MoreCase("polyval", lambda tf, x, c: tf.math.polyval([c[0], c[1], c[2]], x), (X34, _u(-1, 1, 3)),
             2),
    MoreCase("xlog1py", lambda tf, x, y: tf.math.xlog1py(x, y), (X34, _u(0.1, 2, 3, 4)), 2),
    MoreCase("polygamma", lambda tf, x: tf.math.polygamma(
        tf.constant([[0.0], [1.0], [3.0]], x.dtype), x + 2.0), (X34,)),
    MoreCase("ndtri", lambda tf, x: tf.math.ndtri(x * 0.45 + 0.5), (X34,), 2),
    MoreCase("bessel", lambda tf, x: (tf.math.bessel_i0(x * 3.0), tf.math.bessel_i0e(x * 3.0),
                                      tf.math.bessel_i1(x * 3.0), tf.math.bessel_i1e(x * 3.0),
                                      tf.math.special.bessel_i1e(x * 40.0)), (X34,), 2),
    MoreCase("zeta_q", lambda tf, q: tf.math.zeta(tf.constant([2.0, 3.5, 1.2, 6.0], q.dtype),
                                                  q + 1.5), (X34,), 2),
    MoreCase("igamma", lambda tf, a, x: (tf.math.igamma(a + 1.5, x + 1.2),
                                         tf.math.igammac(a * 3.0 + 3.5, x * 4.0 + 6.0)),
             (X34, _u(-1, 1, 3, 4))),
    MoreCase("scalar_mul", lambda tf, x: tf.math.scalar_mul(3.0, x), (X34,)),
    MoreCase("complex", lambda tf, x, y: tf.math.real(tf.complex(x, y) * tf.complex(y, x)),
             (X34, _u(-1, 1, 3, 4))),
    # tf.image
    MoreCase("resize_bilinear_up", lambda tf, x: tf.image.resize(x, [7, 9]), (IMG,)),
    MoreCase("resize_bilinear_down", lambda tf, x: tf.image.resize(x, [3, 4]), (IMG,)),
    MoreCase("resize_nearest", lambda tf, x: tf.image.resize(x, [8, 4], method="nearest"),
             (IMG,)),
    MoreCase("resize_bicubic_up", lambda tf, x: tf.image.resize(x, [9, 11], method="bicubic"),
             (IMG,)),
    MoreCase("resize_bicubic_down", lambda tf, x: tf.image.resize(x, [3, 4], method="bicubic"),
             (IMG,)),
    MoreCase("resize_antialias_down", lambda tf, x: (
        tf.image.resize(x, [3, 2], antialias=True),
        tf.image.resize(x, [2, 4], method="bicubic", antialias=True)), (IMG,)),
    MoreCase("resize_scale_translate", lambda tf, x: tuple(
        tf.image.resize(x, s, method=m, antialias=a)
        for m in ("lanczos3", "lanczos5", "gaussian", "mitchellcubic")
        for s in ([3, 4], [8, 9]) for a in (False, True)), (IMG,)),
    MoreCase("crop_and_resize", lambda tf, x, b: (
        tf.image.crop_and_resize(x, tf.cast(b, tf.float32), [1, 0, 1], [3, 4]),
        tf.image.crop_and_resize(x, tf.cast(b * 1.25 - 0.07, tf.float32), [0, 0, 1], [1, 2],
                                 extrapolation_value=0.5)),
             (IMG, np.array([[0.1, 0.23, 0.83, 0.71], [0.05, 0.3, 0.6, 0.9], [0.33, 0.11, 0.92, 0.57]]))),
    MoreCase("crop_and_resize_nearest", lambda tf, x, b: tf.image.crop_and_resize(
        x, tf.cast(b, tf.float32), [1, 0], [3, 2], method="nearest"),
             (IMG, np.array([[0.1, 0.2, 0.83, 0.71], [0.05, 0.3, 0.6, 0.9]]))),
    MoreCase("resize_area", lambda tf, x: tf.image.resize(x, [3, 4], method="area"), (IMG,)),
    MoreCase("resize_3d_aspect", lambda tf, x: tf.image.resize(
        x, [10, 8], preserve_aspect_ratio=True), (IMG1,)),
    MoreCase("resize_with_pad", lambda tf, x: tf.image.resize_with_pad(x, 7, 5), (IMG,)),
    MoreCase("flips_rot_transpose", lambda tf, x: (
        tf.image.flip_left_right(x), tf.image.flip_up_down(x), tf.image.rot90(x, 1),
        tf.image.rot90(x, 2), tf.image.rot90(x, 3), tf.image.transpose(x)), (IMG,)),
    MoreCase("crop_pad", lambda tf, x: (
        tf.image.crop_to_bounding_box(x, 1, 2, 3, 3), tf.image.pad_to_bounding_box(x, 1, 0, 7, 8),
        tf.image.resize_with_crop_or_pad(x, 3, 9), tf.image.central_crop(x, 0.6)), (IMG,)),
    MoreCase("adjust", lambda tf, x: (
        tf.image.adjust_brightness(x, 0.1), tf.image.adjust_contrast(x, 1.7),
        tf.image.adjust_gamma(x, 1.5, 0.8)), (IMG,)),
    MoreCase("grayscale", lambda tf, x: tf.image.rgb_to_grayscale(x), (IMG,)),
    MoreCase("gray_to_rgb", lambda tf, x: tf.image.grayscale_to_rgb(x) * 2.0, (IMG1,)),
    MoreCase("rgb_to_hsv", lambda tf, x: tf.image.rgb_to_hsv(x), (IMG,)),
    MoreCase("hsv_to_rgb", lambda tf, x: tf.image.hsv_to_rgb(x), (IMG,)),
    MoreCase("per_image_standardization", lambda tf, x: tf.image.per_image_standardization(x),
             (IMG,)),
    MoreCase("extract_patches_valid", lambda tf, x: tf.image.extract_patches(
        x, [1, 2, 3, 1], [1, 2, 1, 1], [1, 1, 1, 1], "VALID"), (IMG,)),
    MoreCase("extract_patches_same_rates", lambda tf, x: tf.image.extract_patches(
        x, [1, 2, 2, 1], [1, 2, 3, 1], [1, 2, 1, 1], "SAME"), (IMG,)),
    MoreCase("psnr", lambda tf, x, y: tf.image.psnr(x, y, 1.0), (IMG, IMG[::-1])),
    MoreCase("ssim", lambda tf, x, y: (tf.image.ssim(x, y, 1.0, filter_size=3),
                                       tf.image.ssim(x, y, 1.0, filter_size=5, filter_sigma=0.8,
                                                     return_index_map=True)), (IMG, IMG[::-1])),
    MoreCase("ssim_default", lambda tf, x, y: tf.image.ssim(x, x * 0.7 + y * 0.3, 2.0),
             (_u(0, 1, 1, 12, 13, 2), _u(0, 1, 1, 12, 13, 2))),
    MoreCase("ssim_multiscale", lambda tf, x, y: tf.image.ssim_multiscale(
        x, x * 0.6 + y * 0.4, 1.0, power_factors=(0.3, 0.5, 0.2), filter_size=3),
             (_u(0.1, 1, 2, 13, 11, 2), _u(0.1, 1, 2, 13, 11, 2))),
    MoreCase("total_variation", lambda tf, x: (tf.image.total_variation(x),
                                               tf.image.total_variation(x[0])), (IMG,)),
    MoreCase("image_gradients", lambda tf, x: tf.image.image_gradients(x), (IMG,)),
    MoreCase("sobel_edges", lambda tf, x: tf.image.sobel_edges(x), (IMG,)),
    # tf.signal
    MoreCase("rfft", lambda tf, x: (tf.math.real(tf.signal.rfft(x)),
                                    tf.math.imag(tf.signal.rfft(x))), (SIG,)),
    # (TensorFlow's own RFFT/IRFFT gradients fail when fft_length crops the input)
    MoreCase("rfft_length", lambda tf, x: (tf.math.real(tf.signal.rfft(x, [9])),
                                           tf.math.imag(tf.signal.rfft(x, [11]))), (SIG,)),
    MoreCase("irfft", lambda tf, x, y: tf.signal.irfft(tf.complex(x, y)),
             (_u(-1, 1, 2, 5), _u(-1, 1, 2, 5))),
    MoreCase("irfft_odd", lambda tf, x, y: tf.signal.irfft(tf.complex(x, y), [7]),
             (_u(-1, 1, 2, 4), _u(-1, 1, 2, 4))),
    MoreCase("fft_ifft", lambda tf, x, y: (
        tf.math.real(tf.signal.fft(tf.complex(x, y))), tf.math.imag(tf.signal.ifft(
            tf.complex(y, x)))), (SIG, SIG[::-1])),
    MoreCase("fft2d_ifft2d", lambda tf, x, y: (
        tf.math.imag(tf.signal.fft2d(tf.complex(x, y))),
        tf.math.real(tf.signal.ifft2d(tf.complex(x * y, y))) * 3.0), (X34, X34.T.reshape(3, 4))),
    MoreCase("rfft2d_irfft2d", lambda tf, x: (
        tf.math.real(tf.signal.rfft2d(x)), tf.signal.irfft2d(tf.signal.rfft2d(x * x)),
        tf.signal.irfft2d(tf.signal.rfft2d(x), [3, 5])), (X34,)),
    MoreCase("fftshift", lambda tf, x: (tf.signal.fftshift(x), tf.signal.ifftshift(x, axes=1)),
             (_u(-1, 1, 3, 5),)),
    MoreCase("frame", lambda tf, x: (tf.signal.frame(x, 3, 2),
                                     tf.signal.frame(x, 3, 3, pad_end=True, pad_value=0.5)),
             (SIG,)),
    MoreCase("stft", lambda tf, x: (tf.math.real(tf.signal.stft(x, 5, 2)),
                                    tf.math.imag(tf.signal.stft(x, 4, 3, fft_length=6,
                                                                pad_end=True))), (SIG,)),
    MoreCase("inverse_stft", lambda tf, x, y: (
        tf.signal.inverse_stft(tf.complex(x, y), 6, 2),
        tf.signal.inverse_stft(tf.complex(x, y), 10, 3, fft_length=8,
                               window_fn=tf.signal.inverse_stft_window_fn(3))),
             (_u(-1, 1, 3, 5), _u(-1, 1, 3, 5))),
    MoreCase("overlap_and_add", lambda tf, x: tf.signal.overlap_and_add(x, 3), (_u(-1, 1, 2, 4, 5),)),
    # tf.nn
    MoreCase("lrn", lambda tf, x: tf.nn.local_response_normalization(  # float32 only
        tf.cast(x, tf.float32), depth_radius=1, bias=0.5, alpha=0.8, beta=0.75),
             (_u(-1, 1, 1, 2, 3, 5),)),
    MoreCase("log_poisson_loss", lambda tf, t, x: (
        tf.nn.log_poisson_loss(t, x), tf.nn.log_poisson_loss(t, x, compute_full_loss=True)),
             (np.array([[0.0, 0.5, 1.0, 2.0], [3.0, 1.5, 0.2, 4.0], [1.0, 2.0, 5.0, 0.0]]), X34)),
    MoreCase("normalize_moments", lambda tf, m, v, s: tf.nn.normalize_moments(
        tf.constant(4.0, m.dtype), m, v, s), (_u(-1, 1, 3), _u(2, 3, 3), _u(-1, 1, 3))),
    MoreCase("weighted_moments", lambda tf, x, w: tf.nn.weighted_moments(x, [1], w),
             (X34, _u(0.1, 2, 3, 4))),
    MoreCase("weighted_moments_keep", lambda tf, x, w: tf.nn.weighted_moments(
        x, [0, 1], w, keepdims=True), (X34, _u(0.1, 2, 1, 4))),
    MoreCase("weighted_cross_entropy", lambda tf, t, x: tf.nn.weighted_cross_entropy_with_logits(
        t, x * 4.0, 2.5), (_u(0, 1, 3, 4), X34), 2),
    MoreCase("separable_conv2d", lambda tf, x, d, p: tf.nn.separable_conv2d(
        x, d, p, [1, 1, 1, 1], "SAME"), (IMG, _u(-1, 1, 2, 2, 3, 2), _u(-1, 1, 1, 1, 6, 4))),
    MoreCase("atrous_conv2d", lambda tf, x, f: tf.nn.atrous_conv2d(x, f, 2, "VALID"),
             (IMG, _u(-1, 1, 2, 2, 3, 2))),
    MoreCase("pool", lambda tf, x: (tf.nn.pool(x, [2, 2], "MAX", strides=[2, 2]),
                                    tf.nn.pool(x, [2, 3], "AVG", padding="SAME")), (IMG,)),
    MoreCase("space_to_depth", lambda tf, x: tf.nn.depth_to_space(
        tf.nn.space_to_depth(x[:, :4], 2) * tf.nn.space_to_depth(x[:, 1:], 2), 2), (IMG,)),
    # tf.sparse: gradients reach the values (and the dense operand)
    MoreCase("sparse_to_dense_matmul", lambda tf, v, b: (
        tf.sparse.to_dense(tf.sparse.SparseTensor([[0, 1], [1, 0], [2, 3]], v, [3, 4])),
        tf.sparse.sparse_dense_matmul(tf.sparse.SparseTensor([[0, 1], [1, 0], [2, 3]], v, [3, 4]),
                                      b),
        tf.sparse.sparse_dense_matmul(tf.sparse.SparseTensor([[0, 1], [1, 0], [2, 3]], v, [3, 4]),
                                      b[:3], adjoint_a=True)), (_u(-1, 1, 3), _u(-1, 1, 4, 2))),
    MoreCase("sparse_reduce_add_reorder", lambda tf, v, w: (
        tf.sparse.reduce_sum(tf.sparse.SparseTensor([[0, 1], [1, 0], [2, 3]], v, [3, 4]), axis=1),
        tf.sparse.add(tf.sparse.SparseTensor([[0, 1], [1, 0], [2, 3]], v, [3, 4]),
                      tf.sparse.SparseTensor([[0, 1], [2, 2]], w, [3, 4])).values,
        tf.sparse.reorder(tf.sparse.SparseTensor([[2, 3], [0, 1]], w, [3, 4])).values,
        tf.sparse.from_dense(tf.sparse.to_dense(tf.sparse.SparseTensor(
            [[0, 1], [1, 0], [2, 3]], v, [3, 4]))).values), (_u(0.5, 1, 3), _u(0.5, 1, 2))),
]
