"""``torch.compile`` with PyTorch's promise: the result is always the eager result.

The first call of each *guard set* traces the function with the core's
tracing interpreter (:mod:`tapegrad.autodiff.tracing`) while it runs for
real, so that call is eager by construction.  Later calls with the same
guards replay the recorded program.  The guards: each tensor argument's
shape, dtype, ``requires_grad`` and style, Python arguments by value, grad
mode, for a compiled ``nn.Module`` the identity of its parameters and buffers
and its ``training`` flag, and the globals and closure variables the function
(and the user functions it names) reads: numbers and strings by value,
tensors by identity (dynamo's guards); the program itself guards the version of
every tensor it captured as a constant and the presence of every ``.grad`` it
read.  A failed guard retraces (``torch._dynamo`` recompiles).

A *graph break* (reading a value: ``.item()``, ``bool()`` / data-dependent
``if``, ``.tolist()``, ``.numpy()``, ``print(tensor)``; ``optimizer.step(closure)``)
makes that guard set run eagerly from then on (the whole call, not only the
part after the break).  With ``fullgraph=True`` a data-dependent branch or a
print raises PyTorch's ``torch._dynamo.exc.Unsupported`` instead.
``backward()`` and optimizer steps inside the function are part of the
program.  ``mode``, ``backend``, ``dynamic`` and ``options`` are accepted;
shapes are always specialized (``dynamic=True`` does not generalize them).
"""

from __future__ import annotations

import contextlib
import weakref
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from .._core.errors import hinted, with_hint
from .._core.mode import STATE as _STATE
from .._core.tensor import Tensor, set_style
from ..autodiff import tracing
from .nn.modules import Module as _Module

__all__ = ["compile", "reset", "Unsupported", "OptimizedModule", "explain"]


class Unsupported(RuntimeError):
    """``torch._dynamo.exc.Unsupported``: ``fullgraph=True`` met a graph break."""


_BRANCH = (
    "Data-dependent branching\n  Explanation: Detected data-dependent branching (e.g. `if "
    "my_tensor.sum() > 0:`). Dynamo does not support tracing dynamic control flow.")


def _print_msg(types: list[str], has_kwargs: bool) -> str:
    t = "[" + ", ".join(repr(x) for x in types) + "]"
    return (
        "Failed to trace builtin operator\n  Explanation: Dynamo does not know how to trace "
        f"builtin operator `print` with argument types {t} (has_kwargs {has_kwargs})\n"
        f"  Hint: Avoid calling builtin `print` with argument types {t}. Consider using an "
        "equivalent alternative function/method to `print`.\n"
        "  Hint: If you are attempting to call a logging function (e.g. `print`), you can try "
        "adding it to `torch._dynamo.config.reorderable_logging_functions`.")


_PRINT = _print_msg(["Tensor"], False)
_PRINT_HINT = ("fullgraph=True refuses graph breaks: drop the print or drop fullgraph")


def _arg_type(x: Any) -> str:
    if isinstance(x, Tensor):
        return "Tensor"
    return type(x).__name__


@contextlib.contextmanager
def _print_breaks(fullgraph: bool) -> Iterator[None]:
    """While a function traces, ``print`` is the graph break it is in PyTorch: the
    function runs eagerly from then on, so it prints at every call (``fullgraph=True``:
    dynamo's ``Unsupported``)."""
    import builtins

    orig = builtins.print

    def refuse(*args: Any, **kwargs: Any) -> None:
        if fullgraph:
            raise hinted(Unsupported(with_hint(
                _print_msg([_arg_type(a) for a in args], bool(kwargs)), _PRINT_HINT)))
        tracing.note_break("print")
        orig(*args, **kwargs)

    builtins.print = refuse
    try:
        yield
    finally:
        builtins.print = orig

_LIVE: weakref.WeakSet[_Compiled] = weakref.WeakSet()
_EAGER = object()  # a guard set whose trace broke: run eagerly
_MISSING = object()
_SCALARS = (bool, int, float, complex, str, bytes, type(None))


# ---------------------------------------------------------------------------- value guards
def _guardable(v: Any) -> bool:
    """A value the trace may have used as a constant: a number, a string, a tensor, an
    array, or a tuple of them (what dynamo guards by value or by identity)."""
    if isinstance(v, _SCALARS) or isinstance(v, (Tensor, np.ndarray, np.generic)):
        return True
    return isinstance(v, tuple) and len(v) <= 16 and all(_guardable(x) for x in v)


