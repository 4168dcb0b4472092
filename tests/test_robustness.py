"""Issue 20 items 6-8: what bad arguments and careless assignments do. Each answer is torch's
(exception type and text word for word, recorded from torch 2.13), and none may crash the
interpreter, read outside a tensor's storage, or write into memory the caller made immutable."""
from __future__ import annotations

import re

import numpy as np
import pytest

import tritensor as tt
from conftest import to_numpy


def _exact(text):
    return "^" + re.escape(text) + "$"


# ============================================================================ item 6: read-only attributes
# torch: x.<name> = v and del x.<name> raise AttributeError for each of these
READ_ONLY = ["dtype", "device", "shape", "ndim", "is_leaf", "grad_fn", "is_cuda", "is_cpu", "itemsize",
             "nbytes", "T", "mT", "retains_grad", "_version", "is_sparse", "is_quantized", "is_meta"]


@pytest.mark.parametrize("name", READ_ONLY)
def test_torch_read_only_attributes_refuse_assignment_and_deletion(name):
    x = tt.ones(2, 3, requires_grad=True) * 1.0      # a non-leaf: grad_fn is set
    before = getattr(x, name)
    message = _exact(f"attribute '{name}' of 'torch._C.TensorBase' objects is not writable")
    with pytest.raises(AttributeError, match=message):
        setattr(x, name, before)
    with pytest.raises(AttributeError, match=message):
        delattr(x, name)
    assert name not in vars(x)


@pytest.mark.parametrize("device", ["cpu", "cuda"])
def test_a_refused_dtype_assignment_leaves_the_tensor_whole(device):
    """Before issue 20, ``x.dtype = float64`` relabelled 8 bytes of float32 as one float64 each:
    sum() read a stale view and the DLPack/cuda paths read past the end of the storage."""
    x = tt.arange(4, dtype=tt.float32, device=device)
    x.sum()                                          # the cpu backend caches its view of x
    with pytest.raises(AttributeError):
        x.dtype = tt.float64
    with pytest.raises(AttributeError):
        x.shape = (8,)
    assert x.dtype is tt.float32 and x.shape == (4,) and x.nbytes == 16 and x.itemsize == 4
    assert x.sum().item() == 6.0
    assert to_numpy(tt.from_dlpack(x)).tolist() == [0.0, 1.0, 2.0, 3.0]


def test_new_read_only_attributes_have_torchs_values():
    x = tt.zeros(2, 3, dtype=tt.float64)
    assert (x.itemsize, x.nbytes) == (8, 48)
    assert x[:, ::2].nbytes == 32 and x[0].expand(4, 3).nbytes == 96   # what the view shows
    assert not (x.is_sparse or x.is_quantized or x.is_meta)


@pytest.mark.parametrize("device", ["cpu", "cuda"])
def test_data_assignment_swaps_memory_and_geometry_together(device):
    """torch's set_data: the tensor takes the other's storage, shape, strides, offset and dtype
    at once (any dtype, any device), and keeps its autograd identity."""
    w = tt.zeros(2, requires_grad=True, device=device)
    w.sum()
    src = tt.arange(6, dtype=tt.float64, device=device).reshape(2, 3)
    w.data = src.t()
    assert w.dtype is tt.float64 and w.shape == (3, 2) and w.stride() == (1, 3)
    assert w.data_ptr() == src.data_ptr() and w.requires_grad and w.is_leaf
    assert w.sum().item() == 15.0 and w.nbytes == 48
    assert to_numpy(w.detach()).tolist() == [[0.0, 3.0], [1.0, 4.0], [2.0, 5.0]]
    (w * w).sum().backward()
    assert w.grad.dtype is tt.float64 and to_numpy(w.grad).tolist() == [[0.0, 6.0], [2.0, 8.0], [4.0, 10.0]]


def test_data_assignment_checks_as_torch():
    w = tt.zeros(2, requires_grad=True)
    with pytest.raises(TypeError, match=_exact("Variable data has to be a tensor, but got int")):
        w.data = 5
    with pytest.raises(RuntimeError, match=_exact(
            "data set to a tensor that requires gradients must be floating point or complex dtype")):
        w.data = tt.zeros(2, dtype=tt.int64)
    with pytest.raises(RuntimeError, match=_exact("Deleting tensor data is not allowed. Delete tensor instead!")):
        del w.data
    assert w.dtype is tt.float32 and w.shape == (2,)
    plain = tt.zeros(2)
    plain.data = tt.tensor([7, 8])          # no gradient wanted: an integer dtype is fine
    assert plain.dtype is tt.int64 and plain.tolist() == [7, 8]


def test_requires_grad_and_grad_attributes_as_torch():
    x = tt.zeros(2)
    for bad in (1, None, "yes"):
        with pytest.raises(RuntimeError, match=_exact("requires_grad must be a bool")):
            x.requires_grad = bad
    with pytest.raises(RuntimeError, match=_exact("requires_grad must be a bool")):
        del x.requires_grad
    with pytest.raises(TypeError, match=_exact(
            "requires_grad_(): argument 'requires_grad' (position 1) must be bool, not int")):
        x.requires_grad_(1)
    assert not x.requires_grad
    x.grad = tt.ones(2)
    del x.grad                              # torch: deleting .grad clears it
    assert x.grad is None
