"""The seed examples, grouped by topic, each in TensorFlow style and PyTorch style.

Every snippet is written for the real framework (``import tensorflow as tf`` /
``import torch``); the tour runs it with only that line changed to tapegrad.
Snippets taken verbatim from the seed documents say so; the rest complete a
topic in the other style (the seeds show only one side) or give a seed
fragment the model and data it assumes.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Example:
    topic: str
    style: str  # "tf" or "torch"
    source: str  # "seed" (verbatim code from a seed) or "completion"
    code: str


_TRAIN_SETUP_TF = '''
import numpy as np
import tensorflow as tf
rng = np.random.default_rng(0)
x = tf.constant(rng.normal(size=(8, 3)), dtype=tf.float32)
y = tf.constant(rng.normal(size=(8, 1)), dtype=tf.float32)
tf_model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
tf_model.build((None, 3))
tf_model.set_weights([np.full((3, 1), 0.1, np.float32), np.zeros(1, np.float32)])
def squared_error(pred, target):
    return tf.reduce_mean(tf.square(pred - target))
epochs, learning_rate = 5, 0.1
'''

_TRAIN_SETUP_TORCH = '''
import numpy as np
import torch
rng = np.random.default_rng(0)
inputs = torch.tensor(rng.normal(size=(8, 3)), dtype=torch.float32)
labels = torch.tensor(rng.normal(size=(8, 1)), dtype=torch.float32)
torch_model = torch.nn.Linear(3, 1)
with torch.no_grad():
    torch_model.weight.fill_(0.1)
    torch_model.bias.zero_()
def squared_error(pred, target):
    return ((pred - target) ** 2).mean()
epochs, learning_rate = 5, 0.1
'''

EXAMPLES: list[Example] = [
    Example("1. Recording and computing a gradient", "tf", "seed", '''
import tensorflow as tf

# Define trainable variables
w_tf = tf.Variable(2.0, name='weight')
b_tf = tf.Variable(1.0, name='bias')

with tf.GradientTape() as tape:
    # Define the computation. Operations involving w_tf and b_tf are recorded.
    y_tf = w_tf * w_tf + b_tf  # y = w^2 + b

# Calculate gradients
gradients_tf = tape.gradient(y_tf, {'w': w_tf, 'b': b_tf})

print(f"TensorFlow y: {y_tf.numpy()}")
print(f"TensorFlow d(y)/d(w): {gradients_tf['w'].numpy()}")
print(f"TensorFlow d(y)/d(b): {gradients_tf['b'].numpy()}")
'''),
    Example("1. Recording and computing a gradient", "torch", "seed", '''
import torch

# Define tensors that require gradient tracking
w_pt = torch.tensor(2.0, requires_grad=True)
b_pt = torch.tensor(1.0, requires_grad=True)

y_pt = w_pt * w_pt + b_pt  # y = w^2 + b
y_pt.backward()

print(f"PyTorch y: {y_pt.item()}")
print(f"PyTorch d(y)/d(w): {w_pt.grad.item()}")
print(f"PyTorch d(y)/d(b): {b_pt.grad.item()}")
'''),
    Example("2. Accumulation", "tf", "completion", '''
import tensorflow as tf

w = tf.Variable(2.0)
with tf.GradientTape() as tape:
    y1 = w * w
print(f"First gradient: {tape.gradient(y1, w)}")
with tf.GradientTape() as tape:
    y2 = w * 3
# tape.gradient returns a fresh gradient: nothing to zero
print(f"Second gradient (fresh, no accumulation): {tape.gradient(y2, w)}")
'''),
    Example("2. Accumulation", "torch", "seed", '''
import torch

w = torch.tensor(2.0, requires_grad=True)
optimizer = torch.optim.SGD([w], lr=0.1) # An optimizer needs parameters

# First pass
y1 = w * w
y1.backward()
print(f"After first backward(): w.grad = {w.grad}") # w.grad = 4.0

y2 = w * 3
y2.backward() # This will add to the existing gradient
print(f"After second backward() (no zero_grad): w.grad = {w.grad}")

# Correct way: zero gradients before next computation
optimizer.zero_grad() # or w.grad.zero_()
y3 = w * 4
y3.backward()
print(f"After third backward() (with zero_grad): w.grad = {w.grad}") # w.grad = 4.0
'''),
    Example("3. Persistence", "tf", "completion", '''
import tensorflow as tf

x = tf.Variable(3.0)
with tf.GradientTape(persistent=True) as tape:
    y = x * x
    z = y * x
print(f"dy/dx = {tape.gradient(y, x).numpy()}, dz/dx = {tape.gradient(z, x).numpy()}")
del tape
with tf.GradientTape() as tape:
    y = x * x
tape.gradient(y, x)
try:
    tape.gradient(y, x)
except RuntimeError as e:
    print("second call:", str(e).splitlines()[0])
'''),
    Example("3. Persistence", "torch", "completion", '''
import torch

x = torch.tensor(3.0, requires_grad=True)
y = x * x
z = y * x
z.backward(retain_graph=True)
print(f"dz/dx = {x.grad.item()}")
z.backward()
print(f"after a second backward (accumulated): {x.grad.item()}")
try:
    z.backward()
except RuntimeError as e:
    print("third call:", str(e).split(" (or")[0])
'''),
    Example("4. Higher-order gradients", "tf", "seed", '''
import tensorflow as tf

x_tf = tf.Variable(2.0)
with tf.GradientTape() as tape2:
    with tf.GradientTape() as tape1:
        y_tf = x_tf * x_tf * x_tf # x^3
    dy_dx_tf = tape1.gradient(y_tf, x_tf) # dy/dx = 3x^2 = 12
d2y_dx2_tf = tape2.gradient(dy_dx_tf, x_tf) # d2y/dx2 = 6x = 12
print(f"TensorFlow dy/dx: {dy_dx_tf.numpy()}, d2y/dx2: {d2y_dx2_tf.numpy()}")
'''),
    Example("4. Higher-order gradients", "torch", "seed", '''
import torch

x_pt = torch.tensor(2.0, requires_grad=True)
y_pt = x_pt * x_pt * x_pt # x^3

# First derivative
dy_dx_pt = torch.autograd.grad(y_pt, x_pt, create_graph=True)[0] # dy/dx = 3x^2 = 12
# Second derivative
d2y_dx2_pt = torch.autograd.grad(dy_dx_pt, x_pt)[0] # d2y/dx2 = 6x = 12
print(f"PyTorch dy/dx: {dy_dx_pt.item()}, d2y/dx2: {d2y_dx2_pt.item()}")
'''),
    Example("5. Stopping gradients", "tf", "completion", '''
import tensorflow as tf

x = tf.Variable([[1.0, 2.0], [3.0, 4.0]])
frozen = tf.Variable(5.0, trainable=False)
with tf.GradientTape() as tape:
    y = x * 2
    z = tf.stop_gradient(x * 2)
    u = frozen * 2
grads = tape.gradient([y, z, u], [x, frozen])
print(f"dy/dx: {grads[0].numpy().tolist()}")
print(f"frozen variable gradient: {grads[1]}")
'''),
    Example("5. Stopping gradients", "torch", "seed", '''
import torch

# PyTorch: Stopping gradient flow
x = torch.randn(2, 2, requires_grad=True)
y = x * 2
print(f"y.requires_grad: {y.requires_grad}") # True

# Using torch.no_grad()
with torch.no_grad():
    z = x * 2
print(f"z.requires_grad: {z.requires_grad}") # False, z doesn't track history

# Using .detach()
w = x * 2
w_detached = w.detach() # Creates a new tensor, shares data, but no grad history
print(f"w.requires_grad: {w.requires_grad}")             # True
print(f"w_detached.requires_grad: {w_detached.requires_grad}") # False
'''),
    Example("6. A training loop", "tf", "seed", _TRAIN_SETUP_TF + '''
# TensorFlow
[w, b] = tf_model.trainable_variables
for epoch in range(epochs):
  with tf.GradientTape() as tape:
    # forward passing and loss calculations
    # within explicit tape scope
    predictions = tf_model(x)
    loss = squared_error(predictions, y)

  # compute gradients (grad)
  w_grad, b_grad = tape.gradient(loss, tf_model.trainable_variables)

  # update training variables
  w.assign(w - w_grad * learning_rate)
  b.assign(b - b_grad * learning_rate)
  print(f"epoch {epoch}: loss {loss.numpy():.4f}")
print("w:", [round(float(v), 4) for v in w.numpy().ravel()], "b:", round(float(b.numpy()[0]), 4))
'''),
    Example("6. A training loop", "torch", "seed", _TRAIN_SETUP_TORCH + '''
# PyTorch
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
  print(f"epoch {epoch}: loss {loss.item():.4f}")
print("w:", [round(float(v), 4) for v in w.detach().numpy().ravel()], "b:", round(float(b.detach().numpy()[0]), 4))
'''),
    Example("7. With an optimizer", "tf", "seed", _TRAIN_SETUP_TF + '''
optimizer = tf.keras.optimizers.SGD(learning_rate=learning_rate)
for epoch in range(epochs):
  with tf.GradientTape() as tape:
    loss = squared_error(tf_model(x), y)
  w_grad, b_grad = tape.gradient(loss, tf_model.trainable_variables)
  # TensorFlow
  # ....
  # update training variables
  optimizer.apply_gradients(zip([w_grad, b_grad], tf_model.trainable_weights))
  print(f"epoch {epoch}: loss {loss.numpy():.4f}")
'''),
    Example("7. With an optimizer", "torch", "seed", _TRAIN_SETUP_TORCH + '''
optimizer = torch.optim.SGD(torch_model.parameters(), lr=learning_rate)
for epoch in range(epochs):
  loss = squared_error(torch_model(inputs), labels)
  loss.backward()
  # PyTorch
  # ....
  # update training variables / parameters
  optimizer.step()
  optimizer.zero_grad()
  print(f"epoch {epoch}: loss {loss.item():.4f}")
'''),
    Example("8. Jacobians and per-sample gradients", "tf", "completion", '''
import tensorflow as tf

x = tf.constant([1.0, 2.0, 3.0])
with tf.GradientTape() as tape:
    tape.watch(x)
    y = x * x * tf.reduce_sum(x)
print("Jacobian:", tape.jacobian(y, x).numpy().tolist())

# forward mode: J @ v in one pass
with tf.autodiff.ForwardAccumulator(x, tf.constant([1.0, 0.0, 0.0])) as acc:
    y = x * x * tf.reduce_sum(x)
print("J @ [1, 0, 0]:", acc.jvp(y).numpy().tolist())

# per-sample gradients: a tape inside tf.vectorized_map
w = tf.Variable([0.5, -1.0])
def grad_one(row):
    with tf.GradientTape() as t:
        loss = tf.reduce_sum(row * w) ** 2
    return t.gradient(loss, w)
rows = tf.constant([[1.0, 2.0], [3.0, 4.0]])
print("per-sample:", tf.vectorized_map(grad_one, rows).numpy().tolist())
'''),
    Example("8. Jacobians and per-sample gradients", "torch", "completion", '''
import torch

x = torch.tensor([1.0, 2.0, 3.0])
f = lambda v: v * v * v.sum()
print("Jacobian:", torch.func.jacrev(f)(x).tolist())

# forward mode: J @ v in one pass
print("J @ [1, 0, 0]:", torch.func.jvp(f, (x,), (torch.tensor([1.0, 0.0, 0.0]),))[1].tolist())

# per-sample gradients: vmap of grad
w = torch.tensor([0.5, -1.0])
loss = lambda w, row: (row * w).sum() ** 2
rows = torch.tensor([[1.0, 2.0], [3.0, 4.0]])
print("per-sample:", torch.vmap(torch.func.grad(loss), in_dims=(None, 0))(w, rows).tolist())
'''),
]


REAL_IMPORT = {"tf": "import tensorflow as tf", "torch": "import torch"}
TAPEGRAD_IMPORT = {"tf": "import tapegrad.tf as tf", "torch": "import tapegrad.torch as torch"}


def for_tapegrad(ex: Example) -> str:
    """The example with only its import line changed to tapegrad."""
    return ex.code.replace(REAL_IMPORT[ex.style], TAPEGRAD_IMPORT[ex.style])
