"""tt.utils.checkpoint: activation checkpointing, as torch.utils.checkpoint.

``checkpoint(function, *args, use_reentrant=...)`` runs ``function`` without keeping its
intermediate activations; backward runs it again to get them. Two implementations, as torch:

* reentrant (``use_reentrant=True``): a custom autograd Function whose forward runs under no_grad
  and whose backward re-runs the function with grad enabled and backpropagates through that
  (a backward inside the backward). Keyword arguments and ``autograd.grad`` are not supported.
* non-reentrant (``use_reentrant=False``): the forward runs normally under ``saved_tensors_hooks``
  whose pack hook keeps a placeholder (a ``_Holder``) instead of the tensor; the first unpack in
  a backward re-runs the function, collecting the tensors it saves, in the same order, into the
  holders. Recomputation stops as soon as every holder is filled (``early_stop``).

The RNG states (cpu, and the cuda devices of the tensor arguments) are stashed before the
forward and restored around the recomputation, so dropout draws the same mask twice; the
caller's RNG state is left untouched by the recomputation (torch's fork_rng).
"""
from __future__ import annotations

import contextlib
import warnings

from ..autograd.function import Function
from ..autograd.grad_mode import enable_grad, is_grad_enabled, no_grad
from ..autograd.graph import SavedTensor
from ..autograd.hooks import saved_tensors_hooks
from ..tensor import Tensor

__all__ = ["checkpoint", "checkpoint_sequential", "CheckpointError", "CheckpointFunction",
           "check_backward_validity", "detach_variable", "get_device_states", "set_device_states",
           "noop_context_fn", "set_checkpoint_early_stop", "set_checkpoint_debug_enabled",
           "DefaultDeviceType"]

_DEFAULT_DETERMINISM_MODE = "default"
_checkpoint_debug_enabled = None
_enable_checkpoint_early_stop = None


@contextlib.contextmanager
def set_checkpoint_debug_enabled(enabled):
    """Overrides ``debug`` of every checkpoint inside it (None defers to the argument)."""
    global _checkpoint_debug_enabled
    prev, _checkpoint_debug_enabled = _checkpoint_debug_enabled, enabled
    try:
        yield
    finally:
        _checkpoint_debug_enabled = prev


@contextlib.contextmanager
def set_checkpoint_early_stop(enable):
    """Overrides ``early_stop`` of every non-reentrant checkpoint whose forward runs inside it."""
    global _enable_checkpoint_early_stop
    prev, _enable_checkpoint_early_stop = _enable_checkpoint_early_stop, enable
    try:
        yield
    finally:
        _enable_checkpoint_early_stop = prev


def _tensors_in(obj):
    """The tensors in ``obj`` and in the lists, tuples and dict values nested in it (torch's tree_map)."""
    if isinstance(obj, Tensor):
        yield obj
    elif isinstance(obj, (list, tuple)):
        for item in obj:
            yield from _tensors_in(item)
    elif isinstance(obj, dict):
        for item in obj.values():
            yield from _tensors_in(item)


def detach_variable(inputs):
    """A tuple with every tensor of ``inputs`` detached, keeping its requires_grad."""
    if not isinstance(inputs, tuple):
        raise RuntimeError("Only tuple of tensors is supported. Got Unsupported input type: "
                           f"{type(inputs).__name__}")
    out = []
    for inp in inputs:
        if isinstance(inp, Tensor):
            x = inp.detach()
            x.requires_grad = inp.requires_grad
            inp = x
        out.append(inp)
    return tuple(out)


def check_backward_validity(inputs):
    if not any(inp.requires_grad for inp in inputs if isinstance(inp, Tensor)):
        warnings.warn("None of the inputs have requires_grad=True. Gradients will be None", stacklevel=2)


class DefaultDeviceType:
    """The device type whose RNG state is stashed when no argument is on a non-cpu device."""
    _default_device_type = None

    @staticmethod
    def set_device_type(device="cuda"):
        DefaultDeviceType._default_device_type = device

    @staticmethod
    def get_device_type():
        if not DefaultDeviceType._default_device_type:
            from .. import cuda
            DefaultDeviceType._default_device_type = "cuda" if cuda.is_available() else "cpu"
        return DefaultDeviceType._default_device_type


