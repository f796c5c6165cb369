"""``import tapegrad.tf as tf``: TensorFlow's eager API over tapegrad's one engine.

Tensors are :class:`tapegrad.Tensor` objects that print and convert the way
TensorFlow's do; ``tf.GradientTape`` records onto the shared graph and asks
the shared engine for gradients; ``tf.keras`` is a small Keras whose
optimizers reuse the shared update rules.  Code written for TensorFlow runs
with only the import line changed.

>>> import tapegrad.tf as tf
>>> w = tf.Variable(2.0, name="weight")
>>> b = tf.Variable(1.0, name="bias")
>>> with tf.GradientTape() as tape:
...     y = w * w + b
>>> grads = tape.gradient(y, {"w": w, "b": b})
>>> float(y), float(grads["w"]), float(grads["b"])
(5.0, 4.0, 1.0)

Where tapegrad.tf knowingly differs from TensorFlow:

- Gradients of ``tf.gather``/indexing are dense tensors (TensorFlow returns
  ``tf.IndexedSlices``, which ``tf.convert_to_tensor`` turns into the same
  dense values).
- ``tf.random`` gives TensorFlow's own numbers with eager seed rules; inside
  ``tf.function`` (which runs eagerly here) ops draw op seeds as in eager mode,
  not per traced function.
- A Python float (or ``None``) passed as a gradient source is a clear
  ``TypeError`` (TensorFlow fails with an ``AttributeError``).
- ``tf.function`` is accepted and ignored (everything runs eagerly), and
  tensors are hashable.
- ``type(t)`` of a tensor is ``tapegrad.tf.EagerTensor``, a subclass of
  :class:`tapegrad.Tensor` with TensorFlow's printing and methods (TensorFlow's
  is ``tensorflow.python.framework.ops.EagerTensor``), and of a variable ``tapegrad.tf.Variable`` (TensorFlow's
  ``ResourceVariable``); ``isinstance`` answers as in TensorFlow
  (``isinstance(v, tf.Tensor)`` is False for a variable, ``tf.is_tensor(v)``
  True).
- The recorded graph lives as long as the tensors computed from it (the tape
  holds no graph): deleting or resetting a tape frees the tape at once, and a
  non-persistent tape releases the values it saved after its ``gradient``.
- ``tf.explain.why_none(tape, target, source)`` (also ``tape.explain``) is a
  tapegrad addition: it says why a gradient is ``None``.
"""

from __future__ import annotations

import builtins as _builtins
from typing import TYPE_CHECKING as _TYPE_CHECKING
from typing import Any as _Any

