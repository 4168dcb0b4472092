"""The uint16/uint32/uint64 cases of unsigned_values.json, shared by record_unsigned.py (torch) and
tests/test_unsigned_dtypes.py (tritensor): torch-free.

Each case is an expression evaluated once per unsigned dtype over
  L   the library (torch or tritensor), d the dtype (L.uint16 ...), HI its largest value
  X   [HI, 1, HI//2 + 1, 0, 7] of dtype d (the top bit set in two of them: unsigned order,
      wrap-around), Y [3, HI, 2, 5, 7] of dtype d, S [1, 0, 3] of dtype d (small values)
  M   [[HI, 2, 3], [4, 0, 6]] of dtype d, B a bool mask of X's shape, I the int64 index [1, 0]
torch 2.13 gives these dtypes only some kernels: the cases cover creation, copies and casts,
views, joining, comparisons, bitwise ops, arithmetic, reductions, sorting and indexing, and every
torch error among them is part of the record (type and message).
"""

DTYPES = ("uint16", "uint32", "uint64")


def outcome(expr, namespace):
    """The JSON form of evaluating a case in ``namespace`` (L: torch or tritensor): a tensor's dtype
    name, shape, values and requires_grad; a dtype's name; a tuple of tensors; a plain value (a
    string with tritensor's module name written as torch's); or the error's type and first line."""
    L = namespace["L"]

    def encode(v):
        if isinstance(v, L.Tensor):
            return {"tensor": {"dtype": str(v.dtype).rsplit(".", 1)[-1], "shape": list(v.shape),
                               "values": v.tolist(), "requires_grad": v.requires_grad}}
        if isinstance(v, L.dtype):
            return {"dtype": str(v).rsplit(".", 1)[-1]}
        if isinstance(v, (tuple, list)) and any(isinstance(x, L.Tensor) for x in v):
            return {"tuple": [encode(x) for x in v]}
        if isinstance(v, str):
            return {"value": v.replace("tritensor.", "torch.")}
        return {"value": list(v) if isinstance(v, tuple) else v}

    try:
        return encode(eval(expr, namespace))
    except Exception as e:        # the error is part of the record
        return {"error": type(e).__name__, "message": str(e).splitlines()[0] if str(e) else ""}

SETUP = """
HI = L.iinfo(d).max
X = L.tensor([HI, 1, HI // 2 + 1, 0, 7], dtype=d)
Y = L.tensor([3, HI, 2, 5, 7], dtype=d)
S = L.tensor([1, 0, 3], dtype=d)
M = L.tensor([[HI, 2, 3], [4, 0, 6]], dtype=d)
B = L.tensor([True, False, True, True, False])
I = L.tensor([1, 0])
"""

