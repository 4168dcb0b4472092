"""The elementwise launcher: out[...] = FN(*inputs) for 1-3 operands (kernels/elementwise.py),
with a per-signature launch plan so that a repeated call only fills in pointers and scalars."""
from __future__ import annotations

from ...runtime.launch import KernelArg, pointer
from ...runtime.launch import _state as _launch_state
from .. import triton as _backend   # the package: _run and INDEX32_LIMIT are read there per call
from ._plan import (GPU_SETTINGS, INTERPRETER_SETTINGS, MAX_RANK, _TENSOR_TYPES, _cdiv, _is_tensor,
                    _kernels, _prod, _scalar_arg, broadcast_strides, coalesce, needs_int64, pieces,
                    settings, tile_plan)
from ._tiled import launch_tiled


# --------------------------------------------------------------------------- elementwise
# The launch plan of an elementwise call depends only on its signature: the function, every
# operand's shape/strides/dtype (or a scalar's kind), the output(s)' shape/strides/dtype, the
# compute dtype and the settings in force. A signature seen before reuses the plan (grid, coalesced
# shapes and strides, pieces, meta-parameters): only the pointers and the scalar values are new.
_EW_PLANS: dict = {}
_EW_PLANS_LIMIT = 4096


def elementwise(fn, out, inputs, compute, **scalars):
    """out[...] = FN(*inputs): see _elementwise_planned. A signature seen before goes straight
    to the launch with its cached plan."""
    if scalars:
        _elementwise_planned(fn, out, inputs, compute, **scalars)     # raises
        return
    outs = out if isinstance(out, (tuple, list)) else (out,)
    # the signature: the launch mode (fixed at the first launch: interpreted or compiled) stands
    # for the settings the plan was made with (None before any launch); tensors by shape,
    # strides and dtype; scalars by kind (int or float bits), never by value
    # every module setting the plan was made with is in the key too (tests change them)
    key = [fn, compute, _launch_state["mode"], len(outs), _backend.INDEX32_LIMIT, MAX_RANK,
           INTERPRETER_SETTINGS["elementwise_block"], INTERPRETER_SETTINGS["elementwise_warps"],
           GPU_SETTINGS["elementwise_block"], GPU_SETTINGS["elementwise_warps"]]
    values = []               # per input: None for a tensor, else the scalar's kernel value
    try:
        for o in outs:
            key.append((o._shape, o._stride, o.dtype))
        for x in inputs:
            is_tensor = _TENSOR_TYPES.get(type(x))
            if is_tensor is None:
                is_tensor = _is_tensor(x)
            if is_tensor:
                key.append((x._shape, x._stride, x.dtype))
                values.append(None)
            else:
                kind, value = _scalar_arg(x)
                key.append(kind)
                values.append(value)
        key = tuple(key)
    except (TypeError, AttributeError):     # not tensors as the plan knows them: no plan
        key = None
    plan = _EW_PLANS.get(key) if key is not None else None
    if plan is not None:
        _launch_plan(plan, outs, inputs, values)
        return
    plan = _elementwise_planned(fn, out, inputs, compute)
    if key is not None and plan is not None:
        if len(_EW_PLANS) >= _EW_PLANS_LIMIT:
            _EW_PLANS.clear()
        _EW_PLANS[key] = plan


_new_object = object.__new__


def _pointer(x, extra):
    """runtime.launch.pointer, for storages whose address and device are known (KernelArg
    filled in without its __init__); anything else goes through pointer()."""
    storage = x._storage
    ptr = getattr(storage, "_ptr", None)
    device = getattr(storage, "device", None)
    if ptr is None or device is None:
        return pointer(x, extra)
    dtype = x.dtype
    arg = _new_object(KernelArg)
    arg._ptr = ptr + (x._offset + extra) * dtype.itemsize
    arg.dtype = dtype
    arg.device_index = device.index
    return arg


def _launch_plan(plan, outs, inputs, values):
    """The launches of a cached plan: (kernel, meta, pieces), each piece (grid, n, shape,
    output strides, operand strides, offsets, WIDE). ``values``: None per tensor input, the
    kernel value per scalar."""
    kernel, meta, pieces_ = plan
    two_slots = len(inputs) > 1          # binary/ternary kernels take (pointer, value) per operand
    for grid, n, p_shape, out_strides, operand_strides, p_offsets, wide in pieces_:
        out_ptrs = []
        for i, o in enumerate(outs):
            out_ptrs.append(_pointer(o, p_offsets[i]))
        out_ptr = out_ptrs[0]
        operands = []
        t = len(outs)
        for x, value in zip(inputs, values):
            if value is None:
                operands.append(_pointer(x, p_offsets[t]))
                if two_slots:
                    operands.append(0)
                t += 1
            else:
                operands += [out_ptr, value]
        _backend._run(kernel, grid, *out_ptrs, *operands, n, p_shape, *out_strides, *operand_strides,
                      RANK=len(p_shape), WIDE=wide, **meta)


