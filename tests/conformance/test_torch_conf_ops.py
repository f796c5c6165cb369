"""Every op, forward and backward, on PyTorch and tapegrad.torch (float64 and float32).

Each case is ``(name, fn(torch, *inputs), input specs)``.  The same random
inputs (and the same random cotangent) go to both frameworks; the outputs,
their dtype/shape/``grad_fn`` name and every input's gradient must agree.
Special values (ties, zeros, bounds) are part of the specs, so PyTorch's
conventions at non-differentiable points are checked too.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from tests.torch_style.torch_harness import assert_same, plain

real = pytest.importorskip("torch")
import tapegrad.torch as tt  # noqa: E402

# input spec: (shape, kind); kinds: "n" normal, "p" positive, "u" in (-0.9, 0.9),
# "i" integer class indices (needs "hi"), "b" bool mask, "tie" values with ties and zeros,
# "const" not requiring grad
Spec = tuple[tuple[int, ...], str]


def _make(spec: Spec, rng: np.random.Generator, dt: np.dtype) -> np.ndarray:
    shape, kind = spec
    if kind.startswith("i"):
        hi = int(kind[1:] or 3)
        return rng.integers(0, hi, size=shape).astype(np.int64)
    if kind == "b":
        return rng.random(shape) > 0.5
    if kind == "p":
        a = rng.uniform(0.5, 2.0, size=shape)
    elif kind == "u":
        a = rng.uniform(-0.9, 0.9, size=shape)
    elif kind == "tie":
        a = rng.choice(np.array([-1.0, 0.0, 1.0, 2.0]), size=shape)
    elif kind == "prob":
        a = rng.uniform(0.05, 0.95, size=shape)
    else:
        a = rng.standard_normal(shape)
    return np.asarray(a, dtype=dt)


CASES: list[tuple[str, Callable[..., Any], list[Spec]]] = []


def case(name: str, specs: list[Spec]) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    def deco(fn: Callable[..., Any]) -> Callable[..., Any]:
        CASES.append((name, fn, specs))
        return fn

    return deco


def add(name: str, fn: Callable[..., Any], *specs: Spec) -> None:
    CASES.append((name, fn, list(specs)))


S = ((3, 4), "n")
P = ((3, 4), "p")
# ---------------------------------------------------------------- arithmetic, broadcasting
add("add", lambda t, a, b: a + b, S, S)
add("add_bcast_row", lambda t, a, b: a + b, S, ((4,), "n"))
add("add_bcast_col", lambda t, a, b: a + b, S, ((3, 1), "n"))
add("add_bcast_both", lambda t, a, b: a + b, ((3, 1), "n"), ((1, 4), "n"))
add("add_scalar", lambda t, a: a + 2.5, S)
add("radd_scalar", lambda t, a: 2.5 + a, S)
add("add_alpha", lambda t, a, b: t.add(a, b, alpha=2.0), S, S)
add("sub", lambda t, a, b: a - b, S, ((4,), "n"))
add("rsub_scalar", lambda t, a: 1.0 - a, S)
add("mul", lambda t, a, b: a * b, S, ((1, 4), "n"))
add("mul_scalar", lambda t, a: a * 3, S)
add("div", lambda t, a, b: a / b, S, ((3, 1), "p"))
add("rdiv_scalar", lambda t, a: 2.0 / a, P)
add("pow_scalar", lambda t, a: a ** 3, S)
add("pow_half", lambda t, a: a ** 0.5, P)
add("pow_neg", lambda t, a: a ** -2, P)
add("pow_tensor", lambda t, a, b: a ** b, P, ((4,), "n"))
add("rpow", lambda t, a: 2.0 ** a, S)
add("neg", lambda t, a: -a, S)
add("maximum", lambda t, a, b: t.maximum(a, b), ((3, 4), "tie"), ((3, 4), "tie"))
add("minimum", lambda t, a, b: t.minimum(a, b), ((3, 4), "tie"), ((4,), "tie"))
add("where", lambda t, c, a, b: t.where(c, a, b), ((3, 4), "b"), S, ((4,), "n"))
add("where_scalar", lambda t, a: t.where(a > 0, a, 0.0), S)
add("lerp", lambda t, a, b: t.lerp(a, b, 0.3), S, S)
# ---------------------------------------------------------------- unary
for _n in ["exp", "tanh", "sigmoid", "sin", "cos", "abs", "neg", "square", "expm1", "erf",
           "relu", "sign", "floor", "ceil"]:
    add(_n, (lambda n: lambda t, a: getattr(t, n)(a))(_n), S)
for _n in ["log", "sqrt", "log1p", "reciprocal", "rsqrt", "log2", "log10"]:
    add(_n, (lambda n: lambda t, a: getattr(t, n)(a))(_n), P)
add("tan", lambda t, a: t.tan(a), ((3, 4), "u"))
add("relu_ties", lambda t, a: t.relu(a), ((3, 4), "tie"))
add("abs_ties", lambda t, a: a.abs(), ((3, 4), "tie"))
add("sinh", lambda t, a: t.sinh(a), S)
add("cosh", lambda t, a: t.cosh(a), S)
add("clamp", lambda t, a: t.clamp(a, -0.5, 0.5), S)
add("clamp_ties", lambda t, a: t.clamp(a, 0.0, 1.0), ((3, 4), "tie"))
add("clamp_min", lambda t, a: a.clamp(min=0.0), ((3, 4), "tie"))
add("clamp_max", lambda t, a: a.clamp_max(1.0), ((3, 4), "tie"))
add("clamp_tensor", lambda t, a, lo, hi: t.clamp(a, lo, hi), ((3, 4), "tie"), ((4,), "tie"),
    ((3, 4), "p"))
add("clip", lambda t, a: t.clip(a, -0.2, 0.3), S)
# ---------------------------------------------------------------- reductions
add("sum", lambda t, a: a.sum(), S)
add("sum_dim0", lambda t, a: a.sum(0), S)
add("sum_dim1_keep", lambda t, a: a.sum(dim=1, keepdim=True), S)
add("sum_dims", lambda t, a: a.sum(dim=(0, 2)), ((2, 3, 4), "n"))
add("sum_neg", lambda t, a: t.sum(a, -1), S)
add("mean", lambda t, a: a.mean(), S)
add("mean_dim", lambda t, a: a.mean(dim=0, keepdim=True), S)
add("mean_dims", lambda t, a: t.mean(a, (1, 2)), ((2, 3, 4), "n"))
add("prod", lambda t, a: a.prod(), ((2, 3), "p"))
add("prod_dim", lambda t, a: a.prod(1), S)
add("max_all_ties", lambda t, a: a.max(), ((3, 4), "tie"))
add("min_all_ties", lambda t, a: a.min(), ((3, 4), "tie"))
add("max_dim_ties", lambda t, a: a.max(dim=1), ((3, 4), "tie"))
add("max_dim_keep", lambda t, a: t.max(a, 0, keepdim=True), ((3, 4), "tie"))
add("min_dim", lambda t, a: a.min(1), ((3, 4), "tie"))
add("max_other", lambda t, a, b: t.max(a, b), ((3, 4), "tie"), ((3, 4), "tie"))
add("amax_ties", lambda t, a: a.amax(1), ((3, 4), "tie"))
add("amin_dims", lambda t, a: t.amin(a, (0, 1)), ((3, 4), "tie"))
add("argmax", lambda t, a: a.argmax(1), S)
add("argmin", lambda t, a: t.argmin(a), S)
add("var", lambda t, a: a.var(), S)
add("var_dim", lambda t, a: a.var(1), S)
add("var_unbiased_false", lambda t, a: a.var(0, unbiased=False), S)
add("var_correction", lambda t, a: t.var(a, dim=1, correction=0, keepdim=True), S)
add("std", lambda t, a: a.std(), S)
add("std_dim", lambda t, a: a.std(dim=0, keepdim=True), S)
add("logsumexp", lambda t, a: a.logsumexp(1), S)
add("logsumexp_keep", lambda t, a: t.logsumexp(a, dim=0, keepdim=True), S)
add("cumsum", lambda t, a: a.cumsum(1), S)
add("cumsum0", lambda t, a: t.cumsum(a, dim=0), S)
add("norm", lambda t, a: a.norm(), S)
add("norm_dim", lambda t, a: t.norm(a, dim=1), S)
add("softmax", lambda t, a: t.softmax(a, 1), S)
add("softmax0", lambda t, a: a.softmax(0), S)
add("log_softmax", lambda t, a: t.log_softmax(a, dim=-1), S)
# ---------------------------------------------------------------- linear algebra
add("matmul", lambda t, a, b: a @ b, S, ((4, 2), "n"))
add("matmul_vec", lambda t, a, b: a @ b, S, ((4,), "n"))
add("matmul_vecmat", lambda t, a, b: a @ b, ((3,), "n"), S)
add("matmul_batch", lambda t, a, b: a @ b, ((2, 3, 4), "n"), ((2, 4, 5), "n"))
add("matmul_bcast", lambda t, a, b: t.matmul(a, b), ((2, 3, 4), "n"), ((4, 5), "n"))
add("mm", lambda t, a, b: t.mm(a, b), S, ((4, 2), "n"))
add("bmm", lambda t, a, b: t.bmm(a, b), ((2, 3, 4), "n"), ((2, 4, 2), "n"))
add("mv", lambda t, a, b: t.mv(a, b), S, ((4,), "n"))
add("dot", lambda t, a, b: t.dot(a, b), ((4,), "n"), ((4,), "n"))
add("outer", lambda t, a, b: t.outer(a, b), ((3,), "n"), ((4,), "n"))
add("einsum", lambda t, a, b: t.einsum("ij,jk->ik", a, b), S, ((4, 2), "n"))
add("einsum_trace", lambda t, a: t.einsum("ii->", a), ((3, 3), "n"))
# ---------------------------------------------------------------- shapes and indexing
add("view", lambda t, a: a.view(4, 3), S)
add("view_neg", lambda t, a: a.view(-1), S)
add("reshape", lambda t, a: t.reshape(a, (2, 6)), S)
add("flatten", lambda t, a: a.flatten(), ((2, 3, 4), "n"))
add("flatten_range", lambda t, a: t.flatten(a, 1), ((2, 3, 4), "n"))
add("t", lambda t, a: a.t(), S)
add("T", lambda t, a: a.T, S)
add("transpose", lambda t, a: a.transpose(0, 2), ((2, 3, 4), "n"))
add("permute", lambda t, a: a.permute(2, 0, 1), ((2, 3, 4), "n"))
add("unsqueeze", lambda t, a: a.unsqueeze(1), S)
add("unsqueeze_neg", lambda t, a: t.unsqueeze(a, -1), S)
add("squeeze", lambda t, a: a.squeeze(), ((3, 1, 4), "n"))
add("squeeze_dim", lambda t, a: a.squeeze(1), ((3, 1, 4), "n"))
add("expand", lambda t, a: a.expand(2, 3, 4), ((3, 1), "n"))
add("expand_as", lambda t, a, b: a.expand_as(b), ((1, 4), "n"), S)
add("broadcast_to", lambda t, a: t.broadcast_to(a, (3, 4)), ((4,), "n"))
add("repeat", lambda t, a: a.repeat(2, 3), ((2, 3), "n"))
add("cat", lambda t, a, b: t.cat([a, b]), S, ((2, 4), "n"))
add("cat_dim1", lambda t, a, b: t.cat((a, b), dim=1), S, ((3, 2), "n"))
add("stack", lambda t, a, b: t.stack([a, b], dim=1), S, S)
add("split", lambda t, a: t.split(a, 2, dim=1), ((3, 5), "n"))
add("split_sizes", lambda t, a: a.split([1, 2], 0), S)
add("chunk", lambda t, a: a.chunk(2, 1), S)
add("unbind", lambda t, a: a.unbind(1), S)
add("narrow", lambda t, a: a.narrow(1, 1, 2), S)
add("select", lambda t, a: a.select(0, 1), S)
add("index_int", lambda t, a: a[1], S)
add("index_slice", lambda t, a: a[1:3], S)
add("index_step", lambda t, a: a[:, ::2], S)
add("index_col", lambda t, a: a[:, 2], S)
add("index_neg", lambda t, a: a[-1, 1:], S)
add("index_none", lambda t, a: a[None, 0], S)
add("index_ellipsis", lambda t, a: a[..., 1], ((2, 3, 4), "n"))
add("index_list", lambda t, a: a[[0, 2, 0]], S)
add("index_tensor", lambda t, a, i: a[i], S, ((5,), "i3"))
add("index_mask", lambda t, a: a[a > 0], S)
add("index_pair", lambda t, a: a[[0, 1, 1], [2, 3, 2]], S)
add("index_select", lambda t, a, i: t.index_select(a, 1, i), S, ((3,), "i4"))
add("gather", lambda t, a, i: t.gather(a, 1, i), S, ((3, 2), "i4"))
add("take", lambda t, a, i: t.take(a, i), S, ((5,), "i12"))
add("masked_fill", lambda t, a, m: a.masked_fill(m, 0.5), S, ((3, 4), "b"))
add("flip", lambda t, a: a.flip(0), S)
add("flip_dims", lambda t, a: t.flip(a, [0, 1]), S)
add("roll", lambda t, a: t.roll(a, 1, 1), S)
add("tril", lambda t, a: a.tril(), ((4, 4), "n"))
add("triu", lambda t, a: t.triu(a, 1), ((4, 4), "n"))
add("diag", lambda t, a: t.diag(a), ((4, 4), "n"))
add("clone", lambda t, a: a.clone(), S)
add("sort", lambda t, a: a.sort(1), S)
add("topk", lambda t, a: a.topk(2), S)
add("to_double", lambda t, a: a.double() * 2, S)
add("to_float", lambda t, a: a.to(t.float32) * 2, S)
# ---------------------------------------------------------------- nn.functional
add("F_relu", lambda t, a: t.nn.functional.relu(a), ((3, 4), "tie"))
add("F_gelu", lambda t, a: t.nn.functional.gelu(a), S)
add("F_gelu_tanh", lambda t, a: t.nn.functional.gelu(a, approximate="tanh"), S)
add("F_elu", lambda t, a: t.nn.functional.elu(a, alpha=0.7), S)
add("F_leaky_relu", lambda t, a: t.nn.functional.leaky_relu(a, 0.1), S)
add("F_softplus", lambda t, a: t.nn.functional.softplus(a), S)
add("F_softplus_beta", lambda t, a: t.nn.functional.softplus(a * 10, beta=2, threshold=5), S)
add("F_silu", lambda t, a: t.nn.functional.silu(a), S)
add("F_softmax", lambda t, a: t.nn.functional.softmax(a, dim=1), S)
add("F_log_softmax", lambda t, a: t.nn.functional.log_softmax(a, dim=0), S)
add("F_mse", lambda t, a, b: t.nn.functional.mse_loss(a, b), S, S)
add("F_mse_sum", lambda t, a, b: t.nn.functional.mse_loss(a, b, reduction="sum"), S, S)
add("F_mse_none", lambda t, a, b: t.nn.functional.mse_loss(a, b, reduction="none"), S, S)
add("F_l1", lambda t, a, b: t.nn.functional.l1_loss(a, b), S, S)
add("F_smooth_l1", lambda t, a, b: t.nn.functional.smooth_l1_loss(a, b), S, S)
add("F_ce", lambda t, a, y: t.nn.functional.cross_entropy(a, y), S, ((3,), "i4"))
add("F_ce_sum", lambda t, a, y: t.nn.functional.cross_entropy(a, y, reduction="sum"), S,
    ((3,), "i4"))
add("F_ce_none", lambda t, a, y: t.nn.functional.cross_entropy(a, y, reduction="none"), S,
    ((3,), "i4"))
add("F_ce_probs", lambda t, a, p: t.nn.functional.cross_entropy(a, p.softmax(1)), S,
    ((3, 4), "const"))
add("F_ce_smooth", lambda t, a, y: t.nn.functional.cross_entropy(a, y, label_smoothing=0.1),
    S, ((3,), "i4"))
add("F_ce_ignore", lambda t, a, y: t.nn.functional.cross_entropy(a, y, ignore_index=1), S,
    ((3,), "i4"))
add("F_ce_weight", lambda t, a, y, w: t.nn.functional.cross_entropy(a, y, weight=w.abs()), S,
    ((3,), "i4"), ((4,), "const"))
add("F_ce_spatial", lambda t, a, y: t.nn.functional.cross_entropy(a, y),
    ((2, 4, 3), "n"), ((2, 3), "i4"))
add("F_nll", lambda t, a, y: t.nn.functional.nll_loss(a.log_softmax(1), y), S, ((3,), "i4"))
add("F_bce", lambda t, a, y: t.nn.functional.binary_cross_entropy(a, y),
    ((3, 4), "prob"), ((3, 4), "prob"))
add("F_bce_logits", lambda t, a, y: t.nn.functional.binary_cross_entropy_with_logits(a, y), S,
    ((3, 4), "prob"))
add("F_pad", lambda t, a: t.nn.functional.pad(a, (1, 2)), S)
add("F_pad2", lambda t, a: t.nn.functional.pad(a, (1, 0, 2, 1), value=0.5), S)
add("F_pad_reflect", lambda t, a: t.nn.functional.pad(a[None], (2, 1), mode="reflect"), S)
add("F_pad_neg", lambda t, a: t.nn.functional.pad(a, (-1, 1)), S)
add("F_linear", lambda t, a, w, b: t.nn.functional.linear(a, w, b), S, ((2, 4), "n"),
    ((2,), "n"))
add("F_linear_nobias", lambda t, a, w: t.nn.functional.linear(a, w), S, ((2, 4), "n"))
add("F_linear_3d", lambda t, a, w, b: t.nn.functional.linear(a, w, b), ((2, 3, 4), "n"),
    ((2, 4), "n"), ((2,), "n"))
add("F_normalize", lambda t, a: t.nn.functional.normalize(a, dim=1), S)
add("F_layer_norm", lambda t, a: t.nn.functional.layer_norm(a, (4,)), S)
add("F_logsigmoid", lambda t, a: t.nn.functional.logsigmoid(a), S)
# ---------------------------------------------------------------- composites
add("mlp", lambda t, x, w1, w2: (t.tanh(x @ w1) @ w2).relu().sum(), S, ((4, 5), "n"),
    ((5, 2), "n"))
add("chain", lambda t, a: ((a.exp() + 1).log() * a.sigmoid()).mean(0), S)


# tapegrad records these as a composition of its primitives: values and gradients are
# compared, the name of the last node differs from PyTorch's fused kernel.
NAMES_DIFFER = {
    "rsub_scalar", "rdiv_scalar", "pow_tensor", "rpow", "lerp", "rsqrt", "log2", "log10",
    "sinh", "cosh", "norm", "norm_dim", "einsum", "einsum_trace", "repeat", "roll", "diag",
    "F_smooth_l1", "F_ce_probs", "F_pad_reflect",
    "F_layer_norm", "F_logsigmoid",
}


def _drop_names(x: Any) -> Any:
    if isinstance(x, tuple) and x and x[0] == "tensor":
        return x[:5] + (None,)
    if isinstance(x, (list, tuple)):
        return type(x)(_drop_names(v) for v in x)
    return x


def _run(fn: Callable[..., Any], specs: list[Spec], torch_mod: Any, dt: str,
         seed: int) -> tuple[Any, ...]:
    rng = np.random.default_rng(seed)
    npdt = np.dtype(dt)
    arrays = [_make(s, rng, npdt) for s in specs]
    inputs = []
    for a, (_, kind) in zip(arrays, specs):
        t = torch_mod.tensor(a)
        if a.dtype.kind == "f" and kind != "const":
            t.requires_grad_(True)
        inputs.append(t)
    out = fn(torch_mod, *inputs)
    outs = [o for o in (out if isinstance(out, (tuple, list)) else [out])
            if hasattr(o, "requires_grad")]
    diff = [o for o in outs if o.requires_grad]
    grads: list[Any] = []
    if diff:
        cot = [torch_mod.tensor(rng.standard_normal(tuple(o.shape)).astype(npdt)) for o in diff]
        targets = [t for t in inputs if t.requires_grad]
        grads = list(torch_mod.autograd.grad(diff, targets, cot, allow_unused=True))
    return plain(out), plain(grads)


@pytest.mark.parametrize("dt", ["float64", "float32"])
@pytest.mark.parametrize("name,fn,specs", CASES, ids=[c[0] for c in CASES])
def test_op(name: str, fn: Callable[..., Any], specs: list[Spec], dt: str) -> None:
    seed = sum(map(ord, name))
    ref = _run(fn, specs, real, dt, seed)
    ours = _run(fn, specs, tt, dt, seed)
    if name in NAMES_DIFFER:
        ref, ours = _drop_names(ref), _drop_names(ours)
    tol = 1e-10 if dt == "float64" else 2e-5
    assert_same(ref, ours, rtol=tol, atol=tol * 10)


def test_case_count() -> None:
    assert len(CASES) >= 150
