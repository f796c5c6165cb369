"""``torch.arange`` and ``torch.linspace`` with PyTorch's exact lengths and values.

PyTorch's CPU kernels do not compute ``start + i * step`` element by element
in the output dtype: ``arange`` works in the accumulation type (double for
float32/float64, float for float16), fills blocks of SIMD width from a block
base, and the compiler fuses each ``a + b * c`` into one fused multiply-add.
Writing each element as NumPy's ``start + arange(n) * step`` differs from
PyTorch in the last bit of about one element in five.  This module emulates
the kernel: the same block layout (32-byte vectors, two per loop step, the
tail element by element) and correctly rounded fused multiply-adds computed
with error-free transformations.

``arange`` values follow PyTorch 2.13's CPU build as measured against it
(32-byte vector blocks, every ``a + b * c`` fused); a range longer than
PyTorch's grain size (2000 elements) is split into
``torch.get_num_threads()`` chunks, as PyTorch splits it between threads.  ``linspace`` is
one fused multiply-add per element, stepping up from ``start`` to halfway
and down from ``end`` after it.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .._core.errors import hinted, with_hint
from .._core.tensor import Tensor
from ._dtype import default_np, to_np

_VEC_BYTES = 32
_ARANGE_GRAIN = 2000
_SPLIT = float(2**27 + 1)


# ----------------------------------------------------------------------------- exact fma
def _two_sum(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``s + t == a + b`` exactly, ``s`` the rounded sum (Knuth)."""
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


