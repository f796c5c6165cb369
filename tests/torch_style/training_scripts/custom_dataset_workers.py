# A custom Dataset loaded by two worker processes, RMSprop with a OneCycle schedule,
# a checkpoint of model, optimizer and scheduler, and a resumed run.
import io

import numpy as np
import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset


class Regression(Dataset):
    def __init__(self, n):
        rng = np.random.default_rng(0)
        self.x = rng.standard_normal((n, 3)).astype(np.float32)
        self.y = (self.x @ np.array([1.5, -2.0, 0.5], dtype=np.float32) + 0.3).reshape(n, 1)

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        return {"features": self.x[i], "target": self.y[i]}


torch.manual_seed(1)
loader = DataLoader(Regression(96), batch_size=16, shuffle=True, num_workers=2)
model = nn.Linear(3, 1)
opt = torch.optim.RMSprop(model.parameters(), lr=0.01, momentum=0.5)
sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=0.05, epochs=4,
                                            steps_per_epoch=len(loader))
loss_fn = nn.MSELoss()
for epoch in range(2):
    total = 0.0
    for batch in loader:
        opt.zero_grad()
        loss = loss_fn(model(batch["features"]), batch["target"])
        loss.backward()
        opt.step()
        sched.step()
        total += loss.item()
    print(f"epoch {epoch}: loss {total / len(loader):.5f} lr {sched.get_last_lr()[0]:.6f}")

buf = io.BytesIO()
torch.save({"model": model.state_dict(), "opt": opt.state_dict(),
            "sched": sched.state_dict()}, buf)
buf.seek(0)
ckpt = torch.load(buf)
model2 = nn.Linear(3, 1)
model2.load_state_dict(ckpt["model"])
opt2 = torch.optim.RMSprop(model2.parameters(), lr=0.01, momentum=0.5)
opt2.load_state_dict(ckpt["opt"])
sched2 = torch.optim.lr_scheduler.OneCycleLR(opt2, max_lr=0.05, epochs=4,
                                             steps_per_epoch=len(loader))
sched2.load_state_dict(ckpt["sched"])
for epoch in range(2, 4):
    total = 0.0
    for batch in loader:
        opt2.zero_grad()
        loss = loss_fn(model2(batch["features"]), batch["target"])
        loss.backward()
        opt2.step()
        sched2.step()
        total += loss.item()
    print(f"epoch {epoch}: loss {total / len(loader):.5f} lr {sched2.get_last_lr()[0]:.6f}")
print("weight", [round(v, 4) for v in model2.weight.detach().flatten().tolist()])
print("bias", round(model2.bias.item(), 4))
