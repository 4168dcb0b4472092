"""tt.backends.mha: torch.backends.mha's fast-path switch. torch's MultiheadAttention and
TransformerEncoder(Layer) take fused inference kernels when it is on; tritensor always runs the
normal path (nn/modules/multihead_attention.py, transformer.py), whose outputs the fast path
reproduces, so the setting is kept and read back but changes no result."""

_is_fastpath_enabled = True


def get_fastpath_enabled() -> bool:
    """Whether the fast path would be used (torch's default: True)."""
    return _is_fastpath_enabled


def set_fastpath_enabled(value: bool) -> None:
    """Set the fast-path flag (stored as given, as torch stores it)."""
    global _is_fastpath_enabled
    _is_fastpath_enabled = value