def _elementwise_planned(fn, out, inputs, compute, **scalars):
    """out[...] = FN(*inputs), computed in dtype ``compute`` (a dtype name) and cast to out's dtype.

    ``inputs``: 1-3 operands, each a tensor broadcastable to ``out.shape`` or a Python
    bool/int/float (passed as a kernel scalar). ``out`` may have any strides (in-place ops write
    through views). ``fn`` names a function of kernels/elementwise.py (UNARY, BINARY, TERNARY).
    ``out`` may also be a pair of same-shape tensors for an FN with two results (TERNARY_2OUT,
    e.g. both gradients of a product in one pass over memory).
    No FN takes extra scalar attributes yet: passing any is an error.
    """
    if scalars:
        raise TypeError(f"elementwise({fn!r}): unexpected attributes {sorted(scalars)}")
    k = _kernels()
    inputs = list(inputs)
    outs = list(out) if isinstance(out, (tuple, list)) else [out]
    if len(outs) == 2:
        table = k.elementwise.TERNARY_2OUT if len(inputs) == 3 else None
        if any(tuple(o.shape) != tuple(outs[0].shape) for o in outs):
            raise ValueError(f"elementwise({fn!r}): the outputs must have one shape")
    else:
        table = {1: k.elementwise.UNARY, 2: k.elementwise.BINARY, 3: k.elementwise.TERNARY}.get(len(inputs))
    if table is None or fn not in table:
        raise ValueError(f"elementwise: no {len(inputs)}-operand function named {fn!r} with {len(outs)} result(s)")
    if not any(_is_tensor(x) for x in inputs):
        raise ValueError(f"elementwise({fn!r}): at least one operand must be a tensor")
    out = outs[0]
    if out.numel() == 0:
        return
    out_shape = tuple(out.shape)
    tensors = [x for x in inputs if _is_tensor(x)]
    strides = [tuple(o.stride()) for o in outs] + [broadcast_strides(x, out_shape) for x in tensors]
    shape, strides = coalesce(out_shape, strides)
    # operand kind (0 tensor, 1 int, 2 float bits) and scalar value, per input
    kinds = [(0, 0) if _is_tensor(x) else _scalar_arg(x) for x in inputs]
    if len(inputs) == 1 and kinds[0][0] != 0:
        raise ValueError(f"elementwise({fn!r}): the operand must be a tensor")
    shape, strides, tiled = tile_plan(shape, strides, len(outs))
    if tiled and len(outs) == 1:
        launch_tiled(table[fn], out, inputs, kinds, shape, strides, compute, settings())
        return None      # tiled launches are not planned (their path is already short)
    kernel = {1: k.elementwise.unary_kernel, 2: k.elementwise.binary_kernel,
              3: k.elementwise.ternary_kernel}[len(inputs)]
    if len(outs) == 2:
        kernel = k.elementwise.ternary_2out_kernel
    cfg = settings()
    block = cfg["elementwise_block"]
    meta = dict(FN=table[fn], COMPUTE=k.compute[compute], BLOCK=block, num_warps=cfg["elementwise_warps"])
    if len(inputs) > 1:
        meta.update(zip(("A_KIND", "B_KIND", "C_KIND"), (kind for kind, _ in kinds)))
    planned = []
    for p_shape, p_strides, p_offsets, _ in pieces(shape, strides):
        n = _prod(p_shape)
        out_ptrs = [pointer(o, p_offsets[i]) for i, o in enumerate(outs)]
        out_ptr = out_ptrs[0]
        operands, operand_strides = [], []
        t = len(outs)   # index of the next tensor operand in p_strides / p_offsets
        for x, (kind, value) in zip(inputs, kinds):
            if kind == 0:
                operands += [pointer(x, p_offsets[t])] + ([0] if len(inputs) > 1 else [])
                operand_strides.append(p_strides[t])
                t += 1
            else:   # a scalar: the pointer slot is unused (any pointer will do)
                operands += [out_ptr, value]
                operand_strides.append((0,) * len(p_shape))
        grid = (_cdiv(n, block),)
        wide = needs_int64(n, block, p_shape, p_strides)
        _backend._run(kernel, grid, *out_ptrs, *operands, n, p_shape, *p_strides[:len(outs)],
                      *operand_strides, RANK=len(p_shape), WIDE=wide, **meta)
        planned.append((grid, n, tuple(p_shape), tuple(tuple(st) for st in p_strides[:len(outs)]),
                        tuple(tuple(st) for st in operand_strides), tuple(p_offsets), wide))
    return kernel, meta, tuple(planned)

