"""tt.autocast / tt.amp.autocast: mixed precision by per-op cast policies (torch.amp.autocast).

Inside ``with tt.autocast("cuda"):`` matmuls and convolutions run in float16 (bfloat16 for
``device_type="cpu"``), while ops that need range or accuracy run in float32, per torch 2.13's
op lists (tritensor/_autocast.py, where the policies are applied: dispatch's first-time path for
primitive ops, a decorator on composite functions). The state is per thread, per device type;
regions nest; the casts of parameters (leaves that require grad) are cached until the outermost
region ends. Outside every region the fast path of dispatch never looks at autocast.
"""
from __future__ import annotations

import collections.abc
import functools
import warnings

from .. import _autocast
from .. import dtypes as _dt
from .._autocast import state as _state

__all__ = ["autocast", "autocast_decorator", "is_autocast_available", "custom_fwd", "custom_bwd"]

_DEVICE_TYPES = ("cpu", "cuda")


def is_autocast_available(device_type: str) -> bool:
    return device_type in _DEVICE_TYPES


def _check_device_type(device_type):
    if device_type not in _DEVICE_TYPES:
        raise RuntimeError(f"User specified an unsupported autocast device_type '{device_type}'")


# --------------------------------------------------------------------------- torch.* state functions
def is_autocast_enabled(device_type=None) -> bool:
    """torch.is_autocast_enabled(device_type="cuda")."""
    if device_type is None:
        device_type = "cuda"
    _check_device_type(device_type)
    return _state.enabled[device_type]


def set_autocast_enabled(device_type, enabled):
    _check_device_type(device_type)
    was = any(_state.enabled.values())
    _state.enabled[device_type] = bool(enabled)
    now = any(_state.enabled.values())
    if now and not was:
        _autocast.region_entered()
    elif was and not now:
        _autocast.region_left()


def get_autocast_dtype(device_type):
    _check_device_type(device_type)
    return _autocast.dtypes_of_state()[device_type]


def set_autocast_dtype(device_type, dtype):
    _check_device_type(device_type)
    _autocast.dtypes_of_state()[device_type] = dtype


def get_autocast_gpu_dtype():
    return get_autocast_dtype("cuda")


def get_autocast_cpu_dtype():
    return get_autocast_dtype("cpu")


def is_autocast_cpu_enabled() -> bool:
    return is_autocast_enabled("cpu")


def is_autocast_cache_enabled() -> bool:
    return _state.cache_enabled


def set_autocast_cache_enabled(enabled):
    _state.cache_enabled = bool(enabled)


def clear_autocast_cache():
    _state.cast_cache.clear()


def autocast_increment_nesting() -> int:
    _state.nesting += 1
    return _state.nesting


def autocast_decrement_nesting() -> int:
    _state.nesting -= 1
    return _state.nesting


# --------------------------------------------------------------------------- the context manager
def autocast_decorator(autocast_instance, func):
    @functools.wraps(func)
    def decorate_autocast(*args, **kwargs):
        with autocast_instance:
            return func(*args, **kwargs)
    return decorate_autocast


