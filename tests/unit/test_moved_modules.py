"""Old import paths (coll/__init__.py MOVED): each old module is the new
module itself where it can be (a package whose modules went to several
places is a stand-in that reads the new one), star-imports and answers
attributes as a module does, leaves the new module's __spec__ alone, and
warns once, naming the place that exists. One fresh interpreter per entry:
what an import warns depends on what was imported before it."""
import json
import subprocess
import sys

import pytest

from coll import MOVED

PROBE = r"""
import importlib, json, sys, warnings
old, where = sys.argv[1], sys.argv[2]
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    exec(f"import {old}")  # the statement a user writes
    m = sys.modules[old]
    star = {}
    exec(f"from {old} import *", star)
new = importlib.import_module(where)
want = {}
exec(f"from {where} import *", want)
public = [k for k in dir(new) if not k.startswith("_")]


def same(got, k):  # the new module's, or the stand-in of a package under the old path
    return got is getattr(new, k) or got is sys.modules.get(f"{old}.{k}")


print(json.dumps({
    "warnings": [str(w.message) for w in caught if issubclass(w.category, FutureWarning)],
    "same": m is new,
    "reads_new": all(same(getattr(m, k), k) for k in public),
    "star": sorted(k for k in star if not k.startswith("__")) == sorted(k for k in want if not k.startswith("__"))
            and all(same(star[k], k) for k in want if not k.startswith("__")),
    "spec": new.__spec__.name,
    "hasattr": hasattr(m, "nope"),
    "getattr": repr(getattr(m, "nope", None)),
    "warned_targets_exist": all(importlib.util.find_spec(str(w.message).split(" moved to ")[1].split(";")[0])
                                is not None for w in caught if issubclass(w.category, FutureWarning)),
}))
"""

# Packages whose modules went to several places: a stand-in, not the new package.
STAND_INS = {old for old in MOVED if any(k.startswith(old + ".") for k in MOVED)}


@pytest.mark.parametrize("old", sorted(MOVED))
def test_an_old_path_is_the_new_module_and_warns_once(old):
    where = MOVED[old]
    r = subprocess.run([sys.executable, "-c", PROBE, old, where], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    got = json.loads(r.stdout)
    assert got["warnings"] == [f"{old} moved to {where}; import that instead"], got["warnings"]
    assert got["warned_targets_exist"]
    assert got["same"] == (old not in STAND_INS), old
    assert got["reads_new"] and got["star"], got
    assert got["spec"] == where, f"importing {old} renamed {where}'s __spec__ to {got['spec']}"
    assert got["hasattr"] is False and got["getattr"] == "None", got


def test_stand_ins_are_only_the_split_packages():
    assert STAND_INS == {"coll.runtime", "coll.backends"}


@pytest.mark.parametrize("statement, says", [
    ("import coll.runtime.cpu", ["coll.runtime.cpu moved to coll.lowering.cpu"]),
    ("from coll.runtime import cpu", ["coll.runtime.cpu moved to coll.lowering.cpu"]),
    ("import coll.backends.mpi.project", ["coll.backends.mpi.project moved to coll.lowering.mpi.to_mpi"]),
    ("import coll.backends.cpu.runtime", ["coll.backends.cpu moved to coll.lowering.cpu"]),
])
def test_a_nested_old_path_warns_once_with_the_place_that_exists(statement, says):
    code = (f"import warnings\nwarnings.simplefilter('always')\n{statement}\n"
            "import coll.lowering.cpu\nassert coll.lowering.cpu.__spec__.name == 'coll.lowering.cpu'")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    lines = [line.split(": FutureWarning: ")[1] for line in r.stderr.splitlines() if ": FutureWarning: " in line]
    assert lines == [f"{s}; import that instead" for s in says], r.stderr


def _collective_classes():
    from coll.collectives import COLLECTIVES
    from coll.collectives.base import Collective
    return [*COLLECTIVES, Collective]


@pytest.mark.parametrize("cls", _collective_classes(), ids=lambda c: c.__name__)
def test_a_collective_class_still_answers_in_ir_ops_and_says_where_it_went(cls):
    # They were coll.ir.ops.AllReduce, ...: ir/ finds them among the
    # registered classes, importing nothing above it (test_layers.py).
    where = f"{cls.__module__}.{cls.__qualname__}"
    with pytest.warns(FutureWarning, match=f"coll.ir.ops.{cls.__name__} moved to {where}; import that instead"):
        exec(f"from coll.ir.ops import {cls.__name__} as got", ns := {})
    assert ns["got"] is cls


def test_ir_ops_answers_an_unknown_name_as_a_module_does():
    import coll.ir.ops as ops
    assert not hasattr(ops, "Nope") and getattr(ops, "Nope", None) is None
    with pytest.raises(ImportError, match="cannot import name 'Nope' from 'coll.ir.ops'"):
        exec("from coll.ir.ops import Nope", {})


def test_a_stand_in_says_where_a_name_it_lacks_went():
    # An outside attack read `coll.runtime.signature` after `import
    # coll.runtime`: a submodule not imported yet is no attribute (as in
    # any package), but the error names the module to import.
    r = subprocess.run([sys.executable, "-c", "import coll.runtime as r\ntry:\n    r.signature\n"
                        "except AttributeError as e:\n    print(e)\ntry:\n    r.nothing\n"
                        "except AttributeError as e:\n    print(e)"], capture_output=True, text=True, timeout=120)
    assert r.stdout.splitlines() == [
        "module 'coll.runtime' has no attribute 'signature'; coll.runtime moved to coll.execution: "
        "import coll.execution.signature",
        "module 'coll.runtime' has no attribute 'nothing'; coll.runtime moved to coll.execution"], r.stderr
