"""The fuser (issue 26 item 2): maximal runs of pointwise ops over one iteration space, plus at
most one reduction with its pointwise prologue and its pointwise epilogue, become one
``prim::FusionGroup`` node, run as one generated Triton kernel on cuda
(tritensor/backends/triton/fused.py) and as one pass of NumPy calls into preallocated buffers on
cpu.

Grouping (``fuse_graph``), over a graph's top-level nodes:
  * a node joins a group when it is a primitive elementwise op of the table (its kernel is the
    arity-generic elementwise kernel applying one FN), called with no keyword attributes, with
    one tensor output on the group's device whose shape broadcasts with the group's iteration
    space (a smaller value, e.g. a 0-d gradient divided by n, is computed in every lane);
  * an ``expand`` joins as the identity of each lane (the kernel reads a broadcast operand with
    stride 0): a reduction's backward is an expand of the reduced gradient, so the backward of
    a reduction group is one pointwise group;
  * one reduction (sum/prod/amax/amin of the table, full or over dims, keepdim or not, sum's
    dtype=) whose input has the prologue's full shape; after it only an epilogue: pointwise ops
    over the reduced shape that read no prologue value (``1 - iou.mean()``, ``loss.sum() / n``);
  * a value that is smaller than its phase's space, or an expand, must not be read outside the
    group (it has no memory of its own shape; an expand is a view): such a node ends the group;
  * anything else ends the group: a view (its output aliases an input: a later in-place write
    through it must see memory, not registers), an in-place op, a second reduction, control flow;
  * scalar constants are hoisted to the top first, so they do not split groups; an unsqueeze of
    a pointwise value nothing else reads is moved onto that op's operands (a mean over a dim
    without keepdim has g / n unsqueezed in its backward: the division then joins the group);
  * a group needs two launching ops (one op alone is already one launch).
The group reads each outside value once and returns the values read after it (prologue values
too: a multi-output kernel), as ``Graph.replace_nodes`` builds it.

Running a group (``run_group``): the plan of each input signature (dtypes, shapes, strides,
device, requires_grad, grad mode: the cache key) gives every step's output and compute dtype from
the eager ops' own rules, so type promotion, broadcasting and rounding are eager's. Pointwise
results equal the eager chain's bit for bit. A reduction accumulates in eager's compute dtype and
in eager's order: on cuda the kernel reads the reduced range in the tiles, chunks and lane order
that kernels/reduce.py's reduce_kernel uses for the same input layout (the layout eager's
pointwise op would give the prologue's value), then reduce_rows, so the result is eager's bit for
bit wherever that layout is eager's (contiguous inputs; a group input reduced in place); a
prologue value eager would lay out differently, or the GPU's smaller tile for a group with a
prologue (backends/triton/fused.py: GPU_PROLOGUE_TILE, as eager's tile would spill registers),
changes the order of the additions, and the sum then differs from eager's by at most the
accumulation-order bound (n * eps * sum(|x|) for n terms; for the IoU loss's mean of 2500 boxes a
few ulps, tested against the issue's bound of 1 ulp per fused op). (On a real GPU the tree of
reduce_rows follows the compiler's layout of the accumulator, the same for the same tile and
warps unless the fused loads make it choose another; the bound above holds either way. Not yet
measured on a GPU.) On cpu the reduction is the eager sum's own NumPy call (``x.sum(axis,
keepdims)`` in the compute dtype), bit for bit. Cost: one launch; a reduction of few outputs over
a long range (on a GPU: more than 4 tiles a program and fewer than 528 programs) is split in
chunks as eager's is, the fused kernel storing each chunk's partial result and ``fused_finish``
reducing them and running the epilogue: two launches, and n_out * chunks partials written and
read back.

Past ``RECOMPILE_LIMIT`` signatures one group runs eagerly, with a warning saying so. In a graph
of tt.compile(dynamic=True) the signatures counted are symbolic (dtypes, ranks, sizes 0/1, stride
pattern, device, requires_grad, grad mode: ``_symbolic_signature``): every size shares one
generated kernel, the sizes being its runtime arguments (``_dynamic_plan``). When a
gradient is needed the group runs eagerly through the interpreter (autograd records the eager
ops)... unless it can be differentiated as a whole: then (``_Differentiable``) the group and its
backward are traced once per signature (the ops' own backward rules, recorded as a graph), split
into a forward graph that also returns the intermediates the backward reads and a backward graph,
both fused again; the group's call is one autograd node, ``DifferentiableGraphBackward``
(TorchScript's name). A double backward (create_graph=True) recomputes the group eagerly from its
saved inputs, so it is exact.
"""
from __future__ import annotations

import threading
import warnings

import numpy as np

from ..autograd.grad_mode import is_grad_enabled
from ..backends.base import backend_for, empty
from ..ops import _layout
from ..ops.table import TABLE
from ..tensor import Tensor
from ._interp import FUSION_GROUP_RUNNERS, run_graph
from ._ir import Node, Type, _reads, extract
from ._trace import Tracer

RECOMPILE_LIMIT = 8
GROUP_KIND = "prim::FusionGroup"

_FNS = None


