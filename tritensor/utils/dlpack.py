"""tt.utils.dlpack, as torch.utils.dlpack: ``to_dlpack`` (a legacy "dltensor" capsule sharing a
tensor's memory, with no stream handshake), ``from_dlpack`` and ``DLDeviceType``. The protocol
itself (Tensor.__dlpack__, capsules both ways) lives in runtime/dlpack.py."""
from ..runtime.dlpack import DLDeviceType, from_dlpack, to_capsule

__all__ = ["DLDeviceType", "from_dlpack", "to_dlpack"]


def to_dlpack(tensor):
    """A "dltensor" capsule over ``tensor``'s memory, which it keeps alive until consumed."""
    return to_capsule(tensor)
