"""The torch-free launch layer: what a kernel launch hands to Triton.

Two things live here.

``KernelArg`` is the face a tensor shows to Triton's launcher and to its interpreter. Triton types
a pointer argument by ``data_ptr()`` and the last dotted part of ``str(dtype)``. Its interpreter
also stages arguments on the host through a few torch methods (``untyped_storage().cpu()``,
``new_empty``, ``set_``, ``copy_`` ...). Our emulated device's memory already is host memory, so
those staging steps are no-ops that hand back the same pointer. A KernelArg also remembers the
index of the device its memory lives on, so a launch knows where to run.

``launch_kernel`` is the one place every kernel launch goes through (backends/triton's
``_run``). A compiled launch runs on the tensors' device, whatever the current device is
(torch's device guard), and on that device's *current stream*. Triton asks its active driver for
both (``get_current_device()`` and ``get_current_stream(device)`` in ``JITFunction.run``):

- Triton 3.6's NVIDIA driver answers through torch, and reports itself inactive when torch is
  not imported, so a torch-free process cannot launch at all;
- Triton >= 3.8 has a torch-free fallback that launches on the device's *default* stream, which
  ignores ``with tt.cuda.stream(s):``.

So before the first compiled launch tritensor installs its own driver object
(``triton.runtime.driver.set_active``): Triton's ``CudaDriver`` class with its torch-touching
constructor skipped and its device/stream queries answered by tritensor (runtime/device.py,
runtime/streams.py). Everything else (compilation target, binary loading, the C launcher) is
Triton's own. This works the same on every Triton the package accepts (>= 3.6) and never imports
torch. Under the interpreter (``TRITON_INTERPRET=1``, the emulated device) Triton uses no driver
at all and runs each launch to completion at once, so no hook is needed there.

Threads. Compiled launches from several host threads need no lock (each queues work on its own
thread's current stream, as torch's do). Triton's interpreter is not thread-safe (a launch patches
``triton.language`` for its duration and keeps the grid in module state), so interpreted launches
run one at a time under ``_INTERPRETER_LOCK``; host threads still interleave between launches.

``CUDA_LAUNCH_BLOCKING=1`` (read at the first launch) makes each launch synchronous: the host
waits for the launch's stream before going on, so an error surfaces at the op that caused it.

Direct launches. ``kernel[grid](*args)`` (Triton's ``JITFunction.run``) binds the arguments,
computes their specialization and the cache key, and looks the compiled kernel up on every call:
~9-12 us of host time before the GPU starts. A compiled launch here does that once per
*signature* and then calls the cached compiled kernel's launcher itself (``CompiledKernel.run``,
the call ``JITFunction.run`` ends with; the same in Triton 3.6 and 3.9). The signature
(``direct_key``) holds everything Triton specializes on, or more:

- the kernel, the device index, the meta-parameters (constexprs and options such as num_warps,
  num_stages) by value, and every constexpr parameter passed positionally by value;
- a pointer (KernelArg): its dtype and whether its address is a multiple of 16 (Triton's
  alignment specialization);
- an int: whether it is 1 (Triton makes it a constant), whether it is a multiple of 16, and
  which of int32 / int64 / uint64 holds it (its Triton type);
- a float or bool: its type only (Triton never specializes their values);
- a tuple (shapes, strides): its value (finer than Triton's per-element specialization).

Any other argument, an unhashable meta value, a kernel with pre-run hooks, or a Triton whose
compiled kernels lack ``run``/``function``/``packed_metadata`` takes ``kernel[grid]`` every
time (the fallback, which also does every first launch of a signature). The stream is asked
for at each launch (``current_stream_handle``), never cached. Triton's check that the globals a
kernel read have not changed since it compiled is skipped on the direct path (our kernels read
none), and Triton's compile knobs (``knobs.runtime.debug``, instrumentation) count as they were
at a signature's first launch: call ``clear_direct_launches()`` after changing them.
``TRITENSOR_DIRECT_LAUNCH=0`` turns the direct path off.

Rounding. Every compiled launch compiles with ``COMPILE_OPTIONS`` (Triton >= 3.6 takes both as
launch options), so that the GPU rounds as the NumPy reference and the emulated device do:

- ``enable_fp_fusion=False``: Triton's default contracts ``a * b + c`` into one FMA (one rounding
  instead of two). Then ``round(2.675f, decimals=2)`` gave 2.67 (``rint(x * 100)`` saw the unrounded
  product 267.4999995), and a fused kernel differed from the eager ops it replaces by an ulp. Each
  operation now rounds as written, as under the interpreter; ``tl.dot`` (tensor cores, and the
  FMA loop of IEEE float32 dots) and explicit ``tl.fma`` are unaffected.
- ``enable_reflect_ftz=False``: Triton's default makes libdevice flush float32 subnormals to zero
  (``cvt.rmi.ftz.f32``), so floor(-1e-45) was -0.0 instead of -1.0; torch does not flush.
"""
from __future__ import annotations

