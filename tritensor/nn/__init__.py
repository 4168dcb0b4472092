"""tt.nn: the functional interface so far (modules arrive with their own issue)."""
from . import functional  # noqa: F401
