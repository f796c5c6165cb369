"""Data-parallel training in TensorFlow style on N ranks (MultiWorkerMirroredStrategy), or
with ``--reference`` one process on the global batches.

Usage: ``tf_train.py loop,fit sgd,adam OUT.npz [--reference]`` (writes
``OUT_loop_sgd.npz`` ...).
- ``loop``: a custom loop: ``strategy.scope()`` variables, ``experimental_distribute_dataset``
  of a dataset batched at the global batch size, ``strategy.run`` with
  ``tf.nn.compute_average_loss`` and ``apply_gradients`` (summed over replicas),
  ``strategy.reduce`` of the loss.
- ``fit``: Keras ``compile`` under the scope, ``fit(x, y, batch_size=GLOBAL)``.
Every rank seeds differently (rank 0 as the reference): the strategy makes the weights
rank 0's.  The reference runs the same code without a strategy.
"""

from __future__ import annotations

import sys

import numpy as np

import tapegrad.tf as tf

keras = tf.keras
GLOBAL = 16
EPOCHS = 2


def data() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(11)
    x = rng.standard_normal((64, 5)).astype("float32")
    y = rng.integers(0, 3, size=64).astype("int64")
    return x, y


def build(kind: str) -> tuple[object, object]:
    model = keras.Sequential([keras.Input(shape=(5,)), keras.layers.Dense(12, activation="tanh"),
                              keras.layers.Dense(3)])
    opt = keras.optimizers.SGD(0.1, momentum=0.9) if kind == "sgd" else \
        keras.optimizers.Adam(0.01)
    return model, opt


def custom_loop(kind: str, strategy: object | None) -> tuple[object, list[float]]:
    x, y = data()
    ds = tf.data.Dataset.from_tensor_slices((x, y)).batch(GLOBAL)
    lossf = keras.losses.SparseCategoricalCrossentropy(
        from_logits=True, reduction="none")
    if strategy is None:
        model, opt = build(kind)
        batches = ds
    else:
        with strategy.scope():  # type: ignore[attr-defined]
            model, opt = build(kind)
        batches = strategy.experimental_distribute_dataset(ds)  # type: ignore[attr-defined]

    def step_fn(xb: object, yb: object) -> object:
        with tf.GradientTape() as tape:
            per_example = lossf(yb, model(xb, training=True))  # type: ignore[operator]
            loss = tf.nn.compute_average_loss(per_example, global_batch_size=GLOBAL)
        grads = tape.gradient(loss, model.trainable_variables)  # type: ignore[attr-defined]
        opt.apply_gradients(zip(grads, model.trainable_variables))  # type: ignore[attr-defined]
        return loss

    losses = []
    for _ in range(EPOCHS):
        for xb, yb in batches:
            if strategy is None:
                losses.append(float(step_fn(xb, yb)))
            else:
                per_replica = strategy.run(step_fn, args=(xb, yb))  # type: ignore[attr-defined]
                total = strategy.reduce(  # type: ignore[attr-defined]
                    tf.distribute.ReduceOp.SUM, per_replica, axis=None)
                losses.append(float(total))
    return model, losses


def keras_fit(kind: str, strategy: object | None) -> tuple[object, list[float]]:
    x, y = data()
    if strategy is None:
        model, opt = build(kind)
        model.compile(optimizer=opt, loss=keras.losses.SparseCategoricalCrossentropy(  # type: ignore[attr-defined]
            from_logits=True), metrics=["accuracy"])
    else:
        with strategy.scope():  # type: ignore[attr-defined]
            model, opt = build(kind)
            model.compile(optimizer=opt, loss=keras.losses.SparseCategoricalCrossentropy(  # type: ignore[attr-defined]
                from_logits=True), metrics=["accuracy"])
    hist = model.fit(x, y, batch_size=GLOBAL, epochs=EPOCHS, shuffle=False,  # type: ignore[attr-defined]
                     verbose=0)
    return model, [float(v) for v in hist.history["loss"]] + \
        [float(v) for v in hist.history["accuracy"]]


def main() -> None:
    modes, kinds, path = sys.argv[1].split(","), sys.argv[2].split(","), sys.argv[3]
    reference = "--reference" in sys.argv
    strategy = None
    rank = 0
    if not reference:
        strategy = tf.distribute.MultiWorkerMirroredStrategy()
        from tapegrad import comm

        rank = comm.world().rank
    for mode in modes:
        for kind in kinds:
            keras.utils.set_random_seed(rank)  # different weights per rank; rank 0's win
            model, losses = (custom_loop if mode == "loop" else keras_fit)(kind, strategy)
            if rank == 0:
                np.savez(path.replace(".npz", f"_{mode}_{kind}.npz"), losses=np.array(losses),
                         **{f"w{i}": w for i, w in enumerate(model.get_weights())})  # type: ignore[attr-defined]


if __name__ == "__main__":
    main()
