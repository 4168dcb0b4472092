"""The public surface is declared once (ops/surface.py): every declared variant exists, and
nothing public in tt, Tensor or tt.nn.functional is undeclared (issue 13 item 1)."""
from __future__ import annotations

import ast
import inspect
import types
from pathlib import Path

import pytest

import tritensor as tt
import tritensor.nn.functional as F
from tritensor.ops import surface
from tritensor.ops.surface import SURFACE

# Public names of tt that are not ops, and why they are not declared as ops:
NOT_OPS_TT = {
    # types: the tensor, its shape, its device, the generator, torch.return_types' named tuples
    "Tensor", "Size", "device", "Generator", "return_types",
    # dtypes and the dtype rules (objects and queries, not ops)
    "dtype", "bfloat16", "bool", "double", "float", "float16", "float32", "float64", "half", "int",
    "int8", "int16", "int32", "int64", "long", "short", "uint8", "uint16", "uint32", "uint64",
    "get_default_dtype", "set_default_dtype",
    "promote_types", "result_type", "can_cast", "finfo", "iinfo",
    # memory formats (layout constants, as torch.channels_last)
    "memory_format", "contiguous_format", "preserve_format", "channels_last", "channels_last_3d",
    # layouts (torch.layout and its values) and the storages tensors hand out
    "layout", "strided", "sparse_coo", "sparse_csr", "TypedStorage", "UntypedStorage",
    # the legacy tensor types (tritensor/_legacy.py: constructors and isinstance tests, not ops)
    "FloatTensor", "DoubleTensor", "HalfTensor", "BFloat16Tensor", "LongTensor", "IntTensor", "ShortTensor",
    "CharTensor", "ByteTensor", "BoolTensor",
    # grad mode (context managers and switches)
    "no_grad", "enable_grad", "set_grad_enabled", "is_grad_enabled", "inference_mode", "is_inference_mode_enabled",
    # torch's float constants
    "e", "inf", "nan", "pi",
    # autocast (torch.amp's context manager and torch's autocast state functions)
    "autocast", "autocast_decrement_nesting", "autocast_increment_nesting", "clear_autocast_cache",
    "get_autocast_cpu_dtype", "get_autocast_dtype", "get_autocast_gpu_dtype", "is_autocast_available",
    "is_autocast_cache_enabled", "is_autocast_cpu_enabled", "is_autocast_enabled", "set_autocast_cache_enabled",
    "set_autocast_dtype", "set_autocast_enabled",
    # the random number state
    "default_generator", "manual_seed", "seed", "initial_seed", "get_rng_state", "set_rng_state",
    # capture (tt.jit's machinery under torch.compile's name: a function wrapper, not an op)
    "compile",
    # settings and serialization (files, not tensors)
    "get_float32_matmul_precision", "set_float32_matmul_precision", "set_printoptions", "load", "save", "load_file",
    "save_file",
}
# tt.nn.functional has no public helper that is not an op
NOT_OPS_F = set()


def _public(obj):
    return {n for n in dir(obj) if not n.startswith("_")}


def _tensor_core_names():
    """Names written in tensor.py's own class body: the data structure itself (storage, shape,
    dtype, autograd fields, conversions), not generated op methods."""
    source = Path(inspect.getsourcefile(tt.Tensor)).read_text()
    for node in ast.parse(source).body:
        if isinstance(node, ast.ClassDef) and node.name == "Tensor":
            names = set()
            for item in node.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    names.add(item.name)
                elif isinstance(item, ast.Assign):
                    names.update(t.id for t in item.targets if isinstance(t, ast.Name))
            return names
    raise AssertionError("class Tensor not found in tensor.py")


def _names(decl):
    return (decl.name,) + tuple(decl.aliases)


def _resolve(name):
    """tt.<name>, a dotted name in a submodule: "special.ndtr" is tt.special.ndtr."""
    obj = tt
    for part in name.split("."):
        obj = getattr(obj, part)
    return obj


