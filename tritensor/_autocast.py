"""Autocast's cast policies and their one point of application (a leaf module: stdlib only at import).

torch's autocast (aten/src/ATen/autocast_mode.{h,cpp}) runs some ops in a lower-precision
float type and others in float32 while a ``torch.autocast`` region is active. Each op has one of
five policies, per device type:

  lower   cast every eligible floating tensor argument to the autocast dtype (matmuls, convs,
          attention: the tensor-core ops);
  fp32    cast eligible 16-bit tensors to float32 (ops whose range or accuracy needs it: exp,
          log, pow, norms, losses on cuda);
  fp32_opt_dtype  torch's fp32_set_opt_dtype (sum, prod, cumsum, softmax ...): computed in
          float32 when the first argument is eligible and no ``dtype`` was passed;
  promote every floating tensor argument cast to the widest floating type among them (ops that
          refuse mixed dtypes or should not be narrowed: cat, stack, addcmul, index_put ...);
  banned  refused under cuda autocast (binary_cross_entropy), with torch's error.

"Eligible" is torch's ``is_autocast_eligible``: a floating tensor on the autocast device that is
not float64. The lists below are torch 2.13's: cuda from AT_FORALL_* in ATen/autocast_mode.h,
cpu as torch 2.13's cpu autocast behaves (recorded by tests/data/make_autocast_fixture.py), named
by tritensor's op names (the table's primitive names and the composite functions' names).

Where a policy is applied:
  * primitive ops, in dispatch()'s first-time path (ops/dispatch.py). While any autocast region
    is active anywhere, the policy ops leave the per-signature fast path (``on_activate``), so
    an inactive autocast costs the fast path nothing;
  * composite functions (the nn.functional losses, linear ...), by ``@autocast_policy(name)``
    on their definition: one global read when autocast is off.
An op runs its own body with autocast suspended (torch excludes the autocast dispatch key while an
autocast kernel runs), so a composite's inner ops are not cast again; so does the backward pass
(its ops run in the dtypes the forward chose, as torch's backward under autocast does).
"""
from __future__ import annotations

import functools
import threading
import weakref

LOWER, FP32, FP32_OPT_DTYPE, PROMOTE, BANNED = "lower", "fp32", "fp32_opt_dtype", "promote", "banned"

_CUDA_LOWER = """_convolution convolution conv1d conv2d conv3d conv_tbc conv_transpose1d conv_transpose2d
conv_transpose3d prelu addmm addmv addr matmul einsum mm mv linalg_vecdot linear addbmm baddbmm bmm
chain_matmul linalg_multi_dot _thnn_fused_lstm_cell _thnn_fused_gru_cell lstm_cell gru_cell
rnn_tanh_cell rnn_relu_cell _scaled_dot_product_flash_attention scaled_dot_product_attention
multi_head_attention_forward""".split()
_CUDA_FP32 = """acos asin cosh erfinv exp expm1 log log10 log2 log1p reciprocal rsqrt sinh tan pow
softplus layer_norm native_layer_norm rms_norm group_norm native_group_norm frobenius_norm
nuclear_norm cosine_similarity poisson_nll_loss cosine_embedding_loss nll_loss nll_loss2d
hinge_embedding_loss kl_div l1_loss smooth_l1_loss huber_loss mse_loss margin_ranking_loss
multilabel_margin_loss soft_margin_loss triplet_margin_loss multi_margin_loss
binary_cross_entropy_with_logits dist pdist cdist renorm logsumexp upsample_nearest
upsample_taps interpolate""".split()
_CUDA_FP32_OPT_DTYPE = """prod softmax log_softmax cumprod cumsum linalg_vector_norm vector_norm
linalg_matrix_norm matrix_norm sum cross_entropy""".split()
_CUDA_PROMOTE = "addcdiv addcmul atan2 bilinear cross dot vdot grid_sampler_2d grid_sampler_3d index_put tensordot scatter_add cat stack".split()

