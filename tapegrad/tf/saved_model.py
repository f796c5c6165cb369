"""``tf.saved_model.save`` / ``tf.saved_model.load``: traced programs and variables on disk.

This is **not** TensorFlow's SavedModel format (a ``saved_model.pb`` protobuf of
a TensorFlow graph plus a ``variables/`` checkpoint): tapegrad has no TensorFlow
graph to write, and its programs are sequences of tapegrad ops.  A directory
written here holds two files:

``saved_model.json``
    ``{"format": "tapegrad.saved_model", "version": 1, "variables": [...],
    "root": {...}, "functions": [...], "signatures": {...}}``:

    - ``variables``: one entry per variable (``name``, ``trainable``, ``dtype``,
      ``shape``; its value is ``variables.npz``'s array ``v<i>``);
    - ``root``: the object tree, ``{"variables": {attr: i}, "children": {attr:
      tree}, "lists": {attr: [tree or {"variable": i}]}, "functions": {attr: j}}``;
    - ``functions``: one entry per ``tf.function``: its parameter names, whether
      it had an ``input_signature`` (then ``input_signature``: specs), and its
      concrete functions, each ``{"args": [leaf spec], "structure": encoded
      output structure, "program": {...}}``;
    - a program: ``inputs`` (slots), ``consts`` (``{slot: array key}``),
      ``instrs`` and ``outputs``.  An instruction is ``{"k": "op", "op":
      "module:attribute" of a tapegrad op, "args": [slot or {"lit": value}],
      "attrs": {name: value}, "out": slot, "gm": grad mode, "when": [[slot,
      polarity], ...]}``, ``{"k": "read", "var": i, "out": slot}`` or ``{"k":
      "write_var", "var": i, "args": [slot]}``;
    - values are tagged JSON: ``{"tuple": [...]}``, ``{"list": [...]}``,
      ``{"dtype": "float32"}``, ``{"array": key}``, ``{"slice": [a, b, c]}``,
      ``{"float": "nan"}``, ``{"complex": [re, im]}``, ``{"ellipsis": true}``; bare
      JSON numbers, strings, booleans and ``null`` stand for themselves;
    - ``signatures``: ``{name: {"function": j, "concrete": k, "outputs": [names]}}``.

``variables.npz``
    Every array (variable values ``v<i>``, constants and array attributes
    ``c<i>``), read with ``numpy.load(..., allow_pickle=False)``.

Loading **executes no stored code**: the JSON is parsed and checked in full
(known format, every op named by its ``module:attribute`` path among tapegrad's
own ops, every slot defined before use, each array's dtype and shape as
declared, only the value tags above) before any variable is made or any op
runs; anything else raises ``ValueError`` naming the problem.  A loaded
function runs its program through the ops, so ``tf.GradientTape`` records it.

Supported in a saved program: ops, reads and assignments of variables, and
``tf.cond`` branches.  ``tf.print``, random numbers, Python side effects run at
replay (``effect``/``source`` instructions), ``.grad`` updates and in-place
writes of captured tensors cannot be stored: saving such a function raises
``ValueError``.  A concrete function of a relaxed signature (``None`` dims)
replays the program traced for one shape; one that baked a shape into an
attribute fails on other shapes with the op's error.
"""

from __future__ import annotations

import json
import math
import os
import sys
from collections.abc import Iterator, Mapping
from typing import Any

import numpy as np

from .._core.errors import hinted, with_hint
from .._core.mode import STATE as _STATE
from .._core.registry import Op
from .._core.tensor import TF, Tensor, make, set_style
from ..autodiff import tracing
from . import _nest
from . import dtypes as _dt
from ._tensor import TensorShape, VariableBase, convert
from .data.spec import TensorSpec

__all__ = ["save", "load", "SaveOptions", "LoadOptions"]

FORMAT = "tapegrad.saved_model"
VERSION = 1
_JSON = "saved_model.json"
_NPZ = "variables.npz"
_DTYPES = {"bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
           "float16", "float32", "float64", "complex64", "complex128"}
_TAGS = {"tuple", "list", "dict", "dtype", "array", "slice", "float", "complex", "ellipsis",
         "npscalar"}


class SaveOptions:
    """``tf.saved_model.SaveOptions`` (accepted; no option changes what is written)."""

    def __init__(self, **kwargs: Any) -> None:
        self.options = dict(kwargs)


class LoadOptions:
    """``tf.saved_model.LoadOptions`` (accepted; no option changes what is read)."""

    def __init__(self, **kwargs: Any) -> None:
        self.options = dict(kwargs)


def _bad(msg: str) -> BaseException:
    return hinted(ValueError(with_hint(
        f"Invalid tapegrad SavedModel: {msg}",
        "the file is corrupted or was not written by tapegrad.tf.saved_model.save; "
        "nothing was loaded")))


def _unsaveable(msg: str) -> BaseException:
    return hinted(ValueError(with_hint(
        f"tf.saved_model.save: {msg}",
        "a saved function may only use tapegrad ops, tf.Variable reads/assignments and "
        "tf.cond; tf.print, random ops, optimizer updates and .grad updates cannot be "
        "stored")))


# ---------------------------------------------------------------------------- the op table
def _op_table() -> tuple[dict[int, str], dict[str, Op]]:
    """Every tapegrad op reachable as a module attribute (or a module-level dict entry)
    of an imported ``tapegrad`` module: ``id(op) -> path`` and ``path -> op``."""
    from .. import ops as _ops  # noqa: F401 - make sure the core ops are imported

    by_id: dict[int, str] = {}
    by_path: dict[str, Op] = {}
    for mn in sorted(k for k in list(sys.modules) if k == "tapegrad" or
                     k.startswith("tapegrad.")):
        m = sys.modules.get(mn)
        if m is None:
            continue
        for a, v in list(vars(m).items()):
            items: list[tuple[str, Any]] = []
            if isinstance(v, Op):
                items.append((f"{mn}:{a}", v))
            elif isinstance(v, dict):
                items.extend((f"{mn}:{a}[{k}]", x) for k, x in list(v.items())
                             if isinstance(k, str) and isinstance(x, Op))
            for path, op in items:
                fwd = getattr(op.fwd, "func", op.fwd)
                if not str(getattr(fwd, "__module__", "")).startswith("tapegrad."):
                    continue
                by_id.setdefault(id(op), path)
                by_path[path] = op
    return by_id, by_path


