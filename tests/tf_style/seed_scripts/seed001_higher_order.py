# Seed 001: the nested-tape (higher-order gradients) example, verbatim.
import tensorflow as tf

x_tf = tf.Variable(2.0)
with tf.GradientTape() as tape2:
    with tf.GradientTape() as tape1:
        y_tf = x_tf * x_tf * x_tf # x^3
    dy_dx_tf = tape1.gradient(y_tf, x_tf) # dy/dx = 3x^2 = 12
d2y_dx2_tf = tape2.gradient(dy_dx_tf, x_tf) # d2y/dx2 = 6x = 12
print(f"TensorFlow dy/dx: {dy_dx_tf.numpy()}, d2y/dx2: {d2y_dx2_tf.numpy()}")
