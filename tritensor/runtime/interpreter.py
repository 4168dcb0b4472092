"""The emulated device's speed: Triton's interpreter without its redundant re-patching.

Under ``TRITON_INTERPRET=1`` a launch (``GridExecutor.__call__``) patches ``triton.language``'s
builtins for the duration of the grid (``_patch_lang``: several hundred attributes, about 3 ms)
and restores them at the end. But every call of a ``@triton.jit`` device function inside the
kernel (``InterpretedFunction.__call__``: an FN, ``convert``, ``strided_offset`` ...) patches the
same modules again, with the same values, on every call of every program. In an elementwise
launch that is most of the time spent, and in an emulated gradgradcheck more than half of it.

``install()`` replaces ``InterpretedFunction.__call__`` with one that skips the re-patch when the
language modules the function sees are already patched by the grid execution in progress (the
patches are idempotent: the same builtins wrapped by the same interpreter semantic), and patches
as before otherwise: once per grid for a module the kernel itself does not import (``tl.core``,
seen by triton.language.standard's functions; Triton leaves those patches in place after the
grid, and so does this). Results are unchanged, bit for bit; only the time goes. Interpreted launches
run one at a time (runtime/launch.py's lock), so one stack of active grids suffices.

Second, integer overflow sanitising: the interpreter's options default to
``sanitize_overflow=True``, so every int32 add/sub/mul (all the offset arithmetic) is redone in
int64 and compared with the int32 range, to feed a ``device_assert`` that does nothing unless
``debug`` is on. A compiled kernel drops that dead code; the interpreter computes it for every
program (half the time of an elementwise launch). With ``debug`` off it is switched off here;
with ``debug`` on (a user debugging a kernel) it stays.

A Triton whose interpreter does not have these internals is left alone (the speed-up is an
optimisation, never a requirement): ``install()`` returns False.
"""
from __future__ import annotations

import inspect

_installed = {"done": False}


def install() -> bool:
    """Install the nested-call fast path into Triton's interpreter (idempotent)."""
    if _installed["done"]:
        return True
    interpret_preloaded_language()
    try:
        import triton.language as tl
        from triton.runtime import interpreter as ti
        patch_lang = ti._patch_lang
        interpreted_function = ti.InterpretedFunction
        interpreter_error = ti.InterpreterError
        grid_executor_call = ti.GridExecutor.__call__
    except (ImportError, AttributeError):
        return False

    lang_modules = (tl, tl.core)
    active = []                 # per grid execution in progress: the lang modules it patched
    langs_of = {}               # jitted Python function -> the lang modules in its globals

    def langs(fn):
        found = langs_of.get(fn)
        if found is None:
            found = langs_of[fn] = frozenset(
                id(v) for v in fn.__globals__.values() if inspect.ismodule(v) and v in lang_modules)
        return found

    def grid_call(self, *args, **kwargs):
        # GridExecutor keeps the kernel as .fn: the modules its own _patch_lang patches
        active.append(langs(self.fn))
        try:
            return grid_executor_call(self, *args, **kwargs)
        finally:
            active.pop()

    def device_call(self, *args, **kwargs):
        # a device function call: re-patch only what the running grid has not patched already
        mine = langs(self.fn)
        if not active or not mine <= active[-1]:
            patch_lang(self.fn)
            if active:      # patched for the rest of this grid too (Triton never restores these)
                active[-1] = active[-1] | mine
        fn = self.rewrite()
        try:
            return fn(*args, **kwargs)
        except Exception as e:
            raise interpreter_error(repr(e)) from e

    ti.GridExecutor.__call__ = grid_call
    interpreted_function.__call__ = device_call
    _no_dead_overflow_checks(ti)
    _installed["done"] = True
    return True


def interpret_preloaded_language():
    """Triton's own jitted helpers (tl.sum, tl.max, tl.cdiv ... in triton.language.standard) are
    decorated when triton is imported, as compiled-mode functions unless TRITON_INTERPRET was
    already set. A program that imported triton before tritensor turned the emulated device on
    (TRITENSOR_EMULATE_CUDA=1 sets TRITON_INTERPRET at the first cuda use) would then fail in
    every kernel calling them ("Cannot call @triton.jit'd outside of the scope of a kernel").
    Re-decorate those helpers as interpreted functions, in every triton.language module that
    holds them (one replacement per function, so the modules keep sharing it)."""
    import sys
    try:
        from triton.runtime.interpreter import InterpretedFunction
        from triton.runtime.jit import JITFunction
    except ImportError:
        return
    replaced = {}
    for name, module in list(sys.modules.items()):
        if module is None or not (name == "triton.language" or name.startswith("triton.language.")):
            continue
        for attr, value in list(vars(module).items()):
            if type(value) is not JITFunction:
                continue
            new = replaced.get(id(value))
            if new is None:
                try:
                    new = replaced[id(value)] = InterpretedFunction(value.fn, noinline=value.noinline)
                except Exception:       # an interpreter with another signature: leave it alone
                    return
            setattr(module, attr, new)


def _no_dead_overflow_checks(ti):
    builder = getattr(ti, "interpreter_builder", None)
    options = getattr(builder, "options", None)
    if options is None or getattr(options, "debug", True) or not getattr(options, "sanitize_overflow", False):
        return
    import dataclasses
    builder.options = dataclasses.replace(options, sanitize_overflow=False)
