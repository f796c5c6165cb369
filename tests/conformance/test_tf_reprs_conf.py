"""Conformance: what users see printed — variable reprs after ``assign``, type names,
float32 formatting, Keras layer reprs and configs — equals real TensorFlow / Keras 3's.

Skipped without TensorFlow.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

import tapegrad.tf as tg_tf
from tests.tf_style.tf_helpers import real_tf


@pytest.fixture(scope="module")
def rtf() -> Any:
    return real_tf()


def _assigns(tf: Any) -> list[str]:
    v = tf.Variable([1.0, 2.0], name="w")
    u = v.assign([2.0, 3.0])
    out = [repr(u)]
    v.assign([5.0, 6.0])       # the unread variable shows the value when it is read
    out += [repr(u), repr(v.assign_add([1.0, 1.0])), repr(v.assign_sub([1.0, 1.0]))]
    out += [repr(v.assign([0.0, 0.0], read_value=False)), repr(v), str(v)]
    out += [type(v).__name__, type(u).__name__, u.name, str(isinstance(u, tf.Variable))]
    return out


def _floats(tf: Any) -> list[str]:
    t = tf.constant([0.24472847, 1.0 / 3])
    return [repr(t), str(t), repr(tf.constant(0.1) * 3), str(tf.constant([1e-8, 1.0, 1e8])),
            repr(tf.constant([[1.5, 2.25], [3.0, 4.0]], tf.float64)),
            repr(tf.constant(2, tf.int64)), repr(tf.constant([True, False]))]


def _keras(tf: Any) -> list[str]:
    k = tf.keras
    # explicit names: automatic ones count the layers made before in the process
    m = k.Sequential([k.layers.Dense(4, name="d"), k.layers.Dropout(0.5, name="drop")],
                     name="m")
    out = [repr(m), repr(m.layers[0]), repr(m.layers[1])]
    m.build((None, 3))
    out += [repr(m), repr(m.layers[0])]
    out += [str(k.initializers.GlorotUniform(seed=1).get_config()),
            str(k.initializers.HeNormal().get_config()),
            str(k.initializers.VarianceScaling(0.5, seed=2).get_config()),
            str(k.initializers.RandomNormal(seed=3).get_config())]
    return out


PROGRAMS: dict[str, Callable[[Any], list[str]]] = {
    "variable_assign": _assigns, "float_printing": _floats, "keras_reprs": _keras,
}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_printed_text_is_the_frameworks(rtf: Any, name: str) -> None:
    ours, theirs = PROGRAMS[name](tg_tf), PROGRAMS[name](rtf)
    assert ours == theirs


def test_initializer_configs_are_keras(rtf: Any) -> None:
    pytest.importorskip("keras")

    def configs(tf: Any) -> list[str]:
        i = tf.keras.initializers
        return [str(i.RandomUniform(seed=3).get_config()),
                str(i.TruncatedNormal(0.5, 2.0, seed=3).get_config()),
                str(i.LecunUniform(seed=1).get_config())]

    assert configs(tg_tf) == configs(rtf)


def _object_reprs(tf: Any) -> list[str]:
    """Objects without their own repr print Python's default one, with the real module path."""
    import re

    k = tf.keras
    objs = [tf.random.Generator.from_seed(1), tf.Module(), k.optimizers.Adam(0.01),
            k.optimizers.SGD(), k.random.SeedGenerator(1)]
    return [re.sub(r"0x[0-9a-f]+", "0x?", repr(o)) for o in objs] + [
        repr(k.Variable([1.0, 2.0])), repr(k.Variable(2.0)), repr(k.Variable([1.0], name="w")),
        repr(k.Variable(k.initializers.Ones(), shape=(2,)))]


def test_object_reprs_are_the_frameworks(rtf: Any) -> None:
    pytest.importorskip("keras")
    from tapegrad.tf.keras import variables

    variables._AUTO_NAMES.clear()
    import keras

    keras.src.backend.common.global_state.clear_session()
    ours, theirs = _object_reprs(tg_tf), _object_reprs(rtf)
    assert ours == theirs
