"""The added ``torch.nn.functional`` / ``torch.nn`` names, without PyTorch: values against
NumPy formulas, gradients against finite differences, module reprs, lazy modules,
``ParameterDict``, errors.  (The conformance suite compares them with real PyTorch.)"""

from __future__ import annotations

import itertools
import math
from typing import Any

import numpy as np
import pytest

import tapegrad.torch as torch
import tapegrad.torch.nn as nn
import tapegrad.torch.nn.functional as F
from tapegrad.testing import gradcheck

RNG = np.random.default_rng(0)
X64 = RNG.standard_normal((3, 5)) * 2


def t64(a: Any) -> Any:
    return torch.tensor(np.asarray(a, dtype=np.float64))


def sig(a: np.ndarray) -> np.ndarray:
    return 1 / (1 + np.exp(-a))


# ----------------------------------------------------------------------------- activations
ACT_REF = [
    ("selu", F.selu, lambda a: 1.0507009873554805 * np.where(
        a > 0, a, 1.6732632423543772 * np.expm1(a))),
    ("celu", lambda x: F.celu(x, 0.7), lambda a: np.where(a > 0, a, 0.7 * np.expm1(a / 0.7))),
    ("hardswish", F.hardswish, lambda a: a * np.clip(a + 3, 0, 6) / 6),
    ("hardsigmoid", F.hardsigmoid, lambda a: np.clip(a + 3, 0, 6) / 6),
    ("softsign", F.softsign, lambda a: a / (1 + np.abs(a))),
    ("tanhshrink", F.tanhshrink, lambda a: a - np.tanh(a)),
    ("softshrink", lambda x: F.softshrink(x, 0.5),
     lambda a: np.where(a > 0.5, a - 0.5, np.where(a < -0.5, a + 0.5, 0))),
    ("hardshrink", lambda x: F.hardshrink(x, 0.5), lambda a: np.where(np.abs(a) > 0.5, a, 0)),
    ("threshold", lambda x: F.threshold(x, 0.3, -2.0), lambda a: np.where(a > 0.3, a, -2.0)),
    ("rrelu_eval", F.rrelu, lambda a: np.where(a >= 0, a, a * (1 / 8 + 1 / 3) / 2)),
    ("glu", lambda x: F.glu(x[:2], 0), lambda a: a[:1] * sig(a[1:2])),
    ("prelu", lambda x: F.prelu(x, x.new_tensor([0.1, 0.2, 0.3, 0.4, 0.5])),
     lambda a: np.where(a > 0, a, a * np.array([0.1, 0.2, 0.3, 0.4, 0.5]))),
]


@pytest.mark.parametrize("name,f,ref", ACT_REF, ids=[a[0] for a in ACT_REF])
def test_activation_values_and_gradients(name: str, f: Any, ref: Any) -> None:
    x = t64(X64)
    np.testing.assert_allclose(f(x).numpy(), ref(X64), rtol=1e-12, atol=1e-12)
    assert f(torch.tensor(X64.astype(np.float32))).dtype == torch.float32
    gradcheck(f, [x])


def test_kink_gradients_follow_pytorch_kernels() -> None:
    x = torch.tensor([-3.0, 3.0, -0.5, 0.5], dtype=torch.float64, requires_grad=True)
    F.hardswish(x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [0.0, 1.0, 1 / 3, 2 / 3], rtol=1e-15)
    for f, want in ((F.hardsigmoid, [0, 0, 1 / 6, 1 / 6]), (lambda t: F.softshrink(t, 0.5),
                                                              [1, 1, 0, 0]),
                    (lambda t: F.hardshrink(t, 0.5), [1, 1, 0, 0])):
        x.grad = None
        f(x).sum().backward()
        np.testing.assert_allclose(x.grad.numpy(), want)


def test_prelu_weight_gradient_per_channel() -> None:
    x = t64(RNG.standard_normal((2, 3, 4)))
    w = t64([0.1, 0.2, 0.3])
    gradcheck(lambda a, b: F.prelu(a, b), [x, w])
    w.requires_grad_()
    F.prelu(x, w).sum().backward()
    xa = x.numpy()
    np.testing.assert_allclose(w.grad.numpy(), np.where(xa > 0, 0, xa).sum(axis=(0, 2)))


def test_rrelu_training_draws_for_nonpositive_elements_only() -> None:
    torch.manual_seed(0)
    x = torch.tensor([[1.0, -1.0, 2.0, -2.0]])
    y = F.rrelu(x, 0.1, 0.3, training=True)
    r = -y.numpy()[0, [1, 3]] / np.array([1.0, 2.0])
    assert np.all((r >= 0.1) & (r <= 0.3))
    np.testing.assert_array_equal(y.numpy()[0, [0, 2]], [1.0, 2.0])
    torch.manual_seed(0)
    u = torch.rand(2, dtype=torch.float64).numpy()  # the same double draws
    np.testing.assert_allclose(r, (0.1 + 0.2 * u).astype(np.float32), rtol=1e-6)


