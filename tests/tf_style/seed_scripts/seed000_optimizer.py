# Seed 000: "update training variables" with an optimizer (the seed line verbatim); the
# model, optimizer and gradients around it are the smallest definitions it needs.
# ruff: noqa
import numpy as np
import tensorflow as tf

model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
model.build((None, 1))
model.set_weights([np.array([[0.5]], dtype=np.float32), np.array([0.0], dtype=np.float32)])
optimizer = tf.keras.optimizers.SGD(learning_rate=0.01)
x = tf.constant([[1.0], [2.0], [3.0], [4.0]])
y = tf.constant([[3.0], [5.0], [7.0], [9.0]])

for epoch in range(20):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(x) - y))
    w_grad, b_grad = tape.gradient(loss, model.trainable_variables)
    # TensorFlow 
    # ....
    # update training variables 
    optimizer.apply_gradients(zip([w_grad, b_grad], model.trainable_weights))

w, b = model.get_weights()
print(f"w = {w[0, 0]:.6f}, b = {b[0]:.6f}, loss = {float(loss):.6f}")
print(int(optimizer.iterations.numpy()))
