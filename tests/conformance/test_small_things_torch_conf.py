"""Conformance (issue 16): small things textbook code trips on, PyTorch style.

Ranges bit for bit, NumPy-style keyword aliases, conversion errors and type
names, each run on real PyTorch and on tapegrad.torch.  Skipped without
PyTorch.
"""

# ruff: noqa: B023  (each lambda is called at once, inside its loop step)
from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

real = pytest.importorskip("torch")
import tapegrad.torch as tt  # noqa: E402


def _run(mod: Any, fn: Callable[[Any], Any]) -> tuple[str, Any]:
    try:
        return "ok", fn(mod)
    except Exception as e:  # noqa: BLE001  (the exception type is what is compared)
        return "err", e


def _np(x: Any) -> Any:
    if isinstance(x, (tuple, list)):
        return [_np(v) for v in x]
    if hasattr(x, "detach"):
        return x.detach().numpy()
    return x


def same(fn: Callable[[Any], Any], *, msg: bool = True, exact: bool = True) -> None:
    """``fn(torch)`` and ``fn(tapegrad.torch)``: equal values and dtypes, or the same error."""
    k1, a = _run(real, fn)
    k2, b = _run(tt, fn)
    assert k1 == k2, (a, b)
    if k1 == "err":
        assert type(a).__name__ == type(b).__name__, (a, b)
        if msg:
            first = str(a).split("\n")[0].strip()
            assert first in str(b), (str(a), str(b))
        return
    av, bv = _np(a), _np(b)
    if isinstance(av, list):
        assert len(av) == len(bv)
        for x, y in zip(av, bv):
            _eq(x, y, exact)
    else:
        _eq(av, bv, exact)


def _eq(a: Any, b: Any, exact: bool = True) -> None:
    if isinstance(a, np.ndarray):
        assert isinstance(b, np.ndarray), b
        assert a.dtype == b.dtype and a.shape == b.shape, (a.dtype, a.shape, b.dtype, b.shape)
        if exact:
            np.testing.assert_array_equal(a, b)
        else:
            np.testing.assert_allclose(a, b, rtol=1e-12, atol=0)
    else:
        assert a == b


# ============================================================================ 1. ranges
def _random_ranges(seed: int, n: int) -> list[tuple[float, float, float]]:
    rng = np.random.default_rng(seed)
    out = []
    while len(out) < n:
        start = float(np.round(rng.uniform(-10, 10), rng.integers(0, 4)))
        step = float(np.round(rng.uniform(0.001, 2), rng.integers(1, 4)))
        step *= 1 if rng.random() < 0.8 else -1
        if step == 0:
            continue
        count = int(rng.integers(1, 300 if len(out) % 8 else 2500))
        end = start + step * count + float(np.round(rng.uniform(-1, 1) * abs(step), 2))
        out.append((start, end, step))
    return out


TEXTBOOK = [(-5.5, 1.0, 0.1), (-3.0, 3.0, 0.01), (0.0, 1.0, 0.1), (1.0, 1.3, 0.1),
            (-2.0, 2.0, 0.05), (0.5, 0.0, -0.1), (0, 10, 3), (10, 0, -3), (0.0, 0.3, 0.1)]


@pytest.fixture(autouse=True)
def _one_thread() -> Any:
    # PyTorch splits ranges over 2000 elements between threads; tapegrad follows
    # torch.get_num_threads() (1)
    n = real.get_num_threads()
    real.set_num_threads(1)
    yield
    real.set_num_threads(n)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int64", "int32", None])
def test_arange_bit_for_bit(dtype: str | None) -> None:
    for start, end, step in TEXTBOOK + _random_ranges(0, 120):
        same(lambda t: t.arange(start, end, step,
                                dtype=None if dtype is None else getattr(t, dtype)))


