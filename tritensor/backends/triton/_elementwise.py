"""The elementwise launcher: out[...] = FN(*inputs) for 1-3 operands (kernels/elementwise.py),
with a per-signature launch plan so that a repeated call only fills in pointers and scalars."""
from __future__ import annotations

from ...runtime.launch import KernelArg, pointer
from ...runtime.launch import _state as _launch_state
from .. import triton as _backend   # the package: _run and INDEX32_LIMIT are read there per call
from ._plan import (_TENSOR_TYPES, _cdiv, _is_tensor, _kernels, _prod, _scalar_arg, broadcast_strides,
                    coalesce, needs_int64, on_settings_change, pieces, settings, tile_plan)
from ._tiled import launch_tiled


# --------------------------------------------------------------------------- elementwise
# The launch plan of an elementwise call depends only on its signature: the function, every
# operand's shape/strides/dtype (or a scalar's kind), the output(s)' shape/strides/dtype, the
# compute dtype and the settings in force. A signature seen before reuses the plan: per piece its
# grid, its meta-parameters and its launch arguments with the pointer and scalar slots empty, so
# a repeated call only fills in pointers and scalar values (no Python call but the launch's).
# The launch mode and INDEX32_LIMIT are in the key; a change of the block settings drops every
# plan (_plan.on_settings_change).
_EW_PLANS: dict = {}
_EW_PLANS_LIMIT = 4096
on_settings_change(_EW_PLANS.clear)
_new_object = object.__new__


def elementwise(fn, out, inputs, compute, **scalars):
    """out[...] = FN(*inputs): see _elementwise_planned. A signature seen before goes straight
    to the launch with its cached plan."""
    if scalars:
        _elementwise_planned(fn, out, inputs, compute, **scalars)     # raises
        return
    outs = tuple(out) if type(out) in (tuple, list) else (out,)
    # the signature: the launch mode (fixed at the first launch: interpreted or compiled) stands
    # for the settings the plan was made with (None before any launch); tensors by shape,
    # strides and dtype; scalars by kind (int or float bits), never by value
    key = [fn, compute, _launch_state["mode"], _backend.INDEX32_LIMIT, len(outs)]
    values = None             # input index -> the scalar's kernel value
    try:
        for o in outs:
            key += (o._shape, o._stride, o.dtype)
        i = 0
        for x in inputs:
            is_tensor = _TENSOR_TYPES.get(type(x))
            if is_tensor is None:
                is_tensor = _is_tensor(x)
            if is_tensor:
                key += (x._shape, x._stride, x.dtype)
            else:
                kind, value = _scalar_arg(x)
                key.append(kind)
                if values is None:
                    values = {}
                values[i] = value
            i += 1
        key = tuple(key)
        plan = _EW_PLANS.get(key)
    except (TypeError, AttributeError):     # not tensors as the plan knows them: no plan
        key = plan = None
    if plan is None:
        plan = _elementwise_planned(fn, out, inputs, compute)
        if key is not None and plan is not None:
            if len(_EW_PLANS) >= _EW_PLANS_LIMIT:
                _EW_PLANS.clear()
            _EW_PLANS[key] = plan
        return
    operands = outs + tuple(inputs)
    run = _backend._run
    kernel, pieces_ = plan
    for grid, template, pointer_slots, scalar_slots, meta in pieces_:
        args = list(template)
        try:
            for pos, t, extra in pointer_slots:
                x = operands[t]
                storage = x._storage
                dtype = x.dtype
                arg = _new_object(KernelArg)      # runtime.launch.pointer, without its Python calls
                arg._ptr = storage._ptr + (x._offset + extra) * dtype.itemsize
                arg.dtype = dtype
                arg.device_index = storage.device.index
                args[pos] = arg
        except (AttributeError, TypeError):      # a storage whose address or device is not at hand
            for pos, t, extra in pointer_slots:
                args[pos] = pointer(operands[t], extra)
        for pos, i in scalar_slots:
            args[pos] = values[i]
        run(kernel, grid, *args, **meta)


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
        # the plan's slots: (argument position, operand index in outs + inputs, element offset)
        # for each pointer, (argument position, input index) for each scalar value
        pointer_slots = [(i, i, p_offsets[i]) for i in range(len(outs))]
        scalar_slots = []
        operands, operand_strides = [], []
        t = len(outs)   # index of the next tensor operand in p_strides / p_offsets
        for j, (x, (kind, value)) in enumerate(zip(inputs, kinds)):
            pos = len(outs) + len(operands)
            if kind == 0:
                pointer_slots.append((pos, len(outs) + j, p_offsets[t]))
                operands += [pointer(x, p_offsets[t])] + ([0] if len(inputs) > 1 else [])
                operand_strides.append(p_strides[t])
                t += 1
            else:   # a scalar: the pointer slot is unused (any pointer will do)
                pointer_slots.append((pos, 0, p_offsets[0]))
                scalar_slots.append((pos + 1, j))
                operands += [out_ptr, value]
                operand_strides.append((0,) * len(p_shape))
        grid = (_cdiv(n, block),)
        piece_meta = dict(meta, RANK=len(p_shape), WIDE=needs_int64(n, block, p_shape, p_strides))
        args = (*out_ptrs, *operands, n, tuple(p_shape), *(tuple(st) for st in p_strides[:len(outs)]),
                *(tuple(st) for st in operand_strides))
        _backend._run(kernel, grid, *args, **piece_meta)
        template = tuple(None if any(pos == slot[0] for slot in pointer_slots + scalar_slots) else a
                         for pos, a in enumerate(args))
        planned.append((grid, template, tuple(pointer_slots), tuple(scalar_slots), piece_meta))
    return kernel, tuple(planned)

