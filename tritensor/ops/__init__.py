"""The op layer: the table (table.py), dispatch, and the functions built on them."""
from . import copy, creation, elementwise, random, reduce, views  # noqa: F401  (registers the entries)
from .table import TABLE  # noqa: F401
