# A user-written optimizer (torch.optim.Optimizer subclass) driven by a PyTorch scheduler.

import torch


class MySGD(torch.optim.Optimizer):
    def __init__(self, params, lr=0.1, momentum=0.5):
        super().__init__(params, dict(lr=lr, momentum=momentum))

    @torch.no_grad()
    def step(self, closure=None):
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                state = self.state[p]
                if "buf" not in state:
                    state["buf"] = torch.zeros_like(p)
                state["buf"].mul_(group["momentum"]).add_(p.grad)
                p.add_(state["buf"], alpha=-group["lr"])
        return loss

torch.manual_seed(0)
m = torch.nn.Linear(3, 1)
opt = MySGD(m.parameters())
sched = torch.optim.lr_scheduler.ExponentialLR(opt, 0.9)
x = torch.randn(8, 3)
y = torch.randn(8, 1)
for _ in range(5):
    opt.zero_grad()
    loss = torch.nn.functional.mse_loss(m(x), y)
    loss.backward()
    opt.step()
    sched.step()
    print(f"{loss.item():.4f}", sched.get_last_lr())
print(opt)
print(sorted(opt.state_dict()["state"][0].keys()))
