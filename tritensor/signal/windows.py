"""tt.signal.windows: torch.signal.windows' window functions (bartlett, blackman, cosine,
exponential, gaussian, general_cosine, general_hamming, hamming, hann, kaiser, nuttall), each
torch's composite of ops in float32 or float64 with its keyword arguments (sym, dtype, layout,
device, requires_grad) and its ValueErrors. Implemented in tritensor/ops/windows.py."""
from ..ops.windows import (  # noqa: F401
    bartlett, blackman, cosine, exponential, gaussian, general_cosine, general_hamming, hamming, hann, kaiser, nuttall,
)

__all__ = ["bartlett", "blackman", "cosine", "exponential", "gaussian", "general_cosine", "general_hamming",
           "hamming", "hann", "kaiser", "nuttall"]