import os
import threading

import numpy as np

from . import interpreter as _interpreter
from . import device as _device
from . import graphs as _graphs
from . import streams as _streams


COMPILE_OPTIONS = {"enable_fp_fusion": False, "enable_reflect_ftz": False}   # see "Rounding" above


def compile_meta(meta):
    """``meta`` with the compile options every tritensor launch uses (``meta`` may override)."""
    return {**COMPILE_OPTIONS, **meta}


class KernelArg:
    __slots__ = ("_ptr", "dtype", "device_index")

    def __init__(self, ptr: int, dtype, device_index=None):
        self._ptr = ptr
        self.dtype = dtype
        self.device_index = device_index

    def data_ptr(self):
        return self._ptr

    # --- the interpreter's staging protocol: all no-ops on host memory ---
    def untyped_storage(self):
        return self

    def cpu(self):
        return self

    def copy_(self, other):
        return self

    def new_empty(self, *args, **kwargs):
        return self

    def set_(self, *args, **kwargs):
        return self

    def storage_offset(self):
        return 0

    def size(self):
        return ()

    def stride(self):
        return ()

    def __repr__(self):
        return f"KernelArg(0x{self._ptr:x}, {self.dtype}, device={self.device_index})"


def pointer(tensor, extra_elements: int = 0) -> KernelArg:
    """A kernel argument addressing ``tensor``'s first element (plus ``extra_elements``)."""
    storage = tensor._storage
    ptr = storage.data_ptr() + (tensor._offset + extra_elements) * tensor.dtype.itemsize
    device = getattr(storage, "device", None)     # host scratch buffers under the interpreter have none
    return KernelArg(ptr, tensor.dtype, None if device is None else device.index)


# --------------------------------------------------------------------------- the launch
_state = {"mode": None, "blocking": False, "driver": None, "direct": False}
# Triton's interpreter is not thread-safe: a launch patches triton.language's builtins for the
# duration of the grid and keeps the program ids in module state, so two threads interpreting at
# once see each other's grid (``x >= grid_dim[0]``) or unpatched functions. Interpreted launches
# therefore run one at a time. Reentrant: a launch whose interpretation frees a tensor (the
# garbage collector) or, through a future hook, launches again, must not deadlock. Compiled
# launches take no lock: they only queue work on a stream.
_INTERPRETER_LOCK = threading.RLock()
_FIRST_LAUNCH_LOCK = threading.Lock()


def launch_blocking() -> bool:
    """CUDA_LAUNCH_BLOCKING=1: every launch waits for its stream (read once)."""
    return _device._env_true("CUDA_LAUNCH_BLOCKING")


def _first_launch():
    """Decide interpreted or compiled once; install the driver hook for compiled launches
    (once, whichever thread launches first)."""
    with _FIRST_LAUNCH_LOCK:
        if _state["mode"] is None:
            _decide_mode()


def _decide_mode():
    interpreted = os.environ.get("TRITON_INTERPRET") == "1"
    if interpreted:
        _interpreter.install()      # device-function calls skip the interpreter's re-patching
        if _device._env_true("TRITENSOR_TRAFFIC"):     # count every launch (tritensor.profiler)
            from .. import profiler
            profiler.enable_from_environment()
    _state["blocking"] = launch_blocking()
    if not interpreted and _state["driver"] is None:
        install_triton_driver()
    _state["direct"] = not interpreted and os.environ.get("TRITENSOR_DIRECT_LAUNCH", "1") != "0"
    _state["mode"] = "interpreted" if interpreted else "compiled"     # last: other threads read it unlocked


