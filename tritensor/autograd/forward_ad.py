"""tt.autograd.forward_ad: forward-mode automatic differentiation (torch.autograd.forward_ad).

A dual tensor carries a tangent next to its value; every op computes its output's tangent from
its inputs' tangents (the Jacobian-vector product) as it runs, so ``unpack_dual(f(make_dual(x,
v))).tangent`` is J_f(x) v after one forward pass::

    with tt.autograd.forward_ad.dual_level():
        y = f(fwAD.make_dual(x, v))
        jvp = fwAD.unpack_dual(y).tangent

As torch 2.13: one level at a time (a nested ``enter_dual_level`` raises), tangents are dropped
when the level exits, ``make_dual`` returns a view of its primal whose tangent is the given one
(copied into the primal's layout where the layouts differ), views of a dual tensor have the same
view of its tangent, and an in-place op updates the tangent in place (a view's in-place write
gives its base a tangent, zero elsewhere).

Where the rules live: next to the backward rules, as each table entry's ``jvp`` (ops/table.py):
a function ``jvp(ctx, *tangents)`` (ctx reads the inputs, attributes and ``ctx.out`` as a
backward's ctx does; a tangent is None for an input without one), or one of the derivations
below. Composite ops get forward AD from the primitives they run; an op with a backward but no
forward rule raises torch's NotImplementedError; an op with no derivative (argmax, floor_divide
...) gives its output no tangent. A rule may return None for a zero tangent.

  DIAGONAL   an elementwise op: its Jacobian is diagonal (per element a 1x1 real matrix, which
             is its own transpose), so the backward fed the tangent as the gradient IS the
             forward derivative. The operands are first broadcast to the output's shape, so
             the backward's reduction to an input's shape is the identity.
  LINEAR     the op is linear in its tensor operands (sum, cat, index, casts ...): the tangent
             is the op itself applied to the tangents (zeros for operands without one).
  BILINEAR   linear in each of its two operands (mm, bmm, matmul): op(tx, y) + op(x, ty).
  FROM_BACKWARD  any other op whose backward is differentiable: the backward J^T u is linear
             in the cotangent u, so J t = d/du <J^T u, t> (the double-backward trick, run on
             the backward rule alone; real dtypes). Factorizations recorded as formula nodes
             (ops/_linalg.record_formula) get their tangents the same way.

dispatch() calls ``apply_rule`` from its first-time path only: while a level is open the ops
leave the per-signature fast path (``_dual.on_activate``), so no dual level costs nothing.
"""
from __future__ import annotations

import functools
from typing import NamedTuple, Optional

from .. import _dual
from ..tensor import Tensor

__all__ = ["UnpackedDualTensor", "enter_dual_level", "exit_dual_level", "make_dual", "unpack_dual",
           "dual_level"]

DIAGONAL, LINEAR, BILINEAR, FROM_BACKWARD = "diagonal", "linear", "bilinear", "from_backward"

_current_level = -1

NOT_IMPLEMENTED = (
    "Trying to use forward AD with {} that does not support it because it has not been implemented "
    "yet.\nPlease file an issue to PyTorch at https://github.com/pytorch/pytorch/issues/new?template="
    "feature-request.yml so that we can prioritize its implementation or submit a PR adding the "
    "implementation to derivatives.yaml")


# the ops torch 2.13 has no forward derivative for either, by the name its error gives
TORCH_NAMES = {"pdist": "_pdist_forward", "pdist_backward": "_pdist_backward", "cdist": "_cdist_forward",
               "cdist_backward": "_cdist_backward", "ctc_loss": "_ctc_loss", "ctc_loss_backward": "_ctc_loss_backward",
               "sparse_mm": "_sparse_addmm", "flash_attention_forward": "_scaled_dot_product_flash_attention_for_cpu"}


# --------------------------------------------------------------------------- the public API
def enter_dual_level():
    """Open a forward-AD level (torch.autograd.forward_ad.enter_dual_level); returns its number."""
    global _current_level
    if _dual.ACTIVE[0]:
        raise RuntimeError("Nested forward mode AD is not supported at the moment")
    _dual.level_entered()
    _current_level = 0
    return 0


