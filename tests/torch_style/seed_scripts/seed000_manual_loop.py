# From seeds/000: the PyTorch training loop, completed with a small model and data
# (the seed leaves torch_model, squared_error, inputs, labels and epochs undefined).
import torch

torch.manual_seed(0)
torch_model = torch.nn.Linear(1, 1)
inputs = torch.linspace(-1, 1, 8).reshape(8, 1)
labels = 3 * inputs + 0.5
epochs = 20
learning_rate = 0.1


def squared_error(y_pred, y_true):
    return ((y_pred - y_true) ** 2).mean()


[w, b] = torch_model.parameters()
for epoch in range(epochs):
  # forward pass and loss calculation
  # implicit tape-based AD
  y_pred = torch_model(inputs)
  loss = squared_error(y_pred, labels)

  # compute gradients (grad)
  loss.backward()

  # update training variables / parameters
  with torch.no_grad():
    w -= w.grad * learning_rate
    b -= b.grad * learning_rate
    w.grad.zero_()
    b.grad.zero_()
  if epoch % 5 == 4:
    print(f"epoch {epoch}: loss {loss.item():.4f}")

print(w)
print(b)
print(loss)
