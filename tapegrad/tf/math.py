"""``tf.math``: elementwise math and reductions under TensorFlow's names.

>>> import tapegrad.tf as tf
>>> tf.math.log(tf.constant([1.0]))
<tf.Tensor: shape=(1,), dtype=float32, numpy=array([0.], dtype=float32)>
"""

from __future__ import annotations

from ._ops import (
    abs,
    add,
    add_n,
    argmax,
    argmin,
    ceil,
    conj,
    cos,
    cosh,
    cumsum,
    divide,
    divide_no_nan,
    equal,
    erf,
    erfc,
    exp,
    expm1,
    floor,
    floordiv,
    floormod,
    greater,
    greater_equal,
    imag,
    is_finite,
    is_inf,
    is_nan,
    less,
    less_equal,
    log,
    log1p,
    logical_and,
    logical_not,
    logical_or,
    logical_xor,
    maximum,
    minimum,
    mod,
    multiply,
    negative,
    not_equal,
    pow,
    real,
    reciprocal,
    reduce_all,
    reduce_any,
    reduce_euclidean_norm,
    reduce_logsumexp,
    reduce_max,
    reduce_mean,
    reduce_min,
    reduce_prod,
    reduce_std,
    reduce_sum,
    reduce_variance,
    round,
    rsqrt,
    sigmoid,
    sign,
    sin,
    sinh,
    sqrt,
    square,
    squared_difference,
    subtract,
    tan,
    tanh,
    truediv,
    xlogy,
)
from ._ops_extra import (
    accumulate_n,
    angle,
    bessel_i0,
    bessel_i0e,
    bessel_i1,
    bessel_i1e,
    cumulative_logsumexp,
    invert_permutation,
    is_non_decreasing,
    is_strictly_increasing,
    lbeta,
    ndtri,
    nextafter,
    polygamma,
    polyval,
    scalar_mul,
    xlog1py,
    zeta,
)
from ._ops_more import (
    acos,
    acosh,
    asin,
    asinh,
    atan,
    atan2,
    atanh,
    bincount,
    confusion_matrix,
    count_nonzero,
    cumprod,
    digamma,
    erfinv,
    in_top_k,
    lgamma,
    log_sigmoid,
    multiply_no_nan,
    reciprocal_no_nan,
    rint,
    segment_max,
    segment_mean,
    segment_min,
    segment_sum,
    top_k,
    unsorted_segment_max,
    unsorted_segment_mean,
    unsorted_segment_min,
    unsorted_segment_sum,
    xdivy,
)
from .nn import l2_normalize, log_softmax, softmax, softplus, softsign

__all__ = [
    "abs", "add", "add_n", "argmax", "argmin", "ceil", "cos", "cosh", "cumsum", "divide",
    "divide_no_nan", "equal", "erf", "erfc", "exp", "expm1", "floor", "floordiv", "floormod",
    "greater",
    "greater_equal", "is_finite", "is_inf", "is_nan", "less", "less_equal", "log", "log1p",
    "logical_and", "logical_not", "logical_or", "logical_xor", "maximum", "minimum", "mod",
    "multiply", "negative", "not_equal", "pow", "reciprocal", "reduce_all", "reduce_any",
    "reduce_euclidean_norm", "reduce_logsumexp", "reduce_max", "reduce_mean", "reduce_min",
    "reduce_prod", "reduce_std", "reduce_sum", "reduce_variance", "round", "rsqrt", "sigmoid",
    "sign", "sin", "sinh", "sqrt", "square", "squared_difference", "subtract", "tan", "tanh",
    "truediv", "xlogy", "l2_normalize", "log_softmax", "softmax", "softplus", "real", "imag",
    "conj",
]
__all__ += [
    "asin", "acos", "atan", "atan2", "asinh", "acosh", "atanh", "lgamma", "digamma", "erfinv",
    "rint", "log_sigmoid", "reciprocal_no_nan", "multiply_no_nan", "xdivy", "cumprod",
    "count_nonzero", "bincount", "in_top_k", "confusion_matrix", "top_k", "segment_sum",
    "segment_mean", "segment_max", "segment_min", "unsorted_segment_sum", "softsign",
    "unsorted_segment_max", "unsorted_segment_mean",
    "unsorted_segment_min",
]
__all__ += [
    "accumulate_n", "angle", "cumulative_logsumexp", "invert_permutation", "is_non_decreasing",
    "is_strictly_increasing", "lbeta", "ndtri", "nextafter", "polygamma", "polyval",
    "scalar_mul", "xlog1py",
]
__all__ += ["bessel_i0", "bessel_i0e", "bessel_i1", "bessel_i1e", "zeta", "special"]


class special:  # noqa: N801  (tf.math.special: the Bessel functions again)
    """``tf.math.special``: ``bessel_i0``/``i0e``/``i1``/``i1e``."""

    bessel_i0 = staticmethod(bessel_i0)
    bessel_i0e = staticmethod(bessel_i0e)
    bessel_i1 = staticmethod(bessel_i1)
    bessel_i1e = staticmethod(bessel_i1e)