def exit_dual_level(*, level=None):
    """Close the last level; every tangent made at it is dropped."""
    global _current_level
    if level is None:
        level = _current_level
    if level != _current_level:
        raise RuntimeError("Trying to exit a forward AD level that was not the last one that was created. "
                           "This is not supported.")
    if level < 0:
        raise RuntimeError("Dual level must be a positive number.")
    _dual.level_exited()
    _current_level = level - 1


class dual_level:
    """Context manager (and decorator) of one forward-AD level: ``with dual_level(): ...``."""

    def __enter__(self):
        return enter_dual_level()

    def __exit__(self, *exc):
        exit_dual_level()
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self.__class__():
                return fn(*args, **kwargs)
        return wrapper


class UnpackedDualTensor(NamedTuple):
    """unpack_dual's result: the primal (a view of the dual tensor) and its tangent (or None)."""
    primal: Tensor
    tangent: Optional[Tensor]


def make_dual(tensor, tangent, *, level=None):
    """A view of ``tensor`` whose tangent is ``tangent`` (as it is when its layout is
    ``tensor``'s, otherwise a copy in that layout). Differentiable in reverse mode as a view."""
    if level is None:
        level = _current_level
    if level < 0:
        raise RuntimeError("Trying to create a dual Tensor for forward AD but no level exists, make sure to "
                           "enter_dual_level() first.")
    if not (tensor.is_floating_point() or tensor.is_complex()):
        raise ValueError(f"Expected primal to be floating point or complex, but got: {tensor.dtype}")
    if not (tangent.is_floating_point() or tangent.is_complex()):
        raise ValueError(f"Expected tangent to be floating point or complex, but got: {tangent.dtype}")
    if level != _current_level:
        raise RuntimeError("Invalid level given to _make_dual")
    if tangent_of(tensor) is not None:
        raise RuntimeError("Making a dual Tensor based on a Tensor that already has a forward gradient at the "
                           f"same level {level} is not supported.")
    if tuple(tangent.shape) != tuple(tensor.shape):
        raise RuntimeError(
            "Trying to set a forward gradient that has a different size than that of the original Tensor, "
            f"this is not supported. Tensor is of size {list(tensor.shape)} while the given forward "
            f"gradient is of size {list(tangent.shape)}.")
    if tangent.device != tensor.device:
        raise RuntimeError(
            "Trying to set a forward gradient that has a different device than that of the original Tensor, "
            f"this is not supported. Tensor is on {tensor.device} while the given forward gradient is on "
            f"{tangent.device}.")
    with _suspended():
        dual = tensor.view(tensor.shape)
    _set(dual, tangent)
    return dual


def unpack_dual(tensor, *, level=None):
    """(primal, tangent) of a dual tensor: the primal a view of ``tensor`` without the tangent,
    the tangent as it is (None for a tensor without one, or outside any level)."""
    if level is None:
        level = _current_level
    if level < 0:
        return UnpackedDualTensor(tensor, None)
    if not isinstance(tensor, Tensor):
        raise TypeError(f"_unpack_dual(): argument 'dual' (position 1) must be Tensor, not {type(tensor).__name__}")
    if level != _current_level:
        raise RuntimeError("Invalid level given to _fw_primal")
    tangent = tangent_of(tensor)
    with _suspended():
        primal = tensor.view(tensor.shape)
    return UnpackedDualTensor(primal, tangent)


# --------------------------------------------------------------------------- tangent storage
class _suspended:
    """Ops run inside compute no tangents (a rule's own arithmetic, the primal of an in-place op)."""

    def __enter__(self):
        _dual.state.suspended += 1

    def __exit__(self, *exc):
        _dual.state.suspended -= 1


def tangent_of(t):
    """``t``'s tangent at the open level: its own, or else the same view of its base's tangent
    (a view made before an in-place write gave the base one)."""
    g = t._fw_tangent
    if g is not None:
        return g
    base = t._base
    if base is not None and base._fw_tangent is not None:
        bg = base._fw_tangent
        with _suspended():
            return bg.as_strided(t._shape, t._stride, bg._offset + t._offset - base._offset)
    return None


