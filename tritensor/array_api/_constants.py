"""The standard's constants: Python floats, and ``newaxis`` (None, as in indexing)."""
import math

e = math.e
inf = math.inf
nan = math.nan
pi = math.pi
newaxis = None
