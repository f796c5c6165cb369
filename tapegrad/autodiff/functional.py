"""The functional transforms, written once for both front-ends.

``grad``, ``value_and_grad``, ``vjp``, ``jvp``, ``linearize``, ``jacrev``,
``jacfwd``, ``hessian`` and ``vmap`` take a function of tensors and return a
function (or values), JAX / ``torch.func`` style.  They work on pytrees
(tuples, lists and dicts of tensors) and nest in any order: each is built on
one mechanism --- reverse mode on the engine, forward mode on
:class:`~tapegrad.autodiff.forward.JVPLevel`, batching on
:class:`~tapegrad.autodiff.batching.BatchLevel` --- and every op dispatches to
the innermost transform among its inputs.

>>> import tapegrad as tg
>>> from tapegrad import func
>>> f = lambda x: (x ** 3).sum()
>>> func.grad(f)(tg.tensor([1.0, 2.0])).tolist()
[3.0, 12.0]
>>> func.jacfwd(func.grad(f))(tg.tensor([1.0, 2.0])).tolist()  # the Hessian
[[6.0, 0.0], [0.0, 12.0]]
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .. import engine, ops
from .._core import errors
from .._core.dispatch import copy_tracer
from .._core.mode import STATE as _STATE
from .._core.node import AccumulateGrad
from .._core.registry import edge_of
from .._core.tensor import Tensor, make
from .._core.tensor import restyle as _restyle
from .batching import Basis, BatchLevel, _direct, basis_of
from .forward import JVPLevel

# ---------------------------------------------------------------------------- pytrees


def tree_flatten(tree: Any) -> tuple[list[Any], Any]:
    """Leaves of ``tree`` (tuples, lists and dicts are nodes; everything else a leaf)."""
    if isinstance(tree, Tensor):  # the common leaf first
        return [tree], None
    if isinstance(tree, (tuple, list)) and not hasattr(tree, "_fields"):
        leaves: list[Any] = []
        specs = []
        for t in tree:
            lv, sp = tree_flatten(t)
            leaves.extend(lv)
            specs.append((len(lv), sp))
        return leaves, (type(tree), specs)
    if isinstance(tree, tuple):  # a namedtuple
        leaves, specs = [], []
        for t in tree:
            lv, sp = tree_flatten(t)
            leaves.extend(lv)
            specs.append((len(lv), sp))
        return leaves, (type(tree), specs)
    if isinstance(tree, dict):
        leaves, specs = [], []
        keys = list(tree.keys())
        for k in keys:
            lv, sp = tree_flatten(tree[k])
            leaves.extend(lv)
            specs.append((len(lv), sp))
        return leaves, (type(tree), (keys, specs))
    return [tree], None


def tree_unflatten(spec: Any, leaves: Sequence[Any]) -> Any:
    """The inverse of :func:`tree_flatten`."""
    if spec is None:
        return leaves[0]
    kind, specs = spec
    if issubclass(kind, dict):
        keys, subs = specs
        out: dict[Any, Any] = kind() if kind is not dict else {}
        i = 0
        for k, (n, sp) in zip(keys, subs):
            out[k] = tree_unflatten(sp, leaves[i:i + n])
            i += n
        return out
    items = []
    i = 0
    for n, sp in specs:
        items.append(tree_unflatten(sp, leaves[i:i + n]))
        i += n
    if kind is list:
        return items
    if kind is tuple:
        return tuple(items)
    return kind(*items)  # a namedtuple


def tree_map(fn: Callable[[Any], Any], tree: Any) -> Any:
    leaves, spec = tree_flatten(tree)
    return tree_unflatten(spec, [fn(v) for v in leaves])


# ---------------------------------------------------------------------------- helpers


def _as_tensor(x: Any) -> Tensor:
    if isinstance(x, Tensor):
        return x
    return make(np.asarray(x, dtype=np.result_type(x, np.float64)
                           if not isinstance(x, np.ndarray) else None))


def _name(f: Any) -> str:
    return getattr(f, "__name__", type(f).__name__)


def _check_argnums(argnums: Any, n: int, name: str) -> tuple[int, ...]:
    """PyTorch's ``_slice_argnums`` checks, in its order and with its messages."""
    if not isinstance(argnums, (int, tuple)):
        raise errors.hinted(RuntimeError(errors.with_hint(
            f"argnums must be int or Tuple[int, ...], got: {type(argnums)}",
            "argnums names positional arguments by index")))
    nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    for a in nums:
        if not isinstance(a, int):
            raise errors.hinted(RuntimeError(errors.with_hint(
                f"argnum must be int, got: {type(a)}",
                "argnums names positional arguments by index")))
        if not -n <= a < n:
            raise errors.hinted(RuntimeError(errors.with_hint(
                f"Got argnum={a}, but only {n} positional inputs",
                f"{name} can only differentiate positional arguments")))
    if not nums:
        raise errors.hinted(RuntimeError(errors.with_hint(
            "argnums must be non-empty", "pass the index of an argument")))
    wrapped = tuple(a % n for a in nums)
    if len(set(wrapped)) != len(wrapped):
        raise errors.hinted(RuntimeError(errors.with_hint(
            f"argnums elements must be unique, got {argnums}", "name each argument once")))
    return wrapped


def _pprint(tree: Any) -> str:
    """``torch.utils._pytree.treespec_pprint`` of ``tree``'s structure."""
    if isinstance(tree, dict):
        return "{" + ", ".join(f"{k!r}: {_pprint(v)}" for k, v in tree.items()) + "}"
    if isinstance(tree, list):
        return "[" + ", ".join(_pprint(v) for v in tree) + "]"
    if isinstance(tree, tuple):
        inner = ", ".join(_pprint(v) for v in tree)
        if hasattr(tree, "_fields"):
            return f"{type(tree).__name__}({inner})"
        return f"({inner},)" if len(tree) == 1 else f"({inner})"
    return "*"


