"""tt.backends.cudnn: torch.backends.cudnn's flags, wired to what tritensor has in their place.

tritensor has no cuDNN: its GPU kernels are Triton (``is_available()`` is False and ``version()``
None, as torch reports them without cuDNN). Programs still set the flags on their way in, and two
of them have a meaning here, because they ask about the same choices torch makes through cuDNN:

    benchmark      (tritensor default True)  time the candidate kernel configurations of a
                   problem and keep the fastest (the matmul autotuner, backends/triton/matmul.py;
                   the convolution kernels of issue 22 when they land). False: no timing, the
                   first configuration that fits the problem is used (torch's heuristic choice).
                   torch's default is False, where cuDNN falls back on its own tuned heuristics;
                   tritensor has no such table, and untuned tiles cost a large factor, so its
                   kernels tune unless told not to.
    deterministic  (default False)  every kernel of tritensor is deterministic already (no
                   atomics: the same input gives bit-identical output on every run). What a
                   tuned choice adds is variation between processes and machines: two runs may
                   time different tiles as fastest, and a different K tiling sums in another
                   order. True makes the choice fixed (no timing, as benchmark=False), so results
                   are bit-identical across processes on the same GPU model.

``enabled`` (default True), ``allow_tf32`` (default True: cuDNN convolutions; tritensor's float32
precision is tt.backends.cuda.matmul's setting), ``benchmark_limit`` (default 10),
``fp32_precision`` ("none") and ``depthwise_kernel`` ("auto") read back what was set and change
nothing: they select among cuDNN's own algorithms. Setting a flag to a value of the wrong type
raises torch's RuntimeError; ``flags(...)`` sets several for a ``with`` block and restores them.
"""
from __future__ import annotations

import sys
import types
from contextlib import contextmanager

# torch's name for each setter (its error messages name them)
_BOOL_FLAGS = {"enabled": ("set_enabled_cudnn", True), "benchmark": ("set_benchmark_cudnn", True),
               "deterministic": ("set_deterministic_cudnn", False), "allow_tf32": ("setAllowTF32CuDNN", True)}
_values = {name: default for name, (_, default) in _BOOL_FLAGS.items()}
_values.update(benchmark_limit=10, fp32_precision="none", depthwise_kernel="auto")


def is_available() -> bool:
    """False: tritensor's kernels are Triton, it has no cuDNN."""
    return False


def version():
    """None, as torch's without cuDNN."""
    return None


def is_acceptable(tensor) -> bool:
    """Whether cuDNN would take ``tensor``: never, without cuDNN."""
    return False


def autotune_allowed() -> bool:
    """Whether kernel launchers may time candidate configurations (benchmark, not deterministic)."""
    return _values["benchmark"] and not _values["deterministic"]


def _set(name, value):
    if name in _BOOL_FLAGS:
        if not isinstance(value, bool):
            raise RuntimeError(f"{_BOOL_FLAGS[name][0]} expects a bool, but got {type(value).__name__}")
    elif name == "benchmark_limit":
        if isinstance(value, bool) or not isinstance(value, int):
            raise RuntimeError(f"set_benchmark_limit_cudnn expects an int, but got {type(value).__name__}")
    elif not isinstance(value, str):
        raise RuntimeError(f"{name} expects a str, but got {type(value).__name__}")
    _values[name] = value


def set_flags(_enabled=None, _benchmark=None, _benchmark_limit=None, _deterministic=None, _allow_tf32=None,
              _fp32_precision="none", _depthwise_kernel=None):
    """torch's set_flags: sets the given flags, returns the previous values (in this order)."""
    previous = tuple(_values[n] for n in ("enabled", "benchmark", "benchmark_limit", "deterministic",
                                          "allow_tf32", "fp32_precision", "depthwise_kernel"))
    for name, value in (("enabled", _enabled), ("benchmark", _benchmark), ("benchmark_limit", _benchmark_limit),
                        ("deterministic", _deterministic), ("allow_tf32", _allow_tf32),
                        ("fp32_precision", _fp32_precision), ("depthwise_kernel", _depthwise_kernel)):
        if value is not None:
            _set(name, value)
    return previous


@contextmanager
def flags(enabled=False, benchmark=False, benchmark_limit=10, deterministic=False, allow_tf32=True,
          fp32_precision="none", depthwise_kernel="auto"):
    """torch.backends.cudnn.flags: these values inside the block (torch's defaults for the ones not
    given), the previous ones after it."""
    previous = set_flags(enabled, benchmark, benchmark_limit, deterministic, allow_tf32, fp32_precision,
                         depthwise_kernel)
    try:
        yield
    finally:
        set_flags(*previous)


class _CudnnModule(types.ModuleType):
    """The module's flags are attributes with checked setters (torch's CudnnModule does the same)."""

    def __getattr__(self, name):
        if name in _values:
            return _values[name]
        raise AttributeError(f"module {self.__name__!r} has no attribute {name!r}")

    def __setattr__(self, name, value):
        if name in _values:
            _set(name, value)
        else:
            super().__setattr__(name, value)


sys.modules[__name__].__class__ = _CudnnModule
