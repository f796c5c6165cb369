"""``torch.autograd.forward_ad``: forward-mode AD with dual tensors.

Inside ``with dual_level():``, ``make_dual(x, t)`` gives a tensor that carries
the tangent ``t``; every op on it pushes the tangent forward through the op's
JVP rule (one pass, no backward), and ``unpack_dual(y).tangent`` reads the
directional derivative.  This is the core's forward mode
(:class:`tapegrad.autodiff.forward.JVPLevel`), the same one ``torch.func.jvp``
uses.

>>> import tapegrad.torch as torch
>>> import tapegrad.torch.autograd.forward_ad as fwAD
>>> x = torch.tensor([0.0, 1.0])
>>> with fwAD.dual_level():
...     y = fwAD.make_dual(x, torch.ones(2)).exp()
...     fwAD.unpack_dual(y).tangent
tensor([1.0000, 2.7183])
"""

from __future__ import annotations

from typing import Any, NamedTuple

from ..._core.errors import hinted, with_hint
from ..._core.mode import STATE
from ..._core.tensor import TORCH, Tensor, set_style
from ...autodiff.forward import JVPLevel

__all__ = ["UnpackedDualTensor", "enter_dual_level", "exit_dual_level", "make_dual",
           "unpack_dual", "dual_level"]

_current: list[JVPLevel] = []


class UnpackedDualTensor(NamedTuple):
    """The primal and tangent of a dual tensor (``tangent`` is ``None`` where there is none)."""

    primal: Tensor
    tangent: Tensor | None


def enter_dual_level() -> int:
    """Enter a forward-AD level (only one at a time, as in PyTorch); return its index."""
    if _current:
        raise hinted(RuntimeError(with_hint(
            "Nested forward mode AD is not supported at the moment",
            "use torch.func.jvp for higher-order forward derivatives")))
    lv = JVPLevel()
    lv.__enter__()
    _current.append(lv)
    return 0


def exit_dual_level(*, level: int | None = None) -> None:
    """Exit the current forward-AD level; its dual tensors become plain tensors."""
    if not _current or (level is not None and level != 0):
        raise hinted(RuntimeError(with_hint(
            "Trying to exit a forward AD level that was not the last one that was created. "
            "This is not supported.", "exit the level you entered last")))
    lv = _current.pop()
    lv.__exit__(None, None, None)


def _level(level: int | None) -> JVPLevel | None:
    if not _current or not _current[-1].active:
        return None
    return _current[-1]


def make_dual(tensor: Any, tangent: Any, *, level: int | None = None) -> Tensor:
    """A dual tensor: ``tensor`` as primal, with ``tangent`` as its forward gradient."""
    lv = _level(level)
    if lv is None:
        raise hinted(RuntimeError(with_hint(
            "Trying to create a dual Tensor for forward AD but no level exists, make sure to "
            "enter_dual_level() first.", "wrap the computation in `with fwAD.dual_level():`")))
    for v in (tensor, tangent):
        if not isinstance(v, Tensor):  # PyTorch calls v.is_floating_point() first
            raise AttributeError(
                f"'{type(v).__name__}' object has no attribute 'is_floating_point'")
    if tensor._data.dtype.kind not in "fc":
        raise hinted(ValueError(with_hint(
            f"Expected primal to be floating point or complex, but got: {tensor.dtype}",
            "forward AD needs a float primal")))
    if tangent._data.dtype.kind not in "fc":
        raise hinted(ValueError(with_hint(
            f"Expected tangent to be floating point or complex, but got: {tangent.dtype}",
            "forward AD needs a float tangent")))
    if tangent._data.shape != tensor._data.shape:
        raise hinted(RuntimeError(with_hint(
            "Trying to set a forward gradient that has a different size than that of the "
            f"original Tensor, this is not supported. Tensor is of size "
            f"{list(tensor._data.shape)} while the given forward gradient is of size "
            f"{list(tangent._data.shape)}.", "the tangent has the primal's shape")))
    if tensor._lvl is lv and tensor._tangent is not None:
        raise hinted(RuntimeError(with_hint(
            "Making a dual Tensor based on a Tensor that already has a forward gradient at the "
            "same level 0 is not supported.", "make the dual from the primal (unpack_dual(t)"
            ".primal) or from a detached copy")))
    base = tensor._primal if tensor._lvl is lv else tensor
    t = lv.make(base, tangent)
    set_style(t, TORCH)
    return t


def unpack_dual(tensor: Any, *, level: int | None = None) -> UnpackedDualTensor:
    """``(primal, tangent)`` of ``tensor``; ``tangent`` is ``None`` outside a level."""
    lv = _level(level)
    if lv is not None and not isinstance(tensor, Tensor):
        raise TypeError(f"_unpack_dual(): argument 'dual' (position 1) must be Tensor, not "
                        f"{type(tensor).__name__}")
    if lv is not None and isinstance(tensor, Tensor) and tensor._lvl is lv:
        return UnpackedDualTensor(tensor._primal, tensor._tangent)
    return UnpackedDualTensor(tensor, None)


class dual_level:
    """Context manager (and decorator) for one forward-AD level."""

    def __enter__(self) -> int:
        return enter_dual_level()

    def __exit__(self, *exc: object) -> None:
        exit_dual_level()

    def __call__(self, fn: Any) -> Any:
        import functools

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with self:
                return fn(*args, **kwargs)

        return wrapper


def _is_active() -> bool:  # for tests and debugging
    return bool(_current) and _current[-1] in STATE.levels
