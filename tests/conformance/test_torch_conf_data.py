"""torch.utils.data against real PyTorch: orders under a seed, splits, samplers, default
collation, and worker processes (orders, seeds, IterableDataset interleaving)."""

from __future__ import annotations

import re
from collections import namedtuple
from typing import Any

import numpy as np
import pytest

real = pytest.importorskip("torch")
import tapegrad.torch as tt  # noqa: E402

Point = namedtuple("Point", ["x", "y"])


def _plain(v: Any) -> Any:
    """Batches in a comparable form: tensors to (dtype name, shape, values)."""
    if hasattr(v, "detach") and hasattr(v, "dtype"):
        return (str(v.dtype).replace("torch.", ""), tuple(v.shape), v.detach().numpy().tolist())
    if isinstance(v, dict):
        return {k: _plain(x) for k, x in v.items()}
    if isinstance(v, tuple) and hasattr(v, "_fields"):
        return (type(v).__name__, [_plain(x) for x in v])
    if isinstance(v, (list, tuple)):
        return (type(v).__name__, [_plain(x) for x in v])
    return v


def _ds(T: Any, n: int = 23) -> Any:
    return T.utils.data.TensorDataset(T.arange(n * 2.0).reshape(n, 2), T.arange(n))


def _orders(T: Any, **kw: Any) -> list[Any]:
    seed = kw.pop("seed", 0)
    T.manual_seed(seed)
    loader = T.utils.data.DataLoader(_ds(T), **kw)
    return [[_plain(b) for b in loader] for _ in range(3)]  # three epochs


@pytest.mark.parametrize("kw", [
    dict(batch_size=4, shuffle=True),
    dict(batch_size=5, shuffle=True, drop_last=True, seed=123),
    dict(batch_size=1, shuffle=True, seed=2**40 + 7),
    dict(batch_size=6, shuffle=False),
    dict(batch_size=None, shuffle=True),
])
def test_dataloader_shuffle_order_under_seed(kw: dict[str, Any]) -> None:
    assert _orders(tt, **dict(kw)) == _orders(real, **dict(kw))


def test_dataloader_with_generator_leaves_default_stream_alone() -> None:
    out = []
    for T in (tt, real):
        T.manual_seed(5)
        g = T.Generator().manual_seed(11)
        loader = T.utils.data.DataLoader(range(17), batch_size=4, shuffle=True, generator=g)
        epochs = [[b.tolist() for b in loader] for _ in range(2)]
        out.append((epochs, T.rand(3).tolist()))
    assert out[0] == out[1]


def test_default_generator_advances_as_pytorch() -> None:
    """After iterating a shuffled loader, the default stream is where PyTorch's is."""
    out = []
    for T in (tt, real):
        T.manual_seed(3)
        for _ in T.utils.data.DataLoader(range(10), batch_size=3, shuffle=True):
            pass
        for _ in T.utils.data.DataLoader(range(10), batch_size=3):
            pass
        out.append(T.randn(4).tolist())
    assert out[0] == out[1]


@pytest.mark.parametrize("lengths", [[3, 7], [0.3, 0.3, 0.4], [0.5, 0.5], [10, 0], [1.0, 0.0], [1 / 3] * 3])
def test_random_split_matches(lengths: list[Any]) -> None:
    out = []
    for T in (tt, real):
        g = T.Generator().manual_seed(42)
        with pytest.warns(UserWarning) if 0.0 in lengths and isinstance(lengths[0], float) \
                else _nullcontext():
            parts = T.utils.data.random_split(range(10), lengths, generator=g)
        out.append([list(p.indices) for p in parts])
    assert out[0] == out[1]


class _nullcontext:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *a: Any) -> None:
        return None


def test_random_split_default_generator_and_errors() -> None:
    out = []
    for T in (tt, real):
        T.manual_seed(9)
        out.append([list(p.indices) for p in T.utils.data.random_split(range(12), [5, 7])])
        with pytest.raises(ValueError, match="Sum of input lengths does not equal"):
            T.utils.data.random_split(range(12), [5, 6])
        with pytest.raises(ValueError, match="Fraction at index 0 is not between 0 and 1"):
            T.utils.data.random_split(range(12), [-0.5, 1.5])
    assert out[0] == out[1]


