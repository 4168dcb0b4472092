"""torch.layout: how a tensor's elements are stored.

``strided``     dense memory with a stride per dim (every Tensor but a sparse one)
``sparse_coo``  COO sparse: an int64 indices tensor (sparse_dim x nnz) and a values tensor
                (tritensor/sparse/)

Each is a singleton (compared by identity, pickled by name), printed as ``tritensor.<name>`` the
way dtypes and memory formats are. (Named layouts, plural, so the exported class never hides a
module.)
"""
from __future__ import annotations


class layout:
    __slots__ = ("_name",)

    def __new__(cls, *args, **kwargs):
        raise TypeError("cannot create 'tritensor.layout' instances")

    @classmethod
    def _create(cls, name):
        obj = object.__new__(cls)
        object.__setattr__(obj, "_name", name)
        return obj

    def __setattr__(self, name, value):
        raise AttributeError(f"'tritensor.layout' object attribute '{name}' is read-only")

    def __repr__(self):
        return f"tritensor.{self._name}"

    __str__ = __repr__

    def __reduce__(self):
        return self._name          # pickled as the module-level name: unpickles to the same object


strided = layout._create("strided")
sparse_coo = layout._create("sparse_coo")
