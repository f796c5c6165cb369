# From seeds/001: "Let's replicate the previous example in PyTorch: y = w^2 + b."
import torch

# Define tensors that require gradient tracking
w_pt = torch.tensor(2.0, requires_grad=True)
b_pt = torch.tensor(1.0, requires_grad=True)

# Define the computation. PyTorch tracks operations on w_pt and b_pt.
y_pt = w_pt * w_pt + b_pt  # y = w^2 + b

# y_pt is a scalar, so we can call backward() directly.
y_pt.backward()

print(f"PyTorch y: {y_pt.item()}")
print(f"PyTorch d(y)/d(w): {w_pt.grad.item()}")
print(f"PyTorch d(y)/d(b): {b_pt.grad.item()}")
