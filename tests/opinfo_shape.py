"""OpInfo records of the shape and construction family (issue 21 item 5): the view composites
(broadcast_to, atleast_*, h/v/dsplit, column_stack/dstack, ravel, tile, rot90, kron, block_diag,
meshgrid, cartesian_prod, combinations, diag/diagflat, repeat_interleave, unsafe_split/chunk),
the view copies (*_copy) and in-place views (t_ ...), Tensor.H/mH, resize_as_, aten.slice, the
contractions (einsum, tensordot, inner, vdot, addmv, addr, addbmm, chain_matmul) and the factories
(empty_strided, empty_permuted, logspace, scalar_tensor, the windows).

The references are NumPy's own functions (np.kron, np.rot90, np.einsum, np.tensordot ...), not
the ops' composites. These ops launch a few kernels each on the emulated cuda device, so each has
one or two small samples in one or two dtypes (the cpu's dtype matrix: tests/test_shape_ops.py).
Gradient cases are tiny float64 inputs: the numerical Jacobian costs two evaluations per element.
"""
from __future__ import annotations

import itertools

import numpy as np

import tritensor as tt
from opinfo import GRAD_CASES, SampleInput, cases, factory, record, rng_for
from opinfo import _randn

F32, F64, I64, BOOL = tt.float32, tt.float64, tt.int64, tt.bool
TOL = {tt.float32: (1e-5, 1e-5), tt.float64: (1e-12, 1e-12)}


# --------------------------------------------------------------------------- broadcasting, atleast_nd
record("broadcast_to", tt.broadcast_to, (F32, BOOL), cases(
    "broadcast_to", "any", ("new-dims", lambda m: m((3, 1)).t(), {"size": (2, 4, 3)}),
    ("keep", lambda m: m((3, 1)), {"size": (-1, 5)})),
    lambda x, size: np.broadcast_to(x, tuple(s if s != -1 else x.shape[i - len(size) + x.ndim]
                                             for i, s in enumerate(size))))
record("broadcast_tensors", tt.broadcast_tensors, (F32,), cases(
    "broadcast_tensors", "any", ("three", lambda m: (m((2, 1, 3)), m((4, 1)), m(())), {})),
    lambda *xs: tuple(np.broadcast_arrays(*xs)))
for _n, _np_fn in (("atleast_1d", np.atleast_1d), ("atleast_2d", np.atleast_2d), ("atleast_3d", np.atleast_3d)):
    record(_n, getattr(tt, _n), (F32,), cases(
        _n, "any", ("0d", lambda m: m(()), {}), ("several", lambda m: (m((3,)), m((2, 3)).t(), m(())), {})),
        (lambda f: lambda *xs: tuple(f(*xs)) if len(xs) > 1 else f(*xs))(_np_fn))

# --------------------------------------------------------------------------- splits and stacks
record("hsplit", tt.hsplit, (F32,), cases(
    "hsplit", "any", ("sections", lambda m: m((2, 6)), {"indices_or_sections": 3}),
    ("indices-1d", lambda m: m((7,)), {"indices_or_sections": [2, 5]})),
    lambda x, indices_or_sections: tuple(np.hsplit(x, indices_or_sections)))
record("vsplit", tt.vsplit, (F32,), cases(
    "vsplit", "any", ("transposed", lambda m: m((3, 4)).t(), {"indices_or_sections": 2})),
    lambda x, indices_or_sections: tuple(np.vsplit(x, indices_or_sections)))
record("dsplit", tt.dsplit, (F32,), cases(
    "dsplit", "any", ("indices", lambda m: m((2, 2, 5)), {"indices_or_sections": [1, 3]})),
    lambda x, indices_or_sections: tuple(np.dsplit(x, indices_or_sections)))
record("column_stack", lambda *xs: tt.column_stack(xs), (F32, I64), cases(
    "column_stack", "any", ("mixed", lambda m: (m((3,)), m((4, 3)).t(), m((3, 1))), {})),
    lambda *xs: np.column_stack(xs))
