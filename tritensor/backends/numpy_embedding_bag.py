"""NumPy reference of embedding_bag's forward (kernels/embedding_bag.py): the cpu device runs
it and the tests check the kernel against it. The weight arrives in the compute dtype."""
from __future__ import annotations

import numpy as np


def embedding_bag(weight, per_sample_weights=None, *, input, starts, ends, mode, padding_idx, **_):
    """(out (B, D), max_indices (B, D) int64: the row of each column's first maximum, -1 for a
    bag without rows; (0, D) unless mode is max)."""
    B, D = len(starts), weight.shape[1]
    out = np.zeros((B, D), weight.dtype)
    max_indices = np.full((B, D) if mode == 2 else (0, D), -1, np.int64)
    pad = -1 if padding_idx is None else int(padding_idx)
    for b in range(B):
        pos = np.arange(int(starts[b]), int(ends[b]))
        rows = input[pos].astype(np.int64)
        keep = rows != pad
        pos, rows = pos[keep], rows[keep]
        if rows.size == 0:
            continue
        vals = weight[rows]
        if mode == 2:
            with np.errstate(invalid="ignore"):
                first = np.where(np.isnan(vals).any(0), np.argmax(np.isnan(vals), 0), np.argmax(vals, 0))
            out[b] = vals[first, np.arange(D)]
            max_indices[b] = rows[first]
        else:
            if per_sample_weights is not None:
                vals = vals * per_sample_weights[pos][:, None]
            out[b] = vals.sum(0) / (len(rows) if mode == 1 else 1)
    return out, max_indices
