"""Tensor contractions: einsum, tensordot, inner, chain_matmul.

All of them end in the matmul kernels (bmm / mm), reached through views: operands are
permuted and reshaped so that the dims summed over form the contracted dim of a batched matrix
product, which is then viewed back. That is ATen's own plan (Linear.cpp's einsum and
sumproduct_pair, tensordot; LinearAlgebra.cpp's multi_dot), followed step by step so that the
results, the autograd graph (ViewBackward0 over BmmBackward0 ...), the dtype rules (bmm wants
equal dtypes; a product with nothing to sum is a promoting mul) and the error messages are
torch's. Gradients follow from the composite's recorded ops.

einsum contracts its operands left to right, as torch does when opt_einsum is absent.
"""
from __future__ import annotations

from .._autocast import autocast_policy as _autocast_policy

import warnings

from .. import dtypes as _dt
from ..tensor import Tensor
from . import linalg as _linalg
from . import views as _views
from ._checks import check_tensor
from ._shapes import wrap_dim
from .elementwise import mul
from .matrix_functions import chain_product, matrix_chain_order
from .surface import _CPP_NAMES, declare

_LETTERS = 26
_TOTAL = 2 * _LETTERS
_ELLIPSIS = _TOTAL


def _subscript(label):
    """A label in [A-Za-z] as an index in [0, 52): upper case first, as ATen numbers them."""
    return ord(label) - ord("A") if label.isupper() else ord(label) - ord("a") + _LETTERS


def _label(index):
    return chr(index + ord("A")) if index < _LETTERS else chr(index - _LETTERS + ord("a"))


def _is_label(c):
    return ("a" <= c <= "z") or ("A" <= c <= "Z")


# --------------------------------------------------------------------------- einsum
@_autocast_policy("einsum")
def einsum(*args):
    """torch.einsum(equation, *operands) or einsum(op0, sublist0, op1, sublist1, ..., [sublist_out]).

    Subscripts are letters; "..." covers the dims no letter names (broadcast between
    operands); a letter repeated within an operand takes a diagonal; letters absent from the
    output are summed; without "->" the output is "..." followed by the letters used once, in
    alphabetical order (upper case first). Size-1 dims broadcast against any size."""
    if len(args) < 2:
        raise ValueError("einsum(): must specify the equation string and at least one operand, or at least one "
                         "operand and its subscripts list")
    if isinstance(args[0], Tensor):
        equation = ",".join("".join(_sublist_label(s) for s in sub) for sub in args[1::2])
        if len(args) % 2 == 1:
            equation += "->" + "".join(_sublist_label(s) for s in args[-1])
            operands = args[:-1:2]
        else:
            operands = args[::2]
    else:
        equation, operands = args[0], args[1:]
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])       # the old interface: the operands as one list
    if not isinstance(equation, str):
        raise TypeError(f"einsum(): argument 'equation' (position 1) must be str, not {type(equation).__name__}")
    for i, t in enumerate(operands):
        if not isinstance(t, Tensor):
            raise TypeError(f"einsum(): argument 'tensors' (position 2) must be tuple of Tensors, but found "
                            f"element of type {type(t).__name__} at pos {i}")
    return _einsum(equation, list(operands))


def _sublist_label(s):
    if s is Ellipsis:
        return "..."
    if isinstance(s, int) and 0 <= s < _LETTERS:
        return chr(ord("A") + s)
    if isinstance(s, int) and _LETTERS <= s < _TOTAL:
        return chr(ord("a") + s - _LETTERS)
    raise ValueError("einsum(): subscript in subscript list is not within the valid range [0, 52)")


def _parse_inputs(lhs, num_ops):
    """Each operand's labels (indices in [0, 52), or _ELLIPSIS), with ATen's checks."""
    op_labels = [[] for _ in range(num_ops)]
    ell_in_input = False
    curr = 0
    i = 0
    while i < len(lhs):
        c = lhs[i]
        if c == " ":
            pass
        elif c == ".":
            if ell_in_input:
                raise RuntimeError(f"einsum(): found '.' for operand {curr} for which an ellipsis was already found")
            if not (i + 2 < len(lhs) and lhs[i + 1] == "." and lhs[i + 2] == "."):
                raise RuntimeError(f"einsum(): found '.' for operand {curr} that is not part of any ellipsis")
            i += 2
            op_labels[curr].append(_ELLIPSIS)
            ell_in_input = True
        elif c == ",":
            curr += 1
            if curr >= num_ops:
                raise RuntimeError("einsum(): fewer operands were provided than specified in the equation")
            ell_in_input = False
        else:
            if not _is_label(c):
                raise RuntimeError(f"einsum(): invalid subscript given at index {i} in the equation string, "
                                   "subscripts must be in [a-zA-Z]")
            op_labels[curr].append(_subscript(c))
        i += 1
    if curr != num_ops - 1:
        raise RuntimeError("einsum(): more operands were provided than specified in the equation")
    return op_labels


