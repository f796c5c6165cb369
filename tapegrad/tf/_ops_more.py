"""More of TensorFlow's op set: inverse trigonometric and special functions, top_k,
repeat, segment reductions, counting, map_fn, clip_by_global_norm, eager no-ops and
assertions.

Each differentiable function composes core ops (or the primitives of
:mod:`tapegrad.ops.special`), so gradients, second derivatives and batching come from
the core; integer results (indices, counts, booleans) are computed on the values and
carry no gradient, as in TensorFlow.
"""

from __future__ import annotations

import builtins
import collections
import contextlib
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np

from .. import ops
from .._core.errors import hinted, with_hint
from .._core.tensor import Tensor
from ..ops import special as _sp
from . import _nest
from . import dtypes as _dt
from ._ops import _int, _invalid, _t, _unary, cast, reduce_sum
from ._tensor import _OP_DEFS, VariableBase, binary_args, convert, convert_like, ensure_float, tft
from .errors import InvalidArgumentError

_bmax = builtins.max
_brange = builtins.range

def _allowed(order: str, sig: str, cplx: bool = False) -> tuple[str, str, str]:
    """``(allowed, signature, attrs)`` as TensorFlow prints a kernel's registration."""
    names = order.split(", ") + (["complex64", "complex128"] if cplx else [])
    attrs = ", ".join("DT_" + n.upper() for n in names)
    return ", ".join(names), sig, f"T:type,allowed=[{attrs}]"


_REAL = "bfloat16, half, float, double"
# TensorFlow's allowed-dtype text of each float-only kernel used here (``ensure_float``)
_OP_DEFS.update({
    "Atan2": _allowed(_REAL, "y:T, x:T -> z:T"),
    "Lgamma": _allowed(_REAL, "x:T -> y:T"),
    "Digamma": _allowed(_REAL, "x:T -> y:T"),
    "Erfinv": _allowed(_REAL, "x:T -> y:T"),
    "Rint": _allowed(_REAL, "x:T -> y:T"),
    "Softsign": _allowed("half, bfloat16, float, double", "features:T -> activations:T"),
    "DivNoNan": _allowed("half, float, bfloat16, double", "x:T, y:T -> z:T", True),
    "MulNoNan": _allowed(_REAL, "x:T, y:T -> z:T", True),
    "Xdivy": _allowed("half, bfloat16, float, double", "x:T, y:T -> z:T", True),
})


_NUMBER = ("float, double, int32, uint8, int16, int8, complex64, int64, qint8, quint8, qint32, "
           "bfloat16, qint16, quint16, uint16, complex128, half, uint32, uint64")
_REAL_NUMBER = ("float, double, int32, uint8, int16, int8, int64, bfloat16, uint16, half, uint32, "
                "uint64")


def _dt_list(names: str) -> str:
    return ", ".join("DT_" + n.upper() for n in names.split(", "))


def _attr_error(attr: str, dtype: np.dtype, allowed: str, op: str, sig: str,
                attrs: str) -> InvalidArgumentError:
    """TensorFlow's eager error for an input dtype that an op's registration refuses."""
    return hinted(InvalidArgumentError(None, None, with_hint(
        f"Value for attr '{attr}' of {_dt.kernel_name(dtype)} is not in the list of allowed "
        f"values: {allowed}\n\t; NodeDef: {{{{node {op}}}}}; Op<name={op}; signature={sig}; "
        f"{attrs}> [Op:{op}] name: ", f"{op} does not take {_dt.kernel_name(dtype)} here")))


# ============================================================================ elementwise
def asin(x: Any, name: str | None = None) -> Tensor:
    """Inverse sine (gradient ``1 / sqrt(1 - x^2)``).

    >>> import tapegrad.tf as tf
    >>> tf.math.asin(tf.constant(0.0))
    <tf.Tensor: shape=(), dtype=float32, numpy=0.0>
    """
    return _unary(_sp.asin, x, "Asin")


def acos(x: Any, name: str | None = None) -> Tensor:
    """Inverse cosine (gradient ``-1 / sqrt(1 - x^2)``)."""
    return _unary(_sp.acos, x, "Acos")


def atan(x: Any, name: str | None = None) -> Tensor:
    """Inverse tangent (gradient ``1 / (1 + x^2)``).

    >>> import tapegrad.tf as tf
    >>> tf.math.atan(tf.constant(0.0))
    <tf.Tensor: shape=(), dtype=float32, numpy=0.0>
    """
    return _unary(_sp.atan, x, "Atan")


def atan2(y: Any, x: Any, name: str | None = None) -> Tensor:
    """The angle of the point ``(x, y)``, in ``[-pi, pi]`` (``y`` first, as in TensorFlow)."""
    a, b = binary_args(y, x, function=True, name="Atan2")
    ensure_float(a, "Atan2")
    return _sp.atan2(a, b)


def asinh(x: Any, name: str | None = None) -> Tensor:
    """Inverse hyperbolic sine."""
    return _unary(_sp.asinh, x, "Asinh")


def acosh(x: Any, name: str | None = None) -> Tensor:
    """Inverse hyperbolic cosine (NaN below 1)."""
    return _unary(_sp.acosh, x, "Acosh")


def atanh(x: Any, name: str | None = None) -> Tensor:
    """Inverse hyperbolic tangent (``+-inf`` at ``+-1``)."""
    return _unary(_sp.atanh, x, "Atanh")


def lgamma(x: Any, name: str | None = None) -> Tensor:
    """``log|Gamma(x)|`` (``inf`` at the poles; gradient ``digamma(x)``).

    >>> import tapegrad.tf as tf
    >>> tf.math.lgamma(tf.constant([1.0, 2.0]))
    <tf.Tensor: shape=(2,), dtype=float32, numpy=array([0., 0.], dtype=float32)>
    """
    return _unary(_sp.lgamma, x, "Lgamma")


def digamma(x: Any, name: str | None = None) -> Tensor:
    """The derivative of ``lgamma`` (NaN at the poles)."""
    return _unary(_sp.digamma, x, "Digamma")


