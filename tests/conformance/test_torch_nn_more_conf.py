"""The added ``torch.nn.functional`` / ``torch.nn`` names against real PyTorch: values,
gradients, dtypes, module reprs, initial parameters after the same seed, state_dict keys
and error texts."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from tests.torch_style.torch_harness import compare

real = pytest.importorskip("torch")
import tapegrad.torch as tt  # noqa: E402

RNG = np.random.default_rng(0)
X = RNG.standard_normal((3, 4)).astype(np.float32) * 3
X[0, :4] = [-3.0, 3.0, 0.5, -0.5]  # the kinks of hardswish / hardsigmoid / shrink
X4 = RNG.standard_normal((2, 4, 3, 3)).astype(np.float32)


def _vg(torch: Any, fn: Callable[..., Any], *arrays: Any, grad: bool = True) -> Any:
    """``fn``'s value (detached) and the gradients of a weighted sum of it."""
    ins = [torch.tensor(a, requires_grad=grad and a.dtype.kind == "f")
           if isinstance(a, np.ndarray) else a for a in arrays]
    out = fn(*ins)
    res = [out.detach()]
    if grad and out.requires_grad:
        w = torch.tensor(np.linspace(0.5, 1.5, max(out.numel(), 1)).astype(
            np.float64 if out.dtype == torch.float64 else np.float32).reshape(tuple(out.shape)))
        (out * w).sum().backward()
        res += [t.grad for t in ins if isinstance(t, torch.Tensor) and t.requires_grad]
    return res


ACTS: list[tuple[str, Callable[[Any, Any], Any]]] = [
    ("selu", lambda F, x: F.selu(x)),
    ("celu", lambda F, x: F.celu(x, 0.7)),
    ("hardswish", lambda F, x: F.hardswish(x)),
    ("hardsigmoid", lambda F, x: F.hardsigmoid(x)),
    ("softsign", lambda F, x: F.softsign(x)),
    ("tanhshrink", lambda F, x: F.tanhshrink(x)),
    ("softshrink", lambda F, x: F.softshrink(x, 0.5)),
    ("hardshrink", lambda F, x: F.hardshrink(x, 0.5)),
    ("threshold", lambda F, x: F.threshold(x, 0.5, -2.0)),
    ("rrelu_eval", lambda F, x: F.rrelu(x)),
    ("glu", lambda F, x: F.glu(x, 1)),
    ("glu0", lambda F, x: F.glu(x[:2], 0)),
    ("mish", lambda F, x: F.mish(x)),
    ("logsigmoid", lambda F, x: F.logsigmoid(x)),
    ("softmin", lambda F, x: F.softmin(x, 1)),
    ("prelu1", lambda F, x: F.prelu(x, x.new_tensor([0.2]))),
]


@pytest.mark.parametrize("name,f", ACTS, ids=[a[0] for a in ACTS])
def test_activations(name: str, f: Callable[[Any, Any], Any]) -> None:
    compare(lambda torch: _vg(torch, lambda x: f(torch.nn.functional, x), X), real, tt)
    compare(lambda torch: _vg(torch, lambda x: f(torch.nn.functional, x),
                              X.astype(np.float64)), real, tt, rtol=1e-12)


def test_prelu_weight_grad() -> None:
    w = np.array([0.1, 0.2, 0.3, 0.4], np.float32)
    compare(lambda torch: _vg(torch, torch.nn.functional.prelu, X4, w), real, tt)
    compare(lambda torch: _vg(torch, torch.nn.functional.prelu, X, w), real, tt)


def test_rrelu_training_stream() -> None:
    def prog(torch: Any) -> Any:
        torch.manual_seed(0)
        x = torch.tensor(X, requires_grad=True)
        y = torch.nn.functional.rrelu(x, training=True)
        y.sum().backward()
        return y.detach(), x.grad, torch.rand(2)
    compare(prog, real, tt)


def test_gumbel_softmax_stream() -> None:
    def prog(torch: Any) -> Any:
        torch.manual_seed(0)
        x = torch.tensor(X, requires_grad=True)
        y = torch.nn.functional.gumbel_softmax(x, tau=0.5)
        h = torch.nn.functional.gumbel_softmax(x, hard=True)
        (y * torch.arange(4.0)).sum().backward()
        d = torch.nn.functional.gumbel_softmax(x.detach().double(), tau=2.0, hard=True, dim=0)
        return y.detach(), h.detach(), x.grad, d, torch.rand(2)
    compare(prog, real, tt)


T = (RNG.standard_normal((3, 4)) * 2).astype(np.float32)
SIGN = np.array([1.0, -1.0, 1.0], np.float32)
SIGN34 = np.where(RNG.standard_normal((3, 4)) > 0, 1.0, -1.0).astype(np.float32)
POS = np.abs(T) + 0.1