def _same_layout(t, g):
    return g._shape == t._shape and g._stride == t._stride


def _set(t, g):
    """Give ``t`` the tangent ``g``: as it is when its layout is ``t``'s (so views of ``t`` can
    take the same view of it), else a copy in ``t``'s layout."""
    if not _same_layout(t, g):
        g = _in_layout_of(t, g)
    t._fw_tangent = g
    _dual.remember(t)


def _in_layout_of(t, g):
    """A copy of ``g`` (in g's dtype) with ``t``'s shape, strides and storage offset (torch's
    new_with_same_meta)."""
    from ..ops.creation import zeros
    extent = t._offset + 1 + sum((s - 1) * abs(st) for s, st in zip(t._shape, t._stride) if s > 0)
    with _suspended():
        if 0 in t._shape:
            extent = t._offset
        flat = zeros(max(extent, 0), dtype=g.dtype, device=g.device)
        out = flat.as_strided(t._shape, t._stride, t._offset)
        out.copy_(g)            # (recorded when g requires grad: reverse over forward still works)
    return out


# --------------------------------------------------------------------------- the rules
class JvpContext:
    """What a forward rule sees, as a backward's ctx: ``ctx.<arg name>`` (the primal operand,
    a scalar for a number), ``ctx.<attribute>``, ``ctx.out``, ``ctx.input_meta``,
    ``ctx.needs_input_grad`` (here: which operands have a tangent)."""

    def __init__(self, op, args, attrs, out, needs):
        d = self.__dict__
        d.update(attrs)
        self.attrs = dict(attrs)
        for name, a in zip(op.args, args):
            d[name] = a
            if not isinstance(a, Tensor):
                self.attrs[name] = a
        if op.outputs and isinstance(out, tuple):
            for name, o in zip(op.outputs, out):
                d[name] = o
        self.out = out
        self.needs_input_grad = needs
        self.input_meta = tuple((a._shape, a.dtype, a._storage.device) if isinstance(a, Tensor) else None
                                for a in args)

    def saved(self, name):
        return getattr(self, name)


def _tangent_arg(a):
    if isinstance(a, Tensor):
        return tangent_of(a)
    if isinstance(a, (tuple, list)) and a and isinstance(a[0], Tensor):
        ts = [tangent_of(x) if isinstance(x, Tensor) else None for x in a]
        return ts if any(t is not None for t in ts) else None
    return None


def _floating(t):
    return t.dtype.is_floating_point or t.dtype.is_complex


def apply_rule(op, out, args, attrs):
    """Give ``out`` (a tuple for a multi-output entry) its tangent from ``args``' tangents by
    ``op``'s forward rule. dispatch() calls it while a level is open."""
    if _dual.state.suspended:
        return
    tangents = [_tangent_arg(a) for a in args]
    if all(t is None for t in tangents):
        return
    outs = out if type(out) is tuple else (out,)
    if not any(_floating(o) for o in outs):
        return
    rule = op.jvp
    if rule is None:
        if op.backward is None:
            return          # no derivative at all: the output carries no tangent (torch's histc ...)
        raise NotImplementedError(NOT_IMPLEMENTED.format(TORCH_NAMES.get(op.name, op.name)))
    with _suspended():
        result = _run_rule(op, rule, out, args, attrs, tangents)
    results = result if type(out) is tuple else (result,)
    for o, g in zip(outs, results):
        if g is None and _floating(o):       # a rule's None: the tangent is zero
            from ..ops.creation import zeros_like
            with _suspended():
                g = zeros_like(o)
        if g is not None and _floating(o):
            if g.dtype is not o.dtype and _floating(g):
                with _suspended():
                    g = g.to(o.dtype)
            _set(o, g)