# --------------------------------------------------------------------------- declared -> exists
@pytest.mark.parametrize("name", sorted(SURFACE))
def test_every_declared_variant_exists(name):
    decl = SURFACE[name]
    for n in _names(decl):
        if decl.function is not None:
            fn = _resolve(n)
            assert fn is decl.function or getattr(fn, "_out_impl", None) is decl.function, n
            if decl.out is not None:
                assert "out" in inspect.signature(fn).parameters, f"tt.{n} lacks out="
        if decl.method_impl is not None:
            assert n in vars(tt.Tensor), f"Tensor.{n}"
        if decl.inplace is not None:
            if decl.inplace_method:
                assert n + "_" in vars(tt.Tensor), f"Tensor.{n}_"
            wanted = _names(decl) if decl.inplace_function is True else (decl.inplace_function or ())
            assert (getattr(tt, n + "_", None) is decl.inplace) == (n in wanted), f"tt.{n}_"
        if decl.functional is True:
            assert getattr(F, n) is decl.function, f"nn.functional.{n}"
        elif decl.functional == "own":
            assert callable(getattr(F, n)), f"nn.functional.{n}"
    for spec in decl.operators:
        dunder = spec[0] if isinstance(spec, tuple) else spec
        assert dunder in vars(tt.Tensor), f"Tensor.{dunder}"


# --------------------------------------------------------------------------- exists -> declared
def test_nothing_public_in_tt_is_undeclared():
    generated = set(surface.namespace())
    undeclared = {n for n in _public(tt) - generated - NOT_OPS_TT
                  if not isinstance(getattr(tt, n), types.ModuleType)}      # packages: namespaces
    assert not undeclared, f"tt names that no declaration makes: {sorted(undeclared)}"
    for n in generated:         # and tt holds what the declarations made, not an older binding
        assert getattr(tt, n) is surface.namespace()[n], n


# classes a submodule namespace holds besides its declared functions
NOT_OPS_SUBMODULE = {"masked": {"MaskedTensor"}}     # raises NotImplementedError (ops/masked.py)


@pytest.mark.parametrize("prefix", ["special", "masked"])
def test_nothing_public_in_a_submodule_namespace_is_undeclared(prefix):
    module = _resolve(prefix)
    generated = surface.namespace(prefix)
    undeclared = {n for n in _public(module) - set(generated) - NOT_OPS_SUBMODULE.get(prefix, set())
                  if not isinstance(getattr(module, n), types.ModuleType)}
    assert not undeclared, f"tt.{prefix} names that no declaration makes: {sorted(undeclared)}"
    for n, fn in generated.items():
        assert getattr(module, n) is fn, n


def test_a_submodule_function_has_no_method_or_inplace_form():
    with pytest.raises(ValueError, match="submodule"):
        surface.declare("special.not_an_op", abs)


def test_nothing_public_on_tensor_is_undeclared():
    generated = set(surface.methods())
    core = _tensor_core_names()
    undeclared = _public(tt.Tensor) - generated - core
    assert not undeclared, f"Tensor attributes that no declaration makes: {sorted(undeclared)}"
    dunders = {n for n in vars(tt.Tensor) if n.startswith("__") and n.endswith("__")}
    stray = {n for n in dunders - generated - core if n not in vars(object) and n not in
             ("__module__", "__dict__", "__weakref__", "__doc__", "__hash__", "__annotations__",
              "__static_attributes__", "__firstlineno__")}
    assert not stray, f"operators that no declaration makes: {sorted(stray)}"


def test_nothing_public_in_functional_is_undeclared():
    declared = {n for decl in SURFACE.values() if decl.functional for n in _names(decl)}
    undeclared = _public(F) - declared - NOT_OPS_F
    undeclared = {n for n in undeclared if not isinstance(getattr(F, n), types.ModuleType)}
    assert not undeclared, f"nn.functional names that no declaration makes: {sorted(undeclared)}"


def test_declaring_twice_is_refused():
    with pytest.raises(ValueError, match="declared twice"):
        surface.declare("add", tt.add)