LOSSES: list[tuple[str, Callable[..., Any], tuple[Any, ...]]] = [
    ("huber", lambda F, a, b, r: F.huber_loss(a, b, reduction=r, delta=1.5), (X, T)),
    ("huber_w", lambda F, a, b, r: F.huber_loss(a, b, reduction=r, weight=b.abs().detach()),
     (X, T)),
    ("soft_margin", lambda F, a, b, r: F.soft_margin_loss(a, b.detach(), reduction=r),
     (X, SIGN34)),
    ("hinge", lambda F, a, b, r: F.hinge_embedding_loss(a, b, margin=1.5, reduction=r),
     (X, SIGN34)),
    ("mlsm", lambda F, a, b, r: F.multilabel_soft_margin_loss(a, b, reduction=r),
     (X, (SIGN34 > 0).astype(np.float32))),
    ("poisson", lambda F, a, b, r: F.poisson_nll_loss(a, b, reduction=r), (X / 3, POS)),
    ("poisson_full", lambda F, a, b, r: F.poisson_nll_loss(a, b, log_input=False, full=True,
                                                           reduction=r), (POS, T * T)),
    ("gaussian", lambda F, a, b, r: F.gaussian_nll_loss(a, b, b.abs() * 0 + 0.5, full=True,
                                                        reduction=r), (X, T)),
]


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("name,f,arrs", LOSSES, ids=[a[0] for a in LOSSES])
def test_losses(name: str, f: Callable[..., Any], arrs: tuple[Any, ...],
                reduction: str) -> None:
    compare(lambda torch: _vg(torch, lambda a, b: f(torch.nn.functional, a, b, reduction),
                              *arrs), real, tt)


def test_gaussian_var_grad_and_shapes() -> None:
    def prog(torch: Any) -> Any:
        x = torch.tensor(X, requires_grad=True)
        v = torch.tensor(np.array([1e-8, 0.5, 2.0], np.float32)[:, None] * np.ones(
            (3, 4), np.float32), requires_grad=True)
        loss = torch.nn.functional.gaussian_nll_loss(x, torch.tensor(T), v)
        loss.backward()
        v2 = torch.tensor(np.array([0.5, 1.0, 2.0], np.float32), requires_grad=True)
        l2 = torch.nn.GaussianNLLLoss()(x, torch.tensor(T), v2)
        l2.backward()
        return loss.detach(), x.grad, v.grad, l2.detach(), v2.grad
    compare(prog, real, tt)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_three_input_losses(reduction: str) -> None:
    a, b = X, T
    y3 = SIGN

    def prog(torch: Any) -> Any:
        F = torch.nn.functional
        out = []
        out.append(_vg(torch, lambda p, q: F.margin_ranking_loss(
            p[:, 0], q[:, 0], torch.tensor(y3), margin=0.3, reduction=reduction), a, b))
        out.append(_vg(torch, lambda p, q: F.cosine_embedding_loss(
            p, q, torch.tensor(y3), margin=0.2, reduction=reduction), a, b))
        n = (b[::-1] * 0.7).copy()
        out.append(_vg(torch, lambda p, q, r: F.triplet_margin_loss(
            p, q, r, margin=1.5, reduction=reduction), a, b, n))
        out.append(_vg(torch, lambda p, q, r: F.triplet_margin_loss(
            p, q, r, p=1, swap=True, reduction=reduction), a, b, n))
        out.append(_vg(torch, lambda p, q, r: F.triplet_margin_with_distance_loss(
            p, q, r, distance_function=lambda u, v: 1 - F.cosine_similarity(u, v),
            swap=True, reduction=reduction), a, b, n))
        return out
    compare(prog, real, tt)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_class_margin_losses(reduction: str) -> None:
    tgt = np.array([3, 0, 2])
    mtgt = np.array([[3, 0, -1, 1], [1, -1, 2, 2], [0, 1, 2, 3]])
    wgt = np.array([0.5, 1.0, 2.0, 1.5], np.float32)

    def prog(torch: Any) -> Any:
        F = torch.nn.functional
        return [
            _vg(torch, lambda x: F.multi_margin_loss(x, torch.tensor(tgt), reduction=reduction),
                X),
            _vg(torch, lambda x: F.multi_margin_loss(x, torch.tensor(tgt), p=2, margin=0.7,
                                                     weight=torch.tensor(wgt),
                                                     reduction=reduction), X),
            _vg(torch, lambda x: F.multi_margin_loss(x[0], torch.tensor(tgt[:1]),
                                                     reduction=reduction), X),
            _vg(torch, lambda x: F.multilabel_margin_loss(x, torch.tensor(mtgt),
                                                          reduction=reduction), X),
            _vg(torch, lambda x: F.multilabel_margin_loss(x[1], torch.tensor(mtgt[1]),
                                                          reduction=reduction), X),
        ]
    compare(prog, real, tt)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("zero_inf", [False, True])