def _same(a: Any, b: Any) -> bool:
    if a is b:
        return True
    if isinstance(a, (Tensor, np.ndarray)) or isinstance(b, (Tensor, np.ndarray)):
        return False  # a tensor rebound to another one (in-place changes: the program's)
    if type(a) is not type(b):
        return False
    if isinstance(a, tuple):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    try:
        return bool(a == b)
    except Exception:  # noqa: BLE001 - incomparable: changed
        return False


def _user_code(fn: Any) -> bool:
    mod = getattr(fn, "__module__", "") or ""
    return not (mod.startswith("tapegrad") or mod.startswith("numpy") or mod == "builtins")


def _value_guards(fn: Any) -> list[tuple[Any, Any, Any, str]]:
    """The globals and closure cells ``fn`` (and the user functions it names) reads, with
    their values now: ``(namespace dict or cell, name, value, label)``.  A call whose value
    differs recompiles, as dynamo's guards on globals and closures do."""
    out: list[tuple[Any, Any, Any, str]] = []
    seen: set[int] = set()

    def codes(co: Any) -> list[Any]:
        res = [co]
        for c in co.co_consts:
            if hasattr(c, "co_names"):
                res += codes(c)
        return res

    def visit(f: Any, depth: int) -> None:
        f = getattr(f, "__func__", f)  # a bound method's function
        code = getattr(f, "__code__", None)
        if code is None or id(f) in seen or depth > 3 or not _user_code(f):
            return
        seen.add(id(f))
        g = getattr(f, "__globals__", {})
        for co in codes(code):
            for nm in co.co_names:
                v = g.get(nm, _MISSING)
                if v is _MISSING:
                    continue
                if _guardable(v):
                    out.append((g, nm, v, f"global {nm!r}"))
                elif callable(v) and hasattr(v, "__code__"):
                    visit(v, depth + 1)
        for nm, cell in zip(code.co_freevars, f.__closure__ or ()):
            try:
                v = cell.cell_contents
            except ValueError:
                continue
            if _guardable(v):
                out.append((cell, None, v, f"closure variable {nm!r}"))
            elif callable(v) and hasattr(v, "__code__"):
                visit(v, depth + 1)

    visit(fn, 0)
    return out


def _failed_guard(guards: list[tuple[Any, Any, Any, str]]) -> str | None:
    """The first global or closure value that changed since the trace, or ``None``."""
    for ns, nm, v, label in guards:
        if nm is None:
            try:
                now = ns.cell_contents
            except ValueError:
                now = _MISSING
        else:
            now = ns.get(nm, _MISSING)
        if now is not v and not _same(now, v):
            return f"{label} changed"
    return None


def _flatten(x: Any, out: list[Any]) -> Any:
    """Leaves of nested lists/tuples/dicts into ``out``; returns the structure."""
    if isinstance(x, (list, tuple)) and not hasattr(x, "_fields"):
        return (type(x), [_flatten(v, out) for v in x])
    if isinstance(x, dict):
        return (dict, [(k, _flatten(v, out)) for k, v in x.items()])
    out.append(x)
    return None


def _unflatten(s: Any, it: Any) -> Any:
    if s is None:
        return next(it)
    kind, items = s
    if kind is dict:
        return {k: _unflatten(v, it) for k, v in items}
    vals = [_unflatten(v, it) for v in items]
    return kind(vals) if kind in (list, tuple) else kind(*vals)


def _leaf_key(x: Any) -> Any:
    if isinstance(x, Tensor):
        return ("T", tuple(x._data.shape), x._data.dtype.str, x._rg, x._style)
    try:
        hash(x)
    except TypeError:
        return ("O", id(x))
    return ("P", type(x), x)