def _einsum(equation, operands):
    if not operands:
        raise RuntimeError("einsum(): must provide at least one operand")
    num_ops = len(operands)
    arrow = equation.find("->")
    lhs = equation if arrow < 0 else equation[:arrow]
    op_labels = _parse_inputs(lhs, num_ops)

    label_count = [0] * _TOTAL
    ell_num_dim = 0
    for i, (operand, labels) in enumerate(zip(operands, op_labels)):
        ndims = operand.dim()
        nlabels = len(labels)
        has_ellipsis = False
        for s in labels:
            if s == _ELLIPSIS:
                nlabels -= 1
                has_ellipsis = True
                ell_num_dim = max(ell_num_dim, ndims - nlabels)
            else:
                label_count[s] += 1
        if not (nlabels <= ndims if has_ellipsis else nlabels == ndims):
            raise RuntimeError(
                f"einsum(): the number of subscripts in the equation ({nlabels})"
                + (" is more than the number of dimensions (" if has_ellipsis else
                   " does not match the number of dimensions (")
                + f"{ndims}) for operand {i}" + ("" if has_ellipsis else " and no ellipsis was given"))

    # every label's position in the aligned shape: the output dims first, then the summed ones
    perm_index_of = [-1] * _TOTAL
    perm_index = 0
    ell_index = 0
    ell_in_output = False
    if arrow < 0:
        perm_index = ell_num_dim
        ell_in_output = True
        for s in range(_TOTAL):
            if label_count[s] == 1:
                perm_index_of[s] = perm_index
                perm_index += 1
    else:
        rhs = equation[arrow + 2:]
        i = 0
        while i < len(rhs):
            c = rhs[i]
            if c == " ":
                pass
            elif c == ".":
                if ell_in_output:
                    raise RuntimeError("einsum(): found '.' for output but an ellipsis (...) was already found")
                if not (i + 2 < len(rhs) and rhs[i + 1] == "." and rhs[i + 2] == "."):
                    raise RuntimeError("einsum(): found '.' for output that is not part of any ellipsis (...)")
                i += 2
                ell_index = perm_index
                perm_index += ell_num_dim
                ell_in_output = True
            else:
                if not _is_label(c):
                    raise RuntimeError(f"einsum(): invalid subscript given at index {len(lhs) + 2 + i} in the "
                                       "equation string, subscripts must be in [a-zA-Z]")
                s = _subscript(c)
                if not (label_count[s] > 0 and perm_index_of[s] == -1):
                    why = ("appears more than once in the output" if perm_index_of[s] > -1 else
                           "does not appear in the equation for any input operand")
                    raise RuntimeError(f"einsum(): output subscript {c} {why}")
                perm_index_of[s] = perm_index
                perm_index += 1
            i += 1
    out_num_dim = perm_index
    if not ell_in_output:
        ell_index = perm_index
        perm_index += ell_num_dim
    for s in range(_TOTAL):
        if label_count[s] > 0 and perm_index_of[s] == -1:
            perm_index_of[s] = perm_index
            perm_index += 1

    # check sizes, take diagonals, unsqueeze missing dims and permute each operand into place
    label_size = [1] * _TOTAL
    ell_sizes = [1] * ell_num_dim
    dim_counts = [0] * perm_index
    ops = []
    for i, (operand, labels) in enumerate(zip(operands, op_labels)):
        x = operand
        permutation = [-1] * perm_index
        dim = 0
        for s in labels:
            if s == _ELLIPSIS:
                ndim = operand.dim() - (len(labels) - 1)
                for j in range(ell_num_dim - ndim, ell_num_dim):
                    size = x.shape[dim]
                    if size != 1:
                        if ell_sizes[j] != 1 and ell_sizes[j] != size:
                            raise RuntimeError(
                                f"einsum(): dimension {dim} covered by ellipsis in operand {i}has size {size} "
                                f"which does not broadcast with previously seen ellipsis with size {ell_sizes[j]} "
                                "for the respective dimension")
                        ell_sizes[j] = size
                        dim_counts[ell_index + j] += 1
                    permutation[ell_index + j] = dim
                    dim += 1
            elif permutation[perm_index_of[s]] == -1:
                size = x.shape[dim]
                if size != 1:
                    if label_size[s] != 1 and label_size[s] != size:
                        raise RuntimeError(f"einsum(): subscript {_label(s)} has size {size} for operand {i} which "
                                           f"does not broadcast with previously seen size {label_size[s]}")
                    label_size[s] = size
                    dim_counts[perm_index_of[s]] += 1
                permutation[perm_index_of[s]] = dim
                dim += 1
            else:       # a repeated label: its diagonal, moved to the first occurrence's place
                prev = permutation[perm_index_of[s]]
                if x.shape[dim] != x.shape[prev]:
                    raise RuntimeError(f"einsum(): subscript {_label(s)} is repeated for operand {i} but the sizes "
                                       f"don't match, {x.shape[dim]} != {x.shape[prev]}")
                x = _views.movedim(_views.diagonal(x, 0, prev, dim), -1, prev)
        for k, val in enumerate(permutation):
            if val == -1:
                x = _views.unsqueeze(x, dim)
                permutation[k] = dim
                dim += 1
        ops.append(_views.permute(x, tuple(permutation)))

    # contract left to right: each pair's shared summed dims go through bmm; a summed dim that
    # only one of them still has (and no later operand) is summed away first
    while len(ops) > 1:
        a, b = ops[0], ops[1]
        del ops[:2]
        sum_dims, a_sum, b_sum = [], [], []
        for d in range(out_num_dim, perm_index):
            if a.shape[d] != 1 and b.shape[d] != 1:
                dim_counts[d] -= 1
                if dim_counts[d] == 1:
                    sum_dims.append(d)
                    dim_counts[d] = 0
            elif dim_counts[d] == 1:
                if a.shape[d] != 1:
                    a_sum.append(d)
                    dim_counts[d] = 0
                elif b.shape[d] != 1:
                    b_sum.append(d)
                    dim_counts[d] = 0
        if a_sum:
            a = a.sum(tuple(a_sum), keepdim=True)
        if b_sum:
            b = b.sum(tuple(b_sum), keepdim=True)
        ops.insert(0, _sumproduct_pair(a, b, sum_dims))

    if perm_index - out_num_dim > 0:
        if num_ops > 1:      # the summed dims are all 1 now: view them away
            return _views.view(ops[0], tuple(ops[0].shape[:out_num_dim]))
        return ops[0].sum(tuple(range(out_num_dim, perm_index)))
    return ops[0]