def erfinv(x: Any, name: str | None = None) -> Tensor:
    """The inverse of ``erf`` on ``[-1, 1]`` (``+-inf`` at ``+-1``, NaN outside)."""
    return _unary(_sp.erfinv, x, "Erfinv")


def rint(x: Any, name: str | None = None) -> Tensor:
    """The nearest integer, halves to even (no gradient).

    >>> import tapegrad.tf as tf
    >>> tf.math.rint(tf.constant([0.5, 1.5, -2.5]))
    <tf.Tensor: shape=(3,), dtype=float32, numpy=array([ 0.,  2., -2.], dtype=float32)>
    """
    return _unary(ops.round, x, "Rint")


def log_sigmoid(x: Any, name: str | None = None) -> Tensor:
    """``log(sigmoid(x)) = -softplus(-x)`` (no overflow for large ``|x|``).

    >>> import tapegrad.tf as tf
    >>> tf.math.log_sigmoid(tf.constant(0.0))
    <tf.Tensor: shape=(), dtype=float32, numpy=-0.6931471824645996>
    """
    from .nn import softplus

    t = _t(x)
    ensure_float(t, "Softplus")
    return ops.negative(softplus(ops.negative(t)))


def reciprocal_no_nan(x: Any, name: str | None = None) -> Tensor:
    """``1 / x``, and 0 where ``x == 0``."""
    from ._ops import divide_no_nan

    t = _t(x)
    ensure_float(t, "DivNoNan")
    return divide_no_nan(tft(np.ones((), dtype=t._data.dtype)), t)


def multiply_no_nan(x: Any, y: Any, name: str | None = None) -> Tensor:
    """``x * y``, and 0 where ``y == 0`` even if ``x`` is infinite or NaN.

    >>> import tapegrad.tf as tf
    >>> tf.math.multiply_no_nan(tf.constant([float("inf"), 2.0]), tf.constant([0.0, 3.0]))
    <tf.Tensor: shape=(2,), dtype=float32, numpy=array([0., 6.], dtype=float32)>
    """
    a, b = binary_args(x, y, function=True, name="MulNoNan")
    ensure_float(a, "MulNoNan")
    zero = ops.equal(b, 0)
    return ops.where(zero, 0.0, ops.multiply(ops.where(zero, 0.0, a), b))


def xdivy(x: Any, y: Any, name: str | None = None) -> Tensor:
    """``x / y``, and 0 where ``x == 0``."""
    a, b = binary_args(x, y, function=True, name="Xdivy")
    ensure_float(a, "Xdivy")
    zero = ops.equal(a, 0)
    return ops.where(zero, 0.0, ops.divide(a, ops.where(zero, 1.0, b)))


def cumprod(x: Any, axis: Any = 0, exclusive: bool = False, reverse: bool = False,
            name: str | None = None) -> Tensor:
    """Cumulative product along ``axis`` (``exclusive``/``reverse`` as in TensorFlow).

    >>> import tapegrad.tf as tf
    >>> tf.math.cumprod(tf.constant([1.0, 2.0, 3.0]))
    <tf.Tensor: shape=(3,), dtype=float32, numpy=array([1., 2., 6.], dtype=float32)>
    """
    t = _t(x)
    if t._data.dtype.kind not in "iufc":
        raise _attr_error("T", t._data.dtype, _NUMBER, "Cumprod", "x:T, axis:Tidx -> out:T",
                          "attr=exclusive:bool,default=false; attr=reverse:bool,default=false; "
                          f"attr=T:type,allowed=[{_dt_list(_NUMBER)}]; "
                          "attr=Tidx:type,default=DT_INT32,allowed=[DT_INT32, DT_INT64]")
    nd = t._data.ndim
    a = _int(axis)
    if not -_bmax(nd, 1) <= a < _bmax(nd, 1):
        raise _invalid(f"ScanOp: Expected scan axis in the range [{-nd}, {nd}), but got {a}",
                       "the axis must name an axis of x", "Cumprod")
    ax = a % _bmax(nd, 1)
    if reverse:
        t = ops.flip(t, axis=ax)
    if exclusive:
        n = t._data.shape[ax]
        head = tuple(slice(None) if i != ax else slice(0, _bmax(n - 1, 0)) for i in _brange(nd))
        pad = [(0, 0)] * nd
        pad[ax] = (1, 0)
        inner = _sp.cumprod(ops.getitem(t, head), axis=ax) if n > 1 else ops.getitem(t, head)
        out = ops.pad(inner, pad, constant_values=1.0) if n else t
    else:
        out = _sp.cumprod(t, axis=ax)
    if reverse:
        out = ops.flip(out, axis=ax)
    return out


# ============================================================================ counting
def count_nonzero(input: Any, axis: Any = None, keepdims: Any = None, dtype: Any = _dt.int64,
                  name: str | None = None) -> Tensor:
    """The number of non-zero elements (int64 by default).

    >>> import tapegrad.tf as tf
    >>> tf.math.count_nonzero(tf.constant([[1, 0], [2, 3]]), axis=1)
    <tf.Tensor: shape=(2,), dtype=int64, numpy=array([1, 2])>
    """
    t = _t(input)
    nz = tft(np.not_equal(t._data, np.zeros((), dtype=t._data.dtype)).astype(np.int64))
    s = reduce_sum(nz, axis=axis, keepdims=bool(keepdims))
    return cast(s, dtype)