_CPU_LOWER = """_convolution convolution conv1d conv2d conv3d conv_tbc conv_transpose1d conv_transpose2d
conv_transpose3d prelu addmm matmul einsum mm linalg_vecdot linear addbmm baddbmm bmm
scaled_dot_product_attention multi_head_attention_forward""".split()
_CPU_FP32 = """avg_pool3d binary_cross_entropy grid_sampler_2d grid_sampler_3d prod quantile nanquantile
cdist trace cholesky cholesky_inverse cholesky_solve inverse linalg_inv linalg_inv_ex lu_solve
pinverse max_pool3d max_unpool2d max_unpool3d adaptive_avg_pool3d mse_loss cosine_embedding_loss
nll_loss nll_loss2d hinge_embedding_loss poisson_nll_loss smooth_l1_loss cross_entropy l1_loss
huber_loss margin_ranking_loss soft_margin_loss triplet_margin_loss multi_margin_loss ctc_loss
kl_div multilabel_margin_loss binary_cross_entropy_with_logits fractional_max_pool2d
fractional_max_pool3d adaptive_max_pool3d""".split()
_CPU_PROMOTE = "cat stack index_copy".split()

POLICIES = {
    "cuda": {**{n: LOWER for n in _CUDA_LOWER}, **{n: FP32 for n in _CUDA_FP32},
             **{n: FP32_OPT_DTYPE for n in _CUDA_FP32_OPT_DTYPE}, **{n: PROMOTE for n in _CUDA_PROMOTE},
             "binary_cross_entropy": BANNED},
    "cpu": {**{n: LOWER for n in _CPU_LOWER}, **{n: FP32 for n in _CPU_FP32}, **{n: PROMOTE for n in _CPU_PROMOTE}},
}
POLICY_NAMES = frozenset(POLICIES["cuda"]) | frozenset(POLICIES["cpu"])

BANNED_MESSAGE = (
    "torch.nn.functional.binary_cross_entropy and torch.nn.BCELoss are unsafe to autocast.\n"
    "Many models use a sigmoid layer right before the binary cross entropy layer.\n"
    "In this case, combine the two layers using torch.nn.functional.binary_cross_entropy_with_logits\n"
    "or torch.nn.BCEWithLogitsLoss.  binary_cross_entropy_with_logits and BCEWithLogits are\n"
    "safe to autocast.")


class _State(threading.local):
    """Per-thread autocast state (torch's is thread-local too). ``suspended`` counts the
    autocast ops (and backward passes) running now, inside which nothing is cast again."""
    enabled = {"cpu": False, "cuda": False}
    dtype = None               # {"cpu": bfloat16, "cuda": float16}, filled on first use
    cache_enabled = True
    nesting = 0
    suspended = 0

    def __init__(self):
        self.enabled = {"cpu": False, "cuda": False}
        self.dtype = None
        self.cast_cache = {}


state = _State()
# Autocast regions active now, over every thread: while 0, no policy is ever looked up.
ACTIVE = [0]
_listeners = []            # on_activate/on_deactivate hooks (dispatch's fast path, ops/dispatch.py)
_lock = threading.Lock()


def dtypes_of_state():
    if state.dtype is None:
        from . import dtypes as _dt
        state.dtype = {"cpu": _dt.bfloat16, "cuda": _dt.float16}
    return state.dtype


def region_entered():
    with _lock:
        ACTIVE[0] += 1
        first = ACTIVE[0] == 1
    if first:
        for hook in _listeners:
            hook(True)


def region_left():
    with _lock:
        ACTIVE[0] -= 1
        last = ACTIVE[0] == 0
    if last:
        for hook in _listeners:
            hook(False)


def on_activate(hook):
    """``hook(active)`` is called when the first autocast region opens (True) and when the last
    one closes (False)."""
    _listeners.append(hook)


# --------------------------------------------------------------------------- casting
def _device_type_of(args, kwargs):
    from .tensor import Tensor
    for a in _tensors(args, kwargs):
        return a._storage.device.type
    return None


def _tensors(args, kwargs):
    from .tensor import Tensor
    for a in list(args) + list(kwargs.values()):
        if isinstance(a, Tensor):
            yield a
        elif isinstance(a, (list, tuple)):
            for b in a:
                if isinstance(b, Tensor):
                    yield b


def _eligible(t, device_type):
    return t._dtype.is_floating_point and t._dtype.name != "float64" and t._storage.device.type == device_type


