"""TensorFlow's float32 CPU QR (``tf.linalg.qr``, reduced), bit for bit, for the Orthogonal initializer.

TensorFlow's CPU kernel maps the row-major input and runs Eigen's ``HouseholderQR``; the
reduced ``Q`` is ``householderQ() * Identity(m, min(m, n))``, evaluated into a column-major
matrix. Both phases apply one Householder reflector at a time (``applyHouseholderOnTheLeft``):
``tmp = essential^T * bottom``, ``tmp += row0``, ``row0 -= tau * tmp``,
``bottom -= (tau * essential) * tmp``, all float32, no fused multiply-adds (the wheel's Eigen
is built for AVX without FMA). What differs is the GEMV that forms ``tmp``:

* factorisation (row-major matrix): Eigen's column-major GEMV kernel, a sequential sum over
  the rows from zero, in chunks of 16 rows added to the result when there are 128 or more rows
  (a single column is a plain dot product, sequential, unchunked);
* ``Q`` (column-major result): Eigen's row-major GEMV kernel, eight lanes (``j mod 8``)
  accumulated sequentially and reduced as AVX ``predux`` does (``(l0+l4 + l2+l6) + (l1+l5 +
  l3+l7)``), then the remaining rows one by one; outputs left over after the kernel's 8/4/2-row
  groups first add a 4-lane SSE packet, reduced the same way.

Eigen switches to blocked (level-3) Householder updates from 48 reflectors on, whose GEMM
order is not emulated: :func:`eigen_qr_f32` returns ``None`` there and callers fall back.
"""

from __future__ import annotations

import numpy as np

__all__ = ["eigen_qr_f32", "MAX_EXACT_SIZE"]

_F = np.float32
MAX_EXACT_SIZE = 47  # min(m, n) below Eigen's BlockSize (48): unblocked paths only


def _colmajor_gemv(ess: np.ndarray, bottom: np.ndarray) -> np.ndarray:
    """``ess @ bottom`` as Eigen's column-major GEMV kernel (row-major ``bottom``) sums it."""
    n_rows, n_cols = bottom.shape
    step = 16 if (n_rows >= 128 and n_cols > 1) else max(n_rows, 1)
    res = np.zeros(n_cols, _F)
    for start in range(0, n_rows, step):
        acc = np.zeros(n_cols, _F)
        for i in range(start, min(n_rows, start + step)):
            acc += ess[i] * bottom[i]
        res = acc + res
    return res


def _predux(lanes: np.ndarray) -> np.ndarray:
    """Eigen's horizontal add of 8 (AVX) or 4 (SSE) float lanes along axis 0."""
    if lanes.shape[0] == 8:
        lanes = lanes[:4] + lanes[4:]
    return (lanes[0] + lanes[2]) + (lanes[1] + lanes[3])


def _rowmajor_gemv(ess: np.ndarray, bottom: np.ndarray) -> np.ndarray:
    """``ess @ bottom`` as Eigen's row-major GEMV kernel (column-major ``bottom``) sums it."""
    depth, n_out = bottom.shape
    packed = (depth // 8) * 8
    lanes = np.zeros((8, n_out), _F)
    for p in range(0, packed, 8):
        lanes += ess[p:p + 8, None] * bottom[p:p + 8]
    cc = _predux(lanes) if packed else np.zeros(n_out, _F)
    grouped = (n_out // 8) * 8          # outputs handled 8, 4 or 2 at a time
    rest = n_out - grouped
    if rest >= 4:
        grouped, rest = grouped + 4, rest - 4
    grouped += (rest // 2) * 2
    first = np.full(n_out, packed)
    if depth - packed >= 4 and grouped < n_out:   # the one-output loop's half packet
        half = ess[packed:packed + 4, None] * bottom[packed:packed + 4, grouped:]
        cc[grouped:] += _predux(half)
        first[grouped:] = packed + 4
    for j in range(packed, depth):
        upd = cc + ess[j] * bottom[j]
        cc = np.where(first <= j, upd, cc)
    return cc


def _apply_left(block: np.ndarray, ess: np.ndarray, tau: np.float32, col_major: bool) -> None:
    """``block = (I - tau v v^T) block`` with ``v = [1, ess]``, in place, as Eigen does."""
    if block.shape[0] == 1:
        block *= _F(1) - tau
        return
    if tau == 0:
        return
    bottom = block[1:]
    tmp = _rowmajor_gemv(ess, bottom) if col_major else _colmajor_gemv(ess, bottom)
    tmp = tmp + block[0]
    block[0] = block[0] - tau * tmp
    bottom -= (tau * ess)[:, None] * tmp[None, :]


def eigen_qr_f32(a: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """Reduced ``(q, r)`` of a float32 matrix with TensorFlow 2.21's CPU bits.

    Returns ``None`` for a wide matrix (``m < n``: Eigen updates the trailing columns with a
    blocked reflector) and when ``n`` exceeds :data:`MAX_EXACT_SIZE` (Eigen's blocked paths).

    >>> import numpy as np
    >>> q, r = eigen_qr_f32(np.array([[3.0, 1.0], [4.0, 2.0]], np.float32))
    >>> q.astype(float).round(4).tolist(), r.astype(float).round(4).tolist()
    ([[-0.6, -0.8], [-0.8, 0.6]], [[-5.0, -2.2], [0.0, 0.4]])
    """
    work = np.array(a, _F, copy=True)
    m, n = work.shape
    size = min(m, n)
    if m < n or size > MAX_EXACT_SIZE:
        return None
    tiny = np.finfo(_F).tiny
    taus = np.zeros(size, _F)
    with np.errstate(all="ignore"):
        for k in range(size):
            c0 = work[k, k]
            tail = work[k + 1:, k]
            sq = tail * tail
            tail_sq = _F(0)
            for x in sq:                       # squaredNorm of a strided column: sequential
                tail_sq = _F(tail_sq + x)
            if tail_sq <= tiny:
                tau, beta = _F(0), c0
                tail[:] = 0
            else:
                beta = _F(np.sqrt(_F(c0 * c0 + tail_sq)))
                if c0 >= 0:
                    beta = -beta
                tail[:] = tail / _F(c0 - beta)
                tau = _F(_F(beta - c0) / beta)
            taus[k] = tau
            work[k, k] = beta
            if k + 1 < n:
                _apply_left(work[k:, k + 1:], work[k + 1:, k].copy(), tau, col_major=False)
        q = np.eye(m, size, dtype=_F)
        for k in range(size - 1, -1, -1):
            _apply_left(q[k:], work[k + 1:, k].copy(), taus[k], col_major=True)
    return q, np.triu(work[:size])