# ---------------------------------------------------------------------------- values
class _Arrays:
    def __init__(self) -> None:
        self.arrays: dict[str, np.ndarray] = {}

    def add(self, a: Any, prefix: str = "c") -> str:
        arr = np.asarray(a)
        if arr.dtype.name not in _DTYPES:
            raise _unsaveable(f"an array of dtype {arr.dtype} cannot be stored")
        key = f"{prefix}{len(self.arrays)}"
        self.arrays[key] = np.array(arr, copy=True, order="C")
        return key


def _enc(v: Any, arrays: _Arrays) -> Any:
    if v is None or isinstance(v, (bool, str)):
        return v
    if isinstance(v, int) and not isinstance(v, np.generic):
        return v
    if isinstance(v, float):
        return v if math.isfinite(v) else {"float": repr(v)}
    if isinstance(v, complex):
        return {"complex": [_enc(v.real, arrays), _enc(v.imag, arrays)]}
    if isinstance(v, tuple):
        return {"tuple": [_enc(x, arrays) for x in v]}
    if isinstance(v, list):
        return {"list": [_enc(x, arrays) for x in v]}
    if isinstance(v, dict):
        if not all(isinstance(k, str) for k in v):
            raise _unsaveable("a dict attribute with non-string keys cannot be stored")
        return {"dict": [[k, _enc(x, arrays)] for k, x in v.items()]}
    if isinstance(v, np.dtype):
        if v.name not in _DTYPES:
            raise _unsaveable(f"dtype {v} cannot be stored")
        return {"dtype": v.name}
    if isinstance(v, type) and issubclass(v, np.generic):
        return _enc(np.dtype(v), arrays)
    if isinstance(v, np.ndarray):
        return {"array": arrays.add(v)}
    if isinstance(v, np.generic):
        return {"npscalar": arrays.add(v)}
    if isinstance(v, slice):
        return {"slice": [_enc(v.start, arrays), _enc(v.stop, arrays), _enc(v.step, arrays)]}
    if v is Ellipsis:
        return {"ellipsis": True}
    if isinstance(v, _dt.DType):
        return _enc(_dt.np_dtype(v), arrays)
    raise _unsaveable(f"a value of type {type(v).__name__} cannot be stored")


def _dec(v: Any, arrays: Mapping[str, np.ndarray]) -> Any:
    if v is None or isinstance(v, (bool, str, int, float)):
        return v
    if not isinstance(v, dict) or len(v) != 1:
        raise _bad(f"a value must be a JSON scalar or a one-key tagged object, got {v!r:.80}")
    (tag, x), = v.items()
    if tag not in _TAGS:
        raise _bad(f"unknown value tag {tag!r}")
    if tag in ("tuple", "list"):
        if not isinstance(x, list):
            raise _bad(f"{tag} must hold a list")
        items = [_dec(i, arrays) for i in x]
        return tuple(items) if tag == "tuple" else items
    if tag == "dict":
        if not isinstance(x, list) or not all(isinstance(p, list) and len(p) == 2 and
                                               isinstance(p[0], str) for p in x):
            raise _bad("dict must hold [key, value] pairs with string keys")
        return {k: _dec(i, arrays) for k, i in x}
    if tag == "dtype":
        if x not in _DTYPES:
            raise _bad(f"unknown dtype {x!r}")
        return np.dtype(x)
    if tag in ("array", "npscalar"):
        if not isinstance(x, str) or x not in arrays:
            raise _bad(f"missing array {x!r}")
        a = arrays[x]
        if tag == "npscalar":
            if a.shape != ():
                raise _bad(f"array {x!r} must be a scalar")
            return a[()]
        return a.copy()
    if tag == "slice":
        if not isinstance(x, list) or len(x) != 3:
            raise _bad("slice must hold [start, stop, step]")
        parts = [_dec(i, arrays) for i in x]
        if not all(p is None or isinstance(p, (int, np.integer)) for p in parts):
            raise _bad("slice bounds must be integers or null")
        return slice(*parts)
    if tag == "float":
        if x not in ("nan", "inf", "-inf"):
            raise _bad(f"bad float {x!r}")
        return float(x)
    if tag == "complex":
        if not isinstance(x, list) or len(x) != 2:
            raise _bad("complex must hold [re, im]")
        re_, im = (_dec(i, arrays) for i in x)
        if not all(isinstance(p, (int, float)) and not isinstance(p, bool) for p in (re_, im)):
            raise _bad("complex parts must be numbers")
        return complex(re_, im)
    if x is not True:
        raise _bad("ellipsis must be true")
    return Ellipsis


