"""Upstream shard programs on coll: an annotated, unpartitioned one runs on
global arrays (`compile`: frontends/run/global_arrays.py with the shard frontend:
partition, coll collectives, bufferize; scatter by the annotations, run on
cpu or mpi, gather, and check against the same function unpartitioned); a
program partitioned already runs per rank (`compile_partitioned`), and
`compile_upstream` takes upstream's own convert-shard-to-mpi instead of
coll, for side-by-side comparison.

    prog = compile(text)                 # the annotated, unpartitioned module
    ys = prog.run(xs)                    # global arrays in, global arrays out
    ys, times = prog.run(xs, 10)         # and the seconds of 10 timed runs (slowest rank)
    ref = prog.reference(xs)             # the unsharded function on the CPU JIT
"""
import re
import subprocess
from typing import cast

from mlir import ir

from ...core import routes
from ...core.pipeline import run
from ...core.tools import tool
from ...ir import IRDL_FILE, make_context
from ...lowering import mpi
from ...lowering.mpi.runtime import MpiProgram
from .. import shard as shard_frontend
from .. import tensor
from ..spmd import GLOBAL_ARGS_ATTR, RANK_INPUTS_ATTR, RANKS_ATTR
from . import global_arrays

# The back ends a partitioned program runs on here.
BACKENDS = global_arrays.BACKENDS


def compile(module_text: str | bytes, entry: str | None = None, strategy: str = "auto",
            timeout: float = mpi.DEFAULT_TIMEOUT, backend: str = "mpi") -> global_arrays.GlobalProgram:
    """An annotated, unpartitioned program (shard.grid, shard.shard) for
    `backend` (mpi: a process per rank; cpu: one simulated device per rank),
    checked against itself unpartitioned: frontends/run/global_arrays.py with the
    shard frontend. Raises ir.MLIRError / PassError / VerifyError (located)."""
    return global_arrays.compile(module_text, shard_frontend, backend, strategy, timeout, entry)


class UpstreamFailed(RuntimeError):
    """Upstream's convert-shard-to-mpi could not lower a program."""


def _per_rank(module_text: str, name: str, ranks: int, lower_text: str) -> str:
    """A partitioned program as one rank's memref function, ready for
    lowering/mpi/runtime.py: `lower_text` (pipeline text) first, then the marks
    lowering/mpi/runtime.py reads: its arguments (then its results, now out-params)
    are one rank's; the global view is every rank's, argument i of rank r
    at i * ranks + r."""
    with make_context():
        module = ir.Module.parse(module_text)
        f = ir.SymbolTable(module.operation)[name]
        k_in = len(ir.FunctionType(ir.TypeAttr(f.attributes["function_type"]).value).inputs)
        run(module.operation, lower_text)
        f = ir.SymbolTable(module.operation)[name]
        k = len(ir.FunctionType(ir.TypeAttr(f.attributes["function_type"]).value).inputs)
        i64 = ir.IntegerType.get_signless(64)
        f.attributes[RANKS_ATTR] = ir.IntegerAttr.get(i64, ranks)
        f.attributes[GLOBAL_ARGS_ATTR] = ir.DenseI64ArrayAttr.get(
            [i * ranks + r for r in range(ranks) for i in range(k)])
        f.attributes[RANK_INPUTS_ATTR] = ir.IntegerAttr.get(i64, k_in)
        return str(module)


def compile_partitioned(module_text: str, name: str, strategy: str = "auto",
                        timeout: float = mpi.DEFAULT_TIMEOUT) -> MpiProgram:
    """A program shard-partition made (or written so by hand: an SPMD
    function with shard collectives on a shard.grid) -> an MpiProgram
    through coll (coll-from-shard ... coll-spmd-to-mpi). Its arrays are
    every rank's: argument i of rank r is global array i * ranks + r."""
    with make_context():
        module = ir.Module.parse(module_text)
        run(module.operation, routes.pipeline(shard_frontend.route(partition=False)))
        text = str(module)
    return cast(MpiProgram, mpi.compile(text, name, strategy=strategy, timeout=timeout))


def compile_upstream(module_text: str, name: str, ranks: int, timeout: float = mpi.DEFAULT_TIMEOUT) -> MpiProgram:
    """The same partitioned program through upstream's convert-shard-to-mpi
    instead of coll, for side-by-side comparison. Raises UpstreamFailed
    with what upstream said when it leaves a shard op (LLVM 22.1.8:
    "failed to legalize" for every collective but all_reduce, exit 0)."""
    proc = subprocess.run([tool("mlir-opt"), f"--irdl-file={IRDL_FILE}", "--convert-shard-to-mpi",
                           "--canonicalize"], input=module_text, capture_output=True, text=True, timeout=300)
    left = [l for l in proc.stdout.splitlines() if re.search(r"\bshard\.(?!grid\b)\w+", l)]
    said = next((l for l in proc.stderr.splitlines() if "error" in l), "")
    if proc.returncode or said or left:
        raise UpstreamFailed((said.split("error:", 1)[-1].strip() or (left[0].strip() if left else proc.stderr))
                             + f" (mlir-opt exit code {proc.returncode})")
    text = re.sub(r"^\s*shard\.grid .*$", "", proc.stdout, flags=re.M)
    text = _per_rank(text, name, ranks, routes.pipeline(tensor.route()))
    return cast(MpiProgram, mpi.compile(text, name, timeout=timeout))
