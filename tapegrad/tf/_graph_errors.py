"""TensorFlow's texts for errors raised by a ``tf.function``.

- A Python error while the function is traced (AutoGraph on): TensorFlow's
  ``in user code:`` message, the user's frames (``File "...", line N, in f  *``
  and the source line) then ``Type: message``; the exception keeps its type
  (a ``KeyError`` becomes a subclass whose ``str`` is that message), as
  ``autograph/pyct/error_utils.py`` does.
- A kernel error of the graph (an op that fails when the function runs):
  ``InvalidArgumentError`` (the op error's own class) with ``Graph execution
  error:``, the node, where the function was traced from (``defined at (most
  recent call last):``), the kernel's message and ``[Op:__inference_f_N]``.
- A static shape error while tracing (matmul, broadcasting, reshape, concat):
  ``ValueError`` with the graph builder's text (``Dimensions must be equal,
  but are 3 and 4 for '{{node MatMul}} = MatMul[...]' with input shapes: ...``).
"""

from __future__ import annotations

import linecache
import os
import re
import sys
from collections.abc import Sequence
from typing import Any

from .. import __file__ as _pkg_file

_PKG = os.path.dirname(os.path.abspath(_pkg_file)) + os.sep
Frame = tuple[str, int, str]

# AutoGraph's nested functions (an if's branches, a loop's body and test): their lines
# are the user function's own (TensorFlow's source map shows the function's name)
_GENERATED = re.compile(r"^(if_body|else_body|loop_body|loop_test|extra_test|get_state|"
                        r"set_state)(_\d+)?$")

# tf.errors classes whose __init__ is (node_def, op, message): an error of this kind
# inside a trace is a run-time error of the graph
_KNOWN_STRING_ERRORS = (AssertionError, AttributeError, NameError, NotImplementedError,
                        RuntimeError, StopIteration, TypeError, UnboundLocalError, ValueError)


def outer_stack(depth: int = 1) -> list[Frame]:
    """The caller's frames (outermost first) outside tapegrad, from ``depth`` frames up."""
    f: Any = sys._getframe(depth + 1)
    out: list[Frame] = []
    while f is not None:
        fn = f.f_code.co_filename
        if not fn.startswith(_PKG):
            out.append((fn, f.f_lineno, f.f_code.co_name))
        f = f.f_back
    out.reverse()
    return out


def site_recorder(stop: Any) -> Any:
    """A function giving the user's frames (outermost first) between the trace's start
    (the frame running code ``stop``) and the op being recorded now."""
    pkg = _PKG

    def site() -> tuple[Frame, ...]:
        f: Any = sys._getframe(2)
        out: list[Frame] = []
        while f is not None and f.f_code is not stop:
            fn = f.f_code.co_filename
            if not fn.startswith(pkg):
                out.append((fn, f.f_lineno, f.f_code.co_name))
            f = f.f_back
        out.reverse()
        return tuple(out)

    return site


def _named(frames: Sequence[Frame]) -> list[Frame]:
    """AutoGraph's generated functions under the name of the function they come from."""
    out: list[Frame] = []
    for fn, line, name in frames:
        if _GENERATED.match(name):
            owner = next((n for f, _, n in reversed(out) if f == fn and not _GENERATED.match(n)),
                         None)
            if owner is not None:
                name = owner
        out.append((fn, line, name))
    return out


def tb_frames(tb: Any) -> list[Frame]:
    """The user's frames of a traceback (outermost first), tapegrad's own left out."""
    out: list[Frame] = []
    while tb is not None:
        code = tb.tb_frame.f_code
        if not code.co_filename.startswith(_PKG):
            out.append((code.co_filename, tb.tb_lineno, code.co_name))
        tb = tb.tb_next
    return out


def _copy_notes(src: BaseException, dst: BaseException) -> None:
    notes = getattr(src, "__notes__", None)
    if notes:
        dst.__notes__ = list(notes)  # type: ignore[attr-defined]


# ---------------------------------------------------------------------------- in user code
class MultilineMessageKeyError(KeyError):
    """AutoGraph's ``KeyError`` with a multi-line message (``KeyError`` escapes them)."""

    def __init__(self, message: str, original_key: Any) -> None:
        super().__init__(original_key)
        self.__message = message

    def __str__(self) -> str:
        return self.__message


MultilineMessageKeyError.__name__ = KeyError.__name__
MultilineMessageKeyError.__qualname__ = KeyError.__qualname__


class StagingError(Exception):
    """AutoGraph's error for a Python error raised while tracing whose class cannot be
    rebuilt from a message (its ``__init__`` takes other arguments)."""


def user_code_message(frames: Sequence[Frame], cause: str) -> str:
    lines = ["in user code:", ""]
    for fn, line, name in _named(frames):
        lines.append(f'    File "{fn}", line {line}, in {name}  *')
        code = linecache.getline(fn, line).strip()
        lines.append(f"        {code or '<source unavailable>'}")
    lines.append("")
    lines.extend("    " + m for m in cause.split("\n"))
    lines.append("")
    return "\n".join(lines)