def test_gumbel_softmax() -> None:
    torch.manual_seed(0)
    x = torch.tensor(X64.astype(np.float32), requires_grad=True)
    y = F.gumbel_softmax(x, tau=0.5)
    np.testing.assert_allclose(y.sum(1).detach().numpy(), 1.0, rtol=1e-6)
    h = F.gumbel_softmax(x, hard=True)
    assert set(np.unique(h.detach().numpy())) <= {0.0, 1.0}
    np.testing.assert_allclose(h.sum(1).detach().numpy(), 1.0)
    (h * torch.arange(5.0)).sum().backward()  # straight through: the soft sample's gradient
    assert x.grad is not None and np.abs(x.grad.numpy()).sum() > 0


# ----------------------------------------------------------------------------- losses
A = RNG.standard_normal((3, 4))
B = RNG.standard_normal((3, 4))
SGN = np.where(RNG.standard_normal((3, 4)) > 0, 1.0, -1.0)


def _red(v: np.ndarray, r: str) -> Any:
    return v.mean() if r == "mean" else v.sum() if r == "sum" else v


@pytest.mark.parametrize("r", ["mean", "sum", "none"])
def test_pointwise_losses(r: str) -> None:
    a, b = t64(A), t64(B)
    d = A - B
    hub = np.where(np.abs(d) < 1.5, 0.5 * d * d, 1.5 * (np.abs(d) - 0.75))
    np.testing.assert_allclose(F.huber_loss(a, b, reduction=r, delta=1.5).numpy(),
                               _red(hub, r))
    np.testing.assert_allclose(F.soft_margin_loss(a, t64(SGN), reduction=r).numpy(),
                               _red(np.log1p(np.exp(-SGN * A)), r))
    hinge = np.where(SGN == 1, A, np.maximum(0, 1.2 - A))
    np.testing.assert_allclose(F.hinge_embedding_loss(a, t64(SGN), 1.2, reduction=r).numpy(),
                               _red(hinge, r))
    lab = (SGN > 0).astype(float)
    mlsm = -(lab * np.log(sig(A)) + (1 - lab) * np.log(sig(-A))).mean(1)
    np.testing.assert_allclose(F.multilabel_soft_margin_loss(a, t64(lab), reduction=r).numpy(),
                               _red(mlsm, r))
    pos = np.abs(B) + 0.5
    np.testing.assert_allclose(F.poisson_nll_loss(a, t64(pos), reduction=r).numpy(),
                               _red(np.exp(A) - pos * A, r))
    var = np.abs(B) + 0.1
    g = 0.5 * (np.log(var) + d * d / var) + 0.5 * math.log(2 * math.pi)
    np.testing.assert_allclose(F.gaussian_nll_loss(a, b, t64(var), full=True,
                                                   reduction=r).numpy(), _red(g, r))
    for f in (lambda p: F.huber_loss(p, b, reduction=r),
              lambda p: F.soft_margin_loss(p, t64(SGN), reduction=r),
              lambda p: F.multilabel_soft_margin_loss(p, t64(lab), reduction=r),
              lambda p: F.poisson_nll_loss(p, t64(pos), reduction=r),
              lambda p: F.poisson_nll_loss(p.abs() + 0.5, t64(pos * 3), log_input=False,
                                           full=True, reduction=r),
              lambda p: F.gaussian_nll_loss(p, b, t64(var), reduction=r)):
        gradcheck(f, [a])


def test_poisson_full_stirling_term() -> None:
    x, t = np.array([0.5, 1.0, 2.0]), np.array([0.5, 3.0, 7.0])
    st = np.where(t > 1, t * np.log(t) - t + 0.5 * np.log(2 * np.pi * t), 0)
    got = F.poisson_nll_loss(t64(x), t64(t), log_input=False, full=True, reduction="none")
    np.testing.assert_allclose(got.numpy(), x - t * np.log(x + 1e-8) + st)


def test_gaussian_nll_var_clamp_is_not_differentiated() -> None:
    v = torch.tensor([1e-9, 2.0], dtype=torch.float64, requires_grad=True)
    x = t64([1.0, 1.0])
    F.gaussian_nll_loss(x, t64([0.0, 0.0]), v, reduction="sum").backward()
    vv = np.array([1e-6, 2.0])  # clamped values, identity gradient through the clamp
    np.testing.assert_allclose(v.grad.numpy(), 0.5 * (1 / vv - 1 / vv ** 2))