def bincount(arr: Any, weights: Any = None, minlength: Any = None, maxlength: Any = None,
             dtype: Any = _dt.int32, name: str | None = None, axis: Any = None,
             binary_output: bool = False) -> Tensor:
    """How many times each value ``0, 1, ...`` occurs in ``arr`` (summed weights if given).

    >>> import tapegrad.tf as tf
    >>> tf.math.bincount(tf.constant([1, 1, 3]))
    <tf.Tensor: shape=(4,), dtype=int32, numpy=array([0, 2, 0, 1], dtype=int32)>
    """
    a = _t(arr)
    vals = a._data
    if vals.dtype.kind not in "iu":
        vals = vals.astype(np.int32)
    w = None if weights is None else _t(weights)._data
    if vals.size and vals.min() < 0:
        raise _invalid("Input arr must be non-negative!", "bincount counts values 0, 1, ...",
                       "DenseBincount" if w is None or axis is not None else "Bincount")
    size = int(vals.max()) + 1 if vals.size else 0
    if minlength is not None:
        size = _bmax(size, _int(minlength))
    if maxlength is not None:
        size = builtins.min(size, _int(maxlength))
    out_dt = w.dtype if w is not None else _dt.np_dtype(dtype)
    ax = None if axis is None else _int(axis)
    if ax not in (None, 0, -1):
        raise hinted(ValueError(with_hint(
            f"Unsupported value for argument axis={ax}. Only 0 and -1 are currently supported.",
            "bincount counts the whole tensor (axis=None or 0) or each row (axis=-1)")))
    if ax == -1 and vals.ndim > 2:
        raise _invalid(f"Shape must be at most rank 2 but is rank {vals.ndim}",
                       "axis=-1 counts the rows of a matrix", "DenseBincount")
    if ax in (None, 0) or vals.ndim <= 1:
        flat = vals.reshape(-1)
        wf = None if w is None else np.broadcast_to(w, vals.shape).reshape(-1)
        keep = flat < size
        res: np.ndarray = np.bincount(flat[keep], weights=None if wf is None else wf[keep],
                                      minlength=size)
        if binary_output:
            res = res > 0
        return tft(np.asarray(res[:size]).astype(out_dt))
    rows = []
    for i in _brange(vals.shape[0]):
        r = vals[i]
        keep = r < size
        wr = None if w is None else np.broadcast_to(w, vals.shape)[i][keep]
        c = np.bincount(r[keep], weights=wr, minlength=size)[:size]
        rows.append(c > 0 if binary_output else c)
    return tft(np.stack(rows).astype(out_dt) if rows else np.zeros((0, size), dtype=out_dt))


def in_top_k(targets: Any, predictions: Any, k: Any, name: str | None = None) -> Tensor:
    """Whether ``predictions[i, targets[i]]`` is among the ``k`` largest of row ``i``.

    As TensorFlow: a target counts when fewer than ``k`` predictions are strictly larger
    (ties are in), and a non-finite prediction or an out-of-range target gives False.
    """
    p = _t(predictions)._data
    tg = _t(targets)._data
    kk = _int(k)
    if p.ndim != 2:
        raise _invalid("predictions must be 2-dimensional",
                       "predictions is a [batch, classes] matrix", "InTopKV2")
    if tg.ndim != 1 or tg.shape[0] != p.shape[0]:
        raise _invalid(f"First dimension of predictions {p.shape[0]} must match length of "
                       f"targets {tg.shape[0] if tg.ndim else 0}",
                       "one target per row of predictions", "InTopKV2")
    out = np.zeros(p.shape[0], dtype=bool)
    for i in _brange(p.shape[0]):
        t = int(tg[i])
        if not 0 <= t < p.shape[1] or not np.isfinite(p[i, t]):
            continue
        row = p[i]
        if not np.all(np.isfinite(row)):
            continue
        out[i] = int(np.sum(row > row[t])) < kk
    return tft(out)


def confusion_matrix(labels: Any, predictions: Any, num_classes: Any = None, weights: Any = None,
                     dtype: Any = _dt.int32, name: str | None = None) -> Tensor:
    """The ``[num_classes, num_classes]`` matrix of counts: row = label, column = prediction.

    >>> import tapegrad.tf as tf
    >>> tf.math.confusion_matrix([0, 1, 1], [0, 1, 0]).numpy().tolist()
    [[1, 0], [1, 1]]
    """
    lab = np.asarray(_t(labels)._data).astype(np.int64).reshape(-1)
    pred = np.asarray(_t(predictions)._data).astype(np.int64).reshape(-1)
    if lab.shape != pred.shape:  # TensorFlow stacks them first
        raise _invalid(f"Shapes of all inputs must match: values[0].shape = [{lab.shape[0]}] != "
                       f"values[1].shape = [{pred.shape[0]}]",
                       "labels and predictions need the same length", "Pack", name="stack",
                       kernel="Pack_N_2")
    for what, v in (("labels", lab), ("predictions", pred)):
        if v.size and v.min() < 0:
            raise hinted(InvalidArgumentError(None, None, with_hint(
                f"`{what}` contains negative values.  \nCondition x >= 0 did not hold "
                f"element-wise:\nx (shape={v.shape} dtype=int64) = \n"
                f"{[str(e) for e in v.tolist()][:3]}", f"{what} must be class ids >= 0")))
    if num_classes is None:
        n = int(_bmax(lab.max() if lab.size else -1, pred.max() if pred.size else -1)) + 1
    else:
        n = _int(num_classes)
        for what, v in (("labels", lab), ("predictions", pred)):
            if v.size and v.max() >= n:
                raise hinted(InvalidArgumentError(None, None, with_hint(
                    f"`{what}` out of bound\nCondition x < y did not hold.\nFirst "
                    f"{builtins.min(v.size, 3)} elements of x:\n{np.array2string(v[:3])}\n"
                    f"First 1 elements of y:\n[{n}]", f"{what} must be < num_classes")))
    npd = _dt.np_dtype(dtype)
    out = np.zeros((n, n), dtype=npd)
    w = np.ones(lab.shape, dtype=npd) if weights is None else \
        np.broadcast_to(np.asarray(_t(weights)._data), lab.shape).astype(npd)
    np.add.at(out, (lab, pred), w)
    return tft(out)


# ============================================================================ top_k
TopKV2 = collections.namedtuple("TopKV2", ["values", "indices"])


