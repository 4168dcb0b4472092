"""tritensor.array_api: the Python Array API standard's namespace (2024.12) over tritensor.

    import tritensor as tt
    x = tt.ones(3, device="cuda")
    xp = x.__array_namespace__()            # this module
    xp.sum(xp.sign(x), axis=0, keepdims=True)

Arrays are tritensor's own tensors; each function is a thin adapter over tritensor's ops (same
kernels, same autograd). The top-level ``tritensor`` namespace stays PyTorch's; here the standard's
names and rules hold where they differ from torch: ``axis``/``keepdims``, ``sign(nan)`` is NaN,
``unique_*`` named tuples, ``nonzero`` as a tuple, ``copy=`` on astype/asarray/reshape, stable sorts
by default, 0-d arrays promoting as any array, Python scalars taking the array's dtype.
The functions return ``Array``s (_array.py): tritensor Tensors whose operators (``x + y``, ``x // y``,
``x[::-1]``) follow the standard too; a plain Tensor's operators stay torch's.
"""
from __future__ import annotations

from . import _linalg, linalg  # noqa: F401
# No ``fft``: the standard's extensions are optional, and clients detect one by its presence
# (xp.fft); its transforms need complex dtypes, which tritensor does not have yet.
from ._constants import e, inf, nan, newaxis, pi  # noqa: F401
from ._creation import (  # noqa: F401
    arange, asarray, empty, empty_like, eye, from_dlpack, full, full_like, linspace, meshgrid, ones, ones_like, tril,
    triu, zeros, zeros_like)
from ._dtypes import (  # noqa: F401
    astype, bool, can_cast, finfo, float32, float64, iinfo, int8, int16, int32, int64, isdtype, result_type, uint8)
from ._dtypes import _UNSIGNED_WIDE
from ._elementwise import *  # noqa: F401,F403
from ._elementwise import __all__ as _ELEMENTWISE
from ._info import __array_namespace_info__  # noqa: F401
from ._linalg import matmul, matrix_transpose, tensordot, vecdot  # noqa: F401
from ._manipulation import (  # noqa: F401
    broadcast_arrays, broadcast_to, concat, expand_dims, flip, moveaxis, permute_dims, repeat, reshape, roll, squeeze,
    stack, take, take_along_axis, tile, unstack)
from ._searching import (  # noqa: F401
    argmax, argmin, argsort, nonzero, searchsorted, sort, unique_all, unique_counts, unique_inverse, unique_values,
    where)
from ._statistical import (  # noqa: F401
    all, any, count_nonzero, cumulative_prod, cumulative_sum, diff, max, mean, min, prod, std, sum, var)

__array_api_version__ = "2024.12"
SUPPORTED_VERSIONS = ("2021.12", "2022.12", "2023.12", "2024.12")

# uint16/uint32/uint64 where tritensor's core has them
globals().update({d.name: d for d in _UNSIGNED_WIDE})


__all__ = sorted(
    ["__array_api_version__", "__array_namespace_info__", "e", "inf", "nan", "newaxis", "pi", "linalg",
     "bool", "int8", "int16", "int32", "int64", "uint8", "float32", "float64"]
    + [d.name for d in _UNSIGNED_WIDE]
    + ["arange", "asarray", "empty", "empty_like", "eye", "from_dlpack", "full", "full_like", "linspace", "meshgrid",
       "ones", "ones_like", "tril", "triu", "zeros", "zeros_like",
       "astype", "can_cast", "finfo", "iinfo", "isdtype", "result_type",
       "matmul", "matrix_transpose", "tensordot", "vecdot",
       "broadcast_arrays", "broadcast_to", "concat", "expand_dims", "flip", "moveaxis", "permute_dims", "repeat",
       "reshape", "roll", "squeeze", "stack", "take", "take_along_axis", "tile", "unstack",
       "argmax", "argmin", "argsort", "nonzero", "searchsorted", "sort", "unique_all", "unique_counts",
       "unique_inverse", "unique_values", "where",
       "all", "any", "count_nonzero", "cumulative_prod", "cumulative_sum", "diff", "max", "mean", "min", "prod", "std",
       "sum", "var"]
    + list(_ELEMENTWISE))
_FUNCTIONS = [n for n in __all__ if n not in ("linalg", "e", "inf", "nan", "newaxis", "pi")]

def _standardize(module, names):
    """Each function returns Arrays (``_array.as_array``: the standard's operators on its results)
    and runs under ops/_unsigned.unrestricted() where the namespace lists the wide unsigned types
    (the standard has arithmetic and comparisons on every unsigned type, torch only a few kernels;
    tt's kernels handle them all)."""
    import functools
    import types

    from ._array import _unsigned_context, as_array

    for name in names:
        fn = getattr(module, name)
        if not isinstance(fn, types.FunctionType):
            continue

        def standard(*args, __fn=fn, **kwargs):
            with _unsigned_context():
                return as_array(__fn(*args, **kwargs), args)
        setattr(module, name, functools.wraps(fn)(standard))


def _setup():
    import sys

    from ._array import install
    namespace = sys.modules[__name__]
    _standardize(linalg, linalg.__all__)
    _standardize(namespace, [n for n in _FUNCTIONS if n != "__array_namespace_info__"])
    install(namespace)


_setup()