def _infer_device_type(*args):
    device_types = [t.device.type for t in _tensors_in(args) if t.device.type != "cpu"]
    kinds = set(device_types)
    if len(kinds) > 1:
        warnings.warn(
            "Tensor arguments, excluding CPU tensors, are detected on at least two types of devices. Device "
            "state will only be saved for devices of a single device type, and the remaining devices will be "
            "ignored. Consequently, if any checkpointed functions involve randomness, this may result in "
            "incorrect gradients. (Note that if CUDA devices are among the devices detected, it will be "
            "prioritized; otherwise, the first device encountered will be selected.)"
            f"\nDevice types: {sorted(kinds)} first device type: {device_types[0]}", stacklevel=2)
    if not device_types:
        return DefaultDeviceType.get_device_type()
    return "cuda" if "cuda" in kinds else device_types[0]


def get_device_states(*args):
    """(device indices, RNG states) of the cuda devices the tensor arguments live on."""
    ids = []
    for t in _tensors_in(args):
        if t.device.type == "cuda" and t.get_device() not in ids:
            ids.append(t.get_device())
    from .. import cuda
    return ids, [cuda.get_rng_state(i) for i in ids]


def set_device_states(devices, states, *, device_type=None):
    if device_type is None:
        device_type = DefaultDeviceType.get_device_type()
    if device_type != "cuda":
        return
    from .. import cuda
    for device, state in zip(devices, states):
        cuda.set_rng_state(state, device)


class _RngStash:
    """The cpu RNG state and the cuda devices' states of ``args``, taken at the forward."""

    def __init__(self, args):
        from ..ops.generators import get_rng_state
        self.cpu_state = get_rng_state()
        self.devices, self.device_states = get_device_states(*args)

    @contextlib.contextmanager
    def restored(self):
        """Run with the stashed states; the caller's states are put back afterwards (fork_rng)."""
        from .. import cuda
        from ..ops.generators import get_rng_state, set_rng_state
        caller_cpu = get_rng_state()
        caller_devices = [cuda.get_rng_state(i) for i in self.devices]
        set_rng_state(self.cpu_state)
        set_device_states(self.devices, self.device_states, device_type="cuda")
        try:
            yield
        finally:
            set_rng_state(caller_cpu)
            set_device_states(self.devices, caller_devices, device_type="cuda")


# ------------------------------------------------------------------ reentrant
def _is_checkpoint_valid():
    """torch._C._is_checkpoint_valid: false inside a backward that computes only some inputs'
    gradients (autograd.grad, backward(inputs=...)). The reentrant backward accumulates into
    every leaf's .grad, which such a backward must not touch. The engine keeps no graph-task
    object to ask, so the innermost running engine call is read from the stack (this runs once
    per checkpointed segment's backward, never on the hot path)."""
    import sys
    from ..autograd import engine
    frame = sys._getframe(1)
    while frame is not None:
        if frame.f_code is engine.run_backward.__code__:
            return frame.f_locals.get("inputs") is None
        frame = frame.f_back
    return True


def _autocast_state():
    """The autocast state of cuda and cpu now, to replay in the recomputation (torch's
    _get_autocast_kwargs): the recomputed forward casts as the original one did."""
    from ..amp import autocast_mode as m
    return {d: {"enabled": m.is_autocast_enabled(d), "dtype": m.get_autocast_dtype(d),
                "cache_enabled": m.is_autocast_cache_enabled()} for d in ("cuda", "cpu")}


@contextlib.contextmanager
def _autocast_replayed(state):
    from ..amp.autocast_mode import autocast
    with autocast("cuda", **state["cuda"]), autocast("cpu", **state["cpu"]):
        yield


