"""out= on the functions torch documents it for (issue 16 item 5): the result is written into out's
memory, with torch's dtype, device, resize and autograd rules (texts from torch 2.13)."""
from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import tritensor as tt
from tritensor.ops.surface import SURFACE

RESIZE_WARNING = (r"An output with one or more elements was resized since it had shape \[2\], which does not "
                  r"match the required output shape \[3\]\. This behavior is deprecated, and in a future "
                  r"PyTorch release outputs will not be resized unless they have zero elements\. You can "
                  r"explicitly reuse an out tensor t by resizing it, inplace, to zero elements with t\.resize_\(0\)\.")


def _vals(t):
    return np.asarray(t.tolist(), dtype=np.float64)


# --------------------------------------------------------------------------- the protocol
def test_out_is_written_in_place_and_returned():
    a, b = tt.tensor([1.0, 2.0, 3.0]), tt.tensor([10.0, 20.0, 30.0])
    base = tt.zeros(2, 3)
    out = base[1]                                   # a view: its base sees the write
    version = out._version
    r = tt.add(a, b, out=out)
    assert r is out
    assert base.tolist() == [[0.0, 0.0, 0.0], [11.0, 22.0, 33.0]]
    assert out._version > version


def test_out_of_a_wider_dtype_gets_the_cast_result():
    out = tt.empty(2, dtype=tt.float64)
    tt.mul(tt.tensor([1.5, 2.0]), 2, out=out)
    assert out.dtype is tt.float64 and out.tolist() == [3.0, 4.0]


def test_result_that_cannot_be_cast_is_refused():
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired output type Long"):
        tt.add(tt.ones(3), tt.ones(3), out=tt.empty(3, dtype=tt.long))
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired output type Long"):
        tt.exp(tt.ones(3), out=tt.empty(3, dtype=tt.long))


def test_out_of_another_shape_is_resized_with_torchs_warning():
    out = tt.empty(2)
    with pytest.warns(UserWarning, match=RESIZE_WARNING):
        tt.add(tt.ones(3), 1, out=out)
    assert out.shape == (3,) and out.tolist() == [2.0, 2.0, 2.0]


def test_empty_out_is_resized_silently():
    out = tt.empty(0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        tt.sin(tt.zeros(2, 2), out=out)
    assert out.shape == (2, 2) and out.tolist() == [[0.0, 0.0], [0.0, 0.0]]


def test_out_does_not_support_autograd():
    msg = (r"add\(\): functions with out=\.\.\. arguments don't support automatic differentiation, but one "
           r"of the arguments requires grad\.")
    with pytest.raises(RuntimeError, match=msg):
        tt.add(tt.ones(3), 1, out=tt.empty(3, requires_grad=True))
    x = tt.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError, match=msg):
        tt.add(x, 1, out=tt.empty(3))
    with tt.no_grad():                              # not recorded: allowed
        assert tt.add(x, 1, out=tt.empty(3)).tolist() == [2.0, 2.0, 2.0]
    # a result that cannot require grad (argmax) is fine with a grad-requiring input
    assert tt.argmax(x, out=tt.empty((), dtype=tt.long)).item() == 0


def test_out_on_another_device_is_refused():
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device, but found at least two "
                                           "devices, cpu and cuda:0!"):
        tt.add(tt.ones(2), 1, out=tt.empty(2, device="cuda"))


def test_out_on_cuda():
    a = tt.tensor([1.0, 4.0], device="cuda")
    out = tt.empty(2, device="cuda")
    assert tt.sqrt(a, out=out) is out and out.tolist() == [1.0, 2.0]


