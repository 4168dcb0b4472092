"""tt.nn.functional: activations and the softmax family available today."""
from ..ops.elementwise import relu, sigmoid, tanh  # noqa: F401
from ..ops.reduce import log_softmax, softmax  # noqa: F401
from ..ops.linalg import linear  # noqa: F401