def _sumproduct_pair(left, right, sum_dims):
    """(left * right).sum(sum_dims, keepdim=True) for aligned operands (same rank, size-1 dims
    broadcast): dims of both (lro), of left only (lo), of right only (ro) and summed ones are
    permuted and folded into one bmm [lro, lo, sum] @ [lro, sum, ro], viewed and permuted back."""
    if not sum_dims:
        return mul(left, right)
    ndim = left.dim()
    summed = set(sum_dims)
    lro, lo, ro = [], [], []
    lro_size = lo_size = ro_size = sum_size = 1
    for i in range(ndim):
        sl, sr = left.shape[i] != 1, right.shape[i] != 1
        if i in summed:
            if sl and sr:
                if left.shape[i] != right.shape[i]:
                    raise RuntimeError("non-broadcast dimensions must match")
                sum_size *= left.shape[i]
            elif sl:
                left = left.sum(i, keepdim=True)
            elif sr:
                right = right.sum(i, keepdim=True)
        elif sl and sr:
            if left.shape[i] != right.shape[i]:
                raise RuntimeError("non-broadcast dimensions must match")
            lro.append(i)
            lro_size *= left.shape[i]
        elif sl:
            lo.append(i)
            lo_size *= left.shape[i]
        else:
            ro.append(i)
            ro_size *= right.shape[i]
    out_size = ([left.shape[d] for d in lro] + [left.shape[d] for d in lo] + [1] * len(sum_dims)
                + [right.shape[d] for d in ro])
    lperm = lro + lo + list(sum_dims) + ro
    rperm = lro + list(sum_dims) + ro + lo
    operm = [0] * len(out_size)
    for pos, d in enumerate(lro + lo + list(sum_dims) + ro):
        operm[d] = pos
    left = _views.permute(left, tuple(lperm)).reshape(lro_size, lo_size, sum_size)
    right = _views.permute(right, tuple(rperm)).reshape(lro_size, sum_size, ro_size)
    result = _linalg.bmm(left, right)
    return _views.permute(_views.view(result, tuple(out_size)), tuple(operm))


