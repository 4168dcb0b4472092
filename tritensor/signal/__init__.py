"""tt.signal: torch.signal's namespace (its windows submodule)."""
from . import windows  # noqa: F401
