"""Conv nets on real PyTorch and on tapegrad.torch: convolution, pooling, normalization,
embedding, dropout, interpolate, unfold/fold and a LeNet step (values, gradients, buffers,
errors and reprs).

Inputs and weights are set from NumPy, so both frameworks see the same numbers;
programs return outputs and gradients.  Where PyTorch's node is one fused kernel and
tapegrad's a composite (batch norm, average pooling ...), the program returns the
values detached, so only the numbers are compared (batch norm in training mode is one
``NativeBatchNormBackward0`` node, as in PyTorch).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from tests.torch_style.torch_harness import compare

real = pytest.importorskip("torch")
import tapegrad.torch as tt  # noqa: E402

RNG = np.random.default_rng(12)
X4 = RNG.standard_normal((2, 4, 7, 6))
X3 = RNG.standard_normal((2, 4, 9))
X5 = RNG.standard_normal((1, 2, 4, 5, 4))


def _t(torch: Any, a: np.ndarray, rg: bool = True) -> Any:
    return torch.tensor(a, requires_grad=rg)


def _grads(torch: Any, y: Any, *leaves: Any) -> Any:
    g = torch.tensor(np.cos(np.arange(y.numel(), dtype=np.float64)).reshape(tuple(y.shape)))
    return torch.autograd.grad((y * g).sum(), list(leaves))


CONV2D = [
    dict(w=(6, 4, 3, 3)),
    dict(w=(6, 2, 3, 2), stride=(2, 1), padding=(1, 0), dilation=(1, 2), groups=2),
    dict(w=(4, 1, 3, 3), groups=4, padding=1),  # depthwise
    dict(w=(3, 4, 2, 3), padding="same"),  # even kernel: the odd pixel at the bottom/right
    dict(w=(3, 4, 3, 3), padding="same", dilation=2),
    dict(w=(5, 4, 3, 3), padding="valid", stride=2, bias=False),
    dict(w=(5, 4, 1, 1)),
]


@pytest.mark.parametrize("case", CONV2D, ids=[str(i) for i in range(len(CONV2D))])
def test_conv2d(case: dict[str, Any]) -> None:
    def prog(torch: Any) -> Any:
        kw = dict(case)
        w = _t(torch, RNG_W[kw.pop("w")])
        b = None if not kw.pop("bias", True) else _t(torch, np.linspace(-1, 1, w.shape[0]))
        x = _t(torch, X4)
        y = torch.nn.functional.conv2d(x, w, b, **kw)
        return y, _grads(torch, y, x, w, *([] if b is None else [b]))
    compare(prog, real, tt, rtol=1e-7, atol=1e-10)


RNG_W = {s: RNG.standard_normal(s) for s in [c["w"] for c in CONV2D]}


def test_conv1d_conv3d_and_unbatched() -> None:
    w1 = RNG.standard_normal((3, 4, 3))
    w3 = RNG.standard_normal((3, 2, 2, 3, 2))

    def prog(torch: Any) -> Any:
        F = torch.nn.functional
        x1, k1 = _t(torch, X3), _t(torch, w1)
        y1 = F.conv1d(x1, k1, stride=2, padding=2, dilation=2)
        x3, k3 = _t(torch, X5), _t(torch, w3)
        y3 = F.conv3d(x3, k3, padding=(1, 0, 1), stride=(1, 2, 1))
        yu = F.conv2d(torch.tensor(X4[0]), torch.tensor(RNG_W[(6, 4, 3, 3)]))
        return y1, _grads(torch, y1, x1, k1), y3, _grads(torch, y3, x3, k3), yu
    compare(prog, real, tt, rtol=1e-7, atol=1e-10)


CONVT = [
    dict(w=(4, 3, 3, 3), stride=2),
    dict(w=(4, 3, 3, 2), stride=(2, 3), padding=(1, 0), output_padding=(1, 2)),
    dict(w=(4, 2, 3, 3), stride=2, groups=2, dilation=2, padding=1),
    dict(w=(4, 5, 1, 1), bias=False),
]
RNG_WT = {c["w"]: RNG.standard_normal(c["w"]) for c in CONVT}


@pytest.mark.parametrize("case", CONVT, ids=[str(i) for i in range(len(CONVT))])
def test_conv_transpose2d(case: dict[str, Any]) -> None:
    def prog(torch: Any) -> Any:
        kw = dict(case)
        w = _t(torch, RNG_WT[kw.pop("w")])
        nout = w.shape[1] * kw.get("groups", 1)
        b = None if not kw.pop("bias", True) else _t(torch, np.linspace(-1, 1, nout))
        x = _t(torch, X4)
        y = torch.nn.functional.conv_transpose2d(x, w, b, **kw)
        return y, _grads(torch, y, x, w, *([] if b is None else [b]))
    compare(prog, real, tt, rtol=1e-7, atol=1e-10)


def test_conv_transpose1d() -> None:
    w = RNG.standard_normal((4, 2, 3))

    def prog(torch: Any) -> Any:
        x, k = _t(torch, X3), _t(torch, w)
        y = torch.nn.functional.conv_transpose1d(x, k, stride=3, padding=1, output_padding=2)
        return y, _grads(torch, y, x, k)
    compare(prog, real, tt, rtol=1e-7, atol=1e-10)


def test_conv_second_order() -> None:
    w = RNG_W[(6, 2, 3, 2)]

    def prog(torch: Any) -> Any:
        x, k = _t(torch, X4), _t(torch, w)
        y = torch.nn.functional.conv2d(x, k, stride=(2, 1), padding=1, groups=2)
        gx, = torch.autograd.grad((y * y).sum(), [x], create_graph=True)
        return torch.autograd.grad((gx * gx).sum(), [x, k])
    compare(prog, real, tt, rtol=1e-7, atol=1e-9)


def test_conv_errors() -> None:
    def prog(torch: Any) -> Any:
        F = torch.nn.functional
        out = []
        for fn in (lambda: F.conv2d(torch.ones(1, 2, 3, 3), torch.ones(1, 1, 2, 2)),
                   lambda: F.conv2d(torch.ones(1, 1, 1, 1), torch.ones(1, 1, 2, 2)),
                   lambda: F.conv2d(torch.ones(1, 1, 3, 3, dtype=torch.float64),
                                    torch.ones(1, 1, 2, 2)),
                   lambda: F.conv2d(torch.ones(1, 1, 3, 3), torch.ones(1, 1, 2, 2),
                                    stride=2, padding="same"),
                   lambda: F.conv_transpose2d(torch.ones(1, 1, 3, 3), torch.ones(1, 1, 2, 2),
                                              stride=2, output_padding=2),
                   lambda: torch.nn.Conv2d(3, 4, 3, groups=2)):
            try:
                fn()
                out.append("ok")
            except Exception as e:  # noqa: BLE001
                out.append(e)
        return out
    compare(prog, real, tt)


# ----------------------------------------------------------------------------- pooling
POOLS = [
    dict(kernel_size=2),
    dict(kernel_size=3, stride=2, padding=1, ceil_mode=True),
    dict(kernel_size=(3, 2), stride=(2, 1), padding=(1, 0), dilation=(2, 1)),
    dict(kernel_size=2, stride=1),  # overlapping windows: gradients accumulate
]


@pytest.mark.parametrize("case", POOLS, ids=[str(i) for i in range(len(POOLS))])
def test_max_pool2d(case: dict[str, Any]) -> None:
    xt = X4.copy()
    xt[0, 0, :2, :2] = 1.5  # a tie: the gradient goes to the first maximum

    def prog(torch: Any) -> Any:
        x = _t(torch, xt)
        y, i = torch.nn.functional.max_pool2d(x, return_indices=True, **case)
        return y, i, _grads(torch, y, x)
    compare(prog, real, tt, rtol=1e-7, atol=1e-10)


def _tie_pool_cases() -> list[tuple[int, dict[str, Any], bool]]:
    rng = np.random.default_rng(5)
    cases = []
    for i in range(24):
        nsp = 1 + i % 3
        k = tuple(int(v) for v in rng.integers(1, 4, nsp))
        cases.append((nsp, dict(kernel_size=k,
                                stride=tuple(int(v) for v in rng.integers(1, 4, nsp)),
                                padding=tuple(int(rng.integers(0, kk // 2 + 1)) for kk in k),
                                dilation=tuple(int(v) for v in rng.integers(1, 3, nsp)),
                                ceil_mode=bool(i % 2)), i % 4 == 0))
    # the W8 shape: 2x2 windows tiling the input
    cases.append((2, dict(kernel_size=2), False))
    return cases


@pytest.mark.parametrize("nsp,case,nan", _tie_pool_cases())
def test_max_pool_ties_and_nans(nsp: int, case: dict[str, Any], nan: bool) -> None:
    # values from {0, 1, 2} (float32): most windows hold several maxima, and the index and
    # the gradient go to the first in row-major window order; a NaN wins, the last one
    rng = np.random.default_rng(nsp)
    xt = rng.integers(0, 3, (2, 3) + (8, 7, 6)[:nsp]).astype(np.float32)
    if nan:
        xt[xt == 2] = np.nan

    def prog(torch: Any) -> Any:
        x = _t(torch, xt)
        y, i = getattr(torch.nn.functional, f"max_pool{nsp}d")(x, return_indices=True,
                                                                **case)
        # PyTorch's 1-d pooling is its 2-d kernel and a squeeze (grad_fn SqueezeBackward1,
        # tapegrad's MaxPool1DWithIndicesBackward0): compare the numbers only there
        return (y.detach() if nsp == 1 else y), i, _grads(torch, y, x)
    compare(prog, real, tt, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("case", POOLS[:2] + [dict(kernel_size=3, stride=2, padding=1,
                                                   ceil_mode=True, count_include_pad=False),
                                              dict(kernel_size=2, divisor_override=3)])
def test_avg_pool2d(case: dict[str, Any]) -> None:
    def prog(torch: Any) -> Any:
        x = _t(torch, X4)
        y = torch.nn.functional.avg_pool2d(x, **case)
        return y, _grads(torch, y, x)
    compare(prog, real, tt, rtol=1e-7, atol=1e-10)


def test_max_unpool() -> None:
    def prog(torch: Any) -> Any:
        F = torch.nn.functional
        x = _t(torch, X4)
        y, i = F.max_pool2d(x, 2, return_indices=True)
        yv = _t(torch, y.detach().numpy())
        u = F.max_unpool2d(yv, i, 2, output_size=(7, 6))
        u2 = torch.nn.MaxUnpool2d(3, 2, 1)(*F.max_pool2d(x.detach(), 3, 2, 1,
                                                          return_indices=True),
                                           output_size=(7, 6))
        return u, _grads(torch, u, yv), u2, repr(torch.nn.MaxUnpool2d(2))
    compare(prog, real, tt, rtol=1e-7, atol=1e-10)


def test_pool1d_3d_adaptive_and_global() -> None:
    def prog(torch: Any) -> Any:
        F = torch.nn.functional
        x3, x4, x5 = _t(torch, X3), _t(torch, X4), _t(torch, X5)
        out = []
        for y, leaf in ((F.max_pool1d(x3, 3, 2, 1), x3), (F.avg_pool1d(x3, 3, 2, 1), x3),
                        (F.max_pool3d(x5, 2), x5), (F.avg_pool3d(x5, 2, 1), x5),
                        (F.adaptive_avg_pool2d(x4, (3, 4)), x4),
                        (F.adaptive_avg_pool2d(x4, 1), x4),
                        (F.adaptive_avg_pool2d(x4, (None, 2)), x4),
                        (F.adaptive_max_pool2d(x4, (4, 4)), x4),
                        (F.adaptive_avg_pool1d(x3, 4), x3)):
            out.append((y.detach(), _grads(torch, y, leaf)))
        return out
    compare(prog, real, tt, rtol=1e-7, atol=1e-10)


def test_pool_errors_and_modules() -> None:
    def prog(torch: Any) -> Any:
        nn = torch.nn
        out: list[Any] = [repr(m) for m in (
            nn.MaxPool2d(2), nn.MaxPool2d(3, 2, 1, ceil_mode=True), nn.AvgPool2d(2),
            nn.AvgPool2d((2, 3), stride=1, padding=1), nn.AdaptiveAvgPool2d((1, 1)),
            nn.AdaptiveAvgPool2d(3), nn.AdaptiveMaxPool2d(2), nn.Upsample(scale_factor=2),
            nn.Upsample(size=(3, 4), mode="bilinear"), nn.Unfold(2), nn.Fold((4, 4), 2),
            nn.MaxPool1d(3), nn.AvgPool1d(3))]
        for fn in (lambda: torch.nn.functional.max_pool2d(torch.ones(1, 1, 1, 1), 2),
                   lambda: torch.nn.functional.max_pool2d(torch.ones(1, 1, 5, 5), 3,
                                                          padding=2)):
            try:
                fn()
            except Exception as e:  # noqa: BLE001
                out.append(e)
        return out
    compare(prog, real, tt)


# ----------------------------------------------------------------------------- normalization
def test_batch_norm_train_eval_and_running_stats() -> None:
    w, b = RNG.standard_normal(4), RNG.standard_normal(4)

    def prog(torch: Any) -> Any:
        bn = torch.nn.BatchNorm2d(4).double()
        with torch.no_grad():
            bn.weight.copy_(torch.tensor(w))
            bn.bias.copy_(torch.tensor(b))
        x = _t(torch, X4)
        y = bn(x)
        g = _grads(torch, y, x, bn.weight, bn.bias)
        y2 = bn(torch.tensor(X4 * 2 + 1))
        bn.eval()
        x3 = _t(torch, X4[:1])
        y3 = bn(x3)
        return (y, g, y2.detach(), bn.running_mean, bn.running_var,
                bn.num_batches_tracked, y3.detach(), _grads(torch, y3, x3), repr(bn))
    compare(prog, real, tt, rtol=1e-7, atol=1e-9)


def test_batch_norm_1d_momentum_none_and_errors() -> None:
    def prog(torch: Any) -> Any:
        bn = torch.nn.BatchNorm1d(3, momentum=None, affine=False).double()
        for k in range(3):
            bn(torch.tensor(RNG_BN[k]))
        bn3 = torch.nn.BatchNorm1d(4).double()
        y3 = bn3(torch.tensor(X3))
        out: list[Any] = [bn.running_mean, bn.running_var, y3.detach(), bn3.running_var]
        for fn in (lambda: torch.nn.BatchNorm2d(3)(torch.ones(2, 3)),
                   lambda: torch.nn.BatchNorm1d(3)(torch.ones(1, 3))):
            try:
                fn()
            except Exception as e:  # noqa: BLE001
                out.append(e)
        return out
    compare(prog, real, tt, rtol=1e-7, atol=1e-9)


RNG_BN = [RNG.standard_normal((5, 3)) * (k + 1) for k in range(3)]


def test_batch_norm_second_order() -> None:
    def prog(torch: Any) -> Any:
        x = _t(torch, X4)
        w = _t(torch, np.linspace(0.5, 2, 4))
        y = torch.nn.functional.batch_norm(x, None, None, w, None, training=True)
        gx, = torch.autograd.grad((y ** 3).sum(), [x], create_graph=True)
        return torch.autograd.grad((gx * gx).sum(), [x, w])
    compare(prog, real, tt, rtol=1e-6, atol=1e-8)


def test_group_instance_layer_rms_norm() -> None:
    def prog(torch: Any) -> Any:
        F = torch.nn.functional
        x = _t(torch, X4)
        w, b = _t(torch, np.linspace(0.5, 2, 4)), _t(torch, np.linspace(-1, 1, 4))
        wl = _t(torch, np.linspace(0.5, 2, 6))
        out = []
        for y, leaves in ((F.group_norm(x, 2, w, b), (x, w, b)),
                          (F.instance_norm(x, weight=w, bias=b), (x, w, b)),
                          (F.layer_norm(x, (6,), wl), (x, wl)),
                          (F.rms_norm(x, (6,), wl), (x, wl)),
                          (F.rms_norm(x, (7, 6), eps=1e-3), (x,))):
            out.append((y.detach(), _grads(torch, y, *leaves)))
        nn = torch.nn
        out.append([repr(m) for m in (nn.GroupNorm(2, 4), nn.InstanceNorm2d(3),
                                      nn.InstanceNorm1d(3, affine=True), nn.RMSNorm(4),
                                      nn.RMSNorm((2, 3), eps=1e-5),
                                      nn.BatchNorm1d(3, bias=False))])
        inorm = nn.InstanceNorm2d(4, track_running_stats=True).double()
        inorm(torch.tensor(X4))
        out.append((inorm.running_mean, inorm.running_var))
        return out
    compare(prog, real, tt, rtol=1e-7, atol=1e-9)


# ----------------------------------------------------------------------------- embedding etc.
def test_embedding_padding_idx_and_max_norm() -> None:
    wt = RNG.standard_normal((6, 3))
    idx = np.array([[0, 2, 2, 5], [4, 2, 1, 0]])

    def prog(torch: Any) -> Any:
        F = torch.nn.functional
        w = _t(torch, wt)
        e = F.embedding(torch.tensor(idx), w, padding_idx=2)
        g = _grads(torch, e, w)
        w2 = torch.tensor(wt * 3)
        e2 = F.embedding(torch.tensor(idx), w2, max_norm=1.0)
        m = torch.nn.Embedding.from_pretrained(torch.tensor(wt), padding_idx=1)
        return e, g, e2, w2, m(torch.tensor([1, 3])), repr(m)
    compare(prog, real, tt, rtol=1e-6, atol=1e-7)


def test_embedding_default_init_and_bag() -> None:
    def prog(torch: Any) -> Any:
        torch.manual_seed(3)
        emb = torch.nn.Embedding(5, 3, padding_idx=0)
        bag = torch.nn.EmbeddingBag(5, 3, mode="sum")
        y = bag(torch.tensor([1, 2, 4, 4, 3]), torch.tensor([0, 2]))
        return emb.weight.detach(), y.detach(), repr(emb)
    compare(prog, real, tt, rtol=1e-6, atol=1e-7)


def test_dropout_family_eval_and_p() -> None:
    def prog(torch: Any) -> Any:
        F = torch.nn.functional
        x = torch.tensor(X4)
        out: list[Any] = [F.dropout2d(x, 0.3, training=False), F.alpha_dropout(x, 0.3),
                          F.dropout2d(x, 0.0), F.dropout1d(torch.tensor(X3), 1.0).abs().sum(),
                          repr(torch.nn.Dropout2d(0.2)), repr(torch.nn.AlphaDropout())]
        try:
            F.dropout2d(x, 1.5)
        except Exception as e:  # noqa: BLE001
            out.append(e)
        return out
    compare(prog, real, tt)


def test_dropout2d_zeroes_whole_channels() -> None:
    tt.manual_seed(0)
    x = tt.ones(8, 16, 3, 3)
    y = tt.nn.functional.dropout2d(x, 0.5).numpy()
    per = y.reshape(8, 16, -1)
    assert np.all((per == 0).all(-1) | (per == 2.0).all(-1))
    assert 0 < (per == 0).all(-1).sum() < 8 * 16


def test_alpha_dropout_keeps_moments() -> None:
    tt.manual_seed(0)
    x = tt.tensor(np.random.default_rng(0).standard_normal(200000).astype(np.float32))
    y = tt.nn.functional.alpha_dropout(x, 0.2, training=True).numpy()
    assert abs(y.mean()) < 0.02 and abs(y.std() - 1) < 0.02


INTERP = [dict(size=(9, 5)), dict(scale_factor=2), dict(scale_factor=1.7),
          dict(size=(5, 9), mode="bilinear"), dict(scale_factor=2, mode="bilinear"),
          dict(size=(4, 11), mode="bilinear", align_corners=True),
          dict(scale_factor=0.5, mode="bilinear"), dict(size=(9, 5), mode="nearest-exact"),
          dict(size=(3, 4), mode="area")]


@pytest.mark.parametrize("case", INTERP, ids=[str(i) for i in range(len(INTERP))])
def test_interpolate(case: dict[str, Any]) -> None:
    def prog(torch: Any) -> Any:
        x = _t(torch, X4)
        y = torch.nn.functional.interpolate(x, **case)
        return y, _grads(torch, y, x)
    compare(prog, real, tt, rtol=1e-7, atol=1e-10)


def test_interpolate_1d_3d_and_errors() -> None:
    def prog(torch: Any) -> Any:
        F = torch.nn.functional
        x3, x5 = _t(torch, X3), _t(torch, X5)
        out: list[Any] = []
        for y, leaf in ((F.interpolate(x3, scale_factor=3, mode="linear"), x3),
                        (F.interpolate(x5, size=(3, 6, 5), mode="trilinear"), x5),
                        (F.interpolate(x5, scale_factor=2), x5)):
            out.append((y, _grads(torch, y, leaf)))
        for fn in (lambda: F.interpolate(x3, size=4, scale_factor=2),
                   lambda: F.interpolate(x3, size=4, align_corners=True)):
            try:
                fn()
            except Exception as e:  # noqa: BLE001
                out.append(e)
        return out
    compare(prog, real, tt, rtol=1e-7, atol=1e-10)


def test_unfold_fold() -> None:
    def prog(torch: Any) -> Any:
        F = torch.nn.functional
        x = _t(torch, X4)
        u = F.unfold(x, (3, 2), dilation=(1, 2), padding=1, stride=(2, 1))
        c = _t(torch, RNG_COLS)
        f = F.fold(c, (5, 6), 2, stride=(1, 2), padding=(1, 0))
        return u.detach(), _grads(torch, u, x), f.detach(), _grads(torch, f, c)
    compare(prog, real, tt, rtol=1e-7, atol=1e-10)


RNG_COLS = RNG.standard_normal((2, 12, 6 * 3))


def test_pad_modules_and_pairwise() -> None:
    def prog(torch: Any) -> Any:
        nn = torch.nn
        x = torch.tensor(X4)
        return ([m(x) for m in (nn.ZeroPad2d(1), nn.ZeroPad2d((1, 0, 2, 1)),
                                nn.ReflectionPad2d(2), nn.ReplicationPad2d((1, 2, 0, 1)),
                                nn.ConstantPad2d(1, 3.5), nn.CircularPad2d(1))],
                [repr(m) for m in (nn.ZeroPad2d(1), nn.ReflectionPad2d(2),
                                   nn.ConstantPad2d(1, 3.5), nn.Unflatten(1, (2, 2)))],
                torch.nn.functional.pairwise_distance(torch.tensor(X4[0, 0]),
                                                      torch.tensor(X4[1, 0])))
    compare(prog, real, tt, rtol=1e-7, atol=1e-10)


# ----------------------------------------------------------------------------- models
def _lenet(torch: Any) -> Any:
    nn = torch.nn
    return nn.Sequential(
        nn.Conv2d(1, 6, 5), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(6, 16, 5), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(16 * 4 * 4, 120), nn.ReLU(), nn.Linear(120, 84), nn.ReLU(),
        nn.Linear(84, 10))


def test_lenet_default_init_and_training_steps() -> None:
    xb = RNG.standard_normal((8, 1, 28, 28)).astype(np.float32)
    yb = RNG.integers(0, 10, 8)

    def prog(torch: Any) -> Any:
        torch.manual_seed(0)
        model = _lenet(torch)
        opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
        losses = []
        for _ in range(3):
            opt.zero_grad()
            loss = torch.nn.functional.cross_entropy(model(torch.tensor(xb)),
                                                     torch.tensor(yb))
            loss.backward()
            opt.step()
            losses.append(loss.item())
        return losses, [p.detach() for p in model.parameters()], repr(model)
    compare(prog, real, tt, rtol=2e-4, atol=2e-5)


def test_cnn_with_batchnorm_conv_transpose_and_padding_modes() -> None:
    xb = RNG.standard_normal((4, 3, 8, 8)).astype(np.float32)

    def prog(torch: Any) -> Any:
        nn = torch.nn
        torch.manual_seed(1)
        model = nn.Sequential(
            nn.Conv2d(3, 8, 3, padding=1, padding_mode="reflect"), nn.BatchNorm2d(8),
            nn.ReLU(), nn.Conv2d(8, 8, 3, padding="same", groups=8, bias=False),
            nn.AvgPool2d(2), nn.ConvTranspose2d(8, 4, 3, stride=2, padding=1, output_padding=1),
            nn.GroupNorm(2, 4), nn.Conv2d(4, 2, 3, padding=1, padding_mode="circular"),
            nn.AdaptiveAvgPool2d(1), nn.Flatten())
        y = model(torch.tensor(xb))
        (y ** 2).sum().backward()
        bn = model[1]
        return (y.detach(), [p.grad for p in model.parameters()], bn.running_mean,
                bn.running_var, repr(model))
    compare(prog, real, tt, rtol=2e-4, atol=2e-5)
