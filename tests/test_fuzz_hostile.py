"""Fuzz: random bad inputs to random ops and entry points (both styles).

Every call must either return a value or raise an exception of a type the
framework raises (no NumPy ``MemoryError``, ``AxisError`` subclasses are
fine as ``IndexError``/``ValueError``, no ``AttributeError``/``KeyError`` from
inside tapegrad), and when it raises, no ``.grad``, parameter, variable or
optimizer state may have changed.
"""

from __future__ import annotations

import io
import pickle
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import tapegrad.tf as tf
import tapegrad.torch as torch

hypothesis = pytest.importorskip("hypothesis")
pytestmark = pytest.mark.filterwarnings("ignore")  # bad input warns on the way to its error
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

TORCH_ERRORS = (RuntimeError, TypeError, ValueError, IndexError, NotImplementedError,
                pickle.UnpicklingError, EOFError)
TF_ERRORS = (tf.errors.OpError, TypeError, ValueError, IndexError, NotImplementedError)

BAD: list[Any] = [
    None, "abc", b"\x00\x01", object(), [1, [2]], [[1, 2], [3]], 2 ** 70, -2 ** 70, -1,
    (2 ** 40, 2 ** 40), float("nan"), float("inf"), 1 + 2j, True, [], (), {}, {"a": 1},
    np.array(["a"]), np.zeros((2, 0)), np.ones((3, 1, 2)), [object()], [2 ** 64], 1e308,
    slice(None), ..., (0, -5), [0.5, "x"], set(), lambda: 0,
]


def _torch_bad() -> list[Any]:
    return BAD + [torch.zeros(0), torch.ones(5, 7), torch.tensor([1, 2]),
                  torch.tensor([True, False]), torch.ones(2, 3, dtype=torch.float64),
                  torch.zeros(3, dtype=torch.uint8)]


class TorchWorld:
    """A small model, optimizer and leaves whose state must survive failed calls."""

    def __init__(self) -> None:
        torch.manual_seed(0)
        self.model = torch.nn.Linear(3, 2)
        self.opt = torch.optim.Adam(self.model.parameters(), lr=0.1)
        self.x = torch.ones(2, 3, requires_grad=True)
        (self.model(self.x) ** 2).sum().backward()
        self.opt.step()

    def snapshot(self) -> list[np.ndarray]:
        out = []
        for p in [*self.model.parameters(), self.x]:
            out.append(p.detach().numpy().copy())
            out.append(None if p.grad is None else p.grad.numpy().copy())
        for st_ in self.opt.state.values():
            for v in st_.values():
                out.append(np.array(v, copy=True))
        return out


def _torch_entry_points(w: TorchWorld) -> dict[str, Callable[[Any], Any]]:
    x = w.x
    return {
        "tensor": lambda v: torch.tensor(v),
        "as_tensor": lambda v: torch.as_tensor(v),
        "zeros": lambda v: torch.zeros(v),
        "ones_varargs": lambda v: torch.ones(*v) if isinstance(v, tuple) else torch.ones(v),
        "full": lambda v: torch.full((2,), v),
        "add": lambda v: x + v,
        "mul": lambda v: x * v,
        "floordiv": lambda v: torch.tensor([3, 4]) // v,
        "matmul": lambda v: torch.matmul(x, v),
        "reshape": lambda v: x.reshape(v),
        "sum_dim": lambda v: x.sum(dim=v),
        "max_dim": lambda v: x.max(dim=v),
        "cat": lambda v: torch.cat([x, v]),
        "getitem": lambda v: x[v],
        "relu": lambda v: torch.nn.functional.relu(v),
        "mse": lambda v: torch.nn.functional.mse_loss(x, v),
        "norm": lambda v: torch.norm(v),
        "backward_gradient": lambda v: (x * 2).backward(v),
        "hook": lambda v: _hooked_backward(x, v),
        "grad_assign": lambda v: setattr(x, "grad", v),
        "load_state_dict": lambda v: w.model.load_state_dict(v),
        "load_state_dict_value": lambda v: w.model.load_state_dict(
            {"weight": v, "bias": torch.zeros(2)}),
        "opt_load_state_dict": lambda v: w.opt.load_state_dict(v),
        "load_bytes": lambda v: torch.load(io.BytesIO(v if isinstance(v, bytes) else
                                                      repr(v).encode())),
        "set_rng_state": lambda v: torch.set_rng_state(v),
        "linear_call": lambda v: w.model(v),
    }