def pointwise_fns():
    """{table op name: its elementwise FN name} for every primitive whose kernel is the
    arity-generic elementwise kernel (ops/elementwise.py's ``launcher``)."""
    global _FNS
    if _FNS is None:
        from ..ops.elementwise import launcher
        code = launcher("x").__code__
        fns = {}
        for name, op in TABLE.items():
            k = op.kernel
            if getattr(k, "__code__", None) is code and op.outputs == () and op.view is None:
                fns[name] = k.__closure__[0].cell_contents
        _FNS = fns
    return _FNS


REDUCTIONS = ("sum", "prod", "amax", "amin")      # the reductions of kernels/reduce.py's kernel
_REDUCTION_KWARGS = frozenset({"dims", "keepdim", "dtype", "dim_given"})


def _typed(node):
    if len(node.outputs) != 1:
        return False
    t = node.outputs[0].type
    return t.kind == "Tensor" and t.shape is not None and t.dtype is not None


def _fusible(node):
    if not node.kind.startswith("aten::") or node.attrs.get("call", "op") != "op" or node.attrs.get("kwargs"):
        return False
    return node.name in pointwise_fns() and _typed(node)


def _reduction(node):
    """A sum/prod/amax/amin of the table (full or over dims, keepdim or not, sum's dtype=)."""
    return (node.kind.startswith("aten::") and node.attrs.get("call", "op") == "op" and node.name in REDUCTIONS
            and set(node.attrs.get("kwargs") or ()) <= _REDUCTION_KWARGS and "dims" in node.attrs.get("kwargs", {})
            and _typed(node) and node.inputs and node.inputs[0].type.kind == "Tensor"
            and node.inputs[0].type.shape is not None)


def _broadcast(node):
    """An expand (a reduction's backward: the gradient broadcast back): inside a group it is the
    identity of each lane, as the kernel reads a broadcast operand with stride 0."""
    return (node.kind == "aten::expand" and node.attrs.get("call", "op") == "op" and _typed(node)
            and set(node.attrs.get("kwargs") or ()) == {"shape"})


def _scalar_constant(node):
    """A constant node (it reads nothing, so it may move to the top; a traced tensor constant
    is a value the graph never writes in place)."""
    return node.kind == "prim::Constant"


def _broadcast_shape(a, b):
    """The broadcast of shapes a and b, or None."""
    n = max(len(a), len(b))
    a, b = (1,) * (n - len(a)) + tuple(a), (1,) * (n - len(b)) + tuple(b)
    out = []
    for x, y in zip(a, b):
        if x != y and 1 not in (x, y):
            return None
        out.append(y if x == 1 else x)
    return tuple(out)


def _shape(v):
    return tuple(v.type.shape)


class _Run:
    """A group being built: ``nodes``, the prologue's iteration space ``space`` (the broadcast of
    its ops' shapes), ``red`` (the position of its reduction or None) and the epilogue's space
    ``rspace`` (the reduction's output shape)."""

    def __init__(self, node, device):
        self.nodes, self.device, self.red, self.rspace, self.space = [], device, None, None, None
        self.add(node)

    def add(self, node):
        if _reduction(node):
            self.red, self.rspace = len(self.nodes), _shape(node.outputs[0])
            if self.space is None:
                self.space = _shape(node.inputs[0])
        elif self.red is None:
            here = _shape(node.outputs[0])
            self.space = here if self.space is None else _broadcast_shape(self.space, here)
        self.nodes.append(node)

    def accepts(self, node):
        device = node.outputs[0].type.device
        if device != self.device:
            return False
        if _reduction(node):
            return self.red is None and _shape(node.inputs[0]) == self.space
        here = _shape(node.outputs[0])
        if self.red is None:
            return _broadcast_shape(self.space, here) is not None
        # the epilogue: over the reduced shape, reading no prologue value
        prologue = {id(o) for n in self.nodes[:self.red] for o in n.outputs}
        return _broadcast_shape(self.rspace, here) == self.rspace and \
            not any(id(i) in prologue for i in node.inputs)

    def launches(self):
        return sum(1 for n in self.nodes if not _broadcast(n))


def _runs(nodes, excluded):
    """The candidate groups of ``nodes`` (top level, in order), ``excluded`` nodes ending them."""
    runs, run = [], None
    for n in nodes:
        if _scalar_constant(n):
            continue
        joins = id(n) not in excluded and (_fusible(n) or _reduction(n) or _broadcast(n))
        if joins and run is not None and run.accepts(n):
            run.add(n)
            continue
        if run is not None and run.launches() > 1:
            runs.append(run)
        run = _Run(n, n.outputs[0].type.device) if joins and not _broadcast(n) else None
    if run is not None and run.launches() > 1:
        runs.append(run)
    return runs


def _escaping(run, users):
    """The first node of ``run`` whose value must not leave the group but does: a broadcast (its
    output is a view: an outside in-place write through it must see memory) or a value smaller
    than its phase's space (computed in every lane, it has no memory of its own shape)."""
    inside = {id(n) for n in run.nodes}
    for k, n in enumerate(run.nodes):
        if k == run.red:
            continue
        space = run.space if run.red is None or k < run.red else run.rspace
        if _broadcast(n) or _shape(n.outputs[0]) != space:
            if any(u is None or id(u) not in inside for u in users.get(id(n.outputs[0]), ())):
                return n
    return None


