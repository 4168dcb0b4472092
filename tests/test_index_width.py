"""Kernels index in int32 when everything fits and in int64 otherwise (backends/triton/_plan.py
needs_int64): both paths give the same results. Loop indices are int64 in every kernel
(kernels/__init__.py): checked statically, and probed on views whose offsets pass 2**31."""
import ast
import importlib
from pathlib import Path

import numpy as np
import pytest

import tritensor as tt
import tritensor.nn.functional as F
from conftest import to_numpy
from tritensor.backends import triton as tb


def test_needs_int64_boundaries():
    limit = tb.INDEX32_LIMIT
    assert not tb.needs_int64(1000, 128, (10, 100), [(100, 1), (1, 10)])
    assert tb.needs_int64(limit - 100, 128, (limit - 100,), [(1,)])            # the last block's indices
    assert tb.needs_int64(6, 128, (2, 3), [(3, 1), (2 ** 31, 1)])               # a far element offset
    assert not tb.needs_int64(6, 128, (2, 3), [(3, 1), (0, 1)])                 # broadcast: stride 0


@pytest.fixture
def launches(monkeypatch):
    """The WIDE flag of every elementwise/copy/fill launch."""
    seen = []
    run = tb._run

    def spy(kernel, grid, *args, **meta):
        if "WIDE" in meta:
            seen.append(meta["WIDE"])
        return run(kernel, grid, *args, **meta)
    monkeypatch.setattr(tb, "_run", spy)
    return seen


def _ops(device):
    rng = np.random.default_rng(0)
    a = rng.standard_normal((9, 31)).astype(np.float32)
    b = rng.standard_normal((31,)).astype(np.float32)
    x, y = tt.tensor(a, device=device), tt.tensor(b, device=device)
    out = tt.empty(9, 31, device=device)
    out.fill_(2.5)
    return [(x.t() + y[:9, None].t()).exp(), tt.where(x > 0, x, y), x.t().contiguous(), out.t()], \
        [np.exp(a.T + b[:9, None].T), np.where(a > 0, a, b), a.T, np.full((31, 9), 2.5, np.float32)]


@pytest.mark.parametrize("limit", ["int32", "int64"])
def test_both_index_widths_agree(limit, launches, monkeypatch):
    if limit == "int64":
        monkeypatch.setattr(tb, "INDEX32_LIMIT", 100)   # force the wide path on small tensors
    got, expected = _ops("cuda")
    for g, e in zip(got, expected):
        np.testing.assert_allclose(to_numpy(g), e, rtol=1e-6)
    assert launches and all(w is (limit == "int64") for w in launches)


# --------------------------------------------------------------------------- loop indices (issue 20.5)
KERNEL_DIR = Path(importlib.import_module("tritensor.kernels").__file__).parent