# --------------------------------------------------------------------------- generated forms
def test_generated_unary_function_and_inplace_forms():
    x = tt.tensor([0.25, 1.0, 4.0])
    assert tt.sqrt(x).tolist() == [0.5, 1.0, 2.0]
    assert x.sqrt().tolist() == [0.5, 1.0, 2.0]
    y = x.clone()
    assert tt.sqrt_(y) is y and y.tolist() == [0.5, 1.0, 2.0]
    with pytest.raises(TypeError, match=r"sqrt\(\): argument 'input' \(position 1\) must be Tensor, not list"):
        tt.sqrt([1.0])


def test_aliases_are_the_same_variants():
    assert tt.absolute is tt.abs and tt.Tensor.absolute_ is not None and not hasattr(tt, "absolute_")
    assert tt.clip(tt.tensor([-2.0, 2.0]), -1, 1).tolist() == [-1.0, 1.0]
    assert tt.tensor([3.0]).multiply(2).tolist() == [6.0]
    x = tt.tensor([1.0])
    x.subtract_(3)
    assert x.tolist() == [-2.0]
    assert tt.swapaxes(tt.zeros(2, 3), 0, 1).shape == (3, 2)


def test_operators_reflect_and_work_in_place():
    x = tt.tensor([6, 7])
    assert (10 - x).tolist() == [4, 3] and (x - 10).tolist() == [-4, -3]
    assert (2 ** tt.tensor([1, 2])).tolist() == [2, 4]
    assert (~tt.tensor([True, False])).tolist() == [False, True]
    y = x
    y += 1
    assert y is x and x.tolist() == [7, 8]
    assert (7 % x).tolist() == [0, 7] and (x & 1).tolist() == [1, 0]


def test_method_and_operator_bind_the_implementation_without_out():
    """Methods and operators are the implementation through _method's one frame: no out=
    wrapper on the hot path (tests/test_dispatch_budget.py counts the calls)."""
    a = tt.ones(2)

    def bound(method):      # the function _method's one frame calls (its closure's ``fn``)
        return dict(zip(method.__code__.co_freevars, (c.cell_contents for c in method.__closure__)))["fn"]
    assert bound(tt.Tensor.add) is tt.ops.elementwise.add and bound(tt.Tensor.__add__) is tt.ops.elementwise.add
    assert "out" not in inspect.signature(bound(tt.Tensor.add)).parameters
    with pytest.raises(TypeError, match="unexpected keyword argument 'out'"):    # as torch's Tensor.add
        a.add(a, out=tt.empty(2))
    assert tt.Tensor.__add__.__name__ == "add"
    assert tt.add is not tt.ops.elementwise.add           # the out= wrapper
    assert tt.add._out_impl is tt.ops.elementwise.add
    assert (a + a).tolist() == [2.0, 2.0]


def test_out_wrapper_keeps_the_signature():
    sig = inspect.signature(tt.add)
    assert list(sig.parameters) == ["input", "other", "alpha", "out"]
    assert sig.parameters["out"].kind is inspect.Parameter.KEYWORD_ONLY
    with pytest.raises(TypeError):
        tt.add(tt.ones(1), tt.ones(1), alpah=2)
    assert list(inspect.signature(tt.cat).parameters) == ["tensors", "dim", "out"]


def test_elementwise_does_not_import_pointwise():
    """pointwise.py builds on elementwise.py, never the other way round: the namespace is
    generated, so elementwise.py re-exports nothing."""
    from tritensor.ops import elementwise
    tree = ast.parse(Path(elementwise.__file__).read_text())
    imported = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            imported.add(node.module or "")
            imported.update(a.name for a in node.names)
        elif isinstance(node, ast.Import):
            imported.update(a.name for a in node.names)
    assert not any("pointwise" in name for name in imported)


def test_torchs_float_constants():
    import math
    assert tt.e == math.e and tt.pi == math.pi and tt.inf == math.inf and math.isnan(tt.nan)
    assert all(type(v) is float for v in (tt.e, tt.pi, tt.inf, tt.nan))
