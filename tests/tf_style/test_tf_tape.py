"""Item 2: ``tf.GradientTape`` semantics (SPEC section 3)."""

from __future__ import annotations

import gc
import threading
import warnings
import weakref

import numpy as np
import pytest

import tapegrad.tf as tf
from tapegrad._core.node import FREED


def val(t: object) -> object:
    if isinstance(t, (list, tuple)):
        return [val(x) for x in t]
    return None if t is None else np.asarray(t.numpy()).tolist()  # type: ignore[attr-defined]


# ------------------------------------------------------------------ what is recorded
def test_trainable_variables_are_watched_automatically() -> None:
    x = tf.Variable(3.0)
    with tf.GradientTape() as tape:
        y = x * x
    assert val(tape.gradient(y, x)) == 6.0


def test_constants_are_not_watched_unless_asked() -> None:
    c = tf.constant(2.0)
    with tf.GradientTape() as tape:
        y = c * c
    assert tape.gradient(y, c) is None
    with tf.GradientTape() as tape:
        tape.watch(c)
        y = c * c
    assert val(tape.gradient(y, c)) == 4.0


def test_unwatched_input_of_a_recorded_op_gets_none() -> None:
    x, y = tf.constant(2.0), tf.constant(3.0)
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        z = x * y
    assert val(tape.gradient(z, x)) == 3.0
    assert tape.gradient(z, y) is None


def test_ops_before_the_block_are_not_recorded() -> None:
    x = tf.Variable(2.0)
    pre = x * 3.0
    with tf.GradientTape() as tape:
        y = pre * pre
    assert tape.gradient(y, x) is None
    with tf.GradientTape() as tape:
        y = pre * pre
    assert tape.gradient(y, pre) is None
    with tf.GradientTape() as tape:
        tape.watch(pre)
        y = pre * pre
    assert val(tape.gradient(y, pre)) == 12.0


def test_ops_after_the_block_are_not_recorded() -> None:
    x = tf.Variable(2.0)
    with tf.GradientTape() as tape:
        y = x * x
    z = y * 2.0
    assert tape.gradient(z, x) is None


def test_non_trainable_variables_are_not_watched() -> None:
    nt = tf.Variable(2.0, trainable=False)
    x = tf.Variable(3.0)
    with tf.GradientTape(persistent=True) as tape:
        y = nt * x
    assert tape.gradient(y, [nt, x])[0] is None
    assert val(tape.gradient(y, x)) == 2.0
    with tf.GradientTape() as tape:
        tape.watch(nt)
        y = nt * x
    assert val(tape.gradient(y, nt)) == 3.0


def test_watch_accessed_variables_false() -> None:
    x = tf.Variable(3.0)
    with tf.GradientTape(watch_accessed_variables=False) as tape:
        y = x * x
    assert tape.gradient(y, x) is None and tape.watched_variables() == ()
    with tf.GradientTape(watch_accessed_variables=False) as tape:
        tape.watch(x)
        y = x * x
    assert val(tape.gradient(y, x)) == 6.0
    assert tape.watched_variables() == (x,)


def test_watched_variables_in_order_of_creation() -> None:
    a, b, c = tf.Variable(1.0), tf.Variable(2.0), tf.Variable(3.0, trainable=False)
    with tf.GradientTape() as tape:
        b * a + b + c
    wv = tape.watched_variables()
    assert len(wv) == 2 and wv[0] is a and wv[1] is b


def test_integer_tensors_are_not_watched() -> None:
    ci = tf.constant(2)
    with tf.GradientTape() as tape:
        with pytest.warns(UserWarning, match="must be floating"):
            tape.watch(ci)
        y = ci * ci
    assert tape.gradient(y, ci) is None
    vi = tf.Variable(2)
    with tf.GradientTape() as tape:
        y = tf.cast(vi, tf.float32) * 2.0
    assert tape.watched_variables() == (vi,)
    assert tape.gradient(y, vi) is None