# --------------------------------------------------------------------------- pointwise
def test_binary_arithmetic_out():
    a, b = tt.tensor([7.0, -7.0, 2.0]), tt.tensor([2.0, 2.0, 4.0])
    out = tt.empty(3)
    assert tt.add(a, b, alpha=2, out=out).tolist() == [11.0, -3.0, 10.0]
    assert tt.sub(a, b, alpha=2, out=out).tolist() == [3.0, -11.0, -6.0]
    assert tt.subtract(a, b, out=out).tolist() == [5.0, -9.0, -2.0]
    assert tt.mul(a, b, out=out).tolist() == [14.0, -14.0, 8.0]
    assert tt.div(a, b, out=out).tolist() == [3.5, -3.5, 0.5]
    assert tt.div(a, b, rounding_mode="floor", out=out).tolist() == [3.0, -4.0, 0.0]
    assert tt.div(a, b, rounding_mode="trunc", out=out).tolist() == [3.0, -3.0, 0.0]
    assert tt.pow(b, 2, out=out).tolist() == [4.0, 4.0, 16.0]
    assert tt.maximum(a, b, out=out).tolist() == [7.0, 2.0, 4.0]
    assert tt.minimum(a, b, out=out).tolist() == [2.0, -7.0, 2.0]
    assert tt.remainder(a, b, out=out).tolist() == [1.0, 1.0, 2.0]
    assert tt.fmod(a, b, out=out).tolist() == [1.0, -1.0, 2.0]
    assert tt.floor_divide(a, b, out=out).tolist() == [3.0, -4.0, 0.0]
    iout = tt.empty(3, dtype=tt.long)
    assert tt.add(tt.tensor([1, 2, 3]), 1, out=iout).tolist() == [2, 3, 4]


UNARY_OUT = sorted(n for n, d in SURFACE.items()
                   if d.out == "cast" and d.function is not None
                   and getattr(d.function, "_out_builtin", False))


# the generated unary ops that take one more (non-tensor) argument
_EXTRA_ARGS = {"mvlgamma": (1,), "special.multigammaln": (2,)}


def _public(name):
    fn = tt
    for part in name.split("."):        # tt.special.i0 is declared as "special.i0"
        fn = getattr(fn, part)
    return fn


@pytest.mark.parametrize("name", UNARY_OUT)
def test_every_generated_unary_op_takes_out(name):
    x = tt.tensor([1.25, 1.5, 1.75]) if name not in ("logical_not", "bitwise_not") else tt.tensor([True, False, True])
    fn = _public(name)
    extra = _EXTRA_ARGS.get(name, ())
    expected = fn(x, *extra)
    out = tt.empty(3, dtype=expected.dtype)
    assert fn(x, *extra, out=out) is out
    assert np.array_equal(_vals(out), _vals(expected), equal_nan=True)


def test_neg_abs_round_out():
    x = tt.tensor([-1.5, 2.25])
    out = tt.empty(2)
    assert tt.neg(x, out=out).tolist() == [1.5, -2.25]
    assert tt.negative(x, out=out).tolist() == [1.5, -2.25]
    assert tt.abs(x, out=out).tolist() == [1.5, 2.25]
    assert tt.absolute(x, out=out).tolist() == [1.5, 2.25]
    assert tt.round(x, out=out).tolist() == [-2.0, 2.0]            # half to even
    assert tt.round(tt.tensor([1.25]), decimals=1, out=tt.empty(1)).tolist() == [1.2000000476837158]


def test_clamp_and_where_out():
    x = tt.tensor([-2.0, 0.5, 3.0])
    out = tt.empty(3)
    assert tt.clamp(x, -1, 1, out=out).tolist() == [-1.0, 0.5, 1.0]
    assert tt.clip(x, min=0, out=out).tolist() == [0.0, 0.5, 3.0]
    with pytest.raises(RuntimeError, match="Found dtype Double but expected Float"):
        tt.clamp(x, 0, out=tt.empty(3, dtype=tt.float64))
    assert tt.where(x > 0, x, 0.0, out=out).tolist() == [0.0, 0.5, 3.0]
    with pytest.raises(RuntimeError, match="Expected out type to be Float but got Double"):
        tt.where(x > 0, x, x, out=tt.empty(3, dtype=tt.float64))