def test_arange_forms_and_errors() -> None:
    same(lambda t: t.arange(5))
    same(lambda t: t.arange(end=5))
    same(lambda t: t.arange(start=1, end=5))
    same(lambda t: t.arange(1, 5, step=2))
    same(lambda t: t.arange(t.tensor(3)))
    same(lambda t: t.arange(t.tensor(3.0)))
    same(lambda t: t.arange(np.float64(3.0)))
    same(lambda t: t.arange(1e10, 1e10 + 5))
    same(lambda t: t.arange(0, 2.5, dtype=t.int64))
    same(lambda t: t.arange(0.5, 3, dtype=t.int64))
    same(lambda t: t.arange(-1.5, 3, 1.5, dtype=t.int64))
    same(lambda t: t.arange(0, 5, 1.5, dtype=t.int64))
    same(lambda t: t.arange(0, 1, 0.1, dtype=t.uint8))
    same(lambda t: t.arange(0, 3, 0.5, dtype=t.int32))
    same(lambda t: t.arange(0, -10, -3, dtype=t.int32))
    same(lambda t: t.arange(1, 1))
    # errors
    same(lambda t: t.arange(0, 3, 0.5, dtype=t.int64))
    same(lambda t: t.arange(0, 1, 0))
    same(lambda t: t.arange(1, 0))
    same(lambda t: t.arange(1, 0, 0.1))
    same(lambda t: t.arange(float("inf")))
    same(lambda t: t.arange(0, float("nan")))
    same(lambda t: t.arange(5, dtype=t.bool))
    same(lambda t: t.arange(3, dtype=t.complex64))


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int64", None])
def test_linspace_bit_for_bit(dtype: str | None) -> None:
    rng = np.random.default_rng(1)
    cases = [(0, 1, 5), (-5.5, 1.0, 66), (0, 1, 1), (0, 1, 0), (3, -2, 7), (0, 10, 11),
             (-1, 1, 100), (0.5, 1, 1), (-5.5, 1.0, 5)]
    for _ in range(120):
        cases.append((float(np.round(rng.uniform(-10, 10), rng.integers(0, 4))),
                      float(np.round(rng.uniform(-10, 10), rng.integers(0, 4))),
                      int(rng.integers(0, 400))))
    for start, end, steps in cases:
        same(lambda t: t.linspace(start, end, steps,
                                  dtype=None if dtype is None else getattr(t, dtype)))


def test_linspace_forms_and_errors() -> None:
    same(lambda t: t.linspace(t.tensor(0.0), t.tensor(1.0), 3))
    same(lambda t: t.linspace(0, 1, t.tensor(3)))
    same(lambda t: t.linspace(start=0, end=1, steps=3))
    same(lambda t: t.linspace(1 + 2j, 3, 3))
    same(lambda t: t.linspace(0, 1, -1))
    same(lambda t: t.linspace(0, 1, 3, dtype=t.bool))
    same(lambda t: t.linspace(t.tensor([0.0]), 1, 3))
    same(lambda t: t.linspace(0, 1, 2.0), msg=False)


def test_meshgrid_of_float_ranges_feeds_a_contour_grid() -> None:
    def grid(t: Any) -> Any:
        x1, x2 = t.meshgrid(t.arange(-5.5, 1.0, 0.1), t.arange(-3.0, 1.0, 0.1), indexing="ij")
        return [x1, x2]
    same(grid)


# ============================================================================ 3. keyword aliases
def _x(t: Any) -> Any:
    return t.arange(24.0, dtype=t.float64).reshape(2, 3, 4)


REDUCTIONS = ["sum", "mean", "prod", "max", "min", "amax", "amin", "argmax", "argmin", "std",
              "var", "cumsum", "logsumexp", "softmax", "log_softmax", "all", "any", "squeeze",
              "unsqueeze", "sort", "argsort", "count_nonzero", "flatten"]
KWARGS = [{"axis": 1}, {"axis": 1, "keepdims": True}, {"dim": 1, "axis": 1},
          {"dim": 1, "keepdims": True}, {"dim": 1, "keepdim": True, "keepdims": True}]


@pytest.mark.parametrize("name", REDUCTIONS)
def test_dim_keepdim_aliases(name: str) -> None:
    for kw in KWARGS:
        same(lambda t: getattr(t, name)(_x(t), **kw), msg=False)
        same(lambda t: getattr(_x(t), name)(**kw), msg=False)
    same(lambda t: getattr(t, name)(input=_x(t), dim=1))
    same(lambda t: getattr(t, name)(x=_x(t), dim=1), msg=False)
    same(lambda t: getattr(t, name)(_x(t), 1, axis=1), msg=False)


@pytest.mark.parametrize("name", ["exp", "abs", "sqrt", "neg", "sin", "tanh", "sigmoid", "relu",
                                  "floor", "round", "clone", "square", "log", "sign", "isnan",
                                  "flatten", "ravel", "t", "numel", "trace", "fix", "sgn"])
def test_input_aliases(name: str) -> None:
    for kw in ("input", "x", "a"):
        same(lambda t: getattr(t, name)(**{kw: _x(t)[0] + 1}), exact=False)