# ---------------------------------------------------------------------------- saving
class _Saver:
    def __init__(self) -> None:
        self.by_id, _ = _op_table()
        self.arrays = _Arrays()
        self.var_ids: dict[int, int] = {}
        self.vars: list[Any] = []
        self.fn_ids: dict[int, int] = {}
        self.functions: list[dict[str, Any]] = []
        self.fn_objs: list[Any] = []
        self.seen: set[int] = set()

    def var(self, v: Any) -> int:
        i = self.var_ids.get(id(v))
        if i is None:
            i = len(self.vars)
            self.var_ids[id(v)] = i
            self.vars.append(v)
        return i

    # -------------------------------------------------------------- the object tree
    @staticmethod
    def _trackable(x: Any) -> bool:
        from .keras.layers import Layer
        from .module import Module

        return isinstance(x, (Module, Layer))

    def tree(self, obj: Any) -> dict[str, Any]:
        from .function import Function

        self.seen.add(id(obj))
        node: dict[str, Any] = {"variables": {}, "children": {}, "lists": {}, "functions": {}}
        attrs = dict(vars(obj)) if hasattr(obj, "__dict__") else {}
        for name in sorted(dir(type(obj))):
            if isinstance(_class_attr(type(obj), name), Function):
                attrs[name] = getattr(obj, name)
        for name in sorted(attrs):
            v = attrs[name]
            if name.startswith("__") and not (name == "__call__" and isinstance(v, Function)):
                continue
            if isinstance(v, VariableBase):
                node["variables"][name] = self.var(v)
            elif isinstance(v, Function):
                node["functions"][name] = self.function(v)
            elif self._trackable(v) and id(v) not in self.seen:
                node["children"][name] = self.tree(v)
            elif isinstance(v, (list, tuple)) and v and all(
                    isinstance(x, VariableBase) or self._trackable(x) for x in v):
                items: list[Any] = []
                for x in v:
                    if isinstance(x, VariableBase):
                        items.append({"variable": self.var(x)})
                    elif id(x) not in self.seen:
                        items.append(self.tree(x))
                    else:
                        items.append(None)
                node["lists"][name] = items
        return node

    # -------------------------------------------------------------- functions
    def function(self, f: Any) -> int:
        j = self.fn_ids.get(id(f))
        if j is not None:
            return j
        import inspect

        if not f._traces and f._input_signature is not None:
            f.get_concrete_function()  # trace the signature now (TensorFlow does at save)
        params: list[str] = []
        defaults: dict[str, Any] = {}
        if f._sig is not None:
            for p in f._sig.parameters.values():
                if p.kind not in (inspect.Parameter.POSITIONAL_ONLY,
                                  inspect.Parameter.POSITIONAL_OR_KEYWORD):
                    raise _unsaveable(f"tf.function {f._name!r}: only positional-or-keyword "
                                      "parameters can be saved")
                params.append(p.name)
                if p.default is not p.empty and (p.default is None or isinstance(
                        p.default, (bool, int, float, str))):
                    defaults[p.name] = _enc(p.default, self.arrays)
        concretes = []
        for tr in f._traces:
            if tr.eager or not tr.programs:
                continue
            prog = next(iter(tr.programs.values()))
            concretes.append({"args": [self.leaf(k, f._name) for k in tr.key],
                              "structure": self.structure(tr.structure),
                              "program": self.program(prog, f._name)})
        # a function never traced is stored without concrete functions (as TensorFlow):
        # calling it after loading raises TensorFlow's no-matching-function error
        entry: dict[str, Any] = {"name": str(f._name), "params": params,
                                 "defaults": defaults, "concrete": concretes}
        if f._input_signature is not None:
            entry["input_signature"] = [self.leaf(k, f._name) for k in f._sig_key() or ()]
        j = len(self.functions)
        self.fn_ids[id(f)] = j
        self.functions.append(entry)
        self.fn_objs.append(f)
        return j

    def leaf(self, k: Any, fname: str) -> dict[str, Any]:
        if k[0] == "T":
            return {"tensor": {"shape": None if k[1] is None else list(k[1]),
                               "dtype": np.dtype(k[2]).name}}
        if k[0] == "P" and (k[2] is None or isinstance(k[2], (bool, int, float, str))):
            return {"python": _enc(k[2], self.arrays)}
        raise _unsaveable(f"tf.function {fname!r} was traced with an argument that cannot be "
                          "stored (a Variable or an object passed as an argument)")

    def structure(self, s: Any) -> Any:
        if isinstance(s, Mapping):
            if not all(isinstance(k, str) for k in s):
                raise _unsaveable("an output dict with non-string keys cannot be stored")
            return {"dict": [[k, self.structure(s[k])] for k in s]}
        if isinstance(s, (list, tuple)) and not hasattr(s, "_fields"):
            return {"tuple" if isinstance(s, tuple) else "list": [self.structure(x) for x in s]}
        if isinstance(s, Tensor):
            return {"leaf": True}
        return {"value": _enc(s, self.arrays)}

    def program(self, prog: tracing.Program, fname: str) -> dict[str, Any]:
        consts = {str(s): self.arrays.add(prog.const_vals[s]) for s in sorted(prog.used_consts)}
        instrs: list[dict[str, Any]] = []

        def arg(a: Any) -> Any:
            return a if a.__class__ is int else {"lit": _enc(a.value, self.arrays)}

        for ins in prog.instrs:
            when = [[w, bool(p)] for w, p in ins.when]
            if ins.kind == "op":
                path = self.by_id.get(id(ins.op))
                if path is None:
                    raise _unsaveable(f"tf.function {fname!r} uses op {ins.op.name!r}, which "
                                      "is not one of tapegrad's named ops")
                instrs.append({"k": "op", "op": path, "args": [arg(a) for a in ins.args],
                               "attrs": {k: _enc(v, self.arrays) for k, v in ins.attrs.items()},
                               # the ops of a backward pass inside the function stay
                               # differentiable by an outer tape, as TensorFlow's graph
                               # gradients are (stop_recording / no-grad regions do not)
                               "out": ins.out, "gm": bool(ins.gm or ins.bwd), "when": when})
            elif ins.kind == "read" and ins.what == "data" and isinstance(ins.obj, VariableBase):
                instrs.append({"k": "read", "var": self.var(ins.obj), "out": ins.out,
                               "when": when})
            elif ins.kind == "write_var" and isinstance(ins.obj, VariableBase):
                instrs.append({"k": "write_var", "var": self.var(ins.obj),
                               "args": [arg(a) for a in ins.args], "when": when})
            else:
                raise _unsaveable(f"tf.function {fname!r} contains {ins.name!r} "
                                  f"({ins.kind}), which cannot be stored")
        outputs = [arg(r) for r in prog.outputs]
        return {"inputs": list(prog.inputs), "consts": consts, "instrs": instrs,
                "outputs": outputs}


