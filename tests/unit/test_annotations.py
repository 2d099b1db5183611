"""The package is typed (docs/architecture.md): every function of every
layer annotates its parameters (self and cls excepted) and its return;
`make lint` runs mypy and ruff on it. At least 90% per layer, read with `ast`."""
import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
# a layer's folder, or its one file (api.py: the public entry points)
PACKAGES = ["ir", "core", "collectives", "passes", "analysis", "frontends", "execution", "lowering", "tools", "fuzz",
            "api"]


def _functions(path):
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield node


def annotated(fn):
    args = fn.args.posonlyargs + fn.args.args + fn.args.kwonlyargs
    if args and args[0].arg in ("self", "cls"):
        args = args[1:]
    extra = [a for a in (fn.args.vararg, fn.args.kwarg) if a is not None]
    return fn.returns is not None and all(a.annotation is not None for a in args + extra)


@pytest.mark.parametrize("package", PACKAGES)
def test_the_functions_are_annotated(package):
    one = ROOT / f"{package}.py"
    files = [one] if one.exists() else sorted((ROOT / package).rglob("*.py"))
    fns = [(p, f) for p in files for f in _functions(p)]
    bare = [f"{p.relative_to(ROOT)}:{f.lineno} {f.name}" for p, f in fns if not annotated(f)]
    assert fns and len(bare) <= 0.1 * len(fns), f"{len(bare)} of {len(fns)} not annotated, e.g. {bare[:5]}"


def test_the_public_entry_points_are_all_annotated():
    # api.py is what users call: every function, not 90%
    bare = [f.name for f in _functions(ROOT / "api.py") if not annotated(f)]
    assert not bare, bare


def test_the_count_sees_a_bare_function():
    tree = ast.parse("def f(x, y: int) -> int: ...\ndef g(self, x: int) -> None: ...\ndef h(*a): ...\n")
    assert [annotated(f) for f in tree.body] == [False, True, False]
