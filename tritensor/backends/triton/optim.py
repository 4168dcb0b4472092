"""Launchers of the multi-tensor optimizer kernels (kernels/optim.py): one launch per call.

Each function takes lists of tensors of one device and one dtype, all contiguous (the optimizer
layer stages anything else), and updates them in place with ONE kernel launch: the tensors'
addresses and sizes go into an int64 table (layout in kernels/optim.py) that is copied to the
device once per call, and the grid enumerates (tensor, chunk) pairs across the whole list.

When every address is a multiple of 16 bytes (the caching allocator's blocks are; a parameter
that is a view at an odd offset is not) the kernel is told so (ALIGNED) and loads 16-byte vectors.

Hyper-parameters travel as float64 bit patterns in the table (Triton would type a Python float
argument float32, losing float64 params' precision); the kernel rounds them to its compute dtype.
"""
from __future__ import annotations

import struct

import numpy as np

from .. import triton as tb
from ._memory import upload

_K = None

# Under the interpreter every program (and every jit helper call) costs Python time: one block of
# 64 elements per program keeps the tests' small tensors crossing chunk boundaries with few
# programs. On a GPU: 4 blocks of 1024 elements per program (enough bytes in flight per SM for a
# memory-bound update; the compile check covers ITERS > 1).
GPU_SETTINGS = {"block": 1024, "iters": 4, "warps": 4}
INTERPRETER_SETTINGS = {"block": 64, "iters": 1, "warps": 4}


def settings():
    return INTERPRETER_SETTINGS if tb.interpreting() else GPU_SETTINGS


def _kernels():
    global _K
    if _K is None:
        from tritensor.kernels import optim as optim_k
        _K = optim_k
    return _K


def _bits(value) -> int:
    """The int64 bit pattern of float64(value)."""
    return struct.unpack("<q", struct.pack("<d", float(value)))[0]


def _compute(dtype):
    import triton.language as tl
    return tl.float64 if dtype.name == "float64" else tl.float32


def _element_type(dtype):
    import triton.language as tl
    return {"float16": tl.float16, "bfloat16": tl.bfloat16, "float32": tl.float32,
            "float64": tl.float64}[dtype.name]