def launch_kernel(kernel, grid, *args, **meta):
    """``kernel[grid](*args, **meta)`` on the current stream of the arguments' device."""
    mode = _state["mode"]
    if mode is None:
        _first_launch()
        mode = _state["mode"]
    if mode == "interpreted":
        # A CUDA graph capturing this launch's stream records it instead (runtime/graphs.py);
        # one dict truthiness test when nothing captures.
        if _graphs.CAPTURES and _graphs.record(kernel, grid, args, meta):
            return
        # The interpreter computes with NumPy: inf/nan arithmetic is expected, not worth a warning.
        # It runs the launch to completion now: the stream's work is done when this returns.
        with _INTERPRETER_LOCK, np.errstate(all="ignore"):
            kernel[grid](*args, **meta)
        return
    index = None
    for a in args:
        if type(a) is KernelArg:
            index = a.device_index
            break
    if _graphs.CAPTURES:       # a capture keeps the compiled kernels it launches referenced
        _graphs.keep_kernel(kernel)
    current = getattr(_device._tls, "index", 0)     # _device.current_device(), inline: every launch asks
    if index is None or index == current:
        index = current
        launch_compiled(kernel, grid, args, meta, index)
    else:
        # torch's device guard: the op runs on its tensors' device, then the current one is back
        _device.exchange_device(index)
        try:
            launch_compiled(kernel, grid, args, meta, index)
        finally:
            _device.exchange_device(current)
    if _state["blocking"]:
        _streams.current_stream(index).synchronize()


# --------------------------------------------------------------------------- direct launches
_DIRECT: dict = {}          # id(kernel) -> _KernelLaunches (the kernel kept alive in it)
_DIRECT_LIMIT = 4096        # signatures remembered per kernel
_NO_DEFAULT = object()
_I32, _I64 = 2 ** 31, 2 ** 63
_FLOAT, _BOOL = "f", "b"
_PLAIN = frozenset({int, bool, float, str, type(None)})   # meta values keyed by value, others by id


class _KernelLaunches:
    """One Triton kernel's parameters (names, defaults, constexpr positions) and its remembered
    signatures -> DirectLaunch. ``spec`` is None for a kernel that does not show its parameters
    or has pre-run hooks: it always goes through kernel[grid]."""
    __slots__ = ("kernel", "spec", "launches")

    def __init__(self, kernel):
        self.kernel = kernel
        self.launches = {}
        self.spec = None
        signature = getattr(kernel, "signature", None)
        if signature is not None and hasattr(kernel, "constexprs") and not getattr(kernel, "pre_run_hooks", None):
            params = list(signature.parameters.values())
            self.spec = (tuple(p.name for p in params),
                         tuple(_NO_DEFAULT if p.default is p.empty else p.default for p in params),
                         tuple(sorted(kernel.constexprs)))


def _launches_of(kernel):
    entry = _DIRECT.get(id(kernel))
    if entry is None or entry.kernel is not kernel:
        entry = _DIRECT[id(kernel)] = _KernelLaunches(kernel)
    return entry


def _int_code(v):
    """What Triton's specialization sees of an int: 1 is a constant; otherwise its type
    (int32 / int64 / uint64 range) and whether it is a multiple of 16."""
    if v == 1:
        return 1
    wide = 0 if -_I32 <= v < _I32 else (1 if -_I64 <= v < _I64 else 2)
    return 2 + 2 * wide + (not v & 15)     # 2/3: int32 (3 divisible by 16), 4/5 int64, 6/7 uint64


def _by_value_or_id(v):
    return v if type(v) in _PLAIN else id(v)


