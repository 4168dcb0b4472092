"""Random numbers: one generator per device, reseeded together by tt.manual_seed.

cpu draws from NumPy's Philox generator; cuda runs Triton's Philox (tl.rand/tl.randn) keyed by
(seed, offset), advancing the offset past every number drawn, so a seed gives the same stream
on each device run after run.
"""
from __future__ import annotations

import numpy as np

from .. import dtypes as _dt
from ..autograd.grad_mode import no_grad
from ..backends import triton as tb
from .dispatch import check_inplace


_CPU_STATE_WORDS = 13    # seed, offset, NumPy Philox counter (4), buffer (4), buffer_pos, has_uint32, uinteger
_CUDA_STATE_WORDS = 2    # seed, offset: torch's Philox generator state, byte for byte


class Generator:
    """torch.Generator: a seed and a position in its random stream.

    A cpu generator draws from NumPy's Philox keyed by its seed; a cuda one from Triton's Philox
    at (seed, offset), its offset advanced past every number drawn (float64 numbers take two
    32-bit words each). get_state() is a uint8 tensor holding those (little-endian 64-bit words:
    seed and offset, and for cpu NumPy's counter and buffer too); set_state() puts a generator
    back exactly where it was, so that the same draws repeat."""

    def __init__(self, device="cpu", seed=67280421310721):
        from ..runtime.device import as_device
        self.device = as_device(device)
        self.manual_seed(seed)

    def manual_seed(self, seed):
        if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
            raise RuntimeError(f"manual_seed expected a long, but got {type(seed).__name__}")
        seed = int(seed)
        if not -(2 ** 63) <= seed < 2 ** 64:
            raise ValueError("Overflow when unpacking long long")
        self._seed = seed % 2 ** 64
        self._offset = 0
        self._np = np.random.Generator(np.random.Philox(key=self._seed))
        return self

    def seed(self):
        s = int(np.random.SeedSequence().generate_state(1, np.uint64)[0]) & (2 ** 63 - 1)
        self.manual_seed(s)
        return s

    def initial_seed(self):
        return self._seed

    def get_state(self):
        from .creation import tensor
        words = [self._seed, self._offset]
        if self.device.type == "cpu":
            st = self._np.bit_generator.state
            words += [int(v) for v in st["state"]["counter"]] + [int(v) for v in st["buffer"]]
            words += [int(st["buffer_pos"]), int(st["has_uint32"]), int(st["uinteger"])]
        raw = np.array(words, dtype="<u8").view(np.uint8)
        return tensor(raw.copy(), dtype=_dt.uint8)

    def set_state(self, new_state):
        from ..tensor import Tensor
        if not isinstance(new_state, Tensor):
            raise TypeError(f"expected a torch.ByteTensor, but got {type(new_state).__name__}")
        if new_state.dtype is not _dt.uint8 or new_state.device.type != "cpu":
            raise TypeError("RNG state must be a torch.ByteTensor")
        raw = np.ascontiguousarray(new_state._host_view()).reshape(-1)
        if self.device.type == "cpu":
            if raw.size != _CPU_STATE_WORDS * 8:
                raise RuntimeError(f"Expected a CPUGeneratorImplState of size {_CPU_STATE_WORDS * 8} but found "
                                   f"the input RNG state size to be {raw.size}")
        elif raw.size != _CUDA_STATE_WORDS * 8:
            raise RuntimeError("RNG state is wrong size")
        words = [int(w) for w in raw.view("<u8")]
        if self.device.type != "cpu" and words[1] % 4:
            raise RuntimeError("offset must be a multiple of 4")
        self.manual_seed(words[0])
        self._offset = words[1]
        if self.device.type == "cpu":
            st = self._np.bit_generator.state
            st["state"]["counter"] = np.array(words[2:6], dtype=np.uint64)
            st["buffer"] = np.array(words[6:10], dtype=np.uint64)
            st["buffer_pos"], st["has_uint32"], st["uinteger"] = words[10], words[11], words[12]
            self._np.bit_generator.state = st
        return self

    def get_offset(self):
        return self._offset

    def _take_offset(self, n):
        """Philox counters for n 32-bit words; kernels draw from (seed, offset + i)."""
        off = self._offset
        self._offset += -(-n // 4) * 4
        return off

    def _kernel_seed(self):
        return self._seed % (2 ** 31)   # Triton's tl.rand takes a 32-bit seed


default_generator = Generator("cpu")
_cuda_generators: dict = {}


def generator_for(device):
    if device.type == "cpu":
        return default_generator
    g = _cuda_generators.get(device.index)
    if g is None:
        g = _cuda_generators[device.index] = Generator(device, default_generator.initial_seed())
    return g


def manual_seed(seed):
    default_generator.manual_seed(seed)
    for g in _cuda_generators.values():
        g.manual_seed(seed)
    return default_generator


def cuda_manual_seed(seed):
    from ..runtime.device import current_device, device as _device
    generator_for(_device("cuda", current_device())).manual_seed(seed)


def initial_seed():
    return default_generator.initial_seed()


def seed():
    return default_generator.seed()


def get_rng_state():
    """torch.get_rng_state: the default cpu generator's state, a uint8 tensor."""
    return default_generator.get_state()


def set_rng_state(new_state):
    default_generator.set_state(new_state)


def cuda_get_rng_state(device="cuda"):
    """torch.cuda.get_rng_state: the state (seed and offset, 16 bytes) of a cuda device's generator."""
    return generator_for(_cuda_device(device)).get_state()


def cuda_set_rng_state(new_state, device="cuda"):
    generator_for(_cuda_device(device)).set_state(new_state)


def cuda_get_rng_state_all():
    from ..runtime.device import device_count
    return [cuda_get_rng_state(i) for i in range(device_count())]


def cuda_set_rng_state_all(new_states):
    for i, st in enumerate(new_states):
        cuda_set_rng_state(st, i)


def _cuda_device(device):
    from ..runtime.device import as_device, current_device, device as _device
    if isinstance(device, int):
        return _device("cuda", device)
    d = as_device(device)
    return _device("cuda", current_device()) if d.index is None else d


def generator_of(device, generator):
    """The generator a random op on ``device`` draws from, with torch's check of its kind."""
    if generator is None:
        return generator_for(device)
    if not isinstance(generator, Generator):
        raise TypeError(f"expected a torch.Generator, but got {type(generator).__name__}")
    if generator.device.type != device.type:
        raise RuntimeError(f"Expected a '{device.type}' device type for generator but found "
                           f"'{generator.device.type}'")
    return generator


def _fill_random(t, kind, a, b, generator):
    check_inplace(t)
    if not t.dtype.is_floating_point:
        raise NotImplementedError(f"\"{kind}_kernel\" not implemented for '{_dt.type_name(t.dtype)}'")
    gen = generator_of(t.device, generator)
    if t.numel() == 0:
        return t
    if t.device.type == "cpu":
        dt = np.float64 if t.dtype is _dt.float64 else np.float32
        if kind == "uniform":
            vals = gen._np.random(t.shape, dtype=dt) * (b - a) + a
        else:
            vals = gen._np.standard_normal(t.shape, dtype=dt) * b + a
        t._host_view()[...] = vals.astype(t.dtype.numpy_dtype)
    else:
        words = t.numel() * (2 if t.dtype is _dt.float64 else 1)    # float64: two words a number
        tb.random(t, kind, gen._kernel_seed(), gen._take_offset(words), float(a), float(b))
    t._version_counter.value += 1
    return t


def uniform_(t, a=0.0, b=1.0, *, generator=None):
    check_inplace(t)
    with no_grad():
        return _fill_random(t, "uniform", a, b, generator)


def normal_(t, mean=0.0, std=1.0, *, generator=None):
    if std < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std}")
    check_inplace(t)
    with no_grad():
        return _fill_random(t, "normal", mean, std, generator)


