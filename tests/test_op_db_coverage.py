"""Completeness, measured: PyTorch's own list of ops (the OpInfo database, ``op_db`` in
torch.testing._internal.common_methods_invocations) against tritensor's public surface.

``tests/data/op_db_names.txt`` holds op_db's distinct names (written once with torch by
``tests/data/make_op_db_names.py``; tritensor never imports torch). A name counts as implemented
when it resolves in tritensor's namespace as it does in torch's: ``linalg.solve`` is
``tt.linalg.solve``, ``nn.functional.relu`` is ``tt.nn.functional.relu``, ``torch.ops.aten.x`` is
``tt.ops.aten.x``, and a bare name is ``tt.<name>``, a Tensor attribute (``H``, ``__radd__``; the
in-place method for op_db's random samplers in ``INPLACE_ONLY``: ``cauchy`` is ``Tensor.cauchy_``) or,
where op_db's entry is an ATen operator with no public function (``slice`` is aten.slice.Tensor),
``tt.ops.aten.<name>``.

Every public name (not starting with ``_``) must be implemented or sit on ``ELSEWHERE`` with the
issue that builds it and why; a name on ``ELSEWHERE`` that becomes implemented must leave it (the
list only shrinks). Run with ``-s`` to see the coverage line.
"""
import pathlib

import tritensor as tt

NAMES = [line for line in (pathlib.Path(__file__).parent / "data" / "op_db_names.txt").read_text().splitlines()
         if line and not line.startswith("#")]
PUBLIC = [n for n in NAMES if not n.startswith("_")]

_COMPLEX = "complex numbers and torch.fft: a later issue (tritensor has no complex dtypes yet)"
_QUANT = "quantization: fp8 scaled matmul (torch._scaled_mm) needs float8 dtypes, not taken up"
_JIT = ("torch.cuda.jiterator compiles CUDA C++ source strings at run time; tritensor's kernels are "
        "Triton and it has no C++ compiler path (the fuser, issue 26, is its Triton counterpart)")


def _names(prefix=""):
    return [n for n in PUBLIC if n.startswith(prefix)]


ELSEWHERE = {
    **dict.fromkeys([
        "angle", "cdouble", "cfloat", "chalf", "complex", "conj", "conj_physical", "imag", "real", "polar",
        "view_as_complex", "view_as_real", "resolve_conj", "resolve_neg", "stft", "istft",
        "linalg.eig", "linalg.eigvals", *_names("fft.")], _COMPLEX),
    **dict.fromkeys(["torch._scaled_mm", "torch._scaled_mm_v2"], _QUANT),
    **dict.fromkeys(_names("jiterator"), _JIT),
}

# Issue 21's names not built yet, by family (one block each, so work on different families
# edits different lines): the blocks only shrink, and are gone when the issue is done.
PENDING_BY_FAMILY = {
    "pointwise": """
    """.split(),
    "reductions_indexing": """
    """.split(),
    "legacy_sparse_random": """
    """.split(),
}
PENDING = {n for names in PENDING_BY_FAMILY.values() for n in names}