def _two_prod(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``p + e == a * b`` exactly, ``p`` the rounded product (Dekker, Veltkamp split)."""
    p = a * b
    ca, cb = _SPLIT * a, _SPLIT * b
    ah = ca - (ca - a)
    bh = cb - (cb - b)
    al, bl = a - ah, b - bh
    return p, ((ah * bh - p) + ah * bl + al * bh) + al * bl


def _round_odd_sum(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``a + b`` rounded to odd: truncated, with the last bit set when inexact."""
    s, t = _two_sum(a, b)
    s = np.asarray(s)
    fix = (t != 0) & ((s.view(np.int64) & 1) == 0)
    if fix.any():
        s = np.where(fix, np.nextafter(s, np.where(t > 0, np.inf, -np.inf)), s)
    return s


def fma64(a: Any, b: Any, c: Any) -> np.ndarray:
    """``a * b + c`` in float64 with one rounding (Boldo and Melquiond's emulation).

    >>> float(fma64(0.1, 3.0, 0.0)) == 0.30000000000000004
    True
    """
    a, b, c = (np.asarray(v, np.float64) for v in (a, b, c))
    with np.errstate(over="ignore", invalid="ignore"):
        uh, ul = _two_prod(a, b)
        th, tl = _two_sum(c, uh)
        out = th + _round_odd_sum(tl, ul)
    plain = ~np.isfinite(out) | (a == 0) | (b == 0)
    if plain.any():
        out = np.where(plain, a * b + c, out)
    return np.asarray(out, np.float64)


def fma32(a: Any, b: Any, c: Any) -> np.ndarray:
    """``a * b + c`` in float32 with one rounding (exact product, odd-rounded float64 sum)."""
    a, b, c = (np.asarray(v, np.float32).astype(np.float64) for v in (a, b, c))
    with np.errstate(over="ignore", invalid="ignore"):
        return _round_odd_sum(a * b, c).astype(np.float32)


# ----------------------------------------------------------------------------- kernels
def _chunks(n: int, grain: int) -> list[tuple[int, int]]:
    """PyTorch's ``parallel_for`` split of ``range(n)``."""
    from ._misc import get_num_threads

    threads = max(1, min(get_num_threads(), -(-n // grain))) if n > grain else 1
    size = -(-n // threads)
    return [(b, min(b + size, n)) for b in range(0, n, size)] if n else []


def _layout(n: int, vs: int, grain: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For each element: its block base index, its lane, and whether it is in a vector."""
    base = np.arange(n, dtype=np.int64)
    lane = np.zeros(n, dtype=np.int64)
    vec = np.zeros(n, dtype=bool)
    for b, e in _chunks(n, grain):
        nb = ((e - b) // (2 * vs)) * 2 * vs
        i = np.arange(b, b + nb)
        base[b:b + nb] = b + ((i - b) // vs) * vs
        lane[b:b + nb] = (i - b) % vs
        vec[b:b + nb] = True
    return base, lane, vec


def _arange_values(start: float, step: float, n: int, dt: np.dtype) -> np.ndarray:
    """PyTorch's ``arange_kernel``: ``start + step * idx`` in the accumulation type."""
    if dt.kind in "iub":
        s, st = int(start), int(step)
        return (s + np.arange(n, dtype=np.int64) * st).astype(dt)
    vs = _VEC_BYTES // dt.itemsize
    base, lane, vec = _layout(n, vs, _ARANGE_GRAIN)
    fma = fma32 if dt == np.float16 else fma64
    acc = np.float32 if dt == np.float16 else np.float64
    s, st = acc(start), acc(step)
    out = np.empty(n, dtype=acc)
    tail = ~vec
    if tail.any():
        out[tail] = fma(st, np.nonzero(tail)[0].astype(acc), s)
    if vec.any():
        # one base per vector block (stored as scalar_t), then base + lane * step
        starts, where = np.unique(base[vec], return_inverse=True)
        block = fma(st, starts.astype(acc), s).astype(dt).astype(acc)
        out[vec] = fma(lane[vec].astype(acc), st, block[where])
    return out.astype(dt)


def _linspace_values(start: Any, end: Any, steps: int, dt: np.dtype) -> np.ndarray:
    """PyTorch's ``linspace_kernel``: from ``start`` up to halfway, from ``end`` after.

    Each value is one fused multiply-add in the output type (in double for
    integer outputs, then truncated toward zero); this kernel is not blocked.
    """
    idx = np.arange(steps)
    half = steps // 2
    if dt.kind in "iub":
        s, e = float(math.trunc(float(start))), float(math.trunc(float(end)))
        step = (e - s) / (steps - 1)
        vals = np.where(idx < half, fma64(step, idx.astype(np.float64), s),
                        fma64(-step, (steps - idx - 1).astype(np.float64), e))
        return np.trunc(vals).astype(dt)
    if dt == np.float16:
        # c10::Half arithmetic rounds each operation to half
        s16, e16 = np.float16(start), np.float16(end)
        width = np.float16(np.float32(e16) - np.float32(s16))
        st = np.float16(np.float32(width) / np.float32(np.float16(steps - 1)))
        up = s16 + (st * idx.astype(np.float16)).astype(np.float16)
        down = e16 - (st * (steps - idx - 1).astype(np.float16)).astype(np.float16)
        return np.where(idx < half, up, down).astype(np.float16)
    acc = np.float64 if dt == np.float64 else np.float32
    fma = fma64 if dt == np.float64 else fma32
    s, e = acc(start), acc(end)
    step = (e - s) / acc(steps - 1)
    vals = np.where(idx < half, fma(step, idx.astype(acc), s),
                    fma(-step, (steps - idx - 1).astype(acc), e))
    return vals.astype(dt)


# ----------------------------------------------------------------------------- public
def _num(v: Any) -> Any:
    if isinstance(v, Tensor):
        if v._data.ndim != 0:
            raise hinted(RuntimeError(with_hint(
                "arange: expected a 0-dimensional tensor, but got one with "
                f"{v._data.ndim} dimension(s)", "pass a number or a 0-d tensor")))
        return v._data.item()
    if isinstance(v, np.generic):
        return v.item()
    return v


def _is_int(v: Any) -> bool:
    return isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))


def arange(start: Any = 0, end: Any = None, step: Any = 1, *, dtype: Any = None,
           device: Any = None, requires_grad: bool = False, out: Any = None,
           layout: Any = None, pin_memory: bool = False) -> Tensor:
    """Values from ``start`` to ``end`` (exclusive) by ``step``, as PyTorch computes them.

    int64 when all arguments are integers, else the default float dtype.  The
    length is ``ceil((end - start) / step)`` in double precision, and the
    values are bit-for-bit PyTorch's (see the module docstring).

    Examples
    --------
    >>> import tapegrad.torch as torch
    >>> torch.arange(3), torch.arange(0, 1, 0.25)
    (tensor([0, 1, 2]), tensor([0.0000, 0.2500, 0.5000, 0.7500]))
    >>> torch.arange(-5.5, 1.0, 0.1).shape
    torch.Size([65])
    """
    from ._tensor import _finish, check_device

    check_device(device)
    if end is None:
        start, end = 0, start
    raw = (start, end, step)
    start, end, step = (_num(v) for v in raw)
    for v in (start, end, step):
        if isinstance(v, complex):
            raise hinted(RuntimeError(with_hint("\"arange_cpu\" not implemented for 'ComplexFloat'",
                                         "arange takes real numbers")))
    allint = all(_is_int(v) or (isinstance(r, Tensor) and r._data.dtype.kind in "iu")
                 for v, r in zip((start, end, step), raw))
    dt = (np.dtype(np.int64) if allint else default_np()) if dtype is None else to_np(dtype)
    if dt.kind == "b":
        raise hinted(NotImplementedError(with_hint("\"arange_cpu\" not implemented for 'Bool'",
                                            "make an integer range, then compare or cast")))
    if dt.kind == "c":
        name = "ComplexDouble" if dt == np.complex128 else "ComplexFloat"
        raise hinted(NotImplementedError(with_hint(f"\"arange_cpu\" not implemented for '{name}'",
                                            "make a real range, then cast")))
    if dt == np.int64:
        # int64 works on int64 copies of the arguments (truncated toward zero)
        xs, xe, xst = (math.trunc(float(v)) if not _is_int(v) else int(v)
                       for v in (start, end, step))
        if xst == 0:
            raise hinted((RuntimeError if step == 0 else ValueError)(
                with_hint("step must be nonzero",
                          f"step={step} truncates to 0 for torch.int64")))
        if (xe - xs) * xst < 0:
            raise hinted(RuntimeError(with_hint("upper bound and lower bound inconsistent with "
                                         "step sign", f"start={start}, end={end}, step={step}")))
        sgn = (xst > 0) - (xst < 0)
        n = abs(xe - xs + xst - sgn) // abs(xst)   # C++ division truncates toward zero
        vals = (xs + np.arange(n, dtype=np.int64) * xst).astype(dt)
        return _finish(vals, requires_grad)
    fs, fe, fst = float(start), float(end), float(step)
    if fst == 0:
        raise hinted(RuntimeError(with_hint("step must be nonzero", "pass a non-zero step")))
    if not (math.isfinite(fs) and math.isfinite(fe)):
        raise hinted(RuntimeError(with_hint(f"unsupported range: {_fmt(start)} -> {_fmt(end)}",
                                     "arange needs finite bounds")))
    if (fe - fs) * fst < 0:
        raise hinted(RuntimeError(with_hint("upper bound and lower bound inconsistent with step sign",
                                     f"start={start}, end={end}, step={step}")))
    n = int(math.ceil((fe - fs) / fst))
    return _finish(_arange_values(fs, fst, n, dt), requires_grad)


def _fmt(v: Any) -> str:
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    return str(v)


def linspace(start: Any, end: Any, steps: Any, *, dtype: Any = None, device: Any = None,
             requires_grad: bool = False, out: Any = None, layout: Any = None) -> Tensor:
    """``steps`` evenly spaced values from ``start`` to ``end``, as PyTorch computes them.

    The first half steps up from ``start``, the second half down from
    ``end`` (so both ends are exact); integer dtypes truncate ``start`` and
    ``end`` first and each value toward zero, as PyTorch does.

    Examples
    --------
    >>> import tapegrad.torch as torch
    >>> torch.linspace(0, 1, 5)
    tensor([0.0000, 0.2500, 0.5000, 0.7500, 1.0000])
    >>> torch.linspace(-5.5, 1.0, 5, dtype=torch.int64)
    tensor([-5, -3, -2,  0,  1])
    """
    from ._tensor import _finish, check_device

    check_device(device)
    for name, v in (("start", start), ("end", end)):
        if isinstance(v, Tensor) and v._data.ndim != 0:
            raise hinted(RuntimeError(with_hint(
                f"linspace only supports 0-dimensional start and end tensors, but got {name} "
                f"with {v._data.ndim} dimension(s).", "pass numbers or 0-d tensors")))
    if isinstance(steps, Tensor):
        steps = steps._data.item()
    if not _is_int(steps):
        raise hinted(TypeError(with_hint(
            "linspace() received an invalid combination of arguments - got "
            f"({type(start).__name__}, {type(end).__name__}, {type(steps).__name__}), but "
            "expected one of:\n * (Tensor start, Tensor end, int steps, *, Tensor out = None, "
            "torch.dtype dtype = None, torch.layout layout = None, torch.device device = None, "
            "bool pin_memory = False, bool requires_grad = False)",
            "steps is an int: the number of points")))
    steps = int(steps)
    s, e = _num(start), _num(end)
    if steps < 0:
        raise hinted(RuntimeError(with_hint("number of steps must be non-negative",
                                     f"got steps={steps}")))
    if dtype is None:
        cplx = isinstance(s, complex) or isinstance(e, complex)
        dt = default_np()
        if cplx:
            dt = np.dtype(np.complex128 if dt == np.float64 else np.complex64)
    else:
        dt = to_np(dtype)
    if dt.kind == "b":
        raise hinted(NotImplementedError(with_hint("\"linspace_cpu\" not implemented for 'Bool'",
                                            "make a float range, then compare")))
    if steps == 0:
        return _finish(np.zeros(0, dtype=dt), requires_grad)
    if steps == 1:
        first = math.trunc(float(s)) if dt.kind in "iu" else s
        return _finish(np.full(1, first, dtype=dt), requires_grad)
    if dt.kind == "c":
        # complex: PyTorch's formula on each part
        ct = np.complex128 if dt == np.complex128 else np.complex64
        rt = np.dtype(np.float64 if ct == np.complex128 else np.float32)
        sc, ec = complex(s), complex(e)
        re = _linspace_values(sc.real, ec.real, steps, rt)
        im = _linspace_values(sc.imag, ec.imag, steps, rt)
        return _finish((re + 1j * im).astype(dt), requires_grad)
    return _finish(_linspace_values(s, e, steps, dt), requires_grad)


def deprecated_range(start: Any = 0, end: Any = None, step: Any = 1, *, dtype: Any = None,
          device: Any = None, requires_grad: bool = False, out: Any = None,
          layout: Any = None) -> Tensor:
    """``torch.range`` (deprecated in PyTorch): like :func:`arange`, but ``end`` included.

    The default dtype is the default float dtype even for integer arguments,
    the length ``trunc((end - start) / step) + 1``, with PyTorch's warning.

    >>> import warnings, tapegrad.torch as torch
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     torch.range(1, 4)
    tensor([1., 2., 3., 4.])
    """
    import warnings

    from ._tensor import _finish, check_device

    warnings.warn("torch.range is deprecated and will be removed in a future release because its "
                  "behavior is inconsistent with Python's range builtin. Instead, use "
                  "torch.arange, which produces values in [start, end).", UserWarning,
                  stacklevel=2)
    check_device(device)
    if end is None:
        start, end = 0, start
    fs, fe, fst = (float(_num(v)) for v in (start, end, step))
    if fst == 0:
        raise hinted(RuntimeError(with_hint("step must be nonzero", "pass a non-zero step")))
    if not (math.isfinite(fs) and math.isfinite(fe)):
        raise hinted(RuntimeError(with_hint(f"unsupported range: {_fmt(fs)} -> {_fmt(fe)}",
                                     "range needs finite bounds")))
    if (fe - fs) * fst < 0:
        raise hinted(RuntimeError(with_hint("upper bound and lower bound inconsistent with step sign",
                                     f"start={start}, end={end}, step={step}")))
    dt = default_np() if dtype is None else to_np(dtype)
    if dt.kind in "iub":
        # integer dtypes work on truncated copies of the arguments, as PyTorch's int64 does
        xs, xe, xst = math.trunc(fs), math.trunc(fe), math.trunc(fst)
        if xst == 0:
            raise hinted(RuntimeError(with_hint("step must be nonzero",
                                         f"step={step} truncates to 0 for {dt.name}")))
        q = abs(xe - xs) // abs(xst)
        n = (q if (xe - xs) * xst >= 0 else -q) + 1
        vals = (xs + np.arange(max(n, 0), dtype=np.int64) * xst).astype(dt)
    else:
        # range_out's plain loop: ``start + i * step`` in the accumulation type, not fused
        n = int((fe - fs) / fst) + 1
        acc = np.float32 if dt == np.float16 else np.float64
        vals = (acc(fs) + np.arange(n).astype(acc) * acc(fst)).astype(dt)
    return _finish(vals, requires_grad)

