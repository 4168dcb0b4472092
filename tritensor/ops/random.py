"""Sampling ops on top of the generators (generators.py): randperm, bernoulli, multinomial and
normal with tensor mean/std, drawn from a generator's stream on the input's device.

The generators, tt.manual_seed & co. and the in-place fills are defined in generators.py
(below creation.py, whose rand/randn use them) and re-exported here, where their users
(tt.*, tt.cuda, utils.data) have always found them.
"""
from __future__ import annotations

import numpy as np

from .. import _tracing
from .. import dtypes as _dt
from ..autograd.grad_mode import no_grad
from ..backends.base import backend_for
from ..runtime.device import as_device
from ..tensor import Tensor
from . import _unsigned
from . import copy as _copy
from . import elementwise as _ew
from . import pointwise as _pw
from ._checks import check_tensor
from .copy import copy_, copy_into
from .creation import _finish, empty, tensor
from .dispatch import check_inplace
from .dispatch import empty as _empty
from .generators import (  # noqa: F401  (re-exported)
    Generator, _fill_random, cuda_get_rng_state, cuda_get_rng_state_all, cuda_manual_seed,
    cuda_set_rng_state, cuda_set_rng_state_all, default_generator, generator_for, generator_of,
    get_rng_state, initial_seed, manual_seed, normal_, random_, seed, set_rng_state, uniform_,
)


def _uniform_draws(shape, dtype, device, generator):
    """A tensor of U[0, 1) numbers from the generator's stream (no autograd)."""
    u = _empty(tuple(shape), dtype, device)
    with no_grad():
        _fill_random(u, "uniform", 0.0, 1.0, generator)
    return u


@_tracing.random_op("randperm")
def randperm(n, *, generator=None, out=None, dtype=None, layout=None, device=None, requires_grad=False,
             pin_memory=False):
    """torch.randperm: a random permutation of 0 .. n-1. The permutation sorts n random keys from
    the generator's stream (on cuda: drawn by the Philox kernel, sorted on the host, as tritensor
    has no sort kernel yet), so a seeded generator gives the same permutation on every run."""
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)):
        raise TypeError(f"randperm(): argument 'n' (position 1) must be int, not {type(n).__name__}")
    n = int(n)
    if n < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {n}: [{n}]")
    dtype = _dt.int64 if dtype is None else _dt.as_dtype(dtype)
    dev = as_device(device if device is not None else "cpu")
    if dtype is _dt.bool_:
        raise NotImplementedError("\"randperm\" not implemented for 'Bool'")
    _unsigned.refuse("randperm", dtype)
    if dtype is _dt.float16 and n > 2049:
        raise RuntimeError("n cannot be greater than 2049 for Half type.")
    if not dtype.is_floating_point and n > 0:
        _copy.check_scalar_fits(n - 1, dtype)
    gen = generator_of(dev, generator)
    perm = backend_for(dev).permutation(n, gen, dev)
    result = tensor(perm.astype(np.int64), device=dev).to(dtype)
    if out is not None:
        out.resize_(n) if hasattr(out, "resize_") and tuple(out.shape) != (n,) else None
        _copy.copy_(out, result)
        return out
    return _finish(result, requires_grad)


@_tracing.random_op("bernoulli")
def bernoulli(input, p=None, *, generator=None, out=None):
    """torch.bernoulli: 1 with probability p (input's values, or the float p), else 0, in
    input's dtype and shape: a uniform draw from the generator compared with p."""
    check_tensor("bernoulli", input)
    if p is None and not input.dtype.is_floating_point:
        raise NotImplementedError(f"\"bernoulli_tensor_cpu_p_\" not implemented for '{_dt.type_name(input.dtype)}'")
    with no_grad():
        result = _empty(tuple(input.shape), input.dtype, input.device)
        bernoulli_(result, input.detach() if p is None else p, generator=generator, _name="bernoulli")
    if out is not None:
        return copy_(out, result)
    return result


@_tracing.random_op("bernoulli_", inplace=True)
def bernoulli_(self, p=0.5, *, generator=None, _name="bernoulli_"):
    """Tensor.bernoulli_(p): self[...] = 1 with probability p (a float, or a tensor
    broadcastable to self), else 0."""
    check_inplace(self)
    if isinstance(p, Tensor):
        probs = p if p.device == self.device else p.to(self.device)
        if probs.numel() and not bool(_pw.logical_and(_ew.ge(probs, 0), _ew.le(probs, 1)).all()):
            raise RuntimeError("Expected p_in >= 0 && p_in <= 1 to be true, but got false.  (Could this error "
                               "message be improved?  If so, please report an enhancement request to PyTorch.)")
    else:
        p = float(p)
        if not 0 <= p <= 1:
            raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={_num(p)}")
        probs = p
    if self.numel() == 0:
        return self
    draw_dtype = _dt.float64 if self.dtype is _dt.float64 or (isinstance(p, Tensor) and p.dtype is _dt.float64) \
        else _dt.float32
    with no_grad():
        u = _uniform_draws(self.shape, draw_dtype, self.device, generator)
        copy_into(self, _ew.lt(u, probs))
    self._version_counter.value += 1
    return self


