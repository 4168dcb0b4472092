"""Scaled dot-product attention cases, runnable with torch or tritensor: make_attention_values.py
records torch 2.13's outputs and gradients (float64, cpu, torch's default backend) into
attention_values.npz; tests/test_attention.py replays them on tritensor.

Each case: shapes of query, key, value; the mask (None, or (kind, shape): "bool" with some rows
fully masked, "float" additive with -inf entries and a fully masked row); the keyword arguments.
Values come from a NumPy generator seeded by the case's name (``arrays``), so both sides build
the same inputs; the upstream gradient g is of the output's shape.
"""
import zlib

import numpy as np

CASES = {
    "plain": ((2, 3, 5, 8), (2, 3, 7, 8), (2, 3, 7, 6), None, {}),
    "bool_mask_broadcast": ((2, 3, 5, 8), (2, 3, 7, 8), (2, 3, 7, 8), ("bool", (5, 7)), {}),
    "float_mask_heads": ((2, 3, 5, 8), (2, 3, 7, 8), (2, 3, 7, 8), ("float", (1, 3, 5, 7)), {}),
    "causal_wide": ((1, 2, 5, 4), (1, 2, 9, 4), (1, 2, 9, 4), None, {"is_causal": True}),
    "causal_tall": ((1, 2, 9, 4), (1, 2, 5, 4), (1, 2, 5, 3), None, {"is_causal": True}),
    "gqa": ((2, 4, 3, 8), (2, 2, 6, 8), (2, 1, 6, 5), None, {"enable_gqa": True}),
    "scale": ((1, 2, 4, 5), (1, 2, 6, 5), (1, 2, 6, 5), ("float", (4, 6)), {"scale": 0.3}),
    "negative_scale": ((1, 1, 4, 5), (1, 1, 6, 5), (1, 1, 6, 5), None, {"scale": -0.7}),
    "three_d": ((3, 5, 4), (3, 6, 4), (3, 6, 4), ("bool", (3, 5, 6)), {}),
    "two_d": ((5, 4), (6, 4), (6, 2), None, {}),
    "batch_broadcast": ((2, 2, 3, 4, 4), (1, 2, 3, 6, 4), (2, 1, 3, 6, 4), None, {}),
    "odd_lengths": ((1, 1, 17, 16), (1, 1, 33, 16), (1, 1, 33, 16), ("bool", (1, 1, 17, 33)), {}),
    "empty_head_dim": ((1, 1, 2, 0), (1, 1, 3, 0), (1, 1, 3, 2), None, {}),
    "no_keys": ((1, 1, 2, 4), (1, 1, 0, 4), (1, 1, 0, 2), None, {}),
}


def rng_for(name):
    return np.random.default_rng(zlib.crc32(name.encode()))


def arrays(name):
    """(q, k, v, mask or None, g) as float64 / bool NumPy arrays, and the kwargs."""
    qs, ks, vs, mask, kwargs = CASES[name]
    rng = rng_for(name)
    q, k, v = (rng.standard_normal(s) for s in (qs, ks, vs))
    m = None
    if mask is not None:
        kind, shape = mask
        if kind == "bool":
            m = rng.random(shape) < 0.7
            m.reshape(-1, shape[-1])[1] = False        # a fully masked row
        else:
            m = rng.standard_normal(shape)
            m[rng.random(shape) < 0.2] = -np.inf
            m.reshape(-1, shape[-1])[0] = -np.inf      # a fully masked row
    out_shape = np.broadcast_shapes(q.shape[:-2], k.shape[:-2] if not kwargs.get("enable_gqa") else q.shape[:-2],
                                    v.shape[:-2] if not kwargs.get("enable_gqa") else q.shape[:-2])
    g = rng.standard_normal(tuple(out_shape) + (q.shape[-2], v.shape[-1]))
    return q, k, v, m, g, kwargs