def test_ctc_loss(reduction: str, zero_inf: bool) -> None:
    logits = RNG.standard_normal((6, 3, 5)).astype(np.float32)
    targets = np.array([[1, 2, 2], [3, 1, 0], [4, 4, 4]])
    il, tl = [6, 5, 3], [3, 2, 3]  # the last is impossible (needs 5 frames)

    def prog(torch: Any) -> Any:
        F = torch.nn.functional
        x = torch.tensor(logits, requires_grad=True)
        lp = F.log_softmax(x, 2)
        lp.retain_grad()
        loss = F.ctc_loss(lp, torch.tensor(targets), torch.tensor(il), torch.tensor(tl),
                          reduction=reduction, zero_infinity=zero_inf)
        if reduction == "none":
            loss = loss * torch.tensor([1.0, 0.5, 0.25])
        loss.sum().backward()
        return loss.detach(), x.grad, lp.grad
    compare(prog, real, tt, rtol=1e-4, atol=1e-5)


def test_ctc_loss_concatenated_targets_and_module() -> None:
    logits = RNG.standard_normal((5, 2, 4)).astype(np.float64)

    def prog(torch: Any) -> Any:
        x = torch.tensor(logits, requires_grad=True)
        lp = x.log_softmax(2)
        loss = torch.nn.CTCLoss(blank=3)(lp, torch.tensor([0, 1, 2, 2]), (5, 4), (1, 3))
        loss.backward()
        unb = torch.nn.functional.ctc_loss(lp[:, 0].detach(), torch.tensor([1, 1]),
                                           torch.tensor(5), torch.tensor(2), reduction="none")
        return loss.detach(), x.grad, unb, repr(torch.nn.CTCLoss())
    compare(prog, real, tt, rtol=1e-10)


def test_layers() -> None:
    x = RNG.standard_normal((2, 8, 2, 3)).astype(np.float32)
    u = RNG.standard_normal((1, 2, 4, 6)).astype(np.float32)

    def prog(torch: Any) -> Any:
        F = torch.nn.functional
        return [
            _vg(torch, lambda t: F.pixel_shuffle(t, 2), x),
            _vg(torch, lambda t: F.pixel_unshuffle(t, 2), u),
            _vg(torch, lambda t: F.channel_shuffle(t, 4), x),
            _vg(torch, lambda t: F.local_response_norm(t, 3), x),
            _vg(torch, lambda t: F.local_response_norm(t[:, :, 0], 2, alpha=0.1, k=2.0), x),
            _vg(torch, lambda t: F.pdist(t), X),
            _vg(torch, lambda t: F.pdist(t, p=1), X),
            _vg(torch, lambda t: F.lp_pool1d(t, 2, 3), X4[:, :, 0]),
            _vg(torch, lambda t: F.lp_pool2d(t.abs() + 0.1, 3.0, 2, stride=1), X4),
            _vg(torch, lambda t: F.pairwise_distance(t, t.flip(0)), X),
            _vg(torch, lambda t: F.cosine_similarity(t, t.flip(0)), X),
        ]
    compare(prog, real, tt)