def _run_rule(op, rule, out, args, attrs, tangents):
    if callable(rule):
        ctx = JvpContext(op, args, attrs, out, tuple(t is not None for t in tangents))
        return rule(ctx, *tangents)
    if rule == DIAGONAL:
        return _diagonal(op, out, args, attrs, tangents)
    if rule == LINEAR:
        return _linear(op, args, attrs, tangents)
    if rule == BILINEAR:
        from ..ops.dispatch import dispatch
        x, y = args
        tx, ty = tangents
        a = dispatch(op, tx, y, **attrs) if tx is not None else None
        b = dispatch(op, x, ty, **attrs) if ty is not None else None
        return b if a is None else (a if b is None else a + b)
    if rule == FROM_BACKWARD:
        return _from_backward(op, out, args, attrs, tangents)
    raise ValueError(f"op {op.name!r}: unknown forward rule {rule!r}")


def _real_only(op, out, tangents):
    outs = out if type(out) is tuple else (out,)
    if any(o.dtype.is_complex for o in outs) or any(
            t is not None and not isinstance(t, list) and t.dtype.is_complex for t in tangents):
        raise NotImplementedError(
            f"forward AD of {op.name} on complex tensors is not implemented in tritensor (its forward rule is "
            "derived from the backward, which holds for real dtypes only)")


def _diagonal(op, out, args, attrs, tangents):
    _real_only(op, out, tangents)
    shape = out._shape
    args = tuple(a.expand(shape) if isinstance(a, Tensor) and a._shape != shape else a for a in args)
    total = None
    n = len(args)
    for i, t in enumerate(tangents):
        if t is None:
            continue
        if t._shape != shape:
            t = t.expand(shape)
        ctx = JvpContext(op, args, attrs, out, tuple(j == i for j in range(n)))
        grads = op.backward(ctx, t)
        if not isinstance(grads, tuple):
            grads = (grads,)
        g = grads[i]
        if g is None:
            continue
        total = g if total is None else total + g
    if total is None:
        from ..ops.creation import zeros_like
        return zeros_like(out)
    if total._shape != shape:
        total = total.expand(shape)
    return total


def _linear(op, args, attrs, tangents):
    from ..ops.creation import zeros_like
    from ..ops.dispatch import dispatch
    targs = []
    for a, t in zip(args, tangents):
        if isinstance(a, Tensor):       # (an index or mask operand is kept as it is)
            targs.append(t if t is not None else (zeros_like(a) if _floating(a) else a))
        elif isinstance(a, (tuple, list)) and a and isinstance(a[0], Tensor):
            ts = t if t is not None else [None] * len(a)
            targs.append(type(a)(g if g is not None else (zeros_like(x) if _floating(x) else x)
                                 for x, g in zip(a, ts)))
        else:
            targs.append(a)
    return dispatch(op, *targs, **attrs)


def _from_backward(op, out, args, attrs, tangents):
    """J t from the backward rule: J^T u is linear in u, so grad_u <J^T u, t> = J t."""
    from ..ops.creation import ones_like, zeros_like
    from . import grad
    from .grad_mode import enable_grad
    from .graph import _fit
    _real_only(op, out, tangents)
    outs = out if type(out) is tuple else (out,)
    # differentiable in reverse mode only where something asks for it (reverse over forward)
    graph = any(isinstance(a, Tensor) and a.requires_grad for a in args) or any(
        isinstance(t, Tensor) and t.requires_grad for t in tangents)
    prim = args if graph else tuple(a.detach() if isinstance(a, Tensor) else a for a in args)
    with enable_grad():
        # (J^T u is linear in u, so u's value never matters; ones, not zeros: a backward written
        # with log|u| (logcumsumexp's) would give NaN at 0); an empty output (a multi-output
        # backward's gradient nobody asked for) has no tangent to compute
        us = [ones_like(o, requires_grad=True) if o.dtype.is_floating_point and o.numel() else None
              for o in outs]
        detached = tuple(o.detach() for o in outs)
        ctx = JvpContext(op, prim, attrs, detached if type(out) is tuple else detached[0],
                         tuple(t is not None for t in tangents))
        grads = op.backward(ctx, *us)
        if not isinstance(grads, tuple):
            grads = (grads,)
        total = None
        for g, t, meta in zip(grads, tangents, ctx.input_meta):
            if g is None or t is None:
                continue
            g = _fit(g, meta)
            term = (g * t).sum()
            total = term if total is None else total + term
        wanted = [u for u in us if u is not None]
        if total is None or not total.requires_grad:
            got = [None] * len(wanted)
        else:
            got = grad(total, wanted, allow_unused=True, create_graph=graph)
    it = iter(got)
    res = []
    for o, u in zip(outs, us):
        g = next(it) if u is not None else None
        res.append(zeros_like(o) if (g is None and o.dtype.is_floating_point) else g)
    return tuple(res) if type(out) is tuple else res[0]