@pytest.mark.parametrize("r", ["mean", "sum", "none"])
def test_pair_and_triplet_losses(r: str) -> None:
    a, b, y = t64(A), t64(B), t64([1.0, -1.0, 1.0])
    mr = np.maximum(0, -np.array([1, -1, 1]) * (A[:, 0] - B[:, 0]) + 0.3)
    np.testing.assert_allclose(F.margin_ranking_loss(a[:, 0], b[:, 0], y, 0.3,
                                                     reduction=r).numpy(), _red(mr, r))
    cos = (A * B).sum(1) / np.sqrt(((A * A).sum(1) + 1e-12) * ((B * B).sum(1) + 1e-12))
    ce = np.where(np.array([1, -1, 1]) == 1, 1 - cos, np.maximum(0, cos - 0.1))
    np.testing.assert_allclose(F.cosine_embedding_loss(a, b, y, 0.1, reduction=r).numpy(),
                               _red(ce, r))
    n = A[::-1] * 0.5
    dp = np.sqrt(((A - B + 1e-6) ** 2).sum(1))
    dn = np.sqrt(((A - n + 1e-6) ** 2).sum(1))
    np.testing.assert_allclose(F.triplet_margin_loss(a, b, t64(n), 1.5, reduction=r).numpy(),
                               _red(np.maximum(dp - dn + 1.5, 0), r))
    got = F.triplet_margin_with_distance_loss(a, b, t64(n), reduction=r)
    np.testing.assert_allclose(got.numpy(), _red(np.maximum(dp - dn + 1.0, 0), r))
    gradcheck(lambda p, q: F.cosine_embedding_loss(p, q, y, 0.1, reduction=r), [a, b])
    gradcheck(lambda p, q: F.triplet_margin_loss(p, q, t64(n), swap=True, reduction=r), [a, b])


@pytest.mark.parametrize("r", ["mean", "sum", "none"])
def test_multi_margin_and_multilabel_margin(r: str) -> None:
    a = t64(A)
    tgt = np.array([3, 0, 2])
    w = np.array([0.5, 1.0, 2.0, 1.5])
    for p, m, wt in ((1, 1.0, None), (2, 0.7, w)):
        ref = []
        for i in range(3):
            s = 0.0
            for j in range(4):
                if j != tgt[i]:
                    z = max(0.0, m - A[i, tgt[i]] + A[i, j]) ** p
                    s += z * (1 if wt is None else wt[tgt[i]])
            ref.append(s / 4)
        got = F.multi_margin_loss(a, torch.tensor(tgt), p=p, margin=m,
                                  weight=None if wt is None else t64(wt), reduction=r)
        np.testing.assert_allclose(got.numpy(), _red(np.array(ref), r))
        gradcheck(lambda q, p=p, m=m: F.multi_margin_loss(q, torch.tensor(tgt), p=p, margin=m,
                                                          reduction=r), [a])
    mt = np.array([[3, 0, -1, 1], [1, -1, 2, 2], [0, 1, 2, 3]])
    ref = []
    for i in range(3):
        ys = list(itertools.takewhile(lambda v: v >= 0, mt[i]))
        s = sum(max(0.0, 1 - (A[i, j] - A[i, k])) for j in ys for k in range(4) if k not in ys)
        ref.append(s / 4)
    np.testing.assert_allclose(F.multilabel_margin_loss(a, torch.tensor(mt),
                                                        reduction=r).numpy(), _red(np.array(ref), r))
    gradcheck(lambda q: F.multilabel_margin_loss(q, torch.tensor(mt), reduction=r), [a])


def _ctc_brute(lp: np.ndarray, target: list[int], blank: int = 0) -> float:
    """-log of the total probability of all alignments of ``target`` (by enumeration)."""
    t, c = lp.shape
    total = 0.0
    for path in itertools.product(range(c), repeat=t):
        col = [k for k, _ in itertools.groupby(path)]
        if [k for k in col if k != blank] == target:
            total += math.exp(sum(lp[i, path[i]] for i in range(t)))
    return -math.log(total) if total > 0 else math.inf


def test_ctc_loss_matches_enumeration_and_gradients() -> None:
    logits = RNG.standard_normal((4, 2, 3))
    x = t64(logits)
    lp = F.log_softmax(x, 2)
    tg = [[1, 1], [2, 0]]
    got = F.ctc_loss(lp, torch.tensor(tg), torch.tensor([4, 3]), torch.tensor([2, 1]),
                     reduction="none")
    lpa = lp.numpy()
    want = [_ctc_brute(lpa[:, 0], [1, 1]), _ctc_brute(lpa[:3, 1], [2])]
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-12)
    # through log_softmax PyTorch's folded gradient is the true one
    for r in ("mean", "sum"):
        gradcheck(lambda q, r=r: F.ctc_loss(F.log_softmax(q, 2), torch.tensor(tg),
                                            torch.tensor([4, 3]), torch.tensor([2, 1]),
                                            reduction=r), [x])
    mean = F.ctc_loss(lp, torch.tensor(tg), (4, 3), (2, 1))
    np.testing.assert_allclose(mean.item(), (want[0] / 2 + want[1] / 1) / 2, rtol=1e-12)


def test_ctc_zero_infinity() -> None:
    lp = F.log_softmax(t64(RNG.standard_normal((2, 1, 3))), 2)
    bad = F.ctc_loss(lp, torch.tensor([[1, 1]]), [2], [2], reduction="sum")
    assert math.isinf(bad.item())
    x = lp.detach().requires_grad_()
    z = F.ctc_loss(x, torch.tensor([[1, 1]]), [2], [2], reduction="sum", zero_infinity=True)
    z.backward()
    assert z.item() == 0.0 and np.all(x.grad.numpy() == 0)


