"""tt.masked: torch.masked's masked reductions and normalizations (sum, prod, amax, amin,
argmax, argmin, mean, median, norm, var, std, logsumexp, logaddexp, cumsum, cumprod, softmax,
log_softmax, softmin, normalize), on strided tensors.

Generated from the declarations named ``masked.<name>`` (tritensor/ops/masked.py, through
ops/surface.py), as tt.special is; tests/test_surface.py checks that nothing here is undeclared.
MaskedTensor is not implemented: constructing one raises NotImplementedError.
"""
from ..ops import surface as _surface
from ..ops.masked import MaskedTensor  # noqa: F401  (raises NotImplementedError when constructed)

globals().update(_surface.namespace("masked"))