def _check_primal(x: Any) -> None:
    """PyTorch's transforms take tensors only (NumPy arrays are the core's own inputs)."""
    if not isinstance(x, (Tensor, np.ndarray)):
        raise errors.hinted(ValueError(errors.with_hint(
            f"Thing passed to transform API must be Tensor, got {type(x)}",
            "wrap the value in a tensor")))


def _dtype_name(t: Tensor) -> str:
    """The dtype as the tensor's front-end prints it (``torch.int64``)."""
    return str(getattr(t, "dtype", t._data.dtype))


def _check_aux(aux: Any) -> None:
    for v in tree_flatten(aux)[0]:
        if not isinstance(v, Tensor):
            raise errors.hinted(RuntimeError(errors.with_hint(
                f"Expected tensors, got unsupported type {type(v)}",
                "aux holds tensors (tuples/lists/dicts of tensors)")))


def _leaf_like(x: Any) -> Tensor:
    """A fresh input to differentiate with respect to (linked to ``x`` when ``x`` is tracked)."""
    x = _as_tensor(x)
    if x._data.dtype.kind not in "fc":
        raise errors.hinted(RuntimeError(errors.with_hint(
            "only Tensors of floating point dtype can require gradients",
            f"the input has dtype {x._data.dtype}; differentiate with respect to floats")))
    t = ops.identity(x)
    if not (t._rg or t._node is not None):
        t._rg = True
    return t


def _tracked_below(t: Any) -> bool:
    """Whether ``t`` is recorded, or is a transform's tracer whose value at a level below is
    (a vmapped tensor that requires grad: ``vmap(grad(f))(params)`` with stacked ``params``
    differentiated again outside)."""
    if not isinstance(t, Tensor):
        return False
    if t._rg or t._node is not None:
        return True
    if t._lvl is None:
        return False
    d = t.__dict__
    below = d.get("_bval", d.get("_primal"))
    if below is None:
        return False
    if isinstance(below, Tensor):
        return _tracked_below(below)
    return any(_tracked_below(getattr(below, k, None)) for k in ("v", "z"))  # a Diag


def _needs_graph(roots: list[Any], targets: set[Any], originals: list[Tensor],
                 walked: list[bool] | None = None) -> bool:
    """Whether the backward pass must itself be recorded: something outside differentiates it.

    ``walked`` caches the part that depends on the graph alone (whether it reaches a
    tracked tensor other than the targets) for calls on the same graph.
    """
    if not _STATE.grad_enabled:
        return False
    if _STATE.tapes or any(_tracked_below(o) for o in originals):
        return True
    if walked:
        return walked[0]
    deps = engine._count_deps([r for r in roots if r is not None], None, None, set())
    res = any(n.__class__ is AccumulateGrad and n not in targets for n in deps)
    if walked is not None:
        walked.append(res)
    return res


def _vjp_core(outs: list[Tensor], cots: list[Tensor], inputs: list[Tensor],
              originals: list[Tensor], retain: bool,
              walked: list[bool] | None = None) -> list[Tensor]:
    """Cotangents of ``inputs`` for output cotangents ``cots`` (zeros where not reached)."""
    roots = []
    seeds = []
    for o, c in zip(outs, cots):
        if o._node is None and not o._rg:
            continue  # does not depend on any input
        roots.append(edge_of(o))
        seeds.append(c)
    targets = [edge_of(t) for t in inputs]
    res: dict[Any, Tensor] = {}
    if roots:
        create = _needs_graph(roots, set(targets), originals, walked)
        res, _ = engine.run_backward(roots, seeds, targets, retain or create, create)
    out = []
    for t, k, o in zip(inputs, targets, originals):
        g = res.get(k)
        if g is None:
            g = ops.multiply(t, 0.0) if t._lvl is not None else \
                make(np.zeros_like(t._data), None, False, t._style)
        out.append(_restyle(g, o._style))
    return out


def _check_out(out: Any, name: str) -> list[Tensor]:
    return _check_leaves(tree_flatten(out)[0], name)


def _check_leaves(leaves: list[Any], name: str) -> list[Tensor]:
    for v in leaves:
        if not isinstance(v, Tensor):
            raise errors.hinted(RuntimeError(errors.with_hint(
                f"{name}: expected f(*primals) to return only tensors, got unsupported type "
                f"{type(v)}", "return tensors (or tuples/lists/dicts of tensors)")))
    return leaves


# ---------------------------------------------------------------------------- reverse mode


def vjp(f: Callable[..., Any], *primals: Any, has_aux: bool = False) -> Any:
    """``(f(*primals), vjp_fn)``: ``vjp_fn(cotangents)`` gives one cotangent per primal.

    ``vjp_fn`` may be called many times (the graph is kept until it is dropped).
    With ``has_aux=True``, ``f`` returns ``(output, aux)`` and ``vjp`` returns
    ``(output, vjp_fn, aux)``.
    """
    return _vjp(f, primals, has_aux, True)