def _class_attr(cls: type, name: str) -> Any:
    """The class attribute ``name`` without calling descriptors."""
    for k in cls.__mro__:
        if name in vars(k):
            return vars(k)[name]
    return None


def _output_names(structure: Any) -> list[str]:
    if isinstance(structure, Mapping) and not any(_nest.is_nested(v)
                                                  for v in structure.values()):
        return [str(k) for k in _nest._sorted_keys(structure)]
    n = len(_nest.flatten(structure))
    return [f"output_{i}" for i in range(n)]


def save(obj: Any, export_dir: str | os.PathLike[str], signatures: Any = None,
         options: Any = None) -> None:
    """``tf.saved_model.save``: write ``obj``'s variables and traced ``tf.function``\\ s.

    ``signatures``: a ``tf.function`` with an ``input_signature``, a concrete function,
    or a dict of them by signature name; by default the root object's one
    ``tf.function`` with an ``input_signature`` (if exactly one) is ``serving_default``.
    See the module docstring for the format.
    """
    from .function import ConcreteFunction, Function

    sv = _Saver()
    root = sv.tree(obj)
    sigs: dict[str, Any] = {}
    if signatures is None:
        cands = [name for name in sorted(root["functions"])
                 if sv.fn_objs[root["functions"][name]]._input_signature is not None]
        if len(cands) == 1:
            sigs["serving_default"] = sv.fn_objs[root["functions"][cands[0]]]
    elif isinstance(signatures, Mapping):
        sigs = dict(signatures)
    else:
        sigs["serving_default"] = signatures
    sig_json: dict[str, Any] = {}
    for name, f in sigs.items():
        if isinstance(f, ConcreteFunction):
            parent, tr = f._parent, f._trace
        elif isinstance(f, Function):
            if f._input_signature is None:
                raise hinted(ValueError(with_hint(
                    f"Function {f._name} was not decorated with an input signature. Please "
                    "provide an input signature or call get_concrete_function on the "
                    "function.", "signatures need fixed input specs")))
            parent = f
            parent.get_concrete_function()
            want = parent._sig_key()
            tr = next(t for t in parent._traces if t.key == want)
        else:
            raise hinted(ValueError(with_hint(
                f"Expected a TensorFlow function for which to generate a signature, but got "
                f"{f!r}.", "pass a tf.function with an input_signature or a concrete function")))
        j = sv.function(parent)
        live = [t for t in parent._traces if not t.eager and t.programs]
        if not any(t is tr for t in live):
            raise _unsaveable(f"signature {name!r}: {parent._name} could not be traced into "
                              "one program (it runs eagerly)")
        k = next(i for i, t in enumerate(live) if t is tr)
        sig_json[str(name)] = {"function": j, "concrete": k,
                               "outputs": _output_names(tr.structure)}
    var_json = []
    for i, v in enumerate(sv.vars):
        arr = np.asarray(v._data)
        key = f"v{i}"
        if arr.dtype.name not in _DTYPES:
            raise _unsaveable(f"variable {v.name} has dtype {arr.dtype}, which cannot be stored")
        sv.arrays.arrays[key] = np.array(arr, copy=True, order="C")
        name = v.name[:-2] if v.name.endswith(":0") else v.name
        var_json.append({"name": name, "trainable": bool(v.trainable),
                         "dtype": arr.dtype.name, "shape": list(arr.shape)})
    doc = {"format": FORMAT, "version": VERSION, "variables": var_json, "root": root,
           "functions": sv.functions, "signatures": sig_json}
    text = json.dumps(doc, allow_nan=False)
    d = os.fspath(export_dir)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, _NPZ), "wb") as fh:
        np.savez(fh, **sv.arrays.arrays)  # type: ignore[arg-type]
    with open(os.path.join(d, _JSON), "w", encoding="utf-8") as fh:
        fh.write(text)


# ---------------------------------------------------------------------------- loading
def _int(x: Any, what: str) -> int:
    if not isinstance(x, int) or isinstance(x, bool) or x < 0:
        raise _bad(f"{what} must be a non-negative integer, got {x!r:.40}")
    return x


def _shape(x: Any, what: str, unknown_ok: bool = False) -> tuple[int | None, ...] | None:
    if x is None and unknown_ok:
        return None
    if not isinstance(x, list) or not all(
            (d is None and unknown_ok) or (isinstance(d, int) and not isinstance(d, bool)
                                           and d >= 0) for d in x):
        raise _bad(f"{what}: bad shape {x!r:.60}")
    return tuple(x)


def _dtype(x: Any, what: str) -> np.dtype:
    if x not in _DTYPES:
        raise _bad(f"{what}: unknown dtype {x!r:.40}")
    return np.dtype(x)


