"""ops/ is a DAG (issue 13 item 3): the op modules form layers, read from their source with ast.

- no import cycle among the op modules at module level;
- function-level (late) imports inside ops/ are few, and each says on its line why it is late;
- the leaf modules (shape arithmetic, argument checks, scalars, memory overlap, the table)
  import no op module but each other, so every op module can use them;
- importing ``tritensor.ops`` alone registers the whole op table.
"""
import ast
import pathlib
import subprocess
import sys

OPS = pathlib.Path(__file__).resolve().parents[1] / "tritensor" / "ops"
LEAVES = ("table", "_shapes", "_checks", "_scalars", "_overlap", "_layout")
MAX_LATE_IMPORTS = 5     # dispatch 2, copy 1, generators 1, reduce 1 (measured: 125 before)


def _modules():
    return {p.stem: p for p in OPS.glob("*.py")}


def _op_targets(node, names):
    """The op modules an Import/ImportFrom node inside tritensor/ops names."""
    found = set()
    if isinstance(node, ast.ImportFrom):
        if node.level == 1:
            if node.module:
                found.add(node.module.split(".")[0])
            else:
                found.update(a.name for a in node.names)
        elif node.level == 0 and node.module and node.module.startswith("tritensor.ops"):
            rest = node.module.split(".")[2:]
            found.update(rest[:1] if rest else [a.name for a in node.names])
    else:
        for a in node.names:
            if a.name.startswith("tritensor.ops."):
                found.add(a.name.split(".")[2])
    return found & names


def _imports(path, names):
    """(module-level targets, [(lineno, targets) of imports inside functions])."""
    tree = ast.parse(path.read_text())
    top, late = set(), []

    def walk(node, in_function):
        for child in ast.iter_child_nodes(node):
            inside = in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
            if isinstance(child, (ast.Import, ast.ImportFrom)):
                if in_function:
                    late.append((child.lineno, _op_targets(child, names)))
                else:
                    top.update(_op_targets(child, names))
            walk(child, inside)
    walk(tree, False)
    return top - {path.stem}, late


def _graph():
    mods = _modules()
    names = set(mods) - {"__init__"}
    return {m: _imports(p, names) for m, p in mods.items() if m != "__init__"}


def test_no_import_cycle_among_op_modules():
    graph = {m: top for m, (top, _) in _graph().items()}
    state = {}

    def visit(m, path):
        state[m] = "open"
        for n in sorted(graph[m]):
            if state.get(n) == "open":
                raise AssertionError("import cycle: " + " -> ".join(path[path.index(n):] + [n]))
            if n not in state:
                visit(n, path + [n])
        state[m] = "done"
    for m in sorted(graph):
        if m not in state:
            visit(m, [m])


def test_late_imports_are_few_and_say_why():
    late = []
    for m, (_, imports) in _graph().items():
        lines = (OPS / f"{m}.py").read_text().splitlines()
        for lineno, _targets in imports:
            line = lines[lineno - 1]
            assert "#" in line, f"ops/{m}.py:{lineno}: a function-level import without a comment saying why: {line.strip()}"
            late.append(f"{m}:{lineno}")
    assert len(late) <= MAX_LATE_IMPORTS, f"{len(late)} function-level imports in ops/: {late}"


def test_leaf_modules_import_no_op_module():
    graph = _graph()
    for leaf in LEAVES:
        top, late = graph[leaf]
        named = top.union(*(t for _, t in late))
        assert named <= set(LEAVES), f"ops/{leaf}.py imports op modules {sorted(named - set(LEAVES))}"


def test_importing_tritensor_ops_registers_the_whole_table():
    def count(code):
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
        return int(out.stdout.strip())
    alone = count("import tritensor.ops.table as t, tritensor.ops; print(len(t.TABLE))")
    everything = count("import tritensor, tritensor.ops.table as t; print(len(t.TABLE))")
    assert alone == everything > 100


def test_no_module_defines_a_top_level_name_twice():
    """A second ``def _pow`` at the end of kernels/special.py once replaced the Hurwitz zeta's
    helper of the same name for every kernel of the module (module globals are looked up at call
    time): zeta gave NaN for negative terms. Python allows the redefinition silently; this does not."""
    import ast
    import glob
    import os
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    twice = {}
    for path in sorted(glob.glob(os.path.join(root, "kernels", "*.py")) +
                       glob.glob(os.path.join(root, "tritensor", "**", "*.py"), recursive=True)):
        with open(path) as f:
            body = ast.parse(f.read()).body
        names = [n.name for n in body if isinstance(n, (ast.FunctionDef, ast.ClassDef))]
        repeated = sorted({n for n in names if names.count(n) > 1})
        if repeated:
            twice[os.path.relpath(path, root)] = repeated
    assert not twice, f"top-level functions or classes defined twice: {twice}"