def top_k(input: Any, k: Any = 1, sorted: bool = True, index_type: Any = _dt.int32,
          name: str | None = None) -> Any:
    """The ``k`` largest entries of the last axis and their indices (ties: lower index
    first); the gradient goes to the entries taken.

    >>> import tapegrad.tf as tf
    >>> tf.math.top_k(tf.constant([1.0, 3.0, 2.0]), k=2).indices
    <tf.Tensor: shape=(2,), dtype=int32, numpy=array([1, 2], dtype=int32)>
    """
    t = _t(input)
    d = t._data
    kk = _int(k)
    if kk < 0:
        raise _invalid(f"Need k >= 0, got {kk}", "k is how many entries to take", "TopKV2")
    if d.ndim < 1:
        raise _invalid(f"input must be >= 1-D, got shape [{','.join(map(str, d.shape))}]",
                       "top_k works along the last axis", "TopKV2")
    n = d.shape[-1]
    if n < kk:
        raise _invalid(f"input must have at least k columns. Had {n}, needed {kk}",
                       "k must be at most the size of the last axis", "TopKV2")
    # descending, ties in index order: a stable ascending sort of the reversed row
    rev = np.argsort(d[..., ::-1], axis=-1, kind="stable")[..., ::-1]
    idx = (n - 1 - rev)[..., :kk]
    grid: list[Any] = list(np.indices(idx.shape, sparse=True))
    grid[-1] = idx
    values = ops.getitem(t, tuple(grid))
    return TopKV2(values, tft(idx.astype(_dt.np_dtype(index_type))))


# ============================================================================ repeat
def repeat(input: Any, repeats: Any, axis: Any = None, name: str | None = None) -> Tensor:
    """Repeat each element ``repeats`` times along ``axis`` (flattened when None).

    >>> import tapegrad.tf as tf
    >>> tf.repeat(tf.constant([1, 2]), 2)
    <tf.Tensor: shape=(4,), dtype=int32, numpy=array([1, 1, 2, 2], dtype=int32)>
    """
    t = _t(input)
    rt = _t(repeats)
    reps = np.asarray(rt._data)
    if reps.dtype.kind not in "iu":
        raise hinted(TypeError(with_hint(
            f"Argument `tensor` (name: repeats) must be of type integer. Received `tensor` = "
            f"{reps} of dtype: {_dt.as_dtype(reps.dtype)}", "repeat counts are integers")))
    if reps.ndim > 1:
        raise hinted(ValueError(with_hint(
            f"Shape {tuple(reps.shape)} must have rank at most 1",
            "repeats is one count, or one count per element along the axis")))
    if axis is None:
        t = ops.reshape(t, (-1,))
        ax = 0
    else:
        a = _int(axis)
        if t._data.ndim == 0:  # a scalar repeats as a one-element vector
            t = ops.reshape(t, (1,))
        nd = t._data.ndim
        if not -nd <= a < nd:
            raise hinted(ValueError(with_hint(
                f"axis={a} out of bounds: expected {-nd}<=axis<{nd}",
                "the axis must name an axis of the input")))
        ax = a % nd
    shape = t._data.shape
    n = shape[ax]
    flat = reps.reshape(-1)
    if flat.size not in (1, n):
        raise hinted(ValueError(with_hint(
            f"Dimensions {n} and {flat.size} are not compatible",
            "repeats is one count, or one count per element along the axis")))
    if (flat < 0).any():
        if flat.size == 1:  # TensorFlow tiles a new axis after ``axis``
            raise _invalid(f"Expected multiples[{ax + 1}] >= 0, but got {int(flat[0])}",
                           "repeat counts must be >= 0", "Tile", name=None)
        # per-element counts: TensorFlow masks a tiling and reshapes it to sum(repeats)
        rest = int(np.prod(shape, dtype=np.int64)) // _bmax(n, 1)
        total = int(flat.sum())
        if total < 0:
            raise _invalid(f"Size {ax} must be non-negative, not {total}",
                           "repeat counts must be >= 0", "Reshape")
        raise _invalid(f"Input to reshape is a tensor with {rest * int(np.maximum(flat, 0).sum())} "
                       f"values, but the requested shape has {rest * total}",
                       "repeat counts must be >= 0", "Reshape")
    idx = np.repeat(np.arange(n), np.broadcast_to(flat, (n,)) if n else flat[:0])
    return ops.getitem(t, (slice(None),) * ax + (idx,))


# ============================================================================ segments
def _segment_args(data: Any, segment_ids: Any, op: str) -> tuple[Tensor, np.ndarray]:
    t = _t(data)
    ids = np.asarray(_t(segment_ids)._data)
    if ids.dtype.kind not in "iu":
        numbers = _REAL_NUMBER if op.endswith(("Max", "Min")) else _NUMBER
        unsorted = op.startswith("Unsorted")
        idx = "int16, int32, int64" if op == "UnsortedSegmentSum" else "int32, int64"
        sig = "data:T, segment_ids:Tindices" + (", num_segments:Tnumsegments" if unsorted else "")
        attrs = (f"attr=T:type,allowed=[{_dt_list(numbers)}]; "
                 f"attr=Tindices:type,allowed=[{_dt_list(idx)}]")
        if unsorted:
            attrs += "; attr=Tnumsegments:type,default=DT_INT32,allowed=[DT_INT32, DT_INT64]"
        raise _attr_error("Tindices", ids.dtype, idx, op, sig + " -> output:T", attrs)
    return t, ids


def _sorted_ids(t: Tensor, ids: np.ndarray, op: str) -> int:
    """Check sorted segment ids as TensorFlow's kernels do; the number of segments."""
    if ids.ndim != 1:
        raise _invalid("segment_ids should be a vector.", "segment ids are one id per row",
                       op)
    if t._data.ndim < 1 or ids.shape[0] != t._data.shape[0]:
        raise _invalid("segment_ids should be the same size as dimension 0 of input.",
                       "one segment id per row of data", op, name=None)
    if not ids.size:
        return 0
    num = int(ids[-1]) + 1
    if num <= 0 or int(ids.min()) < 0:
        bad = int(ids[ids < 0][0]) if (ids < 0).any() else int(ids[-1])
        raise _invalid(f"Segment id {bad} out of range [0, {_bmax(num, 0)}), possibly because "
                       "'segment_ids' input is not sorted.", "segment ids must be >= 0 and sorted",
                       op, name=None)
    if (np.diff(ids) < 0).any():
        raise _invalid("segment ids are not increasing", "sort the segment ids", op, name=None)
    return num


