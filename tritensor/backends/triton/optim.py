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
INTERPRETER_FAST_SETTINGS = {"block": 16384, "iters": 1, "warps": 4}   # the emulated device's default profile (_plan.py): few, large programs


def settings():
    return tb.pick(GPU_SETTINGS, INTERPRETER_FAST_SETTINGS, INTERPRETER_SETTINGS)


def _kernels():
    global _K
    if _K is None:
        from tritensor.kernels import optim as optim_k
        _K = optim_k
    return _K


def _compute(dtype):
    import triton.language as tl
    return tl.float64 if dtype.name == "float64" else tl.float32


def _element_type(dtype):
    import triton.language as tl
    return {"float16": tl.float16, "bfloat16": tl.bfloat16, "float32": tl.float32,
            "float64": tl.float64}[dtype.name]


def _addresses(tensors):
    """Each tensor's data address (0 for None): the storage's base plus the element offset, read
    from the attributes directly (this runs once per tensor and step)."""
    out = []
    for t in tensors:
        if t is None:
            out.append(0)
        else:
            storage = t._storage
            base = storage._ptr
            out.append((storage.data_ptr() if base is None else base) + t._offset * t._dtype.itemsize)
    return out


def _launch(kernel, header, numels, columns, words, like, extra=(), **flags):
    """Build the table for the tensors of one launch and launch ``kernel`` once over every
    (tensor, chunk) pair. ``numels``: each tensor's element count; ``columns``: up to five
    lists (param, grad, state0..2), one entry per tensor (None where unused); ``words``: up to
    two lists of per-tensor int64 words. ``like``: a tensor giving the device and dtype of the
    launch; ``extra``: further kernel arguments after the table's. Returns the number of launches
    (0 when nothing to update)."""
    k = _kernels()
    cfg = settings()
    chunk = cfg["block"] * cfg["iters"]
    n_rows = len(numels)
    sizes = np.asarray(numels, dtype=np.int64)
    counts = -(-sizes // chunk)
    n_chunks = int(counts.sum())
    if n_chunks == 0:          # every tensor is empty: no launch, as for any zero-size op
        return 0
    table = np.zeros(k.HEADER + k.ROW * n_rows + 2 * n_chunks, dtype=np.int64)
    table[: len(header)] = np.asarray(header, dtype=np.float64).view(np.int64)
    rows = table[k.HEADER: k.HEADER + k.ROW * n_rows].reshape(n_rows, k.ROW)
    rows[:, 0] = sizes
    aligned = True
    for j, column in enumerate(columns):
        if column is not None:
            addresses = np.asarray(_addresses(column), dtype=np.int64)
            rows[:, 1 + j] = addresses
            aligned = aligned and not (addresses % 16).any()
    for j, column in enumerate(words):
        rows[:, 6 + j] = column
    chunk_base = k.HEADER + k.ROW * n_rows
    pairs = table[chunk_base:].reshape(n_chunks, 2)
    pairs[:, 0] = np.repeat(np.arange(n_rows, dtype=np.int64), counts)
    firsts = np.arange(n_chunks, dtype=np.int64) - np.repeat(np.cumsum(counts) - counts, counts)
    pairs[:, 1] = firsts * chunk
    device_table = upload(like, table)
    tb._run(kernel, (n_chunks,), tb.pointer(device_table), chunk_base, *extra,
            DTYPE=_element_type(like.dtype), COMPUTE=_compute(like.dtype), BLOCK=cfg["block"],
            ITERS=cfg["iters"], ALIGNED=aligned, num_warps=cfg["warps"], **flags)
    return 1


def _float_words(values):
    """Per-tensor float64 words as their int64 bit patterns."""
    return np.asarray(values, dtype=np.float64).view(np.int64)


def _numels(params):
    return [p._shape.numel() for p in params]


def sgd(params, grads, momentum_buffers, new_buffer, *, lr, weight_decay, momentum, dampening,
        nesterov, maximize):
    """torch's SGD step for every tensor. ``momentum_buffers[i]`` (when momentum != 0) is updated
    in place; ``new_buffer[i]`` True means it was just allocated and starts as the gradient."""
    has_momentum = momentum != 0
    columns = [params, grads, momentum_buffers if has_momentum else None]
    words = [np.asarray(new_buffer, dtype=np.int64) if has_momentum else 0]
    header = [-lr, weight_decay, momentum, 1 - dampening]
    return _launch(_kernels().sgd_kernel, header, _numels(params), columns, words, params[0],
                   HAS_WD=weight_decay != 0, HAS_MOMENTUM=has_momentum, NESTEROV=bool(nesterov),
                   MAXIMIZE=bool(maximize))


def adam(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, steps, *, lr, beta1, beta2, eps,
         weight_decay, amsgrad, maximize, decoupled_weight_decay):
    """torch's Adam/AdamW step for every tensor; ``steps[i]`` is tensor i's step count after
    this step's increment (bias corrections are per tensor, computed here in float64 as torch
    computes them in Python: the same operations on float64 arrays)."""
    step = np.asarray(steps, dtype=np.float64)
    step_size = lr / (1 - beta1 ** step)
    bias_correction2_sqrt = (1 - beta2 ** step) ** 0.5
    columns = [params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs if amsgrad else None]
    header = [1 - beta1, beta2, 1 - beta2, weight_decay, 1 - lr * weight_decay, eps]
    return _launch(_kernels().adam_kernel, header, _numels(params), columns,
                   [_float_words(-step_size), _float_words(bias_correction2_sqrt)], params[0],
                   HAS_WD=weight_decay != 0, DECOUPLED=bool(decoupled_weight_decay), AMSGRAD=bool(amsgrad),
                   MAXIMIZE=bool(maximize))


def rmsprop(params, grads, square_avgs, momentum_buffers, grad_avgs, *, lr, alpha, eps, weight_decay,
            momentum, centered, maximize):
    """torch's RMSprop step for every tensor (momentum_buffers used when momentum > 0, grad_avgs
    when centered)."""
    columns = [params, grads, square_avgs, momentum_buffers if momentum > 0 else None,
               grad_avgs if centered else None]
    header = [-lr, alpha, 1 - alpha, eps, weight_decay, momentum]
    return _launch(_kernels().rmsprop_kernel, header, _numels(params), columns, [], params[0],
                   HAS_WD=weight_decay != 0, HAS_MOMENTUM=momentum > 0, CENTERED=bool(centered),
                   MAXIMIZE=bool(maximize))


def adagrad(params, grads, state_sums, steps, *, lr, weight_decay, lr_decay, eps, maximize):
    """torch's Adagrad step for every tensor; ``steps[i]`` is tensor i's step count after this
    step's increment (its decayed lr computed here in float64, as torch computes it in Python)."""
    clr = lr / (1 + (np.asarray(steps, dtype=np.float64) - 1) * lr_decay)
    columns = [params, grads, state_sums]
    header = [weight_decay, eps]
    return _launch(_kernels().adagrad_kernel, header, _numels(params), columns, [_float_words(-clr)], params[0],
                   HAS_WD=weight_decay != 0, MAXIMIZE=bool(maximize))
