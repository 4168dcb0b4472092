"""OpInfo records of tt.masked (tritensor/ops/masked.py): torch.masked's 19 masked reductions and
normalizations, each a composite of where + the plain op, checked against NumPy definitions of
torch.masked's semantics written here (the masked-out elements left out of the reduction; the
values torch gives a slice with no valid element: sum 0, prod 1, amax -inf or the integer
minimum, mean/var/median/softmax NaN ...).

Samples follow op_db's ``sample_inputs_masked_*`` (a broadcast mask with a fully masked-out row,
a dim tuple with keepdim, dim=None, no mask, a 0-d input, dtype=, a step-sliced input); the cpu
runs them in every dtype op_db lists for the op (bool, uint8, int8, int16, int32, int64 and the
four floats, no complex); the emulated cuda runs one float32 sample (a transposed (9, 13) input
whose broadcast mask masks a whole row out) and a size-0 one in the other dtypes: its kernels
are sum's, amax's, softmax's ..., checked by their own records. torch's recorded answers
(op_db's samples, gradients, error texts): tests/test_masked.py.
"""
from __future__ import annotations

import math

import numpy as np

import tritensor as tt
from opinfo import CPU_ONLY_GRADGRAD, GRAD_CASES, SampleInput, record, rng_for

BOOL = (tt.bool,)
INTS = (tt.uint8, tt.int8, tt.int16, tt.int32, tt.int64)
FLOATS = (tt.float16, tt.bfloat16, tt.float32, tt.float64)
# the masked sums of float16/bfloat16 squares (var/std) and norms round at each op, as torch's do
TOLERANCES = {tt.float16: (5e-3, 5e-3), tt.bfloat16: (3e-2, 3e-2), tt.float32: (2e-5, 1e-5),
              tt.float64: (1e-10, 1e-12)}


def _values(shape, dtype, rng, domain):
    if dtype is tt.bool:
        return rng.integers(0, 2, size=shape).astype(bool)
    if not dtype.is_floating_point:
        lo, hi = (-3, 4) if domain == "near1" else (-20, 20)
        return rng.integers(0 if dtype is tt.uint8 else lo, hi, size=shape)
    if domain == "near1":       # products of several neither overflow nor vanish in float16
        return rng.uniform(0.6, 1.6, size=shape) * rng.choice([-1, 1], size=shape)
    return rng.standard_normal(shape) * 3


def _mask(rng, shape, device, false_row=None):
    m = rng.integers(0, 4, size=shape) > 0          # mostly valid
    if false_row is not None:
        m[false_row] = False                        # a slice with no valid element
    return tt.tensor(m, device=device)


def _samples(name, *, dims="reduce", domain="any", dtype_kw=None, extra=None):
    """Samples ``(x, mask)`` + kwargs. ``dims``: "reduce" (dim tuples/None, keepdim), "one" (an
    int dim, keepdim), "norm" (an int dim, no keepdim: the normalizations)."""
    def gen(device, dtype):
        def make(key, shape):
            return tt.tensor(_values(shape, dtype, rng_for(name, dtype, key), domain), dtype=dtype, device=device)
        rng = rng_for(name, dtype, "mask")
        keep = dict(extra or {}) if dims == "norm" else {"keepdim": True}
        if device != "cpu":
            if dtype is tt.float32:       # one launch each: transposed, a fully masked-out row
                x = make("cuda", (13, 9)).t()
                yield SampleInput((x, _mask(rng, (9, 1), device, false_row=4)), {"dim": 1, **keep}, desc="cuda")
            else:
                yield SampleInput((make("empty", (0, 3)), None), {"dim": 1}, desc="empty")
            return
        x = make("t", (7, 5)).t()                                   # (5, 7), transposed
        yield SampleInput((x, _mask(rng, (5, 1), device, false_row=2)), {"dim": 1, **(extra or {})},
                          desc="broadcast-mask-false-row")
        yield SampleInput((make("sliced", (6, 8))[::2, 1::2], _mask(rng, (3, 4), device)),
                          {"dim": -1, **keep}, desc="sliced-keepdim")
        yield SampleInput((make("none", (3, 5)), None), {"dim": 0, **(extra or {})}, desc="no-mask")
        yield SampleInput((make("empty", (0, 3)), _mask(rng, (3,), device)), {"dim": 1, **(extra or {})}, desc="empty")
        if dims == "reduce":
            yield SampleInput((make("3d", (3, 4, 5)), _mask(rng, (4, 5), device)),
                              {"dim": (0, 2), "keepdim": True}, desc="dim-tuple-keepdim")
            yield SampleInput((make("all", (4, 6)), _mask(rng, (4, 6), device)), {"dim": None}, desc="dim-None")
            yield SampleInput((make("0d", ()), tt.tensor(True, device=device)), {}, desc="0d")
        else:
            yield SampleInput((make("0d", ()), tt.tensor(True, device=device)), {"dim": 0, **(extra or {})}, desc="0d")
        if dtype_kw is not None:
            out = dtype_kw(dtype)
            if out is not None:
                yield SampleInput((make("dtype", (4, 3)), _mask(rng, (4, 3), device, false_row=1)),
                                  {"dim": 1, "dtype": out}, desc=f"dtype={out}", result_dtype=out)
    return gen