class CheckpointFunction(Function):
    """The reentrant checkpoint: forward under no_grad, backward recomputes and backpropagates."""

    @staticmethod
    def forward(ctx, run_function, preserve_rng_state, *args):
        check_backward_validity(args)
        ctx.run_function = run_function
        ctx.preserve_rng_state = preserve_rng_state
        if preserve_rng_state:
            ctx.rng = _RngStash(args)
        ctx.autocast = _autocast_state()
        ctx.inputs, ctx.tensor_indices, tensor_inputs = [], [], []
        for i, arg in enumerate(args):
            if isinstance(arg, Tensor):
                tensor_inputs.append(arg)
                ctx.tensor_indices.append(i)
                ctx.inputs.append(None)
            else:
                ctx.inputs.append(arg)
        ctx.save_for_backward(*tensor_inputs)
        with no_grad():
            return run_function(*args)

    @staticmethod
    def backward(ctx, *args):
        from ..autograd import backward as autograd_backward
        if not _is_checkpoint_valid():
            raise RuntimeError(
                "When use_reentrant=True, torch.utils.checkpoint is incompatible with .grad() or passing an "
                "`inputs` parameter to .backward(). To resolve this error, you can either set use_reentrant=False, "
                "or call .backward() without passing the `inputs` argument.")
        inputs = list(ctx.inputs)
        for i, idx in enumerate(ctx.tensor_indices):
            inputs[idx] = ctx.saved_tensors[i]
        stash = ctx.rng if ctx.preserve_rng_state else None
        with (stash.restored() if stash else contextlib.nullcontext()):
            detached_inputs = detach_variable(tuple(inputs))
            with enable_grad(), _autocast_replayed(ctx.autocast):
                outputs = ctx.run_function(*detached_inputs)
        if isinstance(outputs, Tensor):
            outputs = (outputs,)
        outputs_with_grad, args_with_grad = [], []
        for out, grad in zip(outputs, args):
            if isinstance(out, Tensor) and out.requires_grad:
                outputs_with_grad.append(out)
                args_with_grad.append(grad)
        if not outputs_with_grad:
            raise RuntimeError("none of output has requires_grad=True, this checkpoint() is not necessary")
        autograd_backward(outputs_with_grad, args_with_grad)
        grads = tuple(inp.grad if isinstance(inp, Tensor) else None for inp in detached_inputs)
        return (None, None) + grads


# ------------------------------------------------------------------ non-reentrant
class CheckpointError(RuntimeError):
    """Raised when the recomputation does not reproduce the tensors saved in the forward."""


_debug_tip_msg = """
Tip: To see a more detailed error message, either pass `debug=True` to
`torch.utils.checkpoint.checkpoint(...)` or wrap the code block
with `with torch.utils.checkpoint.set_checkpoint_debug_enabled(True):` to
enable checkpoint‑debug mode globally.
If this error occurs under torch.compile with automatic_dynamic_shapes enabled,
it may be because the recomputation selected a different compiled graph than the
forward pass (e.g., a dynamic graph instead of the original static graph).
To fix this, either:
  - Use torch._dynamo.mark_dynamic() to explicitly mark varying dimensions as
    dynamic upfront, avoiding the static-to-dynamic transition.
  - Call torch._C._dynamo.eval_frame._set_lru_cache(False) to disable LRU cache
    reordering, which can change which graph is checked first between forward
    and recompute.
See https://github.com/pytorch/pytorch/issues/166926 for more details and
workaround examples.
"""


def _default_meta_extractor(x):
    return {"shape": x.shape, "dtype": x.dtype, "device": x.device}


_allowed_determinism_checks_to_fns = {_DEFAULT_DETERMINISM_MODE: _default_meta_extractor, "none": lambda _: None}


class _StopRecomputationError(Exception):
    pass


class _Holder:
    """Stands in a graph node for one tensor saved in the checkpointed forward; holds the
    recomputed tensor between the recomputation and its (single) unpack."""
    __slots__ = ("value", "filled")

    def __init__(self):
        self.value = None
        self.filled = False


