"""``tapegrad.torch``: PyTorch-style autograd on the shared tapegrad core.

Change only the import line (``import tapegrad.torch as torch``) and code
written for PyTorch's autograd runs on tapegrad, printing the same numbers:

>>> import tapegrad.torch as torch
>>> w = torch.tensor(2.0, requires_grad=True)
>>> b = torch.tensor(1.0, requires_grad=True)
>>> y = w * w + b
>>> y.backward()
>>> y, w.grad, b.grad
(tensor(5., grad_fn=<AddBackward0>), tensor(4.), tensor(1.))

Tensors are ``tapegrad.torch.Tensor`` objects (``torch.Tensor`` here), a
subclass of :class:`tapegrad.Tensor` that prints, promotes dtypes, names its
``grad_fn`` and has the methods as PyTorch's; every op, gradient and the
engine are the core's.  ``torch.nn`` gives modules from ``Linear`` to
convolutions, normalization, recurrent and attention layers; ``torch.optim``
every CPU optimizer and scheduler (update rules from :mod:`tapegrad.optim`);
``torch.func``, ``torch.vmap`` and ``torch.autograd.forward_ad`` the function
transforms; ``torch.utils.data``, ``torch.linalg``, ``torch.save``/``load``
the rest of a training script.
"""

from __future__ import annotations

import builtins as _builtins

from .._core.mode import enable_grad, is_grad_enabled, no_grad, set_grad_enabled
from .._core.tensor import Tensor
from . import _methods, _ops, _tensor
from ._dtype import (
    Size,
    complex64,
    complex128,
    dtype,
    float16,
    float32,
    float64,
    get_default_dtype,
    int8,
    int16,
    int32,
    int64,
    set_default_dtype,
    uint8,
    uint16,
    uint32,
    uint64,
)
from ._dtype import bool_ as bool  # noqa: A001  (torch.bool)
from ._extras import meshgrid
from ._ops import *  # noqa: F403
from ._ops import return_types
from ._print import get_printoptions, printoptions, set_printoptions
from ._random import (
    Generator,
    default_generator,
    get_rng_state,
    initial_seed,
    manual_seed,
    seed,
    set_rng_state,
)
from ._tensor import (
    arange,
    as_tensor,
    bernoulli,
    device,
    empty,
    empty_like,
    eye,
    from_numpy,
    full,
    full_like,
    linspace,
    normal,
    ones,
    ones_like,
    rand,
    rand_like,
    randint,
    randint_like,
    randn,
    randn_like,
    randperm,
    tensor,
    zeros,
    zeros_like,
)

_tensor.install()
from . import _grad_names  # noqa: E402

_grad_names.install()
_methods.install()

from . import (  # noqa: E402
    _dynamo,
    _misc,  # noqa: E402
    accelerator,
    autograd,
    backends,
    compiler,
    cuda,
    distributed,
    func,
    linalg,
    nn,
    optim,
    profiler,
    serialization,
    utils,
)
from ._compile import compile  # noqa: E402
from ._misc import (  # noqa: E402
    BoolTensor,
    DoubleTensor,
    FloatTensor,
    HalfTensor,
    IntTensor,
    LongTensor,
    get_default_device,
    get_num_threads,
    is_inference,
    load,
    save,
    set_default_device,
    set_num_threads,
    use_deterministic_algorithms,
)
from .autograd.grad_mode import inference_mode, is_inference_mode_enabled  # noqa: E402
from .func import vmap  # noqa: E402
from .linalg import TORCH_NAMES as _LINALG_NAMES  # noqa: E402

linalg.install()
globals().update(_LINALG_NAMES)  # torch.det, torch.inverse, torch.matrix_exp, ...

half = float16
float = float32  # noqa: A001
double = float64
cfloat = complex64
cdouble = complex128
short = int16
int = int32  # noqa: A001
long = int64

Tensor = _misc.TorchTensor  # type: ignore[misc]  # noqa: F811
strided = "torch.strided"
inf = _builtins.float("inf")
nan = inf - inf
pi = 3.141592653589793
e = 2.718281828459045
__version__ = "2.13.0+tapegrad"


__all__ = [
    # tensors, dtypes, devices
    "Tensor", "Size", "dtype", "device", "float16", "float32", "float64", "complex64",
    "complex128", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    "bool", "half", "float", "double", "cfloat", "cdouble", "short", "int", "long",
    "get_default_dtype", "set_default_dtype", "FloatTensor", "DoubleTensor", "LongTensor",
    "BoolTensor", "IntTensor", "HalfTensor", "inf", "nan", "pi", "e",
    # creation and random numbers
    "tensor", "as_tensor", "from_numpy", "zeros", "ones", "empty", "full", "zeros_like",
    "ones_like", "empty_like", "full_like", "rand_like", "randn_like", "randint_like", "arange",
    "linspace", "eye", "rand", "randn", "randint", "randperm", "normal", "bernoulli", "manual_seed", "seed",
    "initial_seed", "get_rng_state", "set_rng_state", "Generator", "default_generator",
    # grad mode
    "no_grad", "enable_grad", "set_grad_enabled", "is_grad_enabled", "inference_mode",
    "is_inference_mode_enabled", "is_inference",
    # printing, io, misc
    "set_printoptions", "get_printoptions", "printoptions", "save", "load", "return_types",
    "set_default_device", "use_deterministic_algorithms", "get_num_threads",
    "set_num_threads", "compile", "get_default_device",
    # submodules
    "autograd", "nn", "optim", "cuda", "distributed", "utils", "backends", "accelerator", "profiler", "func", "vmap", "serialization", "linalg",
    "compiler", "_dynamo", "cond",
] + list(_ops.__all__) + list(_LINALG_NAMES)


from . import _aliases, _assign, _extras  # noqa: E402
from ._assign import (  # noqa: E402
    index_add,
    index_copy,
    index_fill,
    index_put,
    masked_scatter,
    scatter,
    scatter_add,
)
from ._control import cond  # noqa: E402
from ._extras import fix, inner, moveaxis, ravel, sgn  # noqa: E402
from ._ranges import deprecated_range as range  # noqa: E402, A004  (torch.range)

_extras.install()
_assign.install()

from . import _more, fft, special  # noqa: E402
from ._more import *  # noqa: E402, F403

_more.install()
__all__ += [*_more.__all__, "fft", "special"]

# PyTorch's NumPy-style keyword names (axis=, keepdims=, x1=/x2=, size=, ...) on native functions
_aliases.install(globals(), [*_methods.METHODS, *_assign.method_names(), *_more.method_names()])

__all__ += ["meshgrid", "range", "inner", "moveaxis", "ravel", "fix", "sgn", "index_add",
            "index_copy", "index_fill", "index_put", "masked_scatter", "scatter", "scatter_add"]

# PyTorch's top-level names for nn.functional ops and the adjoint views
from . import _nn_top  # noqa: E402

__all__ += _nn_top.install(globals())

# PyTorch's views (``_base``, shared versions, in-place ops through views), on top of all
from . import _views  # noqa: E402

_views.install(globals())
