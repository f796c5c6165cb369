"""torch.utils.data without the real framework: datasets, samplers, collation, and the
DataLoader in the main process and in worker processes (fork and spawn)."""

from __future__ import annotations

import multiprocessing
import warnings
from typing import Any

import numpy as np
import pytest

import tapegrad.torch as torch
from tapegrad.torch.utils.data import (
    BatchSampler,
    ConcatDataset,
    DataLoader,
    Dataset,
    IterableDataset,
    RandomSampler,
    SequentialSampler,
    Subset,
    SubsetRandomSampler,
    TensorDataset,
    WeightedRandomSampler,
    default_collate,
    get_worker_info,
    random_split,
)


def _ds(n: int = 10) -> TensorDataset:
    return TensorDataset(torch.arange(n * 3.0).reshape(n, 3), torch.arange(n))


def test_sequential_batches_cover_dataset_in_order() -> None:
    xs, ys = zip(*DataLoader(_ds(), batch_size=4))
    assert [y.tolist() for y in ys] == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]
    assert xs[0].shape == (4, 3) and xs[-1].shape == (2, 3)
    assert [len(y) for _, y in DataLoader(_ds(), batch_size=4, drop_last=True)] == [4, 4]


def test_shuffle_is_a_permutation_new_each_epoch_and_seeded() -> None:
    torch.manual_seed(0)
    loader = DataLoader(_ds(50), batch_size=7, shuffle=True)
    e1 = [i for _, y in loader for i in y.tolist()]
    e2 = [i for _, y in loader for i in y.tolist()]
    assert sorted(e1) == sorted(e2) == list(range(50)) and e1 != e2
    torch.manual_seed(0)
    assert [i for _, y in loader for i in y.tolist()] == e1


def test_generator_makes_order_reproducible_without_global_seed() -> None:
    orders = [[b.tolist() for b in DataLoader(range(20), batch_size=5, shuffle=True,
                                              generator=torch.Generator().manual_seed(3))]
              for _ in range(2)]
    assert orders[0] == orders[1]


def test_random_split_lengths_fractions_disjoint() -> None:
    parts = random_split(range(11), [0.5, 0.5], generator=torch.Generator().manual_seed(1))
    assert [len(p) for p in parts] == [6, 5]
    assert sorted(list(parts[0]) + list(parts[1])) == list(range(11))
    with pytest.raises(ValueError, match="Sum of input lengths"):
        random_split(range(4), [1, 2])
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        random_split(range(3), [1.0, 0.0])
    assert "Length of split at index 1 is 0" in str(w[0].message)


def test_samplers() -> None:
    g = torch.Generator().manual_seed(0)
    assert sorted(RandomSampler(range(6), generator=g)) == list(range(6))
    with_rep = list(RandomSampler(range(3), replacement=True, num_samples=100, generator=g))
    assert len(with_rep) == 100 and set(with_rep) <= {0, 1, 2}
    assert sorted(SubsetRandomSampler([5, 7, 9], generator=g)) == [5, 7, 9]
    w = list(WeightedRandomSampler([0.0, 1.0, 3.0], 2000, generator=g))
    assert 0 not in w and 0.65 < w.count(2) / 2000 < 0.85
    assert list(BatchSampler(SequentialSampler(range(5)), 2, True)) == [[0, 1], [2, 3]]
    with pytest.raises(ValueError, match="num_samples should be a positive integer value"):
        RandomSampler(range(3), num_samples=0)
    with pytest.raises(ValueError, match="batch_size should be a positive integer value"):
        BatchSampler(range(3), 0, False)
    with pytest.raises(ValueError, match="weights should be a 1d sequence"):
        WeightedRandomSampler([[1.0]], 1)


def test_default_collate_structures() -> None:
    b = default_collate([{"a": 1, "b": (np.float32(2), "s")}, {"a": 3, "b": (np.float32(4), "t")}])
    assert b["a"].tolist() == [1, 3] and b["a"].dtype == torch.int64
    assert b["b"][0].dtype == torch.float32 and b["b"][1] == ("s", "t")
    assert default_collate([1.5, 2.5]).dtype == torch.float64
    t = default_collate([torch.ones(2), torch.zeros(2)])
    assert t.shape == (2, 2)
    with pytest.raises(TypeError, match="default_collate: batch must contain"):
        default_collate([None, None])


def test_collate_fn_and_batch_size_none() -> None:
    loader = DataLoader(list(range(5)), batch_size=2, collate_fn=lambda b: tuple(b))
    assert list(loader) == [(0, 1), (2, 3), (4,)]
    assert [x.item() if hasattr(x, "item") else x
            for x in DataLoader([np.float32(1), np.float32(2)], batch_size=None)] == [1.0, 2.0]


def test_dataset_classes() -> None:
    class Sq(Dataset):
        def __len__(self) -> int:
            return 3

        def __getitem__(self, i: int) -> int:
            return i * i

    c = Sq() + Sq()
    assert isinstance(c, ConcatDataset) and [c[i] for i in range(6)] == [0, 1, 4, 0, 1, 4]
    s = Subset(Sq(), [2, 0])
    assert [s[0], s[1]] == [4, 0]
    with pytest.raises(AssertionError, match="ConcatDataset does not support IterableDataset"):
        ConcatDataset([_Range(3)])


class _Range(IterableDataset):
    def __init__(self, n: int) -> None:
        self.n = n

    def __iter__(self) -> Any:
        info = get_worker_info()
        if info is None:
            return iter(range(self.n))
        return iter(range(info.id, self.n, info.num_workers))

    def __len__(self) -> int:
        return self.n


