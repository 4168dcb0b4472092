"""Random number generators: one per device, reseeded together by tt.manual_seed, and the
in-place fills that draw from them (uniform_, normal_, random_).

cpu draws from NumPy's Philox generator; cuda runs Triton's Philox (tl.rand/tl.randn) keyed by
(seed, offset), advancing the offset past every number drawn, so a seed gives the same stream
on each device run after run. The sampling ops built on these (randperm, bernoulli,
multinomial, normal) are in random.py, above the elementwise ops they use.
"""
from __future__ import annotations

import threading

import numpy as np

from .. import dtypes as _dt
from ..autograd.grad_mode import no_grad
from ..backends.base import backend_for
from ..runtime.device import as_device, current_device, device as _device, device_count
from ..tensor import Tensor
from .dispatch import check_inplace

# A generator's state is (seed, offset) plus what its device's backend keeps (backends/base.py):
# cpu: NumPy's Philox counter (4 words), buffer (4), buffer_pos, has_uint32, uinteger; cuda:
# nothing more (torch's Philox generator state, byte for byte).


class Generator:
    """torch.Generator: a seed and a position in its random stream.

    A cpu generator draws from NumPy's Philox keyed by its seed; a cuda one from Triton's Philox
    at (seed, offset), its offset advanced past every number drawn (float64 numbers take two
    32-bit words each). get_state() is a uint8 tensor holding those (little-endian 64-bit words:
    seed and offset, and for cpu NumPy's counter and buffer too); set_state() puts a generator
    back exactly where it was, so that the same draws repeat."""

    def __init__(self, device="cpu", seed=67280421310721):
        self.device = as_device(device)
        self._lock = threading.Lock()    # torch's generator mutex: concurrent draws are disjoint
        self._backend = backend_for(self.device)
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
        from .creation import tensor   # late import: creation.py builds its rand/randn on this module
        words = [self._seed, self._offset] + self._backend.rng_extra_state(self)
        raw = np.array(words, dtype="<u8").view(np.uint8)
        return tensor(raw.copy(), dtype=_dt.uint8)

    def set_state(self, new_state):
        if not isinstance(new_state, Tensor):
            raise TypeError(f"expected a torch.ByteTensor, but got {type(new_state).__name__}")
        # torch's state tensor is a cpu ByteTensor (a host array: _host_view)
        if new_state.dtype is not _dt.uint8 or not backend_for(new_state.device).host_memory:
            raise TypeError("RNG state must be a torch.ByteTensor")
        raw = np.ascontiguousarray(new_state._host_view()).reshape(-1)
        self._backend.check_rng_state(raw.size)
        words = [int(w) for w in raw.view("<u8")]
        self._backend.check_rng_state(raw.size, words)
        self._backend.set_rng_state(self, words)
        return self

    def get_offset(self):
        return self._offset

    def _take_offset(self, n):
        """Philox counters for n 32-bit words; kernels draw from (seed, offset + i)."""
        with self._lock:      # two threads drawing at once must not get the same counters
            off = self._offset
            self._offset = off + -(-n // 4) * 4
        return off

    def _kernel_seed(self):
        return self._seed % (2 ** 31)   # Triton's tl.rand takes a 32-bit seed


default_generator = Generator("cpu")
_cuda_generators: dict = {}
_cuda_generators_lock = threading.Lock()


def generator_for(device):
    """The default generator of ``device``: tt.default_generator for cpu, one per cuda device
    (made on first use, seeded as the default generator)."""
    if backend_for(device) is default_generator._backend:     # the cpu kind has one generator
        return default_generator
    g = _cuda_generators.get(device.index)
    if g is None:
        with _cuda_generators_lock:       # one generator per device, whichever thread asks first
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
    return [cuda_get_rng_state(i) for i in range(device_count())]


def cuda_set_rng_state_all(new_states):
    for i, st in enumerate(new_states):
        cuda_set_rng_state(st, i)


def _cuda_device(device):
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
    if backend_for(generator.device) is not backend_for(device):     # another device kind
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
    backend_for(t.device).random(t, kind, gen, a, b)
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
    backend_for(t.device).random(t, "integers", gen, low, high)
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
