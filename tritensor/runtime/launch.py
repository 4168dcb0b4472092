"""The torch-free face a tensor shows to Triton's launcher and to its interpreter.

Triton types a pointer argument by ``data_ptr()`` and the last dotted part of ``str(dtype)``.
Its interpreter also stages arguments on the host through a few torch methods
(``untyped_storage().cpu()``, ``new_empty``, ``set_``, ``copy_`` ...). Our emulated device's memory
already is host memory, so those staging steps are no-ops that hand back the same pointer.
"""
from __future__ import annotations


class KernelArg:
    __slots__ = ("_ptr", "dtype")

    def __init__(self, ptr: int, dtype):
        self._ptr = ptr
        self.dtype = dtype

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
        return f"KernelArg(0x{self._ptr:x}, {self.dtype})"


def pointer(tensor, extra_elements: int = 0) -> KernelArg:
    """A kernel argument addressing ``tensor``'s first element (plus ``extra_elements``)."""
    ptr = tensor._storage.data_ptr() + (tensor._offset + extra_elements) * tensor.dtype.itemsize
    return KernelArg(ptr, tensor.dtype)