def _vjp(f: Callable[..., Any], primals: tuple[Any, ...], has_aux: bool, cut: bool) -> Any:
    """:func:`vjp`; with ``cut=False`` the output is handed back as it is (for a caller that
    only differentiates it: ``jacrev``)."""
    leaves, spec = tree_flatten(primals)
    for v in leaves:
        _check_primal(v)
    originals = [_as_tensor(v) for v in leaves]
    with _grad_on():
        inputs = [_leaf_like(v) for v in originals]
        res = f(*tree_unflatten(spec, inputs))
    aux = None
    if has_aux:
        if not (isinstance(res, tuple) and len(res) == 2):
            raise errors.hinted(RuntimeError(errors.with_hint(
                "vjp(f, *primals): output of function f should be a tuple: (output, aux) "
                "if has_aux is True", "return (output, aux)")))
        res, aux = res
        _check_aux(aux)
    outs, out_spec = tree_flatten(res)
    _check_leaves(outs, "vjp(f, *primals)")
    out_text = _pprint(res)

    def vjp_fn(*cotangents: Any) -> tuple[Any, ...]:
        ct = cotangents[0] if len(cotangents) == 1 else cotangents
        cts, ct_spec = tree_flatten(ct)
        if ct_spec != out_spec:
            raise errors.hinted(RuntimeError(errors.with_hint(
                f"Expected pytree structure of cotangents to be the same as pytree structure "
                f"of outputs to the function. cotangents: {_pprint(ct)}, primal output: "
                f"{out_text}", "pass one cotangent per output, in the output's structure")))
        cts = [_as_tensor(c) for c in cts]
        for c, o in zip(cts, outs):
            if c._data.shape != o._data.shape:
                raise errors.hinted(RuntimeError(errors.with_hint(
                    f"Mismatch in shape: grad_output[0] has a shape of "
                    f"torch.Size({list(c._data.shape)}) and output[0] has a shape of "
                    f"torch.Size({list(o._data.shape)}).", "a cotangent has its output's shape")))
        gs = _vjp_core(outs, cts, inputs, originals, True, walked)
        return tuple(tree_unflatten(spec, gs))

    walked: list[bool] = []  # the graph is the same for every call of vjp_fn
    # what vjp_fn runs, for a caller that flattens the cotangents itself (jacrev)
    vjp_fn.__dict__["parts"] = (outs, inputs, originals, walked)
    if not (cut or has_aux):
        return res, vjp_fn
    keep = _needs_graph([edge_of(o) for o in outs if o._node is not None or o._rg],
                        {edge_of(t) for t in inputs}, originals, walked)
    if has_aux:
        return _cut_tree(res, keep), vjp_fn, _cut_tree(aux, keep)
    return _cut_tree(res, keep), vjp_fn


def _cut(t: Any, keep: bool) -> Any:
    """An output handed back by a transform, cut from the graph of the transform's own inputs.

    Kept as it is when something outside the transform differentiates it (``keep``);
    a tracer of an outer transform stays that tracer.
    """
    if keep or not isinstance(t, Tensor) or not _tracked_below(t):
        return t
    r = make(t._data, None, False, t._style)
    r._vc = t._vc
    if t._lvl is not None:
        copy_tracer(t, r)
        d = r.__dict__
        # the value a level below holds the transform's own graph too (a vmapped output:
        # its batch was computed from the differentiated inputs): cut it as well
        for k in ("_bval", "_primal", "_tangent"):
            v = d.get(k)
            if isinstance(v, Tensor):
                d[k] = _cut(v, keep)
    return r


def _cut_tree(tree: Any, keep: bool) -> Any:
    return tree_map(lambda t: _cut(t, keep), tree)


ACTIVE = [0]
"""How many function transforms (``grad``, ``vjp``, ``jvp``, ``vmap`` and those built on
them) are running their function now: PyTorch's ``_are_functorch_transforms_active``."""


class _active:
    """A function transform running its function (counted in :data:`ACTIVE`)."""

    def __enter__(self) -> None:
        ACTIVE[0] += 1

    def __exit__(self, *exc: object) -> None:
        ACTIVE[0] -= 1


class _grad_on(_active):
    """Grad mode on inside a transform (``grad`` ignores an outer ``no_grad``, as functorch)."""

    def __enter__(self) -> None:
        ACTIVE[0] += 1
        self.prev = _STATE.grad_enabled
        _STATE.grad_enabled = True

    def __exit__(self, *exc: object) -> None:
        ACTIVE[0] -= 1
        _STATE.grad_enabled = self.prev


def _grad_impl(f: Callable[..., Any], argnums: Any, has_aux: bool, name: str,
               args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, Any, Any]:
    nums = _check_argnums(argnums, len(args), name)
    args = list(args)  # type: ignore[assignment]
    flat: list[tuple[int, list[Tensor], Any, list[Tensor]]] = []
    for a in nums:
        for v in tree_flatten(args[a])[0]:
            _check_primal(v)
    with _grad_on():
        for a in nums:
            leaves, spec = tree_flatten(args[a])
            originals = [_as_tensor(v) for v in leaves]
            inputs = [_leaf_like(v) for v in originals]
            args[a] = tree_unflatten(spec, inputs)  # type: ignore[index]
            flat.append((a, inputs, spec, originals))
        res = f(*args, **kwargs)
    aux = None
    if has_aux:
        if not (isinstance(res, tuple) and len(res) == 2):
            raise errors.hinted(RuntimeError(errors.with_hint(
                "grad_and_value(f)(*args): output of function f should be a tuple: (output, "
                "aux) if has_aux is True", "return (output, aux)")))
        res, aux = res
        _check_aux(aux)
    if not isinstance(res, Tensor):
        raise errors.hinted(RuntimeError(errors.with_hint(
            f"grad_and_value(f)(*args): Expected f(*args) to return a Tensor, got {type(res)}",
            "the function must return one scalar tensor")))
    if res._data.ndim != 0:
        raise errors.hinted(RuntimeError(errors.with_hint(
            "grad_and_value(f)(*args): Expected f(*args) to return a scalar Tensor, got tensor with "
            f"{res._data.ndim} dims. Maybe you wanted to use the vjp or jacrev APIs instead?",
            f"the output has shape {list(res._data.shape)}; reduce it (e.g. .sum())")))
    inputs_all = [t for _, ins, _, _ in flat for t in ins]
    originals_all = [t for _, _, _, o in flat for t in o]
    seed = make(np.ones((), res._data.dtype), None, False, res._style)
    keep = res._node is not None and _needs_graph(
        [res._node], {edge_of(t) for t in inputs_all}, originals_all)
    gs = _vjp_core([res], [seed], inputs_all, originals_all, retain=False)
    res = _cut(res, keep)
    aux = _cut_tree(aux, keep)
    out = []
    i = 0
    for _, ins, spec, _ in flat:
        out.append(tree_unflatten(spec, gs[i:i + len(ins)]))
        i += len(ins)
    grads = out[0] if isinstance(argnums, int) else tuple(out)
    return grads, res, aux


