"""repr(tensor) in torch's style (torch/_tensor_str.py): tensor([[1.5000, 2.0000]], device='cuda:0',
requires_grad=True), with torch's print options.

Past ``threshold`` elements torch shows only ``edgeitems`` entries at each end of every dim, and
its formatter (widths, fixed or scientific notation) looks only at those. So do we, and we fetch
only those: a cpu tensor is read through a view, any other device gathers the shown elements
on the device and copies that small grid (at most (2 * edgeitems) ** ndim elements) to the host.
Printing costs what is printed, not the tensor's size.
"""
from __future__ import annotations

import contextlib
import dataclasses
import math

import numpy as np

from . import dtypes as _dt
from . import _dual


@dataclasses.dataclass
class _PrinterOptions:
    precision: int = 4
    threshold: float = 1000
    edgeitems: int = 3
    linewidth: int = 80
    sci_mode: bool | None = None


PRINT_OPTS = _PrinterOptions()


def set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None, profile=None,
                     sci_mode=None):
    """torch.set_printoptions: digits after the point (4), the element count past which a
    tensor is summarized (1000), the entries shown at each end of a summarized dim (3), the line
    width (80), a profile ('default', 'short', 'full') to start from, and ``sci_mode`` (True,
    False, or None: chosen per tensor). As torch's, ``sci_mode`` is set on every call."""
    if profile is not None:
        base = {"default": (4, 1000, 3, 80), "short": (2, 1000, 2, 80), "full": (4, math.inf, 3, 80)}.get(profile)
        if base is not None:
            PRINT_OPTS.precision, PRINT_OPTS.threshold, PRINT_OPTS.edgeitems, PRINT_OPTS.linewidth = base
    if precision is not None:
        PRINT_OPTS.precision = precision
    if threshold is not None:
        PRINT_OPTS.threshold = threshold
    if edgeitems is not None:
        PRINT_OPTS.edgeitems = edgeitems
    if linewidth is not None:
        PRINT_OPTS.linewidth = linewidth
    PRINT_OPTS.sci_mode = sci_mode


def get_printoptions() -> dict:
    """The current print options, as keyword arguments for set_printoptions."""
    return dataclasses.asdict(PRINT_OPTS)


@contextlib.contextmanager
def printoptions(**kwargs):
    """Print options changed for the duration of a ``with`` block."""
    old = get_printoptions()
    set_printoptions(**kwargs)
    try:
        yield
    finally:
        set_printoptions(**old)


# --------------------------------------------------------------------------- the shown elements
def _shown_indices(shape, summarize):
    """Per dim, the indices printed: all, or the first and last ``edgeitems`` of a dim longer
    than twice that when the tensor is summarized (torch's get_summarized_data)."""
    e = PRINT_OPTS.edgeitems
    return [list(range(e)) + list(range(n - e, n)) if summarize and n > 2 * e else list(range(n))
            for n in shape]


def _gather(t, indices):
    """The elements at the cross product of ``indices`` as a NumPy array, touching nothing else."""
    if not indices:
        return t._to_host_array().reshape(())
    if all(len(ix) == n for ix, n in zip(indices, t.shape)):
        return t._to_host_array()      # everything is shown (a tensor of at most threshold elements)
    if t.device.type == "cpu":
        return t._host_view()[np.ix_(*indices)]       # a view, then a copy of the grid only
    from .ops.creation import tensor
    grid = tuple(tensor(ix, device=t.device) for ix in np.ix_(*indices))
    return t[grid]._to_host_array()                    # gathered on the device; the grid copied


def _python_values(arr, dtype):
    if dtype is _dt.bool_:
        return arr.astype(bool)
    if dtype.is_floating_point:
        return arr.astype(np.float64)                   # exact for every floating dtype
    return arr.astype(np.uint64 if dtype is _dt.uint64 else np.int64)   # (uint64 past 2**63 too)


