"""PyTorch-style conv nets without PyTorch: shapes, buffers, modes, gradients (finite
differences through the public functions) and messages.  The real-PyTorch comparison is
tests/conformance/test_torch_conf_conv.py."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import tapegrad.torch as torch
from tapegrad.testing import gradcheck

F = torch.nn.functional
nn = torch.nn
RNG = np.random.default_rng(8)


def _d(*shape: int) -> Any:
    return torch.tensor(RNG.standard_normal(shape))


@pytest.mark.parametrize("fn", [
    lambda x, w: F.conv2d(x, w, stride=2, padding=1),
    lambda x, w: F.conv2d(x, w, padding="same", dilation=(1, 2)),
    lambda x, w: F.conv_transpose2d(x, w.transpose(0, 1), stride=2, output_padding=1),
])
def test_functional_conv_gradcheck_second_order(fn: Any) -> None:
    assert gradcheck(lambda x, w: fn(x, w) ** 2, [_d(2, 3, 5, 5), _d(3, 3, 3, 3)], order=2)


def test_pool_norm_interp_gradcheck() -> None:
    x = _d(2, 4, 6, 5)
    for fn in (lambda v: F.max_pool2d(v, 2), lambda v: F.avg_pool2d(v, 3, 2, 1),
               lambda v: F.adaptive_avg_pool2d(v, (2, 3)),
               lambda v: F.batch_norm(v, None, None, training=True),
               lambda v: F.group_norm(v, 2), lambda v: F.instance_norm(v),
               lambda v: F.interpolate(v, scale_factor=2, mode="bilinear"),
               lambda v: F.unfold(v, 2, padding=1)):
        assert gradcheck(lambda v, f=fn: f(v) ** 2, [x], order=2)


def test_lenet_shapes_parameters_and_backward() -> None:
    torch.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(1, 6, 5), nn.ReLU(), nn.MaxPool2d(2), nn.Conv2d(6, 16, 5),
                          nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(), nn.Linear(256, 10))
    y = model(torch.randn(3, 1, 28, 28))
    assert tuple(y.shape) == (3, 10)
    assert [tuple(p.shape) for p in model.parameters()] == [
        (6, 1, 5, 5), (6,), (16, 6, 5, 5), (16,), (10, 256), (10,)]
    # PyTorch's default bound: U(-1/sqrt(fan_in), 1/sqrt(fan_in)), fan_in = 25
    assert float(model[0].weight.detach().abs().max()) <= 1 / 5 + 1e-7
    y.sum().backward()
    assert all(p.grad is not None and p.grad.shape == p.shape for p in model.parameters())
    assert type(y.grad_fn).__name__ == "AddmmBackward0"
    assert type(model[0](torch.ones(1, 1, 5, 5)).grad_fn).__name__ == "ConvolutionBackward0"


def test_batchnorm_buffers_modes_and_state_dict() -> None:
    bn = nn.BatchNorm1d(2)
    x = torch.tensor([[1.0, 10.0], [3.0, 30.0], [5.0, 20.0]])
    y = bn(x)
    # batch statistics, biased variance in the output ...
    np.testing.assert_allclose(y.detach().numpy()[:, 0], [-1.2247, 0.0, 1.2247], atol=1e-4)
    # ... and PyTorch's running rule: 0.9 * old + 0.1 * new, unbiased variance
    np.testing.assert_allclose(bn.running_mean.numpy(), [0.3, 2.0], rtol=1e-6)
    np.testing.assert_allclose(bn.running_var.numpy(), [0.9 + 0.1 * 4.0, 0.9 + 0.1 * 100.0],
                               rtol=1e-6)
    assert int(bn.num_batches_tracked) == 1
    assert list(bn.state_dict()) == ["weight", "bias", "running_mean", "running_var",
                                     "num_batches_tracked"]
    bn.eval()
    ye = bn(x)
    expect = (x.numpy() - bn.running_mean.numpy()) / np.sqrt(bn.running_var.numpy() + 1e-5)
    np.testing.assert_allclose(ye.detach().numpy(), expect, rtol=1e-5)
    assert int(bn.num_batches_tracked) == 1


def test_dropout_modules_follow_train_eval() -> None:
    d = nn.Dropout2d(0.5)
    x = torch.ones(4, 8, 2, 2)
    torch.manual_seed(1)
    assert (d(x).numpy() == 0).any()
    d.eval()
    assert (d(x).numpy() == 1).all()


def test_embedding_module_padding_row_and_bag() -> None:
    torch.manual_seed(0)
    e = nn.Embedding(5, 3, padding_idx=1)
    assert (e.weight.detach().numpy()[1] == 0).all()
    out = e(torch.tensor([1, 2, 1]))
    out.sum().backward()
    g = e.weight.grad.numpy()
    assert (g[1] == 0).all() and (g[2] == 1).all()
    bag = nn.EmbeddingBag(5, 3, mode="mean")
    y = bag(torch.tensor([[0, 2], [4, 4]]))
    np.testing.assert_allclose(y.detach().numpy()[1], bag.weight.detach().numpy()[4],
                               rtol=1e-6)


def test_conv_errors_have_pytorch_wording() -> None:
    with pytest.raises(RuntimeError, match=r"expected input\[1, 2, 3, 3\] to have 1 channels"):
        F.conv2d(torch.ones(1, 2, 3, 3), torch.ones(1, 1, 2, 2))
    with pytest.raises(RuntimeError, match="Kernel size can't be greater than actual input"):
        F.conv2d(torch.ones(1, 1, 1, 1), torch.ones(1, 1, 2, 2))
    with pytest.raises(ValueError, match="in_channels must be divisible by groups"):
        nn.Conv2d(3, 4, 3, groups=2)
    with pytest.raises(ValueError, match=r"expected 4D input \(got 2D input\)"):
        nn.BatchNorm2d(3)(torch.ones(2, 3))
    with pytest.raises(RuntimeError, match="pad should be at most half of effective kernel"):
        F.max_pool2d(torch.ones(1, 1, 5, 5), 3, padding=2)


def test_module_reprs() -> None:
    assert repr(nn.Conv2d(3, 8, 3, stride=2, padding=1, bias=False)) == \
        "Conv2d(3, 8, kernel_size=(3, 3), stride=(2, 2), padding=(1, 1), bias=False)"
    assert repr(nn.MaxPool2d(3, 2, 1)) == \
        "MaxPool2d(kernel_size=3, stride=2, padding=1, dilation=1, ceil_mode=False)"
    assert repr(nn.BatchNorm2d(4)) == ("BatchNorm2d(4, eps=1e-05, momentum=0.1, affine=True, "
                                       "bias=True, track_running_stats=True)")
