"""tt.nn.functional: the functional forms torch users call as F.*; each is an op of tt.ops."""
from ..ops import elementwise as _ew
from ..ops.elementwise import sigmoid, tanh  # noqa: F401
from ..ops.linalg import linear  # noqa: F401
from ..ops import reduce as _reduce


def _softmax_dim(name, input, dim, stacklevel):
    if dim is None:    # torch's deprecated implicit dim, with its warning
        import warnings
        warnings.warn(f"Implicit dimension choice for {name} has been deprecated. Change the call to "
                      "include dim=X as an argument.", UserWarning, stacklevel=stacklevel)
        return _reduce._implicit_dim(input.dim())
    return dim


def softmax(input, dim=None, _stacklevel=3, dtype=None):
    return _reduce.softmax(input, _softmax_dim("softmax", input, dim, _stacklevel), dtype=dtype)


def log_softmax(input, dim=None, _stacklevel=3, dtype=None):
    return _reduce.log_softmax(input, _softmax_dim("log_softmax", input, dim, _stacklevel), dtype=dtype)


def relu(input, inplace=False):
    return _ew.relu_(input) if inplace else _ew.relu(input)


def silu(input, inplace=False):
    return _ew.silu_(input) if inplace else _ew.silu(input)


def gelu(input, approximate="none"):
    return _ew.gelu(input, approximate=approximate)