def test_samplers_match() -> None:
    out = []
    for T in (tt, real):
        D = T.utils.data
        g = T.Generator().manual_seed(1)
        res = [list(D.RandomSampler(range(9), generator=g)),
               list(D.RandomSampler(range(9), replacement=True, num_samples=70, generator=g)),
               list(D.RandomSampler(range(5), num_samples=12, generator=g)),
               list(D.SubsetRandomSampler([10, 20, 30, 40, 50], generator=g)),
               list(D.WeightedRandomSampler([0.1, 0.9, 0.4, 0.7, 3.0, 0.6], 25, generator=g)),
               list(D.SequentialSampler(range(4))),
               list(D.BatchSampler(D.SequentialSampler(range(10)), 3, False)),
               list(D.BatchSampler(range(10), 3, True)),
               len(D.BatchSampler(range(10), 3, False)), len(D.BatchSampler(range(10), 3, True))]
        T.manual_seed(4)
        res.append(list(D.RandomSampler(range(6))))
        out.append(res)
    assert out[0] == out[1]


@pytest.mark.parametrize("num_samples, replacement, drop_last", [
    (None, False, False), (None, False, True), (21, False, False), (14, False, True),
    (7, False, False), (70, True, False), (33, True, True)])
def test_batched_random_sampler_draws_interleave_as_pytorch(
        num_samples: int | None, replacement: bool, drop_last: bool) -> None:
    """BatchSampler over a RandomSampler that shares its generator with other draws: each
    batch, and each draw made between batches, equal PyTorch's (the sampler's permutations
    and randint blocks are drawn at the same moments), and so does the default stream."""
    out = []
    for T in (tt, real):
        D = T.utils.data
        T.manual_seed(8)
        g = T.Generator().manual_seed(3)
        res = []
        for _ in range(2):
            sampler = D.RandomSampler(range(7), replacement=replacement,
                                      num_samples=num_samples, generator=g)
            for batch in D.BatchSampler(sampler, 4, drop_last):
                res.append((batch, T.randint(0, 1000, (1,), generator=g).item()))
        res.append(T.randint(0, 1000, (2,), generator=g).tolist())
        # without a generator: one draw of the default stream per epoch, nothing more
        for _ in range(2):
            res.append(list(D.BatchSampler(D.RandomSampler(range(9)), 4, drop_last)))
        res.append(T.rand(2).tolist())
        out.append(res)
    assert out[0] == out[1]


@pytest.mark.parametrize("n, replacement", [(1, True), (1, False), (3, False), (6, False),
                                            (40, True)])
def test_weighted_sampler_draws_match(n: int, replacement: bool) -> None:
    out = []
    for T in (tt, real):
        g = T.Generator().manual_seed(5)
        s = T.utils.data.WeightedRandomSampler([0.1, 0.9, 0.4, 0.7, 3.0, 0.6], n,
                                               replacement=replacement, generator=g)
        out.append([list(s) for _ in range(4)])
    assert out[0] == out[1]


def test_default_collate_matches() -> None:
    batches = {
        "tuples": lambda T: [(1, 2.5, "a", np.float32(3)), (4, 5.5, "b", np.float32(6))],
        "dicts": lambda T: [{"x": np.arange(3), "y": T.tensor([1.0]), "s": b"q"},
                            {"x": np.arange(3) + 1, "y": T.tensor([2.0]), "s": b"r"}],
        "namedtuple": lambda T: [Point(1, np.ones(2, dtype=np.float32)),
                                 Point(2, np.zeros(2, dtype=np.float32))],
        "lists": lambda T: [[1, 2], [3, 4], [5, 6]],
        "nested": lambda T: [{"a": (T.tensor(1), [np.int64(2), 3.0])},
                             {"a": (T.tensor(4), [np.int64(5), 6.0])}],
        "bools": lambda T: [True, False, np.bool_(True)],
        "int32_arrays": lambda T: [np.array([1, 2], dtype=np.int32),
                                   np.array([3, 4], dtype=np.int32)],
    }
    for name, make in batches.items():
        ours = _plain(tt.utils.data.default_collate(make(tt)))
        theirs = _plain(real.utils.data.default_collate(make(real)))
        assert ours == theirs, name


