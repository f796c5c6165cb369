"""Every rank waits a minute: the launcher's Ctrl-C must stop them all at once."""

from __future__ import annotations

import os
import time

import tapegrad.torch.distributed as dist

dist.init_process_group("gloo")
print(f"ready {dist.get_rank()} pid {os.getpid()}", flush=True)
time.sleep(60)
print("unreachable: slept to the end", flush=True)
