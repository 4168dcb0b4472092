"""tt.nn.utils, as torch.nn.utils: gradient clipping, parameter/vector conversion, stateless
calls (functional_call), parametrizations (parametrize, parametrizations) and the older
hook-based weight_norm / spectral_norm, conv/linear + batch norm fusion, weight memory formats,
skip_init and pruning (prune)."""
from . import clip_grad, convert_parameters  # noqa: F401
from . import rnn  # noqa: F401  (packed and padded sequences)
from .clip_grad import (  # noqa: F401
    clip_grad_norm, clip_grad_norm_, clip_grad_value_, clip_grads_with_norm_, get_total_norm,
)
from .convert_parameters import parameters_to_vector, vector_to_parameters  # noqa: F401
from . import stateless  # noqa: F401
from . import parametrizations, parametrize  # noqa: F401
from .spectral_norm import remove_spectral_norm, spectral_norm  # noqa: F401
from .weight_norm import remove_weight_norm, weight_norm  # noqa: F401
from . import fusion, init, memory_format, prune  # noqa: F401
from .fusion import fuse_conv_bn_eval, fuse_conv_bn_weights, fuse_linear_bn_eval, fuse_linear_bn_weights  # noqa: F401
from .init import skip_init  # noqa: F401
from .memory_format import convert_conv2d_weight_memory_format, convert_conv3d_weight_memory_format  # noqa: F401
