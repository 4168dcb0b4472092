"""OpInfo records of the normalisation family (tritensor/ops/normalization.py): batch norm, group
norm, instance norm, local response norm, checked by tests/test_ops_table.py (cpu, emulated
cuda) and tests/test_op_gradients.py.

The references here are written from the definitions in float64 (biased variance to normalise,
the unbiased one in the running statistics, torch's momentum rule), independently of
backends/numpy_nn.py. Running statistics are cloned by each record's op (the parity test reads
the arguments after the call) and returned with the outputs, so their update is checked too.

Emulated launches cost: the layouts run on cpu in every dtype, and on cuda in float32 (which
crosses the interpreter's 64-element tiles, the split statistics and their merge); the other
dtypes run one sample there. The emulated device gradchecks the first derivatives (the fused
backward kernels); the second and third (the double backwards are table-op composites, the same
code on every device) run on cpu and real GPUs, through the backward ops' cases.
"""
from __future__ import annotations

import numpy as np
import pytest

import tritensor as tt
from opinfo import GRAD_CASES, SampleInput, _randn, _t, record, rng_for, table_op  # noqa: F401

F = tt.nn.functional
NORM_DTYPES = (tt.float32, tt.float64, tt.float16, tt.bfloat16)
TOLERANCES = {tt.float16: (4e-3, 4e-3), tt.bfloat16: (2e-2, 2e-2), tt.float32: (2e-5, 2e-5),
              tt.float64: (1e-10, 1e-10)}


def _maker(dtype, device, rng):
    def make(shape, kind="any", dt=None):
        v = rng.standard_normal(shape)
        if kind == "positive":
            v = np.abs(v) + 0.5
        elif kind == "shifted":      # a mean far from 0 next to a small spread: the centred sums matter
            v = v * 0.5 + 4.0
        return tt.tensor(v, dtype=dt or dtype, device=device)
    return make


def _param_dtype(dtype, mixed):
    return tt.float32 if mixed and dtype in (tt.float16, tt.bfloat16) else dtype


def _few_on_cuda(samples):
    """Every sample on cpu and in float32; the first one on cuda in the other dtypes."""
    def run(device, dtype):
        for i, s in enumerate(samples(device, dtype)):
            if i and device != "cpu" and dtype is not tt.float32:
                return
            yield s
    return run


# --------------------------------------------------------------------------- batch norm
def _channel(x, v):
    return v.reshape((1, -1) + (1,) * (x.ndim - 2))


def _bn_reference(x, weight, bias, running_mean, running_var, training, momentum, eps):
    x = x.astype(np.float64)
    axes = (0,) + tuple(range(2, x.ndim))
    if training:
        n = x.size // x.shape[1]
        mean = x.mean(axes)
        var = ((x - _channel(x, mean)) ** 2).mean(axes)
        invstd = 1 / np.sqrt(var + eps)
        stats = (mean, invstd)
    else:
        mean, invstd = running_mean, 1 / np.sqrt(running_var.astype(np.float64) + eps)
        stats = (np.zeros(0), np.zeros(0))
    y = (x - _channel(x, mean)) * _channel(x, invstd)
    if weight is not None:
        y = y * _channel(x, weight)
    if bias is not None:
        y = y + _channel(x, bias)
    result = (y,) + stats
    if running_mean is not None:
        if training:
            running_mean = (1 - momentum) * running_mean + momentum * mean
            running_var = (1 - momentum) * running_var + momentum * var * n / (n - 1)
        result += (running_mean, running_var)
    return result


def _bn_op(x, weight, bias, running_mean, running_var, training, momentum, eps):
    rm = running_mean.clone() if running_mean is not None else None
    rv = running_var.clone() if running_var is not None else None
    out = tt.native_batch_norm(x, weight, bias, rm, rv, training, momentum, eps)
    assert not out[1].requires_grad and not out[2].requires_grad
    return tuple(out) + ((rm, rv) if rm is not None else ())


def _bn_samples(device, dtype):
    make = _maker(dtype, device, rng_for("native_batch_norm", dtype))
    for mixed in ((False, True) if dtype in (tt.float16, tt.bfloat16) else (False,)):
        p = _param_dtype(dtype, mixed)
        yield SampleInput((make((5, 3, 7), "shifted"), make((3,), dt=p), make((3,), dt=p), make((3,), dt=p),
                           make((3,), "positive", dt=p), True, 0.1, 1e-5), desc=f"train-affine-stats-mixed={mixed}")
    yield SampleInput((make((2, 5, 3, 4)).contiguous(memory_format=tt.channels_last), None, None, None, None, True,
                       0.1, 1e-5), desc="train-channels-last")
    yield SampleInput((make((9, 13)).t(), make((9,)), make((9,)), make((9,)), make((9,), "positive"), False, 0.1,
                       1e-5), desc="eval-transposed")
    yield SampleInput((make((1, 4, 6)), None, make((4,)), make((4,)), make((4,), "positive"), True, 0.3, 1e-3),
                      desc="train-batch1")
    yield SampleInput((make((3, 2, 4, 5, 3))[:, :, ::2], make((2,)), None, None, None, True, 0.1, 1e-5),
                      desc="train-3d-sliced")
    yield SampleInput((make((4, 70)), None, None, make((70,)), make((70,), "positive"), True, 0.5, 1e-5),
                      desc="train-2d-wide")