# ----------------------------------------------------------------------------- layers
def test_pixel_and_channel_shuffle() -> None:
    a = np.arange(2 * 8 * 2 * 3, dtype=np.float64).reshape(2, 8, 2, 3)
    y = F.pixel_shuffle(t64(a), 2).numpy()
    ref = a.reshape(2, 2, 2, 2, 2, 3).transpose(0, 1, 4, 2, 5, 3).reshape(2, 2, 4, 6)
    np.testing.assert_array_equal(y, ref)
    np.testing.assert_array_equal(F.pixel_unshuffle(torch.tensor(y), 2).numpy(), a)
    cs = F.channel_shuffle(t64(a), 4).numpy()
    np.testing.assert_array_equal(cs, a.reshape(2, 4, 2, 2, 3).swapaxes(1, 2).reshape(a.shape))
    gradcheck(lambda q: F.pixel_shuffle(q, 2), [t64(a / 10)])


def test_local_response_norm_pdist_lp_pool() -> None:
    a = RNG.standard_normal((2, 5, 3))
    sq = np.pad(a * a, ((0, 0), (1, 1), (0, 0)))
    avg = (sq[:, :-2] + sq[:, 1:-1] + sq[:, 2:]) / 3
    np.testing.assert_allclose(F.local_response_norm(t64(a), 3, alpha=0.1).numpy(),
                               a / (1 + 0.1 * avg) ** 0.75, rtol=1e-12)
    gradcheck(lambda q: F.local_response_norm(q, 2), [t64(a)])
    gradcheck(lambda q: F.local_response_norm(q, 3), [t64(RNG.standard_normal((1, 4, 2, 2)))])
    i, j = np.triu_indices(3, 1)
    np.testing.assert_allclose(F.pdist(t64(A)).numpy(),
                               np.sqrt(((A[i] - A[j]) ** 2).sum(1)))
    gradcheck(lambda q: F.pdist(q, 1.5), [t64(A)])
    b = np.abs(RNG.standard_normal((1, 2, 6))) + 0.1
    ref = np.stack([(b[..., k:k + 3] ** 2).sum(-1) ** 0.5 for k in (0, 3)], -1)
    np.testing.assert_allclose(F.lp_pool1d(t64(b), 2, 3).numpy(), ref, rtol=1e-12)
    gradcheck(lambda q: F.lp_pool2d(q, 3, 2), [t64(np.abs(RNG.standard_normal((1, 1, 4, 4)))
                                               + 0.1)])


def test_embedding_bag_functional() -> None:
    w = RNG.standard_normal((6, 2))
    idx = torch.tensor([0, 2, 4, 5, 1])
    off = torch.tensor([0, 2, 2])
    s = F.embedding_bag(idx, t64(w), off, mode="sum").numpy()
    np.testing.assert_allclose(s, [w[0] + w[2], np.zeros(2), w[4] + w[5] + w[1]])
    m = F.embedding_bag(idx, t64(w), off, mode="mean").numpy()
    np.testing.assert_allclose(m[2], (w[4] + w[5] + w[1]) / 3)
    mx = F.embedding_bag(idx.view(1, 5), t64(w), mode="max", padding_idx=5).numpy()
    np.testing.assert_allclose(mx[0], np.max(w[[0, 2, 4, 1]], 0))
    gradcheck(lambda q: F.embedding_bag(idx, q, off, mode="mean"), [t64(w)])
    pw = F.embedding_bag(idx, t64(w), torch.tensor([0, 2, 5]), mode="sum",
                         per_sample_weights=t64([1, 2, 3, 4, 5]), include_last_offset=True)
    np.testing.assert_allclose(pw.numpy(), [w[0] + 2 * w[2], 3 * w[4] + 4 * w[5] + 5 * w[1]])


def _bilinear_ref(img: np.ndarray, gx: float, gy: float, align: bool) -> np.ndarray:
    c, h, w = img.shape
    if align:
        x, y = (gx + 1) / 2 * (w - 1), (gy + 1) / 2 * (h - 1)
    else:
        x, y = ((gx + 1) * w - 1) / 2, ((gy + 1) * h - 1) / 2
    x0, y0 = math.floor(x), math.floor(y)
    out = np.zeros(c)
    for yy, xx in itertools.product((y0, y0 + 1), (x0, x0 + 1)):
        if 0 <= xx < w and 0 <= yy < h:
            out += img[:, yy, xx] * (1 - abs(x - xx)) * (1 - abs(y - yy))
    return out


@pytest.mark.parametrize("align", [False, True])
def test_grid_sample_bilinear_and_gradients(align: bool) -> None:
    img = RNG.standard_normal((1, 2, 3, 4))
    grid = RNG.uniform(-1.2, 1.2, (1, 2, 3, 2))
    y = F.grid_sample(t64(img), t64(grid), align_corners=align).numpy()
    for i, j in itertools.product(range(2), range(3)):
        np.testing.assert_allclose(y[0, :, i, j], _bilinear_ref(img[0], *grid[0, i, j], align),
                                   rtol=1e-12, atol=1e-12)
    for pad in ("zeros", "border", "reflection"):
        gradcheck(lambda a, g, pad=pad: F.grid_sample(a, g, padding_mode=pad,
                                                      align_corners=align),
                  [t64(img), t64(grid)])


