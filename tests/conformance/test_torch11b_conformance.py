"""Conformance (torch11b): top-level nn.functional names and the adjoint views against real
PyTorch (values, gradients, grad_fn names, error texts).  Skipped without PyTorch."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

real = pytest.importorskip("torch")
import tapegrad.torch as tt  # noqa: E402
from tapegrad.torch import _nn_top  # noqa: E402

RNG = np.random.default_rng(11)
X = RNG.standard_normal((2, 4, 6, 6)).astype(np.float32)


@pytest.mark.parametrize("name", _nn_top.FUNCTIONAL_NAMES)
def test_real_torch_has_the_name(name: str) -> None:
    assert hasattr(real, name)


# composites whose node names are not PyTorch's (the README lists them): values and
# gradients are still compared
KNOWN_NAME_DIFF = frozenset({"max_pool1d", "avg_pool1d", "adaptive_avg_pool1d",
                             "pairwise_distance"})


def _both(fn: Callable[[Any, Any], Any], data: np.ndarray, grad: bool = True,
          names: bool = True) -> None:
    outs = []
    for mod in (real, tt):
        x = mod.tensor(data, requires_grad=grad)
        y = fn(mod, x)
        g = None
        if grad:
            y.sum().backward()
            g = x.grad.numpy()
        outs.append((y.detach().numpy(), g, type(y.grad_fn).__name__ if grad else None))
    (yr, gr, nr), (yt, gt, nt) = outs
    assert yr.dtype == yt.dtype and yr.shape == yt.shape
    np.testing.assert_allclose(yt, yr, rtol=1e-5, atol=1e-6)
    if grad:
        np.testing.assert_allclose(gt, gr, rtol=1e-5, atol=1e-5)
        assert nt == nr or not names


CASES: dict[str, Callable[[Any, Any], Any]] = {
    "selu": lambda m, x: m.selu(x),
    "celu": lambda m, x: m.celu(x, 0.7),
    "threshold": lambda m, x: m.threshold(x, 0.1, -2.0),
    "hardshrink": lambda m, x: m.hardshrink(x, 0.3),
    "prelu": lambda m, x: m.prelu(x, m.tensor([0.1, 0.2, 0.3, 0.4])),
    "prelu_method": lambda m, x: x.prelu(m.tensor([0.25])),
    "rrelu_eval": lambda m, x: m.rrelu(x),
    "pixel_shuffle": lambda m, x: m.pixel_shuffle(x, 2),
    "pixel_unshuffle": lambda m, x: m.pixel_unshuffle(x, 2),
    "channel_shuffle": lambda m, x: m.channel_shuffle(x, 2),
    "pdist": lambda m, x: m.pdist(x.reshape(16, 18), 2.0),
    "pdist_p1": lambda m, x: m.pdist(x.reshape(16, 18), 1.0),
    "max_pool2d": lambda m, x: m.max_pool2d(x, 2),
    "max_pool1d": lambda m, x: m.max_pool1d(x.reshape(2, 4, 36), 3),
    "avg_pool1d": lambda m, x: m.avg_pool1d(x.reshape(2, 4, 36), 3),
    "adaptive_avg_pool1d": lambda m, x: m.adaptive_avg_pool1d(x.reshape(2, 4, 36), 5),
    "cosine_similarity": lambda m, x: m.cosine_similarity(x, x * x, 1),
    "pairwise_distance": lambda m, x: m.pairwise_distance(x[0, 0], x[1, 1]),
    "conv2d": lambda m, x: m.conv2d(x, m.ones(3, 4, 3, 3) * 0.1, None, 1, 1),
    "conv1d": lambda m, x: m.conv1d(x.reshape(2, 4, 36), m.ones(3, 4, 3) * 0.1),
    "conv_transpose2d": lambda m, x: m.conv_transpose2d(x, m.ones(4, 2, 2, 2) * 0.1, None, 2),
    "mH": lambda m, x: x.mH * 2,
    "adjoint": lambda m, x: m.adjoint(x) * 2,
    "adjoint_method": lambda m, x: x.adjoint(),
    "H": lambda m, x: x[0, 0].H,
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_values_grads_names(case: str) -> None:
    _both(CASES[case], X, names=case not in KNOWN_NAME_DIFF)


def test_inplace_aliases() -> None:
    for name in ("relu_", "selu_", "celu_", "rrelu_"):
        yr = getattr(real, name)(real.tensor(X))
        yt = getattr(tt, name)(tt.tensor(X))
        np.testing.assert_allclose(yt.numpy(), yr.numpy(), rtol=1e-6, atol=1e-7)
    yr = real.threshold_(real.tensor(X), 0.2, 5.0)
    yt = tt.threshold_(tt.tensor(X), 0.2, 5.0)
    np.testing.assert_array_equal(yt.numpy(), yr.numpy())


def test_complex_adjoint_views() -> None:
    a = (RNG.standard_normal((3, 2, 4)) + 1j * RNG.standard_normal((3, 2, 4))).astype(np.complex64)
    for view in (lambda x: x.mH, lambda x: x.adjoint(), lambda x: x[0].H):
        r = view(real.tensor(a, requires_grad=True))
        t = view(tt.tensor(a, requires_grad=True))
        np.testing.assert_array_equal(t.detach().numpy(), r.detach().resolve_conj().numpy())
        assert type(t.grad_fn).__name__ == type(r.grad_fn).__name__


@pytest.mark.parametrize("shape", [(3,), (2, 3, 4)])
@pytest.mark.parametrize("what", ["H", "mH", "adjoint"])
def test_adjoint_errors(shape: tuple[int, ...], what: str) -> None:
    def go(m: Any) -> Any:
        x = m.zeros(*shape)
        return x.adjoint() if what == "adjoint" else getattr(x, what)

    try:
        go(real)
    except RuntimeError as e:
        with pytest.raises(RuntimeError) as et:
            go(tt)
        assert str(et.value) == str(e).split("\n")[0]
    else:
        assert tuple(go(tt).shape) == tuple(go(real).shape)


def test_zero_d_warns_as_pytorch() -> None:
    for what in ("H", "mH"):
        with warnings.catch_warnings(record=True) as wr:
            warnings.simplefilter("always")
            getattr(real.tensor(1.5), what)
        with warnings.catch_warnings(record=True) as wt:
            warnings.simplefilter("always")
            v = getattr(tt.tensor(1.5), what)
        assert float(v) == 1.5
        assert str(wt[0].message) in str(wr[0].message)


SPLITS: dict[str, Callable[[Any, Any], Any]] = {
    "sections": lambda m, x: m.tensor_split(x, 3, 1),
    "uneven": lambda m, x: m.tensor_split(x, 4, 1),
    "list_method": lambda m, x: x.tensor_split([1, 4], 1),
    "negative_and_past_end": lambda m, x: x.tensor_split([-5, 2, 9], 1),
    "tensor_indices": lambda m, x: m.tensor_split(x, m.tensor([1, 3])),
    "tensor_sections": lambda m, x: m.tensor_split(x, m.tensor(3), dim=1),
    "hsplit": lambda m, x: m.hsplit(x, 3),
    "vsplit_method": lambda m, x: x.vsplit([1, 2]),
    "dsplit": lambda m, x: m.dsplit(x, 2),
    "hsplit_indivisible": lambda m, x: m.hsplit(x, 4),
    "dsplit_2d": lambda m, x: m.dsplit(x[0], 2),
    "vsplit_1d": lambda m, x: m.vsplit(x[0, 0], 2),
    "zero_sections": lambda m, x: m.tensor_split(x, 0),
    "tensor_2d": lambda m, x: m.tensor_split(x, m.tensor([[1]])),
    "tensor_float": lambda m, x: m.tensor_split(x, m.tensor([1.0])),
    "tensor_int32": lambda m, x: m.tensor_split(x, m.tensor([1], dtype=m.int32)),
    "float_arg": lambda m, x: m.tensor_split(x, 2.0),
    "zero_d": lambda m, x: m.tensor_split(x[0, 0, 0], 2),
}


@pytest.mark.parametrize("case", sorted(SPLITS))
def test_tensor_split_family(case: str) -> None:
    a = np.arange(48.0, dtype=np.float32).reshape(4, 6, 2)
    res = []
    for mod in (real, tt):
        x = mod.tensor(a, requires_grad=True)
        try:
            parts = SPLITS[case](mod, x)
        except (RuntimeError, TypeError) as e:
            res.append((type(e), str(e).split("\n(Triggered")[0]))
            continue
        sum(((i + 1) * p).sum() for i, p in enumerate(parts)).backward()
        res.append(([(p.detach().numpy().tolist(), type(p.grad_fn).__name__) for p in parts],
                    x.grad.numpy().tolist()))
    assert res[1] == res[0]


PIXEL_ERRORS: dict[str, Callable[[Any], Any]] = {
    "shuffle_2d": lambda m: m.pixel_shuffle(m.ones(2, 2), 2),
    "shuffle_zero": lambda m: m.pixel_shuffle(m.ones(1, 4, 2, 2), 0),
    "shuffle_channels": lambda m: m.pixel_shuffle(m.ones(1, 3, 2, 2), 2),
    "unshuffle_height": lambda m: m.pixel_unshuffle(m.ones(1, 4, 3, 2), 2),
    "unshuffle_width": lambda m: m.pixel_unshuffle(m.ones(1, 4, 2, 3), 2),
    "unshuffle_negative": lambda m: m.pixel_unshuffle(m.ones(1, 4, 2, 2), -1),
    "unshuffle_2d": lambda m: m.pixel_unshuffle(m.ones(4, 2), 2),
}


@pytest.mark.parametrize("case", sorted(PIXEL_ERRORS))
def test_pixel_shuffle_errors(case: str) -> None:
    with pytest.raises(RuntimeError) as er:
        PIXEL_ERRORS[case](real)
    with pytest.raises(RuntimeError) as et:
        PIXEL_ERRORS[case](tt)
    assert str(et.value) == str(er.value).split("\n")[0]