record("native_batch_norm", _bn_op, NORM_DTYPES, _few_on_cuda(_bn_samples), _bn_reference, tolerances=TOLERANCES,
       gradgradcheck=False)     # second derivative: native_batch_norm_backward's gradient case


def _f_batch_norm_samples(device, dtype):
    make = _maker(dtype, device, rng_for("batch_norm", dtype))
    yield SampleInput((make((6, 3, 5)), None, None, make((3,)), make((3,))), {"training": True}, desc="train")
    yield SampleInput((make((6, 3)), make((3,)), make((3,), "positive")), {"training": False, "eps": 0.1},
                      desc="eval")
    yield SampleInput((make((0, 3)), make((3,)), make((3,), "positive"), make((3,)), make((3,))),
                      {"training": True}, desc="empty")


def _f_batch_norm_reference(x, running_mean, running_var, weight=None, bias=None, training=False, momentum=0.1,
                            eps=1e-5):
    if x.size == 0:
        return x * (weight[0] if weight is not None else 1) + (bias[0] if bias is not None else 0)
    return _bn_reference(x, weight, bias, running_mean, running_var, training, momentum, eps)[0]


record("nn.functional.batch_norm", lambda x, rm, rv, *a, **k: F.batch_norm(
    x, rm.clone() if rm is not None else None, rv.clone() if rv is not None else None, *a, **k),
    (tt.float32, tt.float64, tt.bfloat16), _few_on_cuda(_f_batch_norm_samples), _f_batch_norm_reference,
    tolerances=TOLERANCES)


def _bn_backward_reference(grad, x, weight, mean, invstd, training, eps, output_mask):
    g, x = grad.astype(np.float64), x.astype(np.float64)
    axes = (0,) + tuple(range(2, x.ndim))
    xhat = (x - _channel(x, mean)) * _channel(x, invstd)
    w = _channel(x, weight) if weight is not None else 1.0
    if training:
        dx = _channel(x, invstd) * w * (g - g.mean(axes, keepdims=True)
                                        - xhat * (g * xhat).mean(axes, keepdims=True))
    else:
        dx = _channel(x, invstd) * w * g
    return dx, (g * xhat).sum(axes), g.sum(axes)


def _bn_backward_samples(device, dtype):
    make = _maker(dtype, device, rng_for("native_batch_norm_backward", dtype))
    x = make((5, 3, 7), "shifted")
    mean = tt.tensor(x.detach().cpu().double().numpy().mean((0, 2)), dtype=tt.float32, device=device)
    yield SampleInput((make((5, 3, 7)), x, make((3,)), mean, make((3,), "positive", dt=tt.float32), True, 1e-5,
                       (True, True, True)), desc="train")
    cl = make((2, 4, 3, 5)).contiguous(memory_format=tt.channels_last)
    yield SampleInput((make((2, 4, 3, 5)), cl, make((4,)), make((4,), dt=tt.float32), make((4,), "positive", dt=tt.float32),
                       False, 1e-5, (True, True, True)), desc="eval-channels-last")


def _bn_backward_op(*args):
    from tritensor.ops.normalization import native_batch_norm_backward
    return native_batch_norm_backward(*args)


record("native_batch_norm_backward", _bn_backward_op, (tt.float32, tt.float64), _bn_backward_samples,
       _bn_backward_reference, tolerances=TOLERANCES)


# --------------------------------------------------------------------------- group norm
def _gn_reference(x, weight, bias, N, C, HxW, group, eps):
    x = x.astype(np.float64)
    xg = x.reshape(N, group, -1)
    mean = xg.mean(2)
    rstd = 1 / np.sqrt(((xg - mean[..., None]) ** 2).mean(2) + eps)
    y = ((xg - mean[..., None]) * rstd[..., None]).reshape(x.shape)
    if weight is not None:
        y = y * _channel(x, weight)
    if bias is not None:
        y = y + _channel(x, bias)
    return y, mean, rstd