def test_comparison_logical_bitwise_out():
    a, b = tt.tensor([1, 2, 3]), tt.tensor([3, 2, 1])
    bout = tt.empty(3, dtype=tt.bool)
    assert tt.lt(a, b, out=bout).tolist() == [True, False, False]
    fout = tt.empty(3)                                      # bool casts into float
    assert tt.eq(a, b, out=fout).tolist() == [0.0, 1.0, 0.0]
    for name, expected in (("ne", [True, False, True]), ("le", [True, True, False]),
                           ("gt", [False, False, True]), ("ge", [False, True, True])):
        assert getattr(tt, name)(a, b, out=bout).tolist() == expected
    p, q = tt.tensor([True, True, False]), tt.tensor([True, False, False])
    assert tt.logical_and(p, q, out=bout).tolist() == [True, False, False]
    assert tt.logical_or(p, q, out=bout).tolist() == [True, True, False]
    assert tt.logical_xor(p, q, out=bout).tolist() == [False, True, False]
    iout = tt.empty(3, dtype=tt.long)
    assert tt.bitwise_and(a, b, out=iout).tolist() == [1, 2, 1]
    assert tt.bitwise_or(a, b, out=iout).tolist() == [3, 2, 3]
    assert tt.bitwise_xor(a, b, out=iout).tolist() == [2, 0, 2]
    assert tt.bitwise_not(a, out=iout).tolist() == [-2, -3, -4]


# --------------------------------------------------------------------------- reductions
def test_sum_prod_cumsum_compute_in_outs_dtype():
    x = tt.tensor([0.5, 0.5, 1.7])
    assert tt.sum(x, 0, out=tt.empty((), dtype=tt.long)).item() == 1      # 0 + 0 + 1, as torch
    assert tt.prod(x, 0, out=tt.empty((), dtype=tt.long)).item() == 0
    assert tt.cumsum(x, 0, out=tt.empty(3, dtype=tt.long)).tolist() == [0, 0, 1]
    assert tt.cumprod(tt.tensor([1.0, 2.0, 3.0]), 0, out=tt.empty(3)).tolist() == [1.0, 2.0, 6.0]
    out = tt.empty(2, dtype=tt.float64)
    assert tt.sum(tt.tensor([[1.0, 2.0], [3.0, 4.0]]), 1, out=out).tolist() == [3.0, 7.0]


def test_mean_std_var_logsumexp_out():
    m = tt.tensor([[1.0, 2.0, 3.0], [2.0, 4.0, 9.0]])
    out = tt.empty(2)
    assert tt.mean(m, 1, out=out).tolist() == [2.0, 5.0]
    assert np.allclose(_vals(tt.var(m, 1, out=out)), [1.0, 13.0])
    assert np.allclose(_vals(tt.std(m, 1, out=out)), [1.0, math.sqrt(13.0)])
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired output type Long"):
        tt.mean(m, 1, out=tt.empty(2, dtype=tt.long))
    expected = np.log(np.exp(np.array([[1, 2, 3], [2, 4, 9]], dtype=np.float64)).sum(1))
    assert np.allclose(_vals(tt.logsumexp(m, 1, out=tt.empty(2, dtype=tt.float64))), expected)
    with pytest.raises(RuntimeError, match=r"logsumexp\(\): Expected floating point type for result tensor, "
                                           r"but got: Long"):
        tt.logsumexp(m, 1, out=tt.empty(2, dtype=tt.long))
    assert np.allclose(_vals(tt.norm(m, 2, 1, out=out)), [math.sqrt(14.0), math.sqrt(101.0)])
    with pytest.raises(RuntimeError, match="Expected out tensor to have dtype float, but got double instead"):
        tt.norm(m, 2, 1, out=tt.empty(2, dtype=tt.float64))