@pytest.mark.parametrize("name", ["add", "sub", "mul", "div", "maximum", "minimum", "eq", "lt",
                                  "ne", "ge", "gt", "le", "fmod", "remainder", "floor_divide",
                                  "true_divide", "equal", "allclose", "isclose", "inner"])
def test_other_aliases(name: str) -> None:
    same(lambda t: getattr(t, name)(x1=_x(t)[0], x2=_x(t)[0] + 1))
    same(lambda t: getattr(t, name)(_x(t)[0], other=_x(t)[0] + 1))
    same(lambda t: getattr(_x(t)[0], name)(x2=_x(t)[0] + 1))


@pytest.mark.parametrize("name", ["zeros", "ones", "empty", "rand", "randn"])
def test_size_keyword(name: str) -> None:
    same(lambda t: getattr(t, name)(size=(2, 3)).shape)
    same(lambda t: getattr(t, name)(size=[2]).shape)
    same(lambda t: getattr(t, name)(2, size=(2, 3)).shape, msg=False)


SEQ_FORMS: dict[str, Callable[[Any], Any]] = {
    "cat_axis": lambda t: t.cat([_x(t), _x(t)], axis=0),
    "concat_axis": lambda t: t.concat([_x(t), _x(t)], axis=1),
    "stack_axis": lambda t: t.stack([_x(t), _x(t)], axis=0),
    "cat_tensors_kw": lambda t: t.cat(tensors=[_x(t), _x(t)], dim=0),
    "view_size": lambda t: _x(t).view(size=(6, 4)),
    "reshape_shape": lambda t: _x(t).reshape(shape=(6, 4)),
    "torch_reshape_shape": lambda t: t.reshape(_x(t), shape=(6, 4)),
    "expand_size": lambda t: _x(t)[:, :1].expand(size=(2, 3, 4)),
    "permute_dims": lambda t: _x(t).permute(dims=(2, 0, 1)),
    "torch_permute_dims": lambda t: t.permute(_x(t), dims=(2, 0, 1)),
    "repeat_repeats": lambda t: _x(t).repeat(repeats=(1, 2, 1)),
    "flip_dims": lambda t: _x(t).flip(dims=(0,)),
    "torch_flip_dims": lambda t: t.flip(_x(t), dims=(0,)),
    "transpose_dim0": lambda t: _x(t).transpose(dim0=0, dim1=1),
    "torch_transpose_input": lambda t: t.transpose(input=_x(t), dim0=0, dim1=2),
    "swapaxes_axis0": lambda t: t.swapaxes(_x(t), axis0=0, axis1=1),
    "moveaxis": lambda t: t.moveaxis(_x(t), 0, 2),
    "gather_axis": lambda t: t.gather(_x(t), axis=2, index=t.zeros(2, 3, 1, dtype=t.int64)),
    "index_select_axis": lambda t: t.index_select(_x(t), axis=0, index=t.tensor([1])),
    "topk_axis": lambda t: _x(t).topk(2, axis=1),
    "chunk_axis": lambda t: _x(t).chunk(2, axis=2),
    "narrow_axis": lambda t: _x(t).narrow(axis=2, start=0, length=2),
    "select_axis": lambda t: _x(t).select(axis=1, index=0),
    "size_axis": lambda t: _x(t).size(axis=1),
    "unsqueeze_axis": lambda t: _x(t).unsqueeze(axis=0),
    "max_axis_values": lambda t: _x(t).max(axis=1),
    "sum_dtype_axis": lambda t: _x(t).sum(axis=1, dtype=t.float32),
    "clamp_input": lambda t: t.clamp(input=_x(t), min=3.0),
    "inner_nd": lambda t: t.inner(_x(t), _x(t)[0]),
    # Python-level in PyTorch: no aliases there
    "split_axis_refused": lambda t: _x(t).split(2, axis=2),
    "torch_split_dim": lambda t: t.split(_x(t), 2, dim=2),
    "functional_softmax_axis_refused": lambda t: t.nn.functional.softmax(_x(t), axis=1),
}


@pytest.mark.parametrize("form", list(SEQ_FORMS))
def test_keyword_forms(form: str) -> None:
    same(SEQ_FORMS[form], msg=not form.endswith("refused"))


def test_aliases_keep_gradients() -> None:
    def run(t: Any) -> Any:
        x = t.tensor([[1.0, -2.0, 3.0], [0.5, 4.0, -1.0]], requires_grad=True)
        y = x.sum(axis=0, keepdims=True) * t.softmax(x, axis=1) + t.cumsum(x, axis=1)
        y.sum().backward()
        return [y, x.grad]
    same(run)