from .._core.tensor import Tensor
from . import _indexing, _tensor, dtypes, errors, random
from . import _nest as nest
from ._custom import custom_gradient
from ._indexing import (
    IndexedSlices,
    scatter_nd,
    tensor_scatter_nd_add,
    tensor_scatter_nd_max,
    tensor_scatter_nd_min,
    tensor_scatter_nd_sub,
    tensor_scatter_nd_update,
)
from ._ops import (
    abs,
    add,
    add_n,
    argmax,
    argmin,
    argsort,
    boolean_mask,
    broadcast_to,
    cast,
    ceil,
    clip_by_norm,
    clip_by_value,
    concat,
    constant,
    convert_to_tensor,
    cos,
    cosh,
    cumsum,
    divide,
    einsum,
    equal,
    exp,
    expand_dims,
    eye,
    fill,
    floor,
    floordiv,
    gather,
    gather_nd,
    greater,
    greater_equal,
    identity,
    is_tensor,
    less,
    less_equal,
    logical_and,
    logical_not,
    logical_or,
    matmul,
    maximum,
    meshgrid,
    minimum,
    multiply,
    negative,
    norm,
    not_equal,
    one_hot,
    ones,
    ones_like,
    pad,
    pow,
    rank,
    reduce_all,
    reduce_any,
    reduce_logsumexp,
    reduce_max,
    reduce_mean,
    reduce_min,
    reduce_prod,
    reduce_sum,
    reshape,
    reverse,
    round,
    rsqrt,
    shape,
    sigmoid,
    sign,
    sin,
    size,
    sort,
    split,
    sqrt,
    square,
    squeeze,
    stack,
    stop_gradient,
    subtract,
    tan,
    tanh,
    tensordot,
    tile,
    transpose,
    truediv,
    unstack,
    where,
    zeros,
    zeros_like,
)
from ._ops_extra import (
    Assert,
    bitcast,
    dynamic_partition,
    dynamic_stitch,
    foldl,
    foldr,
    histogram_fixed_width,
    roll,
    scan,
    searchsorted,
    sequence_mask,
    strided_slice,
    unique,
    unique_with_counts,
    unravel_index,
)
from ._ops_extra import complex_ as complex  # noqa: A004  (TensorFlow's names)
from ._ops_extra import slice_ as slice  # noqa: A004
from ._ops_extra import tuple_ as tuple  # noqa: A004
from ._ops_more import (
    acos,
    acosh,
    asin,
    asinh,
    assert_equal,
    assert_greater,
    assert_less,
    assert_rank,
    atan,
    atan2,
    atanh,
    clip_by_global_norm,
    control_dependencies,
    ensure_shape,
    get_static_value,
    group,
    identity_n,
    map_fn,
    no_op,
    repeat,
)
from ._pyfunc import numpy_function, py_function
from ._ranges import linspace, range  # noqa: A004  (TensorFlow's exact lengths and values)
from ._tensor import Reference, TensorShape
from .control_flow import TensorArray, case, cond, switch_case, while_loop
from .dtypes import (
    DType,
    as_dtype,
    bool,
    complex64,
    complex128,
    double,
    float16,
    float32,
    float64,
    half,
    int8,
    int16,
    int32,
    int64,
    uint8,
    uint16,
    uint32,
    uint64,
)
from .parallel import vectorized_map
from .tape import GradientTape, UnconnectedGradients
from .variables import Variable

if not _TYPE_CHECKING:
    # isinstance(x, tf.Tensor): tensors yes, variables no (tapegrad/tf/_types.py)
    from ._types import Tensor  # noqa: F811

_tensor.install()
_indexing.install()

from . import (  # noqa: E402
    autodiff,
    autograph,
    bitwise,
    config,
    data,
    debugging,
    distribute,
    explain,
    image,
    keras,  # noqa: E402
    linalg,
    math,
    nn,
    saved_model,
    sets,
    signal,
    sparse,
    train,
)
from .data.spec import TensorSpec  # noqa: E402
from .function import function, get_logger  # noqa: E402
from .module import Module, device, name_scope  # noqa: E402

__version__ = "2.21.0"  # the TensorFlow API version this module follows

newaxis = None

# TensorFlow 2.21 still exposes Keras's modules under these names
initializers = keras.initializers
optimizers = keras.optimizers
losses = keras.losses
metrics = keras.metrics
# and its own v2 initializers (same call: ``init(shape, dtype)``)
random_normal_initializer = keras.initializers.RandomNormal
random_uniform_initializer = keras.initializers.RandomUniform
zeros_initializer = keras.initializers.Zeros
ones_initializer = keras.initializers.Ones
constant_initializer = keras.initializers.Constant


def executing_eagerly() -> _builtins.bool:
    """Always True: tapegrad runs eagerly."""
    return True


def print(*inputs: _Any, output_stream: _Any = None, sep: str = " ", end: str = "\n",
          summarize: int = 3, name: str | None = None) -> None:
    """``tf.print``: tensors as TensorFlow prints them (``[1 2 3]``), to stderr by default."""
    import numpy as _np

    from .._core.tensor import Tensor as _Core
    from ..autodiff import tracing as _tracing
    from ._print import SINKS as _print_sinks
    from ._print import format_input, stream_of

    tensors: list[_Any] = []

    def collect(v: _Any) -> None:  # the tensors, also inside lists, tuples and dicts
        if isinstance(v, _Core):
            tensors.append(v)
        elif isinstance(v, (list, _builtins.tuple)):
            for e in v:
                collect(e)
        elif isinstance(v, dict):
            for e in v.values():
                collect(e)

    for x in inputs:
        collect(x)

    def emit(*arrays: _Any) -> None:
        values = {id(t): _np.asarray(a) for t, a in zip(tensors, arrays)}

        def array_of(v: _Any) -> _Any:
            return values.get(id(v)) if isinstance(v, _Core) else None

        parts = [format_input(x, array_of, summarize) for x in inputs]
        if _print_sinks:  # the first call of a tf.function: shown after its tracing
            _print_sinks[-1].append((stream, sep.join(parts) + end))
        else:
            stream().write(sep.join(parts) + end)

    stream = stream_of(output_stream)

    # inside tf.function the print is part of the program: it runs on every call
    _tracing.effect(emit, tensors, "tf.print", invalidates=False)


