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


class Generator:
    def __init__(self, device="cpu", seed=67280421310721):
        from ..runtime.device import as_device
        self.device = as_device(device)
        self.manual_seed(seed)

    def manual_seed(self, seed):
        seed = int(seed)
        if not -(2 ** 63) <= seed < 2 ** 64:
            raise RuntimeError("Overflow when unpacking long long")
        self._seed = seed % 2 ** 64
        self._offset = 0
        self._np = np.random.Generator(np.random.Philox(key=self._seed))
        return self

    def seed(self):
        s = int(np.random.SeedSequence().generate_state(1, np.uint64)[0])
        self.manual_seed(s)
        return s

    def initial_seed(self):
        return self._seed

    def _take_offset(self, n):
        """Philox counters for n numbers; kernels draw from (seed, offset + i)."""
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


def _fill_random(t, kind, a, b, generator):
    check_inplace(t)
    if not t.dtype.is_floating_point:
        raise NotImplementedError(f"\"{kind}_kernel\" not implemented for '{_dt.type_name(t.dtype)}'")
    gen = generator if generator is not None else generator_for(t.device)
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
        tb.random(t, kind, gen._kernel_seed(), gen._take_offset(t.numel()), float(a), float(b))
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
    gen = generator if generator is not None else generator_for(t.device)
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