# --------------------------------------------------------------------------- views, in place
def view_tangent(out, x):
    """A view ``out`` of ``x`` gets the same view of ``x``'s tangent (dispatch's view path)."""
    if _dual.state.suspended:
        return
    g = tangent_of(x)
    if g is None:
        return
    with _suspended():
        vg = g.as_strided(out._shape, out._stride, g._offset + out._offset - x._offset)
    out._fw_tangent = vg
    _dual.remember(out)


def carry(src, dst):
    """``dst``, an alias of ``src`` (a composite's stand-in, its result), gets ``src``'s tangent."""
    g = tangent_of(src)
    if g is not None:
        dst._fw_tangent = g
        _dual.remember(dst)


def write_tangent(self, g):
    """After an in-place op wrote ``self``: its tangent becomes ``g`` (None: zero), in place, so
    every view sharing it sees the change; a view without one first gives its base a zero
    tangent of the base's layout."""
    with _suspended():
        t = tangent_of(self)
        if t is None:
            if g is None:
                return
            base = self._base
            if base is not None:
                _set(base, _zeros_in_layout(base))
                t = tangent_of(self)
            else:
                _set(self, g)
                return
        if g is None:
            t.zero_()
        else:
            t.copy_(g)


def _zeros_in_layout(t):
    from ..ops.creation import zeros
    return _in_layout_of(t, zeros((), dtype=t.dtype, device=t.device).expand(t._shape))


def inplace(op, self, others, attrs, run):
    """An in-place op on dual operands: the tangent of op(self, *others) (computed out of place,
    before self changes), then the write itself with no tangent work, then the tangent update."""
    from ..ops.dispatch import dispatch
    args = (self,) + tuple(others)
    tangents = [_tangent_arg(a) for a in args]
    if all(t is None for t in tangents):
        with _suspended():
            return run(op, self, *others, **attrs)
    with _suspended():
        res = dispatch(op, self, *others, **attrs)
    if res.dtype.is_floating_point or res.dtype.is_complex:
        apply_rule(op, res, args, attrs)
    g = tangent_of(res)
    with _suspended():
        out = run(op, self, *others, **attrs)
    if self.dtype.is_floating_point or self.dtype.is_complex:
        write_tangent(self, g if g is None or g.dtype is self.dtype else g.to(self.dtype))
    return out


def copy_tangent(dst, src, run):
    """copy_/fill_ on dual operands: dst's tangent becomes src's (zero where src has none)."""
    g = _tangent_arg(src) if isinstance(src, Tensor) else None
    t = tangent_of(dst)
    with _suspended():
        out = run()
    if g is None and t is None:
        return out
    if dst.dtype.is_floating_point or dst.dtype.is_complex:
        if g is not None:
            with _suspended():
                g = g.to(dst.dtype).expand(dst._shape)
        write_tangent(dst, g)
    return out


