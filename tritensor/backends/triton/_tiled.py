"""The tiled launch (kernels/tiled.py): an elementwise function or a copy over operands that
disagree about their contiguous dim (a transpose), walked in 2-D tiles so that every operand is
read along its own fast dim (see _plan.tile_plan)."""
from __future__ import annotations

from ...runtime.launch import pointer
from .. import triton as _backend   # the package: every launch goes through _backend._run
from ._plan import _cdiv, _kernels, _next_pow2, _prod


def launch_tiled(fn, out, operands, kinds, shape, strides_list, compute, cfg):
    """One tiled_kernel launch over ``shape`` (the last two dims are the tile's R and C, see
    tile_plan). ``operands``: up to 3 tensors or scalars with their (kind, value) in ``kinds``;
    ``strides_list``: the output's strides, then one entry per tensor operand."""
    k = _kernels()
    R, C = int(shape[-2]), int(shape[-1])
    outer = list(shape[:-2]) or [1]
    tile_r, tile_c = min(cfg["tile"], _next_pow2(R)), min(cfg["tile"], _next_pow2(C))
    def outer_then_tile(st):      # a size-1 outer dim of stride 0 when the problem has none
        return tuple(st[:-2] or [0]) + tuple(st[-2:])

    strides = iter(strides_list[1:])
    out_ptr = pointer(out)
    args, all_strides = [], [outer_then_tile(strides_list[0])]
    unused = [(None, (1, 0))] * (3 - len(operands))      # operand slots the kernel never reads
    for x, (kind, value) in list(zip(operands, kinds)) + unused:
        if kind == 0:
            args += [pointer(x), 0]
            all_strides.append(outer_then_tile(next(strides)))
        else:             # a scalar (or an unused slot): the pointer is never loaded
            args += [out_ptr, value]
            all_strides.append((0,) * (len(outer) + 2))
    kinds = [kind for kind, _ in kinds] + [1] * len(unused)
    grid = (_prod(outer) * _cdiv(R, tile_r) * _cdiv(C, tile_c),)
    _backend._run(k.tiled.tiled_kernel, grid, out_ptr, *args, R, C, tuple(outer), *all_strides,
                  FN=fn, N_IN=len(operands), A_KIND=kinds[0], B_KIND=kinds[1], C_KIND=kinds[2],
                  COMPUTE=k.compute[compute], ORANK=len(outer), TILE_R=tile_r, TILE_C=tile_c,
                  num_warps=cfg["tile_warps"])