def _users(g):
    users = {}
    for n in g.nodes:
        for i in _reads(n):
            users.setdefault(id(i), []).append(n)
    for v in g.returns:
        users.setdefault(id(v), []).append(None)
    return users


def fuse_graph(graph):
    """A copy of ``graph`` with its fusion groups (prim::FusionGroup nodes)."""
    g = graph.copy()
    consts = [n for n in g.nodes if _scalar_constant(n)]
    g.nodes[:] = consts + [n for n in g.nodes if not _scalar_constant(n)]
    _hoist_unsqueezes(g)
    _sink_pure_nodes(g.nodes)
    users = _users(g)
    excluded = set()
    while True:
        runs = _runs(g.nodes, excluded)
        bad = [b for b in (_escaping(r, users) for r in runs) if b is not None]
        if not bad:
            break
        excluded.update(id(b) for b in bad)
    for r in runs:
        g.replace_nodes(r.nodes, GROUP_KIND)
    if getattr(graph, "dynamic", False):        # tt.compile(dynamic=True): plans keyed symbolically
        for n in fusion_groups(g):
            n.attrs["_dynamic"] = True
    return g


def _unsqueeze(node):
    return (node.kind == "aten::unsqueeze" and node.attrs.get("call", "op") == "op" and _typed(node)
            and set(node.attrs.get("kwargs") or ()) == {"dim"} and len(node.inputs) == 1)


def _hoist_unsqueezes(g):
    """An unsqueeze of a pointwise op's value that nothing else reads becomes the pointwise op of
    its operands unsqueezed (the same values: the new dim is a broadcast dim of every operand). A
    reduction over dims without keepdim has such a backward (g / n, unsqueezed, expanded): after
    the rewrite the division joins the group of the expand and the ops after it, and the
    unsqueeze is a view of an input, outside the group."""
    changed = True
    while changed:
        changed = False
        users = _users(g)
        top = {id(n) for n in g.nodes}
        for u in g.nodes:
            if not _unsqueeze(u):
                continue
            v = u.inputs[0]
            p = v.node
            if p is None or id(p) not in top or not _fusible(p) or len(users.get(id(v), ())) != 1 or \
                    any(a.type.kind == "Tensor" and a.type.shape is None for a in p.inputs):
                continue
            rank = len(v.type.shape)
            dim = u.attrs["kwargs"]["dim"]
            dim = dim + rank + 1 if dim < 0 else dim
            new, ins = [], []
            for a in p.inputs:
                d = dim - (rank - len(a.type.shape)) if a.type.kind == "Tensor" else -1
                if d < 0:               # a scalar, or the new dim is one of a's broadcast dims
                    ins.append(a)
                    continue
                n = Node("aten::unsqueeze", [a], {"call": "op", "kwargs": {"dim": d}}, u.source)
                t = a.type
                shape = list(t.shape)
                shape.insert(d, 1)
                strides = None
                if t.strides is not None:
                    strides = list(t.strides)
                    strides.insert(d, strides[d] * t.shape[d] if d < len(t.shape) else 1)
                n.add_output(g, Type("Tensor", t.dtype, tuple(shape), strides and tuple(strides), t.requires_grad,
                                     t.device))
                new.append(n)
                ins.append(n.outputs[0])
            q = Node(p.kind, ins, p.attrs, p.source)
            out = u.outputs[0]
            q.outputs = [out]
            out.node = q
            i = g.nodes.index(p)
            g.nodes[i:i + 1] = new + [q]
            g.nodes.remove(u)
            changed = True
            break


def _pure(node):
    """An op that writes no memory (a view or an out-of-place op): it may run later."""
    return node.kind.startswith("aten::") and node.attrs.get("call", "op") == "op" and not node.blocks


def _sink_pure_nodes(nodes):
    """Move pure non-fusible nodes (a reduction, a view) after the fusible nodes that follow them
    and do not read them, so that one group is not split by an op it does not depend on. Nothing
    moves past an in-place op or control flow."""
    changed = True
    while changed:
        changed = False
        for i in range(len(nodes) - 1):
            a, b = nodes[i], nodes[i + 1]
            if _pure(a) and not _fusible(a) and _fusible(b) and \
                    not any(o is v for o in a.outputs for v in b.inputs):
                nodes[i], nodes[i + 1] = b, a
                changed = True


def fusion_groups(graph):
    """The fusion groups of ``graph`` (its prim::FusionGroup nodes, top level)."""
    return [n for n in graph.nodes if n.kind == GROUP_KIND]


# ---------------------------------------------------------------------------- plans