CASES = {
    # ----------------------------------------------------------------- the dtype object and limits
    "is_signed": "d.is_signed",
    "itemsize": "d.itemsize",
    "is_floating_point": "d.is_floating_point",
    "iinfo": "(L.iinfo(d).min, L.iinfo(d).max, L.iinfo(d).bits)",
    "iinfo_repr": "repr(L.iinfo(d))",
    "finfo": "L.finfo(d)",
    "element_size": "X.element_size()",
    "tensor_is_signed": "X.is_signed()",
    "type_string": "X.type()",
    "type_convert": "X.type('torch.FloatTensor')",
    "type_by_string": "S.type('torch.UInt16Tensor')",
    "repr": "repr(M)",
    "repr_empty": "repr(L.zeros(0, dtype=d))",
    # ----------------------------------------------------------------- creation
    "empty": "L.empty(2, 3, dtype=d).dtype",
    "zeros": "L.zeros(2, 3, dtype=d)",
    "ones": "L.ones(3, dtype=d)",
    "full": "L.full((2,), 7, dtype=d)",
    "full_negative_wraps": "L.full((2,), -1, dtype=d)",
    "full_overflow": "L.full((2,), 2 ** 40, dtype=d)",
    "tensor_hi": "L.tensor([HI, 0, 5], dtype=d)",
    "tensor_negative": "L.tensor([-1, 3], dtype=d)",
    "tensor_too_big": "L.tensor([2 ** 64], dtype=d)",
    "tensor_float_values": "L.tensor([1.5, 2.0], dtype=d)",
    "arange": "L.arange(5, dtype=d)",
    "linspace": "L.linspace(0, 10, 5, dtype=d)",
    "eye": "L.eye(3, dtype=d)",
    "randperm": "L.randperm(4, dtype=d)",
    "randint": "L.randint(0, 10, (3,), dtype=d).dtype",
    "zeros_like": "L.zeros_like(X)",
    "ones_like": "L.ones_like(X)",
    "full_like": "L.full_like(X, 3)",
    "new_zeros": "X.new_zeros(2)",
    "new_tensor": "X.new_tensor([1, 2])",
    # ----------------------------------------------------------------- copies and casts
    "clone": "X.clone()",
    "contiguous": "M.t().contiguous()",
    "to_float64": "X.to(L.float64)",
    "to_float32": "S.float()",
    "to_int64": "X.to(L.int64)",
    "to_int8": "X.to(L.int8)",
    "to_bool": "X.to(L.bool)",
    "to_other_unsigned": "X.to(L.uint8)",
    "from_int64_wraps": "L.tensor([-1, 70000, 2 ** 40, 5]).to(d)",
    "from_float": "L.tensor([1.5, 2.0, 300.7, 0.0]).to(d)",
    "between_unsigned": "L.tensor([65535, 7], dtype=L.uint16).to(d)",
    "copy_from_int64": "L.empty(4, dtype=d).copy_(L.tensor([3, -1, 2, 5]))",
    "copy_into_float": "L.zeros(5, dtype=L.float64).copy_(X)",
    "fill_": "X.clone().fill_(5)",
    "fill_negative": "X.clone().fill_(-2)",
    "zero_": "X.clone().zero_()",
    "setitem": "(lambda t: (t.__setitem__(1, 9), t)[1])(X.clone())",
    "tolist": "X.tolist()",
    "item": "X[0].item()",
    "numpy_dtype": "str(X.numpy().dtype)",
    "requires_grad": "X.clone().requires_grad_()",
    # ----------------------------------------------------------------- views and joining
    "transpose": "M.t()",
    "view": "M.view(3, 2)",
    "reshape": "M.reshape(-1)",
    "select": "M[:, 1]",
    "slice": "X[1:4]",
    "expand": "X[:1].expand(3)",
    "flatten": "M.flatten()",
    "permute": "M.permute(1, 0)",
    "unbind": "M.unbind(0)[1]",
    "cat": "L.cat([X, Y])",
    "stack": "L.stack([X, Y])",
    "cat_mixed": "L.cat([X, Y.to(L.int64)])",
    "roll": "X.roll(1)",
    "repeat": "S.repeat(2)",
    "pad": "L.nn.functional.pad(S, (1, 1))",
    "flip": "X.flip(0)",
    "tril": "M.tril()",
    "diag_embed": "L.diag_embed(S)",
    # ----------------------------------------------------------------- indexing
    "index_tensor": "X[L.tensor([0, 2])]",
    "index_mask": "X[B]",
    "where": "L.where(B, X, Y)",
    "masked_fill": "X.masked_fill(B, 0)",
    "index_select": "X.index_select(0, I)",
    "gather": "X.gather(0, I)",
    "scatter": "X.scatter(0, I, Y)",
    "index_put": "X.clone().index_put_((I,), Y[:2])",
    "masked_select": "X.masked_select(B)",
    "nonzero": "X.nonzero()",
    # ----------------------------------------------------------------- comparisons
    "eq": "X == Y",
    "ne": "X != Y",
    "eq_scalar": "X == 7",
    "eq_hi": "X == HI",
    "eq_negative": "X == -1",
    "lt": "X < Y",
    "le": "X <= Y",
    "gt_scalar": "X > 3",
    "ge": "X >= Y",
    "lt_float_scalar": "X < 2.5",
    "equal": "L.equal(X, Y)",
    "equal_same": "L.equal(X, X.clone())",
    "isnan": "X.isnan()",
    "isfinite": "X.isfinite()",
    # ----------------------------------------------------------------- bitwise
    "and": "X & Y",
    "or": "X | Y",
    "xor": "X ^ Y",
    "and_scalar": "X & 6",
    "not": "~X",
    "lshift": "X << 1",
    "rshift": "X >> Y",
    # ----------------------------------------------------------------- arithmetic
    "add": "X + Y",
    "add_scalar": "X + 1",
    "sub": "X - Y",
    "mul_wraps": "X * Y",
    "mul_scalar": "X * 3",
    "mul_negative_scalar": "X * -1",
    "mul_float_scalar": "S * 2.5",
    "mul_zero_dim_int": "X * L.tensor(2)",
    "mul_int32_tensor": "X * Y.to(L.int32)",
    "mul_bool_zero_dim": "B * L.tensor(2, dtype=d)",
    "mul_float_tensor": "S * L.tensor([0.5, 1.5, 2.0])",
    "mul_": "X.clone().mul_(2)",
    "add_": "X.clone().add_(2)",
    "div": "S / L.tensor([2, 4, 3], dtype=d)",
    "div_scalar": "X / 2",
    "div_floor": "L.div(X, Y, rounding_mode='floor')",
    "div_trunc": "L.div(X, Y, rounding_mode='trunc')",
    "floor_divide": "X // Y",
    "remainder": "X % Y",
    "fmod": "L.fmod(X, Y)",
    "neg": "-X",
    "abs": "X.abs()",
    "sign": "X.sign()",
    "pow": "X ** 2",
    "square": "X.square()",
    "maximum": "L.maximum(X, Y)",
    "minimum": "L.minimum(X, Y)",
    "clamp": "X.clamp(1, 3)",
    "clamp_min": "X.clamp_min(1)",
    "sqrt": "S.sqrt()",
    "exp": "S.exp()",
    "floor": "X.floor()",
    "round": "X.round()",
    "nan_to_num": "X.nan_to_num()",
    "matmul": "M @ M.t()",
    "dot": "L.dot(X, Y)",
    "relu": "L.nn.functional.relu(X)",
    # ----------------------------------------------------------------- reductions and scans
    "sum": "X.sum()",
    "sum_dim": "M.sum(0)",
    "sum_as_unsigned": "X.sum(dtype=d)",
    "sum_as_float": "S.sum(dtype=L.float64)",
    "prod": "S.prod()",
    "prod_wraps": "X.prod()",
    "cumsum": "X.cumsum(0)",
    "cumprod": "S.cumprod(0)",
    "mean": "X.mean()",
    "mean_as_float": "S.mean(dtype=L.float64)",
    "max": "X.max()",
    "min": "X.min()",
    "max_dim": "X.max(0)",
    "amax": "X.amax()",
    "argmax": "X.argmax()",
    "any": "X.any()",
    "all": "X.all()",
    "any_dim": "M.any(1)",
    "count_nonzero": "X.count_nonzero()",
    "median": "X.median()",
    "topk": "X.topk(2)",
    "kthvalue": "X.kthvalue(2)",
    "cummax": "X.cummax(0)",
    "bincount": "S.bincount()",
    # ----------------------------------------------------------------- sorting
    "sort": "X.sort()",
    "sort_descending": "X.sort(descending=True)",
    "sort_rows": "M.sort(1)",
    "argsort": "X.argsort()",
    "unique": "L.cat([X, Y]).unique()",
    "unique_counts": "L.unique(L.cat([X, Y]), return_counts=True)",
    "msort": "X.msort()",
    # ----------------------------------------------------------------- composites and the rest
    "isclose": "L.isclose(X, Y)",
    "allclose": "L.allclose(X, X.clone())",
    "assert_close": "L.testing.assert_close(X, X.clone())",
    "assert_close_diff": "L.testing.assert_close(X, Y)",
    "xlogy": "L.xlogy(S, S)",
    "signbit": "X.signbit()",
    "repeat_interleave": "S.repeat_interleave(2)",
    "unique_consecutive": "L.unique_consecutive(L.cat([X, X]))",
    "logsumexp": "S.logsumexp(0)",
    "softmax_dtype": "S.softmax(0, dtype=L.float64)",
    "softmax": "S.softmax(0)",
    "embedding": "L.nn.functional.embedding(I, M)",
    "outer": "L.outer(S, S)",
    "diff": "S.diff()",
    "nansum": "X.nansum()",
    "rot90": "M.rot90()",
    "trace": "M.trace()",
    "triu": "M.triu()",
    "view_dtype": "X.view(L.int16 if d.itemsize == 2 else L.int32 if d.itemsize == 4 else L.int64)",
    "view_as_unsigned": "X.to(L.int64).view(L.uint64)",
    "lt_float_tensor": "S < L.tensor([0.5, 1.5, 2.5])",
    "add_float_tensor": "S + L.tensor([0.5, 1.5, 2.5])",
    "max_other": "L.max(X, Y)",
    "cumsum_dtype": "X.cumsum(0, dtype=L.float64)",
    "prod_dim": "M.prod(1)",
    "std": "S.std()",
    "argwhere": "X.argwhere()",
    "count_nonzero_dim": "M.count_nonzero(1)",
    "aminmax": "X.aminmax()",
    "select_scatter": "L.select_scatter(M, S, 0, 0)",
    "diagonal_scatter": "L.diagonal_scatter(M, S[:2])",
    "index_mask_set": "(lambda t: (t.__setitem__(B, 3), t)[1])(X.clone())",
    "index_tensor_set": "(lambda t: (t.__setitem__(I, 3), t)[1])(X.clone())",
    "take": "X.take(I)",
    "take_along_dim": "X.take_along_dim(I)",
    "hstack": "L.hstack([S, S])",
    "tolist_2d": "M.tolist()",
    "int_": "int(X[0])",
    "mul_out": "L.mul(X, Y, out=L.empty(5, dtype=d))",
    "mul_out_int64": "L.mul(X, Y, out=L.empty(5, dtype=L.int64))",
    "bitwise_and_bool": "X & B",
    "eq_bool": "X == B",
    "where_scalar": "L.where(B, X, 0)",
    "where_float": "L.where(B, X, 0.5)",
    "clamp_float": "S.clamp(0.5, 1.5)",
}

# cases also run on the emulated cuda device (the unsigned kernels: a few launches each)
CUDA_CASES = ("zeros", "full_negative_wraps", "tensor_hi", "contiguous", "to_float64", "to_int64", "from_int64_wraps",
              "from_float", "copy_from_int64", "fill_negative", "cat", "roll", "index_tensor", "where", "eq", "eq_hi",
              "lt_float_scalar", "and", "xor", "add", "mul_wraps", "mul_negative_scalar", "div_scalar", "sum",
              "prod_wraps", "cumsum", "any", "sort", "sort_descending", "argsort", "unique", "max", "isclose",
              "embedding", "count_nonzero_dim", "view_as_unsigned")
