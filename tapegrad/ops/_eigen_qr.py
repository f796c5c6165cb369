"""TensorFlow's float32/float64 CPU QR (``tf.linalg.qr``), bit for bit, for it and Keras' Orthogonal.

TensorFlow 2.21's CPU ``Qr`` kernel maps the row-major input and runs Eigen's ``HouseholderQR``
(the wheel's Eigen is built for AVX without FMA: 8-float / 4-double packets, every product and
sum rounded separately; TensorFlow runs kernels with subnormals flushed to zero, FTZ/DAZ, which
:func:`_flush_denormals` reproduces for this thread while the emulation runs). The reduced ``Q`` is ``householderQ() * Identity(m, min(m, n))``, evaluated into a
column-major matrix; the complete one is ``householderQ()`` evaluated into the row-major output.
This module replays all of it in NumPy float32, in Eigen's summation orders:

* **Unblocked Householder** (a block of at most 48 columns, and ``Q`` from fewer than 48
  reflectors): one reflector at a time (``applyHouseholderOnTheLeft``): ``tmp = essential^T *
  bottom``, ``tmp += row0``, ``row0 -= tau * tmp``, ``bottom -= (tau * essential) * tmp``. The
  GEMV that forms ``tmp`` is Eigen's column-major kernel on a row-major matrix (a sequential sum
  over the rows, in chunks of 16 rows added to the result from 128 rows on; one column: a plain
  sequential dot product), or on a column-major one its row-major kernel (eight lanes ``j mod 8``
  reduced as AVX ``predux`` does, then the remaining rows one by one, with a 4-lane SSE packet
  first for the outputs left over after the 8/4/2-row groups).
* **Blocked Householder** (``householder_qr_inplace_blocked``, block size 48; and
  ``HouseholderSequence::applyThisOnTheLeft`` from 48 reflectors on, blocks of
  ``(length + 1) // 2`` below 96 reflectors, else 48, last block first): each block's reflectors
  become ``I - V T V^T`` (``make_block_householder_triangular_factor``: ``T``'s rows by a
  triangular matrix-vector product in panels of 8 plus column-major GEMVs, then the scalar
  back-substitution loop), applied as ``tmp = V^T A``, ``tmp = T^T tmp`` (``T tmp`` for ``Q``),
  ``A -= V tmp``, three triangular matrix products (``product_triangular_matrix_matrix``).
* **The triangular products** split the depth as Eigen does: ``kc`` from Eigen's blocking
  heuristic with ``KcFactor`` 4 and the L1 data cache size (read from sysfs, as Eigen reads it
  with CPUID: 48 KiB gives ``kc`` up to 152), diagonal panels of 32 (triangle on the left) or 16
  (triangle on the right) zero-padded into a buffer, each slice summed by the GEBP kernel and
  added to the result (``res += alpha * acc``).
* **GEBP's orders** (float: ``mr`` 16, ``nr`` 4): rows in groups of 16 sum each output
  sequentially over the slice's depth; a group of 8 or 4 rows against 4 columns accumulates
  even and odd ``k`` apart over the depth rounded down to 8, adds them, then the rest in order;
  a single row against 4 columns (the "swapped" kernel) keeps eight partial sums ``k mod 8``
  combined as ``((s0+s2)+(s4+s6)) + ((s1+s3)+(s5+s7))`` before the leftover pairs and the odd
  last ``k``; any other output (the columns past the last group of 4) is a plain sequential
  sum. Double: groups of 8, 4 and 2 rows, and the single-row kernel keeps four partial sums
  ``k mod 4``, ``(s0+s1)+(s2+s3)``, then the rest in order; ``kc`` from 8-byte scalars (120
  for a 48 KiB L1).

Sequential sums are computed with ``np.add.accumulate`` (strictly left to right in the array's
dtype), vectorised over the outputs. Checked bit for bit against TensorFlow 2.21 in both dtypes
for square, tall and wide shapes from 1x1 to 1000x60, 500x500 and 49x1000, complete and reduced,
degenerate and subnormal-range inputs (the conformance tests).
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import os
import platform
import struct
import sys
from collections.abc import Iterator
from functools import lru_cache

import numpy as np

__all__ = ["eigen_qr", "eigen_qr_f32", "emulated", "BLOCK_SIZE", "MAX_WORK"]

_F = np.float32
BLOCK_SIZE = 48      # Eigen's HouseholderQR / HouseholderSequence block size
_NR = 4              # GEBP register blocking: nr; mr is two AVX packets (no FMA)


def _mr(dt: np.dtype) -> int:
    return 16 if dt == np.float32 else 8
_CHUNK = 1 << 22     # elements of a product tensor formed at once


def _seq_sum(p: np.ndarray, axis: int) -> np.ndarray:
    """``p`` summed along ``axis`` strictly in order in float32, starting from ``+0`` (as Eigen's
    zero-initialised accumulators: the sums differ from ``p[0] + p[1] + ...`` at most in the
    sign of a zero, which the final ``+ 0`` fixes)."""
    if p.shape[axis] == 0:
        return np.zeros(p.shape[:axis] + p.shape[axis + 1:], p.dtype)
    acc = np.add.accumulate(p, axis=axis, dtype=p.dtype)
    return acc[(slice(None),) * axis + (-1,)] + p.dtype.type(0)


def _chunk_sums(p: np.ndarray, step: int) -> np.ndarray:
    """Sequential sums of ``p`` (terms along axis 0) over consecutive chunks of ``step`` terms:
    shape ``(n_chunks,) + p.shape[1:]`` (a zero-padded last chunk sums the same)."""
    n = p.shape[0]
    chunks = -(-n // step)
    if chunks * step != n:
        p = np.concatenate([p, np.zeros((chunks * step - n,) + p.shape[1:], p.dtype)])
    return _seq_sum(p.reshape((chunks, step) + p.shape[1:]), 1)


def _colmajor_gemv(ess: np.ndarray, bottom: np.ndarray) -> np.ndarray:
    """``ess @ bottom`` as Eigen's column-major GEMV kernel (row-major ``bottom``) sums it."""
    n_rows, n_cols = bottom.shape
    step = 16 if (n_rows >= 128 and n_cols > 1) else max(n_rows, 1)
    res = np.zeros(n_cols, bottom.dtype)
    for part in _chunk_sums(ess[:, None] * bottom, step):
        res = part + res
    return res