def _range_loops(tree):
    """The `for` loops over ``range(...)`` / ``tl.range(...)`` (tl.static_range is unrolled over
    constexprs: exempt)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.For) and isinstance(node.iter, ast.Call):
            f = node.iter.func
            name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else None
            if name == "range":
                yield node


def _is_int64_cast_of(stmt, raw):
    """``<name> = tl.cast(<raw>, tl.int64)``: the name bound, or None."""
    if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)):
        return None
    call = stmt.value
    if not (isinstance(call, ast.Call) and ast.unparse(call.func) == "tl.cast" and len(call.args) == 2):
        return None
    if ast.unparse(call.args[0]) != raw or ast.unparse(call.args[1]) != "tl.int64":
        return None
    return stmt.targets[0].id


# Files that follow another documented convention instead, checked by hand: linalg.py casts an
# index where it multiplies a stride (``tl.cast(i, tl.int64) * s_ac``, ``(r0 + rb).to(tl.int64)``);
# its loop indices are row and column numbers below a matrix dimension, so they never pass 2**31
# themselves, and some feed int32 loop-carried values (info codes, pivots). Take a file out of
# this set once it uses the form above.
CAST_ON_USE = {"linalg.py"}


def test_every_kernel_loop_index_is_cast_to_int64():
    """kernels/__init__.py's rule, checked on every kernel file (new ones included): a `range`
    loop's raw index is used once, first thing in the body, to bind its int64 cast (or not at
    all). Under the interpreter the raw index is a Python int that Triton types int32, so
    ``r0 * stride`` wrapped past 2**31 (a segfault reading as_strided views of large storages)."""
    files = sorted(KERNEL_DIR.glob("*.py"))
    assert len(files) > 5, KERNEL_DIR
    bad, loops = [], 0
    for path in files:
        if path.name in CAST_ON_USE:
            continue
        tree = ast.parse(path.read_text(), str(path))
        for loop in _range_loops(tree):
            loops += 1
            where = f"{path.name}:{loop.lineno}"
            if not isinstance(loop.target, ast.Name):
                bad.append(f"{where}: the loop index is not a plain name")
                continue
            raw = loop.target.id
            body = [n for stmt in loop.body + loop.orelse for n in ast.walk(stmt)]
            if not any(isinstance(n, ast.Name) and n.id == raw for n in body):
                continue                                     # the index is never read: nothing to wrap
            bound = _is_int64_cast_of(loop.body[0], raw)
            if bound is None:
                bad.append(f"{where}: the body does not start with `<name> = tl.cast({raw}, tl.int64)`")
                continue
            rest = [n for stmt in loop.body[1:] + loop.orelse for n in ast.walk(stmt)]
            if any(isinstance(n, ast.Name) and n.id == raw for n in rest):
                bad.append(f"{where}: the raw index {raw!r} is used besides its cast")
    assert loops >= 20
    assert not bad, "kernel loops that may index in int32 (see kernels/__init__.py):\n" + "\n".join(bad)


def test_the_loop_rule_check_catches_an_uncast_index():
    loop = ast.parse("for r0 in range(a, b, 4):\n    ridx = r0 + tl.arange(0, 4)\n").body[0]
    assert _is_int64_cast_of(loop.body[0], "r0") is None
    cast = ast.parse("for r0_ in range(a, b, 4):\n    r0 = tl.cast(r0_, tl.int64)\n").body[0]
    assert _is_int64_cast_of(cast.body[0], "r0_") == "r0"
    assert [n.lineno for n in _range_loops(ast.parse("for i in tl.static_range(3):\n    pass\n"))] == []


# Probes: views of large storages whose element offsets pass 2**31 (int32 would wrap), for every
# kernel family that loops. A storage of 2**31 + 64 elements of each dtype the probes use (uint8:
# 2 GiB, float16: 4 GiB, float32 for pdist: 8 GiB), allocated once for the module and never
# touched but for the few elements each probe writes: the emulated device's memory is host memory
# mapped lazily, and the allocator does not clear it. Each probe runs once (not per dtype); the
# expected values come from NumPy on the same few numbers.
BIG = 2 ** 31 + 64          # elements of each storage
S = 2 ** 26 + 1             # a stride such that element 32 of a view lies past 2**31


class Big:
    """The probes' storages, made on first use, behind a short repr: pytest shows a failing
    test's arguments, and the repr of a tensor of 2**31 elements would read all of them."""

    def __init__(self):
        self.storages = {}

    def view(self, dtype, shape, strides, offset=0):
        """A view of the ``dtype`` storage; its last element lies past 2**31 elements."""
        if dtype not in self.storages:
            try:
                self.storages[dtype] = tt.empty(BIG, dtype=dtype, device="cuda")
            except tt.cuda.OutOfMemoryError:
                pytest.skip(f"the cuda device cannot hold {BIG} elements of {dtype}")
        last = offset + sum((n - 1) * st for n, st in zip(shape, strides))
        assert 2 ** 31 < last < BIG
        return self.storages[dtype].as_strided(shape, strides, offset)

    def __repr__(self):
        return f"<storages of {BIG} elements: {sorted(map(str, self.storages))}>"


@pytest.fixture(scope="module")
def big():
    holder = Big()
    yield holder
    holder.storages.clear()
    tt.cuda.empty_cache()


def _view(big, dtype, shape, strides, offset=0):
    return big.view(dtype, shape, strides, offset)


def _put(view, values):
    view.copy_(tt.tensor(values, device="cuda").to(view.dtype))
    return view


