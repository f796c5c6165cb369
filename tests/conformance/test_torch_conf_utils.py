"""torch.nn.utils, devices, backends, benchmark Timer, profiler tables and the Generator's
repr against real PyTorch."""

from __future__ import annotations

import re
import warnings
from typing import Any

import numpy as np
import pytest

real = pytest.importorskip("torch")
import tapegrad.torch as tt  # noqa: E402

RNG = np.random.default_rng(3)
GRADS = [RNG.standard_normal(s).astype(np.float32) * 3 for s in [(4, 5), (5,), (2, 3, 2)]]


def _clip(T: Any, max_norm: float, norm_type: Any) -> tuple[float, list[np.ndarray], str]:
    ps = [T.nn.Parameter(T.zeros(*g.shape)) for g in GRADS]
    for p, g in zip(ps, GRADS):
        p.grad = T.tensor(g.copy())
    n = T.nn.utils.clip_grad_norm_(ps, max_norm, norm_type=norm_type)
    return n.item(), [p.grad.numpy().copy() for p in ps], str(n.dtype)


@pytest.mark.parametrize("norm_type", [2.0, 1, 3.5, float("inf"), "inf", 0.5])
@pytest.mark.parametrize("max_norm", [0.5, 1e3])
def test_clip_grad_norm(norm_type: Any, max_norm: float) -> None:
    a, b = _clip(tt, max_norm, norm_type), _clip(real, max_norm, norm_type)
    assert a[2] == b[2]
    # per-tensor norms are correctly rounded here; PyTorch's vectorised sum may differ
    # from them in the last bit
    assert a[0] == pytest.approx(b[0], rel=1e-6)
    for x, y in zip(a[1], b[1]):
        np.testing.assert_allclose(x, y, rtol=1e-6, atol=1e-7)


def test_clip_grad_norm_float64_and_errors() -> None:
    out = []
    for T in (tt, real):
        p = T.nn.Parameter(T.zeros(3, dtype=T.float64))
        p.grad = T.tensor([1.0, 2.0, 2.0], dtype=T.float64)
        n = T.nn.utils.clip_grad_norm_(p, 1.5)
        out.append((n.item(), str(n.dtype), p.grad.tolist()))
        q = T.nn.Parameter(T.zeros(2))
        q.grad = T.tensor([float("nan"), 1.0])
        with pytest.raises(RuntimeError) as ei:
            T.nn.utils.clip_grad_norm_([q], 1.0, error_if_nonfinite=True)
        out.append(str(ei.value).split("\n")[0])
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            T.nn.utils.clip_grad_norm(p, 1.0)
        out.append([str(x.message) for x in w if x.category is FutureWarning])
    assert out[:3] == out[3:]


def test_clip_grad_value_and_parameter_vectors() -> None:
    out = []
    for T in (tt, real):
        T.manual_seed(0)
        lin = T.nn.Linear(3, 2)
        lin.weight.grad = T.tensor(GRADS[0][:2, :3].copy())
        lin.bias.grad = T.tensor([-9.0, 0.25])
        T.nn.utils.clip_grad_value_(lin.parameters(), 0.75)
        v = T.nn.utils.parameters_to_vector(lin.parameters())
        T.nn.utils.vector_to_parameters(v * 2, lin.parameters())
        out.append((lin.weight.grad.tolist(), lin.bias.grad.tolist(), v.detach().tolist(),
                    lin.weight.detach().tolist(), type(v.grad_fn).__name__))
    assert out[0] == out[1]


def test_device_behaviour() -> None:
    out = []
    for T in (tt, real):
        res = [repr(T.device("cuda:1")), repr(T.device("cuda", 0)), str(T.device("cuda:0")),
               T.device("cpu") == "cpu", T.device("cpu") == T.device("cpu"),
               T.device("cpu").index, repr(T.ones(1).device), repr(T.get_default_device()),
               T.ones(2).to("cpu", T.float64).dtype == T.float64]
        for bad in ("xyz", "cuda:x"):
            with pytest.raises(RuntimeError) as ei:
                T.device(bad)
            res.append(str(ei.value).split("\n")[0])
        for f in (lambda m: m.ones(1).to("cuda"), lambda m: m.ones(1, device="cuda"),
                  lambda m: m.nn.Linear(1, 1).to("cuda"), lambda m: m.nn.Linear(1, 1).cuda(),
                  lambda m: m.cuda.current_device()):
            with pytest.raises(AssertionError) as ei:
                f(T)
            res.append(str(ei.value).split("\n")[0])
        out.append(res)
    assert out[0] == out[1]


def test_backends_flags() -> None:
    out = []
    for T in (tt, real):
        b = T.backends
        out.append([b.cuda.is_built(), b.mps.is_available(), b.mps.is_built(),
                    b.cudnn.is_available(), b.cudnn.enabled, b.cudnn.benchmark,
                    b.cudnn.deterministic, b.cudnn.version(), b.cuda.matmul.allow_tf32,
                    T.cuda.is_available(), T.cuda.device_count(), T.accelerator.is_available(),
                    T.accelerator.device_count(), T.accelerator.current_accelerator()])
    assert out[0] == out[1]