def test_affine_grid_identity_and_warning() -> None:
    th = t64([[[1.0, 0, 0], [0, 1.0, 0]]])
    g = F.affine_grid(th, [1, 1, 2, 3], align_corners=True).numpy()
    np.testing.assert_allclose(g[0, :, :, 0], [[-1, 0, 1]] * 2)
    np.testing.assert_allclose(g[0, :, :, 1], [[-1] * 3, [1] * 3])
    with pytest.warns(UserWarning, match="align_corners=False"):
        F.affine_grid(th, [1, 1, 2, 3])
    img = t64(RNG.standard_normal((1, 1, 3, 3)))
    same = F.grid_sample(img, F.affine_grid(th, [1, 1, 3, 3], align_corners=False),
                         align_corners=False)
    np.testing.assert_allclose(same.numpy(), img.numpy(), atol=1e-12)
    gradcheck(lambda q: F.affine_grid(q, [1, 1, 2, 3], align_corners=False), [th], order=2)
    th3 = t64(RNG.standard_normal((2, 3, 4)))
    g3 = F.affine_grid(th3.detach().requires_grad_(), [2, 1, 2, 3, 2], align_corners=True)
    assert type(g3.grad_fn).__name__ == "AffineGridGeneratorBackward0"
    gradcheck(lambda q: F.affine_grid(q, [2, 1, 2, 3, 2], align_corners=True), [th3])
    b = torch.func.vmap(lambda q: F.affine_grid(q, [2, 1, 2, 3], align_corners=False))(
        t64(RNG.standard_normal((3, 2, 2, 3))))
    assert tuple(b.shape) == (3, 2, 2, 3, 2)


# ----------------------------------------------------------------------------- modules
def test_module_reprs() -> None:
    cases = {
        nn.PReLU(): "PReLU(num_parameters=1)", nn.GLU(): "GLU(dim=-1)", nn.SELU(): "SELU()",
        nn.CELU(): "CELU(alpha=1.0)", nn.Hardshrink(): "Hardshrink(0.5)",
        nn.Softshrink(0.3): "Softshrink(0.3)", nn.Threshold(0.1, 20): "Threshold(threshold=0.1, value=20)",
        nn.RReLU(): "RReLU(lower=0.125, upper=0.3333333333333333)",
        nn.PixelShuffle(2): "PixelShuffle(upscale_factor=2)",
        nn.LPPool2d(2, 3): "LPPool2d(norm_type=2, kernel_size=3, stride=None, ceil_mode=False)",
        nn.LocalResponseNorm(2): "LocalResponseNorm(2, alpha=0.0001, beta=0.75, k=1.0)",
        nn.HuberLoss(): "HuberLoss()", nn.Softmin(1): "Softmin(dim=1)",
        nn.LazyLinear(3): "LazyLinear(in_features=0, out_features=3, bias=True)",
        nn.SyncBatchNorm(3): "SyncBatchNorm(3, eps=1e-05, momentum=0.1, affine=True, bias=True, "
                             "track_running_stats=True)",
        nn.TripletMarginWithDistanceLoss(): "TripletMarginWithDistanceLoss(\n"
                                            "  (distance_function): PairwiseDistance()\n)",
        nn.Bilinear(2, 3, 4): "Bilinear(in1_features=2, in2_features=3, out_features=4, "
                              "bias=True)",
    }
    for m, want in cases.items():
        assert repr(m) == want


def test_prelu_module_and_state_dict() -> None:
    m = nn.PReLU(3, init=0.1)
    assert list(m.state_dict()) == ["weight"]
    np.testing.assert_allclose(m.weight.detach().numpy(), [0.1] * 3)
    y = m(torch.tensor([[-1.0, 2.0, -3.0]]))
    np.testing.assert_allclose(y.detach().numpy(), [[-0.1, 2.0, -0.3]], rtol=1e-6)


def test_lazy_linear_materializes_in_place() -> None:
    m = nn.LazyLinear(3)
    assert isinstance(m.weight, nn.UninitializedParameter)
    assert nn.parameter.is_lazy(m.weight)
    w_obj = m.weight
    opt = torch.optim.SGD(m.parameters(), lr=0.1)
    torch.manual_seed(0)
    y = m(torch.ones(2, 4))
    assert type(m) is nn.Linear and m.weight is w_obj and type(w_obj) is nn.Parameter
    assert tuple(m.weight.shape) == (3, 4) and m.in_features == 4
    torch.manual_seed(0)
    ref = nn.Linear(4, 3)
    np.testing.assert_array_equal(m.weight.detach().numpy(), ref.weight.detach().numpy())
    before = m.weight.detach().numpy().copy()
    y.sum().backward()
    opt.step()
    np.testing.assert_allclose(m.weight.detach().numpy(), before - 0.1 * 2, rtol=1e-6)
    with pytest.raises(RuntimeError, match="uninitialized parameter"):
        _ = nn.LazyLinear(2).weight.shape


