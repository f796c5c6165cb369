"""``torch.optim.Optimizer``: parameter groups, state, ``step``/``zero_grad``.

The update rules themselves live in :mod:`tapegrad.optim` (shared with the
Keras front-end); this class only keeps PyTorch's bookkeeping and messages.
"""

from __future__ import annotations

import functools
from collections import OrderedDict, defaultdict
from collections.abc import Callable, Iterable
from itertools import chain
from typing import Any

import numpy as np

from ..._core import mode
from ..._core.errors import hinted, with_hint
from ..._core.tensor import TORCH, Tensor, make
from ...autodiff import tracing as _tracing


def check_lr_tensor(lr: Any) -> None:
    """PyTorch's first check: a tensor learning rate must hold one value."""
    if isinstance(lr, Tensor) and lr._data.size != 1:
        raise hinted(ValueError(with_hint("Tensor lr must be 1-element",
                                   "pass a float or a one-element tensor")))


class _Required:
    def __repr__(self) -> str:
        return "<required parameter>"


required = _Required()


def _type_str(p: Any) -> str:
    if isinstance(p, Tensor):
        names = {"float32": "Float", "float64": "Double", "float16": "Half", "int64": "Long"}
        return f"torch.{names.get(p._data.dtype.name, 'Float')}Tensor"
    return type(p).__name__


class RemovableHandle:
    """Returned by the ``register_*_hook`` functions; ``remove()`` unregisters the hook."""

    _next_id = 0

    def __init__(self, hooks: dict[int, Any]) -> None:
        self.hooks_dict_ref = hooks
        self.id = RemovableHandle._next_id
        RemovableHandle._next_id += 1

    def remove(self) -> None:
        self.hooks_dict_ref.pop(self.id, None)

    def __enter__(self) -> RemovableHandle:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.remove()


_global_optimizer_pre_hooks: dict[int, Callable[..., Any]] = {}
_global_optimizer_post_hooks: dict[int, Callable[..., Any]] = {}


def register_optimizer_step_pre_hook(hook: Callable[..., Any]) -> RemovableHandle:
    """Call ``hook(optimizer, args, kwargs)`` before every optimizer's ``step``."""
    handle = RemovableHandle(_global_optimizer_pre_hooks)
    _global_optimizer_pre_hooks[handle.id] = hook
    return handle


def register_optimizer_step_post_hook(hook: Callable[..., Any]) -> RemovableHandle:
    """Call ``hook(optimizer, args, kwargs)`` after every optimizer's ``step``."""
    handle = RemovableHandle(_global_optimizer_post_hooks)
    _global_optimizer_post_hooks[handle.id] = hook
    return handle


def _with_step_hooks(func: Callable[..., Any]) -> Callable[..., Any]:
    """PyTorch's ``profile_hook_step``: run the pre-hooks (which may replace the
    arguments), ``step`` under ``record_function("Optimizer.step#<Name>.step")``, then the
    post-hooks."""
    if getattr(func, "_with_step_hooks", False):
        return func

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        from ..autograd.profiler import record_function

        self = args[0]  # hooks see (optimizer, *step_args), as in PyTorch
        with record_function(f"Optimizer.step#{type(self).__name__}.step"):
            for pre in chain(_global_optimizer_pre_hooks.values(),
                             self._hooks("_optimizer_step_pre_hooks").values()):
                result = pre(self, args, kwargs)
                if result is not None:
                    if isinstance(result, tuple) and len(result) == 2:
                        args, kwargs = result
                    else:
                        raise hinted(RuntimeError(with_hint(
                            f"{func} must return None or a tuple of (new_args, new_kwargs), "
                            f"but got {result}.", "return None to keep the arguments")))
            out = func(*args, **kwargs)
            for post in chain(self._hooks("_optimizer_step_post_hooks").values(),
                              _global_optimizer_post_hooks.values()):
                post(self, args, kwargs)
            return out

    wrapper._with_step_hooks = True  # type: ignore[attr-defined]
    return wrapper