def grad(f: Callable[..., Any], argnums: Any = 0, has_aux: bool = False) -> Callable[..., Any]:
    """The gradient of a scalar function with respect to the arguments ``argnums``.

    With ``has_aux=True``, ``f`` returns ``(output, aux)`` and the gradient
    function returns ``(grads, aux)``.
    """

    @functools.wraps(f)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        g, _, aux = _grad_impl(f, argnums, has_aux, "grad", args, kwargs)
        return (g, aux) if has_aux else g

    return wrapper


def grad_and_value(f: Callable[..., Any], argnums: Any = 0,
                   has_aux: bool = False) -> Callable[..., Any]:
    """``(grad, value)`` (PyTorch's order); with ``has_aux``: ``(grad, (value, aux))``."""

    @functools.wraps(f)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        g, v, aux = _grad_impl(f, argnums, has_aux, "grad_and_value", args, kwargs)
        return (g, (v, aux)) if has_aux else (g, v)

    return wrapper


def value_and_grad(f: Callable[..., Any], argnums: Any = 0,
                   has_aux: bool = False) -> Callable[..., Any]:
    """``(value, grad)`` (JAX's order); with ``has_aux``: ``((value, aux), grad)``."""

    @functools.wraps(f)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        g, v, aux = _grad_impl(f, argnums, has_aux, "value_and_grad", args, kwargs)
        return ((v, aux), g) if has_aux else (v, g)

    return wrapper


# ---------------------------------------------------------------------------- forward mode


def jvp(f: Callable[..., Any], primals: Any, tangents: Any, has_aux: bool = False) -> Any:
    """``(f(*primals), J @ tangents)`` in one forward pass (forward mode).

    ``primals`` and ``tangents`` are tuples of the same structure.
    """
    if not isinstance(primals, tuple):
        raise errors.hinted(RuntimeError(errors.with_hint(
            "jvp(f, primals, tangents): Expected primals to be a tuple. E.g. it should be "
            "valid to call f(*primals).", "pass primals=(x,)")))
    pl, spec = tree_flatten(primals)
    tl, tspec = tree_flatten(tangents)
    if spec != tspec:
        raise errors.hinted(RuntimeError(errors.with_hint(
            "jvp(f, primals, tangents): Expected primals and tangents to have the same python "
            f"structure. For example, if primals is a tuple of 3 tensors, tangents also must "
            f"be. Got primals with structure {_spec_repr(primals)} and tangents with "
            f"structure {_spec_repr(tangents)}", "pass one tangent per primal")))
    for what, vals in (("primals", pl), ("tangents", tl)):
        for v in vals:
            if not isinstance(v, (Tensor, np.ndarray)):
                raise errors.hinted(RuntimeError(errors.with_hint(
                    f"jvp(f, primals, tangents): Expected {what} to only contain Tensors, got "
                    f"{type(v)}", f"the {what} are tensors")))
    pl = [_as_tensor(p) for p in pl]
    tl = [_as_tensor(t) for t in tl]
    for p, t in zip(pl, tl):
        if p._data.dtype.kind not in "fc":
            raise errors.hinted(ValueError(errors.with_hint(
                f"Expected primal to be floating point or complex, but got: "
                f"{_dtype_name(p)}", "forward mode needs float primals")))
        if p._data.shape != t._data.shape:
            raise errors.hinted(RuntimeError(errors.with_hint(
                "Trying to set a forward gradient that has a different size than that of the "
                "original Tensor, this is not supported. Tensor is of size "
                f"{list(p._data.shape)} while the given forward gradient is of size "
                f"{list(t._data.shape)}.", "a tangent has its primal's shape")))
    return _jvp(f, spec, pl, tl, has_aux)


def _jvp(f: Callable[..., Any], spec: Any, pl: list[Tensor], tl: list[Tensor],
         has_aux: bool) -> Any:
    """:func:`jvp` on checked, flattened primals and tangents (``spec`` their structure)."""
    with JVPLevel() as lv, _active():
        duals = [lv.make(p, t) for p, t in zip(pl, tl)]
        res = f(*tree_unflatten(spec, duals))
        aux = None
        if has_aux:
            if not (isinstance(res, tuple) and len(res) == 2):
                raise errors.hinted(RuntimeError(errors.with_hint(
                    "jvp(f, primals, tangents): output of function f should be a tuple: "
                    "(output, aux) if has_aux is True", "return (output, aux)")))
            res, aux = res
            _check_aux(aux)
        outs, ospec = tree_flatten(res)
        _check_leaves(outs, "jvp(f, primals, tangents)")
        po, to = [], []
        for o in outs:
            p, t = lv.unpack(o)
            if isinstance(p, Tensor) and p._node is not None:
                p = ops.identity(p)  # PyTorch hands the primal back as an alias (AliasBackward0)
            po.append(_restyle(p, o._style) if isinstance(p, Tensor) else p)
            if t is None:
                t = make(np.zeros_like(o._data), None, False, o._style)
            to.append(_restyle(t, o._style))
        if has_aux:
            aux = tree_map(lambda a: lv.unpack(a)[0], aux)
    out = (tree_unflatten(ospec, po), tree_unflatten(ospec, to))
    return out + (aux,) if has_aux else out


