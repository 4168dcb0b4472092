"""tests/examples/_swap.py, the import swap the pytorch/examples tests run programs under: ``torch``
and ``torchvision`` names import tritensor's modules, and leave sys.modules afterwards."""
import importlib.util
import os
import sys

import pytest

import tritensor as tt

_spec = importlib.util.spec_from_file_location("examples_swap", os.path.join(os.path.dirname(__file__), "examples",
                                                                            "_swap.py"))
_swap = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_swap)


def test_torch_names_import_tritensor_modules_and_leave_after(monkeypatch):
    real_torch = sys.modules.get("torch")
    forget = _swap.install(monkeypatch)
    import torch
    import torch.nn.functional as F
    from torch.optim.lr_scheduler import StepLR
    from torchvision import transforms
    assert torch is tt and F is tt.nn.functional and StepLR is tt.optim.lr_scheduler.StepLR
    assert transforms is tt.vision.transforms and tt.__name__ == "tritensor"
    with pytest.raises(ModuleNotFoundError, match="tritensor has no 'tritensor.no_such_module'"):
        import torch.no_such_module  # noqa: F401
    forget()
    monkeypatch.undo()
    assert sys.modules.get("torch") is real_torch and "torch.nn.functional" not in sys.modules
