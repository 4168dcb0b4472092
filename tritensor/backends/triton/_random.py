"""Random fills (kernels/random.py): uniform, normal and integers from a Philox stream
(seed, offset), so that a fill is reproducible and independent of the launch configuration."""
from __future__ import annotations

from ...runtime.launch import pointer
from .. import triton as _backend   # the package: every launch goes through _backend._run
from ._plan import _cdiv, _float_bits, _kernels, _prod, coalesce, pieces, settings


def random(out, kind, seed, offset, a, b):
    """Fill ``out`` (float dtype, any strides) from Philox stream (seed, offset): the element at
    row-major position i gets the number at stream position offset + i. kind "uniform": U[a, b);
    "normal": mean a, std b; "integers": a + (a 32-bit word mod b), for ints a and 1 <= b <= 2**32
    (any out dtype); "exponential" (a = 1 / lambda), "cauchy" (median a, sigma b), "log_normal"
    (mean a, std b) and "geometric" (b = 1 / log(1 - p); any out dtype): torch's transforms
    (kernels/random.py). The caller advances its offset past numel numbers; float64 uniform/normal
    take two words per number (full precision), positions offset + 2i and offset + 2i + 1, so
    the caller advances 2 * numel (and passes an even offset)."""
    kinds = {"uniform": 0, "normal": 1, "integers": 2, "exponential": 3, "cauchy": 4, "log_normal": 5,
             "geometric": 6}
    if kind not in kinds:
        raise ValueError(f"random: unknown kind {kind!r}")
    if kind not in ("integers", "geometric") and not out.dtype.is_floating_point:
        raise TypeError(f"random: {kind} needs a floating point tensor, got {out.dtype}")
    if kind == "integers" and not 1 <= b <= 2 ** 32:
        raise ValueError(f"random: an integer range of {b} is outside 1 .. 2**32")
    if out.numel() == 0:
        return
    k = _kernels()
    tl = k.tl
    if kind == "integers":
        compute, a_arg, b_arg = tl.int64, int(a), int(b)
    else:
        compute, a_arg, b_arg = (tl.float64 if out.dtype.name == "float64" else tl.float32), _float_bits(a), _float_bits(b)
    shape, strides = coalesce(tuple(out.shape), [tuple(out.stride())])
    cfg = settings()
    block = max(4, cfg["random_block"])
    seed, offset = int(seed), int(offset)
    if kind != "integers" and out.dtype.name == "float64":
        # full float64 precision: two stream words per number (the caller advances 2 * numel)
        if offset % 2:
            raise ValueError(f"random: a float64 fill needs an even stream offset, got {offset}")
        for p_shape, p_strides, p_offsets, base in pieces(shape, strides):
            n = _prod(p_shape)
            start = offset + 2 * base
            shift = (start % 4) // 2
            _backend._run(k.random.random_f64_kernel, (_cdiv(n + shift, block),), pointer(out, p_offsets[0]), n, seed,
                          start // 4, a_arg, b_arg, p_shape, p_strides[0], SHIFT=shift, KIND=kinds[kind],
                          RANK=len(p_shape), BLOCK=block, num_warps=cfg["random_warps"])
        return
    for p_shape, p_strides, p_offsets, base in pieces(shape, strides):
        n = _prod(p_shape)
        start = offset + base    # stream position of this piece's first element
        _backend._run(k.random.random_kernel, (_cdiv(n + start % 4, block),), pointer(out, p_offsets[0]), n, seed,
                      start // 4, a_arg, b_arg, p_shape, p_strides[0], SHIFT=start % 4,
                      KIND=kinds[kind], COMPUTE=compute, RANK=len(p_shape), BLOCK=block,
                      num_warps=cfg["random_warps"])


_SAMPLE_KINDS = {"gamma": 0, "poisson": 1, "binomial": 2}
# a guard on each block's rejection rounds (kernels/random_sample.py): far past any real need
_MAX_ROUNDS = 4096
# the smallest normal number of each dtype (torch's numeric_limits<scalar_t>::min())
_TINY = {"float16": 6.103515625e-05, "bfloat16": 1.1754943508222875e-38, "float32": 1.1754943508222875e-38,
         "float64": 2.2250738585072014e-308}


def sample(out, kind, params, seed, counter0):
    """Fill contiguous ``out`` with draws of kernels/random_sample.py's samplers ("gamma": alpha;
    "poisson": rate; "binomial": count, prob; ``params`` contiguous, of out's shape and dtype):
    element i draws from Philox counter counter0 + i (the caller reserves numel counters)."""
    if kind not in _SAMPLE_KINDS:
        raise ValueError(f"sample: unknown kind {kind!r}")
    n = out.numel()
    if n == 0:
        return
    k = _kernels()
    from tritensor.kernels import random_sample   # (kernel modules load on first use: package docstring)
    compute = k.tl.float64 if out.dtype.name == "float64" else k.tl.float32
    tiny = _TINY[out.dtype.name]
    block = settings()["sample_block"]
    p1 = params[1] if len(params) > 1 else params[0]
    _backend._run(random_sample.sample_kernel, (_cdiv(n, block),), pointer(out, 0), pointer(params[0], 0),
                  pointer(p1, 0), n, int(seed), int(counter0), KIND=_SAMPLE_KINDS[kind], COMPUTE=compute,
                  MAX_ROUNDS=_MAX_ROUNDS, TINY=tiny, BLOCK=block, num_warps=settings()["random_warps"])