@pytest.mark.parametrize("mode", ["bilinear", "nearest"])
@pytest.mark.parametrize("padding", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("align", [False, True])
def test_grid_sample(mode: str, padding: str, align: bool) -> None:
    inp = RNG.standard_normal((2, 3, 4, 5)).astype(np.float32)
    grid = (RNG.uniform(-1.4, 1.4, (2, 3, 6, 2))).astype(np.float32)

    def prog(torch: Any) -> Any:
        return _vg(torch, lambda a, g: torch.nn.functional.grid_sample(
            a, g, mode=mode, padding_mode=padding, align_corners=align), inp, grid)
    compare(prog, real, tt, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("align", [False, True, None])
def test_affine_grid(align: bool | None) -> None:
    theta = RNG.standard_normal((2, 2, 3)).astype(np.float32)
    theta3 = RNG.standard_normal((1, 3, 4)).astype(np.float32)

    def prog(torch: Any) -> Any:
        F = torch.nn.functional
        g = _vg(torch, lambda th: F.affine_grid(th, [2, 3, 4, 5], align_corners=align), theta)
        g3 = _vg(torch, lambda th: F.affine_grid(th, [1, 1, 2, 3, 4], align_corners=align),
                 theta3)
        inp = torch.ones(2, 3, 4, 5)
        s = F.grid_sample(inp, F.affine_grid(torch.tensor(theta), [2, 3, 2, 2],
                                             align_corners=True), align_corners=True)
        return g, g3, s
    compare(prog, real, tt, rtol=1e-5, atol=1e-6)


def test_embedding_bag_module() -> None:
    def prog(torch: Any) -> Any:
        nn = torch.nn
        torch.manual_seed(0)
        a = nn.EmbeddingBag(10, 3, padding_idx=0, max_norm=1.0, norm_type=3.0,
                            scale_grad_by_freq=True, mode="sum", include_last_offset=True)
        b = nn.EmbeddingBag.from_pretrained(torch.arange(8.0).reshape(4, 2), mode="max")
        c = nn.EmbeddingBag(5, 2, _weight=torch.zeros(5, 2), padding_idx=-1)
        y = b(torch.tensor([[0, 3], [2, 1]]))
        return (repr(a), a.weight.detach(), repr(b), b.weight.requires_grad, repr(c),
                c.padding_idx, c.weight.detach(), torch.rand(1), y)
    compare(prog, real, tt)


def test_embedding_bag() -> None:
    wt = RNG.standard_normal((10, 3)).astype(np.float32)

    def prog(torch: Any) -> Any:
        F = torch.nn.functional
        idx = torch.tensor([1, 2, 4, 5, 4, 3, 2, 9])
        off = torch.tensor([0, 4, 4])
        out = []
        for m in ("sum", "mean", "max"):
            out.append(_vg(torch, lambda w, m=m: F.embedding_bag(idx, w, off, mode=m), wt))
            out.append(_vg(torch, lambda w, m=m: F.embedding_bag(idx.view(2, 4), w, mode=m,
                                                            padding_idx=4), wt))
        out.append(_vg(torch, lambda w: F.embedding_bag(
            idx, w, torch.tensor([0, 3, 8]), mode="sum", include_last_offset=True,
            per_sample_weights=torch.linspace(0.1, 0.8, 8)), wt))
        torch.manual_seed(0)
        m = torch.nn.EmbeddingBag(10, 3, mode="sum")
        out.append((m.weight.detach(), m(idx, off).detach(), repr(m)))
        return out
    compare(prog, real, tt)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_fractional_max_pool2d(dtype: str) -> None:
    x = RNG.standard_normal((2, 3, 9, 10)).astype(dtype)

    def prog(torch: Any) -> Any:
        F = torch.nn.functional
        torch.manual_seed(1)
        a = _vg(torch, lambda t: F.fractional_max_pool2d(t, 2, output_size=(4, 5)), x)
        y, i = F.fractional_max_pool2d(torch.tensor(x), (3, 2), output_ratio=(0.5, 0.6),
                                       return_indices=True)
        m = torch.nn.FractionalMaxPool2d(3, output_ratio=0.5, return_indices=True)
        u = m(torch.tensor(x[0]))
        s = torch.rand(1, 3, 2, dtype=getattr(torch, dtype))
        v = F.fractional_max_pool2d(torch.tensor(x[:1]), 2, output_size=3, _random_samples=s)
        return a, y, i, u, v, torch.rand(2), repr(m)
    compare(prog, real, tt)


# ----------------------------------------------------------------------------- modules
MODULES = [
    "PReLU()", "PReLU(3, init=0.1)", "GLU()", "GLU(0)", "SELU()", "SELU(inplace=True)",
    "CELU(0.5)", "HuberLoss(delta=2.0)", "PixelShuffle(2)", "PixelUnshuffle(3)", "Mish()",
    "Hardswish()", "Hardsigmoid()", "Hardshrink()", "Softshrink(0.3)", "Tanhshrink()",
    "RReLU()", "RReLU(0.1, 0.2, inplace=True)", "Softsign()", "Softmin(dim=1)", "Softmax2d()",
    "LogSigmoid()", "Threshold(0.1, 20)", "Threshold(0.1, 20, inplace=True)",
    "ChannelShuffle(2)", "LPPool1d(2, 3)", "LPPool2d(1.5, (2, 3), stride=2)",
    "CosineSimilarity()", "PairwiseDistance(p=1.0)", "TripletMarginLoss()",
    "TripletMarginWithDistanceLoss()", "MarginRankingLoss()", "CTCLoss()", "PoissonNLLLoss()",
    "GaussianNLLLoss()", "MultiLabelMarginLoss()", "MultiLabelSoftMarginLoss()",
    "MultiMarginLoss()", "SoftMarginLoss()", "HingeEmbeddingLoss()", "CosineEmbeddingLoss()",
    "LocalResponseNorm(2)", "Hardtanh(-2.0, 2.0)", "LazyLinear(3)",
    "LazyConv1d(4, 3)", "LazyConv2d(4, 3, stride=2, bias=False)", "SyncBatchNorm(3)",
    "Unflatten(1, (2, 2))", "Bilinear(2, 3, 4)", "FractionalMaxPool2d(2, output_ratio=0.5)",
]


@pytest.mark.parametrize("spec", MODULES)
def test_module_repr_and_params(spec: str) -> None:
    def prog(torch: Any) -> Any:
        torch.manual_seed(0)
        m = eval("torch.nn." + spec, {"torch": torch})
        params = [(n, p.detach()) for n, p in m.named_parameters()
                  if not isinstance(p, torch.nn.UninitializedParameter)]
        return repr(m), params, list(m.state_dict().keys()), type(m).__name__
    compare(prog, real, tt)


def test_lazy_linear_materializes_with_optimizer() -> None:
    def prog(torch: Any) -> Any:
        torch.manual_seed(0)
        m = torch.nn.LazyLinear(3)
        opt = torch.optim.SGD(m.parameters(), lr=0.1)
        before = (repr(m), type(m.weight).__name__, repr(m.weight))
        y = m(torch.ones(2, 4))
        y.sum().backward()
        opt.step()
        return before, repr(m), type(m).__name__, type(m.weight).__name__, m.weight.detach(), \
            m.bias.detach(), y.detach()
    compare(prog, real, tt)


def test_lazy_modules_with_adam_before_materializing() -> None:
    def prog(torch: Any) -> Any:
        torch.manual_seed(0)
        model = torch.nn.Sequential(torch.nn.LazyConv2d(3, 2), torch.nn.Flatten(),
                                    torch.nn.LazyLinear(2))
        opt = torch.optim.Adam(model.parameters(), lr=0.01)
        x = torch.randn(4, 2, 5, 5)
        losses = []
        for _ in range(3):
            opt.zero_grad()
            loss = model(x).pow(2).mean()
            loss.backward()
            opt.step()
            losses.append(loss.detach())
        return repr(model), losses, [p.detach() for p in model.parameters()]
    compare(prog, real, tt)


def test_lazy_state_dict_and_load() -> None:
    def prog(torch: Any) -> Any:
        torch.manual_seed(0)
        src = torch.nn.Linear(4, 3)
        m = torch.nn.LazyLinear(3)
        sd = {k: repr(v) for k, v in m.state_dict().items()}
        r = m.load_state_dict(src.state_dict())
        mid = (repr(r), type(m).__name__, type(m.weight).__name__, tuple(m.weight.shape))
        y = m(torch.ones(2, 4))
        c = torch.nn.LazyConv1d(2, 3)
        c.load_state_dict(torch.nn.Conv1d(5, 2, 3).state_dict())
        yc = c(torch.ones(1, 5, 4))
        return sd, mid, repr(m), y.detach(), repr(c), tuple(yc.shape)
    compare(prog, real, tt)


def test_lazy_conv_materializes() -> None:
    def prog(torch: Any) -> Any:
        torch.manual_seed(0)
        m = torch.nn.LazyConv2d(4, 3, padding=1)
        y = m(torch.ones(1, 2, 5, 5))
        m1 = torch.nn.LazyConv1d(2, 2)
        y1 = m1(torch.ones(3, 4))
        return repr(m), m.weight.detach(), m.bias.detach(), y.detach(), repr(m1), y1.detach()
    compare(prog, real, tt)


def test_uninitialized_errors() -> None:
    def prog(torch: Any) -> Any:
        m = torch.nn.LazyLinear(3)
        out = []
        for f in (lambda: m.weight.shape, lambda: m.weight.numel()):
            try:
                f()
            except Exception as e:  # noqa: BLE001
                out.append((type(e).__name__, str(e)))
        return out
    compare(prog, real, tt)


def test_parameter_dict() -> None:
    def prog(torch: Any) -> Any:
        p = torch.nn.ParameterDict({"a": torch.nn.Parameter(torch.ones(2)),
                                    "b": torch.zeros(3, 2, dtype=torch.float64)})
        p["c"] = torch.ones(1)
        keys = list(p.keys())
        names = [n for n, _ in p.named_parameters()]
        b = p["b"]
        del p["a"]
        return repr(p), keys, names, type(b).__name__, b.requires_grad, len(p), "a" in p, \
            list(p.state_dict().keys())
    compare(prog, real, tt)


def test_sync_batchnorm_cpu() -> None:
    x = RNG.standard_normal((4, 3, 2)).astype(np.float32)

    def prog(torch: Any) -> Any:
        m = torch.nn.SyncBatchNorm(3)
        y = m(torch.tensor(x))
        m.eval()
        y2 = m(torch.tensor(x))
        try:
            m(torch.ones(3))
        except Exception as e:  # noqa: BLE001
            err = (type(e).__name__, str(e))
        return y.detach(), y2.detach(), m.running_mean, m.running_var, \
            m.num_batches_tracked, err
    compare(prog, real, tt)


def test_module_forwards() -> None:
    def prog(torch: Any) -> Any:
        nn = torch.nn
        torch.manual_seed(0)
        x = torch.tensor(X4)
        res = []
        for m in (nn.PReLU(4), nn.GLU(1), nn.SELU(), nn.CELU(), nn.Hardswish(),
                  nn.Hardsigmoid(), nn.Softmax2d(), nn.PixelShuffle(2), nn.ChannelShuffle(2),
                  nn.LocalResponseNorm(2), nn.LPPool2d(2, 2), nn.Mish(), nn.Softmin(1),
                  nn.Threshold(0.0, 5.0), nn.Hardtanh(), nn.LogSigmoid()):
            res.append(m(x).detach())
        return res
    compare(prog, real, tt)


# ----------------------------------------------------------------------------- errors
ERRORS = [
    "F.glu(torch.ones(3))",
    "F.glu(torch.tensor(1.0))",
    "F.softshrink(torch.ones(3), -1.0)",
    "F.prelu(torch.ones(2, 3), torch.ones(2))",
    "F.pixel_shuffle(torch.ones(2, 3), 2)",
    "F.pixel_shuffle(torch.ones(1, 5, 2, 2), 2)",
    "F.pixel_unshuffle(torch.ones(1, 1, 3, 4), 2)",
    "F.channel_shuffle(torch.ones(1, 5, 2), 2)",
    "F.margin_ranking_loss(torch.ones(3), torch.ones(3), torch.ones(3, 1))",
    "F.multi_margin_loss(torch.ones(2, 3), torch.tensor([0, 1]), p=3)",
    "F.huber_loss(torch.ones(3), torch.ones(3), reduction='avg')",
    "F.gaussian_nll_loss(torch.ones(2, 3), torch.ones(2, 3), torch.ones(3))",
    "F.gaussian_nll_loss(torch.ones(2, 3), torch.ones(2, 3), -torch.ones(2, 3))",
    "F.triplet_margin_with_distance_loss(torch.ones(2, 3), torch.ones(2, 3), torch.ones(3),"
    " margin=1.0)",
    "F.grid_sample(torch.ones(1, 1, 2, 2), torch.ones(1, 2, 2, 2), mode='cubic')",
    "F.grid_sample(torch.ones(1, 1, 2, 2), torch.ones(1, 2, 2, 2), padding_mode='wrap')",
    "F.affine_grid(torch.ones(1, 3, 3), [1, 1, 4, 4], align_corners=False)",
    "F.embedding_bag(torch.tensor([1, 2]), torch.ones(4, 2), torch.tensor([0]), mode='mean',"
    " per_sample_weights=torch.ones(2))",
    "F.local_response_norm(torch.ones(2, 3), 2)",
    "F.pdist(torch.ones(2, 3, 4))",
    "torch.nn.MultiMarginLoss(p=3)",
    "torch.nn.Softmax2d()(torch.ones(2, 3))",
    "F.poisson_nll_loss(torch.ones(2), torch.ones(2), reduction='bad')",
    "F.fractional_max_pool2d(torch.ones(1, 1, 7, 8), 5, output_size=(4, 3))",
    "F.fractional_max_pool2d(torch.ones(1, 1, 7, 8), 3, output_size=(4, 7))",
    "F.fractional_max_pool2d(torch.ones(1, 1, 7, 8), 3)",
    "torch.nn.FractionalMaxPool2d(2, output_ratio=1.5)",
]


@pytest.mark.parametrize("expr", ERRORS)
def test_error_texts(expr: str) -> None:
    def prog(torch: Any) -> Any:
        return eval(expr, {"torch": torch, "F": torch.nn.functional})
    compare(prog, real, tt)


NODE_NAMES = [
    "F.prelu(x, torch.tensor([0.25]))", "F.glu(x)", "F.selu(x)", "F.celu(x)", "F.hardswish(x)",
    "F.hardsigmoid(x)", "F.softshrink(x)", "F.hardshrink(x)", "F.threshold(x, 0.1, 2.0)",
    "F.rrelu(x)", "F.mish(x)", "F.logsigmoid(x)", "F.huber_loss(x, x.detach() * 0.5)",
    "F.huber_loss(x, x.detach() * 0.5, reduction='none')",
    "F.soft_margin_loss(x, torch.ones(3, 4))", "F.pixel_shuffle(x.reshape(1, 4, 3, 1), 2)",
    "F.pixel_unshuffle(x.reshape(1, 1, 2, 6), 2)", "F.channel_shuffle(x.reshape(1, 4, 3), 2)",
    "F.softsign(x)", "F.tanhshrink(x)", "F.hinge_embedding_loss(x, torch.ones(3, 4))",
    "F.margin_ranking_loss(x, x.detach(), torch.ones(3, 4))", "F.softmin(x, 1)",
    "F.multi_margin_loss(x, torch.tensor([0, 3, 1]))",
    "F.multi_margin_loss(x[0], torch.tensor(2), p=2, reduction='none')",
    "F.multilabel_margin_loss(x, torch.tensor([[0, 2, -1, 1], [3, 3, -1, 0], [1, 2, 3, 0]]))",
    "F.multilabel_margin_loss(x[1], torch.tensor([1, -1, 0, 0]), reduction='none')",
    "F.fractional_max_pool2d(x.reshape(1, 3, 4), 2, output_size=2)",
    "F.fractional_max_pool2d(x.reshape(1, 1, 3, 4), (2, 3), output_size=(2, 1))",
    "F.cosine_similarity(x, x.flip(0))",
    "F.pdist(x)", "F.pdist(x, 1)", "F.pdist(x, 3.5)", "F.pdist(x, float('inf'))", "F.pdist(x, 0)",
    "F.pdist(torch.cat([x, x[:1]]))",
    "F.grid_sample(x.reshape(1, 1, 3, 4), x[:2].reshape(1, 2, 2, 2) / 3, align_corners=False)",
    "F.grid_sample(x.reshape(1, 1, 3, 4), x[:2].reshape(1, 2, 2, 2) / 3, mode='nearest',"
    " padding_mode='reflection', align_corners=True)",
    "F.affine_grid(x[:2, :3].reshape(1, 2, 3), [1, 1, 2, 3], align_corners=False)",
    "F.affine_grid(x.reshape(1, 3, 4), [1, 1, 2, 3, 2], align_corners=True)",
    "F.embedding_bag(torch.tensor([0, 2, 1, 1]), x, torch.tensor([0, 1, 1]))",
    "F.embedding_bag(torch.tensor([[0, 2], [1, 1]]), x, mode='max')",
    "F.embedding_bag(torch.tensor([0, 2, 1, 1]), x, torch.tensor([0, 3]), mode='sum',"
    " per_sample_weights=torch.tensor([1.0, 2.0, 3.0, 4.0]))",
]


@pytest.mark.parametrize("expr", NODE_NAMES)
def test_grad_fn_names_and_backward(expr: str) -> None:
    def prog(torch: Any) -> Any:
        torch.manual_seed(0)
        x = torch.tensor(np.linspace(-2, 2, 12).reshape(3, 4).astype(np.float32),
                         requires_grad=True)
        y = eval(expr, {"torch": torch, "F": torch.nn.functional, "x": x})
        y.sum().backward()
        return y, x.grad
    compare(prog, real, tt)


def test_second_derivatives() -> None:
    def prog(torch: Any) -> Any:
        F = torch.nn.functional
        out = []
        for f in (F.glu, F.selu, F.celu, F.mish, F.logsigmoid,
                  lambda t: F.huber_loss(t, t.detach() * 0.3, delta=0.8),
                  lambda t: F.soft_margin_loss(t, torch.ones(3, 4))):
            x = torch.tensor(X.astype(np.float64) / 2, requires_grad=True)
            (g,) = torch.autograd.grad(f(x).sum(), x, create_graph=True)
            (h,) = torch.autograd.grad((g * g).sum(), x)
            out.append((g.detach(), h))
        return out
    compare(prog, real, tt, rtol=1e-10)


ERRORS_MORE = [
    'F.grid_sample(torch.ones(1, 1, 2, 2), torch.ones(2, 2, 2, 2), align_corners=False)',
    'F.grid_sample(torch.ones(1, 1, 2, 2), torch.ones(1, 2, 2, 3), align_corners=False)',
    'F.grid_sample(torch.ones(1, 1, 2, 2), torch.ones(1, 2, 2, 2, dtype=torch.float64), align_corners=False)',
    'F.ctc_loss(torch.ones(5, 2, 4).log_softmax(2), torch.tensor([[1, 2], [1, 1]]), [5, 6], [2, 2])',
    'F.ctc_loss(torch.ones(5, 2, 4).log_softmax(2), torch.tensor([[1, 2], [1, 1]]), [5], [2, 2])',
    'F.ctc_loss(torch.ones(5, 2, 4).log_softmax(2), torch.tensor([[1, 2], [1, 1]]), [5, 5], [2, 3])',
    'F.ctc_loss(torch.ones(5, 2, 4).log_softmax(2), torch.tensor([[1, 2], [1, 1]]), [5, 5], [2, 2], blank=4)',
    'F.embedding_bag(torch.tensor([1, 9]), torch.ones(4, 2), torch.tensor([0]))',
    'F.embedding_bag(torch.tensor([[1, 2]]), torch.ones(4, 2), torch.tensor([0]))',
    'F.embedding_bag(torch.tensor([1, 2]), torch.ones(4, 2))',
    "F.embedding_bag(torch.tensor([1, 2]), torch.ones(4, 2), torch.tensor([0]), mode='foo')",
    'F.triplet_margin_loss(torch.ones(2, 3), torch.ones(2, 3), torch.ones(3))',
    'F.triplet_margin_loss(torch.ones(2, 3, 4), torch.ones(2, 3, 4), torch.ones(2, 3, 4))',
    'F.cosine_embedding_loss(torch.ones(2, 3), torch.ones(2, 3), torch.ones(2, 1))',
    'F.cosine_embedding_loss(torch.ones(2, 3), torch.ones(3), torch.ones(2))',
    'F.multilabel_margin_loss(torch.ones(2, 3), torch.ones(2, 2).long())',
    'F.multi_margin_loss(torch.ones(2, 3), torch.tensor([0, 3]))',
    'F.multi_margin_loss(torch.ones(2, 3), torch.tensor([0, 1, 2]))',
    'F.prelu(torch.ones(2, 3), torch.ones(1, 3))',
    'F.prelu(torch.ones(2, 3), torch.ones(3, 1))',
    'F.pixel_unshuffle(torch.ones(1, 1, 4, 3), 2)',
    'F.pixel_shuffle(torch.ones(1, 4, 2, 2), 0)',
    'F.channel_shuffle(torch.ones(1, 4, 2), 0)',
    'F.channel_shuffle(torch.ones(4, 2), 2)',
    'F.local_response_norm(torch.ones(0, 3, 2), 2)',
    'F.huber_loss(torch.ones(3), torch.ones(3), weight=torch.ones(2))',
    'F.celu(torch.ones(3), 0.0)',
    'F.glu(torch.ones(2, 3), 2)',
    'F.gaussian_nll_loss(torch.ones(2, 3), torch.ones(2, 3), -1.0)',
    "F.gaussian_nll_loss(torch.ones(2, 3), torch.ones(2, 3), torch.ones(2, 3), reduction='x')",
    'F.affine_grid(torch.ones(1, 2, 3), [1, 1, 4], align_corners=False)',
    'F.affine_grid(torch.ones(1, 2, 3), [1, 1, 0, 4], align_corners=False)',
    'F.affine_grid(torch.ones(1, 2, 3).long(), [1, 1, 2, 4], align_corners=False)',
    'F.lp_pool2d(torch.ones(1, 1, 2, 2), 2, 3)',
    'F.pdist(torch.ones(3, 2), -1)',
    'F.margin_ranking_loss(torch.ones(3), torch.ones(2), torch.ones(3))',
    'F.hinge_embedding_loss(torch.ones(3), torch.ones(2))',
    'F.soft_margin_loss(torch.ones(3), torch.ones(2))',
    'F.threshold(torch.ones(3), 0.5, 1.0, inplace=True)',
    'F.hardswish(torch.ones(3).long())',
    'F.softsign(torch.ones(3).long())',
    'F.selu(torch.tensor([1, 2]))',
    'F.mish(torch.tensor([1, 2]))',
    'F.logsigmoid(torch.tensor([1, 2]))',
    'F.hardsigmoid(torch.tensor([1, 2]))',
    'F.threshold(torch.tensor([1, 2]), 1, 5)',
    'F.rrelu(torch.tensor([1, 2]))',
    'F.rrelu(torch.ones(2), 0.5, 0.2, training=True)',
    'F.glu(torch.tensor([1, 2]))',
    'F.prelu(torch.tensor([1, 2]), torch.tensor([1]))',
    'F.gumbel_softmax(torch.tensor([1, 2]))',
    'torch.nn.PReLU(3)(torch.ones(2, 4))',
    'torch.nn.LazyLinear(3)(torch.ones(2, 4, dtype=torch.float64))',
    'torch.nn.TripletMarginLoss(margin=0)',
    'torch.nn.Hardtanh(1.0, -1.0)',
    'torch.nn.ParameterDict()(1)',
    'torch.nn.SyncBatchNorm(3)(torch.ones(2, 4, 2))',
]


@pytest.mark.parametrize("expr", ERRORS_MORE)
def test_more_error_texts_and_dtypes(expr: str) -> None:
    def prog(torch: Any) -> Any:
        r = eval(expr, {"torch": torch, "F": torch.nn.functional})
        return (str(r.dtype), tuple(r.shape)) if hasattr(r, "dtype") else repr(r)
    compare(prog, real, tt)


def test_inplace_activations() -> None:
    def prog(torch: Any) -> Any:
        F = torch.nn.functional
        out = []
        for f in (lambda t: F.selu(t, inplace=True), lambda t: F.celu(t, inplace=True),
                  lambda t: F.hardswish(t, inplace=True),
                  lambda t: F.threshold(t, 0.1, 2.0, inplace=True),
                  lambda t: F.rrelu(t, inplace=True), lambda t: F.mish(t, inplace=True),
                  lambda t: torch.nn.Hardtanh(-0.5, 0.5, inplace=True)(t),
                  lambda t: F.hardsigmoid(t, inplace=True), lambda t: F.elu_(t),
                  lambda t: F.leaky_relu_(t, 0.2), lambda t: torch.nn.SELU(inplace=True)(t)):
            x = torch.tensor(np.linspace(-4, 4, 9).astype(np.float32), requires_grad=True)
            y = x * 1.0
            z = f(y)
            z.sum().backward()
            out.append((z is y, y.detach(), x.grad))
        return out
    compare(prog, real, tt)


def test_legacy_reduction_arguments() -> None:
    def prog(torch: Any) -> Any:
        F, nn = torch.nn.functional, torch.nn
        x, t = torch.tensor(X), torch.tensor(SIGN34)
        out = []
        for kw in ({"size_average": False}, {"reduce": False}, {"size_average": True,
                                                                 "reduce": True}):
            out.append(F.soft_margin_loss(x, t, **kw))
            out.append(F.hinge_embedding_loss(x, t, **kw))
            out.append(F.multilabel_soft_margin_loss(x, (t > 0).float(), **kw))
            out.append(F.poisson_nll_loss(x, t.abs(), **kw))
            out.append(F.multi_margin_loss(x, torch.tensor([0, 1, 2]), **kw))
            out.append(nn.MarginRankingLoss(**kw)(x[:, 0], x[:, 1], t[:, 0]))
            out.append(nn.TripletMarginLoss(**kw)(x, x.flip(0), x * 0.5))
            out.append(nn.CosineEmbeddingLoss(**kw)(x, x.flip(0), t[:, 0]))
        return out
    compare(prog, real, tt)
