"""Exception helpers: the framework's wording first, then one line of tapegrad hint."""

from __future__ import annotations


def with_hint(message: str, hint: str) -> str:
    """Return ``message`` followed by a one-line tapegrad hint."""
    return f"{message}\n[tapegrad hint] {hint}"


SECOND_BACKWARD = (
    "Trying to backward through the graph a second time (or directly access saved tensors "
    "after they have already been freed). Saved intermediate values of the graph are freed "
    "when you call .backward() or autograd.grad(). Specify retain_graph=True if you need to "
    "backward through the graph a second time or if you need to access saved tensors after "
    "calling backward."
)

NO_GRAD_FN = "element {i} of tensors does not require grad and does not have a grad_fn"

INT_REQUIRES_GRAD = "Only Tensors of floating point and complex dtype can require gradients"

LEAF_INPLACE = "a leaf Variable that requires grad is being used in an in-place operation."


class InvalidArgumentError(ValueError):
    """TensorFlow's ``tf.errors.InvalidArgumentError`` (a ``ValueError`` here too).

    TensorFlow's class derives from ``OpError``; tapegrad makes it a
    ``ValueError`` so that ``except ValueError`` also catches it.
    """