# ============================================================================ 6. conversion errors
def _data_cases(t: Any) -> dict[str, Any]:
    c = t.tensor
    return {
        "ragged": [[1, 2], [3]], "ragged3": [[[1, 2], [3, 4]], [[5, 6]]],
        "ragged_first_short": [[1], [2, 3]], "scalar_then_list": [1, [2, 3]],
        "list_then_scalar": [[2, 3], 1], "tensor_then_number": [c(1.0), 2.0],
        "number_then_tensor": [1.0, c(2.0)], "tensors": [c(1.0), c(2.0)],
        "tensor_rows": [c([1.0, 2.0]), c([3.0, 4.0])],
        "tensor_row_and_list": [c([1.0, 2.0]), [3.0, 4.0]],
        "nested_tensor_and_numbers": [[c(1.0), 2.0], [3.0, 4.0]],
        "int_tensor_and_float": [c(1), 2.5], "tensor_dtypes_mixed": [c(1.0), c(2)],
        "float64_tensor_and_int": [c(1.0, dtype=t.float64), 2],
        "str_then_int": ["a", 1], "int_then_str": [1, "a"], "str": "abc",
        "float_then_none": [1.0, None], "dict": {"a": 1}, "set": {1, 2}, "none": None,
        "numpy_scalar_and_number": [np.float64(1.0), 2.0],
        "numpy_row_and_list": [np.array([1.0, 2.0]), [3.0, 4.0]],
        "empty_then_row": [[], [1]], "bool_then_float": [True, 1.5], "bool_then_int": [True, 2],
        "complex_and_float": [1j, 1.0], "tuple_ragged": ((1, 2), (3,)), "object": [object()],
        "int_past_int32": [2**40], "int_past_int64": [2**63], "nan": [float("nan")],
        "generator": (x for x in [1, 2]),
    }


@pytest.mark.parametrize("name", list(_data_cases(tt)))
@pytest.mark.parametrize("how", ["tensor", "as_tensor"])
def test_conversion_results_and_errors(name: str, how: str) -> None:
    same(lambda t: getattr(t, how)(_data_cases(t)[name]))


def test_conversion_with_dtype() -> None:
    same(lambda t: t.tensor([[1, 2], [3, 4]], dtype=t.float64))
    same(lambda t: t.tensor([t.tensor(1.5), 2], dtype=t.int64))
    same(lambda t: t.tensor([[], [1]], dtype=t.int64))
    same(lambda t: t.tensor([[1], [2, 3]], dtype=t.float32))


# ============================================================================ 5. isinstance, names
def test_isinstance_and_class_name_as_pytorch() -> None:
    def facts(t: Any) -> Any:
        x = t.ones(2)
        p = t.nn.Parameter(t.ones(2))
        return [isinstance(x, t.Tensor), isinstance(p, t.Tensor), isinstance(p, t.nn.Parameter),
                isinstance(x, t.nn.Parameter), isinstance(x * 2, t.Tensor), t.Tensor.__name__,
                type(x).__name__, isinstance(x, t.FloatTensor), isinstance(x, t.LongTensor),
                t.is_tensor(x)]
    same(facts)
    assert repr(tt.Tensor) == "<class 'tapegrad.torch.Tensor'>"


# ============================================================================ 2'. assignment forms
SETITEMS = ["x[1, 2] = 9", "x[:, 0] = t.tensor([7.0, 8.0, 9.0])", "x[1:3] += 1",
            "x[x > 5] = 0", "x[[0, 2]] = -1", "x[..., -1] = 3", "x[:, 1] *= 2",
            "x[0] = [1, 2, 3, 4]", "x[0] = np.arange(4.0)", "x[0] = t.ones(2)", "x[0] = 'a'",
            "x[0, 0] = t.tensor(7.0)", "x[None] = 2", "x[x > 100] = 1", "x[:] = t.ones(1, 4)",
            "x.index_put_((t.tensor([0, 0]), t.tensor([1, 1])), t.tensor([1.0, 2.0]), "
            "accumulate=True)",
            "x.index_put_((t.tensor([2]),), t.tensor(5.0))",
            "x.index_fill_(1, t.tensor([0, 2]), -2.0)",
            "x.masked_scatter_(x > 9, t.arange(12.0) * 10)",
            "x.scatter_(1, t.tensor([[0], [1], [2]]), 5.0)",
            "x.scatter_(0, t.tensor([[2, 1, 0, 2]]), t.full((1, 4), -1.0))",
            "x.scatter_add_(0, t.zeros(2, 4, dtype=t.long), t.ones(2, 4))",
            "x.index_add_(0, t.tensor([0, 0]), t.ones(2, 4))",
            "x.index_add_(1, t.tensor([3, 0]), t.ones(3, 2), alpha=2)",
            "x.index_copy_(0, t.tensor([2]), t.zeros(1, 4))", "x.fill_diagonal_(0.0)",
            "x.index_fill_(1, t.tensor([0]), -2.0).index_add_(axis=0, index=t.tensor([1]), "
            "source=t.ones(1, 4))"]


