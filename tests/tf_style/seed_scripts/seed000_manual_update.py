# Seed 000 (tape-based autograd): the TensorFlow training loop, verbatim between the
# "seed" markers; the model, data and loss around it are the smallest definitions it needs.
# ruff: noqa
import numpy as np
import tensorflow as tf

tf_model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
tf_model.build((None, 1))
tf_model.set_weights([np.array([[0.5]], dtype=np.float32), np.array([0.0], dtype=np.float32)])
x = tf.constant([[1.0], [2.0], [3.0], [4.0]])
y = tf.constant([[3.0], [5.0], [7.0], [9.0]])
epochs = 20
learning_rate = 0.01


def squared_error(y_pred, y_true):
    return tf.reduce_mean(tf.square(y_pred - y_true))


# --- seed
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
# --- end of seed

print(f"w = {w.numpy()[0, 0]:.6f}, b = {b.numpy()[0]:.6f}, loss = {float(loss):.6f}")
print(type(w_grad).__name__ in ("EagerTensor", "Tensor"), w_grad.shape, b_grad.shape)
