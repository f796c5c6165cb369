"""Errors: PyTorch's exception type and exact wording, one tapegrad hint as a note; a failed
backward leaves every ``.grad`` as it was."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import tapegrad.torch as torch

HINT = "[tapegrad hint] "


def _raises(fn: Callable[[], Any], exc: type[BaseException], message: str) -> str:
    with pytest.raises(exc) as info:
        fn()
    text = str(info.value)
    assert text == message, f"{text!r} != {message!r}"
    notes = getattr(info.value, "__notes__", [])
    assert len(notes) == 1 and notes[0].startswith(HINT), f"expected one hint note, got {notes!r}"
    hint = notes[0][len(HINT):]
    assert hint and "\n" not in hint, f"expected one hint line, got {notes!r}"
    return hint


def _leaf(*vals: float) -> Any:
    return torch.tensor(list(vals), requires_grad=True)


def _version_setup() -> Any:
    a = _leaf(1.0, 2.0)
    b = a * 1
    c = b * b
    b.add_(1)
    return c


ERRORS: list[tuple[str, Callable[[], Any], type[BaseException], str]] = [
    ("second_backward", lambda: [y.backward() for y in [(_leaf(1.0) ** 2).sum()] * 2],
     RuntimeError,
     "Trying to backward through the graph a second time (or directly access saved tensors "
     "after they have already been freed). Saved intermediate values of the graph are freed "
     "when you call .backward() or autograd.grad(). Specify retain_graph=True if you need to "
     "backward through the graph a second time or if you need to access saved tensors after "
     "calling backward."),
    ("implicit_nonscalar", lambda: (_leaf(1.0, 2.0) * 2).backward(), RuntimeError,
     "grad can be implicitly created only for scalar outputs"),
    ("no_grad_fn", lambda: torch.tensor([1.0]).sum().backward(), RuntimeError,
     "element 0 of tensors does not require grad and does not have a grad_fn"),
    ("unused_input", lambda: torch.autograd.grad(_leaf(1.0).sum() * 2, [_leaf(1.0)]),
     RuntimeError,
     "The differentiated Tensor at index 0 appears to not have been used in the graph. Set "
     "allow_unused=True if this is the desired behavior."),
    ("input_not_requiring", lambda: torch.autograd.grad(_leaf(1.0).sum(), [torch.ones(1)]),
     RuntimeError, "One of the differentiated Tensors does not require grad"),
    ("leaf_inplace", lambda: _leaf(1.0).add_(1), RuntimeError,
     "a leaf Variable that requires grad is being used in an in-place operation."),
    ("leaf_iadd", lambda: _leaf(1.0).__iadd__(1), RuntimeError,
     "a leaf Variable that requires grad is being used in an in-place operation."),
    ("leaf_setitem", lambda: _leaf(1.0, 2.0).__setitem__(0, 5.0), RuntimeError,
     "a view of a leaf Variable that requires grad is being used in an in-place operation."),
    ("version_counter", lambda: _version_setup().sum().backward(), RuntimeError,
     "one of the variables needed for gradient computation has been modified by an inplace "
     "operation: [torch.FloatTensor [2]], which is output 0 of Add, is at version 1; expected "
     "version 0 instead. Hint: enable anomaly detection to find the operation that failed to "
     "compute its gradient, with torch.autograd.set_detect_anomaly(True, check_nan=False)."),
    ("int_requires_grad", lambda: torch.tensor([1, 2], requires_grad=True), RuntimeError,
     "Only Tensors of floating point and complex dtype can require gradients"),
    ("int_requires_grad_", lambda: torch.tensor([1, 2]).requires_grad_(), RuntimeError,
     "only Tensors of floating point dtype can require gradients"),
    ("nonleaf_requires_grad_false", lambda: setattr(_leaf(1.0) * 2, "requires_grad", False),
     RuntimeError,
     "you can only change requires_grad flags of leaf variables. If you want to use a computed "
     "variable in a subgraph that doesn't require differentiation use var_no_grad = "
     "var.detach()."),
    ("matmul_dtype", lambda: torch.ones(2, 2) @ torch.ones(2, 2, dtype=torch.float64),
     RuntimeError, "expected m1 and m2 to have the same dtype, but got: float != double"),
    ("matmul_shape", lambda: torch.ones(2, 3) @ torch.ones(2, 3), RuntimeError,
     "mat1 and mat2 shapes cannot be multiplied (2x3 and 2x3)"),
    ("linear_dtype", lambda: torch.nn.Linear(2, 3)(torch.ones(4, 2, dtype=torch.float64)),
     RuntimeError, "mat1 and mat2 must have the same dtype, but got Double and Float"),
    ("linear_shape", lambda: torch.nn.Linear(2, 3)(torch.ones(4, 3)), RuntimeError,
     "mat1 and mat2 shapes cannot be multiplied (4x3 and 2x3)"),
    ("broadcast", lambda: torch.ones(2, 3) + torch.ones(3, 2), RuntimeError,
     "The size of tensor a (3) must match the size of tensor b (2) at non-singleton dimension "
     "1"),
    ("view", lambda: torch.ones(2, 3).view(4), RuntimeError,
     "shape '[4]' is invalid for input of size 6"),
    ("dim_range", lambda: torch.ones(2, 3).sum(dim=2), IndexError,
     "Dimension out of range (expected to be in range of [-2, 1], but got 2)"),
    ("index", lambda: torch.ones(2)[5], IndexError,
     "index 5 is out of bounds for dimension 0 with size 2"),
    ("mean_int", lambda: torch.tensor([1, 2]).mean(), RuntimeError,
     "mean(): could not infer output dtype. Input dtype must be either a floating point or "
     "complex dtype. Got: Long"),
    ("cat_sizes", lambda: torch.cat([torch.ones(2, 3), torch.ones(2, 2)]), RuntimeError,
     "Sizes of tensors must match except in dimension 0. Expected size 3 but got size 2 for "
     "tensor number 1 in the list."),
    ("item", lambda: torch.ones(2).item(), RuntimeError,
     "a Tensor with 2 elements cannot be converted to Scalar"),
    ("numpy_requires_grad", lambda: _leaf(1.0).numpy(), RuntimeError,
     "Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead."),
    ("inplace_dtype", lambda: torch.tensor([1, 2]).__iadd__(1.5), RuntimeError,
     "result type Float can't be cast to the desired output type Long"),
    ("ce_target_range", lambda: torch.nn.functional.cross_entropy(torch.zeros(2, 3),
                                                                   torch.tensor([0, 3])),
     IndexError, "Target 3 is out of bounds."),
    ("ce_target_dtype", lambda: torch.nn.functional.cross_entropy(torch.zeros(2, 3),
                                                                   torch.tensor([0.0, 1.0])),
     RuntimeError, "expected target dtype to be Long or Byte, but got Float"),
    ("sgd_lr", lambda: torch.optim.SGD([_leaf(1.0)], lr=-0.1), ValueError,
     "Invalid learning rate: -0.1"),
    ("sgd_momentum", lambda: torch.optim.SGD([_leaf(1.0)], lr=0.1, momentum=-1), ValueError,
     "Invalid momentum value: -1"),
    ("sgd_wd", lambda: torch.optim.SGD([_leaf(1.0)], lr=0.1, weight_decay=-1), ValueError,
     "Invalid weight_decay value: -1"),
    ("sgd_nesterov", lambda: torch.optim.SGD([_leaf(1.0)], lr=0.1, nesterov=True), ValueError,
     "Nesterov momentum requires a momentum and zero dampening"),
    ("adam_beta", lambda: torch.optim.Adam([_leaf(1.0)], betas=(1.0, 0.9)), ValueError,
     "Invalid beta parameter at index 0: 1.0"),
    ("adam_eps", lambda: torch.optim.Adam([_leaf(1.0)], eps=-1.0), ValueError,
     "Invalid epsilon value: -1.0"),
    ("adamw_wd", lambda: torch.optim.AdamW([_leaf(1.0)], weight_decay=-1.0), ValueError,
     "Invalid weight_decay value: -1.0"),
    ("optim_empty", lambda: torch.optim.SGD([], lr=0.1), ValueError,
     "optimizer got an empty parameter list"),
    ("optim_tensor", lambda: torch.optim.SGD(_leaf(1.0), lr=0.1), TypeError,
     "params argument given to the optimizer should be an iterable of Tensors or dicts, but "
     "got torch.FloatTensor"),
    ("optim_nonleaf", lambda: torch.optim.SGD([_leaf(1.0) * 2], lr=0.1), ValueError,
     "can't optimize a non-leaf Tensor"),
    ("hook_no_grad", lambda: torch.ones(1).register_hook(lambda g: g), RuntimeError,
     "cannot register a hook on a tensor that doesn't require gradient"),
    ("cuda", lambda: torch.ones(1).cuda(), AssertionError, "Torch not compiled with CUDA enabled"),
    ("ragged", lambda: torch.tensor([[1, 2], [3]]), ValueError,
     "expected sequence of length 2 at dim 1 (got 1)"),
    ("t_3d", lambda: torch.ones(2, 2, 2).t(), RuntimeError,
     "t() expects a tensor with <= 2 dimensions, but self is 3D"),
    ("dot_dims", lambda: torch.dot(torch.ones(2, 2), torch.ones(2)), RuntimeError,
     "1D tensors expected, but got 2D and 1D tensors"),
    ("clamp_none", lambda: torch.clamp(torch.ones(2)), RuntimeError,
     "torch.clamp: At least one of 'min' or 'max' must not be None"),
]


@pytest.mark.parametrize("name,fn,exc,message", ERRORS, ids=[e[0] for e in ERRORS])
def test_error(name: str, fn: Callable[[], Any], exc: type[BaseException], message: str) -> None:
    _raises(fn, exc, message)


def test_failed_backward_leaves_every_grad_unchanged() -> None:
    a = _leaf(1.0, 2.0)
    w = _leaf(3.0)
    (a * w).sum().backward()
    before = (a.grad.tolist(), w.grad.tolist())
    b = a * 1
    c = (b * b).sum() + (w * 5).sum()  # w's path alone would succeed
    b.add_(1)
    with pytest.raises(RuntimeError):
        c.backward()
    assert (a.grad.tolist(), w.grad.tolist()) == before


def test_failed_backward_in_function_leaves_grad() -> None:
    class Boom(torch.autograd.Function):
        @staticmethod
        def forward(ctx: Any, x: Any) -> Any:
            return x * 2

        @staticmethod
        def backward(ctx: Any, g: Any) -> Any:
            raise ValueError("boom")

    x = _leaf(1.0)
    y = _leaf(2.0)
    (x + y).sum().backward()
    with pytest.raises(ValueError, match="boom"):
        (Boom.apply(x) + y * 3).sum().backward()
    assert x.grad.tolist() == [1.0] and y.grad.tolist() == [1.0]


def test_wrong_argument_types() -> None:
    with pytest.raises(TypeError):
        torch.cat(torch.ones(2))
    with pytest.raises(TypeError, match="must be Tensor"):
        torch.sum([1.0, 2.0])
    with pytest.raises(TypeError):
        torch.autograd.grad(_leaf(1.0).sum(), [1.0])
    with pytest.raises(ValueError, match="is not a valid value for reduction"):
        torch.nn.functional.mse_loss(torch.ones(2), torch.ones(2), reduction="avg")
    with pytest.raises(RuntimeError, match="Mismatch in shape"):
        (_leaf(1.0, 2.0) * 2).backward(torch.ones(3))
    # PyTorch takes the shape first, and a string is a sequence of strings
    with pytest.raises(ValueError, match="too many dimensions 'str'"):
        torch.tensor(["a"])
    with pytest.raises(TypeError, match="new\\(\\): invalid data type 'str'"):
        torch.tensor([1, "a"])


def test_mse_size_warning() -> None:
    with pytest.warns(UserWarning, match=r"Using a target size \(torch.Size\(\[3\]\)\) that is "
                      r"different to the input size \(torch.Size\(\[2, 3\]\)\)"):
        torch.nn.functional.mse_loss(torch.zeros(2, 3), torch.ones(3))


def test_error_messages_keep_numpy_out() -> None:
    # exceptions are PyTorch's builtin types, never numpy's
    with pytest.raises(RuntimeError):
        np.asarray(_leaf(1.0))