def test_integer_target_gives_none() -> None:
    x = tf.constant(1.0)
    with tf.GradientTape() as tape:
        tape.watch(x)
        yi = tf.constant(3) * 2
    assert tape.gradient(yi, x) is None


def test_watch_nested_structures() -> None:
    a, b = tf.constant(1.0), tf.constant(2.0)
    with tf.GradientTape() as tape:
        tape.watch([a, {"k": (b,)}])
        y = a * b
    assert val(tape.gradient(y, [a, b])) == [2.0, 1.0]
    with pytest.raises(ValueError, match="Passed in object 1.0 of type 'float'"):
        tf.GradientTape().watch(1.0)


# ------------------------------------------------------------------ gradient()
def test_sources_nest_gives_the_same_structure() -> None:
    w, b = tf.Variable(2.0), tf.Variable(1.0)
    z = tf.Variable(5.0)
    with tf.GradientTape() as tape:
        y = w * w + b
    g = tape.gradient(y, {"w": w, "nested": [b, (w, z)], "b": b})
    assert set(g) == {"w", "nested", "b"}
    assert isinstance(g["nested"], list) and isinstance(g["nested"][1], tuple)
    assert val(g["w"]) == 4.0 and val(g["b"]) == 1.0
    assert val(g["nested"][0]) == 1.0 and val(g["nested"][1][0]) == 4.0
    assert g["nested"][1][1] is None
    with tf.GradientTape() as tape:
        y = w * b
    gt = tape.gradient(y, (w, b))
    assert isinstance(gt, tuple) and val(gt) == [1.0, 2.0]


def test_non_scalar_and_list_targets_are_summed() -> None:
    x = tf.Variable(3.0)
    with tf.GradientTape(persistent=True) as tape:
        y = x * tf.constant([1.0, 2.0, 3.0])
        z = x * x
    assert val(tape.gradient(y, x)) == 6.0
    assert val(tape.gradient([y, z], x)) == 12.0
    assert val(tape.gradient({"a": y, "b": [z]}, x)) == 12.0


def test_output_gradients() -> None:
    x = tf.Variable(3.0)
    with tf.GradientTape(persistent=True) as tape:
        y = x * tf.constant([1.0, 2.0, 3.0])
        z = x * x
    assert val(tape.gradient(y, x, output_gradients=tf.constant([1.0, 1.0, 2.0]))) == 9.0
    assert val(tape.gradient(z, x, output_gradients=2.0)) == 12.0
    with pytest.raises(tf.errors.InvalidArgumentError, match="Incompatible shapes"):
        tape.gradient(y, x, output_gradients=tf.constant([1.0, 1.0]))


def test_unconnected_gradients() -> None:
    x, z = tf.Variable(3.0), tf.Variable([1.0, 2.0])
    with tf.GradientTape(persistent=True) as tape:
        y = x * x
    assert tape.gradient(y, z) is None
    assert tape.gradient(y, z, unconnected_gradients="none") is None
    g = tape.gradient(y, z, unconnected_gradients="zero")
    assert val(g) == [0.0, 0.0] and g.dtype == tf.float32
    g = tape.gradient(y, z, unconnected_gradients=tf.UnconnectedGradients.ZERO)
    assert val(g) == [0.0, 0.0]
    assert tf.UnconnectedGradients.ZERO.value == "zero"
    with pytest.raises(ValueError, match="Unknown value for unconnected_gradients: 'bogus'"):
        tape.gradient(y, z, unconnected_gradients="bogus")


def test_target_equal_to_source() -> None:
    x = tf.Variable(2.0)
    with tf.GradientTape() as tape:
        y = x * 1.0
    assert val(tape.gradient(x, x)) == 1.0
    del y


def test_intermediate_source() -> None:
    x = tf.Variable(2.0)
    with tf.GradientTape() as tape:
        m = x * 3.0
        y = m * m
    assert val(tape.gradient(y, m)) == 12.0