def test_lazy_conv_materializes() -> None:
    torch.manual_seed(0)
    m = nn.LazyConv2d(4, 3)
    assert repr(m) == "LazyConv2d(0, 4, kernel_size=(3, 3), stride=(1, 1))"
    y = m(torch.ones(1, 2, 5, 5))
    assert type(m) is nn.Conv2d and tuple(y.shape) == (1, 4, 3, 3)
    torch.manual_seed(0)
    np.testing.assert_array_equal(m.weight.detach().numpy(),
                                  nn.Conv2d(2, 4, 3).weight.detach().numpy())


def test_parameter_dict() -> None:
    p = nn.ParameterDict({"a": torch.ones(2), "b": nn.Parameter(torch.zeros(3))})
    assert isinstance(p["a"], nn.Parameter) and p["a"].requires_grad
    assert [n for n, _ in p.named_parameters()] == ["a", "b"]
    assert repr(p) == ("ParameterDict(\n    (a): Parameter containing: [torch.FloatTensor of "
                       "size 2]\n    (b): Parameter containing: [torch.FloatTensor of size 3]\n)")
    del p["a"]
    assert list(p.keys()) == ["b"] and "a" not in p and len(p) == 1


def test_sync_batchnorm_is_batchnorm_in_one_process() -> None:
    x = torch.tensor(RNG.standard_normal((4, 3, 2)).astype(np.float32))
    s, b = nn.SyncBatchNorm(3), nn.BatchNorm1d(3)
    np.testing.assert_allclose(s(x).detach().numpy(), b(x).detach().numpy(), rtol=1e-6)
    np.testing.assert_allclose(s.running_var.numpy(), b.running_var.numpy(), rtol=1e-6)
    with pytest.raises(ValueError, match=r"expected at least 2D input \(got 1D input\)"):
        s(torch.ones(3))
    conv = nn.SyncBatchNorm.convert_sync_batchnorm(nn.Sequential(nn.BatchNorm2d(2)))
    assert type(conv[0]) is nn.SyncBatchNorm


def test_module_forwards_match_functional() -> None:
    x = torch.tensor(RNG.standard_normal((2, 4, 3, 3)).astype(np.float32))
    pairs = [(nn.Hardswish(), F.hardswish), (nn.Softsign(), F.softsign),
             (nn.Softmax2d(), lambda t: F.softmax(t, -3)), (nn.GLU(1), lambda t: F.glu(t, 1)),
             (nn.ChannelShuffle(2), lambda t: F.channel_shuffle(t, 2)),
             (nn.LogSigmoid(), F.logsigmoid), (nn.Tanhshrink(), F.tanhshrink)]
    for m, f in pairs:
        np.testing.assert_array_equal(m(x).detach().numpy(), f(x).detach().numpy())
    loss = nn.CTCLoss()(F.log_softmax(torch.tensor(RNG.standard_normal((5, 1, 3))), 2),
                        torch.tensor([[1, 2]]), [5], [2])
    assert loss.dtype == torch.float64


# ----------------------------------------------------------------------------- errors
@pytest.mark.parametrize("call,exc,msg", [
    (lambda: F.glu(torch.ones(3)), RuntimeError,
     "Halving dimension must be even, but dimension 0 is size 3"),
    (lambda: F.pixel_shuffle(torch.ones(1, 5, 2, 2), 2), RuntimeError,
     "pixel_shuffle expects its input's 'channel' dimension to be divisible by the square of "
     "upscale_factor, but input.size(-3)=5 is not divisible by 4"),
    (lambda: F.softshrink(torch.ones(2), -1.0), RuntimeError,
     "lambda must be in range [0, 3.40282e+38] for input dtype Float, but found -1"),
    (lambda: F.multi_margin_loss(torch.ones(2, 3), torch.tensor([0, 1]), p=3), ValueError,
     "only p == 1 and p == 2 supported"),
    (lambda: F.gaussian_nll_loss(torch.ones(2, 3), torch.ones(2, 3), torch.ones(3)),
     ValueError, "var is of incorrect size"),
    (lambda: F.grid_sample(torch.ones(1, 1, 2, 2), torch.ones(1, 2, 2, 2), mode="cubic"),
     ValueError, "nn.functional.grid_sample(): expected mode to be 'bilinear', 'nearest' or "
     "'bicubic', but got: 'cubic'"),
    (lambda: nn.Softmax2d()(torch.ones(2, 3)), ValueError,
     "Softmax2d: expected input to be 3D or 4D, got 2D instead"),
])
def test_errors(call: Any, exc: type, msg: str) -> None:
    with pytest.raises(exc) as e:
        call()
    assert str(e.value) == msg