def in_user_code(e: BaseException) -> BaseException | None:
    """TensorFlow's ``in user code:`` form of ``e`` raised while tracing (``None``: no
    user frame, the error is raised as it is)."""
    frames = tb_frames(e.__traceback__)
    if not frames:
        return None
    msg = user_code_message(frames, f"{type(e).__name__}: {e}")
    t = type(e)
    new: BaseException | None = None
    from .errors import OperatorNotAllowedInGraphError

    if t.__init__ is Exception.__init__ or t in _KNOWN_STRING_ERRORS or \
            t is OperatorNotAllowedInGraphError:
        try:
            new = t(msg)
        except Exception:  # noqa: BLE001 - not constructible from a message: as it is
            return None
    elif t is KeyError:
        new = MultilineMessageKeyError(msg, f"{type(e).__name__}: {e}")
    else:  # an error class with a constructor of its own: AutoGraph's StagingError
        new = StagingError(msg)
    _copy_notes(e, new)
    new.ag_pass_through = True  # type: ignore[attr-defined]  # an enclosing trace: as it is
    return new


# ---------------------------------------------------------------------------- graph errors
_PREFIX = re.compile(r"^\{\{function_node [^}]*\}\} ")
_SUFFIX = re.compile(r" \[Op:([A-Za-z0-9_]+)\]( name: .*)?$", re.S)


def split_kernel_message(message: str) -> tuple[str | None, str]:
    """(the op type, the kernel's own message) of an eager kernel error's text."""
    m = _SUFFIX.search(message)
    op = m.group(1) if m else None
    core = message[:m.start()] if m else message
    return op, _PREFIX.sub("", core)


def graph_execution_error(e: BaseException, frames: Sequence[Frame], fn_name: str, uid: int,
                          node: str | None = None) -> BaseException:
    """TensorFlow's ``Graph execution error:`` form of op error ``e`` (same class)."""
    from .errors import OpError

    msg = getattr(e, "message", None) or str(e)
    op, core = split_kernel_message(msg)
    node = node or getattr(e, "tf_node", None) or op or "Identity"
    defined = "".join(f'  File "{fn}", line {line}, in {name}\n\n'
                      for fn, line, name in _named(frames))
    text = (f"Graph execution error:\n\nDetected at node {node} defined at (most recent call "
            f"last):\n{defined}{core}\n\t [[{{{{node {node}}}}}]] "
            f"[Op:__inference_{fn_name}_{uid}]")
    new: BaseException
    if isinstance(e, OpError):
        new = type(e)(None, None, text)
    else:  # pragma: no cover - only op errors are wrapped
        new = type(e)(text)
    _copy_notes(e, new)
    new.ag_pass_through = True  # type: ignore[attr-defined]  # an enclosing trace: as it is
    return new


# ---------------------------------------------------------------------------- shape errors
def graph_trace() -> Any:
    """The innermost ``tf.function`` trace in progress (``None`` eagerly)."""
    from .._core.mode import STATE
    from ..autodiff import tracing

    if not STATE.levels:
        return None
    lv = tracing.current()
    return lv if lv is not None and lv.defer_errors is not None else None


def _tname(lv: Any, t: Any, default: str) -> str:
    if t is not None and t.__dict__.get("_lvl") is lv:
        return str(lv.symbol(t))
    return default


def _dt_attr(dtype: Any) -> str:
    from . import dtypes as _dt

    name = _dt.from_numpy(dtype).name
    return "DT_" + {"float32": "FLOAT", "float64": "DOUBLE", "float16": "HALF"}.get(
        name, name.upper())


def _shp(shape: Sequence[int]) -> str:
    return "[" + ",".join(str(int(d)) for d in shape) + "]"


def shape_error(lv: Any, message: str, node: str, op_type: str, attrs: str,
                inputs: Sequence[str], shapes: Sequence[Sequence[int]], tail: str = ""
                ) -> ValueError:
    """The graph builder's ``ValueError`` for a static shape error while tracing."""
    from .._core.errors import hinted, with_hint

    text = (f"{message} for '{{{{node {node}}}}} = {op_type}[{attrs}]({', '.join(inputs)})' "
            f"with input shapes: {', '.join(_shp(s) for s in shapes)}{tail}.")
    return hinted(ValueError(with_hint(
        text, "inside tf.function shapes are checked when the function is traced")))


