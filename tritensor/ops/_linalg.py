"""What the factorization and solver modules share (ops/factorizations.py, ops/solvers.py):
torch's argument checks and error texts, torch.linalg.LinAlgError, the named tuples of
torch.return_types, and ``record_formula``: the autograd node of an op with several outputs.

Why a node of its own: a table entry has one output and one backward. torch's factorizations
return several tensors (L and info; P, L and U; Q and R; sign and logabsdet ...) that share ONE
node (``LinalgLuBackward0`` is the grad_fn of both L and U) whose backward receives one gradient
per output (None for the outputs nothing flowed into). ``record_formula`` makes that node for
outputs computed with no history (the primitives run under no_grad), with torch's node name and a
backward written in tritensor ops, so that create_graph differentiates it again.
"""
from __future__ import annotations

from .. import _dual
from ..autograd import forward_ad as _forward_ad
from .. import dtypes as _dt
from ..autograd import anomaly as _anomaly
from ..autograd.grad_mode import _state as _grad_state
from ..autograd.graph import Node, SavedTensor, _fit, gradient_edge, node_class
from ..backends.base import backend_for
from ..tensor import Tensor
from ._checks import not_tensor_error
from ._shapes import broadcast_shapes
from ._return_types import return_types, structseq


class LinAlgError(RuntimeError):
    """torch.linalg.LinAlgError: a factorization or solve failed on the values of its input (a
    singular matrix, a matrix that is not positive definite). A RuntimeError, as torch's."""


LinAlgError.__module__ = "tritensor.linalg"


# --------------------------------------------------------------------------- argument checks
def check_tensor(fname, value, arg, position):
    """torch's argument parser: ``linalg_inv(): argument 'A' (position 1) must be Tensor, not list``."""
    if not isinstance(value, Tensor):
        raise not_tensor_error(fname, value, arg, position)


def check_matrix(api, t, name="A"):
    """torch's checkIsMatrix: at least 2 dims."""
    if t.dim() < 2:
        raise RuntimeError(f"{api}: The input tensor {name} must have at least 2 dimensions.")


def check_square(api, t, name="A"):
    """torch's squareCheckInputs: batches of square matrices."""
    check_matrix(api, t, name)
    if t.shape[-1] != t.shape[-2]:
        raise RuntimeError(f"{api}: {name} must be batches of square matrices, but they are "
                           f"{t.shape[-2]} by {t.shape[-1]} matrices")


def check_floating(api, t, low_precision=True):
    """torch's checkFloatingOrComplex: integer and bool inputs are refused; ``low_precision``
    False refuses float16/bfloat16 too (inv, slogdet, logdet)."""
    if not t.dtype.is_floating_point:
        raise RuntimeError(f"{api}: Expected a floating point or complex tensor as input. Got "
                           f"{_dt.type_name(t.dtype)}")
    if not low_precision and t.dtype in (_dt.float16, _dt.bfloat16):
        raise RuntimeError(f"{api}: Low precision dtypes not supported. Got {_dt.type_name(t.dtype)}")


def check_kernel_dtype(t, cpu_name):
    """The dtypes torch's LAPACK / MAGMA kernels dispatch on: float32 and float64 (complex is not
    a tritensor dtype). Anything else is torch's dispatch NotImplementedError, named after the
    device's kernel (``"lu_cpu" not implemented for 'Half'``)."""
    if t.dtype not in (_dt.float32, _dt.float64):
        name = backend_for(t.device).torch_name(cpu_name, cpu_name[:-len("_cpu")] + "_cuda"
                                                if cpu_name.endswith("_cpu") else cpu_name)
        raise NotImplementedError(f'"{name}" not implemented for \'{_dt.type_name(t.dtype)}\'')