class GroupPlan:
    """One group for one input signature: ``inputs`` ("tensor", or a scalar's kernel kind 1/2),
    ``steps`` (name, operand refs ("in", i) / ("tmp", j), compute dtype name, output dtype
    name; the name is an elementwise FN, "expand" or the reduction's op), ``kinds`` ("pointwise",
    "expand" or "reduce" per step), ``shapes`` (each step's own shape: a smaller one is computed
    in every lane of its phase, broadcast), ``outputs`` ((step, dtype) per group output),
    ``shape`` (the prologue's iteration space), ``red`` (the reduction's step or None) with
    ``red_dims``/``keepdim``/``red_shape``; ``ops``/``metas``/``attrs`` for cpu."""

    def __init__(self):
        self.inputs, self.steps, self.outputs, self.ops, self.metas = [], [], [], [], []
        self.kinds, self.shapes, self.attrs = [], [], []
        self.shape = None
        self.red, self.red_dims, self.keepdim, self.red_shape = None, (), False, None
        self.device = None
        self.eager = None           # why this signature runs eagerly, or None
        self.input_dtypes = []
        self.numpy_program = None
        self._source = None
        self.module = None
        self.out_recipe = None      # the outputs' (shape, dtype, strides) (run_group, once)
        self.launch = None          # (launch profile, the cached launch) (backends/triton/fused.py)
        self.empty = self.host = False

    @property
    def source(self):
        if self._source is None:
            from ..backends.triton.fused import generate_source
            self._source = generate_source(self)
        return self._source

    def phase(self, j):
        """0 for a prologue step (over ``shape``), 1 for the reduction and its epilogue."""
        return 0 if self.red is None or j < self.red else 1

    def describe(self):
        """The steps over the spaces' ranks: no size, since the sizes are the kernel's runtime
        arguments and this text is part of the generated source (whose hash names the file
        and keys Triton's compile cache: one source for every size)."""
        space = f"{len(self.shape)}-d"
        if self.red is None:
            return " -> ".join(fn for fn, *_ in self.steps) + f" over {space}"
        pro = " -> ".join(fn for fn, *_ in self.steps[:self.red])
        epi = " -> ".join(fn for fn, *_ in self.steps[self.red + 1:])
        red = f"{self.steps[self.red][0]}(dims={list(self.red_dims)}, keepdim={self.keepdim})"
        return f"{pro + ' over ' + space + ' -> ' if pro else ''}{red}" \
            f"{' -> ' + epi if epi else ''} to {len(self.red_shape)}-d"


def _placeholder(dtype, shape, device):
    """A tensor with ``dtype`` and ``shape`` for the shape/dtype rules (one element, expanded)."""
    t = empty((), dtype, device)
    return t.expand(shape) if shape else t


def _plan(sub, ins):
    from ..backends.triton._plan import _scalar_arg
    plan = GroupPlan()
    where = {}          # id(value) -> ("in", i) / ("tmp", j)
    fake = {}           # id(value) -> what the rules see
    device = next((x.device for x in ins if isinstance(x, Tensor)), None)
    plan.device = device
    if device is None:          # (Python numbers only: the interpreter computes them)
        plan.eager = "no tensor operand"
        return plan
    for i, (v, x) in enumerate(zip(sub.inputs, ins)):
        where[id(v)] = ("in", i)
        plan.input_dtypes.append(getattr(x, "dtype", None))
        if isinstance(x, Tensor):
            plan.inputs.append("tensor")
        elif isinstance(x, (bool, int, float)):
            plan.inputs.append(_scalar_arg(x)[0])
        else:
            plan.eager = f"an operand of type {type(x).__name__}"
            return plan
        fake[id(v)] = x
    fns = pointwise_fns()
    for node in sub.nodes:
        args = [fake[id(i)] for i in node.inputs]
        if any(isinstance(a, Tensor) and a.device != device for a in args):
            plan.eager = "the group's ops do not share one device"
            return plan
        kwargs = dict(node.attrs.get("kwargs") or {})
        j = len(plan.steps)
        if _broadcast(node):
            x = args[0]
            shape = tuple(kwargs["shape"])
            lead = len(shape) - x.dim()
            shape = tuple(x.shape[k - lead] if s == -1 and k >= lead else s for k, s in enumerate(shape))
            if lead < 0 or _broadcast_shape(x.shape, shape) != shape:
                plan.eager = f"expand of {list(x.shape)} to {list(shape)}"
                return plan
            op, dtype, compute, name, kind = TABLE["expand"], x.dtype, x.dtype, "expand", "expand"
        else:
            op = TABLE[node.name]
            meta = op.rule(*args, **kwargs)
            shape, dtype = tuple(meta.shape), meta.dtype
            compute = meta.compute or meta.dtype
            if node.name in REDUCTIONS and kwargs:
                dims = tuple(sorted(int(d) for d in kwargs["dims"]))
                x_shape = tuple(args[0].shape)
                if plan.red is not None or any(d >= len(x_shape) for d in dims):
                    plan.eager = "the group's reduction does not fit this signature"
                    return plan
                plan.red, plan.red_dims, plan.keepdim = j, dims, bool(kwargs.get("keepdim"))
                plan.red_shape, plan.shape = shape, x_shape
                name, kind = node.name, "reduce"
            else:
                name, kind = fns[node.name], "pointwise"
        plan.steps.append((name, [where[id(i)] for i in node.inputs], compute.name, dtype.name))
        plan.kinds.append(kind)
        plan.shapes.append(shape)
        plan.attrs.append(kwargs)
        plan.ops.append(op)
        plan.metas.append((dtype, compute))
        where[id(node.outputs[0])] = ("tmp", j)
        fake[id(node.outputs[0])] = _placeholder(dtype, shape, device)
    for v in sub.returns:
        kind, j = where[id(v)]
        if kind != "tmp":
            plan.eager = "a group returning its own input"
            return plan
        plan.outputs.append((j, plan.metas[j][0]))
    why = _check_spaces(plan)
    if why:
        plan.eager = why
    return plan