def test_iterable_dataset_in_main_process_and_workers() -> None:
    assert [b.tolist() for b in DataLoader(_Range(7), batch_size=3)] == [[0, 1, 2], [3, 4, 5], [6]]
    got = [b.tolist() for b in DataLoader(_Range(7), batch_size=2, num_workers=2)]
    # round-robin over workers: worker 0 has 0,2,4,6 and worker 1 has 1,3,5
    assert got == [[0, 2], [1, 3], [4, 6], [5]]
    with pytest.raises(ValueError, match="expected unspecified shuffle option"):
        DataLoader(_Range(3), shuffle=True)


class _Pid(Dataset):
    def __len__(self) -> int:
        return 8

    def __getitem__(self, i: int) -> Any:
        import os

        info = get_worker_info()
        return np.array([i, os.getpid(), -1 if info is None else info.id])


def test_workers_are_real_processes_and_keep_order() -> None:
    import os

    rows = np.concatenate([b.numpy() for b in DataLoader(_Pid(), batch_size=2, num_workers=2)])
    assert rows[:, 0].tolist() == list(range(8))
    assert os.getpid() not in set(rows[:, 1].tolist())
    assert rows[:, 2].tolist() == [0, 0, 1, 1, 0, 0, 1, 1]
    assert len(set(rows[:, 1].tolist())) == 2


def _init(worker_id: int) -> None:
    info = get_worker_info()
    assert info is not None and info.id == worker_id
    info.dataset.offset = 100 * (worker_id + 1)


class _Offset(Dataset):
    offset = 0

    def __len__(self) -> int:
        return 4

    def __getitem__(self, i: int) -> int:
        return i + self.offset


def test_worker_init_fn_runs_in_each_worker() -> None:
    got = [b.tolist() for b in DataLoader(_Offset(), batch_size=1, num_workers=2,
                                          worker_init_fn=_init)]
    assert got == [[100], [201], [102], [203]]


def test_spawn_context_with_tensor_dataset() -> None:
    if "spawn" not in multiprocessing.get_all_start_methods():
        pytest.skip("no spawn start method")
    loader = DataLoader(_ds(6), batch_size=4, num_workers=1, multiprocessing_context="spawn")
    assert [y.tolist() for _, y in loader] == [[0, 1, 2, 3], [4, 5]]


class _Boom(Dataset):
    def __len__(self) -> int:
        return 3

    def __getitem__(self, i: int) -> int:
        raise KeyError("missing key")


def test_worker_error_names_the_worker_and_type() -> None:
    with pytest.raises(KeyError, match="Caught KeyError in DataLoader worker process 0"):
        list(DataLoader(_Boom(), num_workers=1))


def test_persistent_workers_reuse_processes() -> None:
    loader = DataLoader(_Pid(), batch_size=4, num_workers=2, persistent_workers=True)
    pids1 = {int(p) for b in loader for p in b[:, 1].tolist()}
    pids2 = {int(p) for b in loader for p in b[:, 1].tolist()}
    assert pids1 == pids2 and len(pids1) == 2
    it = loader._iterator
    assert it is not None
    it._shutdown_workers()


def test_pin_memory_accepted_with_warning() -> None:
    with pytest.warns(UserWarning, match="no accelerator is found"):
        assert len(list(DataLoader(range(4), batch_size=2, pin_memory=True))) == 2


def test_attribute_freeze_and_len() -> None:
    loader = DataLoader(range(10), batch_size=3)
    assert len(loader) == 4
    with pytest.raises(ValueError, match="batch_size attribute should not be set after "
                                         "DataLoader is initialized"):
        loader.batch_size = 5


class _SlowFirst(Dataset):
    def __len__(self) -> int:
        return 6

    def __getitem__(self, i: int) -> int:
        if i == 0:
            import time

            time.sleep(0.5)
        return i


def test_in_order_false_hands_out_ready_batches_first() -> None:
    got = [b.item() for b in DataLoader(_SlowFirst(), num_workers=2, in_order=False)]
    assert sorted(got) == list(range(6)) and got[0] != 0
    assert [b.item() for b in DataLoader(_SlowFirst(), num_workers=2)] == list(range(6))


def test_tensor_dataset_batched_fetch_equals_per_sample_collation() -> None:
    from tapegrad.torch.utils.data.dataloader import _MapDatasetFetcher

    ds = TensorDataset(torch.arange(40.0).reshape(20, 2), torch.arange(20),
                       torch.ones(20, dtype=torch.float64))
    sub = Subset(Subset(ds, list(range(19, -1, -1))), [0, 3, -1, 5, 7, 2])
    for data, idx in [(ds, [3, 1, -2, 3]), (sub, [5, 0, 2, -1])]:
        fast = _MapDatasetFetcher(data, True, default_collate, False)
        assert fast._fast is not None
        got = fast.fetch(idx)
        want = default_collate([data[i] for i in idx])
        assert [(g.dtype, g.shape, g.tolist()) for g in got] == \
            [(w.dtype, w.shape, w.tolist()) for w in want]
    fast = _MapDatasetFetcher(ds, True, default_collate, False)
    with pytest.raises(IndexError, match="index 20 is out of bounds for dimension 0 with size 20"):
        fast.fetch([0, 20])
    tracked = TensorDataset(torch.ones(3, requires_grad=True))
    assert _MapDatasetFetcher(tracked, True, default_collate, False)._fast is None
    (batch,) = next(iter(DataLoader(tracked, batch_size=3)))
    assert batch.grad_fn is not None