def test_default_collate_errors_match() -> None:
    for T in (tt, real):
        with pytest.raises(TypeError, match="default_collate: batch must contain tensors, "
                                            "numpy arrays, numbers, dicts or lists; found"):
            T.utils.data.default_collate([object(), object()])
        with pytest.raises(RuntimeError, match="each element in list of batch should be of "
                                               "equal size"):
            T.utils.data.default_collate([[1, 2], [3]])
        with pytest.raises(TypeError, match="found <U1"):
            T.utils.data.default_collate([np.array(["a"]), np.array(["b"])])


def test_default_convert_without_batching() -> None:
    for T in (tt, real):
        loader = T.utils.data.DataLoader([np.arange(3), np.arange(3) + 1], batch_size=None)
        got = [_plain(b) for b in loader]
        assert got == [("int64", (3,), [0, 1, 2]), ("int64", (3,), [1, 2, 3])]


def test_batch_sampler_and_custom_collate() -> None:
    out = []
    for T in (tt, real):
        loader = T.utils.data.DataLoader(
            list(range(10)), batch_sampler=[[3, 1], [0], [9, 8, 7]],
            collate_fn=lambda b: sum(b))
        out.append(list(loader))
    assert out[0] == out[1] == [4, 0, 24]


@pytest.mark.parametrize("kw, msg", [
    (dict(shuffle=True, sampler=[0, 1]), "sampler option is mutually exclusive with shuffle"),
    (dict(batch_sampler=[[0]], batch_size=2), "batch_sampler option is mutually exclusive with "
                                              "batch_size, shuffle, sampler, and drop_last"),
    (dict(batch_size=None, drop_last=True), "batch_size=None option disables auto-batching "
                                            "and is mutually exclusive with drop_last"),
    (dict(num_workers=-1), "num_workers option should be non-negative"),
    (dict(prefetch_factor=2), "prefetch_factor option could only be specified in "
                              "multiprocessing"),
    (dict(persistent_workers=True), "persistent_workers option needs num_workers > 0"),
    (dict(timeout=-1), "timeout option should be non-negative"),
    (dict(multiprocessing_context="fork"), "multiprocessing_context can only be used with "
                                           "multi-process loading"),
])
def test_dataloader_argument_errors(kw: dict[str, Any], msg: str) -> None:
    for T in (tt, real):
        with pytest.raises(ValueError) as ei:
            T.utils.data.DataLoader(list(range(4)), **kw)
        assert str(ei.value).startswith(msg)


def test_concat_subset_tensor_dataset() -> None:
    out = []
    for T in (tt, real):
        D = T.utils.data
        c = D.ConcatDataset([list(range(3)), list(range(10, 14))])
        s = D.Subset(c, [6, 0, 3])
        st = D.StackDataset(list("abc"), [1, 2, 3])
        sk = D.StackDataset(a=list("ab"), b=[1, 2])
        out.append([len(c), c[4], c[-1], c.cumulative_sizes, len(s), [s[i] for i in range(3)],
                    st[1], sk[0], _plain(D.TensorDataset(T.arange(3), T.ones(3))[2])])
        with pytest.raises(AssertionError, match="Size mismatch between tensors"):
            D.TensorDataset(T.arange(3), T.ones(4))
        with pytest.raises(ValueError, match="absolute value of index should not exceed"):
            c[-8]
    assert out[0] == out[1]


class _Squares:
    def __len__(self) -> int:
        return 13

    def __getitem__(self, i: int) -> Any:
        return np.float64(i * i)


@pytest.mark.parametrize("workers", [1, 2, 3])
def test_workers_same_batches_and_order(workers: int) -> None:
    out = []
    for T in (tt, real):
        T.manual_seed(7)
        loader = T.utils.data.DataLoader(_Squares(), batch_size=2, shuffle=True,
                                         num_workers=workers)
        out.append([[_plain(b) for b in loader] for _ in range(2)])
    assert out[0] == out[1]