def test_clear_type_errors_for_non_tensor_sources_and_targets() -> None:
    x = tf.Variable(2.0)
    for bad in (1.0, np.float32(1.0), None):
        with tf.GradientTape() as tape:
            y = x * x
        with pytest.raises(TypeError, match="sources must be tf.Tensor or tf.Variable"):
            tape.gradient(y, bad)
    with tf.GradientTape() as tape:
        y = x * x
    with pytest.raises(TypeError, match="the target must be a tensor"):
        tape.gradient(3.0, x)
    with tf.GradientTape() as tape:
        y = x * x
    with pytest.raises(TypeError, match="received None"):
        tape.gradient(None, x)


# ------------------------------------------------------------------ persistence
def test_non_persistent_tape_answers_once() -> None:
    x = tf.Variable(3.0)
    with tf.GradientTape() as tape:
        y = x * x
    tape.gradient(y, x)
    for call in (lambda: tape.gradient(y, x), lambda: tape.jacobian(y, x)):
        with pytest.raises(RuntimeError) as e:
            call()
        msg = str(e.value)
        assert msg.startswith("A non-persistent GradientTape can only be used to compute one "
                              "set of gradients (or jacobians)")
        assert msg == ("A non-persistent GradientTape can only be used to compute one "
                       "set of gradients (or jacobians)")
        assert "create the tape with persistent=True" in getattr(e.value, "__notes__", [])[0]


def test_unentered_tape_raises_the_same_error() -> None:
    with pytest.raises(RuntimeError, match="non-persistent GradientTape"):
        tf.GradientTape().gradient(tf.constant(1.0), tf.constant(1.0))


def test_non_persistent_tape_releases_saved_values() -> None:
    x = tf.Variable(3.0)
    with tf.GradientTape() as tape:
        y = x * x
    node = y._node
    assert node.saved is not FREED
    tape.gradient(y, x)
    assert node.saved is FREED


def test_persistent_tape_answers_repeatedly() -> None:
    x = tf.Variable(3.0)
    with tf.GradientTape(persistent=True) as tape:
        y = x * x
        z = y * x
    assert val(tape.gradient(y, x)) == 6.0
    assert val(tape.gradient(z, x)) == 27.0
    assert val(tape.gradient(y, x)) == 6.0
    assert y._node.saved is not FREED


def test_persistent_tape_is_freed_on_del_and_reset() -> None:
    x = tf.Variable(3.0)
    with tf.GradientTape(persistent=True) as tape:
        y = x * x
    assert val(tape.gradient(y, x)) == 6.0
    tape_ref = weakref.ref(tape)
    node_ref = weakref.ref(y._node)
    tok = tape._token
    del tape
    gc.collect()
    assert tape_ref() is None  # nodes hold a small token, not the tape
    assert not tok.alive and tok.keep == []
    del y
    gc.collect()
    assert node_ref() is None  # and the graph goes with its last tensor

    with tf.GradientTape(persistent=True) as tape:
        y = x * x
        tape.reset()
        z = x * 2.0
    assert tape.gradient(y, x) is None  # recorded before reset: forgotten
    assert val(tape.gradient(z, x)) == 2.0


def test_training_loop_keeps_no_graph_alive() -> None:
    w = tf.Variable(1.0)
    refs = []
    for _ in range(3):
        with tf.GradientTape(persistent=True) as tape:
            loss = (w * 2.0 - 1.0) ** 2
        g = tape.gradient(loss, w)
        w.assign_sub(0.1 * g)
        refs.append(weakref.ref(loss._node))
        del tape, loss, g
    gc.collect()
    assert all(r() is None for r in refs)


# ------------------------------------------------------------------ recording control
def test_stop_recording() -> None:
    x = tf.constant(4.0)
    with tf.GradientTape() as tape:
        tape.watch(x)
        with tape.stop_recording():
            y = x ** 2
        z = x * 3.0
    assert tape.gradient(y + z, x) is None  # y + z is computed after the block
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        with tape.stop_recording():
            y = x ** 2
        z = x * 3.0 + y
    assert val(tape.gradient(z, x)) == 3.0
    with pytest.raises(RuntimeError, match="Trying to stop recording a tape which is not "
                                           "recording"):
        with tf.GradientTape().stop_recording():
            pass
    t2 = tf.GradientTape()
    with t2:
        pass
    with pytest.raises(ValueError, match="Tape is not recording"):
        with t2.stop_recording():
            pass