class _Leaf:
    """One argument of a concrete function: a tensor spec or a Python value."""

    def __init__(self, j: Any, arrays: Mapping[str, np.ndarray], what: str) -> None:
        if not isinstance(j, dict) or len(j) != 1 or not ({"tensor", "python"} & set(j)):
            raise _bad(f"{what}: bad argument spec")
        self.tensor = "tensor" in j
        self.value: Any = None
        self.shape: tuple[int | None, ...] | None = None
        self.dtype = np.dtype("float32")
        if self.tensor:
            t = j["tensor"]
            if not isinstance(t, dict):
                raise _bad(f"{what}: bad tensor spec")
            self.shape = _shape(t.get("shape"), what, unknown_ok=True)
            self.dtype = _dtype(t.get("dtype"), what)
        else:
            self.value = _dec(j["python"], arrays)

    def spec(self, name: str | None) -> TensorSpec:
        return TensorSpec(None if self.shape is None else TensorShape(list(self.shape)),
                          _dt.from_numpy(self.dtype), name=name)

    def matches(self, x: Any) -> bool:
        if not self.tensor:
            return not isinstance(x, Tensor) and type(x) is type(self.value) and \
                bool(x == self.value)
        if not isinstance(x, Tensor):
            return False
        a = x._data
        if a.dtype != self.dtype:
            return False
        if self.shape is None:
            return True
        return len(self.shape) == a.ndim and all(d is None or d == s
                                                 for d, s in zip(self.shape, a.shape))


class _Program:
    """A checked stored program, run through the ops (so a tape records it)."""

    def __init__(self, j: Any, arrays: Mapping[str, np.ndarray], ops: Mapping[str, Op],
                 n_vars: int, what: str) -> None:
        if not isinstance(j, dict):
            raise _bad(f"{what}: a program must be an object")
        defined: set[int] = set()
        if not isinstance(j.get("inputs"), list):
            raise _bad(f"{what}: missing inputs")
        self.inputs: list[int] = [_int(s, f"{what}: input slot") for s in j["inputs"]]
        defined.update(self.inputs)
        consts = j.get("consts")
        if not isinstance(consts, dict):
            raise _bad(f"{what}: missing consts")
        self.consts: dict[int, np.ndarray] = {}
        for s, key in consts.items():
            if not (isinstance(s, str) and s.isdigit()) or not isinstance(key, str) \
                    or key not in arrays:
                raise _bad(f"{what}: bad constant {s!r:.20}")
            self.consts[int(s)] = arrays[key]
        defined.update(self.consts)
        raw = j.get("instrs")
        if not isinstance(raw, list):
            raise _bad(f"{what}: missing instrs")
        self.instrs: list[tuple[Any, ...]] = []

        def arg(a: Any) -> Any:
            if isinstance(a, int) and not isinstance(a, bool):
                if a not in defined:
                    raise _bad(f"{what}: slot {a} used before it is defined")
                return a
            if isinstance(a, dict) and set(a) == {"lit"}:
                return _Lit(_dec(a["lit"], arrays))
            raise _bad(f"{what}: bad argument {a!r:.40}")

        for n, ins in enumerate(raw):
            w = f"{what}, instruction {n}"
            if not isinstance(ins, dict):
                raise _bad(f"{w}: not an object")
            k = ins.get("k")
            when_raw = ins.get("when", [])
            if not isinstance(when_raw, list) or not all(
                    isinstance(p, list) and len(p) == 2 and isinstance(p[1], bool)
                    for p in when_raw):
                raise _bad(f"{w}: bad when")
            when = tuple((arg(_int(p[0], w)), p[1]) for p in when_raw)
            if k == "op":
                path = ins.get("op")
                op = ops.get(path) if isinstance(path, str) else None
                if op is None:
                    raise _bad(f"{w}: {path!r:.80} is not a tapegrad op")
                args = ins.get("args")
                attrs = ins.get("attrs")
                if not isinstance(args, list) or not isinstance(attrs, dict):
                    raise _bad(f"{w}: bad args or attrs")
                import inspect

                params: Mapping[str, inspect.Parameter]
                try:
                    params = inspect.signature(op.fwd).parameters
                except (TypeError, ValueError):  # pragma: no cover - a builtin forward
                    params = {}
                varkw = any(p.kind is p.VAR_KEYWORD for p in params.values())
                for an in attrs:
                    if not varkw and an not in params:
                        raise _bad(f"{w}: op {path} has no attribute {an!r:.40}")
                a = [arg(x) for x in args]
                at = {str(kk): _dec(v, arrays) for kk, v in attrs.items()}
                out = _int(ins.get("out"), w)
                self.instrs.append(("op", op, a, at, out, bool(ins.get("gm", True)), when))
                defined.add(out)
            elif k == "read":
                v = _int(ins.get("var"), w)
                if v >= n_vars:
                    raise _bad(f"{w}: no variable {v}")
                out = _int(ins.get("out"), w)
                self.instrs.append(("read", v, out, when))
                defined.add(out)
            elif k == "write_var":
                v = _int(ins.get("var"), w)
                args = ins.get("args")
                if v >= n_vars or not isinstance(args, list) or len(args) != 1:
                    raise _bad(f"{w}: bad write_var")
                self.instrs.append(("write_var", v, arg(args[0]), when))
            else:
                raise _bad(f"{w}: unknown instruction kind {k!r:.40}")
        outs = j.get("outputs")
        if not isinstance(outs, list):
            raise _bad(f"{what}: missing outputs")
        self.outputs = [arg(o) for o in outs]

    def run(self, inputs: list[Tensor], variables: list[Any]) -> list[Any]:
        env: dict[int, Any] = dict(zip(self.inputs, inputs))
        for s, a in self.consts.items():
            env[s] = make(a, None, False, TF)
        state = _STATE
        outer = state.grad_enabled

        def val(a: Any) -> Any:
            return env[a] if a.__class__ is int else a.value

        try:
            for ins in self.instrs:
                when = ins[-1]
                if when and not all(bool(np.asarray(env[s]._data)) == p for s, p in when):
                    continue
                k = ins[0]
                if k == "op":
                    _, op, args, attrs, out, gm, _w = ins
                    state.grad_enabled = outer and gm
                    r = op(*[val(a) for a in args], **attrs)
                    if isinstance(r, Tensor):
                        set_style(r, TF)
                    env[out] = r
                elif k == "read":
                    env[ins[2]] = tracing._snapshot(variables[ins[1]])
                else:
                    state.grad_enabled = outer
                    variables[ins[1]].assign(val(ins[2]))
        finally:
            state.grad_enabled = outer
        res: list[Any] = []
        for r in self.outputs:
            if r.__class__ is int:
                t = env[r]
                if r in self.consts:
                    t = make(t._data.copy(), None, False, TF)
                res.append(t)
            else:
                res.append(r.value)
        return res


