"""tt.utils.backcompat: torch.utils.backcompat's two switches, ``broadcast_warning`` and
``keepdim_warning`` (``.enabled``, default False). torch introduced them to warn about code whose
meaning changed when broadcasting and keepdim=False arrived (0.2); nothing in torch reads them any
more, and nothing here does: they keep what is set, for programs that set them."""
from __future__ import annotations


class Warning:  # noqa: A001  (torch's name)
    def __init__(self, name):
        self._name = name
        self._enabled = False

    def set_enabled(self, value) -> None:
        if not isinstance(value, bool):
            raise RuntimeError(f"set_backcompat_{self._name}_warn expects a bool, but got {type(value).__name__}")
        self._enabled = value

    def get_enabled(self) -> bool:
        return self._enabled

    enabled = property(get_enabled, set_enabled)


broadcast_warning = Warning("broadcast")
keepdim_warning = Warning("keepdim")