@pytest.mark.parametrize("stmt", SETITEMS)
def test_indexed_assignment_forms(stmt: str) -> None:
    def run(t: Any) -> Any:
        x = t.arange(12.0).reshape(3, 4)
        exec(stmt, {"x": x, "t": t, "np": np})  # noqa: S102  (the statement under test)
        return x
    same(run)


GRAD_FORMS: dict[str, Callable[[Any, Any, Any], Any]] = {
    "index_add": lambda t, a, s: t.index_add(a, 0, t.tensor([0, 0, 2]), s[:3]),
    "index_copy": lambda t, a, s: t.index_copy(a, 0, t.tensor([2, 0]), s[:2]),
    "index_fill": lambda t, a, s: t.index_fill(a, 1, t.tensor([1]), 3.0),
    "index_put_acc": lambda t, a, s: t.index_put(a, (t.tensor([0, 0]),), s[:2],
                                                 accumulate=True),
    "scatter": lambda t, a, s: t.scatter(a, 1, t.tensor([[0, 1], [2, 3], [1, 0]]), s[:3, :2]),
    "scatter_add": lambda t, a, s: t.scatter_add(a, 0, t.tensor([[0, 1, 0, 1], [0, 0, 0, 0]]),
                                                 s[:2]),
    "masked_scatter": lambda t, a, s: t.masked_scatter(a, a > 0, s),
    "setitem_clone": lambda t, a, s: _setitem_then(t, a, s),
}


def _setitem_then(t: Any, a: Any, s: Any) -> Any:
    b = a.clone()
    b[1:, 2] = s[0, :2] * 3
    b[b > 1.0] *= 2
    return b


@pytest.mark.parametrize("form", list(GRAD_FORMS))
def test_assignment_gradients(form: str) -> None:
    def run(t: Any) -> Any:
        rng = np.random.default_rng(0)
        a = t.tensor(rng.normal(size=(3, 4)), requires_grad=True)
        s = t.tensor(rng.normal(size=(4, 4)), requires_grad=True)
        out = GRAD_FORMS[form](t, a, s)
        w = t.tensor(rng.normal(size=(3, 4)))
        (out * w).sum().backward()
        return [out, a.grad, s.grad if s.grad is not None else t.zeros(4, 4, dtype=t.float64)]
    same(run, exact=False)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", None])
def test_deprecated_range_includes_the_end(dtype: str | None) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for start, end, step in [(1, 4, 1), (0, 1, 0.25), (-5.5, 1.0, 0.1)] + [
                (s, e, abs(d)) for s, e, d in _random_ranges(3, 60) if d > 0]:
            if dtype == "int64" and int(step) == 0:
                continue  # PyTorch divides by the truncated step (a crash, not an error)
            same(lambda t: t.range(start, end, step,
                                   dtype=None if dtype is None else getattr(t, dtype)))
        same(lambda t: t.range(0, 1, 0))
        same(lambda t: t.range(1, 0))


def test_deprecated_range_warns() -> None:
    with pytest.warns(UserWarning, match="torch.range is deprecated"):
        tt.range(1, 4)


# ----------------------------------------------------------------------------- 5: type names
def test_type_names_and_isinstance_as_pytorch() -> None:
    for mod in (real, tt):
        t = mod.ones(2, requires_grad=True)
        p = mod.nn.Parameter(mod.ones(2))
        assert type(t).__name__ == "Tensor" and type(t) is mod.Tensor
        assert type(t * 2) is mod.Tensor and type(t.detach()) is mod.Tensor
        assert isinstance(t, mod.Tensor) and isinstance(p, mod.Tensor)
        assert type(p).__name__ == "Parameter" and not isinstance(t, mod.nn.Parameter)
        assert isinstance(mod.ones(1), mod.FloatTensor)
        assert not isinstance(mod.ones(1), mod.LongTensor)
        assert issubclass(type(p), mod.Tensor)
    # tapegrad's class is its own, under tapegrad.torch (not literally torch.Tensor)
    assert type(tt.ones(1)).__module__ == "tapegrad.torch"
