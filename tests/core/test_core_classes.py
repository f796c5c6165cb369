"""Front-end tensors are subclasses of the core Tensor; ``_core`` imports nothing above it."""

from __future__ import annotations

import ast
import copy
import pickle
from pathlib import Path

import numpy as np
import pytest

import tapegrad as tg
import tapegrad.tf as tf
import tapegrad.torch as torch
from tapegrad._core import tensor as core_tensor

CORE_DIR = Path(core_tensor.__file__).parent


def test_each_style_has_its_own_class() -> None:
    t, e, c = torch.ones(2), tf.constant([1.0, 2.0]), tg.tensor([1.0, 2.0])
    assert type(t) is torch.Tensor and type(t).__name__ == "Tensor"
    assert type(t).__module__ == "tapegrad.torch"
    assert type(e).__name__ == "EagerTensor" and type(e).__module__ == "tapegrad.tf"
    assert type(c) is tg.Tensor
    assert all(isinstance(x, tg.Tensor) for x in (t, e, c))
    assert repr(type(t)) == "<class 'tapegrad.torch.Tensor'>"


def test_methods_belong_to_their_style() -> None:
    e = tf.constant([1.0, 2.0])
    with pytest.raises(AttributeError):
        e.unsqueeze(0)  # type: ignore[attr-defined]
    with pytest.raises(AttributeError):
        tg.tensor([1.0]).unsqueeze(0)  # type: ignore[attr-defined]
    assert torch.ones(2).unsqueeze(0).shape == (1, 2)
    assert e.get_shape().as_list() == [2]
    assert not hasattr(torch.ones(1), "get_shape")
    assert "unsqueeze" not in tg.Tensor.__dict__ and "get_shape" not in tg.Tensor.__dict__


def test_ops_keep_the_class_of_their_inputs_and_mix_styles() -> None:
    t = torch.ones(2, requires_grad=True)
    y = (t * 2).sum()
    assert type(y) is torch.Tensor and type(y.grad_fn).__name__ == "SumBackward0"
    e = tf.constant([1.0, 2.0])
    assert type(e * 2) is type(e) and type(tf.exp(e)) is type(e)
    # a tensor of one style works in the other style's functions
    assert np.allclose(tf.reduce_sum(torch.ones(3)).numpy(), 3.0)
    assert np.allclose(torch.sum(tf.constant([1.0, 2.0])).numpy(), 3.0)
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    with tf.GradientTape() as tape:
        tape.watch(x)
        z = tf.reduce_sum(x * x)
    assert np.allclose(tape.gradient(z, x).numpy(), [2.0, 4.0])


def test_printing_and_promotion_follow_the_class() -> None:
    assert repr(torch.tensor([1.0, 2.0])) == "tensor([1., 2.])"
    assert repr(tf.constant(1.0)) == "<tf.Tensor: shape=(), dtype=float32, numpy=1.0>"
    # PyTorch: an int tensor times a Python float is float32; TensorFlow refuses the mix
    assert (torch.tensor([1, 2]) * 1.5).dtype == torch.float32
    with pytest.raises(Exception, match="int32"):
        tf.constant([1, 2]) * 1.5


def test_special_types_stay_subclasses() -> None:
    p = torch.nn.Parameter(torch.ones(2))
    assert isinstance(p, torch.Tensor) and isinstance(p, torch.nn.Parameter)
    assert not isinstance(torch.ones(1), torch.nn.Parameter)
    assert type(copy.deepcopy(p)) is torch.nn.Parameter
    v = tf.Variable([1.0, 2.0])
    assert type(v).__name__ == "ResourceVariable" and not isinstance(v, tf.Tensor)
    assert isinstance(tf.constant(1.0), tf.Tensor)
    assert type(v + 1).__name__ == "EagerTensor"


def test_classes_survive_pickling_and_copies() -> None:
    for t in (torch.ones(2), tf.constant([1.0, 2.0]), tg.tensor([1.0, 2.0])):
        assert type(pickle.loads(pickle.dumps(t))) is type(t)
        assert type(copy.deepcopy(t)) is type(t)
        assert type(t.detach()) is type(t)


def test_core_imports_nothing_above_it() -> None:
    above = ("ops", "engine", "torch", "tf", "autodiff", "numpy_dispatch", "func", "optim",
             "debug")
    bad = []
    for path in sorted(CORE_DIR.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom):
                mod = node.module or ""
                if node.level >= 2 or mod.split(".")[0] == "tapegrad" and (
                        mod.split(".")[1:2] and mod.split(".")[1] in above):
                    bad.append(f"{path.name}:{node.lineno}")
            elif isinstance(node, ast.Import):
                for a in node.names:
                    if a.name.startswith("tapegrad.") and a.name.split(".")[1] in above:
                        bad.append(f"{path.name}:{node.lineno}")
    assert not bad, bad


def test_no_per_style_hook_tables() -> None:
    assert not hasattr(core_tensor, "STYLE_HOOKS") and not hasattr(core_tensor, "PROMOTE")
    assert core_tensor.CLASSES[core_tensor.TORCH] is torch.Tensor
    assert core_tensor.CLASSES[core_tensor.TF].__name__ == "EagerTensor"


def test_node_names_come_from_the_pytorch_table() -> None:
    """The core names a node after its op key; tapegrad.torch installs PyTorch's names."""
    import subprocess
    import sys

    code = (
        "import tapegrad as tg\n"
        "x = tg.tensor([1.0, 2.0], requires_grad=True)\n"
        "print((x * x).grad_fn.name(), (x * x).sum().grad_fn.name())\n"
        "import tapegrad.torch\n"
        "print((x * x).grad_fn.name(), (x * x).sum().grad_fn.name(),"
        " type((x * x).grad_fn).__name__)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, cwd=str(CORE_DIR.parent.parent)).stdout.split("\n")
    assert out[0] == "MultiplyBackward0 SumAllBackward0"
    assert out[1] == "MulBackward0 SumBackward0 MulBackward0"
    from tapegrad.torch import _grad_names

    assert _grad_names.GRAD_NAMES["multiply"] == "MulBackward0"
    # no PyTorch node name is spelled in the core's ops
    ops_dir = CORE_DIR.parent / "ops"
    spelled = [p.name for p in ops_dir.glob("*.py")
               if "grad_name=" in p.read_text() or ".renamed(" in p.read_text()]
    assert not spelled, spelled
