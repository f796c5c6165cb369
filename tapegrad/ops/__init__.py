"""Every primitive and composite op, under numpy names."""

from __future__ import annotations

from .elementwise import (
    abs,
    add,
    cast,
    ceil,
    clip,
    clone,
    cos,
    divide,
    elu,
    equal,
    erf,
    exp,
    expm1,
    floor,
    floor_divide,
    greater,
    greater_equal,
    identity,
    isfinite,
    isinf,
    isnan,
    leaky_relu,
    less,
    less_equal,
    log,
    log1p,
    logical_and,
    logical_not,
    logical_or,
    logical_xor,
    maximum,
    minimum,
    multiply,
    negative,
    not_equal,
    power,
    reciprocal,
    relu,
    remainder,
    round,
    sigmoid,
    sign,
    sin,
    sqrt,
    square,
    subtract,
    tan,
    tanh,
    where,
)
from .linalg import dot, einsum, matmul, outer
from .nn import (
    cross_entropy,
    gelu,
    mse_loss,
    sigmoid_cross_entropy_with_logits,
    softmax_cross_entropy_with_logits,
    softplus,
)
from .reduce import (
    all,
    amax,
    amin,
    any,
    argmax,
    argmin,
    cumsum,
    log_softmax,
    logsumexp,
    max,
    mean,
    min,
    norm_axis,
    prod,
    softmax,
    std,
    sum,
    var,
)
from .shape import (
    broadcast_to,
    concat,
    concatenate,
    expand_dims,
    flip,
    getitem,
    index_add,
    index_add_zeros,
    moveaxis,
    pad,
    permute,
    reshape,
    setitem,
    split,
    squeeze,
    stack,
    sum_to,
    swapaxes,
    take,
    transpose,
)

true_divide = divide

# a literal list, so that type checkers see what ``from tapegrad.ops import *`` gives
__all__ = [
    "abs", "add", "all", "amax", "amin", "any", "argmax", "argmin", "broadcast_to", "cast",
    "ceil", "clip", "clone", "concat", "concatenate", "cos", "cross_entropy", "cumsum",
    "divide", "dot", "einsum", "elu", "equal", "erf", "exp", "expand_dims",
    "expm1", "flip", "floor", "floor_divide", "gelu", "getitem", "greater", "greater_equal",
    "identity", "index_add", "index_add_zeros", "isfinite", "isinf", "isnan", "leaky_relu", "less",
    "less_equal", "log", "log1p", "log_softmax", "logical_and", "logical_not",
    "logical_or", "logical_xor", "logsumexp", "matmul", "max", "maximum", "mean", "min",
    "minimum", "moveaxis", "mse_loss", "multiply", "negative", "norm_axis", "not_equal",
    "outer", "pad", "permute", "power", "prod", "reciprocal", "relu", "remainder",
    "reshape", "round", "setitem", "sigmoid", "sigmoid_cross_entropy_with_logits",
    "sign", "sin", "softmax", "softmax_cross_entropy_with_logits", "softplus", "split", "sqrt",
    "square", "squeeze", "stack", "std", "subtract", "sum", "sum_to", "swapaxes", "take",
    "tan", "tanh", "transpose", "true_divide", "var", "where",
]


def _install() -> None:
    from . import tensor_methods

    tensor_methods.bind()


_install()