def test_amax_max_argmax_out():
    m = tt.tensor([[1.0, 5.0, 3.0], [7.0, 2.0, 0.0]])
    out = tt.empty(2)
    assert tt.amax(m, 1, out=out).tolist() == [5.0, 7.0]
    assert tt.amin(m, 1, out=out).tolist() == [1.0, 0.0]
    with pytest.raises(RuntimeError, match="Expected the dtype for input and out to match, but got Float for "
                                           "input's dtype and Double for out's dtype."):
        tt.amax(m, 1, out=tt.empty(2, dtype=tt.float64))
    values, indices = tt.empty(2), tt.empty(2, dtype=tt.long)
    r = tt.max(m, 1, out=(values, indices))
    assert r.values is values and r.indices is indices
    assert values.tolist() == [5.0, 7.0] and indices.tolist() == [1, 0]
    values, indices = tt.empty(0), tt.empty(0, dtype=tt.long)
    r = tt.min(m, 1, keepdim=True, out=(values, indices))
    assert values.shape == (2, 1) and values.tolist() == [[1.0], [0.0]] and indices.tolist() == [[0], [2]]
    with pytest.raises(RuntimeError, match="Expected out tensor to have dtype long int, but got int instead"):
        tt.max(m, 1, out=(tt.empty(2), tt.empty(2, dtype=tt.int32)))
    with pytest.raises(RuntimeError, match="Expected out tensor to have dtype float, but got double instead"):
        tt.max(m, 1, out=(tt.empty(2, dtype=tt.float64), tt.empty(2, dtype=tt.long)))
    assert tt.max(m, out=tt.empty((), dtype=tt.float64)).item() == 7.0            # no dim: cast
    assert tt.max(m, tt.zeros(2, 3), out=tt.empty(2, 3, dtype=tt.float64)).tolist()[1] == [7.0, 2.0, 0.0]
    iout = tt.empty(2, dtype=tt.long)
    assert tt.argmax(m, 1, out=iout).tolist() == [1, 0]
    assert tt.argmin(m, 1, out=iout).tolist() == [0, 2]
    with pytest.raises(RuntimeError, match="Expected out tensor to have dtype long int, but got int instead"):
        tt.argmax(m, 1, out=tt.empty(2, dtype=tt.int32))


def test_all_any_out():
    m = tt.tensor([[True, False], [True, True]])
    out = tt.empty(2, dtype=tt.bool)
    assert tt.all(m, 1, out=out).tolist() == [False, True]
    assert tt.any(m, 0, out=tt.empty(2, dtype=tt.uint8)).tolist() == [1, 1]
    with pytest.raises(RuntimeError, match="all only supports bool tensor for result, got: Double"):
        tt.all(m, 1, out=tt.empty(2, dtype=tt.float64))


# --------------------------------------------------------------------------- matrix products
def test_matmul_family_out():
    a = tt.tensor([[1.0, 2.0], [3.0, 4.0]])
    v = tt.tensor([1.0, -1.0])
    out = tt.empty(2, 2)
    assert tt.matmul(a, a, out=out).tolist() == [[7.0, 10.0], [15.0, 22.0]]
    assert tt.mm(a, a, out=out).tolist() == [[7.0, 10.0], [15.0, 22.0]]
    assert tt.addmm(a, a, a, beta=2, out=out).tolist() == [[9.0, 14.0], [21.0, 30.0]]
    assert tt.outer(v, v, out=out).tolist() == [[1.0, -1.0], [-1.0, 1.0]]
    bout = tt.empty(1, 2, 2)
    assert tt.bmm(a[None], a[None], out=bout).tolist() == [[[7.0, 10.0], [15.0, 22.0]]]
    assert tt.mv(a, v, out=tt.empty(2)).tolist() == [-1.0, -1.0]
    assert tt.dot(v, v, out=tt.empty(())).item() == 2.0
    for fn, args in ((tt.mm, (a, a)), (tt.matmul, (a, a)), (tt.addmm, (a, a, a))):
        with pytest.raises(RuntimeError, match="Expected out tensor to have dtype float, but got double instead"):
            fn(*args, out=tt.empty(2, 2, dtype=tt.float64))
    with pytest.raises(RuntimeError, match="result dtype Double does not match input dtype Float"):
        tt.dot(v, v, out=tt.empty((), dtype=tt.float64))
    with pytest.raises(RuntimeError, match="addmv input tensors must have the same dtype, but got Double, Float, "
                                           "and Float"):
        tt.mv(a, v, out=tt.empty(2, dtype=tt.float64))


def test_baddbmm_tril_triu_out():
    a = tt.tensor([[[1.0, 2.0], [3.0, 4.0]]])
    out = tt.empty(1, 2, 2)
    assert tt.baddbmm(a, a, a, alpha=2, out=out).tolist() == [[[15.0, 22.0], [33.0, 48.0]]]
    m = a[0]
    out = tt.empty(2, 2)
    assert tt.tril(m, out=out).tolist() == [[1.0, 0.0], [3.0, 4.0]]
    assert tt.triu(m, 1, out=out).tolist() == [[0.0, 2.0], [0.0, 0.0]]