record("dstack", lambda *xs: tt.dstack(list(xs)), (F32,), cases(
    "dstack", "any", ("mixed", lambda m: (m((2, 3)), m((2, 3, 2)), m((3, 2)).t()), {}),
    ("1d", lambda m: (m((4,)), m((4,))), {})),
    lambda *xs: np.dstack(xs))
record("ravel", tt.ravel, (F32,), cases(
    "ravel", "any", ("transposed", lambda m: m((3, 5)).t(), {}), ("0d", lambda m: m(()), {})), np.ravel)
record("unsafe_split", tt.unsafe_split, (F32,), cases(
    "unsafe_split", "any", ("dim1", lambda m: m((3, 7)), {"split_size": 3, "dim": 1})),
    lambda x, split_size, dim: tuple(np.split(x, [3, 6], axis=dim)))
record("unsafe_chunk", tt.unsafe_chunk, (F32,), cases(
    "unsafe_chunk", "any", ("dim0", lambda m: m((5, 2)), {"chunks": 2})),
    lambda x, chunks: tuple(np.split(x, [3], axis=0)))

# --------------------------------------------------------------------------- tile, rot90, kron, block_diag
record("tile", tt.tile, (F32, BOOL), cases(
    "tile", "any", ("pad-dims", lambda m: m((2, 3)).t(), {"dims": (2,)}),
    ("more-dims", lambda m: m((2,)), {"dims": (2, 1, 3)})), lambda x, dims: np.tile(x, dims))
record("rot90", tt.rot90, (F32, I64), cases(
    "rot90", "any", ("k1", lambda m: m((2, 3, 4)), {"k": 1, "dims": (0, 2)}),
    ("k-1", lambda m: m((3, 4)).t(), {"k": -1}), ("k2", lambda m: m((3, 4)), {"k": 2, "dims": (1, 0)})),
    lambda x, k=1, dims=(0, 1): np.rot90(x, k, dims))
record("kron", tt.kron, (F32, I64), cases(
    "kron", "small", ("ranks", lambda m: (m((2, 3)).t(), m((2, 1, 2))), {}), ("0d", lambda m: (m(()), m((3,))), {})),
    np.kron)
record("block_diag", tt.block_diag, (F32, I64), cases(
    "block_diag", "any", ("mixed", lambda m: (m((2, 3)), m((3,)), m(()), m((0, 2)), m((2, 2)).t()), {})),
    lambda *xs: _block_diag_reference(xs))


def _block_diag_reference(xs):
    blocks = [np.atleast_2d(x) for x in xs]
    out = np.zeros((sum(b.shape[0] for b in blocks), sum(b.shape[1] for b in blocks)), dtype=np.float64)
    r = c = 0
    for b in blocks:
        out[r:r + b.shape[0], c:c + b.shape[1]] = b
        r, c = r + b.shape[0], c + b.shape[1]
    return out


# --------------------------------------------------------------------------- grids and combinations
record("meshgrid", lambda *xs, indexing: tt.meshgrid(*xs, indexing=indexing), (F32,), cases(
    "meshgrid", "any", ("xy", lambda m: (m((3,)), m((2,)), m(())), {"indexing": "xy"}),
    ("ij", lambda m: (m((3,)), m((4,))[::2]), {"indexing": "ij"})),
    lambda *xs, indexing: tuple(np.meshgrid(*[np.atleast_1d(x) for x in xs], indexing=indexing)))
record("cartesian_prod", tt.cartesian_prod, (F32, I64), cases(
    "cartesian_prod", "any", ("three", lambda m: (m((3,)), m((2,)), m((4,))[::2]), {})),
    lambda *xs: np.array(list(itertools.product(*xs))))
