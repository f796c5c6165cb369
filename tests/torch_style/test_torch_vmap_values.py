"""vmap over ops whose results depend on the values (orders, indices, masks, maxima) and
in-place ops inside vmap: each batched result equals the per-example loop, gradients too.

Inside ``vmap`` a tensor stands for one example and holds no values, so every op that
reads values (sort, max pooling's argmax, a mask) must take the tensor as an input.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import tapegrad.torch as torch

F = torch.nn.functional
R = np.random.default_rng(7)
X = torch.tensor(R.standard_normal((3, 2, 4, 5)).astype(np.float32))
I = torch.tensor(R.integers(0, 4, (3, 2, 5)))  # noqa: E741
W = torch.tensor(R.standard_normal((6, 4)).astype(np.float32))


def _leaves(t: Any) -> list[Any]:
    if isinstance(t, (tuple, list)):
        return [v for x in t for v in _leaves(x)]
    return [t]


CASES: dict[str, tuple[Callable[..., Any], tuple[Any, ...]]] = {
    "max_pool2d": (lambda x: F.max_pool2d(x, 2), (X,)),
    "max_pool2d_unbatched_input": (lambda x: F.max_pool2d(x.unsqueeze(0), 3, 1, 1), (X,)),
    "max_pool2d_indices": (lambda x: F.max_pool2d(x, 2, return_indices=True), (X,)),
    "max_pool1d": (lambda x: F.max_pool1d(x[0], 2), (X,)),
    "adaptive_max_pool2d": (lambda x: F.adaptive_max_pool2d(x, (2, 3), return_indices=True),
                            (X,)),
    "sort": (lambda x: x.sort(-1), (X,)),
    "sort_descending_dim0": (lambda x: torch.sort(x, 0, descending=True), (X,)),
    "argsort": (lambda x: x.argsort(1), (X,)),
    "topk": (lambda x: x.topk(2, -1), (X,)),
    "topk_smallest": (lambda x: x.topk(2, 0, largest=False), (X,)),
    "max_dim": (lambda x: x.max(1), (X,)),
    "argmax": (lambda x: x.argmax(-1, keepdim=True), (X,)),
    "where": (lambda x: torch.where(x > 0, x, 0.0), (X,)),
    "masked_fill": (lambda x: x.masked_fill(x < 0, 1.0), (X,)),
    "count_nonzero": (lambda x: torch.count_nonzero(x > 0, -1), (X,)),
    "bucketize": (lambda x: torch.bucketize(x, torch.tensor([-1.0, 0.0, 1.0])), (X,)),
    "bucketize_right": (lambda x: torch.bucketize(x.round(), torch.tensor([-1.0, 0.0, 1.0]),
                                                  right=True), (X,)),
    "one_hot": (lambda i: F.one_hot(i, 4), (I,)),
    "embedding": (lambda i: F.embedding(i, W), (I,)),
    "embedding_padding_idx": (lambda i: F.embedding(i, W, padding_idx=0), (I,)),
    "gather": (lambda x, i: x[0].gather(1, i[:, :4] % 4), (X, I)),
    "index_select": (lambda x, i: x.index_select(1, i[0, :3]), (X, I)),
    "scatter": (lambda x, i: torch.zeros(2, 5).scatter(1, i, x[0, :2, :5]), (X, I)),
    "scatter_add": (lambda x, i: torch.zeros(2, 5).scatter_add(1, i, x[0, :2, :5]), (X, I)),
    "index_put": (lambda x, i: x[0].index_put((i[0, :2] % 2,), torch.ones(5)), (X, I)),
    "index_fill": (lambda x, i: x[0].index_fill(1, i[0, :2], -1.0), (X, I)),
    "index_add": (lambda x, i: torch.zeros(4, 5).index_add(1, i[0, :2], x[0, :, :2]),
                  (X, I)),
    "index_copy": (lambda x, i: torch.zeros(4, 5).index_copy(1, torch.tensor([3, 1]),
                                                             x[0, :, :2]), (X, I)),
}


def _float_loss(f: Callable[..., Any]) -> Callable[..., Any]:
    def loss(*a: Any) -> Any:
        fl = [o for o in _leaves(f(*a)) if o.dtype.is_floating_point]
        return sum((o * o).sum() for o in fl)

    return loss


@pytest.mark.parametrize("name", sorted(CASES))
def test_vmap_equals_the_loop(name: str) -> None:
    f, args = CASES[name]
    got = _leaves(torch.vmap(f)(*args))
    per = [_leaves(f(*[a[b] for a in args])) for b in range(3)]
    for k, g in enumerate(got):
        want = torch.stack([p[k] for p in per])
        assert g.dtype == want.dtype
        np.testing.assert_allclose(g.numpy(), want.numpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", sorted(n for n in CASES if CASES[n][1][0] is X and n not in (
    "count_nonzero", "bucketize", "bucketize_right", "argsort", "argmax")))
def test_vmap_of_grad_equals_the_loop(name: str) -> None:
    f, args = CASES[name]
    loss = _float_loss(f)
    g = torch.vmap(torch.func.grad(loss))(*args)
    ref = torch.stack([torch.func.grad(loss)(*[a[b] for a in args]) for b in range(3)])
    np.testing.assert_allclose(g.numpy(), ref.numpy(), rtol=1e-4, atol=1e-5)


def test_per_sample_grads_of_a_cnn_with_max_pooling() -> None:
    """The per-sample-gradients tutorial's CNN: vmap(grad) equals one backward per sample."""
    torch.manual_seed(0)
    nn = torch.nn
    model = nn.Sequential(nn.Conv2d(1, 3, 3), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
                          nn.Linear(12, 4), nn.LogSoftmax(1))
    data = torch.randn(4, 1, 6, 6)
    targets = torch.tensor([0, 3, 1, 2])
    params = {k: v.detach() for k, v in model.named_parameters()}

    def loss(p: Any, x: Any, t: Any) -> Any:
        out = torch.func.functional_call(model, p, (x.unsqueeze(0),))
        return F.nll_loss(out, t.unsqueeze(0))

    g = torch.vmap(torch.func.grad(loss), in_dims=(None, 0, 0))(params, data, targets)
    for i in range(4):
        model.zero_grad()
        F.nll_loss(model(data[i:i + 1]), targets[i:i + 1]).backward()
        for k, p in model.named_parameters():
            np.testing.assert_allclose(g[k][i].numpy(), p.grad.numpy(), rtol=1e-4, atol=1e-6)


