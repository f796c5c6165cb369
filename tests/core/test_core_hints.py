"""Hints as PEP 678 notes: ``str(e)`` is the framework's message alone."""

from __future__ import annotations

import traceback

import pytest

import tapegrad.tf as tf
import tapegrad.torch as torch
from tapegrad._core.errors import HintedMessage, hint_of, hinted, warning_with_hint, with_hint


def test_with_hint_is_the_message_and_carries_the_hint() -> None:
    m = with_hint("shape mismatch", "reshape first")
    assert isinstance(m, HintedMessage) and m == "shape mismatch" and m.hint == "reshape first"
    assert type(str(m)) is str and str(m) == "shape mismatch"


def test_hinted_adds_one_note_and_returns_the_exception() -> None:
    e = ValueError(with_hint("bad", "do this"))
    assert hinted(e) is e and hinted(e) is e   # a second call adds nothing
    assert str(e) == "bad" and getattr(e, "__notes__", []) == ["[tapegrad hint] do this"]
    assert hint_of(e) == "do this"
    plain = RuntimeError("no hint")
    assert hinted(plain) is plain and not hasattr(plain, "__notes__")
    assert hint_of(plain) is None


def test_hinted_without_add_note_sets_notes_as_python_3_10_would() -> None:
    class Old(Exception):
        add_note = None  # as on Python 3.10, where BaseException has no add_note

    e = hinted(Old("msg"), "the hint")
    assert str(e) == "msg" and getattr(e, "__notes__", []) == ["[tapegrad hint] the hint"]


def test_the_traceback_shows_the_note_under_the_exact_message() -> None:
    with pytest.raises(RuntimeError) as info:
        torch.tensor([1.0]).sum().backward()
    assert str(info.value) == ("element 0 of tensors does not require grad and does not have "
                               "a grad_fn")
    text = "".join(traceback.format_exception(info.value))
    assert text.rstrip().splitlines()[-1].startswith("[tapegrad hint] ")


def test_tensorflow_op_errors_get_the_note_too() -> None:
    with pytest.raises(tf.errors.InvalidArgumentError) as info:
        tf.reshape(tf.ones([6]), [4, 2])
    e = info.value
    assert e.message == str(e) and "[tapegrad hint]" not in str(e)
    assert str(e).startswith("{{function_node __wrapped__Reshape_device_/job:localhost/")
    assert len(getattr(e, "__notes__", [])) == 1


def test_warnings_keep_the_hint_on_a_line_of_their_own() -> None:
    assert warning_with_hint("a", "b") == "a\n[tapegrad hint] b"


def test_every_hint_reaches_its_exception_as_a_note() -> None:
    """Each ``with_hint(...)`` given to an exception is raised through ``hinted(...)``.

    (A bare ``raise X(with_hint(m, h))`` would still print ``m`` exactly, but
    lose the hint.)  Warnings use ``warning_with_hint``.
    """
    import ast
    from pathlib import Path

    import tapegrad

    root = Path(tapegrad.__file__).parent
    bare = []
    for path in sorted(root.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Call) and "with_hint" in (
                    getattr(node.func, "id", None), getattr(node.func, "attr", None))):
                continue
            if path.name == "errors.py" and path.parent.name == "_core":
                continue
            exc = parents.get(node)
            outer = parents.get(exc) if exc is not None else None
            ok = isinstance(outer, ast.Call) and "hinted" in (
                getattr(outer.func, "id", None), getattr(outer.func, "attr", None))
            if not ok:
                bare.append(f"{path.relative_to(root)}:{node.lineno}")
    assert not bare, "wrap these exceptions in hinted(...): " + ", ".join(bare)
