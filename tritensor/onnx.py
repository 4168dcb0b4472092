"""tt.onnx: importable as torch.onnx is (programs import it, or reach ``torch.onnx.export`` at the
end of a script), but tritensor has no ONNX exporter: exporting needs a traced graph of the
model's ops, which tritensor's eager ops do not record. ``export`` raises NotImplementedError."""
from __future__ import annotations


class OnnxExporterError(RuntimeError):
    """torch.onnx.OnnxExporterError."""


def export(model, args=(), f=None, **kwargs):
    raise NotImplementedError(
        "tritensor.onnx.export: tritensor has no ONNX exporter (it records no graph of a model's ops "
        "to translate); export the model with PyTorch instead")


def is_in_onnx_export() -> bool:
    """False: no export is ever running."""
    return False