# --------------------------------------------------------------------------- torch's _Formatter
class _Formatter:
    def __init__(self, values, floating):
        self.floating_dtype = floating
        self.int_mode = True
        self.sci_mode = False
        self.max_width = 1
        flat = values.reshape(-1)
        if not floating:
            for v in flat.tolist():
                self.max_width = max(self.max_width, len(f"{v}"))
            return
        nonzero_finite = flat[np.isfinite(flat) & (flat != 0)]
        if nonzero_finite.size == 0:
            return
        absolute = np.abs(nonzero_finite)
        lo, hi = absolute.min(), absolute.max()
        self.int_mode = bool(np.all(nonzero_finite == np.ceil(nonzero_finite)))
        self.sci_mode = (hi / lo > 1000.0 or hi > 1.0e8 or lo < 1.0e-4) if PRINT_OPTS.sci_mode is None \
            else PRINT_OPTS.sci_mode
        p = PRINT_OPTS.precision
        for v in nonzero_finite.tolist():
            if self.sci_mode:
                width = len(f"{v:.{p}e}")
            elif self.int_mode:
                width = len(f"{v:.0f}") + 1
            else:
                width = len(f"{v:.{p}f}")
            self.max_width = max(self.max_width, width)

    def format(self, value):
        p = PRINT_OPTS.precision
        if self.floating_dtype:
            if self.sci_mode:
                ret = f"{value:{self.max_width}.{p}e}"
            elif self.int_mode:
                ret = f"{value:.0f}"
                if not (math.isinf(value) or math.isnan(value)):
                    ret += "."
            else:
                ret = f"{value:.{p}f}"
        else:
            ret = f"{value}"
        return (self.max_width - len(ret)) * " " + ret


# --------------------------------------------------------------------------- layout of the text
def _vector_str(values, cut, indent, fmt):
    """One dim of shown values; ``cut``: the dim was shortened to its two ends."""
    elements_per_line = max(1, math.floor((PRINT_OPTS.linewidth - indent) / (fmt.max_width + 2)))
    e = PRINT_OPTS.edgeitems
    if cut:
        vals = values.tolist()
        data = [fmt.format(v) for v in vals[:e]] + [" ..."] + [fmt.format(v) for v in vals[e:]]
    else:
        data = [fmt.format(v) for v in values.tolist()]
    lines = [", ".join(data[i:i + elements_per_line]) for i in range(0, len(data), elements_per_line)]
    return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"


def _tensor_str(values, cuts, indent, fmt):
    dim = values.ndim
    if dim == 0:
        return fmt.format(values.item())
    if dim == 1:
        return _vector_str(values, cuts[0], indent, fmt)
    rows = [_tensor_str(values[i], cuts[1:], indent + 1, fmt) for i in range(values.shape[0])]
    if cuts[0]:
        e = PRINT_OPTS.edgeitems
        rows = rows[:e] + ["..."] + rows[e:]
    return "[" + ("," + "\n" * (dim - 1) + " " * (indent + 1)).join(rows) + "]"


def _add_suffixes(text, suffixes, indent, force_newline=False):
    parts = [text]
    last_line_len = len(text) - text.rfind("\n") + 1        # (torch's count, quirk included)
    for suffix in suffixes:
        if force_newline or last_line_len + len(suffix) + 2 > PRINT_OPTS.linewidth:
            parts.append(",\n" + " " * indent + suffix)
            last_line_len = indent + len(suffix)
            force_newline = False
        else:
            parts.append(", " + suffix)
            last_line_len += len(suffix) + 2
    parts.append(")")
    return "".join(parts)