def _scatter_sum(t: Tensor, ids: np.ndarray, num: int) -> Tensor:
    shape = (num,) + t._data.shape[ids.ndim:]
    flat = ops.reshape(t, (-1,) + t._data.shape[ids.ndim:]) if ids.ndim != 1 else t
    return ops.index_add(flat, (ids.reshape(-1),), shape)


def segment_sum(data: Any, segment_ids: Any, name: str | None = None) -> Tensor:
    """Sums of the rows of ``data`` with equal (sorted) segment ids; empty segments are 0.

    >>> import tapegrad.tf as tf
    >>> tf.math.segment_sum(tf.constant([1.0, 2.0, 3.0]), [0, 0, 1])
    <tf.Tensor: shape=(2,), dtype=float32, numpy=array([3., 3.], dtype=float32)>
    """
    t, ids = _segment_args(data, segment_ids, "SegmentSum")
    num = _sorted_ids(t, ids, "SegmentSum")
    return _scatter_sum(t, ids, num)


def _counts(ids: np.ndarray, num: int, like: Tensor) -> np.ndarray:
    c = np.bincount(ids.reshape(-1), minlength=num)[:num]
    return c.reshape((num,) + (1,) * (like._data.ndim - 1))


def segment_mean(data: Any, segment_ids: Any, name: str | None = None) -> Tensor:
    """Means of the rows of ``data`` with equal (sorted) segment ids; empty segments are 0."""
    t, ids = _segment_args(data, segment_ids, "SegmentMean")
    num = _sorted_ids(t, ids, "SegmentMean")
    s = _scatter_sum(t, ids, num)
    c = _counts(ids, num, t)
    if t._data.dtype.kind not in "fc":  # integer means truncate, as TensorFlow's kernel
        q = np.zeros(s._data.shape, dtype=t._data.dtype)
        np.divide(s._data, c, out=q, where=c > 0, casting="unsafe")
        return tft(np.trunc(q).astype(t._data.dtype) if q.dtype.kind == "f" else q)
    return ops.divide(s, tft(np.maximum(c, 1).astype(t._data.dtype)))


def _segment_extreme(t: Tensor, ids: np.ndarray, num: int, largest: bool,
                     empty_lowest: bool = False) -> Tensor:
    """Per-segment maxima (minima); an empty segment is 0, or (``empty_lowest``, the
    unsorted ops) the dtype's lowest (highest) value."""
    d = t._data
    shape = (num,) + d.shape[1:]
    if d.dtype.kind == "f":
        init = np.finfo(d.dtype).min if largest else np.finfo(d.dtype).max
    else:
        init = np.iinfo(d.dtype).min if largest else np.iinfo(d.dtype).max
    ext = np.full(shape, init, dtype=d.dtype)
    (np.maximum if largest else np.minimum).at(ext, ids, d)
    count = _counts(ids, num, t)
    if not empty_lowest:
        ext = np.where(count > 0, ext, np.zeros((), dtype=d.dtype)).astype(d.dtype)
    if d.dtype.kind not in "fc":
        return tft(ext)
    # the gradient (TensorFlow's): split evenly between the entries equal to their extreme
    sel = np.equal(d, ext[ids])
    nsel = np.zeros(shape, dtype=d.dtype)
    np.add.at(nsel, ids, sel.astype(d.dtype))
    w = tft(np.where(sel, 1.0 / np.maximum(nsel[ids], 1), 0.0).astype(d.dtype))
    s = _scatter_sum(ops.multiply(t, w), ids, num)
    return ops.add(tft(ext), ops.subtract(s, _stop(s)))


def _stop(t: Tensor) -> Tensor:
    from ._ops import stop_gradient

    return stop_gradient(t)


def segment_max(data: Any, segment_ids: Any, name: str | None = None) -> Tensor:
    """Maxima of the rows of ``data`` with equal (sorted) segment ids; empty segments are 0
    (the gradient splits evenly between tied maxima, as TensorFlow's)."""
    t, ids = _segment_args(data, segment_ids, "SegmentMax")
    num = _sorted_ids(t, ids, "SegmentMax")
    return _segment_extreme(t, ids, num, True)


def segment_min(data: Any, segment_ids: Any, name: str | None = None) -> Tensor:
    """Minima of the rows of ``data`` with equal (sorted) segment ids; empty segments are 0."""
    t, ids = _segment_args(data, segment_ids, "SegmentMin")
    num = _sorted_ids(t, ids, "SegmentMin")
    return _segment_extreme(t, ids, num, False)


def _unsorted_rows(data: Any, segment_ids: Any, num_segments: Any, op: str,
                   name: str | None = None) -> tuple[Tensor, np.ndarray, int, tuple[int, ...]]:
    """The rows of ``data`` with a segment id >= 0, their ids, the number of segments and
    the shape of one row, after TensorFlow's checks."""
    t, ids = _segment_args(data, segment_ids, op)
    num = _int(num_segments)
    d = t._data
    if d.shape[:ids.ndim] != ids.shape:
        raise _invalid(f"data.shape = [{','.join(map(str, d.shape))}] does not start with "
                       f"segment_ids.shape = [{','.join(map(str, ids.shape))}]",
                       "segment_ids must match the leading axes of data", op, name=None)
    if num < 0:
        raise _invalid(f"Input num_segments == {num} must not be negative.",
                       "num_segments is how many segments there are", op, name=name)
    flat_ids = ids.reshape(-1)
    bad = np.nonzero(flat_ids >= num)[0]
    if bad.size:
        pos = np.unravel_index(int(bad[0]), ids.shape)
        where = "".join(f"[{int(p)}]" for p in pos)
        raise _invalid(f"segment_ids{where} = {int(flat_ids[bad[0]])} is out of range [0, {num})",
                       "segment ids must be < num_segments", op, name=name)
    tail = tuple(d.shape[ids.ndim:])
    rows = ops.reshape(t, (-1,) + tail)
    keep = flat_ids >= 0
    if not keep.all():
        rows = ops.getitem(rows, (np.nonzero(keep)[0],))
        flat_ids = flat_ids[keep]
    return rows, flat_ids, num, tail