# --------------------------------------------------------------------------- tensordot / inner
@_autocast_policy("tensordot")
def tensordot(a, b, dims=2):
    """torch.tensordot: sum over dims ``dims`` (a count of a's last / b's first dims, or two
    lists) of a and b; the other dims of a then of b remain. One mm over permuted, reshaped
    operands (ViewBackward0 on top); a size-1 contracted dim broadcasts (summed first)."""
    check_tensor("tensordot", a, "a")
    check_tensor("tensordot", b, "b", 2)
    if not isinstance(dims, (tuple, list, Tensor, int)):
        raise RuntimeError("tensordot expects dims to be int or tuple[list[int], list[int]] or list[list[int]] "
                           f"containing two lists, but got dims={dims}")
    if isinstance(dims, (tuple, list)):
        dims_a, dims_b = dims
    elif isinstance(dims, Tensor):
        if dims.numel() > 1:
            dims_a, dims_b = dims[0].tolist(), dims[1].tolist()
        else:
            n = int(dims.item())
            if n < 0:
                raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
            dims_a, dims_b = list(range(-n, 0)), list(range(n))
    else:
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        if dims > min(a.dim(), b.dim()):
            raise RuntimeError(f"tensordot expects dims < ndim_a or ndim_b, but got dims={dims}")
        dims_a, dims_b = list(range(-dims, 0)), list(range(dims))
    for d, name in ((dims_a, "dims_self"), (dims_b, "dims_other")):
        if not isinstance(d, (tuple, list)):
            raise TypeError(f"tensordot(): argument '{name}' (position {3 if name == 'dims_self' else 4}) must be "
                            f"tuple of ints, not {type(d).__name__}")
    return _tensordot(a, b, [int(d) for d in dims_a], [int(d) for d in dims_b])


def _bitset(dims, ndim):
    """ATen's dim_list_to_bitset: wrapped dims, each at most once."""
    seen = set()
    for d in dims:
        w = wrap_dim(d, ndim)
        if w in seen:
            raise RuntimeError(f"dim {w} appears multiple times in the list of dims")
        seen.add(w)
    return seen


def _tensordot(a, b, dims_a, dims_b):
    if len(dims_a) != len(dims_b):
        raise RuntimeError("both dimension lists should have same length")
    if a.dtype is not b.dtype:
        raise RuntimeError("both inputs should have same dtype")
    csize = 1
    t1, t2 = a, b
    for da, db in zip(dims_a, dims_b):
        s1, s2 = a.shape[wrap_dim(da, a.dim())], b.shape[wrap_dim(db, b.dim())]
        if s2 == 1:          # broadcast dims are summed right away
            t1 = t1.sum(da, keepdim=True, dtype=t1.dtype)    # torch keeps the dtype (sum would widen integers)
        elif s1 == 1:
            t2 = t2.sum(db, keepdim=True, dtype=t2.dtype)
        else:
            if s1 != s2:
                raise RuntimeError(f"contracted dimensions need to match, but first has size {s1} in dim {da} and "
                                   f"second has size {s2} in dim {db}")
            csize *= s1
    c1, c2 = _bitset(dims_a, a.dim()), _bitset(dims_b, b.dim())
    p1 = [i for i in range(a.dim()) if i not in c1] + dims_a
    p2 = dims_b + [i for i in range(b.dim()) if i not in c2]
    rsizes = [t1.shape[i] for i in range(a.dim()) if i not in c1] + [t2.shape[i] for i in range(b.dim()) if i not in c2]
    size1 = size2 = 1
    for i in range(a.dim()):
        if i not in c1:
            size1 *= t1.shape[i]
    for i in range(b.dim()):
        if i not in c2:
            size2 *= t2.shape[i]
    t1 = _views.permute(t1, tuple(p1)).reshape(size1, csize)
    t2 = _views.permute(t2, tuple(p2)).reshape(csize, size2)
    return _linalg.mm(t1, t2).reshape(tuple(rsizes))


def inner(input, other):
    """torch.inner: the sum over the last dims of the product (tensordot(input, other, ([-1],
    [-1]))); a 0-d operand simply multiplies."""
    check_tensor("inner", input)
    check_tensor("inner", other, "other", 2)
    if input.dim() == 0 or other.dim() == 0:
        return mul(input, other)
    if input.shape[-1] != other.shape[-1]:
        raise RuntimeError(f"inner() the last dimension must match on both input tensors but got shapes "
                           f"{list(input.shape)} and {list(other.shape)}")
    return _tensordot(input, other, [-1], [-1])


# --------------------------------------------------------------------------- chain_matmul
_chain_warned = []


