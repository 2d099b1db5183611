"""The pass registry: the modules that declare coll's passes are the ones
the pyproject entry points name, each declared pass is registered by the
function its declaration names, a pipeline imports only its own passes'
modules, and a pipeline that names a coll pass finds it without the tool."""
import subprocess
import sys
from pathlib import Path

import tomllib

ROOT = Path(__file__).resolve().parents[2]


def test_the_registry_and_the_entry_points_name_the_same_modules():
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    named = {v.split(":")[0] for v in pyproject["project"]["entry-points"]["coll.passes"].values()}
    from coll.core.registry import DECLARING
    assert set(DECLARING) == named


def test_every_declared_pass_is_registered_by_the_function_it_names():
    from coll.core.registry import declared, load_all
    passes = load_all()
    assert set(passes) == set(declared())
    for name, where in declared().items():
        assert f"{passes[name].fn.__module__}:{passes[name].fn.__name__}" == where, name


def test_a_pipeline_imports_only_the_modules_of_its_passes():
    code = ("import sys\n"
            "import coll.core.pipeline as p\n"
            "from coll.ir import make_context\n"
            "with make_context():\n"
            "    p.build('builtin.module(coll-stats,canonicalize)')\n"
            "print(sorted(m for m in ('coll.analysis.stats', 'coll.lowering', 'coll.frontends', "
            "'coll.passes.lower_collectives') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "['coll.analysis.stats']"


def test_an_embedder_pipeline_finds_coll_passes_without_the_tool():
    code = ("import coll.core.pipeline as p\n"
            "from coll.ir import make_context\n"
            "with make_context():\n"
            "    p.build('builtin.module(coll-to-cpu,canonicalize,coll-spmd-to-global)')\n"
            "import coll.core.registry as r\n"
            "print(sorted(n for n in r.PASSES if n in ('coll-to-cpu', 'coll-spmd-to-global')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "['coll-spmd-to-global', 'coll-to-cpu']"


def test_an_unknown_coll_pass_is_a_pipeline_error():
    import pytest

    from coll.core.errors import PipelineError
    from coll.core.pipeline import build
    from coll.ir import make_context
    with make_context(), pytest.raises(PipelineError, match="coll-nope"):
        build("builtin.module(coll-nope)")