def direct_key(spec, args, meta, device):
    """The signature of a launch of a kernel with parameters ``spec`` (see the module docstring),
    or None when some argument cannot be keyed (the launch then goes through kernel[grid]).
    Meta values other than plain Python values (Triton functions, tl dtypes) are keyed by
    identity: hashing a Triton function costs ~1 us; the DirectLaunch keeps them alive."""
    key = [device]
    for a in args:
        t = type(a)
        if t is KernelArg:
            key.append(a.dtype)
            key.append(not a._ptr & 15)
        elif t is int:
            key.append((2 if a & 15 else 3) if -_I32 <= a < _I32 and a != 1 else _int_code(a))
        elif t is tuple:
            key.append(a)
        elif t is float:
            key.append(_FLOAT)
        elif t is bool:
            key.append(_BOOL)
        elif a is None:
            key.append(None)
        else:
            return None
    for i in spec[2]:                       # constexprs passed positionally count by value
        if i < len(args):
            key.append(("constexpr", i, _by_value_or_id(args[i])))
    key.append(tuple(meta))                 # the names, then the values
    for value in meta.values():
        key.append(value if type(value) in _PLAIN else id(value))
    return tuple(key)


class DirectLaunch:
    """A compiled kernel and how to complete a launch's arguments for its launcher: the
    parameters after the positional ones come from the meta-parameters or their defaults, which
    are fixed for a signature (the key holds every meta value), so they are computed once."""
    __slots__ = ("compiled", "run", "function", "packed_metadata", "tail", "keep", "low", "pointers")

    def __init__(self, compiled, spec, args, meta):
        names, defaults, constexprs = spec
        n_args = len(args)
        self.compiled = compiled
        self.run = compiled.run
        self.function = compiled.function
        self.packed_metadata = compiled.packed_metadata
        # the objects the key names by id stay alive as long as the entry
        self.keep = tuple(meta.values()) + tuple(args[i] for i in constexprs if i < n_args)
        tail = []
        for name, default in zip(names[n_args:], defaults[n_args:]):
            if name in meta:
                tail.append(meta[name])
            elif default is _NO_DEFAULT:
                raise TypeError(f"kernel argument {name!r} is missing")
            else:
                tail.append(default)
        self.tail = tuple(tail)
        self.low = _low_level_launch(self.run)
        # where the pointer arguments are (the same for every launch of the signature, whose key
        # holds each argument's kind): the C launcher gets their addresses as ints
        self.pointers = tuple(i for i, a in enumerate(args) if type(a) is KernelArg)

    def arguments(self, grid, stream, args, enter_hook, exit_hook):
        """The arguments of ``compiled.run`` for this launch (what JITFunction.run passes)."""
        values = args + self.tail
        grid_1 = grid[1] if len(grid) > 1 else 1
        grid_2 = grid[2] if len(grid) > 2 else 1
        launch_metadata = None if enter_hook is None else self.compiled.launch_metadata(grid, stream, *values)
        return (grid[0], grid_1, grid_2, stream, self.function, self.packed_metadata, launch_metadata,
                enter_hook, exit_hook) + values

    def launch(self, grid, stream, args):
        """The launch without hooks: Triton's C launcher called directly where its layout is known
        (``low``), else ``compiled.run``. The C launcher is handed each pointer as an int: for an
        object it calls ``data_ptr()`` (a Python call) and then asks the driver whether the address
        is device memory (cuPointerGetAttribute, a driver call per pointer per launch); every
        KernelArg of a compiled launch addresses a cuda storage of tritensor's."""
        n = len(grid)
        grid_1 = grid[1] if n > 1 else 1
        grid_2 = grid[2] if n > 2 else 1
        low = self.low
        if low is None:
            self.run(grid[0], grid_1, grid_2, stream, self.function, self.packed_metadata, None, None, None,
                     *args, *self.tail)
            return
        if self.pointers:
            args = list(args)
            for i in self.pointers:
                args[i] = args[i]._ptr
        if low[0] == 36:
            low[1](grid[0], grid_1, grid_2, stream, self.function, low[2], low[3], None, None,
                   self.packed_metadata, None, None, None, *args, *self.tail)
        else:
            low[1](grid[0], grid_1, grid_2, stream, self.function, low[2], low[3], self.packed_metadata,
                   None, None, None, None, None, low[4], low[5], (*args, *self.tail))