def test_issue_probe_sum_max_amax_of_a_uint8_view_past_2_31(big):
    """The issue's probe: x = tt.empty(2**31 + 16, dtype=tt.uint8); x.as_strided((3,), (2**30 + 1,))
    filled with 5 segfaulted in sum, max and amax."""
    v = _view(big, tt.uint8, (3,), (2 ** 30 + 1,))
    v.fill_(5)
    assert v.sum().item() == 15 and v.max().item() == 5 and v.amax().item() == 5


def test_reductions_past_2_31(big):
    rng = np.random.default_rng(0)
    u = rng.integers(1, 3, 33).astype(np.uint8)
    a = _put(_view(big, tt.uint8, (33,), (S,)), u)
    assert a.sum().item() == u.sum() and a.amax().item() == u.max() and a.amin().item() == u.min()
    assert a.argmax().item() == np.argmax(u) and a.prod().item() == np.prod(u.astype(np.int64))
    f = rng.standard_normal(33).astype(np.float16)
    x = _put(_view(big, tt.float16, (33,), (S,), offset=7), f)
    w = f.astype(np.float64)
    got = [x.mean(), x.var(), x.std(), x.norm(), x.logsumexp(0), x.max(), x.argmin()]
    want = [w.mean(), w.var(ddof=1), w.std(ddof=1), np.sqrt((w * w).sum()), np.log(np.exp(w).sum()), w.max(),
            np.argmin(w)]
    np.testing.assert_allclose([g.float().item() for g in got], want, rtol=4e-3, atol=2e-3)
    m = _view(big, tt.float16, (3, 11), (11 * S, S), offset=3)       # a matrix: rows and columns
    np.testing.assert_allclose(to_numpy(m.sum(1)), to_numpy(m.float()).sum(1), rtol=4e-3, atol=2e-3)
    np.testing.assert_array_equal(to_numpy(m.amax(0)), to_numpy(m.float()).max(0))


def test_fused_groups_past_2_31(big):
    """The fuser's generated kernels (issue 26): a reduction group (its prologue value also
    written) and a pointwise group reading a float16 view whose elements lie past 2**31."""
    f = np.random.default_rng(3).standard_normal(33).astype(np.float16).reshape(3, 11)
    x = _put(_view(big, tt.float16, (3, 11), (11 * S, S), offset=5), f)

    def fn(x):
        y = x * 2 + 1
        return y, y.sum(1) * 0.5, x * 3 - x

    g = tt.jit.trace(fn, (x,))
    assert len([n for n in g.graph_for(x).nodes if n.kind == "prim::FusionGroup"]) == 2
    got = g(x)
    want = fn(x)
    for a, b in zip(got, want):
        np.testing.assert_array_equal(to_numpy(a), to_numpy(b))
    w = f.astype(np.float32)
    np.testing.assert_allclose(to_numpy(got[1]).astype(np.float64), ((w * 2 + 1).astype(np.float16)
                               .astype(np.float64)).sum(1) * 0.5, rtol=2e-3)


def test_scans_past_2_31(big):
    u = np.arange(33, dtype=np.uint8) % 7
    a = _put(_view(big, tt.uint8, (33,), (S,), offset=1), u)
    np.testing.assert_array_equal(to_numpy(a.cumsum(0)), np.cumsum(u.astype(np.int64)))
    f = (1 + (np.arange(33) % 3) / 8).astype(np.float16)
    x = _put(_view(big, tt.float16, (33,), (S,), offset=5), f)
    np.testing.assert_allclose(to_numpy(x.cumprod(0)), np.cumprod(f.astype(np.float64)), rtol=1e-2)
    np.testing.assert_allclose(to_numpy(x.logcumsumexp(0)), np.logaddexp.accumulate(f.astype(np.float64)),
                               rtol=2e-3)
    v, i = a.cummax(0)
    np.testing.assert_array_equal(to_numpy(v), np.maximum.accumulate(u))
    assert to_numpy(i)[-1] == 27 and to_numpy(x.nansum()).item() == pytest.approx(float(f.astype(np.float64).sum()),
                                                                               rel=4e-3)