__all__ = [
    "Tensor", "TensorShape", "DType", "Variable", "GradientTape", "UnconnectedGradients",
    "Module", "Reference", "TensorSpec", "data", "config", "distribute", "device", "name_scope",
    "__version__", "custom_gradient", "stop_gradient", "identity", "constant",
    "convert_to_tensor", "zeros", "ones", "zeros_like", "ones_like", "fill", "range",
    "linspace", "eye", "cast", "as_dtype", "dtypes", "errors", "random", "math", "nn",
    "linalg", "keras", "autodiff", "train", "explain", "nest", "float16", "half", "float32",
    "float64",
    "double", "int8", "int16", "int32", "int64", "uint8", "uint16",
    "uint32", "uint64", "bool", "complex64", "complex128",
    "newaxis", "function", "get_logger", "py_function", "numpy_function", "executing_eagerly", "print", "is_tensor",
    "abs", "add", "add_n", "argmax", "argmin", "argsort", "boolean_mask", "broadcast_to",
    "ceil", "clip_by_norm", "clip_by_value", "concat", "cos", "cosh", "cumsum", "divide",
    "einsum", "equal", "exp", "expand_dims", "floor", "floordiv", "gather", "gather_nd",
    "greater", "greater_equal", "less", "less_equal", "logical_and", "logical_not",
    "logical_or", "matmul", "maximum", "meshgrid", "minimum", "multiply", "negative", "norm",
    "not_equal", "one_hot", "pad", "pow", "rank", "reduce_all", "reduce_any",
    "reduce_logsumexp", "reduce_max", "reduce_mean", "reduce_min", "reduce_prod", "reduce_sum",
    "reshape", "reverse", "round", "rsqrt", "shape", "sigmoid", "sign", "sin", "size", "sort",
    "split", "sqrt", "square", "squeeze", "stack", "subtract", "tan", "tanh", "tensordot",
    "tile", "transpose", "truediv", "unstack", "where", "vectorized_map",
]
__all__ += [
    "initializers", "optimizers", "losses", "metrics", "random_normal_initializer",
    "random_uniform_initializer", "zeros_initializer", "ones_initializer", "constant_initializer",
    "IndexedSlices", "scatter_nd", "tensor_scatter_nd_add", "tensor_scatter_nd_max",
    "tensor_scatter_nd_min", "tensor_scatter_nd_sub", "tensor_scatter_nd_update",
]
__all__ += ["saved_model"]
__all__ += ["cond", "while_loop", "switch_case", "case", "TensorArray", "autograph"]
__all__ += [
    "acos", "acosh", "asin", "asinh", "atan", "atan2", "atanh", "repeat", "map_fn",
    "clip_by_global_norm", "control_dependencies", "no_op", "group", "identity_n",
    "get_static_value", "ensure_shape", "assert_equal", "assert_less", "assert_greater",
    "assert_rank",
]
__all__ += ["debugging"]
__all__ += [
    "slice", "strided_slice", "roll", "unique", "unique_with_counts", "searchsorted",
    "sequence_mask", "scan", "foldl", "foldr", "histogram_fixed_width", "bitcast",
    "dynamic_partition", "dynamic_stitch", "unravel_index", "Assert", "tuple", "bitwise",
    "image", "signal", "complex", "sparse", "SparseTensor", "SparseTensorSpec", "sets",
]
SparseTensor = sparse.SparseTensor
SparseTensorSpec = sparse.SparseTensorSpec
