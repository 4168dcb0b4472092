"""tt.nn.functional: the functional forms torch users call as F.*; each is an op of tt.ops."""
from ..ops import elementwise as _ew
from ..ops.elementwise import sigmoid, tanh  # noqa: F401
from ..ops.linalg import linear  # noqa: F401
from ..ops.reduce import log_softmax, softmax  # noqa: F401


def relu(input, inplace=False):
    return _ew.relu_(input) if inplace else _ew.relu(input)


def silu(input, inplace=False):
    return _ew.silu_(input) if inplace else _ew.silu(input)


def gelu(input, approximate="none"):
    return _ew.gelu(input, approximate=approximate)
