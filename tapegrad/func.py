"""``tapegrad.func``: composable function transforms on tapegrad tensors.

The same transforms back ``tapegrad.torch.func`` (``torch.func``) and the
TensorFlow style's ``ForwardAccumulator``, ``vectorized_map`` and
``GradientTape.jacobian``.

>>> import tapegrad as tg
>>> from tapegrad import func
>>> x = tg.tensor([1.0, 2.0, 3.0])
>>> func.vmap(lambda v: (v * v).sum())(tg.tensor([[1.0, 2.0], [3.0, 4.0]])).tolist()
[5.0, 25.0]
>>> out, t = func.jvp(lambda v: v ** 2, (x,), (tg.ones(3),))
>>> t.tolist()
[2.0, 4.0, 6.0]
"""

from __future__ import annotations

from .autodiff.functional import (
    grad,
    grad_and_value,
    hessian,
    hvp,
    jacfwd,
    jacrev,
    jvp,
    linearize,
    tree_flatten,
    tree_map,
    tree_unflatten,
    value_and_grad,
    vjp,
    vmap,
)

__all__ = [
    "grad", "grad_and_value", "value_and_grad", "vjp", "jvp", "linearize", "jacrev", "jacfwd",
    "hessian", "hvp", "vmap", "tree_flatten", "tree_unflatten", "tree_map",
]