def _fill_integers(t, low, high, generator):
    """t[...] = integers uniform in [low, high), as torch's random_(from, to)."""
    gen = generator_of(t.device, generator)
    if t.numel() == 0:
        return t
    if t.device.type == "cpu":
        vals = gen._np.integers(low, high, size=t.shape, dtype=np.int64)
        t._host_view()[...] = vals.astype(t.dtype.numpy_dtype)
    else:
        tb.random(t, "integers", gen._kernel_seed(), gen._take_offset(t.numel()), low, high - low)
    t._version_counter.value += 1
    return t


def _integer_bounds(t, low, high):
    """torch's defaults and checks for random_: to=None means the dtype's range (floats: the
    integers exactly representable in the mantissa)."""
    if high is None:
        if t.dtype is _dt.bool_:
            high = 2
        elif t.dtype.is_floating_point:
            high = 2 ** {"float16": 11, "bfloat16": 8, "float32": 24, "float64": 53}[t.dtype.name] + 1
        else:
            high = int(np.iinfo(t.dtype.numpy_dtype).max) + 1
    if low >= high:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} >= to={high}")
    if not t.dtype.is_floating_point and t.dtype is not _dt.bool_:
        info = np.iinfo(t.dtype.numpy_dtype)
        for name, v in (("from", low), ("to - 1", high - 1)):
            if not info.min <= v <= info.max:
                raise RuntimeError(f"{name} is out of bounds for {_dt.type_name(t.dtype)}")
    if high - low > 2 ** 32:
        raise NotImplementedError(f"tritensor: random integers over a range wider than 2**32 "
                                  f"(from={low}, to={high}) are not supported")
    return int(low), int(high)


