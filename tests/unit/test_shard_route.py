"""The shard route as text: the same pipeline string in coll-opt and from
Python gives the same IR, and a frontend can put coll-from-shard into its
own PassManager after upstream's partitioning (no MPI needed)."""
import subprocess
import sys
from pathlib import Path

from mlir import ir
from mlir.passmanager import PassManager

from coll.core import routes
from coll.core.pipeline import add_pass, run
from coll.frontends import shard
from coll.ir import make_context

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "mlp_shard_2x2.mlir"


def test_the_shard_route_text_is_the_same_in_coll_opt_and_python():
    text = routes.pipeline(shard.route())
    with make_context():
        m = ir.Module.parse(EXAMPLE.read_text())
        run(m.operation, text)
        ours = str(m)
    proc = subprocess.run([sys.executable, "-m", "coll.tools.coll_opt", str(EXAMPLE), f"--pass-pipeline={text}"],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == ours.strip()
    assert '"coll.all_reduce"' in ours and "groups = array<i64: 0, 2, 1, 3>" in ours and "shard." not in ours


def test_coll_from_shard_in_a_frontends_own_pass_manager():
    with make_context() as ctx:
        m = ir.Module.parse(EXAMPLE.read_text().replace("2x2", "4").replace("[[1], [0]]", "[[], [0]]")
                            .replace("[[1]]", "[[]]"))
        pm = PassManager.parse("builtin.module(func.func(sharding-propagation,cse),"
                               "func.func(shard-partition,canonicalize,cse))", ctx)
        add_pass(pm, "coll-from-shard")
        pm.run(m.operation)
        out = str(m)
    assert "coll.ranks = 4 : i64" in out
    assert '"coll.all_reduce"' in out and "devices = array<i64: 0, 1, 2, 3>" in out
    assert "shard." not in out
