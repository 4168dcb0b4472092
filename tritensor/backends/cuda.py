"""tt.backends.cuda: the float32 matmul precision, under torch's names.

``tt.backends.cuda.matmul.allow_tf32`` (default False) and ``tt.set_float32_matmul_precision``
(default "highest") are two views of one setting, kept consistent as torch keeps them:

    precision "highest"          <=> allow_tf32 False   float32 matmuls in IEEE float32
    precision "high" / "medium"  <=> allow_tf32 True    float32 inputs rounded to TF32 on tensor cores

Setting ``allow_tf32 = True`` selects "high", ``False`` selects "highest"; torch's newer
``tt.backends.cuda.matmul.fp32_precision`` ("none" until set, then "ieee" or "tf32") is a third
view of it. An unknown precision name warns and changes nothing, as in torch. torch lets "medium"
use bfloat16 internally; tritensor's kernels treat "medium" like "high" (TF32), which is at least
as precise. Only float32 inputs are affected: float16/bfloat16 always multiply on tensor cores
with float32 accumulation, float64 is always IEEE float64. The cpu device (NumPy) ignores the
setting, as torch's cpu does.
"""
from __future__ import annotations

_PRECISIONS = ("highest", "high", "medium")
_precision = "highest"
_touched = False          # fp32_precision reads "none" until some setting is made (torch)
# cuBLAS reduction switches torch exposes; tritensor's kernels always accumulate 16-bit inputs in
# float32 (never reduced precision, never float16), so these are recorded and read back only
_REDUCTION_FLAGS = {"allow_fp16_reduced_precision_reduction": True,
                    "allow_bf16_reduced_precision_reduction": True, "allow_fp16_accumulation": False}
_flags = dict(_REDUCTION_FLAGS)


def set_float32_matmul_precision(precision: str) -> None:
    """torch's semantics: a non-string is an error; an unknown name warns and changes nothing."""
    global _precision, _touched
    if not isinstance(precision, str):
        raise RuntimeError(f"set_float32_matmul_precision expects a str, but got {type(precision).__name__}")
    if precision not in _PRECISIONS:
        import warnings
        warnings.warn(f"{precision} is not one of 'highest', 'high', or 'medium'; the current "
                      "setFloat32MatmulPrecision call has no effect.", UserWarning, stacklevel=2)
        return
    _precision, _touched = precision, True


def get_float32_matmul_precision() -> str:
    return _precision


def float32_input_precision() -> str:
    """What tl.dot does with float32 inputs under the current setting: "ieee" or "tf32"."""
    return "ieee" if _precision == "highest" else "tf32"


class _MatmulSettings:
    """``tt.backends.cuda.matmul``: attribute access to the float32 matmul precision
    (``allow_tf32``, and torch's newer ``fp32_precision``: "none" until set, "ieee" or "tf32"),
    plus torch's cuBLAS reduction switches, which read back what was set and change nothing
    here (see _REDUCTION_FLAGS)."""

    __slots__ = ()

    @property
    def allow_tf32(self) -> bool:
        return _precision != "highest"

    @allow_tf32.setter
    def allow_tf32(self, value) -> None:
        if not isinstance(value, bool):
            raise RuntimeError(f"set_allow_tf32_cublas expects a bool, but got {type(value).__name__}")
        set_float32_matmul_precision("high" if value else "highest")

    @property
    def fp32_precision(self) -> str:
        if not _touched:
            return "none"
        return "ieee" if _precision == "highest" else "tf32"

    @fp32_precision.setter
    def fp32_precision(self, value) -> None:
        global _touched
        if not isinstance(value, str):
            raise TypeError(f"fp32_precision expects a str, but got {type(value).__name__}")
        if value == "none":
            set_float32_matmul_precision("highest")
            _touched = False
        elif value in ("ieee", "tf32"):
            set_float32_matmul_precision("highest" if value == "ieee" else "high")
        elif value == "bf16":
            raise RuntimeError("backend 'cuda' does not support precision 'bf16'")
        else:
            raise RuntimeError(f"Unknown precision: {value}")

    def __getattr__(self, name):
        if name in _flags:
            return _flags[name]
        raise AttributeError(f"Unknown attribute {name}")

    def __setattr__(self, name, value):
        if name in _flags:
            flag = value[0] if isinstance(value, (tuple, list)) and value and name != "allow_fp16_accumulation" \
                else value
            if not isinstance(flag, bool):
                raise TypeError(f"{name} expects a bool or a tuple/list of bools, but got {type(value)!r}")
            _flags[name] = flag
            return
        if name not in ("allow_tf32", "fp32_precision"):
            # torch raises for unknown names too: a typo must not pass silently as a no-op setting
            raise AttributeError(f"Unknown attribute {name}")
        object.__setattr__(self, name, value)

    def __repr__(self):
        return f"<tt.backends.cuda.matmul allow_tf32={self.allow_tf32}>"


matmul = _MatmulSettings()


def is_built() -> bool:
    """tritensor's CUDA path needs no build step: the Triton kernels compile at first use."""
    return True