def _launch(kernel, header, rows, like, **flags):
    """Build the table for ``rows`` (numel, [param, grad, state0..2 tensors or None], [word0, word1])
    and launch ``kernel`` once over every (tensor, chunk) pair. ``like``: a tensor giving the
    device and dtype of the launch. Returns the number of launches (0 when nothing to update)."""
    k = _kernels()
    cfg = settings()
    chunk = cfg["block"] * cfg["iters"]
    counts = [-(-int(numel) // chunk) for numel, _, _ in rows]
    n_chunks = sum(counts)
    if n_chunks == 0:          # every tensor is empty: no launch, as for any zero-size op
        return 0
    table = np.zeros(k.HEADER + k.ROW * len(rows) + 2 * n_chunks, dtype=np.int64)
    table[: len(header)] = [_bits(h) for h in header]
    aligned = True
    for r, (numel, tensors, words) in enumerate(rows):
        row = k.HEADER + k.ROW * r
        table[row] = int(numel)
        for j, t in enumerate(tensors):
            if t is not None:
                address = t.data_ptr()
                aligned = aligned and address % 16 == 0
                table[row + 1 + j] = address
        for j, w in enumerate(words):
            table[row + 6 + j] = w
    chunk_base = k.HEADER + k.ROW * len(rows)
    pairs = table[chunk_base:].reshape(n_chunks, 2)
    pairs[:, 0] = np.repeat(np.arange(len(rows), dtype=np.int64), counts)
    firsts = np.arange(n_chunks, dtype=np.int64) - np.repeat(np.cumsum(counts) - counts, counts)
    pairs[:, 1] = firsts * chunk
    device_table = upload(like, table)
    tb._run(kernel, (n_chunks,), tb.pointer(device_table), chunk_base,
            DTYPE=_element_type(like.dtype), COMPUTE=_compute(like.dtype), BLOCK=cfg["block"],
            ITERS=cfg["iters"], ALIGNED=aligned, num_warps=cfg["warps"], **flags)
    return 1


def sgd(params, grads, momentum_buffers, new_buffer, *, lr, weight_decay, momentum, dampening,
        nesterov, maximize):
    """torch's SGD step for every tensor. ``momentum_buffers[i]`` (when momentum != 0) is updated
    in place; ``new_buffer[i]`` True means it was just allocated and starts as the gradient."""
    rows = []
    for i, (p, g) in enumerate(zip(params, grads)):
        buf = momentum_buffers[i] if momentum != 0 else None
        rows.append((p.numel(), [p, g, buf, None, None], [int(bool(new_buffer[i])) if momentum != 0 else 0]))
    header = [-lr, weight_decay, momentum, 1 - dampening]
    return _launch(_kernels().sgd_kernel, header, rows, params[0], HAS_WD=weight_decay != 0,
                   HAS_MOMENTUM=momentum != 0, NESTEROV=bool(nesterov), MAXIMIZE=bool(maximize))


def adam(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, steps, *, lr, beta1, beta2, eps,
         weight_decay, amsgrad, maximize, decoupled_weight_decay):
    """torch's Adam/AdamW step for every tensor; ``steps[i]`` is tensor i's step count after
    this step's increment (bias corrections are per tensor, computed here in float64 as torch
    computes them in Python)."""
    rows = []
    for i, (p, g) in enumerate(zip(params, grads)):
        step = steps[i]
        bias_correction1 = 1 - beta1 ** step
        bias_correction2 = 1 - beta2 ** step
        step_size = lr / bias_correction1
        bias_correction2_sqrt = bias_correction2 ** 0.5
        vmax = max_exp_avg_sqs[i] if amsgrad else None
        rows.append((p.numel(), [p, g, exp_avgs[i], exp_avg_sqs[i], vmax],
                     [_bits(-step_size), _bits(bias_correction2_sqrt)]))
    header = [1 - beta1, beta2, 1 - beta2, weight_decay, 1 - lr * weight_decay, eps]
    return _launch(_kernels().adam_kernel, header, rows, params[0], HAS_WD=weight_decay != 0,
                   DECOUPLED=bool(decoupled_weight_decay), AMSGRAD=bool(amsgrad), MAXIMIZE=bool(maximize))


def rmsprop(params, grads, square_avgs, momentum_buffers, grad_avgs, *, lr, alpha, eps, weight_decay,
            momentum, centered, maximize):
    """torch's RMSprop step for every tensor (momentum_buffers used when momentum > 0, grad_avgs
    when centered)."""
    rows = []
    for i, (p, g) in enumerate(zip(params, grads)):
        rows.append((p.numel(), [p, g, square_avgs[i], momentum_buffers[i] if momentum > 0 else None,
                                 grad_avgs[i] if centered else None], []))
    header = [-lr, alpha, 1 - alpha, eps, weight_decay, momentum]
    return _launch(_kernels().rmsprop_kernel, header, rows, params[0], HAS_WD=weight_decay != 0,
                   HAS_MOMENTUM=momentum > 0, CENTERED=bool(centered), MAXIMIZE=bool(maximize))


def adagrad(params, grads, state_sums, steps, *, lr, weight_decay, lr_decay, eps, maximize):
    """torch's Adagrad step for every tensor; ``steps[i]`` is tensor i's step count after this
    step's increment (its decayed lr computed here in float64, as torch computes it in Python)."""
    rows = []
    for i, (p, g) in enumerate(zip(params, grads)):
        clr = lr / (1 + (steps[i] - 1) * lr_decay)
        rows.append((p.numel(), [p, g, state_sums[i], None, None], [_bits(-clr)]))
    header = [weight_decay, eps]
    return _launch(_kernels().adagrad_kernel, header, rows, params[0], HAS_WD=weight_decay != 0,
                   MAXIMIZE=bool(maximize))
