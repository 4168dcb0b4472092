"""THE op table: one declarative entry per primitive op.

An entry names
  rule       the shape/dtype rule: rule(*args, **attrs) -> Meta(shape, dtype, compute)
  reference  the NumPy reference, run on the cpu device (and by tests against the kernels):
             reference(*arrays_or_scalars_in_compute_dtype, **attrs) -> array
  kernel     the Triton launcher: kernel(out, *args, compute=name, **attrs), writes ``out``
  backward   backward(ctx, grad) -> one gradient (or None) per positional argument, written with
             tritensor ops so that create_graph=True differentiates it again
  saves      which tensors the backward needs: names of positional args ("x", "y" ...) in order
             of the signature, and/or "out"
  saves_for  optional {saved name: positions of the inputs whose gradient reads it}: such a
             tensor is saved only when one of those inputs requires grad (a frozen convolution's
             weight gradient needs the input; its input gradient does not), so a frozen layer
             keeps nothing for a gradient nobody asks for; the backward reads input shapes from
             ctx.input_meta
  view       for view ops only: view(tensor, **attrs) -> (shape, strides, offset); no kernel
  outputs    an op with several outputs names them (sort: ("values", "indices")); see below
  jvp        the forward-mode rule (tt.autograd.forward_ad), declared next to the backward:
             jvp(ctx, *tangents) -> the output's tangent (one per output), ctx as a backward's
             (the inputs by name, attributes, ctx.out), a tangent None for an input without one;
             or a derivation: DIAGONAL (elementwise: the backward fed the tangent, the default
             of ops/elementwise.py's entries), LINEAR (the op applied to the tangents), BILINEAR
             (op(tx, y) + op(x, ty)), FROM_BACKWARD (the backward's transpose by double backward).
             None: an op with a backward raises torch's "Trying to use forward AD with ...".
Adding an op is one entry (plus its kernel and tests); dispatch needs no change.

Several outputs (torch's multi-output ops: sort, topk, kthvalue, median, mode ...) are one entry
whose ``outputs`` names them, in order. Then every part of the entry speaks in tuples: the rule
returns one Meta per output; the reference returns one array per output; the kernel gets a tuple
of outputs, ``kernel((values, indices), *args, compute=, **attrs)``; dispatch() returns the tuple
(the public function wraps it in its return_types named tuple, ops/_return_types.py). The
autograd node is recorded once, and every floating output is one of its outputs (output_nr = its
position; integer outputs such as indices never require grad): the backward is
``backward(ctx, *grads)``, one gradient per output (None where none arrived), and ``saves`` may
name outputs, which come back as ``ctx.<name>`` (sort saves "indices"). Every output is laid out
by the entry's ``layout``; a kernel runs unless every output is empty; such entries take
dispatch's first-time path on every call (their rules are not in the per-signature cache).

Its public forms are DECLARED next to the entry (ops/surface.py), never listed elsewhere: tt.<name>,
Tensor.<name>, the in-place <name>_, operators, aliases, nn.functional and out= are generated from
the declaration (tritensor/__init__.py and _methods.py hold no op names; tests/test_surface.py
fails on an undeclared public name). A unary pointwise op with a kernel and a backward is three
files, four places:

  1. kernels/elementwise.py   the FN:  @triton.jit def sinh(x): return 0.5 * (tl.exp(x) - tl.exp(-x))
                              (every public FN is in the launcher's vocabulary: nothing to list)
  2. backends/numpy_ref.py    the reference: "sinh": np.sinh in UFUNCS (or a def named as the op)
  3. ops/pointwise.py         the entry and, under it, its declaration:
         SINH = _elementwise("sinh", ("x",), float_rule,       # d/dx sinh = (e^x + e^-x) / 2
                             lambda ctx, g: mul(g, mul(add(exp(ctx.x), exp(neg(ctx.x))), 0.5)),
                             saves=("x",))
         sinh, sinh_ = unary(SINH, inplace_function=True)   # tt.sinh(x, out=), Tensor.sinh, sinh_
     A hand-written function (torch's special argument handling) is declared as the
     implementation instead: declare("clamp", clamp, inplace=clamp_, aliases=("clip",), out="clamp").
Then tests: its parity/gradient record (tests/opinfo.py) and any torch edge case in its test file.
CONTRIBUTING.md has the whole checklist.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Optional


@dataclass(frozen=True)
class Meta:
    shape: tuple
    dtype: object          # dtype of the output
    compute: object = None  # dtype the arithmetic runs in (defaults to the output's)


LAYOUTS = ("contiguous", "iterator", "preserve", "memory_format")

# forward-rule derivations (OpDef.jvp; autograd/forward_ad.py applies them)
DIAGONAL, LINEAR, BILINEAR, FROM_BACKWARD = "diagonal", "linear", "bilinear", "from_backward"


def signature_rule(rule):
    """Declares that a shape/dtype rule's result depends only on its inputs' signature (dtypes,
    devices, shapes, strides, scalar operands' types and values, attributes, the default dtype),
    so dispatch may cache it per signature and skip it on a repeated call (ops/dispatch.py). A
    rule that reads tensor VALUES (a data-dependent output shape) or global state must not be
    marked. Every entry using the rule is cached; an error the rule raises is never cached."""
    rule.signature_only = True
    return rule


@dataclass(eq=False)
class OpDef:
    name: str
    args: tuple                           # names of the positional arguments
    rule: Optional[Callable] = None
    reference: Optional[Callable] = None
    kernel: Optional[Callable] = None
    backward: Optional[Callable] = None
    saves: tuple = ()
    saves_for: Optional[dict] = None      # {saved name: input positions whose gradient needs it}
    view: Optional[Callable] = None
    grad_name: Optional[object] = None    # a name, or name(args, attrs) for torch's overloads (PowBackward0/1/2)
    differentiable: bool = True
    attrs_defaults: dict = field(default_factory=dict)
    layout: str = "contiguous"            # "contiguous", "iterator", "preserve" or "memory_format"
                                          # (the output in the format its attrs["memory_format"] names)
    numbers_are_operands: bool = True
    outputs: tuple = ()                   # names of several outputs (see above); () is one output
    jvp: object = None                    # the forward-mode rule or derivation (see above)

    def node_name(self, args, attrs):
        return self.grad_name(args, attrs) if callable(self.grad_name) else self.grad_name

    def __post_init__(self):
        self.n_outputs = max(len(self.outputs), 1)     # (the autograd node's number of outputs)
        if self.layout not in LAYOUTS:
            raise ValueError(f"op {self.name!r}: layout must be one of {LAYOUTS}, not {self.layout!r}")
        if self.grad_name is None:
            camel = "".join(p[:1].upper() + p[1:] for p in self.name.split("_"))
            self.grad_name = f"{camel}Backward0"


TABLE: dict[str, OpDef] = {}


def register(op: OpDef) -> OpDef:
    if op.name in TABLE:
        raise ValueError(f"op {op.name!r} registered twice")
    TABLE[op.name] = op
    return op


def op(name, args, **fields) -> OpDef:
    return register(OpDef(name=name, args=tuple(args), **fields))