class autocast:
    """torch.autocast(device_type, dtype=None, enabled=True, cache_enabled=None): a context
    manager and a decorator."""

    def __init__(self, device_type, dtype=None, enabled=True, cache_enabled=None):
        if not isinstance(device_type, str):
            raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
        self.device = device_type
        if not is_autocast_available(device_type):
            raise RuntimeError(f"User specified an unsupported autocast device_type '{device_type}'")
        self.fast_dtype = get_autocast_dtype(device_type) if dtype is None else dtype
        self._cache_enabled = is_autocast_cache_enabled() if cache_enabled is None else cache_enabled
        if enabled:
            if device_type == "cuda":
                from .. import cuda
                if not cuda.is_available():
                    warnings.warn("CUDA is not available or torch_xla is imported. Disabling autocast.",
                                  stacklevel=2)
                    enabled = False
            elif self.fast_dtype not in (_dt.bfloat16, _dt.float16):
                warnings.warn(
                    "In CPU autocast, but the target dtype is not supported. Disabling autocast.\n"
                    f"CPU Autocast only supports dtypes of {_dt.bfloat16}, {_dt.float16} currently.",
                    stacklevel=2)
                enabled = False
        if device_type == "cuda" and self.fast_dtype not in (_dt.bfloat16, _dt.float16) and enabled:
            raise RuntimeError(f"In CUDA autocast, but the target dtype {self.fast_dtype} is not supported.")
        self._enabled = enabled

    def __enter__(self):
        self.prev_cache_enabled = is_autocast_cache_enabled()
        self.prev = is_autocast_enabled(self.device)
        self.prev_fastdtype = get_autocast_dtype(self.device)
        self.prev_suspended = _state.suspended
        set_autocast_enabled(self.device, self._enabled)
        set_autocast_dtype(self.device, self.fast_dtype)
        autocast_increment_nesting()
        set_autocast_cache_enabled(self._cache_enabled)
        if self._enabled:
            _state.suspended = 0     # an autocast region opened inside a backward (custom_bwd) casts
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        if autocast_decrement_nesting() == 0:
            clear_autocast_cache()
        set_autocast_enabled(self.device, self.prev)
        set_autocast_dtype(self.device, self.prev_fastdtype)
        set_autocast_cache_enabled(self.prev_cache_enabled)
        _state.suspended = self.prev_suspended
        return False

    def __call__(self, func):
        if not callable(func):
            raise TypeError(
                f"autocast()(func) requires a callable, but got {type(func).__name__}. "
                "Did you mean to use autocast as a context manager? For example:\n"
                "    with torch.autocast(device_type=...):\n"
                "        output = model(input)")
        return autocast_decorator(self, func)


# --------------------------------------------------------------------------- custom autograd Functions
def _cast(value, device_type, dtype):
    from ..tensor import Tensor
    if isinstance(value, Tensor):
        eligible = value.is_floating_point() and value.device.type == device_type and value.dtype is not _dt.float64
        return value.to(dtype) if eligible else value
    if isinstance(value, (str, bytes)):
        return value
    if isinstance(value, collections.abc.Mapping):
        return {_cast(k, device_type, dtype): _cast(v, device_type, dtype) for k, v in value.items()}
    if isinstance(value, collections.abc.Iterable) and not hasattr(value, "__array__"):
        items = (_cast(v, device_type, dtype) for v in value)
        return type(value)(items) if isinstance(value, (list, tuple)) else items
    return value


def custom_fwd(fwd=None, *, device_type, cast_inputs=None):
    """torch.amp.custom_fwd: for a custom autograd Function's forward. With ``cast_inputs``, the
    floating inputs are cast to it and the forward runs with autocast off."""
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
    if fwd is None:
        return functools.partial(custom_fwd, device_type=device_type, cast_inputs=cast_inputs)

    @functools.wraps(fwd)
    def decorate_fwd(*args, **kwargs):
        args[0]._dtype = get_autocast_dtype(device_type)
        if cast_inputs is None:
            args[0]._fwd_used_autocast = is_autocast_enabled(device_type)
            return fwd(*args, **kwargs)
        in_autocast = is_autocast_enabled(device_type)
        args[0]._fwd_used_autocast = False
        if in_autocast:
            with autocast(device_type=device_type, enabled=False):
                return fwd(*_cast(args, device_type, cast_inputs), **_cast(kwargs, device_type, cast_inputs))
        return fwd(*args, **kwargs)
    return decorate_fwd


def custom_bwd(bwd=None, *, device_type):
    """torch.amp.custom_bwd: the backward runs with the autocast state its forward saw."""
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
    if bwd is None:
        return functools.partial(custom_bwd, device_type=device_type)

    @functools.wraps(bwd)
    def decorate_bwd(*args, **kwargs):
        with autocast(device_type=device_type, enabled=args[0]._fwd_used_autocast, dtype=args[0]._dtype):
            return bwd(*args, **kwargs)
    return decorate_bwd