class _Compiled:
    """The callable ``torch.compile`` returns for a function."""

    def __init__(self, fn: Callable[..., Any], fullgraph: bool, dynamic: Any, backend: Any,
                 mode: Any, options: Any, disable: bool, module: Any = None) -> None:
        self._fn = fn
        self._fullgraph = bool(fullgraph)
        self._dynamic = dynamic
        self._backend = backend
        self._mode = mode
        self._options = options
        self._disable = bool(disable)
        self._module = module
        self._cache: dict[Any, Any] = {}
        self.traces = 0
        self.graph_breaks: list[tuple[str, str]] = []
        self.recompile_reasons: list[str] = []
        self.last_trace: tracing.TraceLevel | None = None
        _LIVE.add(self)

    def reset(self) -> None:
        self._cache.clear()

    def _guard_key(self, leaves: list[Any]) -> Any:
        key: list[Any] = [tuple(_leaf_key(x) for x in leaves), _STATE.grad_enabled]
        m = self._module
        if m is not None:
            key.append(tuple(id(p) for p in m.parameters()))
            key.append(tuple(id(b) for b in m.buffers()))
            key.append(tuple(bool(x.training) for x in m.modules()))
        return tuple(key)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self._disable or _STATE.levels:
            return self._fn(*args, **kwargs)
        leaves: list[Any] = []
        tree = _flatten((args, kwargs), leaves)
        try:
            key = self._guard_key(leaves)
        except TypeError:
            return self._fn(*args, **kwargs)
        entry = self._cache.get(key)
        if entry is _EAGER:
            return self._fn(*args, **kwargs)
        if entry is not None:
            prog, structure, guards = entry
            why = prog.check() if not guards else (_failed_guard(guards) or prog.check())
            if why is None:
                tensors = [x for x in leaves if isinstance(x, Tensor)]
                vals = tracing.run_program(prog, tensors)
                return _unflatten(structure, iter(vals))
            self.recompile_reasons.append(why)
        elif self._cache:
            self.recompile_reasons.append(_why(self._cache, key))
        return self._trace(key, leaves, tree)

    def _trace(self, key: Any, leaves: list[Any], tree: Any) -> Any:
        fullgraph = self._fullgraph
        out_struct: list[Any] = [None]

        def on_read(t: Tensor, what: str) -> None:
            if fullgraph and what in ("bool", "print"):
                msg = _BRANCH if what == "bool" else _PRINT
                raise hinted(Unsupported(with_hint(
                    msg, "fullgraph=True refuses graph breaks: make the code branchless "
                    "(torch.where) or drop fullgraph")))

        def build(lv: tracing.TraceLevel) -> tuple[Any, Any]:
            new = [lv.add_input(x, f"arg{i}") if isinstance(x, Tensor) else x
                   for i, x in enumerate(leaves)]
            a, k = _unflatten(tree, iter(new))
            return tuple(a), dict(k)

        def flat_out(r: Any) -> tuple[list[Any], Any]:
            out: list[Any] = []
            out_struct[0] = _flatten(r, out)
            return out, None

        self.traces += 1
        guards = _value_guards(self._fn)
        with _print_breaks(fullgraph):
            prog, result, lv = tracing.trace_call(self._fn, build, flat_out,
                                                  getattr(self._fn, "__name__", "fn"),
                                                  on_read=on_read)
        self.last_trace = lv
        if prog is None:
            self.graph_breaks.extend(lv.breaks or [(lv.unsupported or "?", "")])
            self._cache[key] = _EAGER
            return result
        self._cache[key] = (prog, out_struct[0], guards)
        # the first call's outputs show PyTorch's grad_fn=<CompiledFunctionBackward> too
        # (the replayed calls' node): one pass-through node over the traced graph
        flat: list[Any] = []
        struct = _flatten(result, flat)
        if not any(isinstance(t, Tensor) and t._node is not None for t in flat):
            return result
        op = _relabel_op()
        flat = [set_style(op(t), t._style) if isinstance(t, Tensor) and t._node is not None
                else t for t in flat]
        return _unflatten(struct, iter(flat))

    def __get__(self, obj: Any, owner: Any = None) -> Any:
        if obj is None:
            return self
        import functools

        return functools.partial(self, obj)


_RELABEL: list[Any] = []


def _relabel_op() -> Any:
    """A copy whose node is named ``CompiledFunctionBackward`` (gradients pass through)."""
    if not _RELABEL:
        from .._core.registry import Op

        def fwd(x: Any) -> Any:
            return np.array(x, copy=True)

        def vjp(g: Any, *xs: Any) -> tuple[Any, ...]:
            return (g,)

        op = Op("compiled_call", fwd, (), "CompiledFunctionBackward")
        op.vjp = vjp
        _RELABEL.append(op)
    return _RELABEL[0]


