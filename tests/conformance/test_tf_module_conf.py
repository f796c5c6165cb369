"""Conformance: ``tf.Module``, ``tf.name_scope``, ``tf.config``, ``tf.device``, ``tf.__version__``
against real TensorFlow.  Skipped without TensorFlow."""

from __future__ import annotations

from typing import Any

import pytest

import tapegrad.tf as tg_tf
from tests.tf_style.tf_helpers import real_tf


@pytest.fixture(scope="module")
def rtf():  # type: ignore[no-untyped-def]
    return real_tf()


def _module_facts(tf: Any) -> dict[str, Any]:
    class Inner(tf.Module):
        def __init__(self) -> None:
            super().__init__()
            self.w = tf.Variable(4.0, name="w")
            self.frozen = tf.Variable(0.5, trainable=False, name="frozen")

    class Outer(tf.Module):
        def __init__(self) -> None:
            super().__init__(name="outer")
            self.z = tf.Variable(1.0)
            self.inner = Inner()
            self.a = tf.Variable(2.0)
            self.layers = [Inner(), {"k": tf.Variable(7.0, name="in_dict")}]
            self._private = tf.Variable(8.0, name="private")
            with self.name_scope:
                self.c = tf.Variable(3.0, name="c")

        @tf.Module.with_name_scope
        def make(self) -> Any:
            return tf.Variable(9.0, name="made")

    o = Outer()
    with tf.name_scope("top"):
        v = tf.Variable(1.0, name="v")
        with tf.name_scope("sub"):
            u = tf.Variable(1.0)
    return {
        "trainable": [(x.name, float(x.numpy())) for x in o.trainable_variables],
        "all": [(x.name, float(x.numpy())) for x in o.variables],
        "non_trainable": [x.name for x in o.non_trainable_variables],
        "submodules": [type(m).__name__ for m in o.submodules],
        "names": (o.name, o.inner.name, o.name_scope.name, tf.Module().name),
        "made": o.make().name, "scoped": (v.name, u.name),
    }


def test_module_traversal_and_names_match_tensorflow(rtf: Any) -> None:
    assert _module_facts(tg_tf) == _module_facts(rtf)


def test_bad_module_name(rtf: Any) -> None:
    msgs = []
    for tf in (tg_tf, rtf):
        with pytest.raises(ValueError) as info:
            tf.Module(name="bad name")
        msgs.append(str(info.value).splitlines()[0])
    assert msgs[0] == msgs[1]


def test_config_device_version(rtf: Any) -> None:
    for fn in ("list_physical_devices", "get_visible_devices", "list_logical_devices"):
        ours = [tuple(d) for d in getattr(tg_tf.config, fn)("CPU")]
        theirs = [(d.name, d.device_type) for d in getattr(rtf.config, fn)("CPU")]
        assert ours == theirs
    assert repr(tg_tf.config.list_physical_devices()[0]) == \
        repr(rtf.config.list_physical_devices("CPU")[0])
    for tf in (tg_tf, rtf):
        with tf.device("/CPU:0"):
            v = tf.Variable(1.0)
        assert v.device == "/job:localhost/replica:0/task:0/device:CPU:0"
    assert tg_tf.__version__ == rtf.__version__
