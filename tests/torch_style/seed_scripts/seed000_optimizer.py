# From seeds/000: the same loop with an optimizer doing the update
import torch

torch.manual_seed(0)
torch_model = torch.nn.Linear(1, 1)
inputs = torch.linspace(-1, 1, 8).reshape(8, 1)
labels = 3 * inputs + 0.5
optimizer = torch.optim.SGD(torch_model.parameters(), lr=0.1)


def squared_error(y_pred, y_true):
    return ((y_pred - y_true) ** 2).mean()


for epoch in range(20):  # noqa: B007  (the seed's own loop)
  y_pred = torch_model(inputs)
  loss = squared_error(y_pred, labels)
  loss.backward()
  # update training variables / parameters
  optimizer.step()
  optimizer.zero_grad()

print(torch_model.weight, torch_model.bias, loss, sep="\n")
print(f"{loss.item():.4f}")