def test_reentering_an_active_tape_raises() -> None:
    tape = tf.GradientTape()
    with tape:
        with pytest.raises(ValueError, match="Tape is still recording"):
            tape.__enter__()


def test_gradient_inside_the_block() -> None:
    x = tf.Variable(2.0)
    with tf.GradientTape() as tape:
        y = x * x
        g = tape.gradient(y, x)  # non-persistent: stops recording
        z = x * 3.0
    assert val(g) == 4.0 and z._node is None
    with tf.GradientTape(persistent=True) as tape:
        y = x * x * x
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            g = tape.gradient(y, x)  # persistent: recorded on the tape itself
    assert val(g) == 12.0
    assert val(tape.gradient(g, x)) == 12.0


# ------------------------------------------------------------------ higher order
def test_second_and_third_derivatives_with_nested_tapes() -> None:
    x = tf.Variable(2.0)
    with tf.GradientTape() as t3:
        with tf.GradientTape() as t2:
            with tf.GradientTape() as t1:
                y = x * x * x
            g1 = t1.gradient(y, x)
        g2 = t2.gradient(g1, x)
    g3 = t3.gradient(g2, x)
    assert (val(g1), val(g2), val(g3)) == (12.0, 12.0, 6.0)


def test_gradient_outside_the_outer_block_is_not_recorded() -> None:
    x = tf.Variable(2.0)
    with tf.GradientTape() as t2:
        with tf.GradientTape() as t1:
            y = x * x * x
    g1 = t1.gradient(y, x)
    assert val(g1) == 12.0
    assert t2.gradient(g1, x) is None


def test_hessian_vector_style_second_order_of_a_function() -> None:
    x = tf.Variable([1.0, 2.0])
    with tf.GradientTape() as outer:
        with tf.GradientTape() as inner:
            y = tf.reduce_sum(tf.sin(x) * x)
        g = inner.gradient(y, x)
    h = outer.gradient(g, x)
    xn = np.array([1.0, 2.0])
    np.testing.assert_allclose(h.numpy(), 2 * np.cos(xn) - xn * np.sin(xn), rtol=1e-6)


# ------------------------------------------------------------------ jacobians
def test_jacobian() -> None:
    x = tf.constant([1.0, 2.0])
    with tf.GradientTape() as g:
        g.watch(x)
        y = x * x
    j = g.jacobian(y, x)
    np.testing.assert_array_equal(j.numpy(), [[2.0, 0.0], [0.0, 4.0]])
    assert j.dtype == tf.float32
    w = tf.Variable([[1.0, 2.0], [3.0, 4.0]])
    v = tf.Variable(1.0)
    with tf.GradientTape(persistent=True) as g:
        y = w * w
    j = g.jacobian(y, w)
    assert j.shape == (2, 2, 2, 2) and float(j[1, 0, 1, 0]) == 6.0 and float(j[1, 0, 0, 1]) == 0
    js = g.jacobian(y, {"w": w, "v": v})
    assert js["v"] is None and js["w"].shape == (2, 2, 2, 2)
    assert g.jacobian(y, v, unconnected_gradients="zero").shape == (2, 2)


def test_batch_jacobian() -> None:
    x = tf.constant([[1.0, 2.0], [3.0, 4.0]])
    with tf.GradientTape() as g:
        g.watch(x)
        y = x * x
    bj = g.batch_jacobian(y, x)
    np.testing.assert_array_equal(bj.numpy(), [[[2.0, 0.0], [0.0, 4.0]], [[6.0, 0.0], [0.0, 8.0]]])
    w = tf.constant([[1.0, 0.5, 0.0], [0.0, 1.0, 2.0]])
    with tf.GradientTape() as g:
        g.watch(x)
        y = tf.matmul(x, w)
    bj = g.batch_jacobian(y, x)
    assert bj.shape == (2, 3, 2)
    np.testing.assert_array_equal(bj.numpy()[0], w.numpy().T)
    with tf.GradientTape() as g:
        g.watch(x)
        y = tf.reduce_sum(x)
    with pytest.raises(IndexError):  # TensorFlow 2.21's error for a scalar target
        g.batch_jacobian(y, x)


