"""Random number generators: one per device, reseeded together by tt.manual_seed, and the
in-place fills that draw from them (uniform_, normal_, random_).

cpu draws from NumPy's Philox generator; cuda runs Triton's Philox (tl.rand/tl.randn) keyed by
(seed, offset), advancing the offset past every number drawn, so a seed gives the same stream
on each device run after run. The sampling ops built on these (randperm, bernoulli,
multinomial, normal) are in random.py, above the elementwise ops they use.
"""
from __future__ import annotations

import math
import threading
import warnings

import numpy as np

from .. import _tracing
from .. import dtypes as _dt
from ..autograd.grad_mode import no_grad
from ..backends.base import backend_for
from ..runtime import graphs as _graphs
from ..runtime.device import as_device, current_device, device as _device, device_count
from ..tensor import Tensor
from ._overlap import assert_no_internal_overlap
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
        if _graphs.CAPTURES:
            _graphs.check_random_not_capturing(self.device)
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
    if _tracing.ACTIVE[0]:
        _tracing.warn_random()
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


# The C++ type names torch's distribution checks print (its TypeMeta names)
_CPP_NAMES = _dt.CPP_NAMES
# the integers a floating dtype holds exactly: [-(2**digits), 2**digits]
_DIGITS = {"float16": 11, "bfloat16": 8, "float32": 24, "float64": 53}


def _cpp_double(v):
    return f"{float(v):g}"       # a double as a C++ ostream prints it


def _check_uniform_bounds(t, a, b):
    """torch's check_uniform_bounds (DistributionTemplates.h): both bounds finite numbers of the
    dtype, a <= b, and b - a representable."""
    if not t.dtype.is_floating_point:
        raise NotImplementedError(f"\"check_uniform_bounds\" not implemented for '{_dt.type_name(t.dtype)}'")
    info = _dt.finfo(t.dtype)
    lo, hi = float(info.min), float(info.max)
    for name, v in (("from", a), ("to", b)):
        if not lo <= v <= hi:              # (NaN and infinities fail too)
            raise RuntimeError(f"{name} is out of bounds for {_CPP_NAMES[t.dtype.name]}")
    if not a <= b:
        raise RuntimeError(f"uniform_ expects to return a [from, to) range, but found from={_cpp_double(a)} "
                           f"> to={_cpp_double(b)}")
    if not float(b) - float(a) <= hi:
        raise RuntimeError(f"uniform_ expects to-from <= std::numeric_limits<{_dt.type_name(t.dtype)}>::max(), "
                           f"but found to={_cpp_double(b)} and from={_cpp_double(a)} which result in to-from to "
                           "exceed the limit")


@_tracing.random_op("uniform_", inplace=True)
def uniform_(t, a=0.0, b=1.0, *, generator=None):
    check_inplace(t)
    _check_uniform_bounds(t, a, b)
    with no_grad():
        return _fill_random(t, "uniform", a, b, generator)


@_tracing.random_op("normal_", inplace=True)
def normal_(t, mean=0.0, std=1.0, *, generator=None):
    if std < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std}")
    check_inplace(t)
    with no_grad():
        return _fill_random(t, "normal", mean, std, generator)


# --------------------------------------------------------------------------- distributions
# torch's in-place samplers (Tensor.exponential_ ...): the argument checks of
# DistributionTemplates.h in torch's order (in-place and overlap checks, the parameter, the
# dtype), then a fill from the device's generator through the transform (kernels/random.py;
# NumPy's samplers on cpu).
def _sampler_prologue(t):
    check_inplace(t)
    assert_no_internal_overlap(t)


def _draw(t, kind, a, b, generator):
    gen = generator_of(t.device, generator)
    if t.numel():
        with no_grad():
            backend_for(t.device).random(t, kind, gen, a, b)
        t._version_counter.value += 1
    return t


@_tracing.random_op("exponential_", inplace=True)
def exponential_(t, lambd=1.0, *, generator=None):
    """Tensor.exponential_: rate ``lambd`` (> 0; inf gives zeros, as torch)."""
    _sampler_prologue(t)
    if not lambd > 0:
        raise RuntimeError(f"exponential_ expects lambda > 0.0, but found lambda={_cpp_double(lambd)}")
    if not t.dtype.is_floating_point:
        raise RuntimeError("Exponential distribution is a continuous probability distribution. dtype must be a "
                           f"floating point but you specified {_dt.type_name(t.dtype)}")
    return _draw(t, "exponential", 1.0 / lambd, 0.0, generator)


@_tracing.random_op("cauchy_", inplace=True)
def cauchy_(t, median=0.0, sigma=1.0, *, generator=None):
    """Tensor.cauchy_: median + sigma * tan(pi * (U - 1/2))."""
    _sampler_prologue(t)
    if not sigma > 0:
        raise RuntimeError(f"cauchy_ expects sigma > 0.0, but found sigma={_cpp_double(sigma)}")
    if not t.dtype.is_floating_point:
        raise RuntimeError("Cauchy distribution is a continuous probability distribution. dtype must be a floating "
                           f"point but you specified {_CPP_NAMES[t.dtype.name]}")
    return _draw(t, "cauchy", float(median), float(sigma), generator)