def check_same_dtype(api, a, b, a_name, b_name):
    """torch's linearSolveCheckInputs dtype text."""
    if a.dtype is not b.dtype:
        raise RuntimeError(f"{api}: Expected {a_name} and {b_name} to have the same dtype, but found "
                           f"{a_name} of type {_dt.type_name(a.dtype)} and {b_name} of type "
                           f"{_dt.type_name(b.dtype)} instead")


def check_same_device(a, b):
    if a.device != b.device:
        raise RuntimeError("Expected all tensors to be on the same device, but found at least two devices, "
                           f"{a.device} and {b.device}!")


def broadcast_batch(*shapes):
    """The broadcast of batch shapes, with torch's error for ones that do not broadcast."""
    return tuple(broadcast_shapes(*[tuple(s) for s in shapes]))


# --------------------------------------------------------------------------- errors from info
def _first_failure(info):
    """(flat batch index, code) of the first nonzero info, or None (one host sync, as torch's
    check synchronizes)."""
    values = info.detach().cpu()._host_view().reshape(-1)
    nonzero = values.nonzero()[0]
    if not len(nonzero):
        return None
    i = int(nonzero[0])
    return i, int(values[i])


def check_errors(info, api, kind, matrix_input):
    """torch's _linalg_check_errors: a LinAlgError (or RuntimeError) naming the first failing
    matrix ("(Batch element i)" when the input was a batch) in torch's words for ``kind``:
    "inv", "solve", "cholesky", "lu_factor", "ldl"."""
    if info.numel() == 0:
        return
    failure = _first_failure(info)
    if failure is None:
        return
    i, code = failure
    where = "" if matrix_input else f": (Batch element {i})"
    if kind == "inv":
        raise LinAlgError(f"{api}{where}: The diagonal element {code} is zero, the inversion could not be "
                          "completed because the input matrix is singular.")
    if kind == "solve":
        raise LinAlgError(f"{api}{where}: The solver failed because the input matrix is singular.")
    if kind == "cholesky":
        raise LinAlgError(f"{api}{where}: The factorization could not be completed because the input is not "
                          f"positive-definite (the leading minor of order {code} is not positive-definite).")
    if kind == "lu_factor":
        raise RuntimeError(f"{api}{where}: U[{code},{code}] is zero and using it on lu_solve would result in a "
                           "division by zero. If you still want to perform the factorization, consider calling "
                           "linalg.lu(A, pivot) or linalg.lu_factor_ex(A, pivot)")
    # torch 2.13 has no message for sytrf's code (an internal assert there): its text, as a RuntimeError
    raise RuntimeError(f"{api}: Unknown error code: {code}.")


# --------------------------------------------------------------------------- torch.return_types
def _return_type(name, fields):
    cls = structseq(name, tuple(fields))
    setattr(return_types, name, cls)      # tt.return_types.<name> (ops/_return_types.py's namespace)
    return cls


linalg_cholesky_ex = _return_type("linalg_cholesky_ex", ["L", "info"])
linalg_inv_ex = _return_type("linalg_inv_ex", ["inverse", "info"])
linalg_solve_ex = _return_type("linalg_solve_ex", ["result", "info"])
linalg_slogdet = _return_type("linalg_slogdet", ["sign", "logabsdet"])
slogdet = _return_type("slogdet", ["sign", "logabsdet"])
linalg_lu = _return_type("linalg_lu", ["P", "L", "U"])
lu_unpack = _return_type("lu_unpack", ["P", "L", "U"])
linalg_lu_factor = _return_type("linalg_lu_factor", ["LU", "pivots"])
linalg_lu_factor_ex = _return_type("linalg_lu_factor_ex", ["LU", "pivots", "info"])
lu_with_info = _return_type("_lu_with_info", ["LU", "pivots", "info"])
linalg_ldl_factor = _return_type("linalg_ldl_factor", ["LD", "pivots"])
linalg_ldl_factor_ex = _return_type("linalg_ldl_factor_ex", ["LD", "pivots", "info"])
linalg_qr = _return_type("linalg_qr", ["Q", "R"])
qr = _return_type("qr", ["Q", "R"])
geqrf = _return_type("geqrf", ["a", "tau"])
triangular_solve = _return_type("triangular_solve", ["solution", "cloned_coefficient"])
linalg_lstsq = _return_type("linalg_lstsq", ["solution", "residuals", "rank", "singular_values"])


