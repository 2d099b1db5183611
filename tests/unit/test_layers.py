"""The layering of the package (docs/architecture.md): ir < core <
collectives < passes/analysis < frontends < execution < lowering <
frontends.run < tools < api (the public entry points). Every import statement of every module, lazy
ones inside functions included, is read with `ast`: none may go to a higher
layer, the module graph has no cycle, and no module is imported by a name
string except through the registry's entry points (core/registry.py)."""
import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LAYERS = {"ir": 0, "core": 1, "collectives": 2, "passes": 3, "analysis": 3, "frontends": 4,
          "execution": 5, "lowering": 6, "tools": 8, "fuzz": 8, "api": 9}
# frontends/run/ runs frontends' programs on a target: it sits above lowering/.
SUBLAYERS = {"frontends.run": 7}


def _modules():
    out = {}
    for pkg in LAYERS:
        files = [ROOT / f"{pkg}.py"] if (ROOT / f"{pkg}.py").exists() else sorted((ROOT / pkg).rglob("*.py"))
        for path in files:
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            is_pkg = parts[-1] == "__init__"
            if is_pkg:
                parts = parts[:-1]
            out[".".join(["coll"] + parts)] = (path, is_pkg)
    return out


MODULES = _modules()


def _resolve(name, module, is_pkg, node):
    """Absolute names an import node brings in (coll modules only)."""
    if isinstance(node, ast.Import):
        return [a.name for a in node.names]
    base = module.split(".") if is_pkg else module.split(".")[:-1]
    if node.level:
        base = base[:len(base) - node.level + 1]
        target = ".".join(base + ([node.module] if node.module else []))
    else:
        target = node.module or ""
    names = []
    for a in node.names:
        sub = f"{target}.{a.name}"
        names.append(sub if sub in MODULES else target)
    return names


def _imports():
    graph = {}
    for module, (path, is_pkg) in MODULES.items():
        tree = ast.parse(path.read_text(), str(path))
        deps = set()
        for node in ast.walk(tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                for name in _resolve(module, module, is_pkg, node):
                    if name.startswith("coll.") or name == "coll":
                        deps.add(name)
        graph[module] = deps
    return graph


GRAPH = _imports()


def layer(module):
    parts = module.split(".")
    if len(parts) > 2 and ".".join(parts[1:3]) in SUBLAYERS:
        return SUBLAYERS[".".join(parts[1:3])]
    return LAYERS.get(parts[1]) if len(parts) > 1 else None


def test_every_layer_is_scanned():
    assert {m.split(".")[1] for m in MODULES} >= {"ir", "core", "collectives", "passes", "analysis",
                                                 "frontends", "execution", "lowering", "tools"}
    assert len(MODULES) > 40


@pytest.mark.parametrize("module", sorted(GRAPH))
def test_no_import_goes_up(module):
    up = [d for d in GRAPH[module] if layer(d) is not None and layer(d) > layer(module)]
    assert not up, f"{module} (layer {layer(module)}) imports a higher layer: {sorted(up)}"


def test_no_import_cycle():
    state, stack = {}, []

    def visit(m):
        state[m] = "open"
        stack.append(m)
        for d in sorted(GRAPH.get(m, ())):
            if d not in GRAPH:
                continue
            if state.get(d) == "open":
                cycle = stack[stack.index(d):] + [d]
                pytest.fail("import cycle: " + " -> ".join(cycle))
            if d not in state:
                visit(d)
        stack.pop()
        state[m] = "done"

    for m in sorted(GRAPH):
        if m not in state:
            visit(m)


def test_nothing_is_imported_by_a_name_string():
    allowed = {"coll.core.registry"}  # entry points of the pass registry
    found = []
    for module, (path, _) in MODULES.items():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call):
                f = node.func
                name = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")
                if name in ("import_module", "__import__") and module not in allowed:
                    found.append(f"{module}:{node.lineno}")
    assert not found, found


def test_the_checker_sees_an_upward_import(tmp_path):
    # The scan itself must be able to fail: a lazy import from ir into tools.
    node = ast.parse("def f():\n    from ..tools import coll_opt\n").body[0].body[0]
    names = _resolve("coll.ir.x", "coll.ir.x", False, node)
    assert names == ["coll.tools.coll_opt"] and layer(names[0]) > layer("coll.ir.x")


# -- a collective's identity and vocabulary ------------------------------------

def _collective_names():
    from coll.collectives import COLLECTIVES
    classes = {cls.__name__ for cls in COLLECTIVES}
    names = {cls.NAME for cls in COLLECTIVES} | {cls.short_name() for cls in COLLECTIVES}
    return classes, names


# A pass named for one collective filters by it (coll-lower-all-reduce).
IDENTITY_ALLOWED = {"coll.passes.lower_all_reduce"}


def _identity_branches(tree, classes, names):
    """Lines where code asks which collective it holds: isinstance with a
    collective class, or a comparison with a collective's name."""
    def names_a_collective(node):
        if isinstance(node, ast.Constant) and node.value in names:
            return True
        if isinstance(node, ast.Attribute) and node.attr == "NAME" and getattr(node.value, "id", None) in classes:
            return True
        if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
            return any(names_a_collective(e) for e in node.elts)
        return False

    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "isinstance" and len(node.args) == 2:
            kinds = node.args[1].elts if isinstance(node.args[1], ast.Tuple) else [node.args[1]]
            if any(getattr(k, "id", None) in classes for k in kinds):
                found.append(node.lineno)
        if isinstance(node, ast.Compare) and any(names_a_collective(n) for n in [node.left, *node.comparators]):
            found.append(node.lineno)
    return found


@pytest.mark.parametrize("module", sorted(m for m in MODULES if layer(m) is not None))
def test_no_code_outside_collectives_asks_which_collective_it_holds(module):
    # docs/architecture.md: what differs between collectives is data on
    # their classes (PLACEMENT, AXES, ...) or a hook in their own file.
    if module.startswith("coll.collectives") or module in IDENTITY_ALLOWED:
        return
    classes, names = _collective_names()
    path = MODULES[module][0]
    lines = _identity_branches(ast.parse(path.read_text()), classes, names)
    assert not lines, f"{path.relative_to(ROOT)}:{lines[0]} branches on which collective it holds"


def test_the_identity_check_can_fail():
    classes, names = _collective_names()
    tree = ast.parse("if isinstance(c, Broadcast): pass\nif op.name == 'coll.reduce': pass\n"
                     "if c.short_name() in ('all_gather', 'x'): pass\nif op.name == AllReduce.NAME: pass\n")
    assert _identity_branches(tree, classes, names) == [1, 2, 3, 4]


# What the layers above ir/ say of a collective: its lowering, frontends'
# names, coll-gen, benchmarks, tests. ir/ (layer 0) holds the IR only.
UPPER_VOCABULARY = {"SHARD", "STABLEHLO", "GEN", "EMITTER", "busbw", "sample", "SAMPLE_SIZES",
                    "DEFAULT_THRESHOLD", "reference_rule", "estimated_ops", "defines", "runnable", "spec",
                    "reference", "emit", "choose", "buffer_ops"}


@pytest.mark.parametrize("module", sorted(m for m in MODULES if m.startswith("coll.ir.")))
def test_ir_holds_no_upper_layer_vocabulary(module):
    path = MODULES[module][0]
    defined = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            defined.add(node.name)
        elif isinstance(node, ast.Assign):
            defined |= {t.id for t in node.targets if isinstance(t, ast.Name)}
    assert not defined & UPPER_VOCABULARY, f"{path.relative_to(ROOT)} defines {sorted(defined & UPPER_VOCABULARY)}"