def _predux(lanes: np.ndarray) -> np.ndarray:
    """Eigen's horizontal add of 8 (AVX float), 4 (SSE float, AVX double) or 2 (SSE double)
    lanes along axis 0."""
    if lanes.shape[0] == 2:
        return lanes[0] + lanes[1]
    if lanes.shape[0] == 8:
        lanes = lanes[:4] + lanes[4:]
    return (lanes[0] + lanes[2]) + (lanes[1] + lanes[3])


def _rowmajor_gemv(ess: np.ndarray, bottom: np.ndarray) -> np.ndarray:
    """``ess @ bottom`` as Eigen's row-major GEMV kernel (column-major ``bottom``) sums it."""
    depth, n_out = bottom.shape
    width = 8 if bottom.dtype == np.float32 else 4      # an AVX packet; half of it: SSE
    packed = (depth // width) * width
    lanes = np.zeros((width, n_out), bottom.dtype)
    for p in range(0, packed, width):
        lanes += ess[p:p + width, None] * bottom[p:p + width]
    cc = _predux(lanes) if packed else np.zeros(n_out, bottom.dtype)
    grouped = (n_out // 8) * 8          # outputs handled 8, 4 or 2 at a time
    rest = n_out - grouped
    if rest >= 4:
        grouped, rest = grouped + 4, rest - 4
    grouped += (rest // 2) * 2
    first = np.full(n_out, packed)
    half = width // 2
    if depth - packed >= half and grouped < n_out:   # the one-output loop's half packet
        part = ess[packed:packed + half, None] * bottom[packed:packed + half, grouped:]
        cc[grouped:] += _predux(part)
        first[grouped:] = packed + half
    for j in range(packed, depth):
        upd = cc + ess[j] * bottom[j]
        cc = np.where(first <= j, upd, cc)
    return cc


def _apply_left(block: np.ndarray, ess: np.ndarray, tau: np.floating, col_major: bool) -> None:
    """``block = (I - tau v v^T) block`` with ``v = [1, ess]``, in place, as Eigen does."""
    if block.shape[0] == 1:
        block *= block.dtype.type(1) - tau
        return
    if tau == 0:
        return
    bottom = block[1:]
    tmp = _rowmajor_gemv(ess, bottom) if col_major else _colmajor_gemv(ess, bottom)
    tmp = tmp + block[0]
    block[0] = block[0] - tau * tmp
    bottom -= (tau * ess)[:, None] * tmp[None, :]


# ----------------------------------------------------------------------------- denormals
@lru_cache(maxsize=1)
def _libm() -> ctypes.CDLL | None:
    """glibc's libm on x86-64 Linux (its ``fenv_t`` keeps MXCSR at byte 28), else None."""
    if not sys.platform.startswith("linux") or platform.machine().lower() not in ("x86_64", "amd64"):
        return None
    name = ctypes.util.find_library("m")
    try:
        return ctypes.CDLL(name) if name else None
    except OSError:
        return None


@contextlib.contextmanager
def _flush_denormals() -> Iterator[None]:
    """This thread's SSE/AVX arithmetic with subnormals flushed to zero (MXCSR FTZ and DAZ),
    as TensorFlow runs its kernels; NumPy's loops then round as TensorFlow's do. Elsewhere
    (no glibc on x86-64) nothing changes and results with subnormal intermediates can differ."""
    libm = _libm()
    saved = ctypes.create_string_buffer(32)
    if libm is None or libm.fegetenv(saved) != 0:
        yield
        return
    flushed = ctypes.create_string_buffer(saved.raw, 32)
    struct.pack_into("<I", flushed, 28, struct.unpack_from("<I", saved.raw, 28)[0] | 0x8040)
    libm.fesetenv(flushed)
    try:
        yield
    finally:
        libm.fesetenv(saved)


# ----------------------------------------------------------------------------- blocking sizes
def _read(path: str) -> str:
    with open(path) as f:
        return f.read().strip()


def _cache_size(level: int, kinds: tuple[str, ...], default: int) -> int:
    """Bytes of cpu0's cache of ``level`` (sysfs), or ``default``."""
    base = "/sys/devices/system/cpu/cpu0/cache"
    try:
        for entry in sorted(os.listdir(base)):
            if not entry.startswith("index"):
                continue
            d = f"{base}/{entry}"
            if int(_read(f"{d}/level")) == level and _read(f"{d}/type") in kinds:
                text = _read(f"{d}/size")
                units = {"K": 1024, "M": 1024 * 1024}
                return int(text[:-1]) * units[text[-1]] if text[-1] in units else int(text)
    except (OSError, ValueError, IndexError):
        pass
    return default


@lru_cache(maxsize=1)
def _caches() -> tuple[int, int, int]:
    """L1 data, L2 and L3 sizes in bytes, as Eigen's ``queryCacheSizes`` finds them by CPUID
    (Eigen's defaults when unknown; ``TAPEGRAD_EIGEN_L1`` overrides the L1 size)."""
    env = os.environ.get("TAPEGRAD_EIGEN_L1")
    l1 = int(env) if env else _cache_size(1, ("Data", "Unified"), 32 * 1024)
    return (l1, _cache_size(2, ("Unified", "Data"), 256 * 1024),
            _cache_size(3, ("Unified", "Data"), 2 * 1024 * 1024))


def _blocking(k: int, m: int, n: int, kc_factor: int,
              dt: np.dtype = np.dtype(np.float32)) -> tuple[int, int]:
    """``(kc, mc)`` of Eigen's ``evaluateProductBlockingSizesHeuristic`` (one thread)."""
    if max(k, m, n) < 48:
        return k, m
    l1, l2, l3 = _caches()
    mr, sz = _mr(dt), dt.itemsize
    k_div = kc_factor * (mr * sz + _NR * sz)
    k_sub = mr * _NR * sz
    max_kc = max(((l1 - k_sub) // k_div) & ~7, 1)
    old_k = k
    if k > max_kc:
        k = (max_kc if k % max_kc == 0
             else max_kc - 8 * ((max_kc - 1 - (k % max_kc)) // (8 * (k // max_kc + 1))))
    actual_l2 = 1572864
    remaining_l1 = l1 - k_sub - m * k * sz
    if remaining_l1 >= _NR * sz * k:
        max_nc = remaining_l1 // (k * sz)
    else:
        max_nc = (3 * actual_l2) // (2 * 2 * max_kc * sz)
    nc = min(actual_l2 // (2 * k * sz), max_nc) & ~(_NR - 1)
    if n <= nc and old_k == k:
        problem_size = k * n * sz
        actual_lm, max_mc = actual_l2, m
        if problem_size <= 1024:
            actual_lm = l1
        elif l3 != 0 and problem_size <= 32768:
            actual_lm, max_mc = l2, min(576, max_mc)
        mc = min(actual_lm // (3 * k * sz), max_mc)
        if mc > mr:
            mc -= mc % mr
        elif mc == 0:
            return k, m
        m = mc if m % mc == 0 else mc - mr * ((mc - (m % mc)) // (mr * (m // mc + 1)))
    return k, m


# ----------------------------------------------------------------------------- GEBP
def _products(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return a[:, :, None] * b[None, :, :]          # (rows, depth, cols), each product rounded


def _acc_seq(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    rows, depth = a.shape
    if rows * b.shape[1] >= 4096:       # large outputs: one pass per k is cheaper
        acc = np.zeros((rows, b.shape[1]), a.dtype)
        for k in range(depth):
            acc += a[:, k:k + 1] * b[k:k + 1]
        return acc
    out = np.empty((rows, b.shape[1]), a.dtype)
    step = max(1, _CHUNK // max(1, depth * b.shape[1]))
    for r0 in range(0, rows, step):
        out[r0:r0 + step] = _seq_sum(_products(a[r0:r0 + step], b), 1)
    return out


def _acc_even_odd(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    peeled = a.shape[1] & ~7
    acc = (_seq_sum(_products(a[:, 0:peeled:2], b[0:peeled:2]), 1)
           + _seq_sum(_products(a[:, 1:peeled:2], b[1:peeled:2]), 1))
    for k in range(peeled, a.shape[1]):
        acc = acc + a[:, k:k + 1] * b[k:k + 1]
    return acc


def _acc_swapped(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    depth = a.shape[1]
    if a.dtype != np.float32:      # double: four partial sums k mod 4, one k per packet
        end4 = (depth // 4) * 4
        s4 = [_seq_sum(_products(a[:, r:end4:4], b[r:end4:4]), 1) for r in range(4)]
        acc = (s4[0] + s4[1]) + (s4[2] + s4[3])
        for k in range(end4, depth):
            acc = acc + a[:, k:k + 1] * b[k:k + 1]
        return acc
    end8, end2 = (depth // 8) * 8, (depth // 2) * 2
    s = [_seq_sum(_products(a[:, r:end8:8], b[r:end8:8]), 1) for r in range(8)]
    even = (s[0] + s[2]) + (s[4] + s[6])
    odd = (s[1] + s[3]) + (s[5] + s[7])
    for k in range(end8, end2, 2):
        even = even + a[:, k:k + 1] * b[k:k + 1]
        odd = odd + a[:, k + 1:k + 2] * b[k + 1:k + 2]
    acc = even + odd
    if depth > end2:
        acc = acc + a[:, depth - 1:depth] * b[depth - 1:depth]
    return acc


def _gebp(res: np.ndarray, a: np.ndarray, b: np.ndarray, alpha: np.floating) -> None:
    """``res += alpha * (a @ b)`` in place, in the order of Eigen's GEBP kernel (float: blocks
    of 16, 8, 4 rows then single ones; double: 8, 4, 2, 1)."""
    rows, cols = a.shape[0], b.shape[1]
    if rows == 0 or cols == 0:
        return
    mr = _mr(a.dtype)
    p2 = (rows // mr) * mr
    p1 = (rows // (mr // 2)) * (mr // 2)
    ph = p1 + ((rows - p1) // (mr // 4)) * (mr // 4)
    c4 = (cols // 4) * 4
    acc = np.empty((rows, cols), a.dtype)
    if p2:
        acc[:p2] = _acc_seq(a[:p2], b)
    for lo, hi, grouped in ((p2, ph, _acc_even_odd), (ph, rows, _acc_swapped)):
        if hi > lo:
            if c4:
                acc[lo:hi, :c4] = grouped(a[lo:hi], b[:, :c4])
            if cols > c4:
                acc[lo:hi, c4:] = _acc_seq(a[lo:hi], b[:, c4:])
    res[...] = res + acc * alpha


# ----------------------------------------------------------------------------- triangular products
def _tri(block: np.ndarray, lower: bool, unit: bool) -> np.ndarray:
    """A square diagonal block as Eigen's zero-padded triangular buffer."""
    t = np.tril(block, -1) if lower else np.triu(block, 1)
    idx = np.arange(block.shape[0])
    t[idx, idx] = 1 if unit else block[idx, idx]
    return t


def _trmm_left(lhs: np.ndarray, rhs: np.ndarray, res: np.ndarray, alpha: np.floating,
               lower: bool, unit: bool, kc: int, mc: int) -> None:
    """``res += alpha * tri(lhs) @ rhs`` (column-major result), as Eigen's kernel splits it."""
    diag = min(lhs.shape)
    rows = lhs.shape[0] if lower else diag
    depth = diag if lower else lhs.shape[1]
    mc = min(rows, mc)
    pw = min(2 * max(_mr(lhs.dtype), _NR), kc, mc)
    k2 = depth if lower else 0
    while (k2 > 0) if lower else (k2 < depth):
        akc = min(k2 if lower else depth - k2, kc)
        ak2 = k2 - akc if lower else k2
        if not lower and k2 < rows < k2 + akc:      # trapezoid: end a slice on the diagonal
            akc = rows - k2
            k2 = k2 + akc - kc
        if lower or ak2 < rows:
            for k1 in range(0, akc, pw):
                apw = min(akc - k1, pw)
                sb = ak2 + k1
                _gebp(res[sb:sb + apw], _tri(lhs[sb:sb + apw, sb:sb + apw], lower, unit),
                      rhs[sb:sb + apw], alpha)
                length = akc - k1 - apw if lower else k1
                if length > 0:
                    st = sb + apw if lower else ak2
                    _gebp(res[st:st + length], lhs[st:st + length, sb:sb + apw],
                          rhs[sb:sb + apw], alpha)
        start, end = (k2, rows) if lower else (0, min(ak2, rows))
        for i2 in range(start, end, mc):
            i3 = min(i2 + mc, end)
            _gebp(res[i2:i3], lhs[i2:i3, ak2:ak2 + akc], rhs[ak2:ak2 + akc], alpha)
        k2 = k2 - kc if lower else k2 + kc


def _trmm_right(lhs: np.ndarray, rhs: np.ndarray, res: np.ndarray, alpha: np.floating,
                lower: bool, unit: bool, kc: int, mc: int) -> None:
    """``res += alpha * lhs @ tri(rhs)`` (column-major result), as Eigen's kernel splits it."""
    rows = lhs.shape[0]
    diag = min(rhs.shape)
    depth = rhs.shape[0] if lower else diag
    cols = diag if lower else rhs.shape[1]
    mc = min(rows, mc)
    spw = max(_mr(lhs.dtype), _NR)
    k2 = 0 if lower else depth
    while (k2 < depth) if lower else (k2 > 0):
        akc = min(depth - k2 if lower else k2, kc)
        ak2 = k2 if lower else k2 - akc
        if lower and k2 < cols < ak2 + akc:
            akc = cols - k2
            k2 = ak2 + akc - kc
        rs = min(cols, ak2) if lower else cols - k2
        panels: list[tuple[int, int, np.ndarray]] = []
        if not (lower and ak2 >= cols):
            for j2 in range(0, akc, spw):
                apw = min(akc - j2, spw)
                off, length = (j2, akc - j2) if lower else (0, j2 + apw)
                panel = rhs[ak2 + off:ak2 + off + length, ak2 + j2:ak2 + j2 + apw].copy()
                d0 = j2 - off
                panel[d0:d0 + apw] = _tri(panel[d0:d0 + apw], lower, unit)
                panels.append((j2, off, panel))
        c0 = 0 if lower else k2
        for i2 in range(0, rows, mc):
            i3 = min(rows, i2 + mc)
            for j2, off, panel in panels:
                _gebp(res[i2:i3, ak2 + j2:ak2 + j2 + panel.shape[1]],
                      lhs[i2:i3, ak2 + off:ak2 + off + panel.shape[0]], panel, alpha)
            _gebp(res[i2:i3, c0:c0 + rs], lhs[i2:i3, ak2:ak2 + akc],
                  rhs[ak2:ak2 + akc, c0:c0 + rs], alpha)
        k2 = k2 + kc if lower else k2 - kc


def _trmm(lhs: np.ndarray, rhs: np.ndarray, res: np.ndarray, alpha: float, lower: bool,
          unit: bool, row_major: bool) -> None:
    """``res += alpha * tri(lhs) @ rhs`` as ``triangular_product_impl`` (a row-major result is
    computed as its transpose, the triangle then on the right)."""
    srows = lhs.shape[0] if lower else min(lhs.shape)
    sdepth = min(lhs.shape) if lower else lhs.shape[1]
    scols = rhs.shape[1]
    kc, mc = _blocking(sdepth, scols if row_major else srows,
                       srows if row_major else scols, 4, res.dtype)
    scalar = res.dtype.type(alpha)
    if row_major:
        _trmm_right(rhs.T, lhs.T, res.T, scalar, not lower, unit, kc, mc)
    else:
        _trmm_left(lhs, rhs, res, scalar, lower, unit, kc, mc)


# ----------------------------------------------------------------------------- block reflectors
def _gemv_colmajor(lhs: np.ndarray, x: np.ndarray, res: np.ndarray, alpha: np.floating) -> None:
    """``res += alpha * lhs @ x`` as Eigen's column-major GEMV (16-column chunks from 128)."""
    cols = lhs.shape[1]
    for part in _chunk_sums((lhs * x[None, :]).T, cols if cols < 128 else 16):
        res[...] = res + part * alpha


def _trmv_row(lhs: np.ndarray, rhs: np.ndarray, alpha: np.floating) -> np.ndarray:
    """``alpha * tri(lhs) @ rhs`` for a unit upper-trapezoidal ``lhs`` (``rt x rs``) by Eigen's
    column-major triangular matrix-vector product: panels of 8 columns; inside a panel each
    output starts from its diagonal term (``+0 + alpha * rhs``) and adds ``(alpha * rhs[k]) *
    lhs[., k]`` for the panel's later ``k``; then every later panel's rectangular part by a
    GEMV (a sequential sum times ``alpha``, added), then the columns past the triangle by the
    column-major GEMV (16-column chunks from 128)."""
    rt = lhs.shape[0]
    dt = lhs.dtype
    scaled = rhs[:rt] * alpha
    jj = np.arange(rt)
    cols = (jj // 8 * 8)[:, None] + np.arange(8)[None, :]            # each output's panel
    inside = np.minimum(cols, rt - 1)
    later = (cols > jj[:, None]) & (cols < rt)
    terms = np.where(later, scaled[inside] * lhs[jj[:, None], inside], dt.type(0))
    terms[jj, jj % 8] = scaled
    row = _seq_sum(terms, 1)
    panels = -(-rt // 8)
    if panels > 1:
        prods = np.zeros((rt, panels * 8), dt)
        prods[:, :rt] = lhs[:, :rt] * rhs[None, :rt]
        sums = _seq_sum(prods.reshape(rt, panels, 8), 2)
        for p in range(1, panels):
            row = np.where(jj < 8 * p, row + sums[:, p] * alpha, row)
    if lhs.shape[1] > rt:
        _gemv_colmajor(lhs[:, rt:], rhs[rt:], row, alpha)
    return row


def _triangular_factor(vectors: np.ndarray, h: np.ndarray) -> np.ndarray:
    """``make_block_householder_triangular_factor``: ``T`` with ``H_0..H_{b-1} = I - V T V^T``."""
    nb = vectors.shape[1]
    t = np.zeros((nb, nb), vectors.dtype)
    for i in range(nb - 1, -1, -1):
        rt = nb - i - 1
        if rt > 0:
            # row = -h_i * v_i^T * tri(V[i+1:, i+1:]), then row * tri(T[i+1:, i+1:]) in place:
            # T[i, l] = t_l T[l, l] + t_{l-1} T[l-1, l] + ... + t_{i+1} T[i+1, l], in that order
            row = _trmv_row(vectors[i + 1:, i + 1:].T, vectors[i + 1:, i], -h[i])
            sub = t[i + 1:, i + 1:]
            first = row * np.diagonal(sub)
            if first.all():
                terms = row[:, None] * sub                       # (j, l), zero below the diagonal
                terms[np.tril_indices(rt, -1)] = 0
                t[i, i + 1:] = _seq_sum(terms[::-1], 0)         # j descending; +0s before t_l T_ll
            else:                                                # a signed zero first: as Eigen
                t[i, i + 1:] = row
                for j in range(nb - 1, i, -1):
                    z = t[i, j]
                    t[i, j] = z * t[j, j]
                    if j + 1 < nb:
                        t[i, j + 1:] = t[i, j + 1:] + z * t[j, j + 1:]
        t[i, i] = h[i]
    return t


def _apply_block(mat: np.ndarray, vectors: np.ndarray, h: np.ndarray, forward: bool,
                 row_major: bool) -> None:
    """``apply_block_householder_on_the_left``: ``mat = H_0..H_{b-1} mat`` (``forward``) or
    ``H_{b-1}..H_0 mat``, in place."""
    t = _triangular_factor(vectors, h)
    tmp = np.zeros((vectors.shape[1], mat.shape[1]), mat.dtype)
    _trmm(vectors.T, mat, tmp, 1.0, False, True, False)
    tmp2 = np.zeros_like(tmp)
    _trmm(t if forward else t.T, tmp, tmp2, 1.0, not forward, False, False)
    _trmm(vectors, tmp2, mat, -1.0, True, True, row_major)


# ----------------------------------------------------------------------------- QR
def _householder_columns(work: np.ndarray, taus: np.ndarray, k0: int, k1: int) -> None:
    """``householder_qr_inplace_unblocked`` on the columns ``k0:k1`` (rows ``k0:``)."""
    tiny = np.finfo(work.dtype).tiny
    for k in range(k0, k1):
        c0 = work[k, k]
        tail = work[k + 1:, k]
        tail_sq = _seq_sum(tail * tail, 0)         # squaredNorm of a strided column
        if tail_sq <= tiny:
            tau, beta = work.dtype.type(0), c0
            tail[:] = 0
        else:
            beta = np.sqrt(c0 * c0 + tail_sq)
            if c0 >= 0:
                beta = -beta
            tail[:] = tail / (c0 - beta)
            tau = (beta - c0) / beta
        taus[k] = tau
        work[k, k] = beta
        if k + 1 < k1:
            _apply_left(work[k:, k + 1:k1], work[k + 1:, k].copy(), tau, col_major=False)


#: the largest ``m * n * min(m, n)`` emulated by default: a 500 x 500 QR (about 0.3 s);
#: larger ones (an LSTM(512)'s recurrent kernel takes 2.6 s, LSTM(1024)'s 25 s) use
#: LAPACK's QR, whose bits differ.  ``TAPEGRAD_EIGEN_QR=always`` / ``never`` overrides it.
MAX_WORK = 125_000_000


def emulated(m: int, n: int) -> bool:
    """Whether an ``m x n`` QR is computed with TensorFlow's bits (see :data:`MAX_WORK`)."""
    env = os.environ.get("TAPEGRAD_EIGEN_QR", "").lower()
    if env in ("always", "1"):
        return True
    if env in ("never", "0"):
        return False
    return m * n * min(m, n) <= MAX_WORK


def eigen_qr_f32(a: np.ndarray, full_matrices: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """:func:`eigen_qr` of ``a`` as float32."""
    return eigen_qr(np.asarray(a, _F), full_matrices)


def eigen_qr(a: np.ndarray, full_matrices: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """``(q, r)`` of a float32 or float64 matrix with TensorFlow 2.21's CPU bits
    (``tf.linalg.qr``).

    ``q`` is ``m x min(m, n)`` (``m x m`` with ``full_matrices``), ``r`` ``min(m, n) x n``
    (``m x n`` with ``full_matrices``), in ``a``'s dtype.

    >>> import numpy as np
    >>> q, r = eigen_qr_f32(np.array([[3.0, 1.0], [4.0, 2.0]], np.float32))
    >>> q.astype(float).round(4).tolist(), r.astype(float).round(4).tolist()
    ([[-0.6, -0.8], [-0.8, 0.6]], [[-5.0, -2.2], [0.0, 0.4]])
    """
    work = np.array(a, copy=True)
    if work.dtype not in (np.float32, np.float64):
        raise TypeError(f"eigen_qr: float32 or float64, got {work.dtype}")
    m, n = work.shape
    size = min(m, n)
    taus = np.zeros(size, work.dtype)
    with np.errstate(all="ignore"), _flush_denormals():
        block = min(BLOCK_SIZE, size)
        for k in range(0, size, max(block, 1)):
            bs = min(size - k, block)
            _householder_columns(work, taus, k, k + bs)
            if n > k + bs:     # the trailing columns by the block reflector (row-major)
                _apply_block(work[k:, k + bs:], work[k:, k:k + bs], taus[k:k + bs], False, True)
        q = _householder_q(work, taus, m if full_matrices else size, full_matrices)
    r = np.triu(work) if full_matrices else np.triu(work[:size])
    return q, r


def _householder_q(work: np.ndarray, taus: np.ndarray, cols: int, identity: bool) -> np.ndarray:
    """``householderQ() * Identity(m, cols)`` (column-major, reduced ``Q``), or with
    ``identity`` ``householderQ()`` evaluated into the row-major output (the complete ``Q``,
    whose reflections skip the columns left of their rows)."""
    m = work.shape[0]
    length = taus.shape[0]
    q = np.eye(m, cols, dtype=work.dtype)
    if identity and length <= BLOCK_SIZE:      # evalTo: unblocked up to BlockSize reflectors
        for k in range(length - 1, -1, -1):
            _apply_left(q[k:, k:], work[k + 1:, k].copy(), taus[k], col_major=False)
        return q
    if length >= BLOCK_SIZE and cols > 1:
        block = (length + 1) // 2 if length < 2 * BLOCK_SIZE else BLOCK_SIZE
        for i in range(0, length, block):
            end = length - i
            k = max(0, end - block)
            sub = q[k:, k:] if identity else q[k:]
            _apply_block(sub, work[k:, k:end], taus[k:end], True, identity)
        return q
    for k in range(length - 1, -1, -1):
        _apply_left(q[k:], work[k + 1:, k].copy(), taus[k], col_major=True)
    return q