def _check_spaces(plan):
    """Why the steps do not share the group's iteration spaces (None when they do): every
    prologue step broadcasts to ``shape`` (the reduction's input shape), every epilogue step to
    the reduced shape, and every output has its phase's full shape."""
    n_pro = len(plan.steps) if plan.red is None else plan.red
    if plan.red is None:
        space = ()
        for sh in plan.shapes:
            space = _broadcast_shape(space, sh)
            if space is None:
                return "the group's ops do not share one iteration space"
        plan.shape = space
    spaces = [plan.shape if j < n_pro else plan.red_shape for j in range(len(plan.steps))]
    for j, sh in enumerate(plan.shapes):
        if j != plan.red and _broadcast_shape(sh, spaces[j]) != spaces[j]:
            return "the group's ops do not share one iteration space"
    for j, _ in plan.outputs:
        if plan.shapes[j] != spaces[j] or plan.kinds[j] == "expand":
            return "a group output smaller than its iteration space"
    if plan.red is not None:
        for kind, k in plan.steps[plan.red][1]:
            if kind == "tmp" and plan.shapes[k] != plan.shape:
                return "a reduction of a broadcast value"
        if plan.steps[plan.red][0] in ("amax", "amin") and 0 in [plan.shape[d] for d in plan.red_dims]:
            return "an amax/amin over an empty dim (eager raises)"
    return None


def _signature(ins):
    """The plans' cache key: grad mode, then per input its (shape, strides, dtype, device type
    and index, requires_grad), or a scalar's type."""
    return _key(ins)[0]


def _key(ins):
    """(``_signature(ins)``, whether the call records a gradient), read from the tensors' own
    fields in one loop: this runs on every call of a fused group."""
    grad = is_grad_enabled()
    key = [grad]
    needs = False
    for x in ins:
        if isinstance(x, Tensor):
            device = x._storage.device
            rg = x._requires_grad or x._grad_fn is not None
            needs = needs or rg
            key.append((x._shape, x._stride, x._dtype, device.type, device.index, rg))
        else:
            key.append(type(x))
    return tuple(key), grad and needs


def _symbolic_signature(ins):
    """The key of a group of a dynamic graph (tt.compile(dynamic=True)): per tensor its dtype,
    rank, which sizes are 0 or 1 (empty and broadcast dims, specialised as torch's), its stride
    pattern (each stride 0, 1 or another value: broadcast, unit, strided), device and
    requires_grad; grad mode. Sizes are runtime arguments of the generated kernels."""
    key = [is_grad_enabled()]
    for x in ins:
        if isinstance(x, Tensor):
            device = x._storage.device
            key.append((tuple(min(n, 2) for n in x._shape), tuple(min(abs(s), 2) for s in x._stride),
                        x.is_contiguous(), x._dtype, device.type, device.index,
                        x._requires_grad or x._grad_fn is not None))
        else:
            key.append(type(x))
    return tuple(key)


_lock = threading.Lock()
SIZED_PLANS = 64        # a dynamic group's plans of recent exact sizes kept (least recently made out)


def _plan_for(node, ins, make=None, key=None):
    """The plan of ``ins``'s signature (made once; None past RECOMPILE_LIMIT signatures)."""
    if key is None:
        key = _signature(ins)
    if node.attrs.get("_dynamic"):
        sized = node.attrs.get("_sized")
        plan = sized.get(key) if sized is not None else None
        return plan if plan is not None else _dynamic_plan(node, ins, make, key)
    plans = node.attrs.get("_plans")
    if plans is None:
        plans = node.attrs.setdefault("_plans", {})
    plan = plans.get(key)
    if plan is None:
        with _lock:
            plan = plans.get(key)
            if plan is None:
                if _over_limit(node, plans):
                    return None
                plan = plans[key] = (make or _plan)(node.attrs["subgraph"], ins)
    return plan


def _over_limit(node, plans):
    if len(plans) < RECOMPILE_LIMIT:
        return False
    if not node.attrs.get("_warned"):
        node.attrs["_warned"] = True
        warnings.warn(f"tt.jit: a fusion group was specialised for {RECOMPILE_LIMIT} input "
                      "signatures; it now runs eagerly for new ones", RuntimeWarning, stacklevel=5)
    return True


def _dynamic_plan(node, ins, make, key):
    """The plan of a new exact signature in a dynamic graph's group (``_dynamic``): the limit
    counts symbolic signatures (``_plans``), and every size of one symbolic signature shares its
    generated kernel (the source names no size: one hash, one file, one Triton compile). The
    plans of exact sizes (output shapes, launch geometry and, for a gradient, the traced
    backward, which bakes sizes in, e.g. mean's 1/n: nothing compiled) are kept in ``_sized``,
    the SIZED_PLANS most recently made."""
    with _lock:
        sized = node.attrs.setdefault("_sized", {})
        plan = sized.get(key)
        if plan is not None:
            return plan
        plans = node.attrs.setdefault("_plans", {})
        skey = _symbolic_signature(ins)
        if skey not in plans:
            if _over_limit(node, plans):
                return None
            plans[skey] = True
        if len(sized) >= SIZED_PLANS:
            del sized[next(iter(sized))]
        plan = sized[key] = (make or _plan)(node.attrs["subgraph"], ins)
    return plan


