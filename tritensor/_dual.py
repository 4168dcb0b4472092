"""Forward-mode AD's switch (a leaf module: stdlib only at import).

``ACTIVE[0]`` counts the dual levels open now (torch 2.13 supports one). While it is 0 nothing
on the hot path looks at forward AD: dispatch's per-signature fast path is left untouched (ops
leave it only while a level is open, ``on_activate``), and the few places that read ``ACTIVE``
(the first-time path, views, in-place ops, aliases) do so with one list read, no call.

``state.suspended`` counts the forward-AD rules running now in this thread: the ops a rule runs
(on tangents and primals) compute no tangents of their own, as torch computes a forward
derivative below the forward-AD dispatch key.
"""
from __future__ import annotations

import threading
import weakref

ACTIVE = [0]
_listeners = []
# every tensor given a tangent at the open level (id -> weak reference): their tangents are
# dropped when it exits. (Not a WeakSet: a set compares members with ==, elementwise on tensors.)
tangented: dict = {}


def remember(t):
    key = id(t)

    def forget(ref, key=key):
        if tangented.get(key) is ref:
            del tangented[key]
    tangented[key] = weakref.ref(t, forget)


class _State(threading.local):
    suspended = 0


state = _State()


def on_activate(hook):
    """``hook(active)`` runs when a level opens (True) and when it closes (False)."""
    _listeners.append(hook)


def level_entered():
    ACTIVE[0] += 1
    for hook in _listeners:
        hook(True)


def level_exited():
    ACTIVE[0] -= 1
    for ref in list(tangented.values()):
        t = ref()
        if t is not None:
            t._fw_tangent = None
    tangented.clear()
    for hook in _listeners:
        hook(False)
