"""Run a program that a frontend brought in (frontends/: StableHLO from JAX)
on global arrays, laid out over the devices as the frontend says.

    from coll.frontends import stablehlo
    prog = compile(lowered.compiler_ir("stablehlo"), stablehlo, backend="cpu")
    ys = prog.run(xs)                # global arrays in, global arrays out
    ys, times = prog.run(xs, 10)     # and the seconds of 10 timed runs

The frontend parses the source (`parse`), says which block of each global
argument and result rank r holds (`layouts`), and gives the route to
coll's SPMD function (`route`); the function is then compiled for the CPU
(one simulated device per rank: its global view) or for MPI (a process per
rank), and backends/sharded.py's ShardProgram scatters the inputs and gathers
the results by those layouts (blocks that several ranks hold must agree).
bf16 arrays are uint16 bit patterns; ml_dtypes.bfloat16 ones (JAX's) are
taken as they are.
"""
import numpy as np
from mlir import ir

from . import cpu, mpi
from .sharded import ShardError, ShardProgram, _OnCpu

BACKENDS = ("cpu", "mpi")
_CACHE = {}


def lower(source, frontend, context=None):
    """(SPMD module text, Boundary, the frontend's pipeline text): the
    frontend's route run on `source` in `context` (default: a fresh one
    with coll loaded). Raises ir.MLIRError or PassError, located."""
    from ..core import routes
    from ..core.pipeline import run
    from ..ir import make_context
    from ..frontends.spmd import ranks_of

    ctx = context or make_context()
    with ctx, ir.Location.unknown():
        module = frontend.parse(source)
        boundary = frontend.layouts(module.operation)
        text = routes.pipeline(frontend.route(module.operation))
        run(module.operation, text)
        func = ir.SymbolTable(module.operation)[boundary.entry]
        ranks = ranks_of(func) or 1
        if ranks != int(np.prod(boundary.grid)):
            raise ShardError(f"@{boundary.entry} runs on {ranks} ranks but its layouts are over a grid of "
                             f"{'x'.join(map(str, boundary.grid))}", func.location)
        types = list(ir.FunctionType(ir.TypeAttr(func.attributes["function_type"]).value).inputs)
        for lay, t in zip(boundary.inputs + boundary.outputs, types):
            if tuple(ir.MemRefType(t).shape) != lay.local:
                raise ShardError(f"@{boundary.entry} takes {t} where the layout gives blocks of "
                                 f"{'x'.join(map(str, lay.local))}", func.location)
        return module.operation.get_asm(enable_debug_info=True), boundary, text


def compile(source, frontend, backend="cpu", strategy="auto", timeout=mpi.DEFAULT_TIMEOUT):
    """A ShardProgram of `source` (whatever `frontend.parse` takes: text or
    a module) for `backend`: `cpu` (one simulated device per rank) or `mpi`
    (one process per rank under mpirun). `prog.inputs`/`prog.outputs` are
    the Layouts, `prog.pipeline` the whole route. Cached per arguments."""
    if backend not in BACKENDS:
        raise ValueError(f"unknown backend '{backend}'; expected one of: {', '.join(BACKENDS)}")
    text = source if isinstance(source, (str, bytes)) else source.operation.get_asm(enable_debug_info=True)
    key = (text, frontend.__name__, backend, strategy, timeout)
    if key in _CACHE:
        return _CACHE[key]
    text, boundary, front = lower(source, frontend)
    ranks = int(np.prod(boundary.grid))
    if backend == "mpi" and ranks == 1:
        raise ValueError(f"@{boundary.entry} runs on one device (no mesh, no sharding): the mpi back end runs "
                         "programs over several ranks; expected backend='cpu' for it")
    if backend == "cpu":
        compiled = cpu.compile(text, boundary.entry, strategy=strategy)
        program = _OnCpu(compiled, ranks)
    else:
        compiled = program = mpi.compile(text, boundary.entry, strategy=strategy, timeout=timeout)
    # The whole route: the frontend's, then what the back end ran.
    pipeline = front[:-1] + "," + compiled.pipeline[len("builtin.module("):]
    prog = FrontendProgram(program, None, boundary.grid, boundary.inputs + boundary.outputs, len(boundary.inputs),
                           pipeline)
    _CACHE[key] = prog
    return prog


class FrontendProgram(ShardProgram):
    """A ShardProgram that also takes what JAX hands out: bf16 arrays as
    ml_dtypes.bfloat16 (read as their bit patterns, coll's uint16
    convention, runtime/signature.py; results come back that way) and
    JAX arrays (numpy arrays of them)."""

    def _check(self, xs):
        xs = [np.asarray(x) for x in xs]
        xs = [x.view(np.uint16) if x.dtype.name == "bfloat16" else x for x in xs]
        return super()._check(xs)


def clear_cache():
    _CACHE.clear()


def launch(runs, repeat=0):
    """Several programs compiled for `mpi` (one group size) in one mpirun:
    `runs` is [(ShardProgram, global inputs)]; returns per program its
    global results, and with `repeat` also the seconds of each of `repeat`
    timed runs (slowest rank), the programs interleaved run by run."""
    scattered = [prog._scatter(prog._check(xs)) for prog, xs in runs]
    times = mpi.launch([(prog.program, ins, outs) for (prog, _), (ins, outs) in zip(runs, scattered)], repeat)
    results = [prog._gather(outs) for (prog, _), (_, outs) in zip(runs, scattered)]
    return (results, times) if repeat else results
