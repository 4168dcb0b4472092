"""The torch-free launch layer: what a kernel launch hands to Triton.

Two things live here.

``KernelArg`` is the face a tensor shows to Triton's launcher and to its interpreter. Triton types
a pointer argument by ``data_ptr()`` and the last dotted part of ``str(dtype)``. Its interpreter
also stages arguments on the host through a few torch methods (``untyped_storage().cpu()``,
``new_empty``, ``set_``, ``copy_`` ...). Our emulated device's memory already is host memory, so
those staging steps are no-ops that hand back the same pointer. A KernelArg also remembers the
index of the device its memory lives on, so a launch knows where to run.

``launch_kernel`` is the one place every kernel launch goes through (backends/triton.py's
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

``CUDA_LAUNCH_BLOCKING=1`` (read at the first launch) makes each launch synchronous: the host
waits for the launch's stream before going on, so an error surfaces at the op that caused it.
"""
from __future__ import annotations

import os

import numpy as np

from . import device as _device
from . import streams as _streams


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
_state = {"mode": None, "blocking": False, "driver": None}


def launch_blocking() -> bool:
    """CUDA_LAUNCH_BLOCKING=1: every launch waits for its stream (read once)."""
    return _device._env_true("CUDA_LAUNCH_BLOCKING")


def _first_launch():
    """Decide interpreted or compiled once; install the driver hook for compiled launches."""
    interpreted = os.environ.get("TRITON_INTERPRET") == "1"
    _state["blocking"] = launch_blocking()
    if not interpreted and _state["driver"] is None:
        install_triton_driver()
    _state["mode"] = "interpreted" if interpreted else "compiled"


def launch_kernel(kernel, grid, *args, **meta):
    """``kernel[grid](*args, **meta)`` on the current stream of the arguments' device."""
    mode = _state["mode"]
    if mode is None:
        _first_launch()
        mode = _state["mode"]
    if mode == "interpreted":
        # The interpreter computes with NumPy: inf/nan arithmetic is expected, not worth a warning.
        # It runs the launch to completion now: the stream's work is done when this returns.
        with np.errstate(all="ignore"):
            kernel[grid](*args, **meta)
        return
    index = None
    for a in args:
        if type(a) is KernelArg:
            index = a.device_index
            break
    current = _device.current_device()
    if index is None or index == current:
        kernel[grid](*args, **meta)
        index = current
    else:
        # torch's device guard: the op runs on its tensors' device, then the current one is back
        _device.exchange_device(index)
        try:
            kernel[grid](*args, **meta)
        finally:
            _device.exchange_device(current)
    if _state["blocking"]:
        _streams.current_stream(index).synchronize()


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
    _state["driver"] = drv
    return drv


def installed_driver():
    return _state["driver"]
