"""tritensor: a torch-free GPU tensor library with PyTorch's names and semantics.

    import tritensor as tt
    x = tt.randn(4, 3, device="cuda", requires_grad=True)
    (x * 2 + 1).exp().sum().backward()
"""
from __future__ import annotations

from . import _methods  # noqa: F401  (binds Tensor methods and operators)
from . import autograd, cuda, nn  # noqa: F401
from .autograd import enable_grad, is_grad_enabled, no_grad, set_grad_enabled  # noqa: F401
from .dtypes import (  # noqa: F401
    bfloat16, bool_ as bool, double, dtype, float, float16, float32, float64, get_default_dtype, half,
    int, int8, int16, int32, int64, long, promote_types, result_type, set_default_dtype, short, uint8,
    can_cast, finfo, iinfo,
)
from .ops.copy import clone  # noqa: F401
from .ops.creation import asarray, from_dlpack  # noqa: F401  (zero-copy interop)
from .ops.creation import (  # noqa: F401
    arange, as_tensor, empty, empty_like, eye, from_numpy, full, full_like, linspace, ones, ones_like,
    rand, rand_like, randint, randint_like, randn, randn_like, tensor, zeros, zeros_like,
)
from .ops.elementwise import (  # noqa: F401
    abs, add, cos, div, eq, exp, ge, gt, le, log, lt, maximum, minimum, mul, ne, neg, pow, relu,
    sigmoid, sin, sqrt, sub, tanh, where,
    abs_, bitwise_and, bitwise_not, bitwise_or, bitwise_xor, ceil, ceil_, clamp, clamp_, clamp_max,
    clamp_min, clip, clip_, cos_, erf, erf_, exp_, exp2, exp2_, expm1, expm1_, fix, fix_, floor, floor_,
    floor_divide, fmod, gelu, isfinite, isinf, isnan, log_, log1p, log1p_, log2, log2_, log10, log10_,
    logical_and, logical_not, logical_or, logical_xor, masked_fill, neg_, relu_, remainder, round,
    round_, rsqrt, rsqrt_, sigmoid_, sign, silu, sin_, sqrt_, tan, tan_, tanh_, trunc, trunc_,
)
from .ops.elementwise import div as divide, div as true_divide, mul as multiply, neg as negative, sub as subtract  # noqa: F401
from .ops.elementwise import abs as absolute, neg_ as negative_  # noqa: F401
from . import backends  # noqa: F401  (tt.backends.cuda.matmul.allow_tf32)
from .backends import cuda as _backends_cuda  # noqa: F401  (binds tt.backends.cuda)
from .backends.cuda import get_float32_matmul_precision, set_float32_matmul_precision  # noqa: F401
from .ops.linalg import addmm, baddbmm, bmm, dot, ger, matmul, mm, mv, outer  # noqa: F401
from .ops.joining import (  # noqa: F401
    cat, chunk, concat, concatenate, flip, fliplr, flipud, hstack, row_stack, split, stack, tensor_split,
    tril, triu, vstack,
)
from .ops.views import as_strided, diag_embed, diagonal, diagonal_scatter  # noqa: F401
from .ops.random import (  # noqa: F401
    Generator, bernoulli, default_generator, get_rng_state, initial_seed, manual_seed, multinomial, normal,
    randperm, seed, set_rng_state,
)
from .ops.reduce import mean, sum  # noqa: F401
from .ops.indexing import (  # noqa: F401
    gather, index_put, index_select, masked_select, nonzero, scatter, scatter_add, scatter_reduce, take,
)
from .ops.reduce import (  # noqa: F401
    all, amax, amin, any, argmax, argmin, count_nonzero, cumprod, cumsum, log_softmax, logsumexp, max,
    min, norm, prod, return_types, softmax, std, var,
)
from .ops.views import (  # noqa: F401
    flatten, narrow, permute, reshape, select, squeeze, t, transpose, unbind, unflatten, unsqueeze,
)
from .runtime.device import device  # noqa: F401
from . import optim, testing, utils  # noqa: F401  (the library layer: optimizers, test helpers, the data pipeline)
from .serialization import load, load_file, save, save_file  # noqa: F401
from .ops.pdist import cdist, pdist  # noqa: F401
from .tensor import Size, Tensor  # noqa: F401

__version__ = "0.1.0"


def is_tensor(obj) -> bool:
    return isinstance(obj, Tensor)


def numel(t) -> int:
    return t.numel()


def broadcast_shapes(*shapes):
    from .ops.elementwise import broadcast_shapes as _b
    return Size(_b(*shapes))