def unsorted_segment_sum(data: Any, segment_ids: Any, num_segments: Any,
                         name: str | None = None) -> Tensor:
    """Sums of ``data`` by segment id in any order; negative ids are dropped.

    >>> import tapegrad.tf as tf
    >>> tf.math.unsorted_segment_sum(tf.constant([1.0, 2.0, 3.0]), [1, 0, 1], 2)
    <tf.Tensor: shape=(2,), dtype=float32, numpy=array([2., 4.], dtype=float32)>
    """
    rows, ids, num, tail = _unsorted_rows(data, segment_ids, num_segments, "UnsortedSegmentSum")
    return ops.index_add(rows, (ids,), (num,) + tail)


def unsorted_segment_mean(data: Any, segment_ids: Any, num_segments: Any,
                          name: str | None = None) -> Tensor:
    """Means of ``data`` by segment id in any order (empty segments 0; negative ids dropped)."""
    # TensorFlow's Python composition: an UnsortedSegmentSum (named "") over a count
    rows, ids, num, tail = _unsorted_rows(data, segment_ids, num_segments, "UnsortedSegmentSum",
                                          name="")
    s = ops.index_add(rows, (ids,), (num,) + tail)
    c = np.bincount(ids, minlength=num)[:num].reshape((num,) + (1,) * len(tail))
    if rows._data.dtype.kind not in "fc":  # integers: a true division, float64
        return tft(s._data.astype(np.float64) / np.maximum(c, 1))
    return ops.divide(s, tft(np.maximum(c, 1).astype(rows._data.dtype)))


def unsorted_segment_max(data: Any, segment_ids: Any, num_segments: Any,
                         name: str | None = None) -> Tensor:
    """Maxima of ``data`` by segment id in any order; an empty segment is the dtype's lowest
    value, as in TensorFlow (the gradient splits evenly between tied maxima)."""
    rows, ids, num, _ = _unsorted_rows(data, segment_ids, num_segments, "UnsortedSegmentMax")
    return _segment_extreme(rows, ids, num, True, empty_lowest=True)


def unsorted_segment_min(data: Any, segment_ids: Any, num_segments: Any,
                         name: str | None = None) -> Tensor:
    """Minima of ``data`` by segment id in any order; an empty segment is the dtype's highest
    value, as in TensorFlow."""
    rows, ids, num, _ = _unsorted_rows(data, segment_ids, num_segments, "UnsortedSegmentMin")
    return _segment_extreme(rows, ids, num, False, empty_lowest=True)


# ============================================================================ map_fn
def _spec_dtype(sig: Any) -> Any:
    return getattr(sig, "dtype", sig)


def map_fn(fn: Callable[..., Any], elems: Any, dtype: Any = None, parallel_iterations: Any = None,
           back_prop: bool = True, swap_memory: bool = False, infer_shape: bool = True,
           name: str | None = None, fn_output_signature: Any = None) -> Any:
    """Apply ``fn`` to each slice of ``elems`` along axis 0 and stack the results.

    ``elems`` may be nested (``fn`` gets the same structure of slices); the result has
    ``fn_output_signature``'s structure (``elems``' by default).  Gradients flow through
    the slices and the stack.

    >>> import tapegrad.tf as tf
    >>> tf.map_fn(lambda x: x * 2.0, tf.constant([1.0, 2.0]))
    <tf.Tensor: shape=(2,), dtype=float32, numpy=array([2., 4.], dtype=float32)>
    """
    from .control_flow import structure_mismatch

    sig = fn_output_signature if fn_output_signature is not None else dtype
    flat_in = _nest.flatten(elems)
    if not flat_in:
        raise hinted(ValueError(with_hint(
            f"elems must be a Tensor or (possibly nested) sequence of Tensors. Got {elems!r}, "
            "which does not contain any Tensors.", "pass at least one tensor to map over")))
    ts = [_t(e) for e in flat_in]
    for x in ts:
        if x._data.ndim < 1:
            raise hinted(ValueError(with_hint(
                "Elements in elems must be 1+ dimensional Tensors, not scalars",
                "map_fn maps over axis 0 of each tensor")))
    n = ts[0]._data.shape[0]
    for x in ts[1:]:
        if x._data.shape[0] != n:
            raise hinted(ValueError(with_hint(
                f"Dimensions {n} and {x._data.shape[0]} are not compatible",
                "every tensor in elems needs the same size along axis 0")))
    out_struct = elems if sig is None else sig
    flat_sig = _nest.flatten(out_struct)
    flat_dt = [x._data.dtype for x in ts] if sig is None else \
        [_dt.np_dtype(_spec_dtype(s)) for s in flat_sig]
    if n == 0:
        outs = []
        for s, dt in zip(flat_sig, flat_dt):
            shp = tuple(getattr(s, "shape", None) or ()) if sig is not None else ()
            outs.append(tft(np.zeros((0,) + tuple(int(v or 0) for v in shp), dtype=dt)))
        return _nest.pack_sequence_as(out_struct, outs) if _nest.is_nested(out_struct) else outs[0]
    results: list[list[Tensor]] = [[] for _ in flat_dt]
    for i in _brange(n):
        piece = [ops.getitem(x, i) for x in ts]
        arg = _nest.pack_sequence_as(elems, piece) if _nest.is_nested(elems) else piece[0]
        r = fn(arg)
        mismatch = structure_mismatch(out_struct, r)
        if mismatch is not None:  # tf.nest.assert_same_structure's: TypeError for the kind
            kind = TypeError if "same sequence type" in mismatch else ValueError
            raise hinted(kind(with_hint(
                mismatch, "fn must return fn_output_signature's structure (elems' by default)")))
        flat_r = _nest.flatten(r)
        for j, (v, dt) in enumerate(zip(flat_r, flat_dt)):
            rv = v if isinstance(v, Tensor) else convert_like(v, dt, False)
            rv = convert(rv)
            if rv._data.dtype != dt:
                raise _invalid(f"TensorArray dtype is {_dt.as_dtype(dt).name} but Op is trying to "
                               f"write dtype {_dt.as_dtype(rv._data.dtype).name} ",
                               "fn's results must have fn_output_signature's dtypes (elems' by "
                               "default)", "TensorListSetItem", name=None)
            s = flat_sig[j] if sig is not None else None
            want = getattr(s, "shape", None)
            if want is not None and not want.is_compatible_with(rv._data.shape):
                raise hinted(ValueError(with_hint(
                    f"Incompatible shape for value ({rv._data.shape}), expected "
                    f"({tuple(want.as_list()) if want.rank is not None else None})",
                    "fn's results must have fn_output_signature's shapes")))
            results[j].append(rv)
    stacked = [ops.stack(r, axis=0) for r in results]
    return _nest.pack_sequence_as(out_struct, stacked) if _nest.is_nested(out_struct) \
        else stacked[0]