def _hooked_backward(x: Any, v: Any) -> Any:
    y = x * 3
    h = y.register_hook(lambda g: v)
    try:
        y.sum().backward()
    finally:
        h.remove()


# PyTorch's own behaviour: a state dict without "param_groups" is a KeyError
EXTRA: dict[str, tuple[type[BaseException], ...]] = {"opt_load_state_dict": (KeyError,)}

WORLD = TorchWorld()
TORCH_POINTS = _torch_entry_points(WORLD)


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(name=st.sampled_from(sorted(TORCH_POINTS)), value=st.sampled_from(_torch_bad()))
def test_torch_entry_points_fail_cleanly(name: str, value: Any) -> None:
    before = WORLD.snapshot()
    try:
        TORCH_POINTS[name](value)
    except TORCH_ERRORS + EXTRA.get(name, ()):
        after = WORLD.snapshot()
        assert len(after) == len(before)
        for a, b in zip(before, after):
            if a is None or b is None:
                assert a is b
            else:
                np.testing.assert_array_equal(a, b)
    except Exception as e:  # noqa: BLE001
        pytest.fail(f"{name}({value!r}) raised {type(e).__name__}: {e}")


class TFWorld:
    def __init__(self) -> None:
        tf.random.set_seed(0)
        self.model = tf.keras.Sequential([tf.keras.Input((3,)), tf.keras.layers.Dense(2)])
        self.opt = tf.keras.optimizers.Adam(0.1)
        self.v = tf.Variable(np.ones((2, 3), np.float32))

    def snapshot(self) -> list[np.ndarray]:
        out = [w.copy() for w in self.model.get_weights()] + [self.v.numpy().copy()]
        out += [np.asarray(self.opt.iterations.numpy()).copy()]
        return out


def _tf_bad() -> list[Any]:
    return BAD + [tf.zeros([0]), tf.ones([5, 7]), tf.constant([1, 2]),
                  tf.constant([True, False]), tf.ones([2, 3], dtype=tf.float64)]


def _tf_gradient(w: TFWorld, v: Any) -> Any:
    with tf.GradientTape() as tape:
        y = w.v * 2.0
    return tape.gradient(y, w.v, output_gradients=v)


def _tf_entry_points(w: TFWorld) -> dict[str, Callable[[Any], Any]]:
    v0 = w.v
    return {
        "constant": lambda v: tf.constant(v),
        "convert": lambda v: tf.convert_to_tensor(v),
        "zeros": lambda v: tf.zeros(v),
        "fill": lambda v: tf.fill([2], v),
        "add": lambda v: v0 + v,
        "multiply": lambda v: tf.multiply(v0, v),
        "floordiv": lambda v: tf.math.floordiv(tf.constant([3, 4]), v),
        "matmul": lambda v: tf.matmul(v0, v),
        "reshape": lambda v: tf.reshape(v0, v),
        "reduce_max": lambda v: tf.reduce_max(v),
        "reduce_sum_axis": lambda v: tf.reduce_sum(v0, axis=v),
        "concat": lambda v: tf.concat([v0, v], axis=0),
        "gather": lambda v: tf.gather(v0, v),
        "assign": lambda v: v0.assign(v),
        "output_gradients": lambda v: _tf_gradient(w, v),
        "apply_gradients": lambda v: w.opt.apply_gradients([(v, v0)]),
        "set_weights": lambda v: w.model.set_weights(v),
        "model_call": lambda v: w.model(v),
    }


TF_WORLD = TFWorld()
TF_POINTS = _tf_entry_points(TF_WORLD)


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(name=st.sampled_from(sorted(TF_POINTS)), value=st.sampled_from(_tf_bad()))
def test_tf_entry_points_fail_cleanly(name: str, value: Any) -> None:
    before = TF_WORLD.snapshot()
    try:
        TF_POINTS[name](value)
    except TF_ERRORS:
        after = TF_WORLD.snapshot()
        for a, b in zip(before, after):
            np.testing.assert_array_equal(a, b)
    except Exception as e:  # noqa: BLE001
        pytest.fail(f"{name}({value!r}) raised {type(e).__name__}: {e}")
