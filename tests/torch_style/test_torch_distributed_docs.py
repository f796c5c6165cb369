"""The docstring examples of the data-parallel modules run (they need no MPI)."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = [
    "tapegrad.comm", "tapegrad.launch", "tapegrad.torch.distributed",
    "tapegrad.torch.distributed.distributed_c10d", "tapegrad.torch.nn.parallel",
    "tapegrad.torch.nn.parallel.distributed", "tapegrad.torch.utils.data.distributed",
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    mod = importlib.import_module(name)
    result = doctest.testmod(mod, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0


def test_without_mpi4py_the_errors_name_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    import tapegrad.comm as comm
    import tapegrad.tf as tf
    import tapegrad.torch.distributed as dist

    monkeypatch.setattr(comm, "_MPI", None)
    monkeypatch.setattr(comm, "_WORLD", None)
    monkeypatch.setitem(sys.modules, "mpi4py", None)  # `import mpi4py` fails
    assert not comm.available() and not dist.is_mpi_available()
    with pytest.raises(ModuleNotFoundError) as e:
        dist.init_process_group("gloo", init_method="tcp://127.0.0.1:29560", rank=0,
                                world_size=1)
    assert str(e.value) == "No module named 'mpi4py'"
    assert "pip install 'tapegrad[distributed]'" in "".join(e.value.__notes__)
    assert not dist.is_initialized()
    with pytest.raises(ModuleNotFoundError, match="mpi4py"):
        tf.distribute.MultiWorkerMirroredStrategy()
    assert tf.distribute.MirroredStrategy().num_replicas_in_sync == 1  # needs no MPI