# ============================================================================ clipping
def global_norm(t_list: Any, name: str | None = None) -> Tensor:
    """``sqrt(sum of every tensor's squared L2 norm)`` (None entries skipped).

    >>> import tapegrad.tf as tf
    >>> tf.linalg.global_norm([tf.constant([3.0, 4.0])])
    <tf.Tensor: shape=(), dtype=float32, numpy=5.0>
    """
    if not isinstance(t_list, Sequence) or isinstance(t_list, str) or isinstance(t_list, Tensor):
        raise hinted(TypeError(with_hint(
            f"`t_list` should be a sequence of tensors. Received {type(t_list)}.",
            "pass a list of tensors")))
    ts = [_t(v) for v in t_list if v is not None]
    halves = [ops.multiply(reduce_sum(ops.multiply(v, v)), 0.5) for v in ts]
    for i, h in enumerate(halves[1:], 1):  # TensorFlow stacks the halves: one dtype
        if h._data.dtype != halves[0]._data.dtype:
            raise _invalid(f"cannot compute Pack as input #{i}(zero-based) was expected to be a "
                           f"{_dt.kernel_name(halves[0]._data.dtype)} tensor but is a "
                           f"{_dt.kernel_name(h._data.dtype)} tensor",
                           "every tensor needs the same dtype", "Pack", name="stack")
    if not halves:
        return tft(np.zeros((), dtype=np.float32))
    total = ops.sum(ops.stack(halves, axis=0))
    return ops.sqrt(ops.multiply(total, 2.0))


def clip_by_global_norm(t_list: Any, clip_norm: Any, use_norm: Any = None,
                        name: str | None = None) -> tuple[list[Any], Tensor]:
    """Scale every tensor by ``clip_norm / max(global_norm, clip_norm)``; returns
    ``(clipped_list, global_norm)`` (None entries stay None; an infinite norm gives NaN).

    >>> import tapegrad.tf as tf
    >>> clipped, norm = tf.clip_by_global_norm([tf.constant([3.0, 4.0])], 1.0)
    >>> clipped[0].numpy().tolist(), float(norm)
    ([0.6000000238418579, 0.800000011920929], 5.0)
    """
    if not isinstance(t_list, Sequence) or isinstance(t_list, str) or isinstance(t_list, Tensor):
        raise hinted(TypeError(with_hint(
            f"`t_list` should be a sequence of tensors. Received {type(t_list)}.",
            "pass a list of tensors (e.g. the gradients)")))
    norm = global_norm(t_list) if use_norm is None else _t(use_norm)
    cn = convert_like(clip_norm, norm._data.dtype, False) if not isinstance(clip_norm, Tensor) \
        else _t(clip_norm)
    one = tft(np.ones((), dtype=norm._data.dtype))
    scale = ops.multiply(cn, ops.minimum(ops.divide(one, norm), ops.divide(one, cn), ties="first"))
    with np.errstate(invalid="ignore"):  # NaN when the norm is infinite, as TensorFlow
        scale = ops.add(scale, ops.subtract(norm, norm))
    out: list[Any] = []
    for v in t_list:
        if v is None:
            out.append(None)
            continue
        tv = _t(v)
        out.append(ops.multiply(tv, cast(scale, _dt.as_dtype(tv._data.dtype))))
    return out, norm


# ============================================================================ eager no-ops
@contextlib.contextmanager
def _null() -> Iterator[None]:
    yield


def control_dependencies(control_inputs: Any) -> Any:
    """A context that does nothing (eager ops run in order); callables in
    ``control_inputs`` are called, as in TensorFlow's eager mode."""
    if control_inputs:
        for c in control_inputs:
            if callable(c):
                c()
    return _null()


def no_op(name: str | None = None) -> None:
    """Nothing (``None`` in eager mode, as in TensorFlow)."""
    return None


def group(*inputs: Any, **kwargs: Any) -> None:
    """Nothing to group in eager mode: ``None``, as in TensorFlow."""
    return None


def identity_n(input: Any, name: str | None = None) -> list[Tensor]:
    """``[tf.identity(x) for x in input]`` (gradients pass through)."""
    return [ops.identity(_t(x)) for x in input]


def get_static_value(tensor: Any, partial: bool = False) -> Any:
    """The NumPy value of an eager tensor; a non-tensor as it is; None for a variable.

    >>> import tapegrad.tf as tf
    >>> tf.get_static_value(tf.constant([1, 2]))
    array([1, 2], dtype=int32)
    """
    if isinstance(tensor, VariableBase):
        return None
    if isinstance(tensor, Tensor):
        return np.array(tensor._data)
    return tensor