def run_group(node, ins):
    """The interpreter's runner of a prim::FusionGroup node: its outputs for ``ins``. Per call:
    the signature, one dict lookup for its plan, the outputs allocated from the plan's recipe
    and the plan's cached launch (backends/triton/fused.py); nothing is re-derived."""
    key, needs_grad = _key(ins)
    if needs_grad:
        diff = _plan_for(node, ins, _differentiable, key)
        if diff is None or diff.eager is not None:
            return run_graph(node.attrs["subgraph"], ins)
        outs = DifferentiableGraph.apply(diff, *ins)
        return outs if isinstance(outs, tuple) else (outs,)
    plan = _plan_for(node, ins, None, key)
    if plan is None or plan.eager is not None:
        return run_graph(node.attrs["subgraph"], ins)
    recipe = plan.out_recipe
    if recipe is None:
        recipe = plan.out_recipe = _out_recipe(plan, ins)
    device = plan.device
    outs = tuple(empty(shape, dtype, device) if strides is None else _new(shape, dtype, device, strides)
                 for shape, dtype, strides in recipe)
    if plan.empty:
        return outs
    if plan.host:
        _run_numpy(plan, outs, ins)
    else:
        from ..backends.triton.fused import run
        if not run(plan, outs, ins):
            return run_graph(node.attrs["subgraph"], ins)
    return outs


def _out_recipe(plan, ins):
    """(shape, dtype, strides or None for contiguous) of each group output for the plan's
    signature: prologue outputs in the layout of eager's pointwise ops, the reduction's and the
    epilogue's contiguous, as eager's reduction writes them. Also notes on the plan whether the
    call has nothing to compute and whether its device computes on the host."""
    tensors = [(x._shape, x._stride) for x in ins if isinstance(x, Tensor)]
    strides = _layout.iterator_strides(plan.shape, tensors, any(k != "tensor" for k in plan.inputs))
    dense = tuple(_layout.contiguous_strides(plan.shape))
    pro = None if strides is None or tuple(strides) == dense else tuple(strides)
    plan.empty = 0 in plan.shape and (plan.red is None or 0 in plan.red_shape)
    plan.host = backend_for(plan.device).host_memory
    return tuple((plan.shape, dtype, pro) if plan.phase(j) == 0 else (plan.red_shape, dtype, None)
                 for j, dtype in plan.outputs)


def _new(shape, dtype, device, strides):
    """An uninitialised tensor of ``shape`` laid out with the dense, non-contiguous ``strides``."""
    n = 1 + sum((s - 1) * st for s, st in zip(shape, strides)) if all(shape) else 0
    return empty((n,), dtype, device).as_strided(shape, strides)


def _run_numpy(plan, outs, ins):
    """The group on cpu: each step's NumPy reference (the eager op's own, with its casts; the
    reduction's with its dims/keepdim, an expand a broadcast view) on NumPy arrays,
    intermediates in fresh buffers, outputs straight into the preallocated output tensors; no
    dispatch, no rule, no Tensor, no autograd between the steps (``_numpy_program``)."""
    from ..backends import numpy_ref
    prog = plan.numpy_program
    if prog is None:
        prog = plan.numpy_program = _numpy_program(plan, ins)
    view, cast, as_array = numpy_ref._view, numpy_ref._cast, np.asarray
    vals = [view(x) if isinstance(x, Tensor) else x for x in ins]
    out_views = [view(o) for o in outs]
    with np.errstate(all="ignore"):                 # NaN/inf/overflow follow IEEE, as eager's
        for fn, mode, refs, cd, dtype, slot, shape, attrs, layout in prog:
            args = [as_array(vals[k]).astype(cd) if kind == "scalar" else
                    (vals[k] if kind == "same" else vals[k].astype(cd, copy=False)) for kind, k in refs]
            if mode == "ufunc":
                buf = out_views[slot] if slot is not None else _dense_empty(shape, layout, cd)
                fn(*args, out=buf)
            elif mode == "expand":
                buf = np.broadcast_to(args[0], shape)
            else:
                res = fn(*args, **attrs)
                out_np = dtype.numpy_dtype
                if slot is not None or type(res) is not np.ndarray or res.dtype != out_np \
                        or res.shape != shape or layout is not None:
                    buf = out_views[slot] if slot is not None else _dense_empty(shape, layout, out_np)
                    if isinstance(res, np.ndarray) and res.dtype == out_np:
                        buf[...] = res
                    else:
                        np.copyto(buf, cast(as_array(res), dtype), casting="unsafe")
                    res = buf
                buf = res
            vals.append(buf)


def _dense_empty(shape, strides, dtype):
    """np.empty(shape), dense in the order of ``strides`` (None: row-major)."""
    if strides is None:
        return np.empty(shape, dtype)
    order = sorted(range(len(shape)), key=lambda d: -strides[d])
    return np.empty([shape[d] for d in order], dtype).transpose(np.argsort(order))


