"""Core conv-net ops: gradients to second order (finite differences), each new
primitive's JVP rule called directly against finite differences, and each batching
rule against a loop over the batch.  No framework needed."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import tapegrad as tg
from tapegrad._core.registry import Op
from tapegrad._core.tensor import Tensor
from tapegrad.ops import conv as C
from tapegrad.ops import dropout as D
from tapegrad.ops import embedding as E
from tapegrad.ops import norm as N
from tapegrad.ops import padding as PD
from tapegrad.ops import pool as PL
from tapegrad.ops import resize as R
from tapegrad.testing import GradcheckError, gradcheck

RNG = np.random.default_rng(3)


def t(*shape: int) -> Tensor:
    return tg.tensor(RNG.standard_normal(shape))


P0 = ((0, 0), (0, 0))
RNG_KEEP: np.ndarray = RNG.random((3, 4)) > 0.3
P1 = ((1, 1), (0, 1))

# (name, function of tensors, inputs): every one checked to second order
CASES: list[tuple[str, Callable[..., Any], list[Tensor]]] = [
    ("conv", lambda x, w: C.conv(x, w, (1, 1), P0, (1, 1)), [t(2, 3, 5, 4), t(4, 3, 2, 2)]),
    ("conv_stride_pad_dil_groups_bias",
     lambda x, w, b: C.conv(x, w, (2, 1), P1, (1, 2), groups=2, bias=b),
     [t(2, 4, 6, 5), t(6, 2, 3, 2), t(6)]),
    ("conv_depthwise", lambda x, w: C.conv(x, w, (1, 1), ((1, 1), (1, 1)), (1, 1), groups=3),
     [t(1, 3, 4, 4), t(3, 1, 3, 3)]),
    ("conv1d", lambda x, w: C.conv(x, w, (2,), ((1, 2),), (1,)), [t(2, 2, 7), t(3, 2, 3)]),
    ("conv3d", lambda x, w: C.conv(x, w, (1, 2, 1), ((0, 0), (1, 0), (0, 1)), (1, 1, 1)),
     [t(1, 2, 3, 4, 3), t(2, 2, 2, 2, 2)]),
    ("conv_transpose", lambda x, w, b: C.conv_transpose(x, w, (2, 2), P1, (1, 1), (1, 0),
                                                        bias=b),
     [t(2, 3, 3, 3), t(3, 2, 3, 2), t(2)]),
    ("conv_transpose_groups", lambda x, w: C.conv_transpose(x, w, (2, 1), P0, (2, 1), (0, 0),
                                                            groups=2),
     [t(1, 4, 3, 3), t(4, 1, 2, 2)]),
    ("unfold", lambda x: C.unfold(x, (2, 3), (1, 2), P1, (2, 1)), [t(2, 2, 5, 6)]),
    ("fold", lambda c: C.fold(c, (4, 5), (2, 2), (1, 2), ((1, 1), (0, 0)), (1, 1)),
     [t(2, 8, 10)]),
    ("max_pool", lambda x: PL.max_pool(x, (3, 3), (2, 2), ((1, 1), (1, 1)), (1, 1), True)[0],
     [t(2, 2, 5, 6)]),
    ("max_pool_2x2", lambda x: PL.max_pool(x, (2, 2), (2, 2), P0, (1, 1))[0],
     [t(2, 2, 4, 6)]),
    ("max_pool_overlap_dilated", lambda x: PL.max_pool(x, (2, 2), (1, 1), P0, (2, 1))[0],
     [t(1, 2, 5, 5)]),
    ("avg_pool", lambda x: PL.avg_pool(x, (3, 2), (2, 1), P1, True, False), [t(2, 2, 5, 6)]),
    ("adaptive_avg_pool", lambda x: PL.adaptive_avg_pool(x, (3, 4)), [t(2, 2, 5, 7)]),
    ("adaptive_max_pool", lambda x: PL.adaptive_max_pool(x, (2, 3))[0], [t(2, 2, 5, 7)]),
    ("batch_norm_train", lambda x, w, b: N.batch_norm(x, w, b, None, None, training=True,
                                                      eps=1e-5)[0],
     [t(4, 3, 2, 2), t(3), t(3)]),
    ("batch_norm_train_no_affine", lambda x: N.batch_norm(x, None, None, None, None,
                                                          training=True, eps=1e-5)[0],
     [t(3, 2, 4)]),
    ("batch_norm_eval", lambda x, m, v: N.batch_norm(x, None, None, m, tg.exp(v),
                                                     training=False, eps=1e-5)[0],
     [t(4, 3, 2), t(3), t(3)]),
    ("layer_norm", lambda x, w: N.layer_norm(x, (2, 3), w, None, 1e-5), [t(2, 3, 4, 5),
                                                                         t(4, 5)]),
    ("group_norm", lambda x, w, b: N.group_norm(x, 2, w, b, 1e-5), [t(2, 4, 3), t(4), t(4)]),
    ("instance_norm", lambda x: N.instance_norm(x, None, None, 1e-5), [t(2, 3, 4, 2)]),
    ("rms_norm", lambda x, w: N.rms_norm(x, (2,), w, 1e-6), [t(3, 2, 5), t(5)]),
    ("embedding", lambda w: E.embedding(w, np.array([[0, 3, 3], [1, 0, 2]])), [t(4, 3)]),
    ("resize_linear", lambda x: R.resize(x, (5, 7), "linear"), [t(1, 2, 3, 4)]),
    ("resize_linear_align", lambda x: R.resize(x, (5, 2), "linear", True), [t(1, 2, 3, 4)]),
    ("resize_nearest_channels_last", lambda x: R.resize(x, (6,), "nearest",
                                                        channels_last=True), [t(2, 3, 2)]),
    ("pad_reflect", lambda x: PD.pad_mode(x, [(0, 0), (2, 1), (1, 2)], "reflect"),
     [t(2, 4, 3)]),
    ("pad_symmetric", lambda x: PD.pad_mode(x, [(1, 0), (3, 2)], "symmetric"), [t(2, 3)]),
    ("pad_replicate", lambda x: PD.pad_mode(x, [(0, 0), (2, 3)], "replicate"), [t(2, 3)]),
    ("pad_circular", lambda x: PD.pad_mode(x, [(1, 1), (2, 1)], "circular"), [t(2, 3)]),
    ("dropout_masked", lambda x: D.dropout_masked(x, RNG_KEEP, 0.3, np.float64),
     [t(3, 4)]),
    ("alpha_dropout_masked", lambda x: D.alpha_dropout_masked(x, RNG_KEEP, 0.3, np.float64),
     [t(3, 4)]),
]


@pytest.mark.parametrize("name,fn,inputs", CASES, ids=[c[0] for c in CASES])
def test_gradcheck_second_order(name: str, fn: Callable[..., Any], inputs: list[Tensor]) -> None:
    # squares make the second derivative non-trivial for the linear ops
    assert gradcheck(lambda *xs: fn(*xs) ** 2, inputs, order=2, n_directions=3)


def test_recorded_conv_is_columns_times_weights() -> None:
    # tracked inputs: the column matrix is made once and kept for the weight gradient
    x = tg.tensor(RNG.standard_normal((2, 3, 5, 4)), requires_grad=True)
    w = tg.tensor(RNG.standard_normal((4, 3, 2, 2)), requires_grad=True)
    y = C.conv(x, w, (1, 1), P1, (1, 1))
    node = y._node
    assert node is not None and node.op is C._conv_cols
    prev = node.next[0]
    assert prev is not None and prev.op is C._unfold
    plain = C._conv.fwd(x._data, w._data, stride=(1, 1), padding=P1, dilation=(1, 1), groups=1)
    np.testing.assert_allclose(y._data, plain, rtol=1e-12)


def test_padding_idx_row_gets_no_gradient() -> None:
    w = tg.tensor(RNG.standard_normal((4, 3)), requires_grad=True)
    e = E.embedding(w, np.array([1, 2, 2]), padding_idx=2)
    g: Any = tg.grad((e * e).sum(), [w])[0]
    assert np.all(g._data[2] == 0) and np.all(g._data[0] == 0)
    np.testing.assert_allclose(g._data[1], 2 * w._data[1])
    # and the check fails as it must: this is not the true gradient at the padding row
    with pytest.raises(GradcheckError):
        gradcheck(lambda v: E.embedding(v, np.array([1, 2, 2]), padding_idx=2) ** 2, [w])


def test_max_pool_tie_goes_to_first_maximum() -> None:
    x = tg.tensor(np.ones((1, 1, 2, 2)), requires_grad=True)
    y, idx = PL.max_pool(x, (2, 2), (2, 2), P0, (1, 1))
    g: Any = tg.grad(y.sum(), [x])[0]
    assert idx.ravel().tolist() == [0]
    assert g._data.ravel().tolist() == [1.0, 0.0, 0.0, 0.0]


def test_unique_scatter_equals_summing_scatter() -> None:
    x = tg.tensor(RNG.standard_normal((2, 3, 6, 4)))
    idx = PL.pool_argmax(x, (2, 2), (2, 2), P0, (1, 1))
    g = RNG.standard_normal(idx.shape)
    a = PL._pool_put.fwd(g, idx, size=(6, 4), nsp=2, unique=True)
    b = PL._pool_put.fwd(g, idx, size=(6, 4), nsp=2, unique=False)
    np.testing.assert_array_equal(a, b)


def test_same_padding_rules() -> None:
    # TensorFlow's SAME: ceil(n / s) outputs, the odd pixel at the high side
    assert C.same_padding((7, 6), (2, 3), (2, 1), (1, 1)) == ((0, 1), (1, 1))
    assert C.same_padding((5,), (4,), (1,), (1,)) == ((1, 2),)
    assert C.conv_output_size((7,), (3,), (2,), ((1, 1),), (1,)) == (4,)


# ----------------------------------------------------------------------------- JVP rules
def _fd_jvp(op: Op, xs: list[np.ndarray], ts: list[Any], attrs: dict[str, Any],
            eps: float = 1e-6) -> np.ndarray:
    def f(s: float) -> np.ndarray:
        args = [x if tt is None else x + s * tt for x, tt in zip(xs, ts)]
        return np.asarray(op.fwd(*args, **attrs))
    return (f(eps) - f(-eps)) / (2 * eps)


def _jvp(op: Op, xs: list[np.ndarray], ts: list[Any], attrs: dict[str, Any]
         ) -> np.ndarray:
    tin = [tg.tensor(x) for x in xs]
    tt = [None if v is None else tg.tensor(v) for v in ts]
    out = op(*tin, **attrs)
    r: Any = op.jvp(*tt, *tin, out=out, **attrs)  # type: ignore[misc]
    return r._data


K = dict(stride=(2, 1), padding=P1, dilation=(1, 2))
MATS: dict[str, Any] = dict(mats=(R.resize_matrix(4, 7, "linear", False, None),
                                  R.resize_matrix(5, 3, "nearest", False, None)),
                            axes=(-2, -1))
AVG: dict[str, Any] = dict(kernel=(3, 2), stride=(2, 1), padding=((1, 1), (0, 1)),
                           ceil_mode=True, count_include_pad=False, divisor_override=None)
JVP_CASES: list[tuple[str, Op, list[Any], dict[str, Any]]] = [
    ("conv", C._conv, [(2, 4, 6, 5), (6, 2, 3, 2)], dict(K, groups=2)),
    ("conv_bias", C._conv, [(2, 4, 6, 5), (6, 2, 3, 2), (6,)], dict(K, groups=2)),
    ("conv_transpose", C._conv_t, [(2, 6, 3, 4), (6, 2, 3, 2)],
     dict(K, groups=3, size=(6, 5))),
    ("conv_transpose_bias", C._conv_t, [(2, 6, 3, 4), (6, 2, 3, 2), (6,)],
     dict(K, groups=3, size=(6, 5))),
    ("unfold", C._unfold, [(2, 2, 5, 6)], dict(K, kernel=(3, 2))),
    ("fold", C._fold, [(2, 12, 12)], dict(kernel=(3, 2), stride=(1, 2), padding=P1,
                                           dilation=(1, 1), size=(4, 6))),
    ("conv_cols", C._conv_cols, [(2, 12, 20), (6, 3, 2)], dict(spatial=(4, 5), groups=2)),
    ("avg_pool", PL._avg_pool, [(2, 3, 5, 6)], dict(AVG)),
    ("resample", R._resample, [(2, 3, 4, 5)], dict(MATS)),
    ("avg_pool_backward", PL._avg_pool_t, [(2, 3, 3, 6)], dict(AVG, size=(5, 6))),
    ("conv_cols_bias", C._conv_cols, [(2, 12, 20), (6, 3, 2), (6,)],
     dict(spatial=(4, 5), groups=2)),
    ("batch_norm_train", N._bn_train, [(4, 3, 2, 2), (3,), (3,)], dict(axis=1, eps=1e-5)),
    ("batch_norm_train_channels_last", N._bn_train, [(5, 2, 3)], dict(axis=2, eps=1e-3)),
]


@pytest.mark.parametrize("name,op,shapes,attrs", JVP_CASES, ids=[c[0] for c in JVP_CASES])
def test_jvp_rule_against_finite_differences(name: str, op: Op, shapes: list[Any],
                                             attrs: dict[str, Any]) -> None:
    xs = [RNG.standard_normal(s) for s in shapes]
    n = len(xs)
    # every input's tangent alone, then all together
    for which in [[i] for i in range(n)] + [list(range(n))]:
        ts = [RNG.standard_normal(s) if i in which else None for i, s in enumerate(shapes)]
        np.testing.assert_allclose(_jvp(op, xs, ts, attrs), _fd_jvp(op, xs, ts, attrs),
                                   rtol=1e-6, atol=1e-7)


def test_jvp_rules_of_gather_ops() -> None:
    x = RNG.standard_normal((2, 3, 5, 4))
    idx = PL.pool_argmax(tg.tensor(x), (2, 2), (1, 2), P0, (1, 1))
    dx = RNG.standard_normal(x.shape)
    got = _jvp(PL._pool_take, [x, idx], [dx, None], dict(nsp=2))
    np.testing.assert_allclose(got, _fd_jvp(PL._pool_take, [x, idx], [dx, None], dict(nsp=2)))
    g = RNG.standard_normal(idx.shape)
    dg = RNG.standard_normal(idx.shape)
    a = dict(nsp=2, size=(5, 4))
    np.testing.assert_allclose(_jvp(PL._pool_put, [g, idx], [dg, None], a),
                               _fd_jvp(PL._pool_put, [g, idx], [dg, None], a))
    w = RNG.standard_normal((5, 3))
    ids = np.array([[0, 4], [2, 2]])
    dw = RNG.standard_normal(w.shape)
    for attrs in (dict(padding_idx=None, mask=False), dict(padding_idx=2, mask=True)):
        np.testing.assert_allclose(_jvp(E._gather, [w, ids], [dw, None], attrs),
                                   _fd_jvp(E._gather, [w, ids], [dw, None], attrs))
    ge = RNG.standard_normal((2, 2, 3))
    a2 = dict(rows=5, padding_idx=2)
    np.testing.assert_allclose(_jvp(E._scatter, [ge, ids], [ge * 0.5, None], a2),
                               _fd_jvp(E._scatter, [ge, ids], [ge * 0.5, None], a2))


def test_a_wrong_jvp_rule_fails() -> None:
    xs = [RNG.standard_normal((1, 2, 4, 4)), RNG.standard_normal((3, 2, 2, 2))]
    ts = [RNG.standard_normal(xs[0].shape), RNG.standard_normal(xs[1].shape)]
    attrs = dict(stride=(1, 1), padding=P0, dilation=(1, 1), groups=1)
    right = _jvp(C._conv, xs, ts, attrs)
    only_x = _jvp(C._conv, xs, [ts[0], None], attrs)  # a rule that forgot dW * x
    fd = _fd_jvp(C._conv, xs, ts, attrs)
    np.testing.assert_allclose(right, fd, rtol=1e-6, atol=1e-7)
    assert not np.allclose(only_x, fd, rtol=1e-3)


# ----------------------------------------------------------------------------- batching rules
def _loop(op: Op, batched: tuple[bool, ...], vals: list[np.ndarray], attrs: dict[str, Any]
          ) -> np.ndarray:
    b = next(v.shape[0] for v, bt in zip(vals, batched) if bt)
    return np.stack([np.asarray(op.fwd(*[v[i] if bt else v for v, bt in zip(vals, batched)],
                                       **attrs)) for i in range(b)])


BATCH_CASES: list[tuple[str, Op, list[Any], dict[str, Any]]] = [
    ("conv", C._conv, [(3, 2, 4, 6, 5), (6, 2, 3, 2)], dict(K, groups=2)),
    ("conv_t", C._conv_t, [(3, 2, 6, 3, 4), (6, 2, 3, 2)], dict(K, groups=3, size=(6, 5))),
    ("unfold", C._unfold, [(3, 2, 2, 5, 6)], dict(K, kernel=(3, 2))),
    ("fold", C._fold, [(3, 2, 12, 12)], dict(kernel=(3, 2), stride=(1, 2), padding=P1,
                                              dilation=(1, 1), size=(4, 6))),
    ("conv_cols", C._conv_cols, [(3, 2, 12, 20), (6, 3, 2)], dict(spatial=(4, 5), groups=2)),
    ("avg_pool", PL._avg_pool, [(3, 2, 3, 5, 6)], dict(AVG)),
    ("resample", R._resample, [(3, 2, 3, 4, 5)], dict(MATS)),
    ("avg_pool_backward", PL._avg_pool_t, [(3, 2, 3, 3, 6)], dict(AVG, size=(5, 6))),
    ("batch_norm_train", N._bn_train, [(3, 4, 3, 2), (3,), (3,)], dict(axis=1, eps=1e-5)),
]


@pytest.mark.parametrize("name,op,shapes,attrs", BATCH_CASES, ids=[c[0] for c in BATCH_CASES])
def test_batching_rule_against_loop(name: str, op: Op, shapes: list[Any],
                                    attrs: dict[str, Any]) -> None:
    vals = [RNG.standard_normal(s) for s in shapes]
    batched = (True,) + (False,) * (len(vals) - 1)
    got = op.batch(batched, *[tg.tensor(v) for v in vals], **attrs)  # type: ignore[misc]
    np.testing.assert_allclose(got._data, _loop(op, batched, vals, attrs), rtol=1e-10,
                               atol=1e-12)


@pytest.mark.parametrize("batched", [(False, True), (True, True), (True, True, True),
                                     (False, True, False), (True, False, True)])
@pytest.mark.parametrize("op", [C._conv, C._conv_t, C._conv_cols],
                         ids=["conv", "conv_t", "conv_cols"])
def test_batched_weights_and_bias(op: Op, batched: tuple[bool, ...]) -> None:
    nb = 3
    if op is C._conv:
        shapes = [(2, 4, 6, 5), (6, 2, 3, 2), (6,)]
        attrs: dict[str, Any] = dict(K, groups=2)
    elif op is C._conv_cols:
        shapes = [(2, 12, 20), (6, 3, 2), (6,)]
        attrs = dict(spatial=(4, 5), groups=2)
    else:
        shapes = [(2, 6, 3, 4), (6, 2, 3, 2), (6,)]
        attrs = dict(K, groups=3, size=(6, 5))
    shapes = shapes[: len(batched)]
    vals = [RNG.standard_normal(((nb,) if bt else ()) + s) for s, bt in zip(shapes, batched)]
    got = op.batch(batched, *[tg.tensor(v) for v in vals], **attrs)  # type: ignore[misc]
    np.testing.assert_allclose(got._data, _loop(op, batched, vals, attrs), rtol=1e-10,
                               atol=1e-12)


def test_gather_batching_rules() -> None:
    x = RNG.standard_normal((3, 2, 2, 5, 4))
    idx = np.stack([PL.pool_argmax(tg.tensor(x[i]), (2, 2), (2, 2), P0, (1, 1))
                    for i in range(3)])
    got = PL._pool_take.batch((True, True), tg.tensor(x), tg.tensor(idx), nsp=2)  # type: ignore[misc]
    np.testing.assert_allclose(got._data, _loop(PL._pool_take, (True, True), [x, idx],
                                                dict(nsp=2)))
    got = PL._pool_take.batch((True, False), tg.tensor(x), tg.tensor(idx[0]), nsp=2)  # type: ignore[misc]
    np.testing.assert_allclose(got._data, _loop(PL._pool_take, (True, False), [x, idx[0]],
                                                dict(nsp=2)))
    g = RNG.standard_normal(idx.shape)
    a = dict(nsp=2, size=(5, 4))
    got = PL._pool_put.batch((True, True), tg.tensor(g), tg.tensor(idx), **a)  # type: ignore[misc]
    np.testing.assert_allclose(got._data, _loop(PL._pool_put, (True, True), [g, idx], a))
    w = RNG.standard_normal((3, 5, 2))
    ids = np.array([[0, 4], [2, 2], [1, 3]])
    ea = dict(padding_idx=None, mask=False)
    for bt, vals in (((True, True), [w, ids]), ((False, True), [w[0], ids]),
                     ((True, False), [w, ids[0]])):
        got = E._gather.batch(bt, *[tg.tensor(v) for v in vals], **ea)  # type: ignore[misc]
        np.testing.assert_allclose(got._data, _loop(E._gather, bt, vals, ea))


def test_every_new_primitive_has_all_rules() -> None:
    for op in (C._conv, C._conv_t, C._unfold, C._fold, C._conv_cols,
               PL._pool_take, PL._pool_put, E._gather, N._bn_train,
               PL._avg_pool, PL._avg_pool_t, R._resample):
        assert op.vjp is not None and op.jvp is not None and op.batch is not None, op
    assert E._scatter.vjp is not None and E._scatter.jvp is not None


def test_running_stat_conventions() -> None:
    r = np.array([1.0, 2.0])
    N.update_running(r, np.array([3.0, 4.0]), 0.1, on_new=True)  # PyTorch
    np.testing.assert_allclose(r, [1.2, 2.2])
    r = np.array([1.0, 2.0])
    N.update_running(r, np.array([3.0, 4.0]), 0.99, on_new=False)  # Keras
    np.testing.assert_allclose(r, [1.02, 2.02])


def test_errors() -> None:
    with pytest.raises(RuntimeError, match="Output size is too small"):
        C.im2col(np.ones((1, 1, 2, 2)), (3, 3), (1, 1), P0, (1, 1))
    with pytest.raises(RuntimeError, match="to have 2 channels, but got 3 channels"):
        C.conv(t(1, 3, 4, 4), t(2, 2, 2, 2), (1, 1), P0, (1, 1))
    with pytest.raises(ValueError, match="more than 1 value per channel"):
        N.batch_norm(t(1, 3), None, None, None, None, training=True, eps=1e-5)
    with pytest.raises(ValueError, match="divisible by num_groups"):
        N.group_norm(t(2, 3, 4), 2, None, None, 1e-5)


@pytest.mark.parametrize("tracked", [False, True])
@pytest.mark.parametrize("groups,bias", [(1, False), (1, True), (2, True)])
def test_conv_output_is_contiguous_like_pytorch(tracked: bool, groups: int,
                                                bias: bool) -> None:
    # PyTorch's conv returns a contiguous (N, O, *out) tensor, which layout-following
    # kernels downstream (its dropout mask) see; the batched-matmul columns give it directly
    x = tg.tensor(RNG.standard_normal((3, 4, 7, 6)).astype(np.float32), requires_grad=tracked)
    w = tg.tensor(RNG.standard_normal((6, 4 // groups, 3, 2)).astype(np.float32),
                  requires_grad=tracked)
    b = tg.tensor(RNG.standard_normal(6).astype(np.float32)) if bias else None
    y = C.conv(x, w, (2, 1), P1, (1, 1), groups=groups, bias=b)
    assert (y._node is not None) == tracked
    assert y._data.flags.c_contiguous and y._data.dtype == np.float32
    ref = _loop_conv(x._data, w._data, groups) if not bias else \
        _loop_conv(x._data, w._data, groups) + b._data.reshape(1, -1, 1, 1)  # type: ignore[union-attr]
    np.testing.assert_allclose(y._data, ref, rtol=1e-4, atol=1e-4)


def _loop_conv(x: np.ndarray, w: np.ndarray, groups: int) -> np.ndarray:
    """Direct convolution by loops over output positions (stride (2, 1), padding P1)."""
    xp = np.pad(x, ((0, 0), (0, 0)) + P1)
    n, _, hp, wp = xp.shape
    o, cg, kh, kw = w.shape
    ho, wo = (hp - kh) // 2 + 1, wp - kw + 1
    out = np.zeros((n, o, ho, wo))
    og = o // groups
    for oc in range(o):
        g = oc // og
        for i in range(ho):
            for j in range(wo):
                win = xp[:, g * cg:(g + 1) * cg, 2 * i:2 * i + kh, j:j + kw]
                out[:, oc, i, j] = np.einsum("nckl,ckl->n", win, w[oc])
    return out