record("combinations", tt.combinations, (F32, BOOL), cases(
    "combinations", "any", ("r2", lambda m: m((4,)), {}), ("r3-replacement", lambda m: m((3,)),
                                                          {"r": 3, "with_replacement": True}),
    ("r-too-big", lambda m: m((2,)), {"r": 3})),
    lambda x, r=2, with_replacement=False: np.array(list(
        (itertools.combinations_with_replacement if with_replacement else itertools.combinations)(x, r)),
        dtype=x.dtype).reshape(-1, r))

# --------------------------------------------------------------------------- diag, repeat_interleave
record("diag", tt.diag, (F32, I64), cases(
    "diag", "any", ("embed", lambda m: m((3,)), {"diagonal": 1}), ("extract", lambda m: m((3, 4)).t(),
                                                                  {"diagonal": -1})),
    lambda x, diagonal=0: np.diag(x, diagonal))
record("diagflat", tt.diagflat, (F32,), cases(
    "diagflat", "any", ("2d", lambda m: m((2, 2)).t(), {"offset": -1})), lambda x, offset=0: np.diagflat(x, offset))
record("repeat_interleave", tt.repeat_interleave, (F32, I64), cases(
    "repeat_interleave", "any", ("int-flat", lambda m: m((2, 3)).t(), {"repeats": 2}),
    ("int-dim", lambda m: m((2, 3)), {"repeats": 3, "dim": 1})),
    lambda x, repeats, dim=None: np.repeat(x, repeats, axis=dim))


def _samples_repeats_tensor(device, dtype):
    x = factory(dtype, "any", device, rng_for("repeat_interleave_tensor", dtype))((3, 4)).t()
    yield SampleInput((x, tt.tensor([2, 0, 1, 3], device=device)), {"dim": 0}, desc="tensor-repeats")
    yield SampleInput((tt.tensor([1, 0, 3, 2], dtype=tt.int32, device=device),), {}, desc="repeats-only")


record("Tensor.repeat_interleave", lambda x, *rest, **kw: tt.repeat_interleave(x, *rest, **kw), (F32,),
       _samples_repeats_tensor,
       lambda x, repeats=None, dim=None: np.repeat(np.arange(len(x)), x) if repeats is None
       else np.repeat(x, repeats, axis=dim))

# --------------------------------------------------------------------------- view copies and in-place views
_COPIES = {   # name: (spec, NumPy reference)
    "alias_copy": (("sliced", lambda m: m((4, 6))[::2], {}), lambda x: x),
    "as_strided_copy": (("window", lambda m: m((4, 3)).t(), {"size": (2, 2), "stride": (1, 2), "storage_offset": 1}),
                        lambda x, size, stride, storage_offset: np.lib.stride_tricks.as_strided(
                            x.T.ravel()[storage_offset:], size, tuple(s * x.itemsize for s in stride))),
    "diagonal_copy": (("offset", lambda m: m((3, 4)).t(), {"offset": 1}), lambda x, offset: np.diagonal(x, offset)),
    "expand_copy": (("grow", lambda m: m((3, 1)), {"size": (2, 3, 4)}), lambda x, size: np.broadcast_to(x, size)),
    "narrow_copy": (("dim1", lambda m: m((3, 5)), {"dim": 1, "start": -3, "length": 2}),
                    lambda x, dim, start, length: x[:, 2:4]),
    "permute_copy": (("3d", lambda m: m((2, 3, 4)), {"dims": (2, 0, 1)}), lambda x, dims: np.transpose(x, dims)),
    "select_copy": (("dim1", lambda m: m((3, 4)), {"dim": 1, "index": -1}), lambda x, dim, index: x[:, index]),
    "slice_copy": (("step", lambda m: m((3, 7)), {"dim": 1, "start": 1, "end": 6, "step": 2}),
                   lambda x, dim, start, end, step: x[:, start:end:step]),
    "split_copy": (("dim1", lambda m: m((2, 5)), {"split_size": 2, "dim": 1}),
                   lambda x, split_size, dim: tuple(np.split(x, [2, 4], axis=1))),
    "split_with_sizes_copy": (("dim0", lambda m: m((5, 2)), {"split_sizes": [1, 4]}),
                              lambda x, split_sizes: tuple(np.split(x, [1], axis=0))),
    "squeeze_copy": (("dims", lambda m: m((1, 3, 1)), {"dim": (0, 2)}), lambda x, dim: np.squeeze(x, dim)),
    "t_copy": (("2d", lambda m: m((3, 4)), {}), lambda x: x.T),
    "transpose_copy": (("3d", lambda m: m((2, 3, 4)), {"dim0": 0, "dim1": -1}),
                       lambda x, dim0, dim1: np.swapaxes(x, dim0, dim1)),
    "unbind_copy": (("dim1", lambda m: m((2, 3)), {"dim": 1}), lambda x, dim: tuple(np.moveaxis(x, dim, 0))),
    "unfold_copy": (("windows", lambda m: m((7,)), {"dimension": 0, "size": 3, "step": 2}),
                    lambda x, dimension, size, step: np.stack([x[i:i + size] for i in range(0, len(x) - size + 1, step)])),
    "unsqueeze_copy": (("mid", lambda m: m((2, 3)), {"dim": 1}), lambda x, dim: np.expand_dims(x, dim)),
    "view_copy": (("transposed", lambda m: m((3, 4)).t(), {"size": (2, 6)}), lambda x, size: x.reshape(size)),
}
for _n, (_spec, _ref) in _COPIES.items():
    record(_n, getattr(tt, _n), (F32,), cases(_n, "any", _spec), _ref)


