"""torch.return_types: the named tuples that ops with several outputs return (max(dim), sort,
topk, median, histogram ...), one place for every family (ops/table.py: entries with several
outputs).

A leaf module (imports no op module). Each type is a tuple subclass named as torch's, with its
field names and torch's repr (one field a line); tt.return_types is this namespace.
"""
from __future__ import annotations

import collections


def structseq(name, fields=("values", "indices")):
    """torch.return_types.<name>: a named tuple of ``fields``."""
    base = collections.namedtuple(name, fields)

    def __repr__(self):            # torch's layout: one field a line
        body = ",\n".join(f"{f}={v!r}" for f, v in zip(fields, self))
        return f"tritensor.return_types.{name}(\n{body})"
    cls = type(name, (base,), {"__slots__": (), "__repr__": __repr__})
    cls.__module__ = "tritensor.return_types"
    return cls


class return_types:
    """torch.return_types: the named tuples (values, indices) unless said otherwise."""
    max = structseq("max")
    min = structseq("min")
    sort = structseq("sort")
    topk = structseq("topk")
    kthvalue = structseq("kthvalue")
    median = structseq("median")
    nanmedian = structseq("nanmedian")
    mode = structseq("mode")
    cummax = structseq("cummax")
    cummin = structseq("cummin")
    aminmax = structseq("aminmax", ("min", "max"))
    histogram = structseq("histogram", ("hist", "bin_edges"))
    histogramdd = structseq("histogramdd", ("hist", "bin_edges"))
    frexp = structseq("frexp", ("mantissa", "exponent"))
