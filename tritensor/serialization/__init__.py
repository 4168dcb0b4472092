"""tt.save / tt.load in PyTorch's own zip format, and tt.save_file / tt.load_file (safetensors).

The checkpoint format is exactly what ``torch.save`` writes (torch/serialization.py), so a file
written by PyTorch loads here without torch, and a file written here loads with
``torch.load(f, weights_only=True)``:

    archive/data.pkl                 the object, pickled (protocol 2) with persistent ids
                                     ('storage', torch.FloatStorage, key, location, numel)
    archive/.format_version          "1"
    archive/.storage_alignment       "64"
    archive/byteorder                "little"
    archive/data/<key>               each storage's raw bytes, once, aligned to 64 bytes
    archive/version                  "3"
    archive/.data/serialization_id   an id for this file

A tensor is pickled as ``torch._utils._rebuild_tensor_v2(storage, offset, size, stride,
requires_grad, OrderedDict())``; views of one storage name the same key, so they stay views of one
storage after loading. A Parameter is ``torch._utils._rebuild_parameter(tensor, requires_grad,
OrderedDict())``. dtypes are the globals ``torch.float32`` ..., devices ``torch.device(...)``.

Loading is safe for untrusted files by default (``weights_only=True``, as torch >= 2.6): the zip
reader checks every record against the real file (zipfile_reader.py) and the pickle is read by an
interpreter of its own that rebuilds only allowlisted objects and checks every tensor against its
storage (unpickler.py). The README's "Security" section states the promise and how it is tested.

    writer.py          tt.save (a pickler writing torch's names, the aligned zip records)
    loader.py          tt.load (version, byteorder, storages, map_location, mmap)
    zipfile_reader.py  the zip reader that trusts no size the archive states
    unpickler.py       the weights-only unpickler, its allowlist and the tensor checks; the user's
                       allowlist (add_safe_globals, safe_globals, get/clear_safe_globals: torch's API)
    safetensors_io.py  tt.save_file / tt.load_file
"""
from .loader import MappedStorage, load
from .safetensors_io import load_file, save_file
from .unpickler import add_safe_globals, clear_safe_globals, get_safe_globals, safe_globals
from .writer import DEFAULT_PROTOCOL, save

__all__ = ["save", "load", "save_file", "load_file", "add_safe_globals", "get_safe_globals", "clear_safe_globals",
           "safe_globals"]
