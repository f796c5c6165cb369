"""Under ``python -m tapegrad.launch``: torchrun's variables, then an all_reduce of ranks."""

from __future__ import annotations

import os
import sys

import tapegrad.torch as torch
import tapegrad.torch.distributed as dist

dist.init_process_group("gloo", init_method="env://")
r, n = dist.get_rank(), dist.get_world_size()
assert int(os.environ["RANK"]) == r and int(os.environ["WORLD_SIZE"]) == n
assert int(os.environ["LOCAL_RANK"]) == r and os.environ["MASTER_ADDR"]
t = torch.tensor([float(r)])
dist.all_reduce(t)
print(f"rank {r}/{n} sum {t.item():g} args {sys.argv[1:]}", flush=True)
dist.destroy_process_group()