def _shape_text(shape: Any) -> str:
    return "[" + ",".join("?" if s is None else str(s) for s in shape) + "]"


def ensure_shape(x: Any, shape: Any, name: str | None = None) -> Tensor:
    """``x`` unchanged if its shape is compatible with ``shape`` (None matches any size),
    else TensorFlow's InvalidArgumentError."""
    from ._tensor import TensorShape

    t = _t(x)
    want = shape if isinstance(shape, TensorShape) else TensorShape(shape)
    if not want.is_compatible_with(t._data.shape):
        raise _invalid(f"Shape of tensor input {_shape_text(t._data.shape)} is not "
                       f"compatible with expected shape {_shape_text(want.as_list())}.",
                       "the tensor's shape must match (None matches any size)", "EnsureShape")
    return ops.identity(t)


# ============================================================================ assertions
def _assert_binary(x: Any, y: Any, fn: Any, cond: str, op_text: str, message: Any,
                   summarize: Any, name: str | None) -> None:
    """TensorFlow's eager ``_binary_assert``: None when it holds, else its message; inside
    ``tf.function`` (traced operands) an ``Assert`` effect checked on every call."""
    a, b = binary_args(x, y, function=True, name=op_text)
    from ..autodiff import tracing

    if tracing.is_traced(a) or tracing.is_traced(b):
        _graph_assert(a, b, fn, cond, op_text, message, summarize)
        return None
    ok = np.asarray(fn(a._data, b._data))
    if bool(np.all(ok)):
        return None
    summ = 3 if summarize is None else (10 ** 9 if int(summarize) < 0 else int(summarize))
    data: list[str] = [] if message is None else [str(message)]
    data.append(f"Condition x {cond} y did not hold.")
    xd, yd = a._data, b._data
    if summ > 0:
        if xd.shape == yd.shape and xd.ndim:
            bad = ~ok
            idx = np.argwhere(bad)
            k = builtins.min(summ, idx.shape[0])
            data += [f"Indices of first {k} different values:", str(idx[:k]),
                     "Corresponding x values:", str(xd[bad].reshape(-1)[:k]),
                     "Corresponding y values:", str(yd[bad].reshape(-1)[:k])]
        xf, yf = xd.reshape(-1), yd.reshape(-1)
        nx, ny = builtins.min(xf.size, summ), builtins.min(yf.size, summ)
        data += [f"First {nx} elements of x:", str(xf[:nx]), f"First {ny} elements of y:",
                 str(yf[:ny])]
    raise hinted(InvalidArgumentError(None, None, with_hint(
        "\n".join(data), f"the assertion x {cond} y failed")))


def _assert_items(arr: Any, n: int) -> str:
    """A tensor as TensorFlow's ``Assert`` prints it (``1 2 3...``: the first ``n``)."""
    a = np.asarray(arr)

    def fmt(v: Any) -> str:
        return f"{float(v):g}" if a.dtype.kind in "fc" else str(v.item())

    if a.ndim == 0:
        return fmt(a)
    flat = a.reshape(-1)
    return " ".join(fmt(v) for v in flat[:n]) + ("..." if flat.size > n else "")


def _graph_assert(a: Tensor, b: Tensor, fn: Any, cond: str, op_text: str, message: Any,
                  summarize: Any) -> None:
    """A traced assertion: an effect of the program (it runs on every call, even if
    nothing uses it) raising TensorFlow's graph ``Assert`` error when it fails."""
    from ..autodiff import tracing

    lv = tracing.current()
    node = {"Equal": "assert_equal_1", "Less": "assert_less",
            "Greater": "assert_greater"}.get(op_text, "Assert")
    names = [lv.symbol(t) if lv is not None and tracing.is_traced(t) else f"{node}/{c}"
             for t, c in ((a, "x"), (b, "y"))]
    n = 3 if summarize is None else (10 ** 9 if int(summarize) < 0 else int(summarize))

    def check(xd: Any, yd: Any) -> None:
        if bool(np.all(fn(xd, yd))):
            return
        items = ([] if message is None else [str(message)]) + [
            f"Condition x {cond} y did not hold element-wise:", f"x ({names[0]}:0) = ",
            _assert_items(xd, n), f"y ({names[1]}:0) = ", _assert_items(yd, n)]
        err = hinted(InvalidArgumentError(None, None, with_hint(
            "assertion failed: " + " ".join(f"[{i}]" for i in items),
            f"the assertion x {cond} y failed")))
        err.tf_node = f"{node}/Assert/AssertGuard/Assert"  # type: ignore[attr-defined]
        raise err

    tracing.effect(check, [a, b], name="Assert", invalidates=False)


def assert_equal(x: Any, y: Any, message: Any = None, summarize: Any = None,
                 name: str | None = None) -> None:
    """Raise InvalidArgumentError unless ``x == y`` everywhere (None when it holds)."""
    _assert_binary(x, y, np.equal, "==", "Equal", message, summarize, name)


def assert_less(x: Any, y: Any, message: Any = None, summarize: Any = None,
                name: str | None = None) -> None:
    """Raise InvalidArgumentError unless ``x < y`` everywhere."""
    _assert_binary(x, y, np.less, "<", "Less", message, summarize, name)


def assert_greater(x: Any, y: Any, message: Any = None, summarize: Any = None,
                   name: str | None = None) -> None:
    """Raise InvalidArgumentError unless ``x > y`` everywhere."""
    _assert_binary(x, y, np.greater, ">", "Greater", message, summarize, name)


def assert_rank(x: Any, rank: Any, message: Any = None, name: str | None = None) -> None:
    """Raise ValueError unless ``x`` has rank ``rank``."""
    t = _t(x)
    r = _int(rank)
    if t._data.ndim != r:
        msg = f"{message}.  " if message else ""
        raise hinted(ValueError(with_hint(  # eager tensors have no name: "Tensor  must"
            f"{msg}Tensor  must have rank {r}.  Received rank {t._data.ndim}, "
            f"shape {tuple(t._data.shape)}", "the tensor has the wrong number of axes")))
    return None

