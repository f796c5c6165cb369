"""A rank that fails: ``crash.py raise`` (rank 1 raises before the collective) or
``crash.py hang`` (rank 1 never joins it; rank 0's 3-second timeout must fire), or
``crash.py hang-default`` (the same with the default timeout: the launcher's
``--timeout``)."""

from __future__ import annotations

import datetime
import sys
import time

import tapegrad.torch as torch
import tapegrad.torch.distributed as dist

if sys.argv[1] == "hang-default":
    dist.init_process_group("gloo")
else:
    dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=3))
rank = dist.get_rank()
if rank == 1:
    if sys.argv[1] == "raise":
        raise RuntimeError("boom on rank 1")
    time.sleep(120)  # hangs: never reaches the all_reduce
t = torch.ones(4)
dist.all_reduce(t)
print("unreachable: the all_reduce completed", flush=True)