def _low_level_launch(launcher):
    """How to call Triton's C launcher behind ``launcher`` (a compiled kernel's ``run``) directly,
    or None. ``CudaLauncher.__call__`` allocates the global and profile scratch buffers (none for
    kernels that need none) and passes the launch flags through; calling the C function it ends
    with skips a Python frame and two closures per launch (the first H200 run: 32.6 us of host time
    per ``x + x``). Only Triton's own CudaLauncher of a release whose ``__call__`` was read for
    this is recognised (3.6: flags, scratch, then the launcher's arguments; 3.9: flags, the
    launcher's arguments, scratch, annotations and the kernel arguments as one tuple); any other
    launcher, or a kernel that needs scratch memory, goes through ``run``."""
    try:
        import triton
        from triton.backends.nvidia.driver import CudaLauncher
    except ImportError:
        return None
    if type(launcher).__call__ is not CudaLauncher.__call__ or getattr(launcher, "gsan_enabled", False):
        return None
    if launcher.global_scratch_size or launcher.profile_scratch_size:
        return None
    release = tuple(int(p) for p in triton.__version__.split(".")[:2])
    flags = (launcher.launch_cooperative_grid, launcher.launch_pdl)
    if release == (3, 6):
        return (36, launcher.launch) + flags
    if release == (3, 9) and hasattr(launcher, "arg_annotations"):
        return (39, launcher.launch) + flags + (launcher.arg_annotations, launcher.kernel_signature)
    return None


def _can_launch_directly(compiled):
    return all(hasattr(compiled, name) for name in ("run", "function", "packed_metadata", "launch_metadata"))


_KNOBS = []                 # triton.knobs.runtime, once imported (its launch hooks are read per launch)


def _triton_hooks():
    """Triton's launch enter/exit hooks, None for each that would do nothing: Triton >= 3.6 keeps
    them as HookChain objects, empty unless a profiler added a hook, and an enter hook that is
    not None costs a ``launch_metadata`` dictionary per launch."""
    if not _KNOBS:
        from triton import knobs
        _KNOBS.append(knobs.runtime)
    runtime = _KNOBS[0]
    enter_hook, exit_hook = runtime.launch_enter_hook, runtime.launch_exit_hook
    if enter_hook is not None and not getattr(enter_hook, "calls", True):
        enter_hook = None
    if exit_hook is not None and not getattr(exit_hook, "calls", True):
        exit_hook = None
    return enter_hook, exit_hook


def launch_compiled(kernel, grid, args, meta, device, stream=None, hooks=_triton_hooks):
    """One compiled launch on ``device`` (already current): the cached compiled kernel's
    launcher for a signature seen before, else ``kernel[grid]`` (which compiles when needed),
    whose compiled kernel is then remembered for the signature. ``stream``: the launch's stream
    handle (default: the device's current stream); ``hooks``: Triton's launch enter/exit hooks."""
    launches = key = None
    if _state["direct"]:
        launches = _DIRECT.get(id(kernel))
        if launches is None or launches.kernel is not kernel:
            launches = _launches_of(kernel)
        if launches.spec is not None:
            key = direct_key(launches.spec, args, meta, device)
    if key is not None:
        try:
            entry = launches.launches.get(key)
        except TypeError:                   # an unhashable argument (a tuple holding a list ...)
            entry = key = None
        if entry is not None:
            if stream is None:
                stream = _streams.current_stream_handle(device)
            if hooks is _triton_hooks and _KNOBS:
                # _triton_hooks() inline (every launch asks): Triton's hooks, an empty chain as None
                enter_hook, exit_hook = _KNOBS[0].launch_enter_hook, _KNOBS[0].launch_exit_hook
                if enter_hook is not None and not getattr(enter_hook, "calls", True):
                    enter_hook = None
                if exit_hook is not None and not getattr(exit_hook, "calls", True):
                    exit_hook = None
            else:
                enter_hook, exit_hook = hooks()
            if enter_hook is None and exit_hook is None:
                entry.launch(grid, stream, args)
            else:
                entry.run(*entry.arguments(grid, stream, args, enter_hook, exit_hook))
            return
    compiled = kernel[grid](*args, **compile_meta(meta))
    if key is None or compiled is None:
        return
    if hasattr(compiled, "result"):     # Triton 3.6's asynchronous compile: a future of the kernel
        compiled = compiled.result()
    if not _can_launch_directly(compiled):
        return
    if len(launches.launches) >= _DIRECT_LIMIT:
        launches.launches.clear()
    launches.launches[key] = DirectLaunch(compiled, launches.spec, args, meta)