# --------------------------------------------------------------------------- joining, indexing
def test_cat_stack_out():
    a, b = tt.tensor([[1.0, 2.0]]), tt.tensor([[3.0, 4.0]])
    out = tt.empty(0)
    assert tt.cat([a, b], out=out) is out and out.tolist() == [[1.0, 2.0], [3.0, 4.0]]
    assert tt.stack([a, b], 0, out=tt.empty(2, 1, 2, dtype=tt.float64)).tolist() == [[[1.0, 2.0]], [[3.0, 4.0]]]
    assert tt.hstack([a, b], out=tt.empty(1, 4)).tolist() == [[1.0, 2.0, 3.0, 4.0]]
    assert tt.vstack([a, b], out=tt.empty(2, 2)).tolist() == [[1.0, 2.0], [3.0, 4.0]]
    assert tt.concat([a, b], 1, out=tt.empty(1, 4)).tolist() == [[1.0, 2.0, 3.0, 4.0]]
    with pytest.raises(TypeError, match="torch.cat\\(\\): input types can't be cast to the desired output type Long"):
        tt.cat([a, b], out=tt.empty(2, 2, dtype=tt.long))


def test_index_select_gather_masked_select_out():
    m = tt.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    out = tt.empty(2, 1)
    assert tt.index_select(m, 1, tt.tensor([2]), out=out).tolist() == [[3.0], [6.0]]
    assert tt.gather(m, 1, tt.tensor([[0], [1]]), out=out).tolist() == [[1.0], [5.0]]
    sel = tt.empty(0)
    assert tt.masked_select(m, m > 3, out=sel).tolist() == [4.0, 5.0, 6.0]
    with pytest.raises(RuntimeError, match=r"index_select\(\): self and result must have the same scalar type"):
        tt.index_select(m, 1, tt.tensor([0]), out=tt.empty(2, 1, dtype=tt.float64))
    with pytest.raises(RuntimeError, match=r"masked_select\(\): self and result must have the same scalar type"):
        tt.masked_select(m, m > 3, out=tt.empty(3, dtype=tt.float64))
    with pytest.raises(RuntimeError, match="Expected out tensor to have dtype float, but got double instead"):
        tt.gather(m, 1, tt.tensor([[0], [1]]), out=tt.empty(2, 1, dtype=tt.float64))


# --------------------------------------------------------------------------- resize_
def test_resize_shrinks_in_place_and_keeps_the_storage():
    x = tt.arange(6.0)
    storage = x._storage
    assert x.resize_(2, 2) is x
    assert x.shape == (2, 2) and x.stride() == (2, 1) and x._storage is storage
    assert x.tolist() == [[0.0, 1.0], [2.0, 3.0]]


def test_resize_grows_keeping_the_old_elements():
    x = tt.tensor([1.0, 2.0])
    x.resize_((2, 3))
    assert x.shape == (2, 3) and x.tolist()[0][:2] == [1.0, 2.0]
    x.resize_(0)
    assert x.shape == (0,)


def test_resize_errors():
    with pytest.raises(RuntimeError, match="cannot resize variables that require grad"):
        tt.ones(2, requires_grad=True).resize_(3)
    with pytest.raises(RuntimeError, match=r"Trying to create tensor with negative dimension -1: \[-1\]"):
        tt.ones(2).resize_(-1)


def test_resize_to_a_memory_format_gives_torchs_strides():
    # torch 2.13: x.resize_(2, 3, 2, 2, memory_format=torch.channels_last).stride() == (12, 1, 6, 3)
    x = tt.arange(24.0)
    assert x.resize_(2, 3, 2, 2, memory_format=tt.channels_last).stride() == (12, 1, 6, 3)
    assert x.is_contiguous(memory_format=tt.channels_last) and x.sum().item() == 276.0
    assert tt.zeros(24).resize_(2, 3, 2, 2, 2, memory_format=tt.channels_last_3d).stride() == (24, 1, 12, 6, 3)
    assert tt.zeros(24).resize_(4, 6, memory_format=tt.contiguous_format).stride() == (6, 1)
    with pytest.raises(RuntimeError, match="^Unsupported memory formatPreserve$"):
        tt.zeros(24).resize_(4, 6, memory_format=tt.preserve_format)
    with pytest.raises(RuntimeError, match="^required rank 4 tensor to use channels_last format$"):
        tt.zeros(24).resize_(4, 6, memory_format=tt.channels_last)
    with pytest.raises(RuntimeError, match="^required rank 5 tensor to use channels_last_3d format$"):
        tt.zeros(24).resize_(4, 6, memory_format=tt.channels_last_3d)


