"""``torch.nn`` modules: ``Module``, ``Linear``, ``Sequential``, activations and losses.

>>> import tapegrad.torch as torch
>>> _ = torch.manual_seed(0)
>>> model = torch.nn.Sequential(torch.nn.Linear(2, 3), torch.nn.ReLU())
>>> model
Sequential(
  (0): Linear(in_features=2, out_features=3, bias=True)
  (1): ReLU()
)
>>> [name for name, _ in model.named_parameters()]
['0.weight', '0.bias']
"""

from __future__ import annotations

import math
import warnings
from collections import OrderedDict, namedtuple
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

import numpy as np

from ..._core import mode
from ..._core.errors import hinted, with_hint
from ..._core.tensor import TORCH, Tensor, make
from .._dtype import Size, to_np
from .._tensor import check_device
from . import functional as F
from . import init
from .parameter import Buffer, Parameter, is_lazy

_IncompatibleKeys = namedtuple("_IncompatibleKeys", ["missing_keys", "unexpected_keys"])


class IncompatibleKeys(_IncompatibleKeys):
    def __repr__(self) -> str:
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()

    __str__ = __repr__


def _addindent(s: str, n: int) -> str:
    lines = s.split("\n")
    if len(lines) == 1:
        return s
    first = lines.pop(0)
    return first + "\n" + "\n".join(" " * n + line for line in lines)