def test_generator_repr() -> None:
    pat = r"<torch\._C\.Generator object at 0x[0-9a-f]+>"
    for T in (tt, real):
        assert re.fullmatch(pat, repr(T.manual_seed(0)))
        assert re.fullmatch(pat, repr(T.Generator()))
        assert re.fullmatch(pat, str(T.Generator().manual_seed(3)))


def _norm_timing(text: str) -> str:
    text = re.sub(r"0x[0-9a-f]+", "0x", text)
    text = re.sub(r"\(\d+\.\d\d to \d+\.\d\d\)", "(A to B)", text)
    return re.sub(r"\d+\.\d\d (ns|us|ms|s)\b", "T", text)


@pytest.mark.parametrize("kw", [dict(), dict(label="L", sub_label="S", description="D"),
                                dict(setup="z = 3\nw = 4")])
def test_timer_timeit_repr_matches(kw: dict[str, Any]) -> None:
    texts = []
    for T in (tt, real):
        from importlib import import_module

        bench = import_module(T.__name__ + ".utils.benchmark")
        m = bench.Timer("x = 1 + 1\ny = x", **kw).timeit(500)
        texts.append(_norm_timing(repr(m)))
        assert len(m.times) == 1 and m.number_per_run == 500
    assert texts[0] == texts[1]


def test_timer_blocked_autorange_repr_shape() -> None:
    texts = []
    for T in (tt, real):
        from importlib import import_module

        bench = import_module(T.__name__ + ".utils.benchmark")
        m = bench.Timer("sum(range(200))").blocked_autorange(min_run_time=0.2)
        lines = _norm_timing(repr(m)).splitlines()
        lines = [re.sub(r"\d+ measurements, \d+ runs", "N measurements, K runs", ln)
                 for ln in lines if "WARNING" not in ln and "This " not in ln]
        texts.append(lines)
    assert texts[0] == texts[1]


def test_profiler_table_layout_matches() -> None:
    tables = []
    for T in (tt, real):
        x = T.ones(8, 8, requires_grad=True)
        with T.autograd.profiler.profile(record_shapes=True) as prof:
            with T.autograd.profiler.record_function("my_block"):
                (x * 2).sum().backward()
        tables.append((prof.key_averages().table(row_limit=1),
                       prof.key_averages(group_by_input_shape=True).table(row_limit=1),
                       [e.count for e in prof.key_averages() if e.key == "my_block"]))
    for ours, theirs in zip(tables[0][:2], tables[1][:2]):
        o, t = ours.splitlines(), theirs.splitlines()
        assert len(o) == len(t)
        assert o[1].split() == t[1].split()  # headers
        # the same six 12-wide columns after the name, two spaces apart (the name and
        # shape columns fit their contents)
        assert o[0].split("  ")[1:7] == t[0].split("  ")[1:7]
        assert re.fullmatch(r"Self CPU time total: \d+\.\d{3}(us|ms|s)", o[-1])
    assert tables[0][2] == tables[1][2] == [1]


def _measurements(T: Any) -> list[Any]:
    """Fixed times (no clock): the same Measurements built in both frameworks."""
    from importlib import import_module

    if T is real:
        common = import_module("torch.utils.benchmark.utils.common")
        M, Spec = common.Measurement, common.TaskSpec
    else:
        bench = import_module("tapegrad.torch.utils.benchmark")
        M, Spec = bench.Measurement, bench.TaskSpec
    rng = np.random.default_rng(4)
    out = []
    for label in ["matmul", "add"]:
        for threads in [1, 4]:
            for sub in ["small", "large size"]:
                for desc in ["tapegrad", "numpy", "torch"]:
                    if (label, sub, desc) == ("add", "small", "numpy"):
                        continue  # a missing cell
                    base = {"small": 3e-6, "large size": 4.2e-4}[sub] * (1 + 0.3 * threads)
                    spread = 0.02 if desc != "torch" else 0.4
                    times = (base * (1 + spread * rng.standard_normal(9))).tolist()
                    out.append(M(number_per_run=100, raw_times=[t * 100 for t in times],
                                 task_spec=Spec(stmt="f(x)", setup="pass", label=label,
                                                sub_label=sub, description=desc,
                                                num_threads=threads)))
    return out


@pytest.mark.parametrize("opts", [(), ("trim",), ("trim", "colorize"), ("rowwise",),
                                  ("trim", "highlight")])
def test_compare_table_matches(opts: tuple[str, ...]) -> None:
    from importlib import import_module

    texts = []
    for T in (tt, real):
        bench = import_module(T.__name__ + ".utils.benchmark")
        c = bench.Compare(_measurements(T))
        if "trim" in opts:
            c.trim_significant_figures()
        if "colorize" in opts:
            c.colorize()
        if "rowwise" in opts:
            c.colorize(rowwise=True)
        if "highlight" in opts:
            c.highlight_warnings()
        texts.append(str(c))
    assert texts[0] == texts[1]


def test_device_context_and_index_only() -> None:
    out = []
    for T in (tt, real):
        with T.device("cpu"):
            dev = repr(T.ones(1).device)
        with pytest.raises(RuntimeError) as ei:
            T.device(0)
        out.append((dev, str(ei.value).split("\n")[0], T.cuda.is_bf16_supported(),
                    repr(T.device("cpu", 0)), T.device("cpu") == T.device("cpu", 0)))
    assert out[0] == out[1]
