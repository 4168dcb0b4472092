"""The base of torch's small enumerations whose members are singletons: torch.layout and
torch.memory_format (tritensor/layouts.py, tritensor/memory_formats.py).

A member is compared by identity, cannot be created by calling the class (torch's TypeError),
has read-only attributes, prints as ``tritensor.<name>`` (the way dtypes print) and pickles by
its module-level name, so that unpickling gives back the very same object.
"""
from __future__ import annotations


class NamedSingleton:
    __slots__ = ("_name",)

    def __new__(cls, *args, **kwargs):
        raise TypeError(f"cannot create 'tritensor.{cls.__name__}' instances")

    @classmethod
    def _create(cls, name):
        obj = object.__new__(cls)
        object.__setattr__(obj, "_name", name)
        return obj

    def __setattr__(self, name, value):
        raise AttributeError(f"'tritensor.{type(self).__name__}' object attribute '{name}' is read-only")

    def __repr__(self):
        return f"tritensor.{self._name}"

    __str__ = __repr__

    def __reduce__(self):
        return self._name          # pickled as the module-level name: unpickles to the same object