# The names implemented before issue 21 took the list as its measure; every name built since
# has an OpInfo record (tests/opinfo.py or a tests/opinfo_<family>.py) naming it.
BEFORE_ISSUE_21 = set("""
T abs add addmm all amax amin any arange argmax argmin as_strided baddbmm bernoulli bfloat16
bitwise_and bitwise_not bitwise_or bitwise_xor bmm bool broadcast_shapes byte cat cdist ceil char
chunk clamp clamp_max clamp_min clone contiguous cos count_nonzero cumprod cumsum diag_embed
diagonal diagonal_scatter div dot double empty empty_like eq erf exp exp2 expand expand_as expm1
eye flatten flip fliplr flipud float floor floor_divide fmod full full_like gather ge gt half
hstack index_put index_select int isfinite isinf isnan item le linspace log log10 log1p log2
log_softmax logical_and logical_not logical_or logical_xor logsumexp long lt mT masked_fill
masked_select matmul max maximum mean min minimum mm movedim mul multinomial mv narrow ne neg
new_empty new_full new_ones new_zeros nn.functional.binary_cross_entropy
nn.functional.binary_cross_entropy_with_logits nn.functional.cross_entropy nn.functional.dropout
nn.functional.embedding nn.functional.gelu nn.functional.hardtanh nn.functional.huber_loss
nn.functional.l1_loss nn.functional.layer_norm nn.functional.leaky_relu nn.functional.linear
nn.functional.mse_loss nn.functional.nll_loss nn.functional.normalize nn.functional.one_hot
nn.functional.pdist nn.functional.relu nn.functional.relu6 nn.functional.silu
nn.functional.smooth_l1_loss nonzero norm normal ones ones_like outer permute pow prod rand_like
randint randint_like randn randn_like reciprocal remainder repeat reshape reshape_as resize_ roll
round rsqrt scatter scatter_add scatter_reduce select short sigmoid sign sin softmax split
split_with_sizes sqrt square squeeze stack std sub sum sum_to_size t take tan tanh tensor_split to
transpose tril triu true_divide trunc unbind unflatten unfold unsqueeze var view view_as vstack
where zero_ zeros zeros_like
""".split())


# op_db names whose op is the in-place method (torch has no function or method without the
# underscore): op_db's random samplers, tested through Tensor.<name>_
INPLACE_ONLY = {"cauchy", "exponential", "geometric", "log_normal", "uniform"}


def resolve(name):
    """The tritensor object for an op_db name, or None."""
    path = name.split(".")
    if path[0] == "torch":
        path = path[1:]
    obj = tt
    for part in path:
        obj = getattr(obj, part, None)
        if obj is None:
            break
    if obj is None and len(path) == 1:
        obj = getattr(tt.Tensor, name + "_" if name in INPLACE_ONLY else name, None)
    if obj is None and len(path) == 1:
        obj = getattr(getattr(tt.ops, "aten", None), name, None)
    return obj


def coverage():
    implemented = [n for n in PUBLIC if resolve(n) is not None]
    return implemented, len(implemented) / len(PUBLIC)


def test_every_op_db_name_is_implemented_or_left_to_another_issue_with_its_reason():
    implemented, share = coverage()
    print(f"\nop_db coverage: {len(implemented)} of {len(PUBLIC)} public names ({share:.1%}); "
          f"{len(ELSEWHERE)} left to other issues, {len(PENDING)} pending")
    missing = sorted(n for n in PUBLIC if resolve(n) is None and n not in ELSEWHERE and n not in PENDING)
    assert not missing, f"op_db names neither implemented nor listed with a reason: {missing}"
    done = sorted(n for n in set(ELSEWHERE) | PENDING if resolve(n) is not None)
    assert not done, f"implemented now, remove from ELSEWHERE/PENDING: {done}"
    assert set(ELSEWHERE) <= set(PUBLIC) and PENDING <= set(PUBLIC)
    assert all(reason.strip() for reason in ELSEWHERE.values())


def test_every_op_built_since_has_an_opinfo_record():
    from opinfo import RECORDS
    specified = {r.name for r in RECORDS if r.has_parity or r.grad_case is not None}
    specified |= {n for r in RECORDS if r.has_parity or r.grad_case is not None for n in r.op_db}
    new = [n for n in PUBLIC if n not in BEFORE_ISSUE_21 and resolve(n) is not None]
    unrecorded = sorted(n for n in new if n not in specified and n.replace(".", "_") not in specified)
    assert not unrecorded, f"ops built without an OpInfo record (samples or a gradient case): {unrecorded}"
    assert len(BEFORE_ISSUE_21) == 196 and BEFORE_ISSUE_21 <= set(PUBLIC)


def test_the_name_list_is_torchs_own():
    assert len(NAMES) == 636 and len(PUBLIC) == 617
    assert {"sort", "linalg.solve", "special.zeta", "nn.functional.conv2d", "__radd__"} <= set(NAMES)
