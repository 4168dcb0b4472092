"""Which table entries run on uint16/uint32/uint64 tensors: torch 2.13's set, and its error for the rest.

torch gives these dtypes ("limited" unsigned types, dtypes.py) kernels only for creation, copies
and casts, views, joining, eq/ne, bitwise and/or/xor, mul, the sums and products (which
accumulate in int64), sort/argsort/unique and indexing reads; everything else raises
``NotImplementedError: "add_stub" not implemented for 'UInt32'`` (tests/data/
record_unsigned_support.py records the matrix from torch). An op whose arithmetic runs in a
floating dtype (true division, exp, sin, a comparison with a float ...) casts its unsigned
operands first, as torch's TensorIterator does, and works.

dispatch() asks ``check`` on its first-time path only (a cached signature was checked when it was
first seen; an error is never cached), so the hot path pays nothing.

The kernels themselves handle these dtypes whole (unsigned comparisons, division, remainder,
logical shifts, wrap-around add/sub/neg, max/min/argmax, the unsigned sort keys: checked in
tests/test_unsigned_dtypes.py against Python's integers). ``with unrestricted():`` lifts torch's
restriction in the calling thread, for the Array API namespace (the standard has arithmetic and
comparisons on unsigned integers); what runs there is not cached, so torch's namespace keeps
raising for the same signature.
"""
from __future__ import annotations

import threading

from .. import dtypes as _dt
from ..backends.base import backend_for

# entries whose integer kernels torch has for uint16/32/64 (view entries never reach the check)
INTEGER_OK = frozenset({
    "to_copy", "device_copy", "overwrite", "fill", "clone", "cat", "stack", "basic_index", "index", "where",
    "eq", "ne", "bitwise_and", "bitwise_or", "bitwise_xor", "mul",
    "sum", "nansum", "prod", "cumsum", "cumprod", "sort", "argsort",
    "floor", "ceil", "round", "trunc", "nan_to_num", "isnan", "isfinite", "isinf", "isposinf", "isneginf",
    "signbit", "diag_embed", "diagonal_scatter", "select_scatter", "slice_scatter", "as_strided_scatter",
    "slice_backward",
})
# ...of which these accumulate: torch has them only when the accumulation is not itself uint16/32/64
# (sum(x, dtype=torch.uint32) raises "sum_cpu" not implemented for 'UInt32')
_ACCUMULATING = frozenset({"sum", "nansum", "prod", "cumsum", "cumprod"})

# torch's kernel name in its message, where it is not "<entry>_<device kind>"; a name ending in
# "_cpu" takes the device's kind (lt_cuda); the others print no device
_TORCH_KERNEL = {
    "add": "add_stub", "sub": "add_stub", "bitwise_left_shift": "lshift_cpu", "bitwise_right_shift": "rshift_cpu",
    "floor_divide": "div_floor_cpu", "sgn": "sign_cpu", "pow": "pow", "clamp": "clamp_scalar_cpu",
    "clamp_min": "clamp_min_scalar_cpu", "clamp_max": "clamp_max_scalar_cpu", "amax": "max_values_cpu",
    "amin": "min_values_cpu", "gather": "scatter_gather_tensor_cpu", "scatter": "scatter_gather_tensor_cpu",
    "scatter_add": "scatter_gather_tensor_cpu", "index_select": "index_select", "index_put": "index_put",
    "tril": "tril", "triu": "triu", "mm": "addmm_impl_cpu_", "matmul": "addmm_impl_cpu_", "addmm": "addmm_impl_cpu_",
    "bmm": "bmm", "baddbmm": "baddbmm", "bin_count": "bincount_cpu", "count_nonzero": "nonzero_count_cpu",
    "lerp": "lerp_kernel_scalar", "addcmul": "addcmul_cpu_out", "addcdiv": "addcdiv_cpu_out", "median_all": "median_cpu",
    "masked_fill": "masked_fill", "relu": "clamp_min_scalar_cpu", "index_fill": "index_fill_cpu", "index_add": "index_add_cpu_",
    "index_copy": "index_copy_cpu", "masked_scatter": "masked_scatter", "trace": "trace",
}


_state = threading.local()        # .unrestricted: the depth of unrestricted() blocks in this thread


class _Unrestricted:
    """The context of unrestricted(): a class, not a generator (the Array API namespace enters it
    on every call, where a generator's set-up costs several times more)."""
    __slots__ = ()

    def __enter__(self):
        _state.unrestricted = getattr(_state, "unrestricted", 0) + 1

    def __exit__(self, *exc):
        _state.unrestricted -= 1


_UNRESTRICTED = _Unrestricted()


def unrestricted():
    """Every kernel on uint16/uint32/uint64 in this block, not only torch's set (see above)."""
    return _UNRESTRICTED


def _lifted() -> bool:
    return getattr(_state, "unrestricted", 0) > 0


def _limited(dtype) -> bool:
    return dtype._rank > 4 and dtype._kind == 1          # uint16, uint32, uint64


is_limited = _limited


def refuse(kernel: str, dtype, device=None) -> None:
    """For the functions that do not reach check() through a table entry of their own (factories,
    compactions, composites): torch's NotImplementedError naming ``kernel`` (its cpu name; a
    "_cpu" suffix takes the device's kind) when ``dtype`` is uint16/32/64."""
    if dtype is not None and _limited(dtype) and not _lifted():
        kind = backend_for(device).torch_kind if device is not None else "cpu"
        name = kernel[:-4] + "_" + kind if kernel.endswith("_cpu") else kernel
        raise NotImplementedError(f'"{name}" not implemented for \'{_dt.type_name(dtype)}\'')


def kernel_name(op_name: str, device_kind: str) -> str:
    name = _TORCH_KERNEL.get(op_name, f"{op_name}_cpu")
    return name[:-4] + "_" + device_kind if name.endswith("_cpu") else name


def check(op, args, compute, device) -> bool:
    """Raise torch's NotImplementedError when entry ``op`` would run an integer kernel on a
    uint16/uint32/uint64 operand (or accumulate in one) that torch does not have. Returns whether
    dispatch may cache the signature: False for a call only unrestricted() let through."""
    dtype = None
    for a in args:
        d = getattr(a, "_dtype", None)
        if d is not None and _limited(d):
            dtype = d
            break
    if dtype is None and not (compute is not None and _limited(compute)):
        return True
    if compute is not None and compute.is_floating_point:
        return True                              # the operands are cast to a floating dtype first
    if op.name in INTEGER_OK and not (op.name in _ACCUMULATING and compute is not None and _limited(compute)):
        return True
    if _lifted():
        return False
    kind = backend_for(device).torch_kind if device is not None else "cpu"
    raise NotImplementedError(f'"{kernel_name(op.name, kind)}" not implemented for '
                              f"'{_dt.type_name(compute if compute is not None and _limited(compute) else dtype)}'")
