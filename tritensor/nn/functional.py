"""tt.nn.functional: activations available today."""
from ..ops.elementwise import relu, sigmoid, tanh  # noqa: F401