def linearize(f: Callable[..., Any], *primals: Any) -> tuple[Any, Callable[..., Any]]:
    """``(f(*primals), jvp_fn)`` where ``jvp_fn(*tangents)`` is the JVP at ``primals``."""
    out = f(*primals)

    def jvp_fn(*tangents: Any) -> Any:
        return jvp(f, primals, tangents)[1]

    return out, jvp_fn


# ---------------------------------------------------------------------------- batching


def _is_node(x: Any) -> bool:
    """A pytree node (tuple, list, namedtuple, dict); everything else, None too, is a leaf."""
    return isinstance(x, (tuple, list, dict))


def _spec_repr(tree: Any, indent: int = 0) -> str:
    """``repr(torch.utils._pytree.tree_flatten(tree)[1])``: PyTorch's TreeSpec text."""
    if not _is_node(tree):
        return "*"
    if isinstance(tree, dict):
        ctx, kids = repr(list(tree.keys())), list(tree.values())
    elif hasattr(tree, "_fields"):
        ctx, kids = repr(type(tree)), list(tree)
    else:
        ctx, kids = "None", list(tree)
    out = f"TreeSpec({type(tree).__name__}, {ctx}, ["
    if kids:
        indent += 2
        out += _spec_repr(kids[0], indent) + ("," if len(kids) > 1 else "")
        out += ",".join("\n" + " " * indent + _spec_repr(k, indent) for k in kids[1:])
    return out + "])"


def _n_leaves(tree: Any) -> int:
    if not _is_node(tree):
        return 1
    kids = tree.values() if isinstance(tree, dict) else tree
    return sum(_n_leaves(k) for k in kids)


def _broadcast_dims(dims: Any, tree: Any) -> list[Any] | None:
    """``dims`` as one entry per leaf of ``tree`` (a leaf of ``dims`` covers a whole
    subtree), or None where the structures differ (PyTorch's ``_broadcast_to_and_flatten``)."""
    if not _is_node(dims):
        return [dims] * _n_leaves(tree)
    if not _is_node(tree) or type(dims) is not type(tree):
        return None
    if isinstance(dims, dict):
        if list(dims.keys()) != list(tree.keys()):
            return None
        pairs = [(dims[k], tree[k]) for k in dims]
    else:
        if len(dims) != len(tree):
            return None
        pairs = list(zip(dims, tree))
    out: list[Any] = []
    for d, t in pairs:
        sub = _broadcast_dims(d, t)
        if sub is None:
            return None
        out.extend(sub)
    return out


def _dims_for(spec_tree: Any, dims: Any, n: int, name: str) -> list[Any]:
    """``in_dims`` expanded to one entry per leaf of the arguments ``spec_tree``."""
    flat = _broadcast_dims(dims, spec_tree)
    if flat is None:
        raise errors.hinted(ValueError(errors.with_hint(
            f"{name}: in_dims is not compatible with the structure of `inputs`. in_dims has "
            f"structure {_spec_repr(dims)} but inputs has structure {_spec_repr(spec_tree)}.",
            "in_dims mirrors the arguments' structure")))
    return flat