def random_(t, *bounds, generator=None, **named):
    """Tensor.random_(): integers uniform in [from, to), torch's overloads: random_() (the
    dtype's range), random_(to) ([0, to)), random_(from, to) (to may be None)."""
    if "from" in named or "to" in named:
        bounds = (named.pop("from", 0), named.pop("to", None))
    if named:
        raise TypeError(f"random_() got an unexpected keyword argument '{next(iter(named))}'")
    low, high = {0: (0, None), 1: (0, bounds[0] if bounds else None), 2: tuple(bounds[:2])}[min(len(bounds), 2)]
    check_inplace(t)
    low, high = _integer_bounds(t, low, high)
    with no_grad():
        return _fill_integers(t, low, high, generator)


# --------------------------------------------------------------------------- sampling ops
def _uniform_draws(shape, dtype, device, generator):
    """A tensor of U[0, 1) numbers from the generator's stream (no autograd)."""
    from .dispatch import empty
    u = empty(tuple(shape), dtype, device)
    with no_grad():
        _fill_random(u, "uniform", 0.0, 1.0, generator)
    return u


def randperm(n, *, generator=None, out=None, dtype=None, layout=None, device=None, requires_grad=False,
             pin_memory=False):
    """torch.randperm: a random permutation of 0 .. n-1. The permutation sorts n random keys from
    the generator's stream (on cuda: drawn by the Philox kernel, sorted on the host, as tritensor
    has no sort kernel yet), so a seeded generator gives the same permutation on every run."""
    from ..runtime.device import as_device
    from . import copy as _copy
    from .creation import _finish, tensor
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)):
        raise TypeError(f"randperm(): argument 'n' (position 1) must be int, not {type(n).__name__}")
    n = int(n)
    if n < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {n}: [{n}]")
    dtype = _dt.int64 if dtype is None else _dt.as_dtype(dtype)
    dev = as_device(device if device is not None else "cpu")
    if dtype is _dt.bool_:
        raise NotImplementedError("\"randperm\" not implemented for 'Bool'")
    if dtype is _dt.float16 and n > 2049:
        raise RuntimeError("n cannot be greater than 2049 for Half type.")
    if not dtype.is_floating_point and n > 0:
        _copy.check_scalar_fits(n - 1, dtype)
    gen = generator_of(dev, generator)
    if dev.type == "cpu":
        perm = gen._np.permutation(n)
    else:
        from .dispatch import empty
        keys = empty((n,), _dt.int64, dev)
        if n:
            tb.random(keys, "integers", gen._kernel_seed(), gen._take_offset(n), 0, 2 ** 32)
        perm = np.argsort(keys._to_host_array(), kind="stable")
    result = tensor(perm.astype(np.int64), device=dev).to(dtype)
    if out is not None:
        out.resize_(n) if hasattr(out, "resize_") and tuple(out.shape) != (n,) else None
        _copy.copy_(out, result)
        return out
    return _finish(result, requires_grad)


