"""Every op of the TensorFlow-style op set: values, gradients (first and second
order) against central finite differences, float32 against float64."""

from __future__ import annotations

import numpy as np
import pytest

import tapegrad.tf as tf
from tests.tf_style.tf_cases import CASES, TFCase
from tests.tf_style.tf_helpers import (
    numeric_grads,
    numeric_second,
    run_case,
    run_case_second,
)

IDS = [c.name for c in CASES]


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_gradient_matches_finite_differences(case: TFCase) -> None:
    arrays = case.astype(np.float64)
    _, grads = run_case(tf, case.fn, arrays)
    num = numeric_grads(tf, case.fn, arrays)
    assert len(grads) == len(num)
    for g, n in zip(grads, num):
        assert g is not None
        np.testing.assert_allclose(g, n, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("case", [c for c in CASES if c.order >= 2],
                         ids=[c.name for c in CASES if c.order >= 2])
def test_second_order_matches_finite_differences(case: TFCase) -> None:
    arrays = case.astype(np.float64)
    g2 = run_case_second(tf, case.fn, arrays)
    num = numeric_second(tf, case.fn, arrays)
    for g, n in zip(g2, num):
        if g is None:  # the gradient is constant in x (e.g. linear ops)
            np.testing.assert_allclose(n, 0.0, atol=1e-6)
        else:
            np.testing.assert_allclose(g, n, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_float32_matches_float64(case: TFCase) -> None:
    o64, g64 = run_case(tf, case.fn, case.astype(np.float64))
    o32, g32 = run_case(tf, case.fn, case.astype(np.float32))
    for a, b in zip(o32, o64):
        if b.dtype.kind == "f":
            assert a.dtype == np.float32
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)
    for a, b in zip(g32, g64):
        assert a is not None and b is not None
        assert a.dtype == np.float32
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)


def test_case_table_is_large() -> None:
    assert len(CASES) >= 100
