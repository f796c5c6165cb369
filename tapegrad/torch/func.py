"""``torch.func``: composable function transforms (functorch), PyTorch style.

The transforms are the core's (:mod:`tapegrad.func`): ``grad``, ``vjp``,
``jvp``, ``jacrev``, ``jacfwd``, ``hessian`` and ``vmap`` nest in any order
(``vmap(grad(f))`` for per-sample gradients, ``jacfwd(jacrev(f))`` for
Hessians).  ``functional_call`` runs a module with other parameters and
``stack_module_state`` stacks the parameters of an ensemble for ``vmap``.

>>> import tapegrad.torch as torch
>>> from tapegrad.torch.func import grad, vmap
>>> x = torch.tensor([1.0, 2.0, 3.0])
>>> grad(lambda v: (v ** 2).sum())(x)
tensor([2., 4., 6.])
>>> vmap(torch.dot)(torch.ones(2, 3), torch.ones(2, 3))
tensor([3., 3.])
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from .. import ops as _core_ops
from .._core.errors import hinted, with_hint
from .._core.tensor import Tensor, set_style
from ..autodiff.functional import (
    grad,
    grad_and_value,
    hessian,
    jacfwd,
    jacrev,
    jvp,
    linearize,
    vjp,
)
from ..autodiff.functional import vmap as _vmap


def vmap(func: Callable[..., Any], in_dims: Any = 0, out_dims: Any = 0,
         randomness: str = "error", *, chunk_size: int | None = None) -> Callable[..., Any]:
    """``func`` vectorized over dimension ``in_dims`` of its inputs (PyTorch's ``vmap``)."""
    if chunk_size is not None and chunk_size <= 0:
        raise hinted(ValueError(with_hint(
            f"vmap: chunk_size should be None or greater than 0. (got {chunk_size})",
            "pass a positive number of examples per chunk")))
    if chunk_size is not None and not isinstance(chunk_size, int):
        # PyTorch fails on it when splitting the batch, with Python's own message
        raise hinted(TypeError(with_hint(
            f"can't multiply sequence by non-int of type '{type(chunk_size).__name__}'",
            "chunk_size is an int")))
    return _vmap(func, in_dims, out_dims, randomness, chunk_size=chunk_size)


def _named_tensors(module: Any) -> Iterator[tuple[Any, str, str]]:
    """(owning module, store name, full name) for every parameter and buffer."""
    for prefix, m in module.named_modules():
        for store in ("_parameters", "_buffers"):
            for name in list(getattr(m, store).keys()):
                yield m, store, f"{prefix}.{name}" if prefix else name


@contextmanager
def _swapped(module: Any, values: dict[str, Any], strict: bool,
             tie_weights: bool = True) -> Iterator[None]:
    where: dict[str, tuple[Any, str, str]] = {}
    for m, store, full in _named_tensors(module):
        where.setdefault(full, (m, store, full.rsplit(".", 1)[-1]))
    if tie_weights:
        # PyTorch's _untie_named_tensors_map: a value given for one name of a tensor that
        # several names share (tied weights) goes to all of them
        groups: dict[int, list[str]] = {}
        for full, (m, store, local) in where.items():
            t = getattr(m, store)[local]
            if t is not None:
                groups.setdefault(id(t), []).append(full)
        values = dict(values)
        for names in groups.values():
            if len(names) < 2:
                continue
            given = [n for n in names if n in values]
            if not given:
                continue
            first = values[given[0]]
            if any(values[n] is not first for n in given[1:]):
                raise hinted(ValueError(with_hint(
                    f"functional_call got multiple values for keys {sorted(given)}, which are "
                    "tied. Consider using tie_weights=False",
                    "give the tied tensor once, or pass tie_weights=False")))
            for n in names:
                values[n] = first
    if strict:  # PyTorch's NamedMemberAccessor.check_keys: both lists sorted
        unexpected = sorted(k for k in values if k not in where)
        missing = sorted(k for k in where if k not in values)
        msgs = []
        if unexpected:
            msgs.append(f"Unexpected key(s): {', '.join(map(repr, unexpected))}.")
        if missing:
            msgs.append(f"Missing key(s): {', '.join(map(repr, missing))}.")
        if msgs:
            raise hinted(RuntimeError(with_hint(
                f"Error(s) in reparametrizing for {type(module).__name__}:\n\t"
                + "\n\t".join(msgs),
                "strict=True needs exactly the names of named_parameters() / named_buffers()")))
    old: list[tuple[dict[str, Any], str, Any]] = []
    try:
        for k, v in values.items():
            if k not in where:  # not strict: a name the module does not have is ignored
                continue
            m, store, local = where[k]
            d = getattr(m, store)
            old.append((d, local, d[local]))
            d[local] = v
        yield
    finally:
        for d, local, v in reversed(old):
            d[local] = v


def functional_call(module: Any, parameter_and_buffer_dicts: Any, args: Any = None,
                    kwargs: dict[str, Any] | None = None, *, tie_weights: bool = True,
                    strict: bool = False) -> Any:
    """Call ``module`` with its parameters and buffers replaced by the given tensors.

    ``parameter_and_buffer_dicts`` maps full names (``"0.weight"``) to tensors;
    a sequence of dicts is merged (a name in two of them is an error, as in PyTorch).
    """
    if isinstance(parameter_and_buffer_dicts, dict):
        values = dict(parameter_and_buffer_dicts)
    elif isinstance(parameter_and_buffer_dicts, Sequence):
        if not all(isinstance(d, dict) for d in parameter_and_buffer_dicts):
            raise hinted(ValueError(with_hint(
                "Expected all elements of parameter_and_buffer_dicts to be dictionaries",
                "pass dicts of name -> tensor")))
        counts: dict[str, int] = {}
        for d in parameter_and_buffer_dicts:
            for k in d:
                counts[k] = counts.get(k, 0) + 1
        repeated = [k for k, n in counts.items() if n > 1]
        if repeated:
            raise hinted(ValueError(with_hint(
                f"{repeated} appeared in multiple dictionaries; behavior of functional call is "
                "ambiguous", "give each name once")))
        values = {k: v for d in parameter_and_buffer_dicts for k, v in d.items()}
    else:
        raise hinted(ValueError(with_hint(
            f"Expected parameter_and_buffer_dicts to be a dict, or a list/tuple of dicts, but "
            f"got {type(parameter_and_buffer_dicts)}", "pass dict(model.named_parameters())")))
    if args is None:
        args = ()
    elif not isinstance(args, tuple):
        args = (args,)
    with _swapped(module, values, strict, tie_weights):
        return module(*args, **(kwargs or {}))


def stack_module_state(models: Sequence[Any]) -> tuple[dict[str, Tensor], dict[str, Tensor]]:
    """``(params, buffers)``: each name's tensors of all ``models`` stacked on a new axis 0.

    The stacked parameters are new leaves that require grad (as PyTorch's).
    """
    models = list(models)
    if not models:
        raise hinted(RuntimeError(with_hint("stack_module_state: Expected at least one model, got 0.",
                                     "pass a list of modules")))
    if not (all(m.training for m in models) or all(not m.training for m in models)):
        raise hinted(RuntimeError(with_hint(
            "stack_module_state: Expected all models to have the same training/eval mode.",
            "call .train() or .eval() on all of them")))
    first = type(models[0])
    if not all(type(m) is first for m in models):
        raise hinted(RuntimeError(with_hint(
            "stack_module_state: Expected all models to be of the same class.",
            "ensembles stack models of one class")))

    def stack(named: list[dict[str, Tensor]], grad: bool) -> dict[str, Tensor]:
        out = {}
        for k in named[0]:
            s = _core_ops.stack([n[k].detach() for n in named], axis=0)
            set_style(s, named[0][k]._style)
            if grad and named[0][k].requires_grad:
                s.requires_grad_(True)
            out[k] = s
        return out

    params = stack([dict(m.named_parameters()) for m in models], True)
    buffers = stack([dict(m.named_buffers()) for m in models], False)
    return params, buffers


def replace_all_batch_norm_modules_(root: Any) -> Any:
    """Stop batch-norm modules from tracking running statistics (so they ``vmap``)."""
    for m in root.modules():
        if hasattr(m, "track_running_stats"):
            m.running_mean = None
            m.running_var = None
            m.num_batches_tracked = None
            m.track_running_stats = False
    return root


__all__ = [
    "grad", "grad_and_value", "vjp", "jvp", "linearize", "jacrev", "jacfwd", "hessian", "vmap",
    "functional_call", "stack_module_state", "replace_all_batch_norm_modules_",
]