# --------------------------------------------------------------------------- formula nodes
def formula(node_cls, backward, inputs, outputs, save, frozen, attrs):
    """The forward rule of a factorization's formula node (ops/_linalg.record_formula): its
    backward transposed, as FROM_BACKWARD does for a table entry."""
    if _dual.state.suspended:
        return
    tangents = [tangent_of(t) if isinstance(t, Tensor) else None for t in inputs]
    if all(t is None for t in tangents):
        return
    from ..ops.creation import ones_like, zeros_like
    from . import grad
    from .grad_mode import enable_grad
    from .graph import SavedTensor, _fit
    _real_only_tensors(backward.__name__, outputs, tangents)
    wanted = [isinstance(o, Tensor) and o.dtype.is_floating_point and i not in frozen
              for i, o in enumerate(outputs)]
    graph = any(isinstance(a, Tensor) and a.requires_grad for a in inputs) or any(
        t is not None and t.requires_grad for t in tangents)
    meta = tuple((t._shape, t.dtype, t.device) if isinstance(t, Tensor) else None for t in inputs)
    with _suspended(), enable_grad():
        node = node_cls(backward, len(outputs), meta, tuple(t is not None for t in tangents), attrs)
        for key, t in (save or {}).items():
            node._saved[key] = None if t is None else SavedTensor(t if graph else t.detach())
        us = [ones_like(o, requires_grad=True) if w else None for o, w in zip(outputs, wanted)]
        grads = backward(node, *us)
        if not isinstance(grads, tuple):
            grads = (grads,)
        total = None
        for g, t, m in zip(grads, tangents, meta):
            if g is None or t is None:
                continue
            term = (_fit(g, m) * t).sum()
            total = term if total is None else total + term
        live = [u for u in us if u is not None]
        got = grad(total, live, allow_unused=True, create_graph=graph) if (
            total is not None and total.requires_grad) else [None] * len(live)
        it = iter(got)
        for o, u in zip(outputs, us):
            if u is None:
                continue
            g = next(it)
            _set(o, g if g is not None else zeros_like(o))


def _real_only_tensors(name, outputs, tangents):
    if any(isinstance(o, Tensor) and o.dtype.is_complex for o in outputs) or any(
            t is not None and t.dtype.is_complex for t in tangents):
        raise NotImplementedError(
            f"forward AD of {name} on complex tensors is not implemented in tritensor (its forward rule is "
            "derived from the backward, which holds for real dtypes only)")


def elementwise_tangent(rule, input, out):
    """``out``'s tangent from an elementwise gradient rule ``rule(grad)`` of ``input`` (a
    sampler's implicit gradient): a diagonal Jacobian, so the rule fed the tangent."""
    if _dual.state.suspended:
        return
    t = tangent_of(input)
    if t is None:
        return
    with _suspended():
        g = rule(t)
    _set(out, g)


# --------------------------------------------------------------------------- custom Functions
def has_tangents(args):
    return not _dual.state.suspended and any(isinstance(a, Tensor) and tangent_of(a) is not None for a in args)


class suspended_if:
    """``_suspended()`` when ``flag``, else nothing (a custom Function's forward on dual inputs)."""

    def __init__(self, flag):
        self.flag = flag

    def __enter__(self):
        if self.flag:
            _dual.state.suspended += 1

    def __exit__(self, *exc):
        if self.flag:
            _dual.state.suspended -= 1


def function_jvp(cls, ctx, args, outputs):
    """A custom autograd.Function's tangents: its ``jvp(ctx, *input tangents)`` (torch's
    NotImplementedError without one), one per output; ``ctx.saved_tensors`` reads what
    ``save_for_forward`` (else ``save_for_backward``) kept."""
    tangents = [tangent_of(a) if isinstance(a, Tensor) else None for a in args]
    ctx._in_jvp = True
    try:
        with _suspended():
            result = cls.jvp(ctx, *tangents)
    finally:
        ctx._in_jvp = False
    return result if isinstance(result, tuple) else (result,)


def set_output_tangents(outputs, tangents, dirty=()):
    """Give a custom Function's outputs their tangents (an input it modified in place, marked
    dirty, has its tangent updated in place)."""
    dirty_ids = {id(t) for t in dirty}
    for o, g in zip(outputs, tangents):
        if not isinstance(o, Tensor) or g is None or not _floating(o):
            continue
        if id(o) in dirty_ids:
            write_tangent(o, g)
        else:
            _set(o, g)