def matmul_error(a: Any, b: Any) -> ValueError | None:
    """``tf.matmul``'s inner-dimension error while tracing (``None`` eagerly)."""
    lv = graph_trace()
    if lv is None:
        return None
    sa, sb = a._data.shape, b._data.shape
    if len(sa) != 2 or len(sb) != 2:
        return None
    return shape_error(lv, f"Dimensions must be equal, but are {sa[-1]} and {sb[-2]}",
                       "MatMul", "MatMul", f"T={_dt_attr(a._data.dtype)}, grad_a=false, "
                       "grad_b=false, transpose_a=false, transpose_b=false",
                       [_tname(lv, a, "Const"), _tname(lv, b, "Const_1")], [sa, sb])


_BINARY_NODES = {"AddV2": "add", "Sub": "sub", "Mul": "mul", "RealDiv": "truediv",
                 "Maximum": "Maximum", "Minimum": "Minimum", "Pow": "pow",
                 "FloorDiv": "floordiv", "FloorMod": "floormod", "SquaredDifference":
                 "SquaredDifference", "Greater": "Greater", "Less": "Less",
                 "Equal": "Equal", "NotEqual": "NotEqual", "GreaterEqual": "GreaterEqual",
                 "LessEqual": "LessEqual"}


def broadcast_error(a: Any, b: Any, op_type: str) -> ValueError | None:
    """A binary op's broadcasting error while tracing (``None`` eagerly)."""
    lv = graph_trace()
    if lv is None:
        return None
    sa, sb = tuple(a._data.shape), tuple(b._data.shape)
    n = max(len(sa), len(sb))
    pa, pb = (1,) * (n - len(sa)) + sa, (1,) * (n - len(sb)) + sb
    x, y = next(((p, q) for p, q in zip(pa, pb) if p != q and p != 1 and q != 1), (0, 0))
    node = _BINARY_NODES.get(op_type, op_type)
    attrs = f"T={_dt_attr(a._data.dtype)}"
    if op_type in ("Equal", "NotEqual"):
        attrs += ", incompatible_shape_error=true"
    return shape_error(lv, f"Dimensions must be equal, but are {x} and {y}", node, op_type,
                       attrs, [_tname(lv, a, "Const"), _tname(lv, b, "Const_1")], [sa, sb])


def reshape_error(t: Any, shape: Sequence[int]) -> ValueError | None:
    """``tf.reshape``'s element-count error while tracing (``None`` eagerly)."""
    lv = graph_trace()
    if lv is None or -1 in shape:
        return None
    n = int(t._data.size)
    want = 1
    for d in shape:
        want *= int(d)
    return shape_error(lv, f"Cannot reshape a tensor with {n} elements to shape {_shp(shape)} "
                       f"({want} elements)", "Reshape", "Reshape",
                       f"T={_dt_attr(t._data.dtype)}, Tshape=DT_INT32",
                       [_tname(lv, t, "Const"), "Reshape/shape"],
                       [t._data.shape, [len(shape)]],
                       f" and with input tensors computed as partial shapes: input[1] = "
                       f"{_shp(shape)}")


def concat_error(ts: Sequence[Any], axis: int, i: int, d: int) -> ValueError | None:
    """``tf.concat``'s dimension error while tracing (``None`` eagerly): tensor ``i``
    differs from the first at axis ``d`` (not the concatenation axis)."""
    lv = graph_trace()
    if lv is None:
        return None
    s0 = [x for k, x in enumerate(ts[0]._data.shape) if k != axis]
    si = [x for k, x in enumerate(ts[i]._data.shape) if k != axis]
    dd = d if d < axis else d - 1
    names = [_tname(lv, t, "Const" if k == 0 else f"Const_{k}") for k, t in enumerate(ts)]
    return shape_error(lv, f"Dimension {dd} in both shapes must be equal, but are {s0[dd]} and "
                       f"{si[dd]}. Shapes are {_shp(s0)} and {_shp(si)}.", "concat",
                       "ConcatV2", f"N={len(ts)}, T={_dt_attr(ts[0]._data.dtype)}, "
                       "Tidx=DT_INT32", names + ["concat/axis"],
                       [t._data.shape for t in ts] + [[]],
                       f" and with computed input tensors: input[{len(ts)}] = <{axis}>")


def assign_error(shape: Sequence[int], t: Any, op: str) -> ValueError | None:
    """``assign_add``/``assign_sub``'s shape error while tracing (``None`` eagerly)."""
    lv = graph_trace()
    if lv is None:
        return None
    a, b = tuple(shape), tuple(t._data.shape)
    if len(a) != len(b):
        msg = f"Shapes must be equal rank, but are {len(a)} and {len(b)}"
    else:
        d = next(i for i, (x, y) in enumerate(zip(a, b)) if x != y)
        msg = (f"Dimension {d} in both shapes must be equal, but are {a[d]} and {b[d]}. "
               f"Shapes are {_shp(a)} and {_shp(b)}.")
    return shape_error(lv, msg, op, op, f"dtype={_dt_attr(t._data.dtype)}",
                       [f"{op}/resource", _tname(lv, t, "Const")], [[], b])