class Optimizer:
    """Base class: ``param_groups`` (list of dicts with ``params`` and hyper-parameters) and
    per-parameter ``state``."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "step" in cls.__dict__:
            cls.step = _with_step_hooks(cls.__dict__["step"])  # type: ignore[method-assign]

    def _hooks(self, name: str) -> dict[int, Callable[..., Any]]:
        hooks = self.__dict__.get(name)
        if hooks is None:
            hooks = self.__dict__[name] = OrderedDict()
        return hooks

    def register_step_pre_hook(self, hook: Callable[..., Any]) -> RemovableHandle:
        """Call ``hook(optimizer, args, kwargs)`` before each ``step``; it may return
        ``(new_args, new_kwargs)``."""
        hooks = self._hooks("_optimizer_step_pre_hooks")
        handle = RemovableHandle(hooks)
        hooks[handle.id] = hook
        return handle

    def register_step_post_hook(self, hook: Callable[..., Any]) -> RemovableHandle:
        """Call ``hook(optimizer, args, kwargs)`` after each ``step``."""
        hooks = self._hooks("_optimizer_step_post_hooks")
        handle = RemovableHandle(hooks)
        hooks[handle.id] = hook
        return handle

    def __init__(self, params: Any, defaults: dict[str, Any]) -> None:
        self.defaults = defaults
        self.state: defaultdict[Tensor, dict[str, Any]] = defaultdict(dict)
        self.param_groups: list[dict[str, Any]] = []
        if isinstance(params, Tensor):
            raise hinted(TypeError(with_hint(
                "params argument given to the optimizer should be an iterable of Tensors or "
                f"dicts, but got {_type_str(params)}",
                "pass model.parameters() or a list of tensors")))
        groups = list(params)
        if not groups:
            raise hinted(ValueError(with_hint("optimizer got an empty parameter list",
                                       "did the model register its parameters (nn.Parameter)?")))
        if not isinstance(groups[0], dict):
            groups = [{"params": groups}]
        for g in groups:
            self.add_param_group(g)

    def add_param_group(self, param_group: dict[str, Any]) -> None:
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group).__name__}")
        params = param_group["params"]
        if isinstance(params, Tensor):
            params = [params]
        elif isinstance(params, set):
            raise TypeError("optimizer parameters need to be organized in ordered collections, "
                            "but the ordering of tensors in sets will change between runs. "
                            "Please use a list instead.")
        else:
            params = list(params)
        if params and isinstance(params[0], tuple):
            params = [p for _, p in params]
        for p in params:
            if not isinstance(p, Tensor):
                raise hinted(TypeError(with_hint("optimizer can only optimize Tensors, but one of the "
                                          f"params is {type(p).__name__}", "pass tensors")))
            if p._node is not None:
                raise hinted(ValueError(with_hint("can't optimize a non-leaf Tensor",
                                           "optimize the leaf tensors (parameters) themselves")))
        if len({id(p) for p in params}) != len(params):
            import warnings

            warnings.warn("optimizer contains a parameter group with duplicate parameters; in "
                          "future, this will cause an error; see "
                          "github.com/pytorch/pytorch/issues/40967 for more information",
                          stacklevel=4)
        group = dict(param_group)
        group["params"] = params
        check_lr_tensor(group.get("lr", self.defaults.get("lr")))
        for k, v in self.defaults.items():
            if v is required and k not in group:
                raise ValueError(f"parameter group didn't specify a value of required "
                                 f"optimization parameter {k}")
            group.setdefault(k, v)
        seen = {id(p) for g in self.param_groups for p in g["params"]}
        if any(id(p) in seen for p in params):
            raise hinted(ValueError(with_hint("some parameters appear in more than one parameter group",
                                       "list each parameter in one group only")))
        self._check_group(group)
        self.param_groups.append(group)

    def _check_group(self, group: dict[str, Any]) -> None:
        """Validate a group's hyper-parameters (subclasses)."""

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset the gradients of all parameters (to ``None`` by default)."""
        lv = _tracing.current()
        if lv is not None:  # inside torch.compile: part of the program, run on every replay
            lv.effect(lambda: self._zero_grad(set_to_none), (), "optimizer.zero_grad", True)
            return
        self._zero_grad(set_to_none)

    def _zero_grad(self, set_to_none: bool) -> None:
        for g in self.param_groups:
            for p in g["params"]:
                if p._grad is None:
                    continue
                if set_to_none:
                    p._grad = None
                else:
                    gr = p._grad
                    if gr._node is not None:
                        gr = gr.detach()
                        p._grad = gr
                    gr._data[...] = 0
                    gr._vc[0] += 1

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Update every parameter that has a gradient; returns ``closure()`` if given."""
        loss = None
        if closure is not None:
            lv = _tracing.current()
            if lv is not None:  # the closure's control flow reads values: not one program
                lv.breaks.append(("optimizer.step(closure)", type(self).__name__))
            with mode.enable_grad():
                loss = closure()
        else:
            lv = _tracing.current()
            if lv is not None:  # inside torch.compile: the fused update is one effect
                lv.effect(lambda: self._step(), (), f"{type(self).__name__}.step", True)
                return None
        self._step()
        return loss

    def _step(self) -> None:
        with mode.no_grad():
            for group in self.param_groups:
                if isinstance(group.get("lr"), Tensor):
                    # a tensor learning rate (PyTorch allows one): its value, for the rules
                    group = {**group, "lr": float(group["lr"]._data)}
                for p in group["params"]:
                    if p._grad is None:
                        continue
                    g = p._grad._data
                    if p._data.dtype != g.dtype:
                        g = g.astype(p._data.dtype)
                    if not p._data.flags.writeable:
                        p._data = p._data.copy()
                    self._update(p._data, g, self.state[p], group)
                    p._vc[0] += 1

    def _update(self, param: np.ndarray, grad: np.ndarray, state: dict[str, Any],
                group: dict[str, Any]) -> None:
        raise NotImplementedError

    # -- state dicts -----------------------------------------------------------------------
    def state_dict(self) -> dict[str, Any]:
        index: dict[int, int] = {}
        groups = []
        for g in self.param_groups:
            ids = []
            for p in g["params"]:
                index.setdefault(id(p), len(index))
                ids.append(index[id(p)])
            d = {k: v for k, v in g.items() if k != "params"}
            d["params"] = ids
            groups.append(d)
        state = {}
        for p, st in self.state.items():
            if id(p) in index:
                state[index[id(p)]] = {k: _to_tensor(v, k) for k, v in st.items()}
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Load hyper-parameters and per-parameter state saved by :meth:`state_dict`.

        Everything is checked and converted before anything is changed, so a bad
        state dict raises and leaves the optimizer as it was.
        """
        if not isinstance(state_dict, dict) or "param_groups" not in state_dict \
                or "state" not in state_dict:
            missing = "param_groups" if not isinstance(state_dict, dict) or \
                "param_groups" not in state_dict else "state"
            raise KeyError(missing)
        groups = state_dict["param_groups"]
        if len(groups) != len(self.param_groups):
            raise hinted(ValueError(with_hint(
                "loaded state dict has a different number of parameter groups",
                f"the optimizer has {len(self.param_groups)}, the state dict {len(groups)}")))
        for g, sg in zip(self.param_groups, groups):
            if len(g["params"]) != len(sg["params"]):
                raise hinted(ValueError(with_hint(
                    "loaded state dict contains a parameter group that doesn't match the size "
                    "of optimizer's group",
                    f"group sizes {len(g['params'])} (optimizer) and {len(sg['params'])} "
                    "(state dict)")))
        id_map: dict[Any, Tensor] = {}
        for g, sg in zip(self.param_groups, groups):
            for old_id, p in zip(sg["params"], g["params"]):
                id_map[old_id] = p
        new_state: defaultdict[Tensor, dict[str, Any]] = defaultdict(dict)
        for k, st in state_dict["state"].items():
            if k not in id_map:  # PyTorch keeps such entries unused; say so and drop them
                import warnings

                warnings.warn(f"loaded optimizer state has an entry for parameter id {k!r}, "
                              "which no parameter group lists; it is ignored",
                              UserWarning, stacklevel=2)
                continue
            p = id_map[k]
            entry = {name: _from_tensor(v, name, p._data.dtype) for name, v in st.items()}
            for name, val in entry.items():
                if name in _PARAM_SHAPED and isinstance(val, np.ndarray) and \
                        val.shape != p._data.shape:
                    raise hinted(ValueError(with_hint(
                        f"loaded state dict has state '{name}' of shape {tuple(val.shape)} "
                        f"for a parameter of shape {tuple(p._data.shape)}",
                        "the state dict belongs to a different model; nothing was loaded")))
            new_state[p] = entry
        new_groups = []
        for g, sg in zip(self.param_groups, groups):
            ng = {k: v for k, v in sg.items() if k != "params"}
            ng["params"] = g["params"]
            new_groups.append(ng)
        self.param_groups[:] = new_groups
        self.state = new_state

    def __repr__(self) -> str:
        s = type(self).__name__ + " ("
        for i, g in enumerate(self.param_groups):
            s += "\n" + f"Parameter Group {i}"
            for k in sorted(g):
                if k != "params":
                    s += "\n" + f"    {k}: {g[k]}"
        return s + "\n)"

    def __getstate__(self) -> dict[str, Any]:
        return {"defaults": self.defaults, "state": self.state,
                "param_groups": self.param_groups}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)


Optimizer.step = _with_step_hooks(Optimizer.step)  # type: ignore[method-assign]

def _to_tensor(v: Any, name: str = "") -> Any:
    """A state entry as PyTorch keeps it: arrays and float scalars as tensors, ``step`` as
    a float32 tensor, other Python numbers as they are, lists element by element."""
    if isinstance(v, np.ndarray):
        return make(v.copy(), None, False, TORCH)
    if isinstance(v, np.generic) and v.dtype.kind in "fc":
        return make(np.asarray(v).copy(), None, False, TORCH)
    if name == "step" and isinstance(v, int) and not isinstance(v, bool):
        return make(np.asarray(float(v), dtype=np.float32), None, False, TORCH)
    if isinstance(v, list):
        return [_to_tensor(x) for x in v]
    return v


# per-parameter state buffers that have their parameter's shape (checked on load)
_PARAM_SHAPED = frozenset({"momentum_buffer", "exp_avg", "exp_avg_sq", "max_exp_avg_sq",
                           "square_avg", "grad_avg", "acc_delta", "sum", "exp_inf", "ax",
                           "prev", "step_size"})


def _from_tensor(v: Any, name: str = "", dtype: Any = None) -> Any:
    """A saved state entry back in the optimizer's own form (``step`` an int, float
    buffers in the parameter's dtype, as PyTorch casts them on load)."""
    if isinstance(v, Tensor):
        a = v._data
        if name == "step" or a.dtype.kind in "iub":
            return int(a.item()) if a.ndim == 0 else a.copy()
        if a.ndim == 0:
            return a.dtype.type(a.item())
        if dtype is not None and a.dtype.kind == "f" and np.dtype(dtype).kind == "f":
            return a.astype(dtype, copy=True)
        return a.copy()
    if isinstance(v, np.ndarray):
        return v.copy()
    if isinstance(v, list):
        return [_from_tensor(x, "", dtype) for x in v]
    return v


def _params_list(params: Iterable[Any]) -> Any:
    return params