def vmap(f: Callable[..., Any], in_dims: Any = 0, out_dims: Any = 0, randomness: str = "error",
         *, chunk_size: int | None = None) -> Callable[..., Any]:
    """``f`` mapped over axis ``in_dims`` of its inputs, results stacked on ``out_dims``.

    ``in_dims`` is an int, ``None`` (not mapped) or a tuple with one entry per
    argument (nested like the argument); ``out_dims`` likewise for the outputs.
    ``chunk_size`` runs the batch in chunks of that many examples.
    """
    if randomness not in ("error", "different", "same"):
        raise errors.hinted(RuntimeError(errors.with_hint(
            f"Only allowed values for randomness are 'error', 'different', or 'same'. Got "
            f"{randomness}", "pick one of the three")))

    @functools.wraps(f)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        name = _name(f)
        if not isinstance(in_dims, (tuple, int)):
            raise errors.hinted(ValueError(errors.with_hint(
                f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): expected `in_dims` to be int or "
                f"a (potentially nested) tuple matching the structure of inputs, got: "
                f"{type(in_dims)}.", "in_dims is an int or a tuple")))
        if not args:
            raise errors.hinted(ValueError(errors.with_hint(
                f"vmap({name})(<inputs>): got no inputs. Maybe you forgot to add inputs, or you "
                "are trying to vmap over a function with no inputs. The latter is unsupported.",
                "pass the tensors to map over")))
        leaves, spec = tree_flatten(args)
        dims = _dims_for(args, in_dims, len(leaves), f"vmap({name}, in_dims={in_dims}, ...)"
                                                     "(<inputs>)")
        for d in dims:
            if d is not None and not isinstance(d, int):
                raise errors.hinted(ValueError(errors.with_hint(
                    f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={d} for an "
                    "input but in_dim must be either an integer dimension or None.",
                    "an in_dims entry is an int or None")))
        size = None
        moved: list[Any] = []
        for i, (v, d) in enumerate(zip(leaves, dims)):
            if d is None:
                moved.append(v)
                continue
            if v.__class__ is Basis:  # the Jacobians' standard basis, held structured
                n = v.size
                if size is not None and n != size:
                    raise ValueError(f"vmap: a basis of {n} rows with a batch of {size}")
                size = n
                moved.append(v)
                continue
            if not isinstance(v, Tensor):
                if isinstance(v, np.ndarray):
                    v = make(v)
                else:
                    raise errors.hinted(ValueError(errors.with_hint(
                        f"vmap({_name(f)}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={d} for an "
                    "input "
                        f"but the input is of type {type(v)}. We cannot vmap over non-Tensor "
                        "arguments, please use None as the respective in_dim",
                        "non-tensor arguments need in_dims None")))
            nd = v._data.ndim
            if not -nd <= d < nd:
                raise errors.hinted(ValueError(errors.with_hint(
                    f"vmap({_name(f)}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={d} for "
                    "some input, "
                    f"but that input is a Tensor of dimensionality {nd} so expected in_dim to "
                    f"satisfy -{nd} <= in_dim < {nd}.",
                    f"input {i} has shape {list(v._data.shape)}")))
            d = d % nd
            n = v._data.shape[d]
            if size is None:
                size = n
            elif n != size:
                raise errors.hinted(ValueError(errors.with_hint(
                    f"vmap: Expected all tensors to have the same size in the mapped dimension, "
                    f"got sizes {[x._data.shape[dd % x._data.ndim] for x, dd in zip(leaves, dims) if dd is not None and isinstance(x, Tensor)]} "
                    "for the mapped dimension", "every mapped input needs one batch size")))
            mv = ops.moveaxis(v, d, 0) if d != 0 else v
            moved.append(basis_of(mv) or mv)  # an identity: held structured
        if size is None:
            raise errors.hinted(ValueError(errors.with_hint(
                "vmap: Expected at least one Tensor to vmap over",
                "map at least one tensor argument (an in_dims entry that is not None)")))
        if chunk_size is not None and chunk_size < size:
            pieces = []
            parts = []
            for s in range(0, size, chunk_size):
                part = [v if d is None else v.chunk(s, chunk_size) if v.__class__ is Basis
                        else ops.getitem(v, slice(s, s + chunk_size))
                        for v, d in zip(moved, dims)]
                parts.append(part)
                pieces.append(_run(f, spec, part, dims, min(chunk_size, size - s), kwargs,
                                   randomness))
            outs0, ospec, _, flags = pieces[0]
            merged = [ops.concatenate([p[0][k] for p in pieces], axis=0)
                      for k in range(len(outs0))]
            flags = [any(p[3][k] for p in pieces) for k in range(len(outs0))]
            written: dict[int, Tensor] = {}
            for i in set().union(*(p[2] for p in pieces)):
                written[i] = ops.concatenate([p[2].get(i, part[i]) for p, part in
                                              zip(pieces, parts)], axis=0)
            _write_back(leaves, dims, written)
            return _place(merged, ospec, out_dims, flags, name)
        outs, ospec, written, flags = _run(f, spec, moved, dims, size, kwargs, randomness)
        _write_back(leaves, dims, written)
        return _place(outs, ospec, out_dims, flags, name)

    return wrapper


def _write_back(leaves: list[Any], dims: list[Any], written: dict[int, Tensor]) -> None:
    """Inputs that ``f`` modified in place (``x.mul_(2)`` on a vmapped ``x``) get the new
    values, as PyTorch's ``vmap`` writes through to them (``written``: batch on axis 0)."""
    for i, new in written.items():
        orig = leaves[i]
        if not isinstance(orig, Tensor):
            continue
        d = dims[i] % orig._data.ndim
        new = ops.moveaxis(new, 0, d) if d else new
        if new._data.dtype != orig._data.dtype:
            new = ops.cast(new, dtype=orig._data.dtype)
        orig._assign_result(new, "vmap")


def _run(f: Callable[..., Any], spec: Any, moved: list[Any], dims: list[Any], size: int,
         kwargs: dict[str, Any], randomness: str
         ) -> tuple[list[Tensor], Any, dict[int, Tensor], list[bool]]:
    """Run ``f`` at a new batch level: the outputs with the batch on axis 0, their structure,
    the new batched values of the inputs ``f`` changed in place (by input position), and
    which outputs were batched (the others are broadcast)."""
    with BatchLevel(size, randomness) as lv, _active():
        tracers = [lv.make(v) if d is not None else v for v, d in zip(moved, dims)]
        before = [t._bval if d is not None else None for t, d in zip(tracers, dims)]
        res = f(*tree_unflatten(spec, tracers), **kwargs)
        written = {i: lv.value(t) for i, (t, b) in enumerate(zip(tracers, before))
                   if b is not None and t._bval is not b and isinstance(moved[i], Tensor)}
        outs, ospec = tree_flatten(res)
        vals = []
        batched: list[bool] = []
        for o in outs:
            if not isinstance(o, Tensor):
                raise errors.hinted(ValueError(errors.with_hint(
                    f"vmap({_name(f)}, ...): `{_name(f)}` must only return Tensors, got type "
                    f"{type(o)}. Did you mean to set out_dims= to None for output?",
                    "return tensors from the vmapped function")))
            if o._lvl is lv:
                vals.append(lv.value(o))
                batched.append(True)
            else:  # the same for every example: broadcast it
                vals.append(ops.broadcast_to(ops.expand_dims(o, 0), (size,) + o._data.shape))
                batched.append(False)
    return vals, ospec, written, batched


_ONE_ARG = tree_flatten((0,))[1]


def _map_basis(f: Callable[..., Any], basis: Basis, chunk_size: int | None = None,
               randomness: str = "error") -> Any:
    """``vmap(f, chunk_size=chunk_size, randomness=randomness)(basis)``, without the checks
    and pytree handling of a user's ``vmap`` (the Jacobians' one structured input)."""
    size = basis.size
    if chunk_size is not None and chunk_size < size:
        pieces = [_run(f, _ONE_ARG, [basis.chunk(s, chunk_size)], [0],
                       min(chunk_size, size - s), {}, randomness)[:2]
                  for s in range(0, size, chunk_size)]
        outs0, ospec = pieces[0]
        merged = [ops.concatenate([p[0][k] for p in pieces], axis=0)
                  for k in range(len(outs0))]
        return tree_unflatten(ospec, merged)
    outs, ospec, _, _ = _run(f, _ONE_ARG, [basis], [0], size, {}, randomness)
    return tree_unflatten(ospec, outs)