def _dims(x, dim):
    if dim is None or dim == ():
        return tuple(range(x.ndim))
    return tuple(d % max(x.ndim, 1) for d in ((dim,) if isinstance(dim, int) else dim))


def _reduce(fill, fn):
    """A NumPy reference: masked-out elements replaced by ``fill(x)``, then ``fn`` over dims."""
    def ref(x, mask, dim=None, keepdim=False, dtype=None):
        x = np.asarray(x, dtype=np.float64 if x.dtype.kind == "f" else np.int64)
        m = np.ones(x.shape, bool) if mask is None else np.broadcast_to(np.asarray(mask, bool), x.shape)
        filled = np.where(m, x, fill(x))
        if x.ndim == 0:
            return fn(filled.reshape(1), 0, False)
        return fn(filled, _dims(x, dim), keepdim)
    return ref


def _identity_for(dtype, low):
    """amax's/amin's fill in the input's dtype: +-inf, or the integer dtype's limits."""
    if dtype.is_floating_point:
        return -np.inf if low else np.inf
    info = tt.iinfo(dtype)
    return info.min if low else info.max


def _amax_reference(low):
    def ref(x, mask, dim=None, keepdim=False, dtype=None):
        fill = _identity_for(_tt_dtype(x), low)
        fn = np.max if low else np.min
        return _reduce(lambda _: fill, lambda v, d, k: fn(v, axis=d, keepdims=k))(x, mask, dim, keepdim)
    return ref


def _tt_dtype(x):
    # the sample's dtype from its NumPy values (to_numpy widens 16-bit floats: the fill is +-inf there)
    return {"bool": tt.bool, "uint8": tt.uint8, "int8": tt.int8, "int16": tt.int16, "int32": tt.int32,
            "int64": tt.int64}.get(x.dtype.name, tt.float32)


def _arg_reference(low):
    def ref(x, mask, dim=None, keepdim=False, dtype=None):
        fill = _identity_for(_tt_dtype(x), low)
        x = np.asarray(x, dtype=np.float64 if x.dtype.kind == "f" else np.int64)
        m = np.ones(x.shape, bool) if mask is None else np.broadcast_to(np.asarray(mask, bool), x.shape)
        v = np.where(m, x, fill)
        fn = np.argmax if low else np.argmin
        if dim is None or x.ndim == 0:
            return np.asarray(fn(v.reshape(-1))).reshape((1,) * x.ndim if keepdim else ())
        return fn(v, axis=dim, keepdims=keepdim)
    return ref


def _count(x, mask, dims, keepdim):
    m = np.ones(x.shape, bool) if mask is None else np.broadcast_to(np.asarray(mask, bool), x.shape)
    if x.ndim == 0:
        return m.reshape(1).sum(0)
    return m.sum(axis=dims, keepdims=keepdim)


def _mean_reference(x, mask, dim=None, keepdim=False, dtype=None):
    total = _reduce(lambda _: 0, lambda v, d, k: v.sum(axis=d, keepdims=k))(x, mask, dim, keepdim)
    return total / _count(np.asarray(x), mask, _dims(np.asarray(x), dim), keepdim)