def _inplace(method):
    def run(x, *args, **kwargs):
        y = x.clone()
        out = getattr(y, method)(*args, **kwargs)
        assert out is y
        return y
    return run


record("t_", _inplace("t_"), (F32,), cases("t_", "any", ("2d", lambda m: m((3, 4)), {})), lambda x: x.T)
record("transpose_", _inplace("swapdims_"), (F32,), cases(
    "transpose_", "any", ("3d", lambda m: m((2, 3, 4)), {"dim0": 2, "dim1": 0})),
    lambda x, dim0, dim1: np.swapaxes(x, dim0, dim1))
record("squeeze_", _inplace("squeeze_"), (F32,), cases(
    "squeeze_", "any", ("all", lambda m: m((1, 3, 1)), {}), ("one", lambda m: m((1, 3, 1)), {"dim": -1})),
    lambda x, dim=None: np.squeeze(x, dim))
record("unsqueeze_", _inplace("unsqueeze_"), (F32,), cases(
    "unsqueeze_", "any", ("last", lambda m: m((2, 3)), {"dim": -1})), lambda x, dim: np.expand_dims(x, dim))
record("as_strided_", _inplace("as_strided_"), (F32,), cases(
    "as_strided_", "any", ("window", lambda m: m((3, 4)), {"size": (2, 2), "stride": (1, 4)})),
    lambda x, size, stride: np.lib.stride_tricks.as_strided(x, size, tuple(s * x.itemsize for s in stride)))
record("Tensor.H", lambda x: x.H, (F32,), cases("H", "any", ("2d", lambda m: m((3, 4))[:, ::2], {})),
       lambda x: x.T, op_db=("H",))
record("Tensor.mH", lambda x: x.mH, (F32,), cases("mH", "any", ("batched", lambda m: m((2, 3, 4)), {})),
       lambda x: np.swapaxes(x, -1, -2), op_db=("mH",))
record("ops.aten.slice", tt.ops.aten.slice.Tensor, (F32, BOOL), cases(
    "slice", "any", ("clamped", lambda m: m((3, 7)), {"dim": 1, "start": -5, "end": 100, "step": 3})),
    lambda x, dim, start, end, step: x[:, start:end:step], op_db=("slice",))


def _resize_as(x, template):
    y = x.clone()
    y.resize_as_(template)
    return y.reshape(-1)[:min(x.numel(), y.numel())]