class _CheckpointFrame:
    def __init__(self, recompute_fn, early_stop, metadata_fn, args):
        self.recompute_fn = recompute_fn
        self.early_stop = early_stop
        self.metadata_fn = metadata_fn
        self.saved_args = args
        self.holders = []            # in the order the forward saved them
        self.x_metadatas = []
        self.recomp_counter = 0
        self.forward_completed = False
        self.ignore_saved_mismatch = False

    def recompute(self):
        self.recomp_counter = 0
        try:
            with _recomputation_hook(self), enable_grad():
                self.recompute_fn(*[a.unpack(None) if isinstance(a, SavedTensor) else a for a in self.saved_args])
        except _StopRecomputationError:
            pass
        self.check_recomputed_tensors_match()

    def check_recomputed_tensors_match(self):
        if self.ignore_saved_mismatch:
            return
        if len(self.holders) != self.recomp_counter:
            raise CheckpointError(
                "torch.utils.checkpoint: A different number of tensors was saved during the original forward "
                "and recomputation.\n"
                f"Number of tensors saved during forward: {len(self.holders)}\n"
                f"Number of tensors saved during recomputation: {self.recomp_counter}.\n"
                f"{_debug_tip_msg}")
        mismatched = ""
        for idx, (holder, x_meta) in enumerate(zip(self.holders, self.x_metadatas)):
            recomputed_meta = self.metadata_fn(holder.value)
            if x_meta != recomputed_meta:
                mismatched += (f"tensor at position {idx}:\nsaved metadata: {x_meta}\n"
                               f"recomputed metadata: {recomputed_meta}\n")
        if mismatched:
            raise CheckpointError(
                "torch.utils.checkpoint: Recomputed values for the following tensors have different metadata "
                f"than during the forward pass.\n{mismatched}.\n{_debug_tip_msg}")


class _recomputation_hook(saved_tensors_hooks):
    """During the recomputation: each saved tensor goes, in order, into the next holder."""

    def __init__(self, frame):
        def pack_hook(x):
            x = x.detach() if x.requires_grad else x
            idx = frame.recomp_counter
            frame.recomp_counter += 1
            if idx >= len(frame.holders):
                if not frame.forward_completed:
                    frame.ignore_saved_mismatch = True
                    return x
                raise CheckpointError("torch.utils.checkpoint: trying to save more tensors during "
                                      f"recomputation than during the original forward pass.\n{_debug_tip_msg}")
            holder = frame.holders[idx]
            holder.value, holder.filled = x, True
            if frame.early_stop and frame.recomp_counter == len(frame.holders):
                raise _StopRecomputationError
            return x

        super().__init__(pack_hook, lambda x: x)


class _checkpoint_hook(saved_tensors_hooks):
    """During the checkpointed forward: saved tensors are replaced by empty holders."""

    def __init__(self, frame):
        def pack_hook(x):
            holder = _Holder()
            frame.holders.append(holder)
            if frame.metadata_fn is not None:
                frame.x_metadatas.append(frame.metadata_fn(x))
            return holder

        def unpack_hook(holder):
            if not holder.filled:      # first unpack of this backward: recompute them all
                frame.recompute()
            value, holder.value, holder.filled = holder.value, None, False
            return value

        super().__init__(pack_hook, unpack_hook)


def noop_context_fn():
    return contextlib.nullcontext(), contextlib.nullcontext()


def _checkpoint_without_reentrant_generator(fn, preserve_rng_state=True, context_fn=noop_context_fn,
                                            determinism_check=_DEFAULT_DETERMINISM_MODE, debug=False,
                                            early_stop=True, *args, **kwargs):
    if _checkpoint_debug_enabled if _checkpoint_debug_enabled is not None else debug:
        if context_fn is not noop_context_fn:
            raise ValueError("debug=True is incompatible with non-default context_fn")
        raise NotImplementedError("tritensor: checkpoint(debug=True) needs an operator log (torch's "
                                  "capture_logs), which tritensor does not have")
    if determinism_check not in _allowed_determinism_checks_to_fns:
        raise ValueError(f"determinism_check should be one of {list(_allowed_determinism_checks_to_fns.keys())}, "
                         f"but got {determinism_check}")
    metadata_fn = _allowed_determinism_checks_to_fns[determinism_check]
    forward_context, recompute_context = context_fn()
    stash = _RngStash(args) if preserve_rng_state else None
    autocast_state = _autocast_state()

    def recompute_fn(*inputs):
        with (stash.restored() if stash else contextlib.nullcontext()), _autocast_replayed(autocast_state), \
                recompute_context:
            fn(*inputs, **kwargs)

    if not is_grad_enabled():
        yield
        return
    # the inputs are kept as saved tensors (torch's save_inputs): an in-place change before the
    # backward is caught by the version check, with autograd's message
    saved_args = [SavedTensor(a) if isinstance(a, Tensor) else a for a in args]
    frame = _CheckpointFrame(recompute_fn,
                             _enable_checkpoint_early_stop if _enable_checkpoint_early_stop is not None else early_stop,
                             metadata_fn, saved_args)
    suppressed = False
    with _checkpoint_hook(frame), forward_context:
        try:
            yield
        except BaseException:
            suppressed = True
            raise
    if suppressed:
        raise RuntimeError("torch.utils.checkpoint: the forward context provided by context_fn suppressed an "
                           "exception raised during the checkpointed forward. This is not supported because "
                           "checkpoint cannot return a value for a failed forward.")
    frame.forward_completed = True