# --------------------------------------------------------------------------- the multi-output node
class FormulaNode(Node):
    """The backward of one factorization call: ``backward(node, *grads)`` (one gradient per
    output, None where none arrived) returns one gradient per input, each brought to its
    input's shape and dtype as the engine wants (graph._fit). Saved tensors are read with
    ``node.saved(name)``; an output saved here unpacks attached to this node (double backward
    differentiates through it), as a table op's saved output does."""

    def __init__(self, backward, n_outputs, input_meta, needs_input_grad, attrs):
        super().__init__()
        self._backward = backward
        self._n_outputs = n_outputs
        self.input_meta = input_meta
        self.needs_input_grad = needs_input_grad
        self.attrs = attrs
        self._saved = {}

    def _num_outputs(self):
        return self._n_outputs

    def saved(self, name):
        st = self._saved[name]
        return None if st is None else st.unpack(self)

    def apply(self, grads):
        grads = tuple(grads) + (None,) * (self._n_outputs - len(grads))
        outs = self._backward(self, *grads)
        if not isinstance(outs, tuple):
            outs = (outs,)
        return tuple(_fit(g, meta, self, i) for i, (g, meta) in enumerate(zip(outs, self.input_meta)))

    def release_saved(self):
        for st in self._saved.values():
            if st is not None:
                st.release()


def record_formula(name, backward, inputs, outputs, save=None, *, frozen=(), **attrs):
    """Give ``outputs`` (computed with no history) the node ``name`` whose backward is
    ``backward(node, *grads)``, when grad mode is on and one of ``inputs`` requires grad.
    ``inputs``: the differentiable inputs in the order backward returns their gradients (None
    for a missing one); ``save``: name -> tensor (an output is saved as an output); ``attrs``
    are read as ``node.attrs[...]``. Integer outputs (pivots, info) and the positions in
    ``frozen`` (linalg.lu's P) get no history. Returns ``outputs``.
    While a forward-AD level is open the outputs also get their tangents, from this backward
    transposed (autograd/forward_ad.formula)."""
    if _dual.ACTIVE[0]:
        _forward_ad.formula(FormulaNode, backward, inputs, outputs, save, frozen, attrs)
    if not _grad_state.enabled:
        return outputs
    needs = tuple(isinstance(t, Tensor) and t.requires_grad for t in inputs)
    if True not in needs:
        return outputs
    meta = tuple((t._shape, t.dtype, t.device) if isinstance(t, Tensor) else None for t in inputs)
    node = node_class(name, FormulaNode)(backward, len(outputs), meta, needs, attrs)
    node.next_functions = tuple(gradient_edge(t) if isinstance(t, Tensor) else (None, 0) for t in inputs)
    out_ids = {}
    for i, o in enumerate(outputs):
        if isinstance(o, Tensor) and o.dtype.is_floating_point and i not in frozen:
            o._grad_fn = node
            o._output_nr = i
            out_ids[id(o)] = i
    for key, t in (save or {}).items():
        node._saved[key] = None if t is None else SavedTensor(t, is_output=id(t) in out_ids)
    if _anomaly._enabled:
        _anomaly.record_trace(node)
    return outputs


def needs_grad(*tensors):
    """Grad mode is on and one of ``tensors`` requires grad."""
    return _grad_state.enabled and any(isinstance(t, Tensor) and t.requires_grad for t in tensors)


def fresh(t):
    """``t`` as a tensor of its own (not a view), so that it can be given a node."""
    return t.clone() if t._base is not None else t
