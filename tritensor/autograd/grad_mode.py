"""Grad mode: whether ops record the autograd graph. Thread-local, as in torch."""
from __future__ import annotations

import functools
import threading

class _GradState(threading.local):
    """Per-thread grad mode. The class attribute is every thread's default, so reading the
    mode is one attribute read (``_state.enabled``), which the dispatcher and the engine do
    inline on every op. ``inference`` is inference mode (tensors made now are inference tensors)."""
    enabled = True
    inference = False


_state = _GradState()


def is_grad_enabled() -> bool:
    return _state.enabled


def _set_enabled(mode: bool):
    _state.enabled = bool(mode)


class _GradMode:
    """Sets grad mode to ``mode`` inside a ``with`` block; also a decorator, with or without
    parentheses (``@no_grad()`` and ``@no_grad``), as in torch."""
    mode = True

    def __new__(cls, orig_func=None):
        self = super().__new__(cls)
        if orig_func is not None:
            if not callable(orig_func):
                raise TypeError(f"{cls.__name__}() takes no arguments")
            return self(orig_func)
        return self

    # no __init__: object's, which takes __new__'s arguments (one call less per ``with``)

    def __enter__(self):
        self._prev = _state.enabled
        _state.enabled = self.mode

    def __exit__(self, *exc):
        _state.enabled = self._prev
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with type(self)():
                return fn(*args, **kwargs)
        return wrapper


class no_grad(_GradMode):
    mode = False


class enable_grad(_GradMode):
    mode = True


class set_grad_enabled:
    """Sets grad mode as soon as it is called (torch does), and restores it on exit."""

    def __init__(self, mode: bool):
        self._prev = is_grad_enabled()
        self.mode = bool(mode)
        _set_enabled(self.mode)

    def __enter__(self):
        return None

    def __exit__(self, *exc):
        _set_enabled(self._prev)
        return False

    def __call__(self, fn):
        _set_enabled(self._prev)  # used as a decorator: leave the current mode alone

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with set_grad_enabled(self.mode):
                return fn(*args, **kwargs)
        return wrapper


def is_inference_mode_enabled() -> bool:
    return _state.inference


class inference_mode:
    """torch.inference_mode(mode=True): no_grad, and every tensor created inside is an
    *inference tensor* (``Tensor.is_inference()``), which keeps no version counter and so may
    never be saved for backward or modified in place outside inference mode (torch's errors).
    Views of normal tensors taken inside stay normal tensors, as torch's. ``mode=False`` is
    the opposite guard: grad mode on, inference mode off. A context manager and a decorator
    (``@inference_mode``, ``@inference_mode()``, ``@inference_mode(False)``)."""

    def __new__(cls, mode=True):
        self = super().__new__(cls)
        if callable(mode) and not isinstance(mode, bool):      # @inference_mode without parentheses
            self.mode = True
            return self(mode)
        self.mode = bool(mode)
        return self

    def __enter__(self):
        self._prev = (_state.enabled, _state.inference)
        _state.enabled, _state.inference = not self.mode, self.mode

    def __exit__(self, *exc):
        _state.enabled, _state.inference = self._prev
        return False

    def __call__(self, fn):
        mode = self.mode

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with inference_mode(mode):
                return fn(*args, **kwargs)
        return wrapper

    def clone(self):
        return inference_mode(self.mode)