class _Lit:
    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value


class _Marker:
    """A tensor's place in a stored output structure."""

    def __repr__(self) -> str:
        return "<tensor output>"


def _structure(j: Any, arrays: Mapping[str, np.ndarray], what: str) -> Any:
    if not isinstance(j, dict) or len(j) != 1:
        raise _bad(f"{what}: bad output structure")
    (tag, x), = j.items()
    if tag == "leaf":
        return _Marker()
    if tag == "value":
        return _dec(x, arrays)
    if tag in ("tuple", "list") and isinstance(x, list):
        items = [_structure(i, arrays, what) for i in x]
        return tuple(items) if tag == "tuple" else items
    if tag == "dict" and isinstance(x, list) and all(
            isinstance(p, list) and len(p) == 2 and isinstance(p[0], str) for p in x):
        return {k: _structure(v, arrays, what) for k, v in x}
    raise _bad(f"{what}: bad output structure tag {tag!r:.40}")


class _Concrete:
    def __init__(self, j: Any, arrays: Mapping[str, np.ndarray], ops: Mapping[str, Op],
                 n_vars: int, what: str) -> None:
        if not isinstance(j, dict) or not isinstance(j.get("args"), list):
            raise _bad(f"{what}: bad concrete function")
        self.args = [_Leaf(a, arrays, what) for a in j["args"]]
        self.structure = _structure(j.get("structure"), arrays, what)
        self.program = _Program(j.get("program"), arrays, ops, n_vars, what)
        n_t = sum(1 for a in self.args if a.tensor)
        if n_t != len(self.program.inputs):
            raise _bad(f"{what}: {n_t} tensor arguments for {len(self.program.inputs)} inputs")
        n_out = len(_nest.flatten(self.structure))
        if n_out != len(self.program.outputs):
            raise _bad(f"{what}: the output structure does not match the outputs")


def _tensor_text(x: Any, name: str) -> str:
    if isinstance(x, Tensor):
        a = x._data
        dims = "(" + ", ".join(str(d) for d in a.shape) + ("," if a.ndim == 1 else "") + ")"
        return f"<tf.Tensor '{name}:0' shape={dims} dtype={_dt.from_numpy(a.dtype).name}>"
    return repr(x)