@_autocast_policy("chain_matmul")
def chain_matmul(*matrices):
    """torch.chain_matmul (deprecated in torch, with its warning once): the product of 2-D
    matrices, multiplied in the order that costs the fewest multiply-adds (linalg.multi_dot's
    plan); one matrix is cloned."""
    if not _chain_warned:
        _chain_warned.append(True)
        warnings.warn("torch.chain_matmul is deprecated and will be removed in a future PyTorch release. Use "
                      "torch.linalg.multi_dot instead, which accepts a list of two or more tensors rather than "
                      "multiple parameters.", UserWarning, stacklevel=2)
    if len(matrices) == 1 and isinstance(matrices[0], (list, tuple)):
        matrices = tuple(matrices[0])
    for t in matrices:
        check_tensor("chain_matmul", t, "matrices")
        if t.dim() != 2:
            raise RuntimeError(f"Tensor dimension is {t.dim()}, expected 2 instead.")
    if not matrices:
        raise RuntimeError("chain_matmul(): Expected one or more matrices")
    if len(matrices) == 1:
        return matrices[0].clone()
    return multi_dot(matrices)


@_autocast_policy("linalg_multi_dot")
def multi_dot(tensors):
    """linalg.multi_dot's computation (the first tensor may be 1-D: a row; the last: a column):
    the chain multiplied in the cheapest order (two: one mm; three: the cheaper of two orders;
    more: the textbook matrix-chain dynamic programme), the result viewed to the output's shape."""
    n = len(tensors)
    if n < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {n}")
    out_shape = []
    mats = list(tensors)
    first, last = tensors[0], tensors[-1]
    if first.dim() == 1:
        mats[0] = first.unsqueeze(0)
    elif first.dim() == 2:
        out_shape.append(first.shape[0])
    else:
        raise RuntimeError(f"multi_dot(): the first tensor must be 1D or 2D but got {first.dim()}D")
    if last.dim() == 1:
        mats[-1] = last.unsqueeze(-1)
    elif last.dim() == 2:
        out_shape.append(last.shape[1])
    else:
        raise RuntimeError(f"multi_dot(): the last tensor must be 1D or 2D but got {last.dim()}D")
    for i in range(1, n - 1):
        if tensors[i].dim() != 2:
            raise RuntimeError(f"multi_dot(): tensor {i} must be 2D but got {tensors[i].dim()}D")
    for i in range(1, n):
        if mats[i].dtype is not mats[0].dtype:
            raise RuntimeError(f"multi_dot(): all tensors must have be the same dtype but tensor 0 is "
                               f"{_CPP_NAMES[mats[0].dtype.name]} and tensor {i} {_CPP_NAMES[mats[i].dtype.name]}")
        if mats[i].device != mats[0].device:
            raise RuntimeError(f"multi_dot(): all tensors must be on the same device but tensor 0 is on "
                               f"{mats[0].device} and tensor {i} on {mats[i].device}")
        if mats[i - 1].shape[-1] != mats[i].shape[0]:
            raise RuntimeError(f"multi_dot(): tensors {i - 1} and {i} with shapes {list(tensors[i - 1].shape)} and "
                               f"{list(tensors[i].shape)} cannot be multiplied")
    if n == 2:
        return _views.view(_linalg.mm(mats[0], mats[1]), tuple(out_shape))
    if n == 3:
        a, b = mats[0].shape[0], mats[1].shape[0]
        c, d = mats[2].shape[0], mats[2].shape[1]
        if (a * c) * (b + d) > (b * d) * (a + c):
            product = _linalg.mm(mats[0], _linalg.mm(mats[1], mats[2]))
        else:
            product = _linalg.mm(_linalg.mm(mats[0], mats[1]), mats[2])
        return _views.view(product, tuple(out_shape))
    order = matrix_chain_order([tuple(m.shape) for m in mats])
    return _views.view(chain_product(mats, order, 0, n - 1), tuple(out_shape))


# --------------------------------------------------------------------------- declarations
def _tensordot_out(name, result, out):
    if out.dtype is not result.dtype:
        raise RuntimeError(f"tensordot: Expected the output tensor to have dtype {_dt.type_name(result.dtype)}, "
                           f"but got an output tensor with dtype {_dt.type_name(out.dtype)}")


def _multi_dot_out(name, result, out):
    if out.dtype is not result.dtype:
        raise RuntimeError(f"multi_dot(): expected out tensor to have dtype {_CPP_NAMES[result.dtype.name]} but "
                           f"got {_CPP_NAMES[out.dtype.name]}")


declare("einsum", einsum, method=False)
declare("tensordot", tensordot, method=False, out=_tensordot_out)
declare("inner", inner, out=_tensordot_out)
declare("chain_matmul", chain_matmul, method=False, out=_multi_dot_out)