def _num(v):
    return int(v) if float(v).is_integer() else v


@_tracing.random_op("multinomial")
def multinomial(input, num_samples, replacement=False, *, generator=None, out=None):
    """torch.multinomial: num_samples category indices per row of the weights ``input`` (1-D or
    2-D). With replacement: inverse-CDF sampling of uniform draws; without: the categories with
    the largest w / E keys, E exponential draws (torch's algorithm). The uniforms come from the
    generator's stream on the input's device; the per-row selection runs on the host."""
    check_tensor("multinomial", input)
    if input.dim() not in (1, 2):
        raise RuntimeError("prob_dist must be 1 or 2 dim")
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"multinomial only supports floating-point dtypes for input, got: "
                           f"{_dt.type_name(input.dtype)}")
    if num_samples <= 0:
        raise RuntimeError("cannot sample n_sample <= 0 samples")
    n_categories = input.shape[-1]
    if not replacement and num_samples > n_categories:
        raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without replacement")
    rows = input.shape[0] if input.dim() == 2 else 1
    w = input.detach()._to_host_array().astype(np.float64).reshape(rows, n_categories)
    if w.size:
        if not np.isfinite(w).all() or (w < 0).any():
            raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
        if (w.sum(axis=1) <= 0).any():
            raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
    shape = (rows, num_samples if replacement else n_categories)
    u = _uniform_draws(shape, _dt.float64, input.device, generator)._to_host_array().reshape(shape)
    if replacement:
        cdf = np.cumsum(w, axis=1)
        picks = np.stack([np.searchsorted(cdf[r], u[r] * cdf[r, -1], side="right") for r in range(rows)]) \
            if rows else np.zeros((0, num_samples), np.int64)
        picks = np.minimum(picks, n_categories - 1)
    else:
        with np.errstate(divide="ignore"):
            keys = w / -np.log1p(-u)               # w / Exp(1): the top keys are a weighted draw
        picks = np.argsort(-keys, axis=1, kind="stable")[:, :num_samples]
    picks = picks.astype(np.int64)
    result = tensor(picks if input.dim() == 2 else picks.reshape(num_samples), device=input.device)
    if out is not None:
        return copy_(out, result)
    return result


@_tracing.random_op("normal")
def normal(mean, std=1.0, size=None, *, generator=None, out=None, dtype=None, layout=None, device=None,
           pin_memory=False, requires_grad=False):
    """torch.normal's overloads: (Tensor mean, Tensor std), (Tensor mean, float std=1),
    (float mean, Tensor std) broadcast the operands (gradients flow to tensor mean and std, as
    torch's NormalBackward: g and g * noise); (float mean, float std, size) is a factory."""
    t_mean, t_std = isinstance(mean, Tensor), isinstance(std, Tensor)
    if not t_mean and not t_std:
        if size is None:
            raise TypeError(
                f"normal() received an invalid combination of arguments - got ({type(mean).__name__}, "
                f"{type(std).__name__}), but expected one of:\n"
                " * (Tensor mean, Tensor std, *, torch.Generator generator = None, Tensor out = None)\n"
                " * (Tensor mean, float std = 1, *, torch.Generator generator = None, Tensor out = None)\n"
                " * (float mean, Tensor std, *, torch.Generator generator = None, Tensor out = None)\n"
                " * (float mean, float std, tuple of ints size, *, torch.Generator generator = None, Tensor out = None, "
                "torch.dtype dtype = None, torch.layout layout = None, torch.device device = None, bool pin_memory = False, "
                "bool requires_grad = False)\n")
        if std < 0:
            raise RuntimeError(f"normal expects std >= 0.0, but found std {_num(std)}")
        t = empty(*((size,) if isinstance(size, int) else tuple(size)), dtype=dtype, device=device)
        normal_(t, float(mean), float(std), generator=generator)
        if out is not None:
            return copy_(out, t)
        return _finish(t, requires_grad)
    like = mean if t_mean else std
    if not like.dtype.is_floating_point:
        raise NotImplementedError(f"\"normal_kernel_cpu\" not implemented for '{_dt.type_name(like.dtype)}'")
    if t_std:
        if std.numel() and not bool(_ew.ge(std.detach(), 0).all()):
            raise RuntimeError("normal expects all elements of std >= 0.0")
    elif std < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {_num(std)}")
    if t_mean and t_std:
        shape = _ew.broadcast_shapes(mean.shape, std.shape)
    else:
        shape = tuple(like.shape)
    noise = _empty(tuple(shape), like.dtype, like.device)
    normal_(noise, 0.0, 1.0, generator=generator)
    result = _ew.add(mean, _ew.mul(std, noise))
    if result.dtype is not like.dtype:
        result = result.to(like.dtype)
    if out is not None:
        return copy_(out, result)
    return result