record("resize_as_", _resize_as, (F32,), cases(
    "resize_as_", "any", ("shrink", lambda m: (m((3, 4)), m((2, 5))), {}), ("same", lambda m: (m((2, 3)), m((3, 2))), {})),
    lambda x, template: x.reshape(-1)[:min(x.size, template.size)])

# --------------------------------------------------------------------------- contractions
_EINSUM = (("matmul", lambda m: (m((2, 3)), m((3, 4))), {"equation": "ij,jk->ik"}),
           ("trace-diag", lambda m: (m((3, 3, 2)),), {"equation": "iij->j"}),
           ("batched-broadcast", lambda m: (m((2, 1, 2, 3)), m((4, 3, 2))), {"equation": "...ij,...jk"}),
           ("three", lambda m: (m((2, 3)), m((4, 3, 5)), m((2, 5))), {"equation": "bn,anm,bm->ba"}),
           ("outer-implicit", lambda m: (m((3,)), m((2,))), {"equation": "i,j"}))
record("einsum", lambda *ops, equation: tt.einsum(equation, *ops), (F32, I64), cases("einsum", "small", *_EINSUM),
       lambda *ops, equation: np.einsum(equation, *ops), tolerances=TOL)
record("tensordot", tt.tensordot, (F32, I64), cases(
    "tensordot", "small", ("lists", lambda m: (m((2, 3, 4)), m((4, 3, 5))), {"dims": ([1, 2], [1, 0])}),
    ("count", lambda m: (m((2, 3)).t(), m((2, 4))), {"dims": 1})),
    lambda a, b, dims: np.tensordot(a, b, dims), tolerances=TOL)
record("inner", tt.inner, (F32,), cases(
    "inner", "any", ("nd", lambda m: (m((2, 3)), m((4, 2, 3))), {}), ("0d", lambda m: (m(()), m((2, 2))), {})),
    np.inner, tolerances=TOL)
record("vdot", tt.vdot, (F32, I64), cases("vdot", "small", ("strided", lambda m: (m((6,))[::2], m((3,))), {})),
       np.vdot, tolerances=TOL)
record("addmv", tt.addmv, (F32, I64), cases(
    "addmv", "small", ("scaled", lambda m: (m((1,)), m((3, 4)).t(), m((3,))), {"beta": 2, "alpha": 3})),
    lambda i, mat, vec, beta=1, alpha=1: beta * i + alpha * (mat @ vec), tolerances=TOL)
record("addr", tt.addr, (F32, I64), cases(
    "addr", "small", ("broadcast", lambda m: (m((3, 1)), m((3,)), m((4,))), {"beta": 2, "alpha": -1})),
    lambda i, v1, v2, beta=1, alpha=1: beta * i + alpha * np.outer(v1, v2), tolerances=TOL)
record("addbmm", tt.addbmm, (F32, I64), cases(
    "addbmm", "small", ("scaled", lambda m: (m((3,)), m((2, 2, 4)), m((2, 3, 4)).transpose(1, 2)),
                        {"beta": -1, "alpha": 2})),
    lambda i, b1, b2, beta=1, alpha=1: beta * i + alpha * (b1 @ b2).sum(0), tolerances=TOL)
record("chain_matmul", tt.chain_matmul, (F32,), cases(
    "chain_matmul", "any", ("four", lambda m: (m((2, 5)), m((5, 1)), m((1, 4)), m((4, 3))), {})),
    lambda *ms: np.linalg.multi_dot(ms), tolerances=TOL)

# --------------------------------------------------------------------------- factories
def _factory_samples(*specs):
    """Samples of a factory: ``(desc, args, kwargs)``, made on the device and in the dtype under test."""
    def samples(device, dtype):
        for desc, args, kwargs in specs:
            yield SampleInput(args, dict(kwargs, dtype=dtype, device=device), desc=desc, result_dtype=dtype)
    return samples


