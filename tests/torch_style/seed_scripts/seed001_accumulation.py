# From seeds/001: gradient accumulation and zeroing
import torch

w = torch.tensor(2.0, requires_grad=True)
optimizer = torch.optim.SGD([w], lr=0.1) # An optimizer needs parameters

# First pass
y1 = w * w
y1.backward()
print(f"After first backward(): w.grad = {w.grad}") # w.grad = 4.0
# optimizer.step() # would update w based on this gradient

# If we don't zero gradients:
# optimizer.zero_grad() # <--- FORGOT THIS STEP!
y2 = w * 3
y2.backward() # This will add to the existing gradient
# New gradient for y2 is 3.0. Accumulated: 4.0 + 3.0 = 7.0
print(f"After second backward() (no zero_grad): w.grad = {w.grad}")

# Correct way: zero gradients before next computation
optimizer.zero_grad() # or w.grad.zero_()
y3 = w * 4
y3.backward()
print(f"After third backward() (with zero_grad): w.grad = {w.grad}") # w.grad = 4.0
