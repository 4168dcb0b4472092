"""The op layer: the table (table.py), dispatch, and the op modules that declare its entries.

Importing ``tritensor.ops`` imports every op module, so the whole table is registered. The
modules form layers (tests/test_ops_layering.py checks there is no import cycle): leaf helpers
(_shapes, _checks, _scalars, _layout) and table; dispatch; views; copy; creation; random;
elementwise/pointwise; joining; reduce; scan; softmax; indexing; linalg; nn; pdist. A module
imports only the layers below it at module level.
"""
from . import dispatch, views, copy, creation, random  # noqa: F401  (registers the entries)
from . import elementwise, pointwise, joining, reduce, scan, softmax  # noqa: F401
from . import indexing, linalg, nn, pdist  # noqa: F401
from .table import TABLE  # noqa: F401