def _seed_report(worker_id: int) -> None:
    pass


class _WorkerSeeds:
    """Each sample reports the worker that fetched it, its seed, and draws from the
    worker's torch, NumPy and random generators (all seeded from the base seed)."""

    def __init__(self, T: Any) -> None:
        self.T = T

    def __len__(self) -> int:
        return 6

    def __getitem__(self, i: int) -> Any:
        import random

        info = self.T.utils.data.get_worker_info()
        return (info.id, info.seed, info.num_workers, float(self.T.rand(1)[0]),
                float(np.random.rand()), random.random())


def test_worker_seeds_and_generators_match() -> None:
    out = []
    for T in (tt, real):
        T.manual_seed(2024)
        loader = T.utils.data.DataLoader(_WorkerSeeds(T), batch_size=None, num_workers=2)
        out.append([tuple(float(x) for x in b) for b in loader])
    assert out[0] == out[1]


class _Stream:
    """An IterableDataset split between workers with get_worker_info (PyTorch's pattern)."""

    def __init__(self, T: Any, start: int, end: int) -> None:
        self.T, self.start, self.end = T, start, end

    def __iter__(self) -> Any:
        info = self.T.utils.data.get_worker_info()
        if info is None:
            return iter(range(self.start, self.end))
        per = int(np.ceil((self.end - self.start) / info.num_workers))
        lo = self.start + info.id * per
        return iter(range(lo, min(lo + per, self.end)))


def _stream(T: Any, *a: Any) -> Any:
    cls = type("Stream", (_Stream, T.utils.data.IterableDataset), {})
    return cls(T, *a)


@pytest.mark.parametrize("workers, bs, drop", [(0, 4, False), (2, 4, False), (3, 2, True),
                                               (2, None, False)])
def test_iterable_dataset_interleaving(workers: int, bs: Any, drop: bool) -> None:
    out = []
    for T in (tt, real):
        loader = T.utils.data.DataLoader(_stream(T, 3, 20), batch_size=bs, drop_last=drop,
                                         num_workers=workers)
        out.append([_plain(b) for b in loader])
    assert out[0] == out[1]


def test_worker_init_fn_and_persistent_workers() -> None:
    out = []
    for T in (tt, real):
        T.manual_seed(1)
        loader = T.utils.data.DataLoader(_WorkerSeeds(T), batch_size=3, num_workers=2,
                                         persistent_workers=True,
                                         worker_init_fn=np.random.seed)
        out.append([[_plain(b) for b in loader] for _ in range(2)])
    assert out[0] == out[1]


class _Failing:
    def __len__(self) -> int:
        return 4

    def __getitem__(self, i: int) -> Any:
        if i == 2:
            raise ValueError("bad sample 2")
        return i


def test_worker_exception_is_reraised_with_pytorch_wording() -> None:
    for T in (tt, real):
        loader = T.utils.data.DataLoader(_Failing(), batch_size=1, num_workers=2)
        with pytest.raises(ValueError) as ei:
            list(loader)
        text = str(ei.value)
        assert text.startswith("Caught ValueError in DataLoader worker process 0.")
        assert "bad sample 2" in text


def test_len_of_loaders() -> None:
    for T in (tt, real):
        D = T.utils.data
        assert len(D.DataLoader(range(10), batch_size=3)) == 4
        assert len(D.DataLoader(range(10), batch_size=3, drop_last=True)) == 3
        assert len(D.DataLoader(range(10), batch_size=None)) == 10


def test_reprs_match() -> None:
    out = []
    for T in (tt, real):
        D = T.utils.data
        opt = T.optim.SGD([T.zeros(1, requires_grad=True)], lr=0.1)
        objs = [D.DataLoader(range(3)), iter(D.DataLoader(range(3))), D.TensorDataset(T.ones(2)),
                D.RandomSampler(range(3)), D.BatchSampler(range(3), 2, False),
                D.random_split(range(4), [2, 2])[0], T.optim.lr_scheduler.StepLR(opt, 2)]
        out.append([re.sub(r"0x[0-9a-f]+", "0x", repr(o)) for o in objs])
    assert out[0] == out[1]