def _gn_samples(device, dtype):
    make = _maker(dtype, device, rng_for("native_group_norm", dtype))
    for mixed in ((False, True) if dtype in (tt.float16, tt.bfloat16) else (False,)):
        p = _param_dtype(dtype, mixed)
        yield SampleInput((make((3, 6, 11), "shifted"), make((6,), dt=p), make((6,), dt=p), 3, 6, 11, 2, 1e-5),
                          desc=f"affine-mixed={mixed}")
    yield SampleInput((make((2, 8, 3, 5)).contiguous(memory_format=tt.channels_last), make((8,)), None, 2, 8, 15, 4,
                       1e-5), desc="channels-last")
    yield SampleInput((make((7, 4, 2)).transpose(0, 2).transpose(1, 2), None, None, 2, 4, 7, 1, 1e-3),
                      desc="transposed-one-group")
    yield SampleInput((make((1, 12)), None, make((12,)), 1, 12, 1, 12, 1e-5), desc="batch1-no-spatial")


record("native_group_norm", lambda *a: tt.native_group_norm(*a), NORM_DTYPES, _few_on_cuda(_gn_samples),
       _gn_reference, tolerances=TOLERANCES, gradgradcheck=False)     # second derivative: the backward's case
record("nn.functional.group_norm", F.group_norm, (tt.float32, tt.float64), lambda device, dtype: iter([
    SampleInput((_maker(dtype, device, rng_for("group_norm", dtype))((4, 6, 3, 2)), 3), desc="plain"),
    SampleInput((_maker(dtype, device, rng_for("group_norm", dtype, 2))((2, 4)), 2,
                 _maker(dtype, device, rng_for("gn-w", dtype))((4,))), {"eps": 0.1}, desc="weight-2d")]),
    lambda x, g, weight=None, bias=None, eps=1e-5: _gn_reference(x, weight, bias, x.shape[0], x.shape[1],
                                                                 x.size // max(x.shape[0] * x.shape[1], 1), g, eps)[0],
    tolerances=TOLERANCES)


def _gn_backward_reference(grad, x, mean, rstd, weight, N, C, HxW, group, output_mask, eps):
    g, x = grad.astype(np.float64), x.astype(np.float64)
    xhat = ((x.reshape(N, group, -1) - mean[..., None]) * rstd[..., None]).reshape(x.shape)
    gh = g * _channel(x, weight) if weight is not None else g
    ghg, xg = gh.reshape(N, group, -1), xhat.reshape(N, group, -1)
    dx = rstd[..., None] * (ghg - ghg.mean(2, keepdims=True) - xg * (ghg * xg).mean(2, keepdims=True))
    axes = (0,) + tuple(range(2, x.ndim))
    return dx.reshape(x.shape), (g * xhat).sum(axes), g.sum(axes)


def _gn_backward_samples(device, dtype):
    make = _maker(dtype, device, rng_for("native_group_norm_backward", dtype))
    for desc, x, G in (("contiguous", make((3, 6, 11), "shifted"), 2),
                       ("channels-last", make((2, 8, 3, 5)).contiguous(memory_format=tt.channels_last), 4)):
        N, C = x.shape[0], x.shape[1]
        _, mean, rstd = tt.native_group_norm(x, None, None, N, C, x.numel() // (N * C), G, 1e-5)
        yield SampleInput((make(tuple(x.shape)), x, mean, rstd, make((C,)), N, C, x.numel() // (N * C), G,
                           (True, True, True), 1e-5), desc=desc)


def _gn_backward_op(*args):
    from tritensor.ops.normalization import native_group_norm_backward
    return native_group_norm_backward(*args)


record("native_group_norm_backward", _gn_backward_op, (tt.float32, tt.float64), _gn_backward_samples,
       _gn_backward_reference, tolerances=TOLERANCES)


# --------------------------------------------------------------------------- instance norm, local response norm
def _in_reference(x, running_mean=None, running_var=None, weight=None, bias=None, use_input_stats=True,
                  momentum=0.1, eps=1e-5):
    x = x.astype(np.float64)
    axes = tuple(range(2, x.ndim))
    if use_input_stats:
        mean, var = x.mean(axes, keepdims=True), x.var(axes, keepdims=True)
    else:
        mean, var = _channel(x, running_mean), _channel(x, running_var)
    y = (x - mean) / np.sqrt(var + eps)
    return y * (_channel(x, weight) if weight is not None else 1) + (_channel(x, bias) if bias is not None else 0)


def _in_samples(device, dtype):
    make = _maker(dtype, device, rng_for("instance_norm", dtype))
    yield SampleInput((make((3, 4, 9)),), desc="plain")
    yield SampleInput((make((2, 3, 4, 5)).contiguous(memory_format=tt.channels_last), make((3,)),
                       make((3,), "positive"), make((3,)), make((3,))), desc="stats-affine")
    yield SampleInput((make((2, 3, 5)), make((3,)), make((3,), "positive")), {"use_input_stats": False},
                      desc="running")


record("nn.functional.instance_norm", lambda x, rm=None, rv=None, *a, **k: F.instance_norm(
    x, rm.clone() if rm is not None else None, rv.clone() if rv is not None else None, *a, **k),
    (tt.float32, tt.float64), _in_samples, _in_reference, tolerances=TOLERANCES)


def _lrn_reference(x, size, alpha=1e-4, beta=0.75, k=1.0):
    x = x.astype(np.float64)
    C = x.shape[1]
    sq = x * x
    div = np.zeros_like(x)
    for c in range(C):
        lo, hi = c - size // 2, c + (size - 1) // 2       # the window torch's padding makes
        div[:, c] = sq[:, max(lo, 0):min(hi, C - 1) + 1].sum(1)
    return x / (k + alpha * div / size) ** beta


record("nn.functional.local_response_norm", F.local_response_norm, (tt.float32, tt.float64), lambda device, dtype: iter([
    SampleInput((_maker(dtype, device, rng_for("lrn", dtype))((2, 5, 7)), 3), {"alpha": 0.5, "k": 2.0}, desc="3d"),
    SampleInput((_maker(dtype, device, rng_for("lrn4", dtype))((2, 6, 3, 2)), 4), {"beta": 0.5}, desc="4d-even"),
    SampleInput((_maker(dtype, device, rng_for("lrn1", dtype))((1, 3, 2, 2, 2)), 1), {"alpha": 1.0}, desc="5d-size1")]),
    _lrn_reference, tolerances=TOLERANCES)


# --------------------------------------------------------------------------- gradient cases (float64)
def _rm(d, c):
    return tt.tensor(np.linspace(-0.5, 0.5, c), dtype=tt.float64, device=d)


def _rv(d, c):
    return tt.tensor(np.linspace(0.5, 1.5, c), dtype=tt.float64, device=d)


def _on_cpu_or_gpu(case):
    """A gradient case of table-op composites (the double backwards, instance norm, local
    response norm): the same code on every device, so checked on cpu and real GPUs; under the
    emulated device each of their many small launches is interpreted (tens of seconds a case).
    The fused kernels' first derivatives run on the emulated device through the
    native_batch_norm / native_group_norm cases."""
    def make(device):
        if device != "cpu" and tt.cuda.is_emulated():
            pytest.skip("a composite's gradients: cpu and real GPUs (see opinfo_norm._on_cpu_or_gpu)")
        return case(device)
    return make


GRAD_CASES.update({
    # training (the batch's statistics depend on x) plus eval (the running ones do not); the
    # second derivative is native_batch_norm_backward's first
    "native_batch_norm": lambda d: (lambda x, w, b: F.batch_norm(x, None, None, w, b, training=True)
                                    + F.batch_norm(x, _rm(d, 2), _rv(d, 2), w, b, training=False),
                                    (_randn((3, 2), d), _randn((2,), d), _randn((2,), d)), {}),
    "native_group_norm": lambda d: (lambda x, w, b: F.group_norm(x, 2, w, b), (_randn((1, 4, 2), d), _randn((4,), d),
                                                                               _randn((4,), d)), {}),
    # the fused backwards as create_graph records them (NativeBatchNormBackwardBackward0 ...):
    # second and third derivatives, training and eval
    "native_batch_norm_backward": _on_cpu_or_gpu(lambda d: (lambda g, x, w: tuple(
        a + e for a, e in zip(tt.autograd.grad(F.batch_norm(x, None, None, w, None, training=True), (x, w), g,
                                               create_graph=True),
                              tt.autograd.grad(F.batch_norm(x, _rm(d, 2), _rv(d, 2), w, None, training=False), (x, w),
                                               g, create_graph=True))),
        (_randn((3, 2), d), _randn((3, 2), d), _randn((2,), d)), {})),
    "native_group_norm_backward": _on_cpu_or_gpu(lambda d: (lambda g, x, w: tt.autograd.grad(
        F.group_norm(x, 2, w), (x, w), g, create_graph=True), (_randn((1, 4, 2), d), _randn((1, 4, 2), d),
                                                               _randn((4,), d)), {})),
    "nn.functional.instance_norm": _on_cpu_or_gpu(lambda d: (lambda x, w: F.instance_norm(x, weight=w),
                                                             (_randn((1, 2, 3), d), _randn((2,), d)), {})),
    "nn.functional.local_response_norm": _on_cpu_or_gpu(lambda d: (lambda x: F.local_response_norm(x, 2, alpha=0.5),
                                                                   (_randn((1, 3, 2), d),), {})),
})