class Module:
    """Base class of all modules: registers parameters, buffers and submodules on assignment.

    Subclasses define ``forward``; calling the module runs it (with any
    registered forward hooks).
    """

    training: bool
    _parameters: dict[str, Parameter | None]
    _buffers: dict[str, Tensor | None]
    _modules: dict[str, Module | None]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if args or kwargs:
            raise TypeError(f"{type(self).__name__}.__init__() takes 1 positional argument but "
                            f"{len(args) + 1} were given")
        object.__setattr__(self, "training", True)
        object.__setattr__(self, "_parameters", OrderedDict())
        object.__setattr__(self, "_buffers", OrderedDict())
        object.__setattr__(self, "_non_persistent", set())
        object.__setattr__(self, "_modules", OrderedDict())
        object.__setattr__(self, "_forward_hooks", OrderedDict())
        object.__setattr__(self, "_forward_pre_hooks", OrderedDict())

    # -- attribute registration --------------------------------------------------------
    def __setattr__(self, name: str, value: Any) -> None:
        params = self.__dict__.get("_parameters")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            self.__dict__.pop(name, None)
            self._modules.pop(name, None)
            self._buffers.pop(name, None)
            params[name] = value
        elif params is not None and name in params:
            if value is not None:
                raise TypeError(f"cannot assign '{type(value).__name__}' as parameter '{name}' "
                                "(torch.nn.Parameter or None expected)")
            params[name] = None
        elif isinstance(value, Module):
            mods = self.__dict__.get("_modules")
            if mods is None:
                raise AttributeError("cannot assign module before Module.__init__() call")
            self.__dict__.pop(name, None)
            self._parameters.pop(name, None)
            self._buffers.pop(name, None)
            mods[name] = value
        elif self.__dict__.get("_modules") is not None and name in self._modules:
            if value is not None:
                raise TypeError(f"cannot assign '{type(value).__name__}' as child module "
                                f"'{name}' (torch.nn.Module or None expected)")
            self._modules[name] = None
        elif self.__dict__.get("_buffers") is not None and (
                name in self._buffers or isinstance(value, Buffer)):
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(f"cannot assign '{type(value).__name__}' as buffer '{name}' "
                                "(torch.Tensor or None expected)")
            self._buffers[name] = value
        else:
            object.__setattr__(self, name, value)

    def __getattr__(self, name: str) -> Any:
        d = self.__dict__
        for store in ("_parameters", "_buffers", "_modules"):
            s = d.get(store)
            if s is not None and name in s:
                return s[name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __delattr__(self, name: str) -> None:
        for store in (self._parameters, self._buffers, self._modules):
            if name in store:
                del store[name]
                return
        object.__delattr__(self, name)

    def register_parameter(self, name: str, param: Parameter | None) -> None:
        if "_parameters" not in self.__dict__:
            raise AttributeError("cannot assign parameter before Module.__init__() call")
        if param is not None and not isinstance(param, Parameter):
            raise TypeError(f"cannot assign '{type(param).__name__}' object to parameter "
                            f"'{name}' (torch.nn.Parameter or None required)")
        self._parameters[name] = param

    def register_buffer(self, name: str, tensor: Tensor | None, persistent: bool = True) -> None:
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"cannot assign '{type(tensor).__name__}' object to buffer '{name}' "
                            "(torch Tensor or None required)")
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent.discard(name)
        else:
            self._non_persistent.add(name)

    def add_module(self, name: str, module: Module | None) -> None:
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"{type(module).__name__} is not a Module subclass")
        self._modules[name] = module

    register_module = add_module

    def get_submodule(self, target: str) -> Module:
        mod: Module = self
        for item in target.split(".") if target else []:
            mod = getattr(mod, item)
        return mod

    def get_parameter(self, target: str) -> Parameter:
        mod_path, _, name = target.rpartition(".")
        return getattr(self.get_submodule(mod_path), name)

    # -- calling -------------------------------------------------------------------------
    def forward(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(
            f'Module [{type(self).__name__}] is missing the required "forward" function')

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        for hook in tuple(self._forward_pre_hooks.values()):
            r = hook(self, args)
            if r is not None:
                args = r if isinstance(r, tuple) else (r,)
        out = self.forward(*args, **kwargs)
        for hook in tuple(self._forward_hooks.values()):
            r = hook(self, args, out)
            if r is not None:
                out = r
        return out

    def register_forward_hook(self, hook: Callable[..., Any]) -> _Handle:
        return _Handle(self._forward_hooks, hook)

    def register_forward_pre_hook(self, hook: Callable[..., Any]) -> _Handle:
        return _Handle(self._forward_pre_hooks, hook)

    # -- traversal -----------------------------------------------------------------------
    def named_modules(self, memo: set[int] | None = None, prefix: str = "",
                      remove_duplicate: bool = True) -> Iterator[tuple[str, Module]]:
        if memo is None:
            memo = set()
        if id(self) in memo and remove_duplicate:
            return
        memo.add(id(self))
        yield prefix, self
        for name, m in self._modules.items():
            if m is None:
                continue
            yield from m.named_modules(memo, prefix + ("." if prefix else "") + name,
                                       remove_duplicate)

    def modules(self) -> Iterator[Module]:
        for _, m in self.named_modules():
            yield m

    def named_children(self) -> Iterator[tuple[str, Module]]:
        seen: set[int] = set()
        for name, m in self._modules.items():
            if m is not None and id(m) not in seen:
                seen.add(id(m))
                yield name, m

    def children(self) -> Iterator[Module]:
        for _, m in self.named_children():
            yield m

    def _named_members(self, get: Callable[[Module], Iterable[tuple[str, Any]]], prefix: str,
                       recurse: bool, remove_duplicate: bool = True) -> Iterator[tuple[str, Any]]:
        seen: set[int] = set()
        mods = self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate) \
            if recurse else [(prefix, self)]
        for mp, m in mods:
            for k, v in get(m):
                if v is None or (remove_duplicate and id(v) in seen):
                    continue
                if remove_duplicate:
                    seen.add(id(v))
                yield mp + ("." if mp else "") + k, v

    def named_parameters(self, prefix: str = "", recurse: bool = True,
                         remove_duplicate: bool = True) -> Iterator[tuple[str, Parameter]]:
        """(name, parameter) pairs, e.g. ``('0.weight', Parameter)``."""
        return self._named_members(lambda m: m._parameters.items(), prefix, recurse,
                                   remove_duplicate)

    def parameters(self, recurse: bool = True) -> Iterator[Parameter]:
        for _, p in self.named_parameters(recurse=recurse):
            yield p

    def named_buffers(self, prefix: str = "", recurse: bool = True,
                      remove_duplicate: bool = True) -> Iterator[tuple[str, Tensor]]:
        return self._named_members(lambda m: m._buffers.items(), prefix, recurse,
                                   remove_duplicate)

    def buffers(self, recurse: bool = True) -> Iterator[Tensor]:
        for _, b in self.named_buffers(recurse=recurse):
            yield b

    # -- modes and gradients -------------------------------------------------------------
    def train(self, mode: bool = True) -> Module:
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        self.training = mode
        for m in self.children():
            m.train(mode)
        return self

    def eval(self) -> Module:
        return self.train(False)

    def requires_grad_(self, requires_grad: bool = True) -> Module:
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset the ``.grad`` of every parameter (to None by default)."""
        for p in self.parameters():
            if p._grad is not None:
                if set_to_none:
                    p._grad = None
                else:
                    g = p._grad
                    if g._node is not None:
                        p._grad = g.detach()
                        g = p._grad
                    g._data[...] = 0
                    g._vc[0] += 1

    def apply(self, fn: Callable[[Module], Any]) -> Module:
        for m in self.children():
            m.apply(fn)
        fn(self)
        return self

    def _apply_to_tensors(self, fn: Callable[[np.ndarray], np.ndarray]) -> Module:
        with mode.no_grad():
            for m in self.modules():
                for p in m._parameters.values():
                    if p is not None:
                        new = fn(p._data)
                        if new is not p._data:
                            p._data = new
                            p._vc[0] += 1
                            if p._grad is not None:
                                p._grad = make(fn(p._grad._data), None, False, TORCH)
                for b in m._buffers.values():
                    if b is not None:
                        b._data = fn(b._data)
        return self

    def to(self, *args: Any, **kwargs: Any) -> Module:
        dt = kwargs.get("dtype")
        check_device(kwargs.get("device"))
        for a in args:
            if isinstance(a, Tensor):
                dt = a._data.dtype
            elif isinstance(a, str) or type(a).__name__ == "device":
                check_device(a)
            elif a is not None:
                dt = a
        if dt is None:
            return self
        nd = to_np(dt)
        return self._apply_to_tensors(lambda a: a.astype(nd) if a.dtype.kind in "fc"
                                      and a.dtype != nd else a)

    def float(self) -> Module:
        return self.to(np.float32)

    def double(self) -> Module:
        return self.to(np.float64)

    def half(self) -> Module:
        return self.to(np.float16)

    def cpu(self) -> Module:
        return self

    def cuda(self, device: Any = None) -> Module:
        raise hinted(AssertionError(with_hint("Torch not compiled with CUDA enabled",
                                       "tapegrad runs on the CPU; use .cpu() or .to('cpu')")))

    def type(self, dst_type: Any) -> Module:
        return self.to(dst_type)

    # -- state ---------------------------------------------------------------------------
    def state_dict(self, *args: Any, destination: Any = None, prefix: str = "",
                   keep_vars: bool = False) -> OrderedDict[str, Tensor]:
        """Parameters and persistent buffers by dotted name (detached, sharing storage)."""
        out: OrderedDict[str, Tensor] = OrderedDict() if destination is None else destination
        for mp, m in self.named_modules(prefix=prefix.rstrip(".")):
            pre = mp + "." if mp else ""
            for k, p in m._parameters.items():
                if p is not None:  # an uninitialized (lazy) parameter is itself, as in PyTorch
                    out[pre + k] = p if keep_vars or is_lazy(p) else p.detach()
            for k, b in m._buffers.items():
                if b is not None and k not in m._non_persistent:
                    out[pre + k] = b if keep_vars else b.detach()
        return out

    def load_state_dict(self, state_dict: Mapping[str, Any], strict: bool = True,
                        assign: bool = False) -> IncompatibleKeys:
        """Copy values from ``state_dict`` into the parameters and buffers (under no_grad).

        Every key, type and shape is checked first: on any error (PyTorch's wrapped
        ``Error(s) in loading state_dict`` message) no parameter has changed.
        """
        if not isinstance(state_dict, Mapping):
            raise hinted(TypeError(with_hint(f"Expected state_dict to be dict-like, got "
                                      f"{type(state_dict)}.",
                                      "pass model.state_dict() or torch.load(...) of one")))
        own: dict[str, tuple[Module, str, str]] = {}
        for mp, m in self.named_modules():
            pre = mp + "." if mp else ""
            for k, p in m._parameters.items():
                if p is not None:
                    own[pre + k] = (m, k, "p")
            for k, b in m._buffers.items():
                if b is not None and k not in m._non_persistent:
                    own[pre + k] = (m, k, "b")
        missing = [k for k in own if k not in state_dict]
        unexpected = [k for k in state_dict if k not in own]
        errs: list[str] = []
        for k, (m, name, kind) in own.items():
            if k not in state_dict:
                continue
            v = state_dict[k]
            if not isinstance(v, Tensor):
                errs.append(f'While copying the parameter named "{k}", expected torch.Tensor or '
                            f"Tensor-like object from checkpoint but received {type(v)}")
                continue
            v_arr = v._data
            cur = m._parameters[name] if kind == "p" else m._buffers[name]
            assert cur is not None
            if v_arr.shape != cur._data.shape and not is_lazy(cur):
                errs.append(f"size mismatch for {k}: copying a param with shape "
                            f"{Size(v_arr.shape)} from checkpoint, the shape in current model is "
                            f"{Size(cur._data.shape)}.")
                continue
        if strict:
            if unexpected:
                errs.insert(0, "Unexpected key(s) in state_dict: "
                            + ", ".join(f'"{k}"' for k in unexpected) + ". ")
            if missing:
                errs.insert(0, "Missing key(s) in state_dict: "
                            + ", ".join(f'"{k}"' for k in missing) + ". ")
        if errs:
            raise RuntimeError(
                f"Error(s) in loading state_dict for {type(self).__name__}:\n\t"
                + "\n\t".join(errs))
        for k, (m, name, kind) in own.items():
            if k not in state_dict:
                continue
            v_arr = state_dict[k]._data
            cur = m._parameters[name] if kind == "p" else m._buffers[name]
            assert cur is not None
            if is_lazy(cur):  # a lazy module's parameter takes the checkpoint's shape
                cur.materialize(v_arr.shape)  # type: ignore[attr-defined]
            if v_arr.dtype.kind == "c" and cur._data.dtype.kind != "c":
                warnings.warn("Casting complex values to real discards the imaginary part",
                              UserWarning, stacklevel=2)
                v_arr = v_arr.real
            if not cur._data.flags.writeable:
                cur._data = cur._data.copy()
            with np.errstate(all="ignore"):
                np.copyto(cur._data, v_arr, casting="unsafe")
            cur._vc[0] += 1
        return IncompatibleKeys(missing, unexpected)

    # -- printing ------------------------------------------------------------------------
    def extra_repr(self) -> str:
        return ""

    def _get_name(self) -> str:
        return type(self).__name__

    def __repr__(self) -> str:
        extra = self.extra_repr()
        lines = extra.split("\n") if extra else []
        child = []
        for name, m in self._modules.items():
            child.append("(" + name + "): " + _addindent(repr(m), 2))
        body = lines + child
        s = self._get_name() + "("
        if body:
            if len(lines) == 1 and not child:
                s += lines[0]
            else:
                s += "\n  " + "\n  ".join(body) + "\n"
        return s + ")"

    def __dir__(self) -> list[str]:
        return sorted(set(object.__dir__(self)) | set(self._parameters) | set(self._buffers)
                      | set(self._modules))

    def __getstate__(self) -> dict[str, Any]:
        return self.__dict__.copy()

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)


class _Handle:
    _next = 0

    def __init__(self, store: dict[int, Any], fn: Callable[..., Any]) -> None:
        _Handle._next += 1
        self.id = _Handle._next
        self._store = store
        store[self.id] = fn

    def remove(self) -> None:
        self._store.pop(self.id, None)


# ----------------------------------------------------------------------------- containers
class Sequential(Module):
    """Modules applied in order; indexable, iterable, ``len``-able."""

    def __init__(self, *args: Any) -> None:
        super().__init__()
        if len(args) == 1 and isinstance(args[0], OrderedDict):
            for k, m in args[0].items():
                self.add_module(k, m)
        else:
            for i, m in enumerate(args):
                self.add_module(str(i), m)

    def forward(self, input: Any) -> Any:
        for m in self._modules.values():
            input = m(input)  # type: ignore[misc]
        return input

    def __getitem__(self, idx: Any) -> Any:
        mods = list(self._modules.items())
        if isinstance(idx, slice):
            return Sequential(OrderedDict(mods[idx]))
        n = len(mods)
        if not -n <= idx < n:
            raise IndexError(f"index {idx} is out of range")
        return mods[idx % n][1]

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[Module]:
        return iter(m for m in self._modules.values() if m is not None)

    def append(self, module: Module) -> Sequential:
        self.add_module(str(len(self)), module)
        return self


class ModuleList(Module):
    def __init__(self, modules: Iterable[Module] | None = None) -> None:
        super().__init__()
        for m in modules or ():
            self.append(m)

    def append(self, module: Module) -> ModuleList:
        self.add_module(str(len(self._modules)), module)
        return self

    def extend(self, modules: Iterable[Module]) -> ModuleList:
        for m in modules:
            self.append(m)
        return self

    def __getitem__(self, idx: Any) -> Any:
        mods = list(self._modules.values())
        if isinstance(idx, slice):
            return ModuleList(mods[idx])  # type: ignore[arg-type]
        return mods[idx]

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[Module]:
        return iter(m for m in self._modules.values() if m is not None)


class ModuleDict(Module):
    def __init__(self, modules: Mapping[str, Module] | None = None) -> None:
        super().__init__()
        for k, m in (modules or {}).items():
            self.add_module(k, m)

    def __getitem__(self, key: str) -> Module:
        m = self._modules[key]
        assert m is not None
        return m

    def __setitem__(self, key: str, module: Module) -> None:
        self.add_module(key, module)

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[str]:
        return iter(self._modules)

    def keys(self) -> Any:
        return self._modules.keys()

    def items(self) -> Any:
        return self._modules.items()

    def values(self) -> Any:
        return self._modules.values()


class ParameterList(Module):
    def __init__(self, values: Iterable[Any] | None = None) -> None:
        super().__init__()
        for v in values or ():
            self.append(v)

    def append(self, value: Any) -> ParameterList:
        p = value if isinstance(value, Parameter) else Parameter(value)
        self.register_parameter(str(len(self._parameters)), p)
        return self

    def __getitem__(self, idx: int) -> Parameter:
        return list(self._parameters.values())[idx]  # type: ignore[return-value]

    def __len__(self) -> int:
        return len(self._parameters)

    def __iter__(self) -> Iterator[Parameter]:
        return iter(p for p in self._parameters.values() if p is not None)


# ----------------------------------------------------------------------------- layers
class Identity(Module):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__()

    def forward(self, input: Any) -> Any:
        return input


class Linear(Module):
    """``y = x W^T + b`` with PyTorch's default initialisation.

    ``weight`` (out, in) and ``bias`` (out) are drawn from U(-1/sqrt(in),
    1/sqrt(in)) (``kaiming_uniform_(a=sqrt(5))``), from the PyTorch-compatible
    generator: after the same ``torch.manual_seed`` they equal PyTorch's.
    """

    def __init__(self, in_features: int, out_features: int, bias: bool = True,
                 device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        check_device(device)
        dt = np.float32 if dtype is None else to_np(dtype)
        self.in_features = in_features
        self.out_features = out_features
        self.weight = Parameter(make(np.empty((out_features, in_features), dtype=dt), None,
                                     False, TORCH))
        if bias:
            self.bias = Parameter(make(np.empty(out_features, dtype=dt), None, False, TORCH))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input: Tensor) -> Tensor:
        return F.linear(input, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (f"in_features={self.in_features}, out_features={self.out_features}, "
                f"bias={self.bias is not None}")


class Bilinear(Module):
    def __init__(self, in1_features: int, in2_features: int, out_features: int,
                 bias: bool = True, device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        dt = np.float32 if dtype is None else to_np(dtype)
        self.in1_features, self.in2_features, self.out_features = (in1_features, in2_features,
                                                                   out_features)
        self.weight = Parameter(make(np.empty((out_features, in1_features, in2_features),
                                              dtype=dt), None, False, TORCH))
        self.bias = Parameter(make(np.empty(out_features, dtype=dt), None, False, TORCH)) \
            if bias else None
        if self.bias is None:
            self.register_parameter("bias", None)
        bound = 1 / math.sqrt(in1_features)
        init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input1: Tensor, input2: Tensor) -> Tensor:
        return F.bilinear(input1, input2, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
                f"out_features={self.out_features}, bias={self.bias is not None}")


class LayerNorm(Module):
    def __init__(self, normalized_shape: Any, eps: float = 1e-5, elementwise_affine: bool = True,
                 bias: bool = True, device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        shape = (normalized_shape,) if isinstance(normalized_shape, int) else \
            tuple(normalized_shape)
        dt = np.float32 if dtype is None else to_np(dtype)
        self.normalized_shape = shape
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        if elementwise_affine:
            self.weight = Parameter(make(np.ones(shape, dtype=dt), None, False, TORCH))
            if bias:
                self.bias = Parameter(make(np.zeros(shape, dtype=dt), None, False, TORCH))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)

    def forward(self, input: Tensor) -> Tensor:
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.normalized_shape}, eps={self.eps}, "
                f"elementwise_affine={self.elementwise_affine}, bias={self.bias is not None}")


class Flatten(Module):
    def __init__(self, start_dim: int = 1, end_dim: int = -1) -> None:
        super().__init__()
        self.start_dim, self.end_dim = start_dim, end_dim

    def forward(self, input: Tensor) -> Tensor:
        return input.flatten(self.start_dim, self.end_dim)

    def extra_repr(self) -> str:
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class Dropout(Module):
    def __init__(self, p: float = 0.5, inplace: bool = False) -> None:
        super().__init__()
        if p < 0 or p > 1:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p, self.inplace = p, inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.dropout(input, self.p, self.training, self.inplace)

    def extra_repr(self) -> str:
        return f"p={self.p}, inplace={self.inplace}"


# ----------------------------------------------------------------------------- activations
class ReLU(Module):
    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.relu(input, self.inplace)

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class ReLU6(ReLU):
    def forward(self, input: Tensor) -> Tensor:
        return F.relu6(input)


class Tanh(Module):
    def forward(self, input: Tensor) -> Tensor:
        return F.tanh(input)


class Sigmoid(Module):
    def forward(self, input: Tensor) -> Tensor:
        return F.sigmoid(input)


class SiLU(Module):
    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.silu(input)


class LeakyReLU(Module):
    def __init__(self, negative_slope: float = 1e-2, inplace: bool = False) -> None:
        super().__init__()
        self.negative_slope, self.inplace = negative_slope, inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.leaky_relu(input, self.negative_slope)

    def extra_repr(self) -> str:
        return f"negative_slope={self.negative_slope}" + (", inplace=True" if self.inplace
                                                           else "")


class ELU(Module):
    def __init__(self, alpha: float = 1.0, inplace: bool = False) -> None:
        super().__init__()
        self.alpha, self.inplace = alpha, inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.elu(input, self.alpha)

    def extra_repr(self) -> str:
        return f"alpha={self.alpha}" + (", inplace=True" if self.inplace else "")


class GELU(Module):
    def __init__(self, approximate: str = "none") -> None:
        super().__init__()
        self.approximate = approximate

    def forward(self, input: Tensor) -> Tensor:
        return F.gelu(input, approximate=self.approximate)

    def extra_repr(self) -> str:
        return f"approximate={self.approximate!r}"


class Softplus(Module):
    def __init__(self, beta: float = 1.0, threshold: float = 20.0) -> None:
        super().__init__()
        self.beta, self.threshold = beta, threshold

    def forward(self, input: Tensor) -> Tensor:
        return F.softplus(input, self.beta, self.threshold)

    def extra_repr(self) -> str:
        return f"beta={self.beta}, threshold={self.threshold}"


class Softmax(Module):
    def __init__(self, dim: int | None = None) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, input: Tensor) -> Tensor:
        return F.softmax(input, self.dim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class LogSoftmax(Softmax):
    def forward(self, input: Tensor) -> Tensor:
        return F.log_softmax(input, self.dim)


# ----------------------------------------------------------------------------- losses
class _Loss(Module):
    def __init__(self, size_average: Any = None, reduce: Any = None,
                 reduction: str = "mean") -> None:
        super().__init__()
        self.reduction = F._reduction(reduction, size_average, reduce)


class MSELoss(_Loss):
    """Mean squared error; ``reduction`` "mean" (default), "sum" or "none"."""

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.mse_loss(input, target, reduction=self.reduction)


class KLDivLoss(Module):
    """Kullback-Leibler divergence of log-probabilities ``input`` from ``target``
    (``reduction="batchmean"``: the sum divided by the batch size)."""

    def __init__(self, size_average: Any = None, reduce: Any = None, reduction: str = "mean",
                 log_target: bool = False) -> None:
        super().__init__()
        self.reduction = reduction if size_average is None and reduce is None else \
            F._reduction(reduction, size_average, reduce)
        self.log_target = log_target

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.kl_div(input, target, reduction=self.reduction, log_target=self.log_target)


class L1Loss(_Loss):
    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.l1_loss(input, target, reduction=self.reduction)


class SmoothL1Loss(_Loss):
    def __init__(self, size_average: Any = None, reduce: Any = None, reduction: str = "mean",
                 beta: float = 1.0) -> None:
        super().__init__(size_average, reduce, reduction)
        self.beta = beta

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.smooth_l1_loss(input, target, reduction=self.reduction, beta=self.beta)


class CrossEntropyLoss(_Loss):
    """Softmax cross-entropy of logits with class indices or class probabilities."""

    def __init__(self, weight: Tensor | None = None, size_average: Any = None,
                 ignore_index: int = -100, reduce: Any = None, reduction: str = "mean",
                 label_smoothing: float = 0.0) -> None:
        super().__init__(size_average, reduce, reduction)
        self.weight = weight
        self.ignore_index = ignore_index
        self.label_smoothing = label_smoothing

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.cross_entropy(input, target, weight=self.weight, ignore_index=self.ignore_index,
                               reduction=self.reduction, label_smoothing=self.label_smoothing)


class NLLLoss(_Loss):
    def __init__(self, weight: Tensor | None = None, size_average: Any = None,
                 ignore_index: int = -100, reduce: Any = None, reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction)
        self.weight = weight
        self.ignore_index = ignore_index

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.nll_loss(input, target, weight=self.weight, ignore_index=self.ignore_index,
                          reduction=self.reduction)


class BCELoss(_Loss):
    def __init__(self, weight: Tensor | None = None, size_average: Any = None,
                 reduce: Any = None, reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction)
        self.weight = weight

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.binary_cross_entropy(input, target, weight=self.weight,
                                      reduction=self.reduction)


class BCEWithLogitsLoss(_Loss):
    def __init__(self, weight: Tensor | None = None, size_average: Any = None,
                 reduce: Any = None, reduction: str = "mean",
                 pos_weight: Tensor | None = None) -> None:
        super().__init__(size_average, reduce, reduction)
        self.weight = weight
        self.pos_weight = pos_weight

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.binary_cross_entropy_with_logits(input, target, weight=self.weight,
                                                  reduction=self.reduction,
                                                  pos_weight=self.pos_weight)


__all__ = [
    "Module", "Sequential", "ModuleList", "ModuleDict", "ParameterList", "Identity", "Linear",
    "Bilinear", "LayerNorm", "Flatten", "Dropout", "ReLU", "ReLU6", "Tanh",
    "Sigmoid", "SiLU", "LeakyReLU", "ELU", "GELU", "Softplus", "Softmax", "LogSoftmax",
    "MSELoss", "L1Loss", "KLDivLoss", "SmoothL1Loss", "CrossEntropyLoss", "NLLLoss", "BCELoss",
    "BCEWithLogitsLoss",
]