def _layout_of(t):
    """What an uninitialised tensor's specification is: its shape, strides and storage size."""
    return tt.tensor(list(t.shape) + list(t.stride()) + [t._storage.nbytes // t.dtype.itemsize], device=t.device)


record("empty_strided", lambda size, stride, **kw: _layout_of(tt.empty_strided(size, stride, **kw)), (F32,),
       lambda device, dtype: iter([SampleInput(((2, 3), (1, 4)), {"device": device}, desc="gappy")]),
       lambda size, stride, **kw: np.array(list(size) + list(stride) + [1 + sum((n - 1) * s for n, s in zip(size, stride))]))
record("Tensor.new_empty_strided", lambda x, size, stride: _layout_of(x.new_empty_strided(size, stride)), (I64,),
       lambda device, dtype: iter([SampleInput((tt.zeros(1, dtype=dtype, device=device), (3, 2), (1, 3)), {},
                                               desc="transposed")]),
       lambda x, size, stride: np.array([3, 2, 1, 3, 6]), op_db=("new_empty_strided",))
record("empty_permuted", lambda size, order, **kw: _layout_of(tt.empty_permuted(size, order, **kw)), (F32,),
       lambda device, dtype: iter([SampleInput(((2, 3, 4), (2, 0, 1)), {"device": device}, desc="permuted")]),
       lambda size, order, **kw: np.array([2, 3, 4, 3, 1, 6, 24]))
record("scalar_tensor", tt.scalar_tensor, (F32, I64), _factory_samples(("int", (3,), {}), ("float", (-2.0,), {})),
       lambda s, **kw: np.array(s))
record("logspace", tt.logspace, (F32, F64, I64), _factory_samples(
    ("base10", (0, 3, 7), {}), ("base2-descending", (4, -1, 6, 2.0), {})),
    lambda start, end, steps, base=10.0, **kw: np.trunc(np.logspace(start, end, steps, base=base))
    if kw["dtype"] is I64 else np.logspace(start, end, steps, base=base), tolerances=TOL)

_WINDOW_FORMULAS = {
    "hann_window": lambda k, n: 0.5 - 0.5 * np.cos(2 * np.pi * k / (n - 1)),
    "hamming_window": lambda k, n: 0.54 - 0.46 * np.cos(2 * np.pi * k / (n - 1)),
    "blackman_window": lambda k, n: 0.42 - 0.5 * np.cos(2 * np.pi * k / (n - 1)) + 0.08 * np.cos(4 * np.pi * k / (n - 1)),
    "bartlett_window": lambda k, n: 1 - np.abs(2 * k / (n - 1) - 1),
    "kaiser_window": lambda k, n: np.i0(12 * np.sqrt(1 - ((k - (n - 1) / 2) / ((n - 1) / 2)) ** 2)) / np.i0(12.0),
}
for _n, _f in _WINDOW_FORMULAS.items():
    record(_n, getattr(tt, _n), (F32, F64), _factory_samples(("periodic", (7,), {}), ("symmetric", (6, False), {})),
           (lambda f: lambda L, periodic=True, **kw: f(np.arange(L), L + 1 if periodic else L))(_f),
           tolerances={F32: (1e-5, 1e-6), F64: (1e-12, 1e-13)})


def _scipy_window(name, **fixed):
    def reference(M, sym=True, **kw):
        from scipy.signal import windows
        args = [kw[k] for k in ("a", "alpha", "beta", "std") if k in kw]
        if name == "exponential":
            return windows.exponential(M, kw.get("center"), kw.get("tau", 1.0), sym=sym)
        return getattr(windows, name)(M, *args, sym=sym)
    return reference


_SIGNAL = {"bartlett": {}, "blackman": {}, "cosine": {}, "exponential": {"tau": 2.5}, "gaussian": {"std": 1.5},
           "general_cosine": {"a": [0.5, 0.3, 0.2]}, "general_hamming": {"alpha": 0.7}, "hamming": {}, "hann": {},
           "kaiser": {"beta": 6.0}, "nuttall": {}}
for _n, _kw in _SIGNAL.items():
    record(f"signal.windows.{_n}", getattr(tt.signal.windows, _n), (F32, F64), _factory_samples(
        ("symmetric", (7,), _kw), ("periodic", (6,), dict(_kw, sym=False))), _scipy_window(_n),
        tolerances={F32: (1e-5, 1e-6), F64: (1e-12, 1e-13)})


# --------------------------------------------------------------------------- gradient cases (float64)
# The table entries of the family (the in-place views, unsafe_split): gradcheck and gradgradcheck
# on both devices (tests/test_op_gradients.py).
GRAD_CASES.update({
    "unsafe_split": lambda d: (lambda x: tt.unsafe_split(x, 2, 1), (_randn((1, 3), d),), {}),
    "t_": lambda d: (lambda x: (x * 1).t_(), (_randn((1, 2), d),), {}),
    "transpose_": lambda d: (lambda x: (x * 1).transpose_(0, 2), (_randn((2, 1, 1), d),), {}),
    "squeeze_": lambda d: (lambda x: (x * 1).squeeze_(), (_randn((2, 1), d),), {}),
    "unsqueeze_": lambda d: (lambda x: (x * 1).unsqueeze_(1), (_randn((2,), d),), {}),
    "as_strided_": lambda d: (lambda x: (x * 1).as_strided_((2,), (2,), 1), (_randn((2, 2), d),), {}),
})

# The composites: their gradients are their primitives' (each checked on both devices above and
# in tests/opinfo.py), so what is specified here is the wiring (named nodes, views, casts, sums
# of broadcast dims): gradcheck and gradgradcheck on cpu in tests/test_shape_ops.py. On the
# emulated device a composite's numerical Jacobian costs seconds (a launch per primitive per
# perturbed element) to re-test kernels the parity records already cover.
COMPOSITE_GRAD_CASES = {
    "broadcast_to": lambda d: (lambda x: tt.broadcast_to(x, (2, 3, 2)), (_randn((3, 1), d),), {}),
    "broadcast_tensors": lambda d: (lambda x, y: tt.broadcast_tensors(x, y), (_randn((3, 1), d), _randn((2,), d)), {}),
    "atleast_3d": lambda d: (lambda x: tt.atleast_3d(x), (_randn((3,), d),), {}),
    "hsplit": lambda d: (lambda x: tt.hsplit(x, [1]), (_randn((2, 3), d),), {}),
    "column_stack": lambda d: (lambda x, y: tt.column_stack([x, y]), (_randn((2,), d), _randn((2, 2), d)), {}),
    "dstack": lambda d: (lambda x, y: tt.dstack([x, y]), (_randn((2,), d), _randn((2,), d)), {}),
    "ravel": lambda d: (tt.ravel, (_randn((3, 2), d).t(),), {}),
    "tile": lambda d: (lambda x: tt.tile(x, (2, 1)), (_randn((2, 2), d),), {}),
    "rot90": lambda d: (lambda x: tt.rot90(x, 3), (_randn((2, 3), d),), {}),
    "kron": lambda d: (tt.kron, (_randn((2, 2), d), _randn((2,), d)), {}),
    "block_diag": lambda d: (lambda x, y: tt.block_diag(x, y), (_randn((2, 1), d), _randn((2,), d)), {}),
    "meshgrid": lambda d: (lambda x, y: tt.meshgrid(x, y, indexing="xy"), (_randn((2,), d), _randn((3,), d)), {}),
    "cartesian_prod": lambda d: (tt.cartesian_prod, (_randn((2,), d), _randn((3,), d)), {}),
    "combinations": lambda d: (tt.combinations, (_randn((3,), d),), {}),
    "diag": lambda d: (lambda x: tt.diag(tt.diag(x, 1), 1), (_randn((3,), d),), {}),
    "diagflat": lambda d: (tt.diagflat, (_randn((2, 2), d),), {}),
    "repeat_interleave": lambda d: (lambda x: tt.repeat_interleave(x, 2, dim=0), (_randn((2, 2), d),), {}),
    "repeat_interleave_tensor": lambda d: (lambda x: tt.repeat_interleave(x, tt.tensor([0, 2, 1], device=d)),
                                           (_randn((3,), d),), {}),
    "unsafe_chunk": lambda d: (lambda x: tt.unsafe_chunk(x, 2), (_randn((3, 1), d),), {}),
    "diagonal_copy": lambda d: (lambda x: tt.diagonal_copy(x, -1), (_randn((3, 2), d),), {}),
    "narrow_copy": lambda d: (lambda x: tt.narrow_copy(x, 1, 1, 2), (_randn((2, 3), d),), {}),
    "unfold_copy": lambda d: (lambda x: tt.unfold_copy(x, 0, 2, 1), (_randn((3,), d),), {}),
    "expand_copy": lambda d: (lambda x: tt.expand_copy(x, (2, 2)), (_randn((2,), d),), {}),
    "view_copy": lambda d: (lambda x: tt.view_copy(x, (6,)), (_randn((3, 2), d).t(),), {}),
    "split_copy": lambda d: (lambda x: tt.split_copy(x, 2), (_randn((3,), d),), {}),
    "as_strided_copy": lambda d: (lambda x: tt.as_strided_copy(x, (2, 2), (1, 3), 1), (_randn((7,), d),), {}),
    "H": lambda d: (lambda x: x.H, (_randn((2, 3), d),), {}),
    "slice": lambda d: (lambda x: tt.ops.aten.slice(x, 1, 0, None, 2), (_randn((2, 3), d),), {}),
    "einsum": lambda d: (lambda a, b, c: tt.einsum("ij,jk,kk->i", a, b, c),
                         (_randn((2, 3), d), _randn((3, 2), d), _randn((2, 2), d)), {}),
    "einsum_broadcast": lambda d: (lambda a, b: tt.einsum("...ij,jk->...ik", a, b),
                                   (_randn((2, 1, 2), d), _randn((2, 3), d)), {}),
    "tensordot": lambda d: (lambda a, b: tt.tensordot(a, b, ([0], [1])), (_randn((2, 2), d), _randn((3, 2), d)), {}),
    "inner": lambda d: (tt.inner, (_randn((2, 2), d), _randn((3, 2), d)), {}),
    "vdot": lambda d: (tt.vdot, (_randn((3,), d), _randn((3,), d)), {}),
    "addmv": lambda d: (lambda i, m, v: tt.addmv(i, m, v, beta=0.5, alpha=2), (_randn((2,), d), _randn((2, 3), d),
                                                                                 _randn((3,), d)), {}),
    "addr": lambda d: (lambda i, a, b: tt.addr(i, a, b, alpha=-2), (_randn((1, 2), d), _randn((3,), d),
                                                                   _randn((2,), d)), {}),
    "addbmm": lambda d: (tt.addbmm, (_randn((2, 2), d), _randn((2, 2, 2), d), _randn((2, 2, 2), d)), {}),
    "chain_matmul": lambda d: (tt.chain_matmul, (_randn((2, 3), d), _randn((3, 1), d), _randn((1, 2), d)), {}),
    "addmv_": lambda d: (lambda i, m, v: (i * 1).addmv_(m, v, alpha=3), (_randn((2,), d), _randn((2, 3), d),
                                                                           _randn((3,), d)), {}),
    "addr_": lambda d: (lambda i, a, b: (i * 1).addr_(a, b, beta=2), (_randn((3, 2), d), _randn((3,), d),
                                                                      _randn((2,), d)), {}),
    "addbmm_": lambda d: (lambda i, a, b: (i * 1).addbmm_(a, b), (_randn((2, 2), d), _randn((2, 2, 2), d),
                                                                  _randn((2, 2, 2), d)), {}),
}
