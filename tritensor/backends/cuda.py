"""tt.backends.cuda: the float32 matmul precision, under torch's names.

``tt.backends.cuda.matmul.allow_tf32`` (default False) and ``tt.set_float32_matmul_precision``
(default "highest") are two views of one setting, kept consistent as torch keeps them:

    precision "highest"          <=> allow_tf32 False   float32 matmuls in IEEE float32
    precision "high" / "medium"  <=> allow_tf32 True    float32 inputs rounded to TF32 on tensor cores

Setting ``allow_tf32 = True`` selects "high", ``False`` selects "highest". torch lets "medium"
use bfloat16 internally; tritensor's kernels treat "medium" like "high" (TF32), which is at least
as precise. Only float32 inputs are affected: float16/bfloat16 always multiply on tensor cores
with float32 accumulation, float64 is always IEEE float64. The cpu device (NumPy) ignores the
setting, as torch's cpu does.
"""
from __future__ import annotations

_PRECISIONS = ("highest", "high", "medium")
_precision = "highest"


def set_float32_matmul_precision(precision: str) -> None:
    global _precision
    if precision not in _PRECISIONS:
        raise RuntimeError(
            f"set_float32_matmul_precision: invalid precision {precision!r}; expected one of "
            "'highest', 'high', 'medium'")
    _precision = precision


def get_float32_matmul_precision() -> str:
    return _precision


def float32_input_precision() -> str:
    """What tl.dot does with float32 inputs under the current setting: "ieee" or "tf32"."""
    return "ieee" if _precision == "highest" else "tf32"


class _MatmulSettings:
    """``tt.backends.cuda.matmul``: attribute access to the float32 matmul precision."""

    __slots__ = ()

    @property
    def allow_tf32(self) -> bool:
        return _precision != "highest"

    @allow_tf32.setter
    def allow_tf32(self, value) -> None:
        set_float32_matmul_precision("high" if value else "highest")

    def __setattr__(self, name, value):
        if name != "allow_tf32":
            # torch raises for unknown names too: a typo must not pass silently as a no-op setting
            raise AttributeError(f"Unknown attribute {name}")
        object.__setattr__(self, name, value)

    def __repr__(self):
        return f"<tt.backends.cuda.matmul allow_tf32={self.allow_tf32}>"


matmul = _MatmulSettings()


def is_built() -> bool:
    """tritensor's CUDA path needs no build step: the Triton kernels compile at first use."""
    return True
