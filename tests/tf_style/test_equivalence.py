"""One engine: for every op case with a PyTorch form, ``tape.gradient`` in tapegrad.tf
and ``.backward()`` in tapegrad.torch give identical arrays (values and gradients).

Skipped if ``tapegrad.torch`` is not importable.
"""

from __future__ import annotations

import numpy as np
import pytest

import tapegrad.tf as tf
from tests.tf_style.tf_cases import CASES, TFCase
from tests.tf_style.tf_helpers import run_case, weights_for

torch = pytest.importorskip("tapegrad.torch")

PAIRED = [c for c in CASES if c.torch is not None]

# Ops the two front-ends build from different primitives on purpose, each following its
# framework (tapegrad.torch has one-node SoftmaxBackward0/LogSoftmaxBackward0/...
# primitives): equal to rounding, not bit for bit.
OWN_PRIMITIVES = {"reduce_logsumexp", "silu", "softmax", "log_softmax",
                  "sparse_softmax_xent", "einsum",   # einsum: TensorFlow's summation order
                  "exp", "log", "tanh", "sigmoid", "sin", "cos",  # TF's float32 kernels
                  # TensorFlow's own gradient formulas (Expm1Grad is g * exp(x), ...)
                  "expm1", "elu", "selu", "softplus", "erf"}


def run_torch(case: TFCase, arrays: tuple[np.ndarray, ...]) -> tuple[np.ndarray, list[np.ndarray]]:
    assert case.torch is not None
    xs = [torch.tensor(a, requires_grad=a.dtype.kind == "f") if a.dtype.kind == "f"
          else torch.tensor(a) for a in arrays]
    out = case.torch(torch, *xs)
    (u,) = weights_for([tuple(out.shape)])
    s = (out * torch.tensor(u.astype(out.detach().numpy().dtype))).sum()
    s.backward()
    return out.detach().numpy(), [x.grad.numpy() for x in xs if x.requires_grad]


@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["f64", "f32"])
@pytest.mark.parametrize("case", PAIRED, ids=[c.name for c in PAIRED])
def test_tape_gradient_equals_backward(case: TFCase, dtype: type) -> None:
    arrays = case.astype(dtype)
    (o_tf,), g_tf = run_case(tf, case.fn, arrays)
    o_pt, g_pt = run_torch(case, arrays)
    check = np.testing.assert_array_equal
    if case.name in OWN_PRIMITIVES:
        tol = {"rtol": 1e-12, "atol": 1e-15} if dtype is np.float64 else {"rtol": 2e-6,
                                                                             "atol": 1e-7}

        def check(a: np.ndarray, b: np.ndarray) -> None:
            np.testing.assert_allclose(a, b, **tol)
    check(o_tf, o_pt)
    assert o_tf.dtype == o_pt.dtype
    assert len(g_tf) == len(g_pt)
    for a, b in zip(g_tf, g_pt):
        assert a is not None
        assert a.dtype == b.dtype
        check(a, b)


def test_enough_paired_cases() -> None:
    assert len(PAIRED) >= 50
