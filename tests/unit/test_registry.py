"""The pass registry: the modules coll-opt imports to register every pass
are the ones the pyproject entry points name (what an embedder's first
pipeline loads), and a pipeline that names a coll pass finds it without
the tool (through the entry points)."""
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_tool_and_the_entry_points_load_the_same_modules():
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    named = {v.split(":")[0] for v in pyproject["project"]["entry-points"]["coll.passes"].values()}
    src = (ROOT / "tools" / "coll_opt.py").read_text()
    body = src[src.index("def all_passes():"):src.index("def _is_pass(")]
    imported = {f"coll.{line.split('from coll.')[1].split(' import ')[0]}.register"
                for line in body.splitlines() if "import register as" in line}
    assert imported == named


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
    from coll.core.errors import PipelineError
    from coll.core.pipeline import build
    from coll.ir import make_context
    import pytest
    with make_context(), pytest.raises(PipelineError, match="coll-nope"):
        build("builtin.module(coll-nope)")