def _cast(t, dtype, device_type):
    """t in ``dtype`` when eligible; the cast of a leaf that requires grad (a parameter) is kept
    for the rest of the outermost autocast region (torch's weight-cast cache)."""
    from .tensor import Tensor
    if not isinstance(t, Tensor) or not _eligible(t, device_type) or t._dtype is dtype:
        return t
    cacheable = (state.cache_enabled and t._requires_grad and t._grad_fn is None
                 and dtype.name in ("float16", "bfloat16"))
    if cacheable:
        hit = state.cast_cache.get(id(t))
        if hit is not None and hit[0]() is t and hit[1]._dtype is dtype:
            return hit[1]
    out = t.to(dtype)
    if cacheable:
        state.cast_cache[id(t)] = (weakref.ref(t), out)
    return out


def _map(fn, args, kwargs):
    def one(a):
        if isinstance(a, (list, tuple)):
            return type(a)(fn(b) for b in a)
        return fn(a)
    return tuple(one(a) for a in args), {k: one(v) for k, v in kwargs.items()}


def _cast_args(policy, device_type, args, kwargs):
    from . import dtypes as _dt
    if policy == BANNED:
        raise RuntimeError(BANNED_MESSAGE)
    if policy == LOWER:
        target = dtypes_of_state()[device_type]
    elif policy == FP32:
        target = _dt.float32
    elif policy == FP32_OPT_DTYPE:
        first = next(iter(_tensors(args, {})), None)
        if first is None or not _eligible(first, device_type) or kwargs.get("dtype") is not None:
            return args, kwargs
        target = _dt.float32
    else:           # PROMOTE: the widest floating type among the eligible arguments
        target = dtypes_of_state()[device_type]
        for t in _tensors(args, kwargs):
            if _eligible(t, device_type):
                target = _dt.promote_types(target, t._dtype)
    return _map(lambda a: _cast(a, target, device_type), args, kwargs)


def policy_for(name, args, kwargs):
    """(policy, device type) that applies to a call of ``name`` now, or None. Callers check
    ``ACTIVE[0]`` first."""
    if state.suspended or name not in POLICY_NAMES:
        return None
    device_type = _device_type_of(args, kwargs)
    if device_type is None or not state.enabled.get(device_type, False):
        return None
    policy = POLICIES[device_type].get(name)
    return None if policy is None else (policy, device_type)


# Composites that torch decomposes (CompositeImplicitAutograd): where their device type lists no
# policy for them, their inner ops are cast as usual (cpu einsum: its bmm in bfloat16). Every other
# decorated composite is one kernel in torch, which autocast never looks inside: where no policy
# applies, it runs with autocast suspended (cpu dot stays float32 although its tritensor form
# may use mm).
DECOMPOSED = frozenset({"einsum", "tensordot", "chain_matmul", "linalg_multi_dot", "cosine_similarity",
                        "bilinear", "linalg_vecdot"})


def call(name, fn, args, kwargs):
    """``fn(*args, **kwargs)`` under autocast's policy for ``name`` (when one applies): the
    arguments cast, then ``fn`` run with autocast suspended."""
    if state.suspended:
        return fn(*args, **kwargs)
    found = policy_for(name, args, kwargs)
    if found is None:
        device_type = _device_type_of(args, kwargs)
        if name in DECOMPOSED or device_type is None or not state.enabled.get(device_type, False):
            return fn(*args, **kwargs)
    else:
        args, kwargs = _cast_args(found[0], found[1], args, kwargs)
    state.suspended += 1
    try:
        return fn(*args, **kwargs)
    finally:
        state.suspended -= 1


class suspended:
    """No autocast inside (the backward pass, an autocast op's own body)."""

    def __enter__(self):
        state.suspended += 1

    def __exit__(self, *exc):
        state.suspended -= 1
        return False


def autocast_policy(name):
    """Decorator of a composite function: it runs under autocast's policy for ``name``. Off
    autocast it costs one call and one global read."""
    if name not in POLICY_NAMES:
        raise ValueError(f"no autocast policy is listed for {name!r}")

    def wrap(fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            if ACTIVE[0]:
                return call(name, fn, args, kwargs)
            return fn(*args, **kwargs)
        wrapper.__wrapped_autocast__ = name
        return wrapper
    return wrap
