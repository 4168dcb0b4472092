"""Argument checks that many op modules share, raising torch's exact errors.

A leaf module: it imports no op module (tests/test_ops_layering.py checks). Keep the texts as
torch's argument parser writes them; tests pin them.
"""
from __future__ import annotations

from ..tensor import Tensor


def not_tensor_error(name, value, arg="input", position=1):
    """torch's argument-parser TypeError for a non-Tensor argument: ``name(): argument 'arg'
    (position n) must be Tensor, not T`` (``position=None`` leaves "(position n)" out, as torch
    does for the keyword-only or overload-resolved arguments)."""
    where = f" (position {position})" if position is not None else ""
    return TypeError(f"{name}(): argument '{arg}'{where} must be Tensor, not {type(value).__name__}")


def check_tensor(name, value, arg="input", position=1):
    """Raise torch's "must be Tensor, not ..." TypeError unless ``value`` is a Tensor."""
    if not isinstance(value, Tensor):
        raise not_tensor_error(name, value, arg, position)


def check_int_dim(name, dim, position=1):
    """torch's int-only dim arguments (prod, argmax, cumsum, softmax ...) refuse tuples and lists."""
    if isinstance(dim, (tuple, list)):
        raise TypeError(f"{name}(): argument 'dim' (position {position}) must be int, not {type(dim).__name__}")