# ------------------------------------------------------------------ public
def checkpoint(function, *args, use_reentrant=None, context_fn=noop_context_fn,
               determinism_check=_DEFAULT_DETERMINISM_MODE, debug=False, early_stop=True, **kwargs):
    """Run ``function(*args, **kwargs)`` without keeping its activations for backward, which
    recomputes them (torch.utils.checkpoint.checkpoint). ``preserve_rng_state=True`` (a keyword)
    replays the RNG so the recomputation draws the same random numbers."""
    if use_reentrant is None:
        warnings.warn(
            "torch.utils.checkpoint: the use_reentrant parameter should be passed explicitly. Starting in "
            "PyTorch 2.9, calling checkpoint without use_reentrant will raise an exception. use_reentrant=False "
            "is recommended, but if you need to preserve the current default behavior, you can pass "
            "use_reentrant=True. Refer to docs for more details on the differences between the two variants.",
            stacklevel=2)
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs and use_reentrant:
        raise ValueError("Unexpected keyword arguments: " + ",".join(arg for arg in kwargs))
    if use_reentrant:
        if context_fn is not noop_context_fn or debug is not False:
            raise ValueError("Passing `context_fn` or `debug` is only supported when use_reentrant=False.")
        return CheckpointFunction.apply(function, preserve, *args)
    gen = _checkpoint_without_reentrant_generator(function, preserve, context_fn, determinism_check, debug,
                                                  early_stop, *args, **kwargs)
    next(gen)
    try:
        ret = function(*args, **kwargs)
    except BaseException as e:
        try:
            gen.throw(e)
        except StopIteration as stop:
            raise RuntimeError(
                "torch.utils.checkpoint: the forward context provided by context_fn suppressed an exception "
                "raised during the checkpointed forward. This is not supported because checkpoint cannot "
                "return a value for a failed forward.") from stop
        raise
    try:
        next(gen)
    except StopIteration:
        return ret
    raise AssertionError("torch.utils.checkpoint: expected context_fn generator to yield exactly twice, but it "
                         "yielded more than twice.")


def checkpoint_sequential(functions, segments, input, use_reentrant=None, **kwargs):
    """Run a Sequential (or a list of modules/functions) in ``segments`` chunks, checkpointing
    every chunk but the last (torch.utils.checkpoint.checkpoint_sequential)."""
    if use_reentrant is None:
        warnings.warn(
            "torch.utils.checkpoint.checkpoint_sequential: the use_reentrant parameter should be passed "
            "explicitly. In version 2.9 we will raise an exception if use_reentrant is not passed. "
            "use_reentrant=False is recommended, but if you need to preserve the current default behavior, you "
            "can pass use_reentrant=True. Refer to docs for more details on the differences between the two "
            "variants.", stacklevel=2)
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(arg for arg in kwargs))

    def run_function(start, end, functions):
        def forward(input):
            for j in range(start, end + 1):
                input = functions[j](input)
            return input
        return forward

    from ..nn.modules.container import Sequential
    if isinstance(functions, Sequential):
        functions = list(functions.children())
    segment_size = len(functions) // segments
    end = -1
    for start in range(0, segment_size * (segments - 1), segment_size):
        end = start + segment_size - 1
        input = checkpoint(run_function(start, end, functions), input, use_reentrant=use_reentrant,
                           preserve_rng_state=preserve)
    return run_function(end + 1, len(functions) - 1, functions)(input)
