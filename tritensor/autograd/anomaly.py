"""Anomaly mode: remember where each node was created, report it when its backward fails,
and check every backward function's results for NaN."""
from __future__ import annotations

import os
import traceback
import warnings

_enabled = False
_check_nan = True

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TRACEBACK_KEY = "traceback_"     # where torch keeps the forward traceback in node.metadata


def is_anomaly_enabled() -> bool:
    return _enabled


def is_anomaly_check_nan_enabled() -> bool:
    return _check_nan


class detect_anomaly:
    """Context manager that turns anomaly detection on: each node records the traceback of the
    forward call that created it; a backward error prints that traceback; a backward function
    that returns NaN raises (``check_nan``)."""

    def __init__(self, check_nan: bool = True):
        self.check_nan = check_nan
        warnings.warn(
            "Anomaly Detection has been enabled. This mode will increase the runtime and should "
            "only be enabled for debugging.", stacklevel=2)

    def __enter__(self):
        global _enabled, _check_nan
        self._prev = (_enabled, _check_nan)
        _enabled, _check_nan = True, self.check_nan

    def __exit__(self, *exc):
        global _enabled, _check_nan
        _enabled, _check_nan = self._prev
        return False


class set_detect_anomaly:
    """Sets anomaly mode on or off as soon as it is called; as a context manager, restores the
    previous mode on exit."""

    def __init__(self, mode: bool, check_nan: bool = True):
        global _enabled, _check_nan
        self._prev = (_enabled, _check_nan)
        _enabled, _check_nan = bool(mode), check_nan

    def __enter__(self):
        return None

    def __exit__(self, *exc):
        global _enabled, _check_nan
        _enabled, _check_nan = self._prev
        return False


def _internal(frame_summary):
    return os.path.abspath(frame_summary.filename).startswith(_PACKAGE_DIR + os.sep)


def record_trace(node):
    """In anomaly mode, keep the Python stack of the forward call that creates ``node``
    (up to the last frame outside tritensor)."""
    if not _enabled:
        return
    stack = traceback.extract_stack()[:-1]
    while stack and _internal(stack[-1]):
        stack.pop()
    lines = traceback.format_list(stack)
    node.metadata[TRACEBACK_KEY] = lines
    node._anomaly_trace = "".join(lines)


def report_failure(node):
    """What torch prints (as a warning) when ``node``'s backward raises in anomaly mode."""
    if node._anomaly_trace is None:
        warnings.warn(
            "No forward pass information available. Enable detect anomaly during forward pass "
            "for more information.", stacklevel=3)
        return
    warnings.warn(
        f"Error detected in {node.name()}. Traceback of forward call that caused the error:\n"
        + node._anomaly_trace, stacklevel=3)


def check_nan(node, outs):
    from ..tensor import Tensor
    for i, g in enumerate(outs if isinstance(outs, (tuple, list)) else (outs,)):
        if isinstance(g, Tensor) and g.dtype.is_floating_point and g.numel() and (g != g).sum().item() > 0:
            raise RuntimeError(f"Function '{node.name()}' returned nan values in its {i}th output.")
