"""Triton kernels, one file per family. Imports only triton / triton.language (never tritensor),
so every kernel can be run alone; installed as the subpackage ``tritensor.kernels``.

Index arithmetic is int64 (tensors and offsets past 2**31 elements; DESIGN.md). Two places lose
it without a warning:

- a program id is int32: ``tl.program_id(0).to(tl.int64) * BLOCK + ...``;
- a loop index. Triton's interpreter hands a ``for i in range(...)`` body a Python int, which
  Triton types int32 whatever the bounds' types, and a compiled loop's index has the type of
  its bounds; so ``i * stride`` or ``i + tl.arange(...)`` wraps past 2**31 (a segfault under
  the interpreter, a wrong address on a GPU). Every ``range`` loop therefore names its raw index
  with a trailing underscore and uses it only to bind the int64 cast, first thing in the body::

      for n0_ in range(0, N, BLOCK_N):
          n0 = tl.cast(n0_, tl.int64)     # int64 loop index (kernels/__init__.py)

  (``tl.cast`` works on both the Python int and the compiled index, ``.to`` only on the latter;
  a fresh name keeps the index out of Triton's loop-carried variables on every version.)
  ``tl.static_range`` loops unroll over constexprs and are exempt, and so is a loop that never
  reads its index (``for _ in range(n_search)``). tests/test_index_width.py checks this rule
  statically on every file here (linalg.py documents its own convention, a cast wherever an
  index multiplies a stride, and is listed there) and runs each looping kernel family on a
  view whose offsets pass 2**31.
"""