class RestoredFunction:
    """A loaded ``tf.function``: runs the stored concrete function whose signature matches."""

    def __init__(self, j: Any, arrays: Mapping[str, np.ndarray], ops: Mapping[str, Op],
                 variables: list[Any], n_vars: int, what: str) -> None:
        if not isinstance(j, dict) or not isinstance(j.get("concrete"), list) or \
                not isinstance(j.get("params"), list) or \
                not all(isinstance(p, str) for p in j["params"]):
            raise _bad(f"{what}: bad function entry")
        self._name = str(j.get("name", "function"))
        self._params: list[str] = list(j["params"])
        dj = j.get("defaults", {})
        if not isinstance(dj, dict) or not all(k in self._params for k in dj):
            raise _bad(f"{what}: bad defaults")
        self._defaults = {k: _dec(v, arrays) for k, v in dj.items()}
        self._variables = variables
        self._concrete = [_Concrete(c, arrays, ops, n_vars, f"{what}/{i}")
                          for i, c in enumerate(j["concrete"])]
        sig = j.get("input_signature")
        self._signature = None if sig is None else [_Leaf(a, arrays, what) for a in sig]

    @property
    def concrete_functions(self) -> list[Any]:
        return [_RestoredConcrete(self, c) for c in self._concrete]

    def _bind(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> list[Any]:
        vals = list(args)
        for p in self._params[len(vals):]:
            if p in kwargs:
                vals.append(kwargs[p])
            elif p in self._defaults:
                vals.append(self._defaults[p])
            else:
                break
        return _nest.flatten(tuple(vals))

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        flat = self._bind(args, kwargs)
        for c in self._concrete:
            if len(c.args) != len(flat) or len(args) + len(kwargs) > len(self._params):
                continue
            tried = [convert(x) if a.tensor and not isinstance(x, Tensor) and isinstance(
                x, (int, float, list, np.ndarray)) else x for a, x in zip(c.args, flat)]
            if all(a.matches(x) for a, x in zip(c.args, tried)):
                return self._run(c, tried)
        if self._signature is not None:
            raise self._binding_error(args, kwargs, flat)
        raise self._no_match(flat)

    def _run(self, c: _Concrete, flat: list[Any]) -> Any:
        ts = [convert(x) if isinstance(x, VariableBase) else x
              for a, x in zip(c.args, flat) if a.tensor]
        vals = c.program.run(ts, self._variables)
        return _nest.pack_sequence_as(c.structure, vals)

    def _binding_error(self, args: tuple[Any, ...], kwargs: dict[str, Any],
                       flat: list[Any]) -> BaseException:
        from .function import _spec_text

        sig = self._signature or []
        shown = ", ".join(f"{p}: {s.spec(None)!r}" for p, s in zip(self._params, sig))
        why = "Can not cast the input structure to the signature's"
        if len(flat) > len(sig):
            why = "too many positional arguments"
        elif len(flat) < len(sig):
            why = f"missing a required argument: '{self._params[len(flat)]}'"
        else:
            for sp, x in zip(sig, flat):
                t = x if isinstance(x, Tensor) else None
                if t is None:
                    try:
                        t = convert(x)
                    except Exception:  # noqa: BLE001 - not convertible: TensorFlow's message
                        why = f"Can not cast {x!r} to {sp.spec(None)!r}"
                        break
                if not sp.matches(t):
                    why = (f"Can not cast {_spec_text(t._data.shape, t._data.dtype)} to "
                           f"{sp.spec(None)!r}")
                    break
        return hinted(TypeError(with_hint(
            f"Binding inputs to tf.function failed due to `{why}`. Received args: {args!r} "
            f"and kwargs: {kwargs!r} for signature: ({shown}).",
            "the inputs must match the saved input_signature (shape, dtype, count)")))

    def _no_match(self, flat: list[Any]) -> BaseException:
        def names(n: int) -> list[str]:
            return [self._params[i] if i < len(self._params) else f"args_{i}"
                    for i in range(n)]

        got = "".join(f"\n    * {_tensor_text(x, nm)}" for x, nm in zip(flat, names(len(flat))))
        opts = []
        for i, c in enumerate(self._concrete):
            items = "".join(
                f"\n    * {a.spec(nm)!r}" if a.tensor else f"\n    * {a.value!r}"
                for a, nm in zip(c.args, names(len(c.args))))
            opts.append(f"Option {i + 1}:\n  Positional arguments ({len(c.args)} total):"
                        f"{items}\n  Keyword arguments: {{}}")
        msg = ("Could not find matching concrete function to call loaded from the SavedModel. "
               f"Got:\n  Positional arguments ({len(flat)} total):{got}\n  Keyword arguments: "
               f"{{}}\n\n Expected these arguments to match one of the following "
               f"{len(self._concrete)} option(s):\n\n" + "\n\n".join(opts))
        return hinted(ValueError(with_hint(
            msg, "only the signatures traced before saving were stored")))

    def __repr__(self) -> str:
        return f"<tapegrad.tf.saved_model RestoredFunction {self._name}>"


class _RestoredConcrete:
    """One stored concrete function (a signature: called with keyword arguments)."""

    def __init__(self, parent: RestoredFunction, c: _Concrete,
                 output_names: list[str] | None = None) -> None:
        self._parent = parent
        self._c = c
        self._outputs = output_names

    def _names(self) -> list[str]:
        n = len(self._c.args)
        ps = self._parent._params
        return [ps[i] if i < len(ps) else f"args_{i}" for i in range(n)]

    @property
    def structured_input_signature(self) -> tuple[tuple[Any, ...], dict[str, Any]]:
        pairs = list(zip(self._c.args, self._names()))
        if self._outputs is None:
            return tuple(a.spec(nm) if a.tensor else a.value for a, nm in pairs), {}
        # a signature takes its tensors by name (its Python arguments are bound)
        return (), {nm: a.spec(nm) for a, nm in pairs if a.tensor}

    @property
    def structured_outputs(self) -> Any:
        return self._c.structure

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        names = self._names()
        tnames = [nm for a, nm in zip(self._c.args, names) if a.tensor]
        kw = dict(kwargs)
        given = list(args) + [kw.pop(n) for n in tnames[len(args):] if n in kw]
        if kw or len(given) != len(tnames):
            raise hinted(TypeError(with_hint(
                f"{self._parent._name}(...) got unexpected or missing arguments: expected "
                f"{tnames}, got {len(args)} positional and {sorted(kwargs)}",
                "a signature takes its tensor inputs by name")))
        it = iter(given)
        vals = [next(it) if a.tensor else a.value for a in self._c.args]
        conv = [convert(v) if a.tensor and not isinstance(v, Tensor) else v
                for a, v in zip(self._c.args, vals)]
        for a, x, nm in zip(self._c.args, conv, names):
            if not a.matches(x):
                raise hinted(TypeError(with_hint(
                    f"Binding inputs to tf.function failed due to `Can not cast "
                    f"{_tensor_text(x, nm)} to {a.spec(nm)!r}`.",
                    "a signature takes exactly its saved shapes and dtypes")))
        out = self._parent._run(self._c, conv)
        if self._outputs is None:
            return out
        flat = _nest.flatten(out)
        return dict(zip(self._outputs, flat))

    def __repr__(self) -> str:
        return f"<ConcreteFunction {self._parent._name}>"


class _SignatureMap(Mapping[str, Any]):
    """``loaded.signatures``: signature name -> concrete function (outputs as a dict)."""

    def __init__(self, sigs: dict[str, Any]) -> None:
        self._sigs = sigs

    def __getitem__(self, key: str) -> Any:
        return self._sigs[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._sigs)

    def __len__(self) -> int:
        return len(self._sigs)

    def __repr__(self) -> str:
        return f"_SignatureMap({self._sigs!r})"


class _UserObject:
    """A loaded object: its variables, sub-objects and functions as attributes."""

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        f = self.__dict__.get("__call__")
        if f is None:
            raise hinted(TypeError(with_hint(
                "'_UserObject' object is not callable",
                "the saved object had no traced __call__ tf.function")))
        return f(*args, **kwargs)

    def __repr__(self) -> str:
        return "<tapegrad.tf.saved_model _UserObject>"


def _read(export_dir: str) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    jpath = os.path.join(export_dir, _JSON)
    npath = os.path.join(export_dir, _NPZ)
    if not os.path.isfile(jpath):
        from .errors import NotFoundError

        raise hinted(NotFoundError(None, None, with_hint(
            f"Could not find SavedModel .pb or .pbtxt at supplied export directory path: "
            f"{export_dir}. Check that the directory exists and that you have the right "
            "permissions for accessing it.",
            "tapegrad writes saved_model.json (it does not read TensorFlow's protobuf "
            "format)")))

    def no_const(s: str) -> Any:
        raise _bad(f"non-standard JSON constant {s}")

    try:
        with open(jpath, encoding="utf-8") as fh:
            doc = json.loads(fh.read(), parse_constant=no_const)
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise _bad(f"{_JSON} is not valid JSON ({e})") from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise _bad(f"{_JSON} is not a {FORMAT} file")
    if doc.get("version") != VERSION:
        raise _bad(f"unsupported version {doc.get('version')!r:.20}")
    arrays: dict[str, np.ndarray] = {}
    try:
        with np.load(npath, allow_pickle=False) as z:
            for k in z.files:
                arrays[k] = z[k]
    except (OSError, ValueError) as e:
        raise _bad(f"{_NPZ} cannot be read without pickle ({e})") from None
    for k, a in arrays.items():
        if a.dtype.name not in _DTYPES:
            raise _bad(f"array {k!r} has dtype {a.dtype}")
    return doc, arrays


def load(export_dir: str | os.PathLike[str], tags: Any = None, options: Any = None) -> Any:
    """``tf.saved_model.load``: the saved object with its variables and functions.

    Everything is checked before anything is built (see the module docstring);
    a corrupted or hostile directory raises ``ValueError`` and runs nothing.
    """
    try:
        return _load(os.fspath(export_dir))
    except RecursionError:
        raise _bad("the JSON is nested too deeply") from None


def _load(d: str) -> Any:
    from .variables import Variable

    doc, arrays = _read(d)
    _, ops = _op_table()
    vj = doc.get("variables")
    if not isinstance(vj, list):
        raise _bad("missing variables")
    specs: list[tuple[str, bool, np.ndarray]] = []
    for i, v in enumerate(vj):
        if not isinstance(v, dict) or not isinstance(v.get("name"), str) or \
                not isinstance(v.get("trainable"), bool):
            raise _bad(f"variable {i}: bad entry")
        dt = _dtype(v.get("dtype"), f"variable {i}")
        shape = _shape(v.get("shape"), f"variable {i}")
        a = arrays.get(f"v{i}")
        if a is None or a.dtype != dt or a.shape != shape:
            raise _bad(f"variable {i} ({v['name']}): the stored array does not have the "
                       f"declared dtype {dt} and shape {shape}")
        specs.append((v["name"], v["trainable"], a))
    # every function is checked before any variable exists
    fj = doc.get("functions")
    if not isinstance(fj, list):
        raise _bad("missing functions")
    variables: list[Any] = []
    fns = [RestoredFunction(f, arrays, ops, variables, len(specs), f"function {i}")
           for i, f in enumerate(fj)]
    sj = doc.get("signatures", {})
    if not isinstance(sj, dict):
        raise _bad("bad signatures")
    sig_checked: list[tuple[str, int, int, list[str]]] = []
    for name, s in sj.items():
        if not isinstance(s, dict):
            raise _bad(f"signature {name!r}: bad entry")
        j = _int(s.get("function"), f"signature {name!r}")
        k = _int(s.get("concrete"), f"signature {name!r}")
        outs = s.get("outputs")
        if j >= len(fns) or k >= len(fns[j]._concrete) or not isinstance(outs, list) or \
                not all(isinstance(o, str) for o in outs):
            raise _bad(f"signature {name!r}: bad entry")
        sig_checked.append((name, j, k, outs))
    root_j: Any = doc.get("root")
    _check_tree(root_j, len(specs), len(fns))
    for name, trainable, a in specs:
        variables.append(Variable(a.copy(), trainable=trainable, name=name))
    root = _build_tree(root_j, variables, fns)
    sigs = {name: _RestoredConcrete(fns[j], fns[j]._concrete[k], outs)
            for name, j, k, outs in sig_checked}
    root.signatures = _SignatureMap(sigs)
    return root


def _check_tree(t: Any, n_vars: int, n_fns: int, depth: int = 0) -> None:
    if depth > 100 or not isinstance(t, dict) or set(t) != {"variables", "children", "lists",
                                                           "functions"}:
        raise _bad("bad object tree")
    for key, limit in (("variables", n_vars), ("functions", n_fns)):
        m = t[key]
        if not isinstance(m, dict) or not all(isinstance(v, int) and not isinstance(v, bool)
                                              and 0 <= v < limit for v in m.values()):
            raise _bad(f"bad object tree ({key})")
    if not isinstance(t["children"], dict) or not isinstance(t["lists"], dict):
        raise _bad("bad object tree")
    for c in t["children"].values():
        _check_tree(c, n_vars, n_fns, depth + 1)
    for items in t["lists"].values():
        if not isinstance(items, list):
            raise _bad("bad object tree (lists)")
        for x in items:
            if x is None:
                continue
            if isinstance(x, dict) and set(x) == {"variable"}:
                _int(x["variable"], "list variable")
                if x["variable"] >= n_vars:
                    raise _bad("bad object tree (list variable)")
            else:
                _check_tree(x, n_vars, n_fns, depth + 1)
    for name in [*t["variables"], *t["children"], *t["lists"], *t["functions"]]:
        if not isinstance(name, str) or not name.isidentifier() or name == "signatures" or \
                (name.startswith("__") and name != "__call__"):
            raise _bad(f"bad attribute name {name!r:.40}")


def _build_tree(t: dict[str, Any], variables: list[Any], fns: list[RestoredFunction]) -> Any:
    obj: Any = _UserObject()
    for name, i in t["variables"].items():
        setattr(obj, name, variables[i])
    for name, j in t["functions"].items():
        setattr(obj, name, fns[j])
    for name, c in t["children"].items():
        setattr(obj, name, _build_tree(c, variables, fns))
    for name, items in t["lists"].items():
        out: list[Any] = []
        for x in items:
            if x is None:
                out.append(None)
            elif set(x) == {"variable"}:
                out.append(variables[x["variable"]])
            else:
                out.append(_build_tree(x, variables, fns))
        setattr(obj, name, out)
    return obj

