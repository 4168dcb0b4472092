"""Every op in the table, on cpu and cuda, against its NumPy reference: driven by the records in
tests/opinfo.py (one OpInfo per op: its public callable, sample inputs, dtypes, reference and
tolerances).

Inputs cover every dtype the op supports and awkward layouts: 0-d, size-0, size-1 dims, odd
sizes that cross kernel block boundaries, transposed, step-sliced and broadcast (stride 0)
operands, Python scalars on either side, NaN and inf.
"""
import math

import numpy as np
import pytest

import tritensor as tt
from conftest import to_numpy
from opinfo import OPS, PARITY_ESCAPES, RECORDS
from tritensor.ops.table import TABLE

PARITY = [(r.name, dtype) for r in RECORDS if r.has_parity for dtype in r.dtypes]


def _check_table_reference(out, args, name):
    """The table's own reference, run in the op's compute dtype (as the cpu device runs it)."""
    host_args = [a.detach().cpu() if isinstance(a, tt.Tensor) else a for a in args]
    compute = tt.float32 if out.dtype in (tt.float16, tt.bfloat16) else tt.result_type(*host_args)
    if out.dtype.is_floating_point and compute is not tt.float32 and not compute.is_floating_point:
        compute = out.dtype
    cast = [a._host_view().astype(compute.numpy_dtype) if isinstance(a, tt.Tensor) else a
            for a in host_args]
    with np.errstate(all="ignore"):
        expected = np.asarray(TABLE[name].reference(*cast))
    _compare(out, expected, OPS[name])


def _compare(out, expected, info):
    got = to_numpy(out)
    expected = np.asarray(expected)
    assert got.shape == expected.shape
    if out.dtype is tt.bool:
        np.testing.assert_array_equal(got, expected.astype(bool))
    elif not out.dtype.is_floating_point:
        np.testing.assert_array_equal(got, expected.astype(got.dtype))
    else:
        rtol, atol = info.tolerance(out.dtype)
        with np.errstate(all="ignore"):   # values past float16's range become inf, as in the op
            expected = expected.astype(out.dtype.numpy_dtype).astype(np.float64)
        np.testing.assert_allclose(got.astype(np.float64), expected, rtol=rtol, atol=atol, equal_nan=True)


def _check(info, out, sample, device):
    outs = tuple(out) if isinstance(out, (tuple, list)) else (out,)
    for o in outs:
        assert o.device == tt.device(device) or o.device.type == device
        if sample.result_dtype is not None:
            assert o.dtype is sample.result_dtype, (o.dtype, sample.result_dtype)
    if info.reference == "table":
        _check_table_reference(out, sample.args, info.name)
        return
    host = [to_numpy(a) if isinstance(a, tt.Tensor) else a for a in sample.args]
    with np.errstate(all="ignore"):
        expected = info.reference(*host, **sample.kwargs)
    expected = tuple(expected) if isinstance(expected, (tuple, list)) else (expected,)
    assert len(outs) == len(expected)
    for o, e in zip(outs, expected):
        _compare(o, e, info)


def _public(name):
    obj = tt
    for part in name.split("."):
        obj = getattr(obj, part, None)
    return obj


def test_every_op_in_the_table_has_a_record_or_an_escape_reason():
    """The completeness gate: a table op is checked here (a record with samples) or its line in
    opinfo.PARITY_ESCAPES says where it is tested; an escape line for an op that now has samples,
    or for a name no longer in the table, fails too (the list only shrinks)."""
    unspecified = sorted(n for n in TABLE if n not in PARITY_ESCAPES and (n not in OPS or not OPS[n].has_parity))
    assert not unspecified, f"ops without a parity record or an escape reason: {unspecified}"
    stale = sorted(n for n in PARITY_ESCAPES if n not in TABLE or (n in OPS and OPS[n].has_parity))
    assert not stale, f"escape lines for ops that have samples (or left the table): {stale}"
    assert all(reason.strip() for reason in PARITY_ESCAPES.values())
    # a record names a table entry, or a public composite op (tt.tile, tt.linalg.solve ...)
    unknown = sorted(n for n, r in OPS.items()
                     if n not in TABLE and _public(n) is None and not any(_public(m) for m in r.op_db))
    assert not unknown, f"records naming neither a table entry nor a public op: {unknown}"
    assert all(r.dtypes and r.reference is not None for r in RECORDS if r.has_parity)