def clear_direct_launches():
    """Forget every remembered compiled kernel (the next launch of each goes through kernel[grid])."""
    _DIRECT.clear()


# --------------------------------------------------------------------------- Triton's driver
def driver_class(base):
    """Triton's CUDA driver class ``base`` with tritensor's device and stream answers."""

    class TritensorCudaDriver(base):
        """Triton's driver, minus torch: device and stream come from tritensor."""

        def __init__(self, utils=None, launcher_cls=None):
            # base.__init__ is skipped: Triton 3.6's imports torch (GPUDriver), Triton >= 3.8's
            # binds the default-stream fallback over these methods. Only what the launch path
            # reads is set here.
            if utils is None or launcher_cls is None:
                from triton.backends.nvidia import driver as nvidia
                utils = nvidia.CudaUtils() if utils is None else utils
                launcher_cls = nvidia.CudaLauncher if launcher_cls is None else launcher_cls
            self.utils = utils
            self.launcher_cls = launcher_cls
            self.calls = 0        # stream queries answered (a launch asks once)

        @staticmethod
        def is_active():
            return True

        def get_current_device(self):
            return _device.current_device()

        def set_current_device(self, device):
            _device.set_device(device)

        def get_current_stream(self, device=None):
            self.calls += 1
            return _streams.current_stream_handle(_device.current_device() if device is None else device)

        def get_device_capability(self, device=None):
            props = _device.get_device_properties(_device.current_device() if device is None else device)
            return props.major, props.minor

        def get_active_torch_device(self):
            raise NotImplementedError("tritensor launches Triton without torch: there is no torch device")

    TritensorCudaDriver.__name__ = TritensorCudaDriver.__qualname__ = f"Tritensor{base.__name__}"
    return TritensorCudaDriver


def install_triton_driver(base=None, utils=None, launcher_cls=None):
    """Make Triton launch through tritensor's device and stream (see the module docstring).
    ``base``/``utils``/``launcher_cls`` default to Triton's NVIDIA ones (tests pass fakes)."""
    from triton.runtime import driver as triton_driver
    if base is None:
        from triton.backends.nvidia.driver import CudaDriver as base
    drv = driver_class(base)(utils, launcher_cls)
    triton_driver.set_active(drv)
    _init_specializer_without_torch()
    _state["driver"] = drv
    return drv


def _init_specializer_without_torch():
    """Triton's argument specializer (C++, ``native_specialize_impl``) imports torch, when it is
    installed, the first time it runs (to recognise torch.Tensor arguments quickly): on a machine
    with torch, the first compiled launch imported it (seen on the first H200 run, Triton 3.6).
    Run that one-time initialisation now with ``import torch`` failing, unless the program has
    imported torch itself; Triton then specializes any tensor-like argument (``data_ptr`` and
    ``dtype``) by its generic path, torch's included."""
    import sys
    if "torch" in sys.modules:
        return
    try:
        from triton._C.libtriton import native_specialize_impl
        from triton.backends.compiler import BaseBackend
    except ImportError:          # a Triton without the native specializer imports no torch there
        return
    sys.meta_path.insert(0, _NoTorchFinder)     # `import torch` fails while it is first
    try:
        native_specialize_impl(BaseBackend, 0, False, True, True)
    finally:
        sys.meta_path.remove(_NoTorchFinder)


class _NoTorchFinder:
    """An import finder that refuses torch (a ``sys.modules`` entry of None would do the same for
    Triton 3.6 but breaks Triton 3.9's specializer, which reads torch from ``sys.modules``)."""

    @staticmethod
    def find_spec(name, path=None, target=None):
        if name == "torch" or name.startswith("torch."):
            raise ModuleNotFoundError("No module named 'torch'", name=name)
        return None


def installed_driver():
    return _state["driver"]
