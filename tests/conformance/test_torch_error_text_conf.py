"""Conformance: ``str(e)`` of PyTorch-style errors is PyTorch's, exactly (shapes and dtypes).

The tapegrad hint is a note, so the message compares equal.  Skipped without PyTorch.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

import tapegrad.torch as tg_torch


@pytest.fixture(scope="module")
def rtorch() -> Any:
    return pytest.importorskip("torch")


PROGRAMS: dict[str, Callable[[Any], Any]] = {
    "mm": lambda t: t.ones(2, 3) @ t.ones(2, 3),
    "mm_dtype": lambda t: t.ones(2, 2) @ t.ones(2, 2, dtype=t.float64),
    "dot": lambda t: t.ones(3) @ t.ones(4),
    "vec_mat": lambda t: t.ones(3) @ t.ones(4, 2),
    "mat_vec": lambda t: t.ones(2, 3) @ t.ones(4),
    "bmm": lambda t: t.ones(2, 2, 3) @ t.ones(2, 4, 2),
    "batched_mat": lambda t: t.ones(2, 2, 3) @ t.ones(4, 2),
    "batched_vec": lambda t: t.ones(2, 2, 3) @ t.ones(4),
    "batch_broadcast": lambda t: t.ones(2, 2, 3) @ t.ones(3, 3, 2),
    "add_broadcast": lambda t: t.ones(2, 3) + t.ones(4),
    "view": lambda t: t.ones(6).view(4, 2),
    "reshape": lambda t: t.ones(6).reshape(4, -1),
    "cat": lambda t: t.cat([t.ones(2, 3), t.ones(2, 4)]),
    "stack": lambda t: t.stack([t.ones(2), t.ones(3)]),
    "index": lambda t: t.ones(3)[5],
    "cross_entropy_target": lambda t: t.nn.functional.cross_entropy(t.ones(2, 3),
                                                                    t.tensor([0.0, 1.0])),
    "cross_entropy_range": lambda t: t.nn.functional.cross_entropy(t.ones(2, 3),
                                                                   t.tensor([0, 5])),
    "linear_features": lambda t: t.nn.Linear(3, 2)(t.ones(1, 4)),
    "linear_dtype": lambda t: t.nn.Linear(2, 2)(t.ones(1, 2, dtype=t.float64)),
    "mse_shapes": lambda t: t.nn.functional.mse_loss(t.ones(2, 3), t.ones(2, 4)),
    "int_requires_grad": lambda t: t.tensor([1, 2], requires_grad=True),
    "numpy_requires_grad": lambda t: t.ones(2, requires_grad=True).numpy(),
    "item": lambda t: t.ones(2).item(),
    "sum_dim": lambda t: t.ones(2).sum(dim=3),
    "transpose_dim": lambda t: t.ones(2, 3).transpose(0, 2),
    "squeeze_dim": lambda t: t.ones(2).squeeze(3),
    "squeeze_negative": lambda t: t.ones(2, 3).squeeze(-3),
    "expand": lambda t: t.ones(2, 3).expand(4, 3),
    "bool_many": lambda t: bool(t.ones(2)),
    "gather_range": lambda t: t.gather(t.ones(2, 3), 1, t.tensor([[5]])),
    "gather_negative": lambda t: t.gather(t.ones(2, 3), 1, t.tensor([[-1]])),
    "argmax_dim": lambda t: t.argmax(t.ones(2), dim=3),
    "argmin_dim_scalar": lambda t: t.argmin(t.tensor(1.0), dim=1),
    "zeros_negative": lambda t: t.zeros(2, -3),
    "ones_negative": lambda t: t.ones(-1),
    "chunk_zero": lambda t: t.ones(4).chunk(0),
    "mean_int_dtype": lambda t: t.ones(2, 3).mean(dtype=t.int64),
    "mean_int": lambda t: t.ones(2, dtype=t.int64).mean(),
    "split_zero": lambda t: t.ones(4).split(0),
    "flatten_dim": lambda t: t.ones(2, 3).flatten(3),
}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_error_text_is_pytorchs(rtorch: Any, name: str) -> None:
    results = []
    for t in (tg_torch, rtorch):
        with pytest.raises(Exception) as info:  # noqa: B017 - the type is compared below
            PROGRAMS[name](t)
        results.append((type(info.value).__name__, str(info.value)))
    assert results[0] == results[1]


def test_argmax_method_dim_out_of_range_as_pytorch() -> None:
    real = pytest.importorskip("torch")
    import tapegrad.torch as tt

    for mod in (real, tt):
        with pytest.raises(IndexError) as ei:
            mod.ones(2, 3).argmax(dim=5)
        assert str(ei.value) == ("Dimension out of range (expected to be in range of [-2, 1], "
                                 "but got 5)")
        assert mod.ones(2, 3).argmin(1, keepdim=True).shape == (2, 1)
