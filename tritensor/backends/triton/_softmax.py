"""The fused softmax family (kernels/softmax.py): softmax, log_softmax and their backwards along
one dim, rows that fit in registers read once, longer rows streamed."""
from __future__ import annotations

from ...runtime.launch import KernelArg, pointer
from ...runtime.launch import _state as _launch_state
from .. import triton as _backend   # the package: every launch goes through _backend._run
from ._memory import _dtype
from ._plan import (_cdiv, _kernels, _next_pow2, _prod, _row_blocks, _row_problem, on_settings_change, pieces,
                    settings)


_SOFTMAX_MODES = {"softmax": 0, "log_softmax": 1, "softmax_backward": 2, "log_softmax_backward": 3}
# Launch plans per signature (mode, dim, compute dtype, each operand's shape/strides/dtype, the
# launch mode, INDEX32_LIMIT), as _elementwise.py keeps them: a repeated call only fills in the
# pointers (the first H200 run: ~0.55 us of host time per Python call, and the plan's ~40 calls
# were inside every timed softmax). A change of the launch settings drops them.
_PLANS: dict = {}
_PLANS_LIMIT = 4096
on_settings_change(_PLANS.clear)
_new_object = object.__new__


def softmax(mode, out, x, dim, compute, grad=None):
    """Fused softmax family along ``dim`` (non-negative int), computed in ``compute``:
    "softmax" / "log_softmax": out = f(x); "softmax_backward" / "log_softmax_backward": x is the
    forward's output y and ``grad`` the incoming gradient; out = y * (grad - sum(grad * y)) or
    grad - exp(y) * sum(grad). Every operand may have any strides; all are read in place."""
    m = _SOFTMAX_MODES[mode]
    if 0 in out._shape:
        return
    if (grad is None) != (m < 2):
        raise ValueError(f"softmax({mode!r}): grad is {'missing' if grad is None else 'unexpected'}")
    key = (m, dim, compute, _launch_state["mode"], _backend.INDEX32_LIMIT, x._shape, x._stride, x.dtype,
           out._shape, out._stride, out.dtype, None if grad is None else (grad._shape, grad._stride, grad.dtype))
    plan = _PLANS.get(key)
    if plan is None:
        plan = _softmax_plan(m, out, x, dim, compute, grad)
        if len(_PLANS) >= _PLANS_LIMIT:
            _PLANS.clear()
        _PLANS[key] = plan
    g = x if grad is None else grad
    run = _backend._run
    for kernel, grid, (x_off, out_off, g_off), tail, meta in plan:
        try:
            x_ptr, g_ptr, out_ptr = _address(x, x_off), _address(g, g_off), _address(out, out_off)
        except (AttributeError, TypeError):     # a storage whose address or device is not at hand
            x_ptr, g_ptr, out_ptr = pointer(x, x_off), pointer(g, g_off), pointer(out, out_off)
        run(kernel, grid, x_ptr, g_ptr, out_ptr, *tail, **meta)


def _address(t, extra):
    """runtime.launch.pointer without its calls (storage.data_ptr, KernelArg.__init__)."""
    storage = t._storage
    dtype = t.dtype
    arg = _new_object(KernelArg)
    arg._ptr = storage._ptr + (t._offset + extra) * dtype.itemsize
    arg.dtype = dtype
    arg.device_index = storage.device.index
    return arg


def _softmax_plan(m, out, x, dim, compute, grad):
    """[(kernel, grid, (x, out, grad) element offsets, the other arguments, meta)] per piece."""
    k = _kernels()
    cfg = settings()
    operands = [x, out] + ([grad] if grad is not None else [])
    kshape, kstrides, N, nstrides = _row_problem(out.shape, dim, operands)
    if grad is None:
        kstrides.append(kstrides[0])
        nstrides.append(nstrides[0])
    # A row that fits in registers is read once (ONE_TILE); longer rows stream in chunks.
    one_tile = N * _dtype(compute).itemsize <= cfg["row_resident_bytes"]
    plan = []
    for p_shape, p_strides, p_offsets, _ in pieces(kshape, kstrides):
        M = _prod(p_shape)
        block_m, block_n = _row_blocks(M, N, _next_pow2(N) if one_tile else cfg["row_max_block_n"], cfg)
        warps = cfg["row_warps"]
        if one_tile:   # about 32 values of 4 bytes per thread: enough loads in flight, no spills
            warps = min(cfg["row_resident_warps"], max(warps // 2, block_m * block_n // 1024))
        offsets = (p_offsets[0], p_offsets[1], p_offsets[2] if grad is not None else p_offsets[0])
        tail = (M, N, p_shape, p_strides[0], p_strides[2], p_strides[1], nstrides[0], nstrides[2], nstrides[1])
        meta = dict(MODE=m, COMPUTE=k.compute[compute], KRANK=len(p_shape), BLOCK_M=block_m, BLOCK_N=block_n,
                    ONE_TILE=one_tile, num_warps=warps)
        plan.append((k.softmax.softmax_kernel, (_cdiv(M, block_m),), offsets, tail, meta))
    return plan

