"""``torch.distributed`` and DDP in one process (a world of one rank): set-up through
``env://``, PyTorch's errors, ``no_sync`` and unused parameters.  The multi-rank proofs
are in ``tests/distributed``."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest

pytest.importorskip("mpi4py", reason="needs mpi4py: pip install 'tapegrad[distributed]'")

import tapegrad.torch as torch  # noqa: E402
import tapegrad.torch.distributed as dist  # noqa: E402
from tapegrad.torch.nn.parallel import DistributedDataParallel as DDP  # noqa: E402


@pytest.fixture
def world(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    for k, v in dict(RANK="0", WORLD_SIZE="1", MASTER_ADDR="127.0.0.1",
                     MASTER_PORT="29555").items():
        monkeypatch.setenv(k, v)
    dist.init_process_group("gloo")
    try:
        yield
    finally:
        dist.destroy_process_group()


def test_env_rendezvous_needs_pytorchs_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    for k in ("RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT", "PMI_RANK",
              "OMPI_COMM_WORLD_RANK", "PMIX_RANK"):
        monkeypatch.delenv(k, raising=False)
    with pytest.raises(ValueError, match="^Error initializing torch.distributed using env:// "
                       "rendezvous: environment variable RANK expected, but not set\n"):
        dist.init_process_group("gloo")
    monkeypatch.setenv("RANK", "0")
    monkeypatch.setenv("WORLD_SIZE", "1")
    with pytest.raises(ValueError, match="variable MASTER_ADDR expected"):
        dist.init_process_group("mpi")
    assert not dist.is_initialized()
    monkeypatch.setenv("MASTER_ADDR", "127.0.0.1")
    monkeypatch.setenv("MASTER_PORT", "29556")
    monkeypatch.setenv("WORLD_SIZE", "2")
    with pytest.raises(RuntimeError, match="do not match the MPI world"):
        dist.init_process_group("gloo")  # two ranks claimed, one process started
    assert not dist.is_initialized()


def test_world_of_one(world: None) -> None:
    assert (dist.get_rank(), dist.get_world_size(), dist.get_backend()) == (0, 1, "gloo")
    assert dist.group.WORLD is not None and dist.group.WORLD.size() == 1
    t = torch.tensor([1.0, 2.0])
    dist.all_reduce(t, op=dist.ReduceOp.AVG)
    assert t.tolist() == [1.0, 2.0]
    with pytest.raises(ValueError, match="^trying to initialize the default process group "
                       "twice!\n"):
        dist.init_process_group("gloo")
    with pytest.raises(RuntimeError, match="^Cannot use ReduceOp.BAND with non-integral dtype\n"):
        dist.all_reduce(t, op=dist.ReduceOp.BAND)
    with pytest.raises(ValueError, match="destination rank should not be the same"):
        dist.send(t, 0)


class Two(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.a = torch.nn.Linear(3, 2)
        self.b = torch.nn.Linear(3, 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.a(x)


def test_ddp_unused_parameters_error_is_pytorchs(world: None) -> None:
    model = DDP(Two())
    x = torch.ones(4, 3)
    model(x).sum().backward()
    with pytest.raises(RuntimeError) as e:
        model(x)
    msg = str(e.value)
    assert msg.startswith("Expected to have finished reduction in the prior iteration")
    assert "Parameter indices which did not receive grad for rank 0: 2 3\n" in msg
    # with find_unused_parameters the unused head keeps grad None, the rest trains
    torch.manual_seed(0)
    net = Two()
    model = DDP(net, find_unused_parameters=True)
    for _ in range(2):
        model(x).sum().backward()
    assert net.b.weight.grad is None and net.a.weight.grad is not None
    np.testing.assert_allclose(net.a.bias.grad.numpy(), [8.0, 8.0])


def test_ddp_no_sync_accumulates_like_plain_backward(world: None) -> None:
    torch.manual_seed(1)
    net = torch.nn.Linear(3, 2)
    plain = torch.nn.Linear(3, 2)
    plain.load_state_dict(net.state_dict())
    model = DDP(net)
    xs = [torch.randn(4, 3) for _ in range(3)]
    with model.no_sync():
        model(xs[0]).pow(2).sum().backward()
        model(xs[1]).pow(2).sum().backward()
    model(xs[2]).pow(2).sum().backward()
    for x in xs:
        plain(x).pow(2).sum().backward()
    np.testing.assert_allclose(net.weight.grad.numpy(), plain.weight.grad.numpy(), rtol=1e-6)
    assert [n for n, _ in model.named_parameters()] == ["module.weight", "module.bias"]
    assert repr(model).startswith("DistributedDataParallel(\n  (module): Linear(")


def test_ddp_without_trainable_parameters(world: None) -> None:
    with pytest.raises(RuntimeError, match="^DistributedDataParallel is not needed when a "
                       "module doesn't have any parameter that requires a gradient.\n"):
        DDP(torch.nn.ReLU())


def test_ddp_recovers_from_a_failed_backward(world: None) -> None:
    torch.manual_seed(2)
    net = torch.nn.Sequential(torch.nn.Linear(3, 3), torch.nn.Linear(3, 1))
    model = DDP(net)
    x = torch.randn(5, 3)

    def boom(g: torch.Tensor) -> None:
        raise ValueError("a hook failed")

    h = net[0].weight.register_hook(boom)  # fires after DDP's hooks of the last layer
    with pytest.raises(ValueError, match="a hook failed"):
        model(x).sum().backward()
    h.remove()
    assert all(p.grad is None for p in net.parameters())  # the failed pass wrote nothing
    model(x).sum().backward()
    assert not model._in_pass and not any(model._ready)  # the new pass finished normally
    plain = torch.nn.Sequential(torch.nn.Linear(3, 3), torch.nn.Linear(3, 1))
    plain.load_state_dict(net.state_dict())
    plain(x).sum().backward()
    for a, b in zip(net.parameters(), plain.parameters()):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-6)