def _why(cache: dict[Any, Any], key: Any) -> str:
    """Why ``key`` misses every cached guard set (compared with the latest one)."""
    for old in reversed(list(cache)):
        if len(old[0]) != len(key[0]):
            return f"the number of arguments changed ({len(old[0])} -> {len(key[0])})"
        if old[1] != key[1]:
            return f"grad mode changed ({old[1]} -> {key[1]})"
        for i, (a, b) in enumerate(zip(old[0], key[0])):
            if a != b:
                if a[0] == b[0] == "T":
                    names = ("", "size", "dtype", "requires_grad", "style")
                    j = next(j for j in range(1, 5) if a[j] != b[j])
                    return f"tensor argument {i}: {names[j]} {a[j]} -> {b[j]}"
                return f"argument {i}: {a[-1]!r} -> {b[-1]!r}"
        if old[2:] != key[2:]:
            return "the module's parameters, buffers or training flag changed"
    return "a new guard set"


def _module_base() -> type[Any]:
    from .nn.modules import Module

    return Module


class OptimizedModule(_Module):
    """What ``torch.compile(module)`` returns: an ``nn.Module`` holding the module as
    ``_orig_mod`` (so its ``state_dict`` and ``named_parameters`` names start with
    ``_orig_mod.``, as PyTorch's), its calls compiled; other attributes are the module's."""

    def __init__(self, mod: Any, compiled: _Compiled) -> None:
        super().__init__()
        object.__setattr__(self, "training", mod.training)
        self._modules["_orig_mod"] = mod
        object.__setattr__(self, "_compiled", compiled)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._compiled(*args, **kwargs)

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        return self._compiled(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        mods = self.__dict__.get("_modules")
        if mods is None or "_orig_mod" not in mods:
            raise AttributeError(f"'OptimizedModule' object has no attribute '{name}'")
        if name == "_orig_mod":
            return mods["_orig_mod"]
        return getattr(mods["_orig_mod"], name)

    def __setattr__(self, name: str, value: Any) -> None:
        if name in ("training", "_compiled") or hasattr(type(self), name):
            object.__setattr__(self, name, value)
            return
        setattr(self._orig_mod, name, value)


def compile(model: Any = None, *, fullgraph: bool = False, dynamic: Any = None,
            backend: Any = "inductor", mode: Any = None, options: Any = None,
            disable: bool = False) -> Any:
    """``torch.compile``: trace on the first call, replay the program on later ones.

    Examples
    --------
    >>> import tapegrad.torch as torch
    >>> f = torch.compile(lambda x: (x.sin() * 2).sum())
    >>> round(f(torch.ones(3)).item(), 4)
    5.0488
    """
    if mode is not None and options is not None:
        raise hinted(RuntimeError(with_hint(
            "Either mode or options can be specified, but both can't be specified at the "
            "same time.", "pass one of mode= or options=")))

    def wrap(m: Any) -> Any:
        if isinstance(m, _module_base()):
            c = _Compiled(m.__call__, fullgraph, dynamic, backend, mode, options, disable, m)
            return OptimizedModule(m, c)
        if not callable(m):
            raise hinted(RuntimeError(with_hint(
                f"Invalid argument type for torch.compile: {type(m).__name__}",
                "pass a function or an nn.Module")))
        c = _Compiled(m, fullgraph, dynamic, backend, mode, options, disable)
        try:
            import functools

            functools.update_wrapper(c, m, updated=())
        except (AttributeError, TypeError):
            pass
        return c

    if model is None:
        return wrap
    return wrap(model)


def reset() -> None:
    """``torch.compiler.reset()`` / ``torch._dynamo.reset()``: forget every trace."""
    for c in list(_LIVE):
        c.reset()


def explain(fn: Any) -> str:
    """What happened to a compiled function: traces, recompilations and graph breaks."""
    c = fn._compiled if isinstance(fn, OptimizedModule) else fn
    if not isinstance(c, _Compiled):
        return "not a torch.compile'd function"
    lines = [f"traces: {c.traces}, graph breaks: {len(c.graph_breaks)}"]
    for what, where in c.graph_breaks:
        lines.append(f"  graph break: {what} at {where}")
    for r in c.recompile_reasons:
        lines.append(f"  recompiled: {r}")
    return "\n".join(lines)


_ = np  # numpy is imported for type context of the guards