@_tracing.random_op("log_normal_", inplace=True)
def log_normal_(t, mean=1.0, std=2.0, *, generator=None):
    """Tensor.log_normal_: exp of a normal with ``mean`` and ``std``."""
    _sampler_prologue(t)
    if not std > 0:
        raise RuntimeError(f"log_normal_ expects std > 0.0, but found std={_cpp_double(std)}")
    if not t.dtype.is_floating_point:
        raise NotImplementedError(f"\"log_normal_{t.device.type}\" not implemented for '{_dt.type_name(t.dtype)}'")
    return _draw(t, "log_normal", float(mean), float(std), generator)


@_tracing.random_op("geometric_", inplace=True)
def geometric_(t, p, *, generator=None):
    """Tensor.geometric_: the number of Bernoulli(p) trials up to the first success (1, 2, ...),
    any dtype but bool."""
    _sampler_prologue(t)
    if not 0 < p < 1:
        raise RuntimeError(f"geometric_ expects p to be in (0, 1), but got p={_cpp_double(p)}")
    if t.dtype is _dt.bool_:
        raise NotImplementedError(f"\"geometric_{t.device.type}\" not implemented for 'Bool'")
    return _draw(t, "geometric", 0.0, 1.0 / math.log1p(-p), generator)


def _fill_integers(t, low, high, generator):
    """t[...] = integers uniform in [low, high), as torch's random_(from, to)."""
    gen = generator_of(t.device, generator)
    if t.numel() == 0:
        return t
    backend_for(t.device).random(t, "integers", gen, low, high)
    t._version_counter.value += 1
    return t


def _as_int64_x86(x):
    """static_cast<int64_t>(double) as an x86 CPU does it: truncation, and INT64_MIN for what
    int64 cannot hold (inf, NaN, out of range)."""
    return int(x) if math.isfinite(x) and -2.0 ** 63 <= x < 2.0 ** 63 else -2 ** 63


def _through_dtype(v, dtype):
    """static_cast<int64_t>(static_cast<scalar_t>(v)) for a floating scalar_t (16-bit floats are
    reached through float, as C++ converts an integer to c10::Half/BFloat16)."""
    x = np.float64(v) if dtype is _dt.float64 else np.float32(v)
    with np.errstate(over="ignore"):
        if dtype is _dt.float16 or dtype is _dt.bfloat16:
            x = np.float32(x.astype(dtype.numpy_dtype))
    return _as_int64_x86(float(x))


def _bit_length_floor(v):
    """n with 2**n <= v < 2**(n+1) (0 for v <= 1): torch's ``while (v >>= 1) ++n``."""
    return max(v.bit_length() - 1, 0)


def _update_bounds_for_float(low, high, dtype):
    """torch's update_from/update_to: a bound that its dtype rounds past the range moves back
    to the nearest integer the dtype holds inside it."""
    digits = _DIGITS[dtype.name]
    from_plus_1 = _through_dtype(low + 1, dtype)
    if from_plus_1 < low:
        low = from_plus_1 + (1 << max(_bit_length_floor(abs(low + 1)) - digits + 1, 0))
    to_minus_1 = _through_dtype(high - 1, dtype)
    if to_minus_1 >= high:
        high = to_minus_1 - (1 << max(_bit_length_floor(abs(high - 1)) - digits + 1, 0))
    if low >= high:
        raise RuntimeError(f"random_ expects 'from' casted to dtype to be less than 'to' casted to dtype, but got "
                           f"from={low} >= to={high}")
    return low, high


def _integer_bounds(t, low, high):
    """torch's defaults and checks for random_ (random_from_to_impl, check_from_to_in_range):
    to=None means the dtype's range (floats: the integers exactly representable in the
    mantissa); [from, to - 1] must lie in the dtype, and for a floating dtype beyond 2**digits
    torch warns that not every integer can be drawn."""
    for v in (low, high):
        if v is not None and not -2 ** 63 <= v < 2 ** 63:
            raise ValueError("Overflow when unpacking long long")
    dtype = t.dtype
    if high is None:
        if dtype is _dt.bool_:
            high = 2
        elif dtype.is_floating_point:
            high = 2 ** _DIGITS[dtype.name] + 1
        else:
            high = int(np.iinfo(dtype.numpy_dtype).max) + 1
        if low >= high:
            raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} >= to={high}")
        return int(low), int(high)
    if low >= high:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} >= to={high}")
    cpp = _CPP_NAMES[dtype.name]
    if dtype.is_floating_point:
        low, high = _update_bounds_for_float(low, high, dtype)
        info = _dt.finfo(dtype)
        lo, hi = float(info.min), float(info.max)
    else:
        info = None if dtype is _dt.bool_ else np.iinfo(dtype.numpy_dtype)
        lo, hi = (0, 1) if info is None else (int(info.min), int(info.max))
    for name, v in (("from", low), ("to - 1", high - 1)):
        if not lo <= v <= hi:
            raise RuntimeError(f"{name} is out of bounds for {cpp}")
    if dtype.is_floating_point:
        digits = _DIGITS[dtype.name]
        for name, v in (("from", low), ("to - 1", high - 1)):
            if not -(1 << digits) <= v <= 1 << digits:
                warnings.warn(f"{name} is out of bounds [-(2^{digits}), 2^{digits}]. Due to precision limitations "
                              f"{cpp} can support discrete uniform distribution only within this range. This "
                              "warning will become an error in version 1.7 release, please fix the code in advance",
                              UserWarning, stacklevel=4)
    if high - low > 2 ** 32:
        raise NotImplementedError(f"tritensor: random integers over a range wider than 2**32 "
                                  f"(from={low}, to={high}) are not supported")
    return int(low), int(high)


@_tracing.random_op("random_", inplace=True)
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