def test_one_hot_under_vmap_needs_num_classes() -> None:
    with pytest.raises(RuntimeError, match="please provide an explicit positive num_classes"):
        torch.vmap(F.one_hot)(torch.tensor([3, 0]))


# ------------------------------------------------------------------ in place under vmap
IP: dict[str, Callable[[Any], Any]] = {
    "add_": lambda x: (x.clone().add_(1.0) ** 2).sum(),
    "mul_self": lambda x: (x.clone().mul_(x) ** 2).sum(),
    "exp_": lambda x: x.clone().exp_().sum(),
    "relu_": lambda x: (x.clone().relu_() ** 2).sum(),
    "masked_fill_": lambda x: (x.clone().masked_fill_(x < 0, 1.0) ** 2).sum(),
    "fill_": lambda x: (x.clone().fill_(2.0) * x).sum(),
}


@pytest.mark.parametrize("name", sorted(IP))
def test_inplace_inside_vmap_of_grad(name: str) -> None:
    x = torch.tensor([[1.0, -2.0, 3.0], [-1.0, 2.0, -3.0]])
    f = IP[name]
    g = torch.vmap(torch.func.grad(f))(x)
    ref = torch.stack([torch.func.grad(f)(r) for r in x])
    np.testing.assert_allclose(g.numpy(), ref.numpy(), rtol=1e-6)
    np.testing.assert_allclose(torch.func.jacrev(f)(x).numpy(), ref.numpy(), rtol=1e-6)


@pytest.mark.parametrize("in_dims,chunk", [(0, None), (1, None), (0, 1)])
def test_inplace_on_a_vmapped_input_writes_through(in_dims: int, chunk: Any) -> None:
    b = torch.arange(6.0).reshape(2, 3)
    torch.vmap(lambda x: x.mul_(3).add_(1), in_dims=in_dims, chunk_size=chunk)(b)
    assert b.tolist() == [[1.0, 4.0, 7.0], [10.0, 13.0, 16.0]]
    c = torch.arange(6.0).reshape(2, 3)
    torch.vmap(lambda x: x.zero_())(c[:, 1:])  # through a view
    assert c.tolist() == [[0.0, 0.0, 0.0], [3.0, 0.0, 0.0]]


def test_inplace_batched_into_unbatched_raises() -> None:
    y = torch.ones(3)
    with pytest.raises(RuntimeError, match=r"output with shape \[3\] doesn't match the "
                                           r"broadcast shape \[2, 3\]"):
        torch.vmap(lambda x: y.add_(x))(torch.ones(2, 3))
    with pytest.raises(RuntimeError, match="vmap: inplace arithmetic"):
        torch.vmap(lambda x: y.mul_(x))(torch.ones(2, 3))
    assert y.tolist() == [1.0, 1.0, 1.0]
