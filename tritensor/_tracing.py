"""The tracer's switch (a leaf module: stdlib only at import), as _autocast.py's and _dual.py's.

``ACTIVE[0]`` counts the traces running now, over every thread. While it is 0 nothing else here
is read: dispatch checks the counter only on its first-time path (the per-signature fast path is
left while a trace runs, ``on_activate``), and Tensor's conversions to Python values check it
before warning. ``state.tracer`` is this thread's tracer (tritensor/jit/_trace.py) or None;
``state.suspended`` counts the ops running inside one recorded op (an in-place op's internals),
which are not recorded again.
"""
from __future__ import annotations

import functools
import threading
import warnings

ACTIVE = [0]
_listeners = []
_lock = threading.Lock()


class TracerWarning(Warning):
    """torch.jit.TracerWarning: something the trace cannot record (a tensor read as a Python
    value) was done while tracing."""


class _State(threading.local):
    def __init__(self):
        self.tracer = None
        self.suspended = 0


state = _State()


def on_activate(hook):
    """``hook(active)`` runs when the first trace starts (True) and the last one ends (False)."""
    _listeners.append(hook)


def trace_started():
    with _lock:
        ACTIVE[0] += 1
        first = ACTIVE[0] == 1
    if first:
        for hook in _listeners:
            hook(True)


def trace_ended():
    with _lock:
        ACTIVE[0] -= 1
        last = ACTIVE[0] == 0
    if last:
        for hook in _listeners:
            hook(False)


def warn_conversion(what, stacklevel=3):
    """torch's TracerWarning for a tensor read as a Python value during a trace (what: "boolean",
    "float", "integer", "index", "number", "list")."""
    if state.tracer is None or state.suspended:
        return
    warnings.warn(
        f"Converting a tensor to a Python {what} might cause the trace to be incorrect. We can't "
        "record the data flow of Python values, so this value will be treated as a constant in the "
        "future. This means that the trace might not generalize to other inputs!",
        TracerWarning, stacklevel=stacklevel)


def warn_shape_use(message):
    """torch's TracerWarning for len() of, or iteration over, a tensor during a trace."""
    if state.tracer is not None and not state.suspended:
        warnings.warn(message, TracerWarning, stacklevel=3)


def warn_random():
    """A random draw during a trace that no recorded random op made (an in-place fill such as
    ``t.uniform_()``, a draw inside another op, an explicit ``generator=``): the graph would replay
    this call's numbers as constants. Warn, so that tt.compile falls back to eager for the call
    (its warned-trace rule) and tt.jit.trace users see why the graph would not re-draw. The random
    functions marked ``random_op`` (dropout, rand, randn ...) are recorded instead."""
    if state.tracer is not None and not state.suspended:
        warnings.warn("A random op ran while tracing: tritensor's trace keeps its values as constants (it "
                      "does not record random ops), so the traced graph would repeat this call's random "
                      "numbers on every call.", TracerWarning, stacklevel=4)


RANDOM_FNS = set()      # the qualified names (tt.<name>) of the functions random_op records


def random_op(qualname, inplace=False):
    """Mark a public random function (``qualname``: its name under tt, "rand",
    "nn.functional.dropout"): while a trace runs, a call is recorded as one node calling it
    (``aten::<qualname>``, call "fn"), so the graph draws fresh numbers from the generator on each
    run, in eager's order, as torch's trace records aten::dropout / aten::rand. Its internals are
    not recorded. A call with an explicit ``generator=`` or ``out=`` is not recorded (a graph
    cannot hold a Generator; out= writes an argument): it draws as before, with warn_random's
    TracerWarning. ``inplace``: a fill of its first argument (``t.uniform_()``), recorded as that
    method when the graph computes ``t`` (a fill of a tensor the graph holds as a constant is not:
    every call would refill one shared tensor)."""
    RANDOM_FNS.add(qualname)

    def deco(fn):
        import inspect
        defaults = {p.name: p.default for p in inspect.signature(fn).parameters.values()}

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            tracer = state.tracer if ACTIVE[0] else None
            if tracer is None or state.suspended or kwargs.get("generator") is not None or \
                    kwargs.get("out") is not None or inplace and not tracer.computes(args[0]):
                return fn(*args, **kwargs)
            tracer.before_call(args)
            state.suspended += 1
            try:
                out = fn(*args, **kwargs)
            finally:
                state.suspended -= 1
            # keywords left at their defaults are not recorded (the generated tt.rand passes all)
            kwargs = {k: v for k, v in kwargs.items() if defaults.get(k, kwargs) is not v}
            tracer.record_call(qualname, args, kwargs, out, call="method" if inplace else "fn")
            return out
        return wrapper
    return deco


def record(op, args, attrs, out):
    """dispatch()'s hook: this thread's tracer records ``op(*args, **attrs) -> out``."""
    tracer = state.tracer
    if tracer is not None and not state.suspended:
        tracer.record(op, args, attrs, out)


def inplace(op, self, others, attrs, run):
    """dispatch_inplace()'s hook: ``run`` (dispatch_inplace) with recording suspended, then one
    node for the in-place op."""
    tracer = state.tracer
    if tracer is None or state.suspended:
        return run(op, self, *others, **attrs)
    state.suspended += 1
    try:
        out = run(op, self, *others, **attrs)
    finally:
        state.suspended -= 1
    tracer.record_inplace(op, self, others, attrs)
    return out
