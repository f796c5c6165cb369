"""``torch.distributed`` on MPI: process groups, collectives, point-to-point transfers.

Start the ranks with ``python -m tapegrad.launch -n 4 train.py`` (or ``mpirun -n 4
python train.py``), then, as in PyTorch::

    import tapegrad.torch as torch
    import tapegrad.torch.distributed as dist

    dist.init_process_group("gloo")      # "mpi" too; both run on MPI
    t = torch.ones(3) * (dist.get_rank() + 1)
    dist.all_reduce(t, op=dist.ReduceOp.SUM)

Needs the ``distributed`` extra (``pip install 'tapegrad[distributed]'``).
"""

from __future__ import annotations

from .distributed_c10d import *  # noqa: F403
from .distributed_c10d import (  # noqa: F401
    __all__,
    _make_nccl_premul_sum,
)