def _softmax(w):
    e = np.exp(w - w.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def test_softmax_and_log_softmax_past_2_31(big):
    """33 > the interpreter's row chunk: the streaming (looping) path, forward and backward."""
    f = np.random.default_rng(1).standard_normal(33).astype(np.float16)
    x = _put(_view(big, tt.float16, (33,), (S,), offset=9), f)
    w = f.astype(np.float64)
    np.testing.assert_allclose(to_numpy(x.softmax(0)), _softmax(w), rtol=1e-2, atol=1e-4)
    np.testing.assert_allclose(to_numpy(x.log_softmax(0)), np.log(_softmax(w)), rtol=1e-2, atol=1e-3)
    leaf = x.detach().requires_grad_()
    g = _put(_view(big, tt.float16, (33,), (S,), offset=11), np.linspace(-1, 1, 33))
    leaf.softmax(0).backward(g)
    gw, y = np.linspace(-1, 1, 33).astype(np.float16).astype(np.float64), _softmax(w)
    np.testing.assert_allclose(to_numpy(leaf.grad), y * (gw - (gw * y).sum()), rtol=2e-2, atol=1e-3)


def test_layer_norm_past_2_31(big):
    f = np.random.default_rng(2).standard_normal((2, 33)).astype(np.float16)
    x = _put(_view(big, tt.float16, (2, 33), (1, S), offset=13), f)
    g = _put(_view(big, tt.float16, (2, 33), (1, S), offset=15), np.ones((2, 33)))   # (before x is saved)
    leaf = x.detach().requires_grad_()
    out = F.layer_norm(leaf, (33,))
    w = f.astype(np.float64)
    want = (w - w.mean(1, keepdims=True)) / np.sqrt(w.var(1, keepdims=True) + 1e-5)
    np.testing.assert_allclose(to_numpy(out), want, rtol=1e-2, atol=1e-2)
    out.backward(g)
    np.testing.assert_allclose(to_numpy(leaf.grad), np.zeros((2, 33)), atol=1e-2)   # d/dx sum(norm(x)) = 0


def test_rms_norm_past_2_31(big):
    """33 > the interpreter's one-tile row: the streaming (looping) rms_norm kernels, both ways."""
    f = np.random.default_rng(3).standard_normal((2, 33)).astype(np.float16)
    x = _put(_view(big, tt.float16, (2, 33), (1, S), offset=17), f)
    g = _put(_view(big, tt.float16, (2, 33), (1, S), offset=19), np.ones((2, 33)))
    leaf = x.detach().requires_grad_()
    w = tt.ones(33, dtype=tt.float16, device="cuda", requires_grad=True)
    out = F.rms_norm(leaf, (33,), w)
    v = f.astype(np.float64)
    r = 1 / np.sqrt((v * v).mean(1, keepdims=True) + np.finfo(np.float32).eps)
    np.testing.assert_allclose(to_numpy(out), v * r, rtol=1e-2, atol=1e-2)
    out.backward(g)
    np.testing.assert_allclose(to_numpy(leaf.grad), r * (1 - v * r * (v * r).mean(1, keepdims=True)), rtol=2e-2,
                               atol=2e-2)
    np.testing.assert_allclose(to_numpy(w.grad), (v * r).sum(0), rtol=1e-2, atol=1e-2)



def test_embedding_bag_past_2_31(big):
    """embedding_bag's bag loop reads rows of a weight whose row 32 lies past 2**31 elements."""
    f = np.random.default_rng(4).standard_normal((33, 2)).astype(np.float16)
    w = _put(_view(big, tt.float16, (33, 2), (S, 1), offset=17), f)
    idx = tt.tensor([32, 0, 32, 5], device="cuda")
    out = F.embedding_bag(idx, w, tt.tensor([0, 2], device="cuda"), mode="sum")
    v = f.astype(np.float64)
    np.testing.assert_allclose(to_numpy(out), [v[32] + v[0], v[32] + v[5]], rtol=1e-2, atol=1e-2)

def test_batch_norm_and_group_norm_past_2_31(big):
    """(N, C, L) = (2, 3, 11) with the spatial stride S and the sample stride 22 S: the moments'
    and the backward sums' unit loops step past 2**31, forward and backward."""
    f = np.random.default_rng(6).standard_normal((2, 3, 11)).astype(np.float16)
    x = _put(_view(big, tt.float16, (2, 3, 11), (22 * S, 1, S), offset=23), f)
    gv = np.linspace(-1, 1, 66).reshape(2, 3, 11)
    g = _put(_view(big, tt.float16, (2, 3, 11), (22 * S, 1, S), offset=27), gv)
    w, gw = f.astype(np.float64), gv.astype(np.float16).astype(np.float64)
    for axes, fn in (((0, 2), lambda t: F.batch_norm(t, None, None, training=True)),
                     ((1, 2), lambda t: F.group_norm(t, 1))):
        leaf = x.detach().requires_grad_()
        out = fn(leaf)
        mean, var = w.mean(axes, keepdims=True), w.var(axes, keepdims=True)
        xhat = (w - mean) / np.sqrt(var + 1e-5)
        np.testing.assert_allclose(to_numpy(out), xhat, rtol=1e-2, atol=1e-2)
        out.backward(g)
        want = (gw - gw.mean(axes, keepdims=True) - xhat * (gw * xhat).mean(axes, keepdims=True)) / np.sqrt(var + 1e-5)
        np.testing.assert_allclose(to_numpy(leaf.grad), want, rtol=2e-2, atol=2e-2)


def test_cross_entropy_past_2_31(big):
    f = np.random.default_rng(3).standard_normal((2, 33)).astype(np.float16)
    x = _put(_view(big, tt.float16, (2, 33), (1, S), offset=17), f)
    leaf = x.detach().requires_grad_()
    target = np.array([3, 32])
    loss = F.cross_entropy(leaf, tt.tensor(target, device="cuda"))
    w = f.astype(np.float64)
    logp = np.log(_softmax(w))
    np.testing.assert_allclose(loss.float().item(), -logp[[0, 1], target].mean(), rtol=1e-2)
    loss.backward()
    onehot = np.zeros((2, 33))
    onehot[[0, 1], target] = 1
    np.testing.assert_allclose(to_numpy(leaf.grad), (_softmax(w) - onehot) / 2, atol=2e-3)


def test_matmul_k_loop_past_2_31(big):
    """(1, K) @ (K, 1) with K past the interpreter's BLOCK_K: the K loop steps a huge stride."""
    a = np.random.default_rng(4).standard_normal(33).astype(np.float16)
    b = np.random.default_rng(5).standard_normal(33).astype(np.float16)
    x = _put(_view(big, tt.float16, (1, 33), (1, S), offset=19), a[None, :])
    y = _put(_view(big, tt.float16, (33, 1), (S, 1), offset=21), b[:, None])
    np.testing.assert_allclose((x @ y).float().item(), a.astype(np.float64) @ b.astype(np.float64), rtol=1e-2,
                               atol=1e-2)


def test_pdist_and_cdist_past_2_31(big):
    f = np.random.default_rng(6).standard_normal((3, 33)).astype(np.float32)
    x = _put(_view(big, tt.float32, (3, 33), (1, S), offset=23), f)
    d = np.sqrt(((f[:, None, :].astype(np.float64) - f[None, :, :]) ** 2).sum(-1))
    np.testing.assert_allclose(to_numpy(F.pdist(x)), d[np.triu_indices(3, 1)], rtol=1e-5)
    np.testing.assert_allclose(to_numpy(tt.cdist(x, x)), d, rtol=1e-5, atol=1e-5)
    leaf = x.detach().requires_grad_()
    F.pdist(leaf).sum().backward()            # d/dx_i of sum_{i<j} |x_i - x_j| = sum_j (x_i - x_j) / d_ij
    diff = f[:, None, :].astype(np.float64) - f[None, :, :]
    want = (diff / np.where(d > 0, d, 1)[:, :, None]).sum(1)
    np.testing.assert_allclose(to_numpy(leaf.grad), want, rtol=1e-4, atol=1e-5)
    rows = _put(_view(big, tt.float32, (3, 4), (2 ** 30 + 8, 1), offset=25), f[:, :4])    # rows apart
    d4 = np.sqrt(((f[:, None, :4].astype(np.float64) - f[None, :, :4]) ** 2).sum(-1))
    np.testing.assert_allclose(to_numpy(F.pdist(rows)), d4[np.triu_indices(3, 1)], rtol=1e-5)


def test_accumulating_scatter_past_2_31(big):
    """The scatter kernels loop over each target's segment of pairs, reading values at offsets
    past 2**31."""
    f = np.arange(33, dtype=np.float32)
    values = _put(_view(big, tt.float32, (33,), (S,), offset=27), f)
    index = np.arange(33) % 4
    out = tt.zeros(4, device="cuda").index_put_((tt.tensor(index, device="cuda"),), values, accumulate=True)
    np.testing.assert_array_equal(to_numpy(out), np.bincount(index, f))
    # index_add's segment kernel loops over each destination's sorted segment of source rows
    out = tt.zeros(4, device="cuda").index_add_(0, tt.tensor(index, device="cuda"), values)
    np.testing.assert_array_equal(to_numpy(out), np.bincount(index, f))
    red = tt.zeros(4, device="cuda").scatter_reduce(0, tt.tensor(index, device="cuda"), values, "amax")
    np.testing.assert_array_equal(to_numpy(red), [f[index == i].max() for i in range(4)])


def test_sparse_mm_past_2_31(big):
    """The SpMM kernel walks a row's nonzeros reading values (a strided view) and dense rows at
    offsets past 2**31: one row of 33 nonzeros, values and dense operand 2**26 + 1 apart."""
    a = np.random.default_rng(8).standard_normal(33).astype(np.float16)
    b = np.random.default_rng(9).standard_normal(33).astype(np.float16)
    vals = _put(_view(big, tt.float16, (33,), (S,), offset=23), a)
    dense = _put(_view(big, tt.float16, (33, 1), (S, 1), offset=31), b[:, None])
    idx = tt.stack([tt.zeros(33, dtype=tt.int64), tt.arange(33)]).to("cuda")
    s = tt.sparse_coo_tensor(idx, vals, (1, 33), is_coalesced=True)
    np.testing.assert_allclose(tt.sparse.mm(s, dense).float().item(), a.astype(np.float64) @ b.astype(np.float64),
                               rtol=1e-2, atol=1e-2)


def test_sampled_addmm_past_2_31(big):
    """sampled_addmm's kernel walks K in slices, reading a row of mat1 and a column of mat2 (strided
    views) at offsets past 2**31: one entry, K = 33, each operand's elements 2**26 + 1 apart."""
    a = np.random.default_rng(10).standard_normal(33).astype(np.float32)
    b = np.random.default_rng(11).standard_normal(33).astype(np.float32)
    mat1 = _put(_view(big, tt.float32, (1, 33), (1, S), offset=23), a[None, :])
    mat2 = _put(_view(big, tt.float32, (33, 1), (S, 1), offset=31), b[:, None])
    s = tt.sparse_csr_tensor(tt.tensor([0, 1]), tt.tensor([0]), tt.tensor([0.5]), (1, 1), device="cuda")
    got = tt.sparse.sampled_addmm(s, mat1, mat2, beta=2.0).values().item()
    np.testing.assert_allclose(got, 1.0 + a.astype(np.float64) @ b.astype(np.float64), rtol=1e-5, atol=1e-5)


def test_sort_and_topk_past_2_31(big):
    """The merge-sort kernels read a row of a view with a huge stride in place."""
    f = np.random.default_rng(7).permutation(33).astype(np.float16)
    x = _put(_view(big, tt.float16, (33,), (S,), offset=29), f)
    values, indices = x.sort(descending=True)
    np.testing.assert_array_equal(to_numpy(values), np.sort(f)[::-1])
    np.testing.assert_array_equal(to_numpy(indices), np.argsort(-f, kind="stable"))
    np.testing.assert_array_equal(to_numpy(x.topk(3).values), np.sort(f)[::-1][:3])


def test_linalg_past_2_31(big):
    """Factorizations and solves of a matrix whose rows lie 2**30 elements apart."""
    m = np.array([[4.0, 1.0, 0.5], [1.0, 3.0, 0.25], [0.5, 0.25, 2.0]], np.float32)
    a = _put(_view(big, tt.float32, (3, 3), (2 ** 30 + 3, 1), offset=31), m)
    rhs = np.array([[1.0], [2.0], [3.0]], np.float32)
    b = _put(_view(big, tt.float32, (3, 1), (2 ** 30 + 3, 1), offset=35), rhs)
    low = np.linalg.cholesky(m.astype(np.float64))
    np.testing.assert_allclose(to_numpy(tt.linalg.cholesky(a)), low, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(to_numpy(tt.linalg.solve(a, b)), np.linalg.solve(m, rhs), rtol=1e-5)
    np.testing.assert_allclose(to_numpy(tt.linalg.det(a)).item(), np.linalg.det(m.astype(np.float64)), rtol=1e-5)


def test_spectral_past_2_31(big):
    """The Jacobi kernels (eigh, svd) on a matrix whose rows lie 2**30 elements apart."""
    m = np.array([[4.0, 1.0, 0.5], [1.0, 3.0, 0.25], [0.5, 0.25, 2.0]], np.float32)
    a = _put(_view(big, tt.float32, (3, 3), (2 ** 30 + 3, 1), offset=37), m)
    np.testing.assert_allclose(to_numpy(tt.linalg.eigvalsh(a)), np.linalg.eigvalsh(m.astype(np.float64)), rtol=1e-5)
    U, S, Vh = tt.linalg.svd(a[:, :2])
    np.testing.assert_allclose(to_numpy(S), np.linalg.svd(m[:, :2].astype(np.float64), compute_uv=False), rtol=1e-5)
    np.testing.assert_allclose(to_numpy(U[:, :2] * S) @ to_numpy(Vh), m[:, :2], atol=1e-5)


def test_conv_k_loop_past_2_31(big):
    """conv2d of a (1, 17, 1, 2) view whose channels lie 2 S apart: the forward's K loop (17
    channels x 2 taps, past the interpreter's BLOCK_K) and the weight gradient's columns read
    offsets past 2**31."""
    rng = np.random.default_rng(11)
    a = rng.standard_normal((1, 17, 1, 2)).astype(np.float16)
    w = rng.standard_normal((1, 17, 1, 2)).astype(np.float16)
    x = _put(_view(big, tt.float16, (1, 17, 1, 2), (1, 2 * S, 2, 1), offset=29), a)
    want = (a.astype(np.float64) * w).sum()
    y = F.conv2d(x, tt.tensor(w, device="cuda"))
    np.testing.assert_allclose(y.float().item(), want, rtol=1e-2, atol=1e-2)
    weight = tt.tensor(w, device="cuda", requires_grad=True)
    F.conv2d(x, weight).sum().backward()
    np.testing.assert_allclose(to_numpy(weight.grad.float()), a, rtol=1e-3, atol=1e-3)


def test_grid_sample_channel_loop_past_2_31(big):
    """grid_sample of a (1, 17, 1, 2) view whose channels lie 2 S apart: the kernel's channel loop
    (kernels/resample.py) reads offsets past 2**31."""
    rng = np.random.default_rng(12)
    a = rng.standard_normal((1, 17, 1, 2)).astype(np.float16)
    x = _put(_view(big, tt.float16, (1, 17, 1, 2), (1, 2 * S, 2, 1), offset=29), a)
    grid = tt.tensor([[[[-1.0, 0.0], [0.0, 0.0]]]], device="cuda").half()    # pixel 0, and halfway to pixel 1
    y = to_numpy(F.grid_sample(x, grid, align_corners=True).float())
    want = np.stack([a[0, :, 0, 0], a[0, :, 0].astype(np.float32).mean(1)], 1)
    np.testing.assert_allclose(y[0, :, 0], want, rtol=2e-3, atol=2e-3)


def test_pooling_tap_loops_past_2_31(big):
    """max_pool2d / avg_pool2d / adaptive_max_pool2d of a (1, 1, 33, 1) view whose rows lie S
    apart: the kernels' tap loops read offsets past 2**31 (the max and its index, the sum)."""
    f = np.random.default_rng(12).permutation(33).astype(np.float32).reshape(33, 1)
    x = _put(_view(big, tt.float32, (1, 1, 33, 1), (1, 1, S, 1), offset=31), f)
    y, i = F.max_pool2d(x, (33, 1), return_indices=True)
    assert y.item() == 32.0 and i.item() == int(np.argmax(f))
    np.testing.assert_allclose(F.avg_pool2d(x, (33, 1), padding=(1, 0)).item(), f[:32].sum() / 33, rtol=1e-6)
    np.testing.assert_array_equal(to_numpy(F.adaptive_max_pool2d(x, (2, 1))).reshape(-1), [f[:17].max(), f[16:].max()])


def test_grid_sample_3d_channel_loop_past_2_31(big):
    """grid_sample of a (1, 17, 1, 1, 2) view whose channels lie 2 S apart: the 3-d kernel's
    channel loop reads offsets past 2**31."""
    rng = np.random.default_rng(13)
    a = rng.standard_normal((1, 17, 1, 1, 2)).astype(np.float16)
    x = _put(_view(big, tt.float16, (1, 17, 1, 1, 2), (1, 2 * S, 2, 2, 1), offset=29), a)
    grid = tt.tensor([[[[[1.0, 0.0, 0.0], [0.0, 0.0, 0.0]]]]], device="cuda").half()   # pixel 1, and halfway
    y = to_numpy(F.grid_sample(x, grid, align_corners=True).float())
    want = np.stack([a[0, :, 0, 0, 1], a[0, :, 0, 0].astype(np.float32).mean(1)], 1)
    np.testing.assert_allclose(y[0, :, 0, 0], want, rtol=2e-3, atol=2e-3)


def test_interpolate_planes_past_2_31(big):
    """bilinear and nearest interpolation of a (1, 17, 1, 2) view whose channels lie 2 S apart:
    the upsampling kernels' plane offsets pass 2**31."""
    rng = np.random.default_rng(14)
    a = rng.standard_normal((1, 17, 1, 2)).astype(np.float16)
    x = _put(_view(big, tt.float16, (1, 17, 1, 2), (1, 2 * S, 2, 1), offset=29), a)
    y = to_numpy(F.interpolate(x, size=(1, 3), mode="bilinear", align_corners=True).float())
    want = np.stack([a[0, :, 0, 0], a[0, :, 0].astype(np.float32).mean(1), a[0, :, 0, 1]], 1)
    np.testing.assert_allclose(y[0, :, 0], want, rtol=2e-3, atol=2e-3)
    assert to_numpy(F.interpolate(x, size=(1, 4)).float())[0, :, 0].tolist() == \
        np.repeat(a[0, :, 0], 2, axis=1).astype(np.float32).tolist()


def test_attention_key_loops_past_2_31(big):
    """33 keys > the interpreter's 16-row key blocks, each key row a huge stride apart: the
    flash forward's and dQ's key loops and dK/dV's query loop step offsets past 2**31."""
    rng = np.random.default_rng(24)
    kf, vf = (rng.standard_normal((33, 16)).astype(np.float16) for _ in range(2))
    k = _put(_view(big, tt.float16, (1, 1, 33, 16), (0, 0, S, 1), offset=0), kf[None, None])
    v = _put(_view(big, tt.float16, (1, 1, 33, 16), (0, 0, S, 1), offset=16), vf[None, None])
    qf = rng.standard_normal((1, 1, 3, 16)).astype(np.float16)
    q = tt.tensor(qf, device="cuda", requires_grad=True)
    kl, vl = k.detach().requires_grad_(), v.detach().requires_grad_()
    out = F.scaled_dot_product_attention(q, kl, vl)
    s = qf[0, 0].astype(np.float64) @ kf.T.astype(np.float64) / 4
    w = np.exp(s - s.max(1, keepdims=True))
    w /= w.sum(1, keepdims=True)
    np.testing.assert_allclose(to_numpy(out)[0, 0], w @ vf.astype(np.float64), rtol=1e-2, atol=1e-2)
    out.sum().backward()
    np.testing.assert_allclose(to_numpy(vl.grad)[0, 0], np.repeat(w.sum(0)[:, None], 16, 1), rtol=1e-2, atol=1e-2)
    assert np.isfinite(to_numpy(q.grad)).all() and np.isfinite(to_numpy(kl.grad)).all()
