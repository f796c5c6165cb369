"""A fused LSTM recurrence: every time step of one layer and direction as one primitive.

Written step by step in tapegrad ops, an LSTM records about fifteen nodes per
time step, and the Python overhead of recording and running them dominates
for the sizes small models use.  ``lstm_seq`` runs the recurrence in NumPy
and its VJP is back-propagation through time in NumPy (first-order backward,
grad mode off); when the backward pass is itself recorded (``create_graph``,
nested tapes) the VJP is the same recurrence written in tapegrad ops, so
every derivative order works.  The input projection ``x W_ih^T + b_ih`` of
all steps is one matmul outside the primitive.

Gate layout is PyTorch's (``i, f, g, o`` along the last axis; Keras's
``i, f, c, o`` is the same), ``z_t = xw_t + h_{t-1} W_hh^T + b_hh``,
``c_t = f c_{t-1} + i g``, ``h_t = o tanh(c_t)``.  The result packs, along
axis 0 of a ``(7 T + 1, N, H)`` array: rows ``0..T-1`` the ``h_t``, row ``T``
the final ``c``, then for each step ``t`` six rows ``i, f, o, g, c_t,
tanh(c_t)`` (the three sigmoid gates together, so one pass computes them): what back-propagation needs, kept in the result (as PyTorch keeps
its workspace) so the backward pass does not run the recurrence again.
Callers read only the first ``T + 1`` rows.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._core.registry import defop
from .._core.tensor import Tensor
from ._raw import data, raw, wrap
from .elementwise import add, multiply, sigmoid, subtract, tanh
from .linalg import matmul
from .shape import concatenate, expand_dims, getitem, stack, swapaxes


def _sig(x: np.ndarray) -> np.ndarray:
    with np.errstate(over="ignore"):
        return 1.0 / (1.0 + np.exp(-x))


def _forward_np(xw: np.ndarray, h0: np.ndarray, c0: np.ndarray, w_hh: np.ndarray,
                b_hh: np.ndarray) -> np.ndarray:
    """The recurrence, with every step's gates and cell state (the packed layout above).

    The gates are computed in place in their slots of the result (no temporaries per
    step beyond the one ``z``).  The recurrent weight and the input projection (with
    ``b_hh`` added, all steps at once) are reordered to ``i, f, o, g`` and the three
    sigmoid gates negated once per call, so the product gives ``-z`` for them and
    ``sigmoid = 1 / (1 + exp(-z))`` is three passes over the three gates together
    (negation is exact: the same numbers as gate by gate).
    """
    steps, n, g4 = xw.shape
    hid = g4 // 4
    dt = np.result_type(xw, h0, w_hh)
    out = np.empty((7 * steps + 1, n, hid), dtype=dt)
    h2, h3 = 2 * hid, 3 * hid
    wt = np.empty((hid, g4), dtype=dt)
    np.negative(w_hh[:h2].T, out=wt[:, :h2])  # -W_i, -W_f
    np.negative(w_hh[h3:].T, out=wt[:, h2:h3])  # -W_o
    wt[:, h3:] = w_hh[h2:h3].T  # W_g
    xb = np.empty((steps, n, g4), dtype=dt)
    bn = np.negative(np.asarray(b_hh, dtype=dt))
    np.subtract(bn[:h2], xw[..., :h2], out=xb[..., :h2])  # -(xw + b) for i, f
    np.subtract(bn[h3:], xw[..., h3:], out=xb[..., h2:h3])  # and o
    np.add(xw[..., h2:h3], b_hh[h2:h3], out=xb[..., h3:])  # g
    z = np.empty((n, g4), dtype=dt)
    zt = z.reshape(n, 4, hid).transpose(1, 0, 2)
    h, c = h0, c0
    with np.errstate(over="ignore"):
        for t in range(steps):
            np.matmul(h, wt, out=z)
            z += xb[t]
            st = out[steps + 1 + 6 * t: steps + 7 + 6 * t]  # i, f, o, g, c, tanh(c)
            sg = st[0:3]
            np.exp(zt[0:3], out=sg)  # sigmoid, in place: 1 / (1 + e^-z)
            sg += 1.0
            np.reciprocal(sg, out=sg)
            np.tanh(zt[3], out=st[3])
            np.multiply(st[1], c, out=st[4])
            np.multiply(st[0], st[3], out=st[5])  # tanh(c)'s slot holds i g for a moment
            st[4] += st[5]
            c = st[4]
            np.tanh(c, out=st[5])
            h = out[t]
            np.multiply(st[2], st[5], out=h)
    out[steps] = c
    return out


@defop("lstm_seq", saves=("xw", "h0", "c0", "w_hh", "b_hh", "out"), needs=True)
def lstm_seq(xw: Any, h0: Any, c0: Any, w_hh: Any, b_hh: Any) -> Any:
    """All steps of one LSTM layer: packed ``(T + 1, N, H)`` (hidden states, then final c)."""
    return _forward_np(np.asarray(xw), np.asarray(h0), np.asarray(c0), np.asarray(w_hh),
                       np.asarray(b_hh))


def _bptt_np(g: np.ndarray, out: np.ndarray, xw: np.ndarray, h0: np.ndarray, c0: np.ndarray,
             w_hh: np.ndarray) -> tuple[np.ndarray, ...]:
    """Back-propagation through time on the saved gates, in place in a few buffers (the
    sigmoid gates' ``s (1 - s)`` in one pass for all three); the recurrent weight's
    gradient is one product over all steps after the loop."""
    steps, n, g4 = xw.shape
    hid = g4 // 4
    dt = out.dtype
    dxw = np.empty(xw.shape, dtype=dt)
    dh = np.zeros((n, hid), dtype=dt)
    dc = np.array(g[steps], dtype=dt)
    tmp = np.empty((n, hid), dtype=dt)
    ds = np.empty((3, n, hid), dtype=dt)
    for t in range(steps - 1, -1, -1):
        st = out[steps + 1 + 6 * t: steps + 7 + 6 * t]
        i, f, o, gg, _, tc = st
        c_prev = out[steps + 1 + 6 * (t - 1) + 4] if t else c0
        dh += g[t]
        np.multiply(tc, tc, out=tmp)  # dc += dh o (1 - tanh^2 c)
        np.subtract(1.0, tmp, out=tmp)
        tmp *= o
        tmp *= dh
        dc += tmp
        np.subtract(1.0, st[0:3], out=ds)  # s (1 - s) of i, f, o
        ds *= st[0:3]
        dz = dxw[t]
        di, df, dg, do = dz[:, :hid], dz[:, hid:2 * hid], dz[:, 2 * hid:3 * hid], dz[:, 3 * hid:]
        np.multiply(ds[0], gg, out=di)  # dc g i (1 - i)
        di *= dc
        np.multiply(ds[1], c_prev, out=df)  # dc c_prev f (1 - f)
        df *= dc
        np.multiply(gg, gg, out=dg)  # dc i (1 - g^2)
        np.subtract(1.0, dg, out=dg)
        dg *= i
        dg *= dc
        np.multiply(ds[2], tc, out=do)  # dh tanh(c) o (1 - o)
        do *= dh
        np.matmul(dz, w_hh, out=dh)
        dc *= f
    # dW = sum_t dz_t^T h_{t-1}: one product of all steps' rows
    h_prev = np.concatenate([np.asarray(h0, dtype=dt)[None], out[:steps - 1]], axis=0)
    dw = dxw.reshape(steps * n, g4).T @ h_prev.reshape(steps * n, hid)
    db = dxw.sum(axis=(0, 1))
    return dxw, dh, dc, dw, db


def _step_ops(xw_t: Any, h: Any, c: Any, w_hh: Any, b_hh: Any) -> tuple[Any, ...]:
    hid = np.shape(data(h))[-1]
    z = add(add(xw_t, matmul(h, swapaxes(w_hh, 0, 1))), b_hh)
    i = sigmoid(getitem(z, (Ellipsis, slice(0, hid))))
    f = sigmoid(getitem(z, (Ellipsis, slice(hid, 2 * hid))))
    g = tanh(getitem(z, (Ellipsis, slice(2 * hid, 3 * hid))))
    o = sigmoid(getitem(z, (Ellipsis, slice(3 * hid, None))))
    c2 = add(multiply(f, c), multiply(i, g))
    tc = tanh(c2)
    return multiply(o, tc), c2, i, f, g, o, tc


def _bptt_ops(g: Tensor, xw: Any, h0: Any, c0: Any, w_hh: Any, b_hh: Any) -> tuple[Any, ...]:
    """The VJP in tapegrad ops (recorded when the backward pass is differentiated)."""
    steps = np.shape(data(xw))[0]
    h, c = h0, c0
    saved = []
    for t in range(steps):
        xt = getitem(xw, t)
        h2, c2, i, f, gg, o, tc = _step_ops(xt, h, c, w_hh, b_hh)
        saved.append((h, c, i, f, gg, o, tc))
        h, c = h2, c2
    dh: Any = None
    dc: Any = getitem(g, steps)
    dzs: list[Any] = [None] * steps
    dw: Any = None
    for t in range(steps - 1, -1, -1):
        h_prev, c_prev, i, f, gg, o, tc = saved[t]
        gt = getitem(g, t)
        dh = gt if dh is None else add(dh, gt)
        dc = add(dc, multiply(multiply(dh, o), subtract(1.0, multiply(tc, tc))))
        di = multiply(multiply(dc, gg), multiply(i, subtract(1.0, i)))
        df = multiply(multiply(dc, c_prev), multiply(f, subtract(1.0, f)))
        dg = multiply(multiply(dc, i), subtract(1.0, multiply(gg, gg)))
        do = multiply(multiply(dh, tc), multiply(o, subtract(1.0, o)))
        dz = concatenate([di, df, dg, do], axis=-1)
        dzs[t] = dz
        term = matmul(swapaxes(dz, 0, 1), h_prev)
        dw = term if dw is None else add(dw, term)
        dh = matmul(dz, w_hh)
        dc = multiply(dc, f)
    dxw = stack(dzs, axis=0)
    from .reduce import sum as _sum

    return dxw, dh, dc, dw, _sum(dxw, axis=(0, 1))


@lstm_seq.defvjp
def _(g: Tensor, xw: Any, h0: Any, c0: Any, w_hh: Any, b_hh: Any, out: Tensor,
      needs: tuple[bool, ...]) -> Any:
    if raw():
        grads = _bptt_np(np.asarray(g._data), out._data, np.asarray(data(xw)),
                         np.asarray(data(h0)), np.asarray(data(c0)), np.asarray(data(w_hh)))
        return tuple(wrap(a, g) if need else None for a, need in zip(grads, needs))
    grads = _bptt_ops(g, xw, h0, c0, w_hh, b_hh)
    return tuple(a if need else None for a, need in zip(grads, needs))


@lstm_seq.defjvp
def _(dxw: Any, dh0: Any, dc0: Any, dw: Any, db: Any, xw: Any, h0: Any, c0: Any, w_hh: Any,
      b_hh: Any, *, out: Any) -> Any:
    # forward-mode through the recurrence: dz_t = dxw_t + dh W^T + h dW^T + db, then the gates
    steps = np.shape(data(xw))[0]
    h, c = h0, c0
    dh, dc = dh0, dc0
    dhs = []
    stash: list[Any] = []
    for t in range(steps):
        h2, c2, i, f, gg, o, tc = _step_ops(getitem(xw, t), h, c, w_hh, b_hh)
        parts = [getitem(dxw, t) if dxw is not None else None,
                 matmul(dh, swapaxes(w_hh, 0, 1)) if dh is not None else None,
                 matmul(h, swapaxes(dw, 0, 1)) if dw is not None else None, db]
        dz: Any = None
        for p in parts:
            if p is not None:
                dz = p if dz is None else add(dz, p)
        hid = np.shape(data(h))[-1]
        dsq = multiply(o, subtract(1.0, multiply(tc, tc)))
        if dz is None:  # only the initial cell state carries a tangent
            dc2 = multiply(f, dc)
            dh = multiply(dsq, dc2)
        else:
            def gate(k: int, dz: Any = dz, hid: int = hid) -> Any:
                return getitem(dz, (Ellipsis, slice(k * hid, (k + 1) * hid)))

            di = multiply(gate(0), multiply(i, subtract(1.0, i)))
            df = multiply(gate(1), multiply(f, subtract(1.0, f)))
            dg = multiply(gate(2), subtract(1.0, multiply(gg, gg)))
            do = multiply(gate(3), multiply(o, subtract(1.0, o)))
            dc2 = add(add(multiply(df, c), multiply(i, dg)), multiply(di, gg))
            if dc is not None:
                dc2 = add(dc2, multiply(f, dc))
            dh = add(multiply(do, tc), multiply(dsq, dc2))
        dc = dc2
        dhs.append(dh)
        if dz is None:
            zero = multiply(dc2, 0.0)
            stash += [zero, zero, zero, zero]
        else:
            stash += [di, df, do, dg]  # the packed order: the sigmoid gates first
        stash += [dc2, multiply(subtract(1.0, multiply(tc, tc)), dc2)]
        h, c = h2, c2
    return concatenate([stack(dhs, axis=0), expand_dims(dc, 0), stack(stash, axis=0)], axis=0)


@lstm_seq.defbatch
def _(batched: tuple[bool, ...], xw: Any, h0: Any, c0: Any, w_hh: Any, b_hh: Any) -> Any:
    # the recurrence's own batch axis N takes the vmap batch when the weights are shared
    if batched[3] or batched[4]:
        b = next(np.shape(data(v))[0] for v, k in zip((xw, h0, c0, w_hh, b_hh), batched) if k)
        outs = [lstm_seq(*[getitem(v, j) if k else v for v, k in
                           zip((xw, h0, c0, w_hh, b_hh), batched)]) for j in range(b)]
        return stack(outs, axis=0)
    from .shape import broadcast_to, reshape

    sizes = [np.shape(data(v))[0] for v, k in zip((xw, h0, c0), batched[:3]) if k]
    b = sizes[0]
    steps, n, g4 = np.shape(data(xw))[-3:]
    hid = g4 // 4
    xb = xw if batched[0] else broadcast_to(xw, (b, steps, n, g4))
    hb = h0 if batched[1] else broadcast_to(h0, (b, n, hid))
    cb = c0 if batched[2] else broadcast_to(c0, (b, n, hid))
    xm = reshape(swapaxes(xb, 0, 1), (steps, b * n, g4))
    out = lstm_seq(xm, reshape(hb, (b * n, hid)), reshape(cb, (b * n, hid)), w_hh, b_hh)
    return swapaxes(reshape(out, (7 * steps + 1, b, n, hid)), 0, 1)


# ============================================================================ GRU
# z_r, z_z, z_n: the gates' blocks along the last axis, in PyTorch's order ("rzn") or
# Keras's ("zrn"); hw = h W_hh^T + b_hh; r = sig(xr + hr), z = sig(xz + hz),
# n = tanh(xn + r hn), h' = n + z (h - n).  Packed result (5 T, N, H): rows 0..T-1 the h_t,
# then for each step t four rows r, z, n, hn (kept for the backward pass).
def _blocks(order: str) -> tuple[int, int, int]:
    return order.index("r"), order.index("z"), order.index("n")


def _gru_forward_np(xw: np.ndarray, h0: np.ndarray, w_hh: np.ndarray, b_hh: np.ndarray,
                    order: str) -> np.ndarray:
    steps, n, g3 = xw.shape
    hid = g3 // 3
    kr, kz, kn = _blocks(order)
    dt = np.result_type(xw, h0, w_hh)
    out = np.empty((5 * steps, n, hid), dtype=dt)
    wt = np.ascontiguousarray(w_hh.T)
    h = h0
    for t in range(steps):
        hw = (h @ wt + b_hh).reshape(n, 3, hid)
        xt = xw[t].reshape(n, 3, hid)
        st = out[steps + 4 * t: steps + 4 * t + 4]  # r, z, n, hn
        st[0] = _sig(xt[:, kr] + hw[:, kr])
        st[1] = _sig(xt[:, kz] + hw[:, kz])
        st[3] = hw[:, kn]
        np.tanh(xt[:, kn] + st[0] * st[3], out=st[2])
        hnew = out[t]
        np.subtract(h, st[2], out=hnew)
        hnew *= st[1]
        hnew += st[2]
        h = hnew
    return out


@defop("gru_seq", saves=("xw", "h0", "w_hh", "b_hh", "out"),
       needs=True)
def gru_seq(xw: Any, h0: Any, w_hh: Any, b_hh: Any, *, order: str = "rzn") -> Any:
    """All steps of one GRU layer (reset gate after the recurrent product): ``(5 T, N, H)``."""
    return _gru_forward_np(np.asarray(xw), np.asarray(h0), np.asarray(w_hh), np.asarray(b_hh),
                           order)


def _gru_bptt_np(g: np.ndarray, out: np.ndarray, xw: np.ndarray, h0: np.ndarray,
                 w_hh: np.ndarray, order: str) -> tuple[np.ndarray, ...]:
    steps, n, g3 = xw.shape
    hid = g3 // 3
    kr, kz, kn = _blocks(order)
    dxw = np.empty(xw.shape, dtype=out.dtype)
    dw = np.zeros(w_hh.shape, dtype=out.dtype)
    db = np.zeros(g3, dtype=out.dtype)
    dh = np.zeros((n, hid), dtype=out.dtype)
    dx3 = np.empty((n, 3, hid), dtype=out.dtype)
    dh3 = np.empty((n, 3, hid), dtype=out.dtype)
    for t in range(steps - 1, -1, -1):
        r, z, nn, hn = out[steps + 4 * t: steps + 4 * t + 4]
        h_prev = out[t - 1] if t else h0
        dh = dh + g[t]
        dn_pre = dh * (1.0 - z) * (1.0 - nn * nn)
        dz_pre = dh * (h_prev - nn) * z * (1.0 - z)
        dr_pre = dn_pre * hn * r * (1.0 - r)
        dx3[:, kr], dx3[:, kz], dx3[:, kn] = dr_pre, dz_pre, dn_pre
        dh3[:, kr], dh3[:, kz], dh3[:, kn] = dr_pre, dz_pre, dn_pre * r
        dxw[t] = dx3.reshape(n, g3)
        dhw = dh3.reshape(n, g3)
        dw += dhw.T @ h_prev
        db += dhw.sum(axis=0)
        dh = dh * z + dhw @ w_hh
    return dxw, dh, dw, db


def _gru_step_ops(xw_t: Any, h: Any, w_hh: Any, b_hh: Any, order: str) -> tuple[Any, ...]:
    hid = np.shape(data(h))[-1]
    kr, kz, kn = _blocks(order)
    hw = add(matmul(h, swapaxes(w_hh, 0, 1)), b_hh)

    def blk(v: Any, k: int) -> Any:
        return getitem(v, (Ellipsis, slice(k * hid, (k + 1) * hid)))

    r = sigmoid(add(blk(xw_t, kr), blk(hw, kr)))
    z = sigmoid(add(blk(xw_t, kz), blk(hw, kz)))
    hn = blk(hw, kn)
    nn = tanh(add(blk(xw_t, kn), multiply(r, hn)))
    return add(nn, multiply(z, subtract(h, nn))), r, z, nn, hn


def _cat_blocks(parts: dict[int, Any]) -> Any:
    return concatenate([parts[0], parts[1], parts[2]], axis=-1)


def _gru_bptt_ops(g: Tensor, xw: Any, h0: Any, w_hh: Any, b_hh: Any,
                  order: str) -> tuple[Any, ...]:
    steps = np.shape(data(xw))[0]
    kr, kz, kn = _blocks(order)
    h = h0
    saved = []
    for t in range(steps):
        h2, r, z, nn, hn = _gru_step_ops(getitem(xw, t), h, w_hh, b_hh, order)
        saved.append((h, r, z, nn, hn))
        h = h2
    dh: Any = None
    dxs: list[Any] = [None] * steps
    dw: Any = None
    db: Any = None
    for t in range(steps - 1, -1, -1):
        h_prev, r, z, nn, hn = saved[t]
        gt = getitem(g, t)
        dh = gt if dh is None else add(dh, gt)
        dn_pre = multiply(multiply(dh, subtract(1.0, z)), subtract(1.0, multiply(nn, nn)))
        dz_pre = multiply(multiply(dh, subtract(h_prev, nn)), multiply(z, subtract(1.0, z)))
        dr_pre = multiply(multiply(dn_pre, hn), multiply(r, subtract(1.0, r)))
        dxs[t] = _cat_blocks({kr: dr_pre, kz: dz_pre, kn: dn_pre})
        dhw = _cat_blocks({kr: dr_pre, kz: dz_pre, kn: multiply(dn_pre, r)})
        term = matmul(swapaxes(dhw, 0, 1), h_prev)
        dw = term if dw is None else add(dw, term)
        from .reduce import sum as _sum

        bt = _sum(dhw, axis=0)
        db = bt if db is None else add(db, bt)
        dh = add(multiply(dh, z), matmul(dhw, w_hh))
    return stack(dxs, axis=0), dh, dw, db


@gru_seq.defvjp
def _(g: Tensor, xw: Any, h0: Any, w_hh: Any, b_hh: Any, out: Tensor, order: str = "rzn",
      needs: tuple[bool, ...] = (True,) * 4) -> Any:
    if raw():
        grads = _gru_bptt_np(np.asarray(g._data), out._data, np.asarray(data(xw)),
                             np.asarray(data(h0)), np.asarray(data(w_hh)), order)
        return tuple(wrap(a, g) if need else None for a, need in zip(grads, needs))
    grads = _gru_bptt_ops(g, xw, h0, w_hh, b_hh, order)
    return tuple(a if need else None for a, need in zip(grads, needs))


@gru_seq.defjvp
def _(dxw: Any, dh0: Any, dw: Any, db: Any, xw: Any, h0: Any, w_hh: Any, b_hh: Any, *,
      out: Any, order: str = "rzn") -> Any:
    steps = np.shape(data(xw))[0]
    kr, kz, kn = _blocks(order)
    h, dh = h0, dh0
    dhs: list[Any] = []
    stash: list[Any] = []
    for t in range(steps):
        h2, r, z, nn, hn = _gru_step_ops(getitem(xw, t), h, w_hh, b_hh, order)
        hid = np.shape(data(h))[-1]
        dhw: Any = None  # tangent of h W^T + b
        for p in (matmul(dh, swapaxes(w_hh, 0, 1)) if dh is not None else None,
                  matmul(h, swapaxes(dw, 0, 1)) if dw is not None else None, db):
            if p is not None:
                dhw = p if dhw is None else add(dhw, p)
        dx = getitem(dxw, t) if dxw is not None else None

        def blk(v: Any, k: int, hid: int = hid) -> Any:
            return None if v is None else getitem(v, (Ellipsis, slice(k * hid, (k + 1) * hid)))

        def plus(a: Any, b: Any) -> Any:
            return b if a is None else (a if b is None else add(a, b))

        zero = multiply(h2, 0.0)
        pre_r = plus(blk(dx, kr), blk(dhw, kr))
        pre_z = plus(blk(dx, kz), blk(dhw, kz))
        d_hn = blk(dhw, kn)
        dr = zero if pre_r is None else multiply(pre_r, multiply(r, subtract(1.0, r)))
        dz = zero if pre_z is None else multiply(pre_z, multiply(z, subtract(1.0, z)))
        pre_n = plus(plus(blk(dx, kn), multiply(dr, hn)),
                     None if d_hn is None else multiply(r, d_hn))
        dn = multiply(pre_n, subtract(1.0, multiply(nn, nn)))
        # h' = n + z (h - n): dh' = dn (1 - z) + dz (h - n) + z dh
        dh2 = add(multiply(dn, subtract(1.0, z)), multiply(dz, subtract(h, nn)))
        if dh is not None:
            dh2 = add(dh2, multiply(z, dh))
        stash += [dr, dz, dn, zero if d_hn is None else add(zero, d_hn)]  # full shape
        dhs.append(dh2)
        h, dh = h2, dh2
    return concatenate([stack(dhs, axis=0), stack(stash, axis=0)], axis=0)


@gru_seq.defbatch
def _(batched: tuple[bool, ...], xw: Any, h0: Any, w_hh: Any, b_hh: Any, *,
      order: str = "rzn") -> Any:
    vals = (xw, h0, w_hh, b_hh)
    if batched[2] or batched[3]:
        b = next(np.shape(data(v))[0] for v, k in zip(vals, batched) if k)
        return stack([gru_seq(*[getitem(v, j) if k else v for v, k in zip(vals, batched)],
                              order=order) for j in range(b)], axis=0)
    from .shape import broadcast_to, reshape

    b = next(np.shape(data(v))[0] for v, k in zip(vals[:2], batched[:2]) if k)
    steps, n, g3 = np.shape(data(xw))[-3:]
    hid = g3 // 3
    xb = xw if batched[0] else broadcast_to(xw, (b, steps, n, g3))
    hb = h0 if batched[1] else broadcast_to(h0, (b, n, hid))
    xm = reshape(swapaxes(xb, 0, 1), (steps, b * n, g3))
    res = gru_seq(xm, reshape(hb, (b * n, hid)), w_hh, b_hh, order=order)
    return swapaxes(reshape(res, (5 * steps, b, n, hid)), 0, 1)