def _place(vals: list[Tensor], ospec: Any, out_dims: Any, batched: list[bool] | None = None,
           name: str = "f") -> Any:
    """The outputs with the batch moved to ``out_dims`` (PyTorch's checks and messages)."""
    if not isinstance(out_dims, int):
        for d in tree_flatten(out_dims)[0]:
            if d is not None and not isinstance(d, int):
                raise errors.hinted(ValueError(errors.with_hint(
                    f"vmap({name}, ..., out_dims={out_dims}): `out_dims` must be an int, None or "
                    "a python collection of ints representing where in the outputs the vmapped "
                    "dimension should appear.", "out_dims holds ints (or None)")))
    outputs = tree_unflatten(ospec, vals)
    dims: list[Any] | None
    if isinstance(outputs, Tensor):  # PyTorch's edge case: a bare tensor takes (d,) too
        dims = [out_dims] if out_dims is None or isinstance(out_dims, int) else \
            list(out_dims) if isinstance(out_dims, tuple) and len(out_dims) == 1 else None
    else:
        dims = _broadcast_dims(out_dims, outputs)
    if dims is None:
        raise errors.hinted(ValueError(errors.with_hint(
            f"vmap({name}, ..., out_dims={out_dims})(<inputs>): out_dims is not compatible with "
            f"the structure of `outputs`. out_dims has structure {_spec_repr(out_dims)} but "
            f"outputs has structure {_spec_repr(outputs)}.",
            "out_dims mirrors the outputs' structure")))
    res = []
    for k, (v, d) in enumerate(zip(vals, dims)):
        if d is None:
            if batched is not None and batched[k]:
                raise errors.hinted(ValueError(errors.with_hint(
                    f"vmap({name}, ...): `{name}` can not return a BatchedTensor when out_dim is "
                    "None", "out_dims=None is for outputs that do not depend on the batch")))
            res.append(ops.getitem(v, 0))
            continue
        n = v._data.ndim
        if not -n <= d < n:
            raise errors.hinted(IndexError(errors.with_hint(
                f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got "
                f"{d})", f"the output has {n - 1} dims per example, and the batch makes one more")))
        res.append(ops.moveaxis(v, 0, d) if d % n != 0 else v)
    return tree_unflatten(ospec, res)


# ---------------------------------------------------------------------------- Jacobians


def jacobian_rows(row: Callable[[Tensor], Sequence[Tensor | None]], basis: Any,
                  sources: Sequence[Tensor], vectorize: bool, create_graph: bool,
                  style: int = 0) -> list[Tensor | None]:
    """``row(seed)`` for every seed along ``basis``' leading axis, stacked per source.

    The one Jacobian routine of both front-ends (``torch.autograd.functional.jacobian``,
    ``GradientTape.jacobian`` and ``batch_jacobian``): ``row`` maps one cotangent to
    the gradient of each source (``None`` where it does not reach it); with
    ``vectorize`` all rows are one batched call (``vmap`` over the basis, PyTorch's
    ``vectorize=True`` and TensorFlow's pfor), else a loop of calls.  ``basis`` is an
    array, or a :class:`~tapegrad.autodiff.batching.Basis` (the standard basis, which
    ``vmap`` holds structured).  Each result has
    shape ``(len(basis),) + source.shape``; a source that no row reaches gives ``None``.
    """
    if vectorize:
        connected: list[bool] = []

        def one(seed: Tensor) -> list[Tensor]:
            gs = row(seed)
            connected[:] = [g is not None for g in gs]
            return [g if g is not None else make(np.zeros_like(s._data), None, False, style)
                    for g, s in zip(gs, sources)]

        res = _map_basis(one, basis) if basis.__class__ is Basis else \
            vmap(one)(make(basis, None, False, style))
        return [r if c else None for r, c in zip(res, connected)]
    if basis.__class__ is Basis:
        basis = basis.array()
    rows: list[list[Tensor | None]] = [[] for _ in sources]
    for i in range(basis.shape[0]):
        for k, g in enumerate(row(make(basis[i], None, False, style))):
            rows[k].append(g)
    out: list[Tensor | None] = []
    for s, rs in zip(sources, rows):
        if all(r is None for r in rs):
            out.append(None)
            continue
        filled = [r if r is not None else make(np.zeros_like(s._data), None, False, style)
                  for r in rs]
        if create_graph:
            out.append(_restyle(ops.stack(filled), style))
        else:
            out.append(make(np.stack([r._data for r in filled]), None, False, style))
    return out


def _reshaped(t: Tensor, shape: tuple[int, ...]) -> Tensor:
    return t if t._data.shape == shape else ops.reshape(t, shape)


def _jac_view(t: Tensor, shape: tuple[int, ...]) -> Tensor:
    """A Jacobian block in its final shape; one that an outer pass differentiates ends in a
    view, as PyTorch's (``grad_fn=<ViewBackward0>``)."""
    if t._data.shape != shape or t._node is not None:
        return ops.reshape(t, shape)
    return t


def _basis(shape: tuple[int, ...], dtype: Any, style: int) -> Basis:
    """The standard basis of a ``shape`` tensor, as ``vmap`` holds it structured."""
    return Basis(tuple(shape), dtype, style)