# ------------------------------------------------------------------ several tapes
def test_several_tapes_are_independent() -> None:
    x, y = tf.constant(2.0), tf.constant(3.0)
    with tf.GradientTape() as ta, tf.GradientTape() as tb:
        ta.watch(x)
        tb.watch(y)
        z = x * y
    assert val(ta.gradient(z, [x, y])) == [3.0, None]
    assert val(tb.gradient(z, [x, y])) == [None, 2.0]


def test_tapes_in_threads_are_independent() -> None:
    results: dict[int, object] = {}
    errors: list[BaseException] = []
    barrier = threading.Barrier(4)

    def work(i: int) -> None:
        try:
            x = tf.Variable(float(i))
            with tf.GradientTape() as tape:
                barrier.wait()
                y = x * x * x
                barrier.wait()
            results[i] = (val(tape.gradient(y, x)), tape.watched_variables() == (x,))
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(1, 5)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert results == {i: (3.0 * i * i, True) for i in range(1, 5)}


def test_tape_recorded_tensors_can_also_backward() -> None:
    v = tf.Variable(3.0)
    with tf.GradientTape() as tape:
        y = v * v
    y.backward()
    assert float(v.grad) == 6.0
    del tape


def test_deleting_a_persistent_tape_frees_its_saved_values_while_the_output_lives() -> None:
    import gc
    import tracemalloc

    import numpy as np

    x = tf.Variable(np.ones(200_000, np.float32))
    tracemalloc.start()
    try:
        with tf.GradientTape(persistent=True) as tape:
            y = tf.reduce_sum(tf.exp(x) * tf.sin(x))
        tape.gradient(y, x)
        held = tracemalloc.get_traced_memory()[0]
        del tape
        gc.collect()
        after = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    # the saved exp(x) and sin(x) (2 x 0.8 MB) go; y (a scalar) stays
    assert held - after > 1_500_000
    assert float(y.numpy()) != 0.0


def test_training_steps_leak_nothing_without_the_garbage_collector() -> None:
    """Each step's graph and gradients go by reference counting alone (no cycles)."""
    import gc
    import tracemalloc

    import numpy as np

    rng = np.random.default_rng(0)
    x = tf.constant(rng.normal(size=(32, 16)).astype(np.float32))
    w = tf.Variable(rng.normal(size=(16, 8)).astype(np.float32))
    b = tf.Variable(np.zeros(8, np.float32))

    def step() -> None:
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(tf.matmul(x, w) + b))
        gw, gb = tape.gradient(loss, [w, b])
        w.assign_sub(0.01 * gw)
        b.assign_sub(0.01 * gb)

    for _ in range(5):
        step()
    gc.collect()
    was_enabled = gc.isenabled()
    gc.disable()
    tracemalloc.start()
    try:
        for _ in range(10):
            step()
        start = tracemalloc.get_traced_memory()[0]
        for _ in range(100):
            step()
        grown = tracemalloc.get_traced_memory()[0] - start
    finally:
        tracemalloc.stop()
        if was_enabled:
            gc.enable()
    assert grown < 64_000, grown


def test_batch_jacobian_rank_errors_as_tensorflow() -> None:
    x = tf.constant([[1.0, 2.0]])
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y0 = tf.reduce_sum(x)
        y1 = tf.reduce_sum(x, axis=1)
    with pytest.raises(IndexError) as e0:
        tape.batch_jacobian(y0, x)  # TensorFlow reads target.shape.dims[0] first
    assert str(e0.value) == "list index out of range"
    with pytest.raises(ValueError) as e1:
        tape.batch_jacobian(y1, x)
    assert str(e1.value) == "Shape (1,) must have rank at least 2"