def test_fractional_max_pool2d_windows() -> None:
    x = RNG.standard_normal((1, 2, 7, 8))
    s = np.array([[[0.3, 0.8], [0.0, 0.5]]])
    y, idx = F.fractional_max_pool2d(t64(x), 2, output_size=(3, 4), return_indices=True,
                                     _random_samples=t64(s))

    def starts(u: float, n: int, out: int, k: int) -> list[int]:
        a = (n - k) / (out - 1)
        return [int((i + u) * a) - int(u * a) for i in range(out - 1)] + [n - k]

    for c in range(2):
        hs, ws = starts(s[0, c, 1], 7, 3, 2), starts(s[0, c, 0], 8, 4, 2)
        for i, h0 in enumerate(hs):
            for j, w0 in enumerate(ws):
                win = x[0, c, h0:h0 + 2, w0:w0 + 2]
                assert y.numpy()[0, c, i, j] == win.max()
                r, q = divmod(int(idx.numpy()[0, c, i, j]), 8)
                assert x[0, c, r, q] == win.max()
    gradcheck(lambda q: F.fractional_max_pool2d(q, 2, output_size=(3, 4),
                                                _random_samples=t64(s)), [t64(x)])
    m = nn.FractionalMaxPool2d(2, output_ratio=0.5)
    assert repr(m) == "FractionalMaxPool2d()" and tuple(m(t64(x)).shape) == (1, 2, 3, 4)


def test_docstring_examples() -> None:
    import doctest

    import tapegrad.torch.nn.functional_more as fm
    import tapegrad.torch.nn.modules_more as mm
    import tapegrad.torch.nn.parameter as pm

    for mod in (fm, mm, pm):
        assert doctest.testmod(mod, optionflags=doctest.NORMALIZE_WHITESPACE).failed == 0


SINGLE_NODE = [
    ("prelu", lambda x: F.prelu(x, x.new_tensor([0.1, 0.2, 0.3, 0.4, 0.5])), "PreluKernelBackward0"),
    ("glu", lambda x: F.glu(x[:, :4]), "GluBackward0"),
    ("selu", F.selu, "EluBackward0"), ("celu", lambda x: F.celu(x, 0.6), "CeluBackward0"),
    ("hardswish", F.hardswish, "HardswishBackward0"),
    ("hardsigmoid", F.hardsigmoid, "HardsigmoidBackward0"),
    ("softshrink", F.softshrink, "SoftshrinkBackward0"),
    ("hardshrink", F.hardshrink, "HardshrinkBackward0"),
    ("threshold", lambda x: F.threshold(x, 0.2, 1.0), "ThresholdBackward0"),
    ("rrelu", F.rrelu, "RreluWithNoiseBackward0"), ("mish", F.mish, "MishBackward0"),
    ("logsigmoid", F.logsigmoid, "LogSigmoidBackward0"),
    ("huber", lambda x: F.huber_loss(x, x.new_tensor(np.linspace(-1, 1, 15).reshape(3, 5)),
                                     reduction="none"),
     "HuberLossBackward0"),
    ("soft_margin", lambda x: F.soft_margin_loss(x, torch.ones(3, 5, dtype=torch.float64),
                                                 reduction="none"), "SoftMarginLossBackward0"),
    ("pixel_shuffle", lambda x: F.pixel_shuffle(x[:, :4].reshape(3, 4, 1, 1), 2),
     "PixelShuffleBackward0"),
    ("pixel_unshuffle", lambda x: F.pixel_unshuffle(x[:, :4].reshape(3, 1, 2, 2), 2),
     "PixelUnshuffleBackward0"),
    ("channel_shuffle", lambda x: F.channel_shuffle(x[:, :4].reshape(3, 4, 1), 2),
     "ChannelShuffleBackward0"),
    ("multi_margin", lambda x: F.multi_margin_loss(x, torch.tensor([0, 4, 2]), p=2,
                                                   weight=x.new_tensor([1, 2, 0.5, 1, 3]),
                                                   reduction="none"),
     "MultiMarginLossBackward0"),
    ("multi_margin_mean", lambda x: F.multi_margin_loss(x, torch.tensor([0, 4, 2]), margin=0.4),
     "MultiMarginLossBackward0"),
    ("multilabel_margin", lambda x: F.multilabel_margin_loss(
        x, torch.tensor([[0, 2, -1, 1, 1], [3, 3, -1, 0, 0], [1, 2, 3, 0, 4]]), reduction="sum"),
     "MultilabelMarginLossBackward0"),
]


@pytest.mark.parametrize("name,f,node", SINGLE_NODE, ids=[a[0] for a in SINGLE_NODE])
def test_single_node_ops(name: str, f: Any, node: str) -> None:
    """One node under PyTorch's name; second derivatives; forward mode; vmap."""
    x = t64(X64 / 2).requires_grad_()
    assert type(f(x).grad_fn).__name__ == node
    gradcheck(f, [t64(X64 / 2)], order=2)
    xs = t64(RNG.standard_normal((2, 3, 5)) / 2)
    batched = torch.func.vmap(f)(xs)
    for i in range(2):
        np.testing.assert_allclose(batched[i].numpy(), f(xs[i]).numpy(), rtol=1e-12)
    v = t64(RNG.standard_normal((3, 5)))
    _, tangent = torch.func.jvp(f, (t64(X64 / 2),), (v,))
    eps = 1e-6
    fd = (f(t64(X64 / 2 + eps * v.numpy())).numpy() - f(t64(X64 / 2 - eps * v.numpy())).numpy())
    np.testing.assert_allclose(tangent.numpy(), fd / (2 * eps), rtol=1e-5, atol=1e-7)