def _var_reference(sqrt):
    def ref(x, mask, dim=None, keepdim=False, dtype=None, unbiased=None, correction=None):
        x = np.asarray(x, dtype=np.float64)
        dims = _dims(x, dim)
        m = np.ones(x.shape, bool) if mask is None else np.broadcast_to(np.asarray(mask, bool), x.shape)
        xv, mv = (x.reshape(1), m.reshape(1)) if x.ndim == 0 else (x, m)
        dims = (0,) if x.ndim == 0 else dims
        n = mv.sum(axis=dims, keepdims=True)
        mean = np.where(mv, xv, 0).sum(axis=dims, keepdims=True) / n
        total = np.where(mv, (xv - mean) ** 2, 0).sum(axis=dims, keepdims=keepdim and x.ndim > 0)
        c = 1.0 if correction is None else correction
        if unbiased is not None:
            c = 1.0 if unbiased else 0.0
        n = n if keepdim and x.ndim > 0 else n.reshape(total.shape)
        out = total / np.maximum(n - c, 0)
        return np.sqrt(out) if sqrt else out
    return ref


def _median_reference(x, mask, dim=-1, keepdim=False, dtype=None):
    x = np.asarray(x, dtype=np.float64)
    m = np.ones(x.shape, bool) if mask is None else np.broadcast_to(np.asarray(mask, bool), x.shape)
    if x.ndim == 0:
        return x if m else np.float64(np.nan)
    xs, ms = np.moveaxis(x, dim, -1), np.moveaxis(m, dim, -1)
    out = np.full(xs.shape[:-1], np.nan)
    for idx in np.ndindex(out.shape):
        valid = np.sort(xs[idx][ms[idx]])
        if valid.size:
            out[idx] = valid[(valid.size - 1) // 2]         # torch's median: the lower middle value
    return np.expand_dims(out, dim) if keepdim else out


def _logsumexp(v, d, k):
    top = np.max(v, axis=d, keepdims=True)
    top = np.where(np.isfinite(top), top, 0)
    out = np.log(np.sum(np.exp(v - top), axis=d, keepdims=True)) + top
    return out if k else np.squeeze(out, axis=d)


def _norm_reference(x, mask, ord, dim=None, keepdim=False, dtype=None):
    fill = np.inf if ord == -math.inf else 0.0

    def fn(v, d, k):
        a = np.abs(v)
        if ord == math.inf:
            return a.max(axis=d, keepdims=k)
        if ord == -math.inf:
            return a.min(axis=d, keepdims=k)
        if ord == 0:
            return (a != 0).sum(axis=d, keepdims=k).astype(np.float64)
        return (a ** ord).sum(axis=d, keepdims=k) ** (1.0 / ord)
    return _reduce(lambda _: fill, fn)(x, mask, dim, keepdim)


def _softmax_reference(sign=1.0, log=False):
    def ref(x, mask, dim, dtype=None):
        x = np.asarray(x, dtype=np.float64) * sign
        m = np.ones(x.shape, bool) if mask is None else np.broadcast_to(np.asarray(mask, bool), x.shape)
        if x.ndim == 0:
            return np.float64(0.0 if log else 1.0) if m else np.float64(np.nan)
        v = np.where(m, x, -np.inf)
        top = np.max(v, axis=dim, keepdims=True)        # -inf on a fully masked-out slice: NaN below
        e = np.exp(v - top)
        p = e / e.sum(axis=dim, keepdims=True)
        return np.log(p) if log else p
    return ref


def _normalize_reference(x, mask, ord, dim, eps=1e-12, dtype=None):
    x = np.asarray(x, dtype=np.float64)
    m = np.ones(x.shape, bool) if mask is None else np.broadcast_to(np.asarray(mask, bool), x.shape)
    nrm = _norm_reference(x, mask, ord, dim, keepdim=True) if x.ndim else _norm_reference(x, mask, ord)
    return np.where(m, x, 0) / np.maximum(nrm, eps)


def _scan_reference(fill, fn):
    def ref(x, mask, dim, dtype=None):
        x = np.asarray(x, dtype=np.float64 if x.dtype.kind == "f" else np.int64)
        m = np.ones(x.shape, bool) if mask is None else np.broadcast_to(np.asarray(mask, bool), x.shape)
        v = np.where(m, x, fill)
        return fn(v.reshape(1), 0).reshape(()) if x.ndim == 0 else fn(v, dim)
    return ref


def _call(fn):
    """The public function called with the sample's mask as mask=."""
    return lambda x, mask, *args, **kwargs: fn(x, *args, mask=mask, **kwargs)


def _float_dtype(dtype):
    return tt.float64


def _int64(dtype):
    return tt.int64 if not dtype.is_floating_point else tt.float64


_SUM = _reduce(lambda _: 0, lambda v, d, k: v.sum(axis=d, keepdims=k))
_PROD = _reduce(lambda _: 1, lambda v, d, k: v.prod(axis=d, keepdims=k))
_ALL = BOOL + INTS + FLOATS
_NUMERIC = INTS + FLOATS


def _masked(name, dtypes, reference, **sample_fields):
    fn = getattr(tt.masked, name)
    return record(f"masked.{name}", _call(fn), dtypes, _samples(name, **sample_fields), reference,
                  tolerances=dict(TOLERANCES))


_masked("sum", _ALL, _SUM, dtype_kw=_int64)
_masked("prod", _ALL, _PROD, domain="near1", dtype_kw=_int64)
_masked("amax", _NUMERIC, _amax_reference(True), dtype_kw=_float_dtype)
_masked("amin", _NUMERIC, _amax_reference(False), dtype_kw=_float_dtype)
_masked("argmax", _NUMERIC, _arg_reference(True), dims="one")
_masked("argmin", _NUMERIC, _arg_reference(False), dims="one")
_masked("mean", FLOATS, _mean_reference, dtype_kw=_float_dtype)
_masked("median", FLOATS, _median_reference, dims="one")
# logsumexp's dtype= casts the result computed in the input's dtype: tests/test_masked.py's case
_masked("logsumexp", FLOATS, _reduce(lambda _: -np.inf, _logsumexp))
_masked("var", _NUMERIC, _var_reference(False), dtype_kw=_float_dtype)
_masked("std", _NUMERIC, _var_reference(True), dtype_kw=_float_dtype)
_masked("cumsum", _NUMERIC, _scan_reference(0, np.cumsum), dims="norm")
_masked("cumprod", _NUMERIC, _scan_reference(1, np.cumprod), dims="norm", domain="near1")
_masked("softmax", FLOATS, _softmax_reference(), dims="norm")
_masked("log_softmax", FLOATS, _softmax_reference(log=True), dims="norm")
_masked("softmin", FLOATS, _softmax_reference(-1.0), dims="norm")
# ord 2 here; op_db's other orders (1, inf, -inf, 0 ...) replay in tests/test_masked.py
record("masked.norm", lambda x, mask, **kw: tt.masked.norm(x, 2.0, mask=mask, **kw), FLOATS,
       _samples("norm", dtype_kw=_float_dtype),
       lambda x, mask, **kw: _norm_reference(x, mask, 2.0, **kw), tolerances=dict(TOLERANCES))
# eps=1e-3: the default 1e-12 is 0 in float16, where a fully masked-out slice gives 0/0 = NaN
# as in torch (tests/test_masked.py's case); 1e-3 gives the slice's zeros in every dtype
record("masked.normalize", lambda x, mask, **kw: tt.masked.normalize(x, 2.0, mask=mask, **kw), FLOATS,
       _samples("normalize", dims="norm", extra={"eps": 1e-3}),
       lambda x, mask, dim, **kw: _normalize_reference(x, mask, 2.0, dim, **kw), tolerances=dict(TOLERANCES))


def _logaddexp_samples(device, dtype):
    rng = rng_for("logaddexp", dtype)

    def make(shape):
        return tt.tensor(rng.standard_normal(shape) * 3, dtype=dtype, device=device)
    if device != "cpu" and dtype is not tt.float32:
        yield SampleInput((make((0, 3)), make((0, 3)), None, None), desc="empty")
        return
    # both masked out at one place: -inf there
    yield SampleInput((make((13, 9)).t(), make((9, 1)), _mask(rng, (9, 13), device), _mask(rng, (9, 1), device)),
                      desc="broadcast-masks")
    if device == "cpu":
        yield SampleInput((make((4, 5)), make((4, 5)), None, None), desc="no-masks")
        yield SampleInput((make(()), make((3,)), tt.tensor(False, device=device), None), desc="0d-masked-out")


def _logaddexp_reference(x, y, mx, my):
    x, y = np.asarray(x, np.float64), np.asarray(y, np.float64)
    x = x if mx is None else np.where(np.asarray(mx, bool), x, -np.inf)
    y = y if my is None else np.where(np.asarray(my, bool), y, -np.inf)
    return np.logaddexp(x, y)


# first derivative only: at a masked-out element (the -inf fill) logaddexp's second derivative is
# NaN, and torch's gradgradcheck of torch.masked.logaddexp with a mask fails the same way (checked
# with torch 2.13); plain logaddexp's second derivative is its own record's
record("masked.logaddexp", lambda x, y, mx, my: tt.masked.logaddexp(x, y, input_mask=mx, other_mask=my), FLOATS,
       _logaddexp_samples, _logaddexp_reference, tolerances=dict(TOLERANCES), gradgradcheck=False)


# --------------------------------------------------------------------------- gradients (float64)
def _grad_input(device, shape=(3, 5), key="x"):
    rng = rng_for("masked-grad", key)
    return tt.tensor(rng.standard_normal(shape) * 2, dtype=tt.float64, device=device, requires_grad=True)


def _grad_mask(device):
    # every row keeps at least three valid elements (var's count - 1 > 0, no NaN slice)
    return tt.tensor([[True, False, True, True, False], [True, True, True, False, True],
                      [False, True, True, True, True]], device=device)


# on the emulated device the cases of three ops run (where's kernel, the reductions', softmax's
# under a mask); the others are the same tritensor ops on every device, their derivatives checked
# on cpu (each costs 5-30 s of interpreted launches)
EMULATED = {"masked.sum", "masked.amax", "masked.softmax"}


def _case(call, shape=(3, 5)):
    def case(device):
        mask = _grad_mask(device)
        return (lambda x: call(x, mask)), (_grad_input(device, shape),), {}
    return case


def _cpu_only(name, case):
    def make(device):
        if name not in EMULATED and device != "cpu" and tt.cuda.is_emulated():
            import pytest
            pytest.skip("the same composite's derivatives are checked on cpu (tests/opinfo_masked.py)")
        return case(device)
    return make


_CASES = {
    "masked.sum": _case(lambda x, m: tt.masked.sum(x, 1, mask=m)),
    "masked.prod": _case(lambda x, m: tt.masked.prod(x, (0, 1), keepdim=True, mask=m[:, :1])),
    "masked.amax": _case(lambda x, m: tt.masked.amax(x, 1, mask=m)),
    "masked.amin": _case(lambda x, m: tt.masked.amin(x, 0, mask=m)),
    "masked.mean": _case(lambda x, m: tt.masked.mean(x, 1, keepdim=True, mask=m)),
    "masked.median": _case(lambda x, m: tt.masked.median(x, 1, mask=m)),
    "masked.logsumexp": _case(lambda x, m: tt.masked.logsumexp(x, 1, mask=m)),
    "masked.var": _case(lambda x, m: tt.masked.var(x, 1, mask=m)),
    "masked.std": _case(lambda x, m: tt.masked.std(x, None, mask=m)),
    "masked.norm": _case(lambda x, m: tt.masked.norm(x, 2.0, 1, mask=m)),
    "masked.cumsum": _case(lambda x, m: tt.masked.cumsum(x, 1, mask=m)),
    "masked.cumprod": _case(lambda x, m: tt.masked.cumprod(x, 1, mask=m)),
    "masked.softmax": _case(lambda x, m: tt.masked.softmax(x, 1, mask=m)),
    # the valid elements only: the masked-out ones are -inf, whose numerical derivative is NaN
    "masked.log_softmax": _case(lambda x, m: tt.masked.log_softmax(x, 1, mask=m)[m]),
    "masked.softmin": _case(lambda x, m: tt.masked.softmin(x, 1, mask=m)),
    "masked.normalize": _case(lambda x, m: tt.masked.normalize(x, 2.0, 1, mask=m)),
    "masked.logaddexp": lambda device: (
        # no element masked out in both operands (-inf there: no numerical derivative)
        lambda x, y: tt.masked.logaddexp(x, y, input_mask=_grad_mask(device),
                                         other_mask=tt.tensor([True, True, False, True, True], device=device)),
        (_grad_input(device, key="x"), _grad_input(device, key="y")), {}),
}
GRAD_CASES.update({name: _cpu_only(name, case) for name, case in _CASES.items()})
CPU_ONLY_GRADGRAD.update(name for name in _CASES if name not in EMULATED)
