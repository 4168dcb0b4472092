"""tritensor: a torch-free GPU tensor library with PyTorch's names and semantics.

    import tritensor as tt
    x = tt.randn(4, 3, device="cuda", requires_grad=True)
    (x * 2 + 1).exp().sum().backward()
"""
from . import _methods  # noqa: F401  (binds Tensor methods and operators)
from . import autograd, cuda, nn  # noqa: F401
from .autograd import enable_grad, inference_mode, is_grad_enabled, is_inference_mode_enabled, no_grad, set_grad_enabled  # noqa: F401
from .dtypes import (  # noqa: F401
    bfloat16, bool_ as bool, double, dtype, float, float16, float32, float64, get_default_dtype, half,
    int, int8, int16, int32, int64, long, promote_types, result_type, set_default_dtype, short, uint8,
    uint16, uint32, uint64,
    can_cast, finfo, iinfo,
)
from . import backends  # noqa: F401  (tt.backends.cuda.matmul.allow_tf32)
from .backends import cuda as _backends_cuda  # noqa: F401  (binds tt.backends.cuda)
from ._format import set_printoptions  # noqa: F401  (torch.set_printoptions)
from .backends.cuda import get_float32_matmul_precision, set_float32_matmul_precision  # noqa: F401
from .ops.random import (  # noqa: F401  (random number state: not ops)
    Generator, default_generator, get_rng_state, initial_seed, manual_seed, seed, set_rng_state,
)
from .ops._return_types import return_types  # noqa: F401  (torch.return_types: the named tuples)
from .memory_formats import (  # noqa: F401  (torch.memory_format and its four values)
    channels_last, channels_last_3d, contiguous_format, memory_format, preserve_format)
from .runtime.device import device  # noqa: F401
from .layouts import layout, sparse_coo, sparse_csr, strided  # noqa: F401  (torch.layout and its values)
from .runtime.storage import TypedStorage, UntypedStorage  # noqa: F401  (Tensor.storage(), untyped_storage())
from ._legacy import CPU_TYPES as _CPU_TYPES, CUDA_TYPES as _CUDA_TYPES  # noqa: E402
globals().update(_CPU_TYPES)            # tt.FloatTensor, tt.LongTensor ... (the legacy types)
for _name, _cls in _CUDA_TYPES.items():
    setattr(cuda, _name, _cls)          # tt.cuda.FloatTensor ...
del _name, _cls
from . import linalg, optim, testing, utils  # noqa: F401  (the library layer: optimizers, test helpers, the data pipeline)
from . import accelerator, onnx  # noqa: F401  (tt.accelerator; tt.onnx, importable, without an exporter)
from . import amp  # noqa: F401,E402  (tt.amp: autocast and GradScaler)
from .amp.autocast_mode import (  # noqa: F401,E402  (torch's autocast state functions)
    autocast, autocast_decrement_nesting, autocast_increment_nesting, clear_autocast_cache, get_autocast_cpu_dtype,
    get_autocast_dtype, get_autocast_gpu_dtype, is_autocast_available, is_autocast_cache_enabled,
    is_autocast_cpu_enabled, is_autocast_enabled, set_autocast_cache_enabled, set_autocast_dtype,
    set_autocast_enabled)
from .amp._deprecated import cuda_amp as _cuda_amp, cpu_amp as _cpu_amp  # noqa: E402
cuda.amp = _cuda_amp                    # tt.cuda.amp (deprecated spellings, as torch's)
import types as _types  # noqa: E402
cpu = _types.ModuleType("tritensor.cpu", "torch.cpu: the cpu device's namespace (its amp names)")
cpu.amp = _cpu_amp
del _types, _cuda_amp, _cpu_amp
from .amp._scaling import _amp_foreach_non_finite_check_and_unscale_, _amp_update_scale_  # noqa: F401,E402
from .serialization import load, load_file, save, save_file  # noqa: F401
from .tensor import Size, Tensor  # noqa: F401

__version__ = "0.1.0"

# torch's float constants (torch.e, torch.inf, torch.nan, torch.pi): plain Python floats
import math as _math  # noqa: E402  (here ``float`` is tt.float, the dtype)
e, inf, nan, pi = _math.e, _math.inf, _math.nan, _math.pi
del _math

# Every op: tt.<name>, its aliases, tt.<name>_ where torch has it, out= where torch documents it,
# generated from the declarations (ops/surface.py; checked by tests/test_surface.py).
from .ops import surface as _surface  # noqa: E402
globals().update(_surface.namespace())
for _name, _fn in _surface.functional().items():
    setattr(nn.functional, _name, _fn)
del _name, _fn
from . import special  # noqa: E402,F401  (tt.special, torch.special's namespace)
from . import sparse  # noqa: E402,F401  (tt.sparse, torch.sparse's namespace)
from . import masked  # noqa: E402,F401  (tt.masked, torch.masked's masked reductions)
from . import signal  # noqa: E402,F401  (tt.signal.windows, torch.signal's namespace)
from . import vision  # noqa: E402,F401  (tt.vision, torchvision's models, transforms and data sets)
from . import func  # noqa: E402,F401  (tt.func.functional_call, torch.func's)
from . import profiler  # noqa: E402,F401  (tt.profiler: the emulated device's traffic counter)
from . import distributions  # noqa: E402,F401  (tt.distributions, torch.distributions)
from . import jit  # noqa: E402,F401  (tt.jit: trace, save/load of graphs, torch.jit's namespace)
from ._compile import compile  # noqa: E402,F401  (torch.compile: tt.jit's capture per input signature)
from . import distributed  # noqa: E402,F401  (tt.distributed: torch.distributed on MPI; mpi4py is imported only by init_process_group)
from . import array_api  # noqa: E402,F401  (tt.array_api: the Array API standard's namespace, Tensor.__array_namespace__)
__array_api_version__ = array_api.__array_api_version__
__array_namespace_info__ = array_api.__array_namespace_info__