def _numpy_program(plan, ins):
    """Per step: (function, mode ("ufunc": a ufunc writing ``out=``, "call", "expand"), operand
    refs ("same": an array in the compute dtype, "cast": one to convert, "scalar": a Python
    number, with its index in inputs + earlier results), compute NumPy dtype, result dtype,
    output slot or None, the step's shape, its keyword attributes). A ufunc writes its output
    directly where numpy_ref._run_ufunc would (every operand in the compute dtype, the ufunc
    giving the result dtype); any other step is _run_reference's road (the reduction's
    reference is the eager sum's own: ``x.sum(axis=dims, keepdims=keepdim)`` in the compute
    dtype, so the fused and eager results are the same bits: its operand is laid out as eager's
    pointwise op would lay it out, since NumPy's pairwise sum follows the memory order)."""
    from ..backends import numpy_ref
    n_in = len(plan.inputs)
    prog = []
    slot_of = {j: i for i, (j, _) in enumerate(plan.outputs)}
    operand = plan.steps[plan.red][1][0] if plan.red is not None else (None, None)
    layout = None
    if operand[0] == "tmp":
        tensors = [(x._shape, x._stride) for x in ins if isinstance(x, Tensor)]
        layout = tuple(_layout.iterator_strides(plan.shape, tensors, any(k != "tensor" for k in plan.inputs)))
        if layout == tuple(_layout.contiguous_strides(plan.shape)):
            layout = None
    for j, ((fn, refs, _, _), op, (dtype, compute)) in enumerate(zip(plan.steps, plan.ops, plan.metas)):
        cd = compute.numpy_dtype
        lay = layout if operand == ("tmp", j) else None
        new_refs = []
        for kind, k in refs:
            if kind == "tmp":
                new_refs.append(("same" if plan.metas[k][0] is compute else "cast", n_in + k))
            elif plan.inputs[k] == "tensor":
                new_refs.append(("same" if plan.input_dtypes[k] is compute else "cast", k))
            else:
                new_refs.append(("scalar", k))
        shape, attrs = plan.shapes[j], plan.attrs[j]
        if plan.kinds[j] == "expand":
            prog.append((None, "expand", new_refs, cd, dtype, slot_of.get(j), shape, {}, None))
            continue
        ufunc = op.reference
        if plan.kinds[j] == "reduce":
            ufunc = None
        elif type(ufunc) is not np.ufunc:
            ufunc = numpy_ref.FLOAT_UFUNCS.get(op.name) if compute.is_floating_point else None
        direct = (ufunc is not None and dtype is compute and all(kind != "cast" for kind, _ in new_refs)
                  and numpy_ref._writes_out(ufunc, cd, dtype.numpy_dtype, len(refs)))
        prog.append((ufunc if direct else op.reference, "ufunc" if direct else "call", new_refs, cd, dtype,
                     slot_of.get(j), shape, attrs, lay))
    return prog


# ---------------------------------------------------------------------------- autograd


class _JointTracer(Tracer):
    """The tracer of a group and its backward. A tensor it has not seen but whose memory is one
    it has (a saved output unpacked as a new Tensor object: div's ``ctx.out``) is that value,
    not a constant."""

    def __init__(self):
        super().__init__()
        self.by_memory = {}

    def bind(self, t, value):
        super().bind(t, value)
        self.by_memory.setdefault(_memory_key(t), value)

    def value_of(self, a):
        if isinstance(a, Tensor) and id(a) not in self.env:
            v = self.by_memory.get(_memory_key(a))
            if v is not None:
                self.env[id(a)] = v
                self.keep.append(a)
                return v
        return super().value_of(a)


def _memory_key(t):
    return (id(t._storage), t._offset, tuple(t._shape), tuple(t._stride), t.dtype)


class _Differentiable:
    """A group with its gradient, for one signature: ``fwd`` (fused; returns the group's outputs,
    then the intermediates ``bwd`` reads), ``bwd`` (fused; reads the saved values, then one
    gradient per differentiable output; returns one gradient per input that requires grad),
    ``saved_inputs`` (positions of the group inputs ``bwd`` reads), ``n_inter``, ``grad_of``
    (input position -> index in bwd's returns), ``diff_outputs`` (outputs that get gradients)."""

    def __init__(self):
        self.eager = None


