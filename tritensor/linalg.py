"""tt.linalg: torch.linalg's namespace.

The factorizations and solvers (ops/factorizations.py, ops/solvers.py): cholesky(_ex), inv(_ex),
det, slogdet, solve(_ex), solve_triangular, lu, lu_factor(_ex), lu_solve, ldl_factor(_ex),
ldl_solve, qr, householder_product, lstsq, tensorinv, tensorsolve, and LinAlgError (a
RuntimeError, raised for singular and non-positive-definite input as torch raises it).

Every function here is a torch.linalg function of the same signature; those torch documents with
``out=`` have it (torch's out= protocol, ops/surface.py: the result's dtype exactly, a resize
with its warning, no autograd). Functions returning several tensors return torch.return_types'
named tuples (``tt.return_types.linalg_slogdet(sign, logabsdet)`` ...). Other modules extend
this namespace by adding their functions here.
"""
from __future__ import annotations

from .ops import factorizations as _f
from .ops import solvers as _s
from .ops._linalg import LinAlgError  # noqa: F401
from .ops.surface import with_out as _with_out


def _public(name, fn, out=True):
    """torch.linalg.<name>: ``fn`` with torch's keyword-only out= (exact dtype, as torch's
    structured linalg kernels want it)."""
    wrapped = _with_out(f"linalg_{name}", fn, "exact") if out else fn
    wrapped.__name__ = wrapped.__qualname__ = name
    wrapped.__module__ = __name__
    return wrapped


cholesky = _public("cholesky", _f.linalg_cholesky)
cholesky_ex = _public("cholesky_ex", _f.cholesky_ex)
lu = _public("lu", _f.lu)
lu_factor = _public("lu_factor", _f.lu_factor)
lu_factor_ex = _public("lu_factor_ex", _f.lu_factor_ex)
qr = _public("qr", _f.qr)
householder_product = _public("householder_product", _f.householder_product)
ldl_factor = _public("ldl_factor", _f.ldl_factor)
ldl_factor_ex = _public("ldl_factor_ex", _f.ldl_factor_ex)
solve_triangular = _public("solve_triangular", _f.solve_triangular)

inv = _public("inv", _s.inv)
inv_ex = _public("inv_ex", _s.inv_ex)
det = _public("det", _s.det)
slogdet = _public("slogdet", _s.slogdet)
solve = _public("solve", _s.solve)
solve_ex = _public("solve_ex", _s.solve_ex)
lu_solve = _public("lu_solve", _s.lu_solve)
ldl_solve = _public("ldl_solve", _s.ldl_solve)
lstsq = _public("lstsq", _s.lstsq, out=False)
tensorinv = _public("tensorinv", _s.tensorinv)
tensorsolve = _public("tensorsolve", _s.tensorsolve)
