"""Anomaly mode: remember where each node was created, report it when its backward fails."""
from __future__ import annotations

import traceback
import warnings

_enabled = False
_check_nan = True


def is_anomaly_enabled() -> bool:
    return _enabled


def is_anomaly_check_nan_enabled() -> bool:
    return _check_nan


class detect_anomaly:
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


def record_trace(node):
    if _enabled:
        node._anomaly_trace = "".join(traceback.format_stack()[:-3])


def check_nan(node, outs):
    if not _check_nan:
        return
    from ..tensor import Tensor
    for i, g in enumerate(outs if isinstance(outs, (tuple, list)) else (outs,)):
        if isinstance(g, Tensor) and g.dtype.is_floating_point and g.numel() and (g != g).sum().item() > 0:
            raise RuntimeError(f"Function '{node.name()}' returned nan values in its {i}th output.")
