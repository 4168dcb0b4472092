"""``import torch`` answered by tritensor: the one change the example programs get ("only the import
swapped"), made at import time instead of in their files.

``TorchIsTritensor`` is a meta-path finder: ``torch`` and ``torch.<x>`` import ``tritensor`` and
``tritensor.<x>``, ``torchvision`` and ``torchvision.<x>`` import ``tritensor.vision`` and
``tritensor.vision.<x>``; the module objects are tritensor's own, registered under torch's names. A
name tritensor does not have raises ModuleNotFoundError naming the tritensor module it looked for.
"""
import importlib
import importlib.abc
import importlib.util
import sys

ALIASES = (("torchvision", "tritensor.vision"), ("torch", "tritensor"))


def _target(name):
    for source, target in ALIASES:
        if name == source or name.startswith(source + "."):
            return target + name[len(source):]
    return None


class TorchIsTritensor(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, name, path=None, target=None):
        real = _target(name)
        if real is None:
            return None
        if importlib.util.find_spec(real) is None:
            raise ModuleNotFoundError(f"No module named {name!r} (tritensor has no {real!r})", name=name)
        return importlib.util.spec_from_loader(name, self, origin=real)

    def create_module(self, spec):
        return importlib.import_module(spec.origin)

    def exec_module(self, module):
        pass                        # tritensor's module, already executed


def install(monkeypatch):
    """The finder first on sys.meta_path for one test; the torch names leave sys.modules after."""
    monkeypatch.setattr(sys, "meta_path", [TorchIsTritensor()] + sys.meta_path)
    for name in [n for n in sys.modules if _target(n) is not None]:
        monkeypatch.delitem(sys.modules, name)
    return _forget_aliases


def _forget_aliases():
    for name in [n for n in sys.modules if _target(n) is not None]:
        del sys.modules[name]