def test_soft_margin_target_not_differentiable() -> None:
    t = torch.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="not differentiable with respect to argument"):
        F.soft_margin_loss(torch.ones(3), t)


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
def test_embedding_bag_op_rules(mode: str) -> None:
    w = t64(RNG.standard_normal((6, 3)))
    idx = torch.tensor([0, 2, 4, 5, 1, 2])
    off = torch.tensor([0, 2, 2, 5])

    def f(q: Any) -> Any:
        return F.embedding_bag(idx, q, off, mode=mode, padding_idx=5)

    assert type(f(w.detach().requires_grad_()).grad_fn).__name__ == "EmbeddingBagBackward0"
    gradcheck(f, [w], order=2)
    ws = t64(RNG.standard_normal((2, 6, 3)))
    b = torch.func.vmap(f)(ws)
    for i in range(2):
        np.testing.assert_allclose(b[i].numpy(), f(ws[i]).numpy())
    v = t64(RNG.standard_normal((6, 3)))
    _, tan = torch.func.jvp(f, (w,), (v,))
    fd = (f(t64(w.numpy() + 1e-6 * v.numpy())).numpy()
          - f(t64(w.numpy() - 1e-6 * v.numpy())).numpy()) / 2e-6
    np.testing.assert_allclose(tan.numpy(), fd, rtol=1e-5, atol=1e-8)


def test_embedding_bag_per_sample_weights_gradients() -> None:
    w = t64(RNG.standard_normal((6, 3)))
    psw = t64(RNG.uniform(0.5, 1.5, 5))
    idx = torch.tensor([0, 2, 4, 5, 1])
    off = torch.tensor([0, 2])
    gradcheck(lambda q, p: F.embedding_bag(idx, q, off, mode="sum", per_sample_weights=p),
              [w, psw], order=2)


@pytest.mark.parametrize("mode,pad", [("bilinear", "zeros"), ("bilinear", "reflection"),
                                      ("bilinear", "border"), ("nearest", "zeros")])
def test_grid_sample_op_rules(mode: str, pad: str) -> None:
    img = RNG.standard_normal((2, 2, 3, 4))
    grid = RNG.uniform(-1.3, 1.3, (2, 2, 3, 2))

    def f(a: Any, g: Any) -> Any:
        return F.grid_sample(a, g, mode=mode, padding_mode=pad, align_corners=False)

    y = f(t64(img).requires_grad_(), t64(grid))
    assert type(y.grad_fn).__name__ == "GridSampler2DBackward0"
    gradcheck(f, [t64(img), t64(grid)], order=2 if mode == "bilinear" else 1)
    b = torch.func.vmap(f)(t64(img[None].repeat(2, 0)), t64(np.stack([grid, grid[::-1]])))
    np.testing.assert_allclose(b[1].numpy(), f(t64(img), t64(grid[::-1].copy())).numpy())
    v, u = RNG.standard_normal(img.shape), RNG.standard_normal(grid.shape) * 0.1
    _, tan = torch.func.jvp(f, (t64(img), t64(grid)), (t64(v), t64(u)))
    e = 1e-6
    fd = (f(t64(img + e * v), t64(grid + e * u)).numpy()
          - f(t64(img - e * v), t64(grid - e * u)).numpy()) / (2 * e)
    np.testing.assert_allclose(tan.numpy(), fd, rtol=1e-5, atol=1e-7)


def test_ctc_loss_under_vmap() -> None:
    lps = F.log_softmax(t64(RNG.standard_normal((2, 4, 1, 3))), 3)

    def f(lp: Any) -> Any:
        return F.ctc_loss(lp, torch.tensor([[1, 2]]), [4], [2], reduction="sum")

    b = torch.func.vmap(f)(lps)
    np.testing.assert_allclose(b.numpy(), [f(lps[0]).item(), f(lps[1]).item()])


@pytest.mark.parametrize("p", [2.0, 1.0, 3.0, float("inf")])
def test_pdist_op_rules(p: float) -> None:
    a = t64(RNG.standard_normal((4, 3)))
    assert type(F.pdist(a.detach().requires_grad_(), p).grad_fn).__name__ == "PdistBackward0"
    gradcheck(lambda q: F.pdist(q, p), [a], order=2 if p in (2.0, 3.0) else 1)
    v = t64(RNG.standard_normal((4, 3)))
    _, tan = torch.func.jvp(lambda q: F.pdist(q, p), (a,), (v,))
    fd = (F.pdist(t64(a.numpy() + 1e-6 * v.numpy()), p).numpy()
          - F.pdist(t64(a.numpy() - 1e-6 * v.numpy()), p).numpy()) / 2e-6
    np.testing.assert_allclose(tan.numpy(), fd, rtol=1e-5, atol=1e-8)
    same = t64(np.ones((2, 3))).requires_grad_()  # zero distance: zero gradient
    F.pdist(same, p).sum().backward()
    np.testing.assert_array_equal(same.grad.numpy(), 0)
