"""PyTorch's wording of the engine's errors (``torch.Tensor._messages``).

The engine (``tapegrad/engine.py``, its front doors in ``autodiff/entry.py``)
checks what the reverse-mode algorithm needs and words each error after the style of the tensor it is about; for
PyTorch-style tensors it takes these functions, which give PyTorch 2.13's
exact texts.  Each takes the fields the engine passes for that key.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

_TORCH_TYPES = {"float32": "Float", "float64": "Double", "float16": "Half", "int64": "Long",
                "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte", "bool": "Bool",
                "complex64": "ComplexFloat", "complex128": "ComplexDouble"}


def _size(shape: Any) -> str:
    return f"torch.Size({list(shape)})"


def _version(arr: np.ndarray, made_by: str | None, version: int, expected: int) -> str:
    kind = _TORCH_TYPES.get(arr.dtype.name, arr.dtype.name)
    by = "" if made_by is None else f", which is output 0 of {made_by}"
    return ("one of the variables needed for gradient computation has been modified by an "
            f"inplace operation: [torch.{kind}Tensor {list(arr.shape)}]{by}, is at version "
            f"{version}; expected version {expected} instead. Hint: enable anomaly detection to "
            "find the operation that failed to compute its gradient, with "
            "torch.autograd.set_detect_anomaly(True, check_nan=False).")


MESSAGES: dict[str, Callable[..., str]] = {
    "version": _version,
    "no_grad_fn": lambda i: f"element {i} of tensors does not require grad and does not have "
                            "a grad_fn",
    "implicit_scalar": lambda: "grad can be implicitly created only for scalar outputs",
    "implicit_complex": lambda dtype: "grad can be implicitly created only for real scalar "
                                      f"outputs but got torch.{dtype}",
    "shape_mismatch": lambda i, grad_shape, out_shape: (
        f"Mismatch in shape: grad_output[{i}] has a shape of {_size(grad_shape)} and "
        f"output[{i}] has a shape of {_size(out_shape)}."),
    "input_no_grad": lambda: "One of the differentiated Tensors does not require grad",
    "unused": lambda: "One of the differentiated Tensors appears to not have been used in the "
                      "graph. Set allow_unused=True if this is the desired behavior.",
    "empty_inputs": lambda: "'inputs' argument to backward() cannot be empty.",
    "expanded_grad": lambda: "unsupported operation: more than one element of the written-to "
                             "tensor refers to a single memory location. Please clone() the "
                             "tensor before performing the operation.",
    "anomaly": lambda name, kind, k: f"Function '{name}' returned {kind} values in its {k}th "
                                     "output.",
    "anomaly_trace": lambda name, trace: f"Error detected in {name}. Traceback of forward call "
                                         f"that caused the error:\n{trace}",
}