# --------------------------------------------------------------------------- factories
def test_factories_write_into_out_in_its_dtype():
    out = tt.empty(0, dtype=tt.float64)
    assert tt.zeros(2, 3, out=out) is out and out.dtype is tt.float64 and out.tolist() == [[0.0] * 3] * 2
    assert tt.ones(2, out=tt.empty(0, dtype=tt.long)).tolist() == [1, 1]
    assert tt.full((2,), 3, out=tt.empty(0, dtype=tt.float64)).tolist() == [3.0, 3.0]
    assert tt.arange(5, out=tt.empty(0, dtype=tt.float64)).tolist() == [0.0, 1.0, 2.0, 3.0, 4.0]
    assert tt.eye(2, out=tt.empty(0, dtype=tt.long)).tolist() == [[1, 0], [0, 1]]
    assert tt.linspace(0, 1, 3, out=tt.empty(0, dtype=tt.float64)).tolist() == [0.0, 0.5, 1.0]
    r = tt.randn(4, out=tt.empty(0, dtype=tt.float64))
    assert r.dtype is tt.float64 and r.shape == (4,)
    assert tt.empty(3, out=tt.empty(0)).shape == (3,)
    x = tt.randint(0, 5, (6,), out=tt.empty(0, dtype=tt.long))
    assert all(0 <= v < 5 for v in x.tolist())
    assert tt.ones(2, out=tt.empty(0), requires_grad=True).requires_grad
    with pytest.raises(RuntimeError, match=r"dtype Float does not match dtype of out parameter \(Double\)"):
        tt.zeros(2, dtype=tt.float32, out=tt.empty(0, dtype=tt.float64))


def test_full_reductions_of_sum_and_prod_have_no_out_overload():
    """torch's sum/prod take out= only with a dim (their full-reduction overloads have none)."""
    x = tt.arange(6.0).reshape(2, 3)
    with pytest.raises(TypeError, match=r"sum\(\) received an invalid combination of arguments - got "
                                        r"\(Tensor, out=Tensor\)"):
        tt.sum(x, out=tt.empty(()))
    with pytest.raises(TypeError, match=r"prod\(\) received an invalid combination"):
        tt.prod(x, out=tt.empty(()))
    with pytest.raises(TypeError, match='sum\\(\\) missing 1 required positional arguments: "dim"'):
        tt.sum(x, dtype=tt.float64, out=tt.empty((), dtype=tt.float64))
    o = tt.empty(3)
    assert tt.sum(x, 0, out=o) is o and o.tolist() == [3.0, 5.0, 7.0]
    assert tt.mean(x, out=tt.empty(())).item() == 2.5          # mean's full overload has out=


def test_out_with_internal_overlap_is_refused():
    x = tt.arange(6.0).reshape(2, 3)
    with pytest.raises(RuntimeError, match="more than one element of the written-to tensor refers to a single "
                                           "memory location"):
        tt.add(x, 1, out=tt.zeros(1, 3)[:1].expand(2, 3))


def test_nonzero_out():
    o = tt.zeros(2, dtype=tt.int64)
    with pytest.warns(UserWarning, match="was resized"):
        got = tt.nonzero(tt.tensor([[0, 1], [1, 1]]), out=o)
    assert got is o and o.tolist() == [[0, 1], [1, 0], [1, 1]]
    with pytest.raises(RuntimeError, match="nonzero: Expected out tensor to have scalar type Long but got scalar "
                                           "typeFloat"):
        tt.nonzero(tt.tensor([1]), out=tt.zeros(2))
    with pytest.raises(RuntimeError, match="nonzero does not support the out kwarg when as_tuple is True"):
        tt.nonzero(tt.tensor([1]), as_tuple=True, out=tt.zeros(2, dtype=tt.int64))
    assert tt.tensor([0, 3]).nonzero().tolist() == [[1]]