def format_tensor(t) -> str:
    prefix = "tensor("
    indent = len(prefix)
    suffixes = []
    if t.device.type != "cpu":
        suffixes.append(f"device='{t.device}'")
    shape = tuple(t.shape)
    if 0 in shape:
        # torch: the shape when it is not (0,), and any dtype but the default float one (an
        # empty tensor has no elements to tell an int64 by)
        body = "[]"
        if len(shape) != 1:
            suffixes.append(f"size={shape}")
        if t.dtype is not _dt.get_default_dtype():
            suffixes.append(f"dtype={t.dtype}")
    else:
        summarize = math.prod(shape) > PRINT_OPTS.threshold
        if summarize and not PRINT_OPTS.edgeitems:
            body = "[...]"                   # torch: nothing shown, the size said instead
            suffixes.append(f"size={shape}")
        else:
            values = _python_values(_gather(t.detach(), _shown_indices(shape, summarize)), t.dtype)
            cuts = [summarize and n > 2 * PRINT_OPTS.edgeitems for n in shape]
            body = _tensor_str(values, cuts, indent, _Formatter(values, t.dtype.is_floating_point))
        if t.dtype not in (_dt.get_default_dtype(), _dt.int64, _dt.bool_):
            suffixes.append(f"dtype={t.dtype}")
    if t.grad_fn is not None:
        suffixes.append(f"grad_fn=<{t.grad_fn.name()}>")
    elif t.requires_grad:
        suffixes.append("requires_grad=True")
    if _dual.ACTIVE[0]:          # a dual tensor shows its tangent, as torch's (f"{...}": a 0-d one as a number)
        from .autograd.forward_ad import tangent_of     # (late: autograd imports the tensor that imports this)
        tangent = tangent_of(t)
        if tangent is not None:
            suffixes.append(f"tangent={tangent}")
    return _add_suffixes(prefix + body, suffixes, indent)


def _body(t, indent):
    """The bracketed values of dense ``t`` as format_tensor writes them (for a sparse tensor's
    indices and values)."""
    shape = tuple(t.shape)
    if 0 in shape:
        return "[]"
    summarize = math.prod(shape) > PRINT_OPTS.threshold
    if summarize and not PRINT_OPTS.edgeitems:
        return "[...]"
    values = _python_values(_gather(t.detach(), _shown_indices(shape, summarize)), t.dtype)
    cuts = [summarize and n > 2 * PRINT_OPTS.edgeitems for n in shape]
    return _tensor_str(values, cuts, indent, _Formatter(values, t.dtype.is_floating_point))


def format_sparse(t) -> str:
    """torch's repr of a sparse tensor: indices=tensor(...), values=tensor(...) (a CSR tensor's:
    crow_indices=, col_indices=, values=), then the size, nnz, dtype and layout (COO: the first
    suffix on a line of its own)."""
    prefix = "tensor("
    indent = len(prefix)
    suffixes = []
    if t.device.type != "cpu":
        suffixes.append(f"device='{t.device}'")
    suffixes += [f"size={tuple(t.shape)}", f"nnz={t._nnz()}"]
    if t.dtype not in (_dt.get_default_dtype(), _dt.int64, _dt.bool_):
        suffixes.append(f"dtype={t.dtype}")
    parts = []
    parts_of = ((("crow_indices", t._crow_t), ("col_indices", t._col_t)) if t._is_sparse_csr
                else (("indices", t._indices_t),)) + (("values", t._values_t.detach()),)
    for name, inner in parts_of:
        head = f"{name}=tensor("
        text = _body(inner, indent + len(head))
        if inner.numel() == 0:
            text += f", size={tuple(inner.shape)}"
        parts.append(head + text + ")")
    suffixes.append(f"layout={t.layout}")
    if t.grad_fn is not None:
        suffixes.append(f"grad_fn=<{t.grad_fn.name()}>")
    elif t.requires_grad:
        suffixes.append("requires_grad=True")
    # (torch starts the suffixes on a line of their own after a COO tensor's values only)
    return _add_suffixes(prefix + (",\n" + " " * indent).join(parts), suffixes, indent,
                         force_newline=not t._is_sparse_csr)