def bernoulli(input, p=None, *, generator=None, out=None):
    """torch.bernoulli: 1 with probability p (input's values, or the float p), else 0, in
    input's dtype and shape: a uniform draw from the generator compared with p."""
    from ..tensor import Tensor
    if not isinstance(input, Tensor):
        raise TypeError(f"bernoulli(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
    if p is None and not input.dtype.is_floating_point:
        raise NotImplementedError(f"\"bernoulli_tensor_cpu_p_\" not implemented for '{_dt.type_name(input.dtype)}'")
    with no_grad():
        from .dispatch import empty
        result = empty(tuple(input.shape), input.dtype, input.device)
        bernoulli_(result, input.detach() if p is None else p, generator=generator, _name="bernoulli")
    if out is not None:
        from .copy import copy_
        return copy_(out, result)
    return result


def bernoulli_(self, p=0.5, *, generator=None, _name="bernoulli_"):
    """Tensor.bernoulli_(p): self[...] = 1 with probability p (a float, or a tensor
    broadcastable to self), else 0."""
    from ..tensor import Tensor
    from . import elementwise as _ew
    from .copy import copy_into
    check_inplace(self)
    if isinstance(p, Tensor):
        probs = p if p.device == self.device else p.to(self.device)
        if probs.numel() and not bool(_ew.logical_and(_ew.ge(probs, 0), _ew.le(probs, 1)).all()):
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


def multinomial(input, num_samples, replacement=False, *, generator=None, out=None):
    """torch.multinomial: num_samples category indices per row of the weights ``input`` (1-D or
    2-D). With replacement: inverse-CDF sampling of uniform draws; without: the categories with
    the largest w / E keys, E exponential draws (torch's algorithm). The uniforms come from the
    generator's stream on the input's device; the per-row selection runs on the host."""
    from ..tensor import Tensor
    from .creation import tensor
    if not isinstance(input, Tensor):
        raise TypeError(f"multinomial(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
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
        from .copy import copy_
        return copy_(out, result)
    return result


def normal(mean, std=1.0, size=None, *, generator=None, out=None, dtype=None, layout=None, device=None,
           pin_memory=False, requires_grad=False):
    """torch.normal's overloads: (Tensor mean, Tensor std), (Tensor mean, float std=1),
    (float mean, Tensor std) broadcast the operands (gradients flow to tensor mean and std, as
    torch's NormalBackward: g and g * noise); (float mean, float std, size) is a factory."""
    from ..tensor import Tensor
    from . import elementwise as _ew
    from .creation import _finish, empty
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
            from .copy import copy_
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
    from .dispatch import empty as _empty
    noise = _empty(tuple(shape), like.dtype, like.device)
    normal_(noise, 0.0, 1.0, generator=generator)
    result = _ew.add(mean, _ew.mul(std, noise))
    if result.dtype is not like.dtype:
        result = result.to(like.dtype)
    if out is not None:
        from .copy import copy_
        return copy_(out, result)
    return result