@pytest.mark.parametrize("name,dtype", PARITY, ids=[f"{n}-{d}" for n, d in PARITY])
def test_parity(name, dtype, device):
    """Every sample of the op's record, on ``device``, against NumPy (cpu runs the reference, the
    emulated cuda the Triton kernels: both are checked against the same expectation)."""
    info = OPS[name]
    count = 0
    for sample in info.sample_inputs(device, dtype):
        try:
            out = info.op(*sample.args, **sample.kwargs)
            _check(info, out, sample, device)
        except Exception as e:
            raise AssertionError(f"{name} {dtype} on {device}, sample {sample.desc!r}: {e}") from e
        count += 1
    assert count, f"no sample of {name} in {dtype}"


def test_result_types_follow_torch(device):
    i32 = tt.ones(3, dtype=tt.int32, device=device)
    i64 = tt.ones(3, dtype=tt.int64, device=device)
    f16 = tt.ones(3, dtype=tt.float16, device=device)
    f32 = tt.ones(3, device=device)
    b = tt.ones(3, dtype=tt.bool, device=device)
    assert (i32 + 2.5).dtype is tt.float32          # int tensor with a float scalar
    assert (i32 + i64).dtype is tt.int64
    assert (f16 + f32).dtype is tt.float32
    assert (f16 + 2.5).dtype is tt.float16          # a scalar doesn't widen within its category
    assert (i32 / i32).dtype is tt.float32          # true division of ints is float
    assert (b + b).dtype is tt.bool
    assert (b * 2).dtype is tt.int64
    assert (i32 + tt.tensor(5, device=device)).dtype is tt.int32   # 0-d doesn't widen either
    assert (i32 + tt.tensor(5.0, dtype=tt.float64, device=device)).dtype is tt.float64  # higher category: its type
    assert i32.exp().dtype is tt.float32


def test_maximum_propagates_nan(device):
    vals = [float("nan"), float("inf"), -float("inf"), 0.0, -0.0, 1.0, -2.0]
    x = tt.tensor(vals, device=device)
    y = tt.tensor(vals[::-1], device=device)
    assert math.isnan(tt.maximum(x, y)[0].item())   # NaN propagates like torch


def test_sum_edge_cases(device):
    assert tt.zeros(0, device=device).sum().item() == 0              # the sum of nothing is 0
    assert to_numpy(tt.ones(3, 0, device=device).sum(1)).tolist() == [0, 0, 0]
    assert tt.tensor(2.5, device=device).sum().item() == 2.5          # 0-d
    assert math.isnan(tt.zeros(0, device=device).mean().item())
    x = tt.arange(12, dtype=tt.float32, device=device).view(3, 4)
    np.testing.assert_allclose(to_numpy(x.mean(1)), [1.5, 5.5, 9.5])


@pytest.mark.parametrize("dtype", [tt.float16, tt.bfloat16, tt.float32, tt.float64], ids=str)
def test_random_fills_every_element(dtype, device):
    tt.manual_seed(5)
    x = tt.empty(3, 100, dtype=dtype, device=device)
    x.fill_(float("nan"))
    x[:, ::3].uniform_(2.0, 3.0)       # strided target
    v = to_numpy(x)
    picked = v[:, ::3]
    assert np.all((picked >= 2.0) & (picked <= 3.0))
    assert np.isnan(v[:, 1::3]).all()
