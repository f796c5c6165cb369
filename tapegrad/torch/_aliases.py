"""The NumPy-style keyword names PyTorch's argument parser accepts, on every native function.

PyTorch's C++ argument parser (``python_arg_parser.cpp``) lets every native
function and Tensor method take ``axis=`` for ``dim``, ``keepdims=`` for
``keepdim``, ``x=`` / ``a=`` / ``x1=`` for ``input`` and ``x2=`` for
``other``; giving both names is ``TypeError: sum() got an unexpected keyword
argument 'axis'``.  Functions PyTorch writes in Python (``torch.split``,
``torch.norm``, ``torch.einsum``, ``torch.nn.functional.*``, ``Tensor.split``,
...) do not take them, and neither do tapegrad's.

Sequence arguments that PyTorch's signatures name (``torch.zeros(size=(2,
3))``, ``x.view(size=...)``, ``x.permute(dims=...)``, ``x.transpose(dim0=0,
dim1=1)``) are accepted by keyword too.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any

from .._core.errors import hinted, with_hint
from .._core.tensor import Tensor

_ALIASES = {"axis": "dim", "keepdims": "keepdim", "x": "input", "a": "input", "x1": "input",
            "x2": "other"}

# PyTorch defines these in Python (no argument parser, so no NumPy aliases)
_PYTHON_LEVEL = frozenset({
    "broadcast_tensors", "compile", "einsum", "get_rng_state", "initial_seed", "is_tensor",
    "load", "manual_seed", "meshgrid", "norm", "save", "seed", "set_default_device",
    "set_default_dtype", "set_printoptions", "set_rng_state", "split", "unique",
    "use_deterministic_algorithms", "backward", "register_hook", "unflatten", "tensordot",
    "get_default_dtype", "get_printoptions", "printoptions", "set_num_threads",
    "get_num_threads", "is_grad_enabled", "is_inference", "is_inference_mode_enabled",
    "no_grad", "enable_grad", "set_grad_enabled", "inference_mode",
})

# a ``*args`` parameter that PyTorch's signature also takes by one keyword (the whole sequence)
_PACKED = {"zeros": "size", "ones": "size", "empty": "size", "rand": "size", "randn": "size",
           "view": "size", "reshape": "shape", "expand": "size", "permute": "dims",
           "repeat": "repeats", "flip": "dims", "tile": "dims"}

# ``*args`` taken one keyword per position
_SPREAD = {"transpose": ("dim0", "dim1"), "swapdims": ("dim0", "dim1"),
           "swapaxes": ("axis0", "axis1")}

# where ``dim`` / ``keepdim`` sit in an ``(input, dim, keepdim)`` signature hidden behind
# ``*args`` (``Tensor.std``, ``torch.max``): a positional one there conflicts with the alias
_GUESS = {"dim": 1, "keepdim": 2}

# functions whose second tensor PyTorch does not call ``other`` (so ``x2=`` is no alias)
_NOT_OTHER = frozenset({"dot", "vdot", "mm", "bmm", "mv", "outer", "ger", "pow", "float_power",
                        "addmm"})

# methods of the shared Tensor class that the PyTorch style uses under PyTorch's names
_CORE_METHODS = ("sum", "mean", "prod", "max", "min", "var", "std", "reshape", "transpose",
                 "flatten", "squeeze", "argmax", "argmin", "any", "all", "size", "exp", "log",
                 "sqrt", "tanh", "sigmoid", "relu", "abs")


def _typename(v: Any) -> str:
    return "Tensor" if isinstance(v, Tensor) else type(v).__name__


def accept_numpy_names(fn: Callable[..., Any], name: str, method: bool) -> Callable[..., Any]:
    """``fn`` taking PyTorch's NumPy-style keyword aliases (unchanged when none apply)."""
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return fn
    kinds = {p.kind for p in params.values()}
    varkw = inspect.Parameter.VAR_KEYWORD in kinds
    varpos = inspect.Parameter.VAR_POSITIONAL in kinds
    positional = [p for p, v in params.items()
                  if v.kind in (v.POSITIONAL_ONLY, v.POSITIONAL_OR_KEYWORD)]
    slot = {p: i for i, p in enumerate(positional)}
    renames = {alias: canon for alias, canon in _ALIASES.items()
               if alias not in params and (canon in params or varkw)}
    if method:
        renames = {a: c for a, c in renames.items() if c != "input"}
    if name in _NOT_OTHER:
        renames.pop("x2", None)
    # a core method that takes both spellings itself still refuses both at once
    both = {alias: canon for alias, canon in _ALIASES.items()
            if alias in params and canon in params}
    star = next((p for p, v in params.items() if v.kind == v.VAR_POSITIONAL), None)
    packed = _PACKED.get(name)
    if not varpos or (packed in params and packed != star):
        packed = None
    spread = _SPREAD.get(name) if varpos else None
    if not varpos and name in _SPREAD:
        # the function names its positions itself (``transpose(input, dim0, dim1)``)
        own = positional[1:3]
        if len(own) == 2:
            renames.update({a: o for a, o in zip(_SPREAD[name], own) if a not in params})
    if not (renames or packed or spread or both):
        return fn
    # positions before the ``*args`` parameter (``self``, ``input``)
    first = len(positional)

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if not kwargs:
            return fn(*args)
        for alias, canon in both.items():
            if alias in kwargs and canon in kwargs:
                raise TypeError(f"{name}() got an unexpected keyword argument '{alias}'")
        for alias in [k for k in kwargs if k in renames]:
            canon = renames[alias]
            if canon in kwargs or slot.get(canon, _GUESS.get(canon, len(args))
                                           if varpos else len(args)) < len(args):
                raise TypeError(f"{name}() got an unexpected keyword argument '{alias}'")
            kwargs[canon] = kwargs.pop(alias)
        if packed is not None and packed in kwargs:
            if len(args) > first:
                got = ", ".join([_typename(a) for a in args[first:]]
                                + [f"{k}={_typename(v)}" for k, v in kwargs.items()])
                raise hinted(TypeError(with_hint(
                    f"{name}() received an invalid combination of arguments - got ({got}), "
                    f"but expected one of:\n * (tuple of ints {packed}, ...)",
                    f"give {packed} either positionally or as {packed}=, not both")))
            args = (*args, kwargs.pop(packed))
        if spread is not None and any(k in kwargs for k in spread):
            args = (*args, *(kwargs.pop(k) for k in spread[len(args) - first:] if k in kwargs))
        return fn(*args, **kwargs)

    wrapper.__wrapped_numpy_names__ = True  # type: ignore[attr-defined]
    return wrapper


def install(namespace: dict[str, Any], method_names: Any) -> None:
    """Wrap the native-like functions of ``namespace`` and the PyTorch Tensor methods."""
    for name, obj in list(namespace.items()):
        if name.startswith("_") or name in _PYTHON_LEVEL or not inspect.isfunction(obj):
            continue
        if getattr(obj, "__wrapped_numpy_names__", False):
            continue
        namespace[name] = accept_numpy_names(obj, name, method=False)
    for name in (*method_names, *_CORE_METHODS):
        if name in _PYTHON_LEVEL or name.startswith("_"):
            continue
        obj = _own_or_core(name)
        if not inspect.isfunction(obj) or getattr(obj, "__wrapped_numpy_names__", False):
            continue
        setattr(_torch_class(), name, accept_numpy_names(obj, name, method=True))


def _torch_class() -> type:
    from ._tensor import TorchTensor

    return TorchTensor


def _own_or_core(name: str) -> Any:
    """The method ``name`` of the PyTorch-style class, or else of the core class."""
    cls = _torch_class()
    obj = cls.__dict__.get(name)
    return Tensor.__dict__.get(name) if obj is None else obj