def _differentiable(sub, ins):
    from ..autograd import grad as _grad
    from ..autograd.grad_mode import enable_grad
    d = _Differentiable()
    tr = _JointTracer()
    j = tr.graph
    xs = []
    for v, x in zip(sub.inputs, ins):
        value = j.add_input(v.type, v.name)
        if isinstance(x, Tensor):
            x = x.detach().requires_grad_(x.requires_grad)
            tr.bind(x, value)
        xs.append(x)
    wrt = [i for i, x in enumerate(xs) if isinstance(x, Tensor) and x.requires_grad]
    try:
        with tr, enable_grad():
            outs = run_graph(sub, xs)
            n_fwd = len(j.nodes)
            diff = [k for k, o in enumerate(outs) if o.requires_grad and o.dtype.is_floating_point]
            gos = []
            for k in diff:
                go = _ones(outs[k])
                tr.bind(go, j.add_input(Type.of(go), f"grad_{k}"))
                gos.append(go)
            # create_graph: the backward rules run as recorded ops (no unrecorded shortcut kernel,
            # as mul's two-gradient kernel of a plain backward)
            grads = _grad([outs[k] for k in diff], [xs[i] for i in wrt], gos, allow_unused=True,
                          create_graph=True)
            out_values = [tr.value_of(o) for o in outs]
            grad_values = [None if gr is None else tr.value_of(gr) for gr in grads]
    except Exception as e:           # an op whose backward the trace cannot record: run eagerly
        d.eager = f"its backward could not be traced ({type(e).__name__}: {e})"
        return d
    fwd_nodes, bwd_nodes = j.nodes[:n_fwd], j.nodes[n_fwd:]
    if any(n.kind == "prim::Constant" and isinstance(n.attrs.get("value"), Tensor) for n in j.nodes):
        # a tensor the trace did not see being made: its values would be baked in
        d.eager = "its backward reads a tensor made outside the recorded ops"
        return d
    fwd_defined = {id(o): o for n in fwd_nodes for o in n.outputs}
    input_pos = {id(v): i for i, v in enumerate(j.inputs[:len(sub.inputs)])}
    saved_inputs, inter, consts, seen = [], [], [], set()
    reads = [i for n in bwd_nodes for i in n.inputs] + [v for v in grad_values if v is not None]
    for v in reads:
        if id(v) in seen:
            continue
        seen.add(id(v))
        if id(v) in input_pos:
            saved_inputs.append(input_pos[id(v)])
        elif id(v) in fwd_defined:
            (consts if v.node.kind == "prim::Constant" else inter).append(v)
    grad_inputs = j.inputs[len(sub.inputs):]
    d.fwd = fuse_graph(extract(fwd_nodes, j.inputs[:len(sub.inputs)], out_values + inter))
    bwd_in = [j.inputs[i] for i in saved_inputs] + inter + list(grad_inputs)
    returned = [v for v in grad_values if v is not None]
    d.bwd = fuse_graph(extract([c.node for c in consts] + bwd_nodes, bwd_in, returned))
    d.saved_inputs, d.n_inter, d.sub = saved_inputs, len(inter), sub
    d.n_out, d.diff_outputs = len(outs), diff
    d.grad_of = {}
    r = 0
    for i, v in zip(wrt, grad_values):
        if v is not None:
            d.grad_of[i] = r
            r += 1
    return d


def _ones(t):
    from ..ops.creation import ones_like
    return ones_like(t)


def _make_function():
    from ..autograd.function import Function
    from ..autograd.grad_mode import enable_grad, no_grad

    class DifferentiableGraph(Function):
        """One fused group as one autograd node (TorchScript's DifferentiableGraphBackward)."""

        @staticmethod
        def forward(ctx, d, *ins):
            with no_grad():
                res = run_graph(d.fwd, ins)
            outs, inter = res[:d.n_out], res[d.n_out:]
            ctx.d = d
            ctx.scalars = [x for x in ins if not isinstance(x, Tensor)]
            tensors = [x for x in ins if isinstance(x, Tensor)]
            ctx.tensor_pos = [i for i, x in enumerate(ins) if isinstance(x, Tensor)]
            ctx.save_for_backward(*tensors, *inter)
            non_diff = [o for k, o in enumerate(outs) if k not in d.diff_outputs]
            if non_diff:
                ctx.mark_non_differentiable(*non_diff)
            return outs if len(outs) > 1 else outs[0]

        @staticmethod
        def backward(ctx, *grads):
            d = ctx.d
            saved = ctx.saved_tensors
            n_t = len(ctx.tensor_pos)
            ins = [None] * (len(ctx.tensor_pos) + len(ctx.scalars))
            for p, t in zip(ctx.tensor_pos, saved[:n_t]):
                ins[p] = t
            it = iter(ctx.scalars)
            ins = [next(it) if x is None else x for x in ins]
            gs = [grads[k] for k in d.diff_outputs]
            result = [None] * len(ins)
            wrt = sorted(d.grad_of)
            if is_grad_enabled():
                # create_graph: recompute the group eagerly from its inputs, differentiably
                from ..autograd import grad as _grad
                with enable_grad():
                    outs = run_graph(d.sub, ins)
                    got = _grad([outs[k] for k in d.diff_outputs], [ins[i] for i in wrt], gs,
                                create_graph=True, allow_unused=True)
                for i, g in zip(wrt, got):
                    result[i] = g
            else:
                vals = [ins[i] for i in d.saved_inputs] + list(saved[n_t:]) + gs
                got = run_graph(d.bwd, vals)
                for i in wrt:
                    result[i] = got[d.grad_of[i]]
            return (None, *result)

    return DifferentiableGraph


DifferentiableGraph = _make_function()

FUSION_GROUP_RUNNERS[GROUP_KIND] = run_group


def _graph_for(graph, inputs):
    fused = getattr(graph, "_tt_fused", None)
    if fused is None:
        fused = graph._tt_fused = fuse_graph(graph)
    return fused


def _install():
    from . import GRAPH_FOR_HOOKS
    if _graph_for not in GRAPH_FOR_HOOKS:
        GRAPH_FOR_HOOKS.append(_graph_for)

