"""tt.nn.utils, as torch.nn.utils: gradient clipping, parameter/vector conversion, stateless
calls (functional_call), parametrizations (parametrize, parametrizations) and the older
hook-based weight_norm / spectral_norm ..."""
from . import clip_grad, convert_parameters  # noqa: F401
from .clip_grad import (  # noqa: F401
    clip_grad_norm, clip_grad_norm_, clip_grad_value_, clip_grads_with_norm_, get_total_norm,
)
from .convert_parameters import parameters_to_vector, vector_to_parameters  # noqa: F401
from . import stateless  # noqa: F401
from . import parametrizations, parametrize  # noqa: F401
from .spectral_norm import remove_spectral_norm, spectral_norm  # noqa: F401
from .weight_norm import remove_weight_norm, weight_norm  # noqa: F401
