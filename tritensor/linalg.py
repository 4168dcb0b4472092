"""tt.linalg: torch.linalg's namespace.

The factorizations and solvers (ops/factorizations.py, ops/solvers.py): cholesky(_ex), inv(_ex),
det, slogdet, solve(_ex), solve_triangular, lu, lu_factor(_ex), lu_solve, ldl_factor(_ex),
ldl_solve, qr, householder_product, lstsq, tensorinv, tensorsolve, and LinAlgError (a
RuntimeError, raised for singular and non-positive-definite input as torch raises it).

The spectral half (ops/spectral.py, ops/norms.py, ops/matrix_functions.py): eigh, eigvalsh, svd,
svdvals, pinv, matrix_rank, vector_norm, matrix_norm, norm, cond, matrix_exp, matrix_power,
multi_dot, cross, vecdot, vander, diagonal.

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
    structured linalg kernels want it; ``out`` may name another rule of ops/surface.py's
    OUT_RULES, or be False for a function torch gives no out=)."""
    rule = "exact" if out is True else out
    wrapped = _with_out(f"linalg_{name}", fn, rule) if rule else fn
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

# the spectral half
from .ops import matrix_functions as _mf  # noqa: E402
from .ops import norms as _n  # noqa: E402
from .ops import spectral as _sp  # noqa: E402

eigh = _public("eigh", _sp.eigh)
eigvalsh = _public("eigvalsh", _sp.eigvalsh)
svd = _public("svd", _sp.svd)
svdvals = _public("svdvals", _sp.svdvals)
pinv = _public("pinv", _sp.pinv, out="cast")
matrix_rank = _public("matrix_rank", _sp.matrix_rank, out="cast")
vector_norm = _public("vector_norm", _n.vector_norm)
matrix_norm = _public("matrix_norm", _n.matrix_norm, out="linalg.matrix_norm")
norm = _public("norm", _n.linalg_norm, out="linalg.norm")
cond = _public("cond", _n.cond, out="cast")
matrix_exp = _public("matrix_exp", _mf.matrix_exp, out=False)
matrix_power = _public("matrix_power", _mf.matrix_power)
multi_dot = _public("multi_dot", _mf.multi_dot, out="multi_dot")
cross = _public("cross", _mf.linalg_cross)
vecdot = _public("vecdot", _mf.vecdot, out="linalg.vecdot")
vander = _public("vander", _mf.vander, out=False)
diagonal = _public("diagonal", _mf.diagonal, out=False)