def jacrev(f: Callable[..., Any], argnums: Any = 0, *, has_aux: bool = False,
           chunk_size: int | None = None) -> Callable[..., Any]:
    """The Jacobian by reverse mode: one vectorized VJP per output element (``vmap`` of ``vjp``).

    The result has shape ``output.shape + input.shape`` (a tuple over ``argnums``
    when it is a tuple; a pytree over outputs when ``f`` returns one).
    """

    if chunk_size is not None and not (isinstance(chunk_size, int) and chunk_size > 0):
        raise errors.hinted(ValueError(errors.with_hint(
            "jacrev: `chunk_size` should be greater than 0.", "pass a positive chunk size")))

    @functools.wraps(f)
    def wrapper(*args: Any) -> Any:
        nums = _check_argnums(argnums, len(args), "jacrev")

        def g(*diff: Any) -> Any:
            full = list(args)
            for a, d in zip(nums, diff):
                full[a] = d
            return f(*full)

        diff_args = tuple(args[a] for a in nums)
        if has_aux:
            out, vjp_fn, aux = _vjp(g, diff_args, True, False)
        else:
            out, vjp_fn = _vjp(g, diff_args, False, False)
        outs, ospec = tree_flatten(out)
        v_outs, inputs, originals, walked = vjp_fn.__dict__["parts"]
        in_leaves, in_spec = tree_flatten(diff_args)
        per_out = []
        for k, o in enumerate(outs):
            basis = _basis(o._data.shape, o._data.dtype, o._style)

            def one(ct: Any, k: int = k) -> Any:
                # vjp_fn(cotangents), flattened, without its checks (the cotangents are
                # the basis and zeros, of the outputs' shapes)
                cts: list[Any] = [ct if j == k else
                                  make(np.zeros_like(oo._data), None, False, oo._style)
                                  for j, oo in enumerate(outs)]
                return _vjp_core(v_outs, cts, inputs, originals, True, walked)

            rows = _map_basis(one, basis, chunk_size)  # one row per output element
            jac_k = [_jac_view(r, o._data.shape + i._data.shape) if isinstance(i, Tensor)
                     else r for r, i in zip(rows, in_leaves)]
            tree_k = tree_unflatten(in_spec, jac_k)
            per_out.append(tree_k[0] if isinstance(argnums, int) else tree_k)
        res = tree_unflatten(ospec, per_out)
        return (res, aux) if has_aux else res

    return wrapper


def jacfwd(f: Callable[..., Any], argnums: Any = 0, has_aux: bool = False, *,
           randomness: str = "error") -> Callable[..., Any]:
    """The Jacobian by forward mode: one vectorized JVP per input element (``vmap`` of ``jvp``)."""

    @functools.wraps(f)
    def wrapper(*args: Any) -> Any:
        nums = _check_argnums(argnums, len(args), "jacfwd")
        leaves, in_spec = tree_flatten(tuple(args[a] for a in nums))
        for v in leaves:
            _check_primal(v)
        leaves = [_as_tensor(v) for v in leaves]
        for v in leaves:
            if v._data.dtype.kind not in "fc":
                raise errors.hinted(ValueError(errors.with_hint(
                    f"Expected primal to be floating point or complex, but got: "
                    f"{_dtype_name(v)}", "forward mode needs float primals")))
        sizes = [int(v._data.size) for v in leaves]
        total = sum(sizes)
        dtype = np.result_type(*[v._data.dtype for v in leaves])

        def g(*diff_leaves: Any) -> Any:
            full = list(args)
            tree = tree_unflatten(in_spec, list(diff_leaves))
            for a, d in zip(nums, tree):
                full[a] = d
            return f(*full)

        aux_box: list[Any] = []
        spec = tree_flatten(tuple(leaves))[1]

        def push(t: Any) -> Any:
            tangents = []
            start = 0
            for v, n in zip(leaves, sizes):
                part = t if n == total else ops.getitem(t, slice(start, start + n))
                tangents.append(_reshaped(part, v._data.shape))
                start += n
            res = _jvp(g, spec, leaves, tangents, has_aux)
            if has_aux:
                aux_box.append(res[2])
            return res[1]

        basis = Basis((total,), dtype, leaves[0]._style)
        cols = _map_basis(push, basis, None, randomness)  # (total, *out.shape) per output
        outs, ospec = tree_flatten(cols)
        per_out = []
        for c in outs:
            oshape = c._data.shape[1:]
            # (*out.shape, total)
            moved = c if not oshape else \
                make(np.moveaxis(c._data, 0, -1), None, False, c._style) if _direct([c]) else \
                ops.moveaxis(c, 0, -1)
            parts = []
            start = 0
            for v, n in zip(leaves, sizes):
                piece = moved if n == total else \
                    ops.getitem(moved, (Ellipsis, slice(start, start + n)))
                parts.append(_jac_view(piece, oshape + v._data.shape))
                start += n
            tree_k = tree_unflatten(in_spec, parts)
            per_out.append(tree_k[0] if isinstance(argnums, int) else tree_k)
        res = tree_unflatten(ospec, per_out)
        if has_aux:
            aux = f(*args)[1]
            return res, aux
        return res

    return wrapper


def hessian(f: Callable[..., Any], argnums: Any = 0) -> Callable[..., Any]:
    """The Hessian: ``jacfwd(jacrev(f))`` (forward over reverse)."""
    return jacfwd(jacrev(f, argnums), argnums)


def hvp(f: Callable[..., Any], primals: Any, tangents: Any) -> tuple[Any, Any]:
    """``(grad f(primals), H @ tangents)`` by forward over reverse: one pass of each."""
    return jvp(grad(f, argnums=tuple(range(len(primals)))), tuple(primals), tuple(tangents))


__all__ = [
    "grad", "grad_and_value", "value_and_grad", "vjp", "jvp", "linearize", "jacrev", "jacfwd",
    "hessian", "hvp", "vmap", "tree_flatten", "tree_unflatten", "tree_map",
]
