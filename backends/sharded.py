"""Run a tensor program annotated with upstream `shard.shard` under mpirun,
as one rank per process of its grid, and check it against the same
function run unsharded.

    prog = compile(text)                 # the annotated, unpartitioned module
    ys = prog.run(xs)                    # global arrays in, global arrays out
    ys, times = prog.run(xs, 10)         # and the seconds of 10 timed runs (slowest rank)
    ref = prog.reference(xs)             # the unsharded function on the CPU JIT

compile() lowers the module through the `shard` route (core/routes.py:
partition, coll collectives, bufferize) to its SPMD function and hands that
to backends/mpi/runtime.py. Rank r is the grid's process with linear index r. Each
argument is scattered by its annotation (a dimension split over grid axes
[a, b] gives rank r the block at r's linear index over a, b; a dimension
split over none is whole), each result gathered by its own; blocks that
several ranks hold (replicated) must agree.
"""
import json
import re
from dataclasses import dataclass

import numpy as np
from mlir import ir

from . import cpu, mpi
from ..frontends import shard as shard_frontend, tensor
from ..runtime.signature import NUMPY_DTYPES


from ..core.errors import PassError


# The back ends a partitioned program runs on here.
BACKENDS = ("cpu", "mpi")


class ShardError(PassError):
    """Bad input, located at the op or function it is about."""


@dataclass
class Layout:
    """How one global array is split: per dimension, the grid axes it is
    split over ([] = whole)."""
    shape: tuple      # global
    local: tuple      # one rank's block
    element: str
    split: list       # per dimension, a list of grid axes

    def block(self, grid, r):
        """Rank r's block: a tuple of slices into the global array."""
        coords = _coords(grid, r)
        out = []
        for d, axes in enumerate(self.split):
            i = 0
            for a in axes:
                i = i * grid[a] + coords[a]
            out.append(slice(i * self.local[d], (i + 1) * self.local[d]))
        return tuple(out) + tuple(slice(None) for _ in range(len(self.shape) - len(self.split)))


def _coords(grid, r):
    out = []
    for d in reversed(grid):
        out.append(r % d)
        r //= d
    return out[::-1]


def _split_axes(sharding_op):
    """split_axes of a shard.sharding op; ShardError for what we cannot
    scatter (partial values, halos, explicit offsets)."""
    attrs = sharding_op.attributes
    for key in ("partial_axes", "partial_type"):
        if key in attrs:
            raise ShardError("a partial value at the function boundary: expected the arguments and results "
                             "split or replicated", sharding_op.location)
    for key in ("static_halo_sizes", "static_sharded_dims_offsets"):
        if key in attrs and len(list(ir.DenseI64ArrayAttr(attrs[key]))):
            raise ShardError(f"'{key}' at the function boundary: expected plain splits (no halos, no offsets)",
                             sharding_op.location)
    text = str(attrs["split_axes"])
    m = re.match(r"#shard<axisarray(\[.*\])>", text)
    if not m:
        raise ShardError(f"cannot read split_axes {text}", sharding_op.location)
    return json.loads(m.group(1))


def _annotation(value, user=True):
    """The shard.sharding op that annotates `value` (its shard.shard use
    for an argument, its defining shard.shard for a result), or None."""
    if user:
        for use in value.uses:
            o = use.owner
            if o.name == "shard.shard" and "annotate_for_users" not in o.attributes:
                return o.operands[1].owner
        return None
    o = value.owner
    if hasattr(o, "name") and o.name == "shard.shard":
        return o.operands[1].owner
    return None


def _layouts(func, grid, local_types, k_in):
    """Layouts of the arguments then the results of annotated `func`."""
    ft = ir.FunctionType(ir.TypeAttr(func.attributes["function_type"]).value)
    block = func.regions[0].blocks[0]
    ret = block.operations[len(block.operations) - 1]
    values = [(a, True) for a in block.arguments] + [(v, False) for v in ret.operands]
    types = list(ft.inputs) + list(ft.results)
    out = []
    for i, ((v, is_arg), t, lt) in enumerate(zip(values, types, local_types)):
        what = f"argument #{i}" if is_arg else f"result #{i - k_in}"
        if not isinstance(t, ir.RankedTensorType) or not ir.RankedTensorType(t).has_static_shape:
            raise ShardError(f"{what} is {t}; expected a statically shaped tensor", func.location)
        tt = ir.RankedTensorType(t)
        shape, local = tuple(tt.shape), tuple(ir.MemRefType(lt).shape)
        ann = _annotation(v, is_arg)
        split = _split_axes(ann) if ann is not None else [[] for _ in shape]
        split = split + [[] for _ in range(len(shape) - len(split))]
        for d, axes in enumerate(split):
            count = int(np.prod([grid[a] for a in axes])) if axes else 1
            if shape[d] % count or shape[d] // count != local[d]:
                raise ShardError(f"{what}: dimension {d} of {shape[d]} split over grid axes {axes} gives blocks "
                                 f"of {shape[d] / count:g}, but the partitioned function takes {local[d]}; "
                                 f"annotate {what} with shard.shard", func.location)
        out.append(Layout(shape, local, str(tt.element_type), split))
    return out


class ShardProgram:
    def __init__(self, program, reference, grid, layouts, k_in, pipeline):
        self.program, self.reference_program = program, reference
        self.grid, self.layouts, self.k_in, self.pipeline = grid, layouts, k_in, pipeline
        self.ranks = program.ranks
        self.strategies = program.strategies

    @property
    def inputs(self):
        return self.layouts[:self.k_in]

    @property
    def outputs(self):
        return self.layouts[self.k_in:]

    def _check(self, xs):
        xs = list(xs)
        if len(xs) != self.k_in:
            raise ValueError(f"expected {self.k_in} global arrays (x0..x{self.k_in - 1}), got {len(xs)}")
        for i, (x, lay) in enumerate(zip(xs, self.inputs)):
            if tuple(x.shape) != lay.shape or x.dtype != NUMPY_DTYPES[lay.element]:
                raise ValueError(f"x{i}: expected {lay.shape} {NUMPY_DTYPES[lay.element]}, got {x.shape} {x.dtype}")
        return xs

    def _scatter(self, xs):
        n = self.ranks
        ins = [np.ascontiguousarray(x[lay.block(self.grid, r)]) for x, lay in zip(xs, self.inputs) for r in range(n)]
        outs = [np.zeros(lay.local, NUMPY_DTYPES[lay.element]) for lay in self.outputs for _ in range(n)]
        return ins, outs

    def _gather(self, outs):
        """Global arrays from every rank's blocks; replicas must agree."""
        n, ys = self.ranks, []
        for j, lay in enumerate(self.outputs):
            y = np.zeros(lay.shape, NUMPY_DTYPES[lay.element])
            seen = {}
            for r in range(n):
                b = lay.block(self.grid, r)
                block = outs[j * n + r]
                key = tuple((s.start, s.stop) for s in b)
                if key in seen and not np.array_equal(seen[key][1], block, equal_nan=True):
                    raise mpi.MpiError(f"y{j}: ranks {seen[key][0]} and {r} hold the same block but different "
                                       "values (replicas differ)")
                seen.setdefault(key, (r, block))
                y[b] = block
            ys.append(y)
        return ys

    def run(self, xs, repeat=0):
        """Global arrays xs -> global results, in one mpirun; with `repeat`,
        (results, seconds of each of `repeat` timed runs after it)."""
        ins, outs = self._scatter(self._check(xs))
        times = self.program.launch(ins, outs, repeat)
        ys = self._gather(outs)
        return (ys, times) if repeat else ys

    def reference(self, xs):
        """The same function unsharded, on the CPU JIT."""
        xs = self._check(xs)
        ys = [np.zeros(lay.shape, NUMPY_DTYPES[lay.element]) for lay in self.outputs]
        self.reference_program.run([x.copy() for x in xs], ys)
        return ys


class _OnCpu:
    """The partitioned program on the CPU-simulated devices (the global
    view of its SPMD function, coll-spmd-to-global: one device per rank),
    launched like an MpiProgram: every rank's blocks in, i * N + r."""

    def __init__(self, program, ranks):
        self.program, self.ranks, self.strategies = program, ranks, program.strategies

    def launch(self, ins, outs, repeat=0):
        self.program.run(ins, outs)
        if not repeat:
            return []
        return self.program.time([x.copy() for x in ins], [np.zeros_like(o) for o in outs], repeat)


def compile(module_text, entry=None, strategy="auto", timeout=mpi.DEFAULT_TIMEOUT, backend="mpi"):
    """Partitions, lowers and builds the annotated module for `backend`
    (mpi: a process per rank; cpu: one simulated device per rank); raises
    ir.MLIRError / PassError / VerifyError (located) or ShardError."""
    from ..core import routes
    from ..core.pipeline import run
    from ..ir import make_context
    from ..ir.verifier import verify_or_raise
    from ..frontends.shard import strip_annotations
    from ..frontends.spmd import ranks_of
    from ..runtime.signature import find_entry

    with make_context():
        module = ir.Module.parse(module_text)
        verify_or_raise(module.operation)
        func = find_entry(module, entry)
        name = ir.StringAttr(func.attributes["sym_name"]).value
        ft = ir.FunctionType(ir.TypeAttr(func.attributes["function_type"]).value)
        k_in = len(ft.inputs)
        grids = [op for op in module.body.operations if op.operation.name == "shard.grid"]
        if not grids:
            raise ShardError("no shard.grid in the module: expected a program annotated with shard.shard",
                             func.location)
        spmd = ir.Module.parse(module_text)
        run(spmd.operation, routes.pipeline(shard_frontend.route()))
        f = ir.SymbolTable(spmd.operation)[name]
        ranks = ranks_of(f)
        if ranks is None:
            raise ShardError(f"@{name} uses no grid after partitioning: nothing to run in parallel", func.location)
        used = [g for g in grids if list(g.opview.shape) and int(np.prod(list(g.opview.shape))) == ranks]
        grid = list(used[0].opview.shape)
        local_types = list(ir.FunctionType(ir.TypeAttr(f.attributes["function_type"]).value).inputs)
        layouts = _layouts(func, grid, local_types, k_in)
        spmd_text = str(spmd)
        plain = ir.Module.parse(module_text)
        strip_annotations(plain.operation)
        run(plain.operation, routes.pipeline(tensor.route()))
        plain_text = str(plain)
    if backend == "cpu":
        program = _OnCpu(cpu.compile(spmd_text, name, strategy=strategy), ranks)
        pipeline = routes.pipeline(shard_frontend.route(), cpu.route())
    else:
        program = mpi.compile(spmd_text, name, strategy=strategy, timeout=timeout)
        pipeline = routes.pipeline(shard_frontend.route(), mpi.route())
    reference = cpu.compile(plain_text, name)
    return ShardProgram(program, reference, grid, layouts, k_in, pipeline)


class UpstreamFailed(RuntimeError):
    """Upstream's convert-shard-to-mpi could not lower a program."""


def _per_rank(module_text, name, ranks, lower_text):
    """A partitioned program as one rank's memref function, ready for
    backends/mpi/runtime.py: `lower_text` (pipeline text) first, then the marks
    backends/mpi/runtime.py reads: its arguments (then its results, now out-params)
    are one rank's; the global view is every rank's, argument i of rank r
    at i * ranks + r."""
    from ..core.pipeline import run
    from ..ir import make_context
    from ..frontends.spmd import GLOBAL_ARGS_ATTR, RANK_INPUTS_ATTR, RANKS_ATTR

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


def compile_partitioned(module_text, name, strategy="auto", timeout=mpi.DEFAULT_TIMEOUT):
    """A program shard-partition made (or written so by hand: an SPMD
    function with shard collectives on a shard.grid) -> an MpiProgram
    through coll (coll-from-shard ... coll-spmd-to-mpi). Its arrays are
    every rank's: argument i of rank r is global array i * ranks + r."""
    from ..core import routes
    from ..core.pipeline import run
    from ..ir import make_context
    with make_context():
        module = ir.Module.parse(module_text)
        run(module.operation, routes.pipeline(shard_frontend.route(partition=False)))
        text = str(module)
    return mpi.compile(text, name, strategy=strategy, timeout=timeout)


def compile_upstream(module_text, name, ranks, timeout=mpi.DEFAULT_TIMEOUT):
    """The same partitioned program through upstream's convert-shard-to-mpi
    instead of coll, for side-by-side comparison. Raises UpstreamFailed
    with what upstream said when it leaves a shard op (LLVM 22.1.8:
    "failed to legalize" for every collective but all_reduce, exit 0)."""
    import subprocess

    from ..core import routes
    from ..ir import IRDL_FILE
    from ..core.tools import tool
    proc = subprocess.run([tool("mlir-opt"), f"--irdl-file={IRDL_FILE}", "--convert-shard-to-mpi", "--canonicalize"],
                          input=module_text, capture_output=True, text=True, timeout=300)
    left = [l for l in proc.stdout.splitlines() if re.search(r"\bshard\.(?!grid\b)\w+", l)]
    said = next((l for l in proc.stderr.splitlines() if "error" in l), "")
    if proc.returncode or said or left:
        raise UpstreamFailed((said.split("error:", 1)[-1].strip() or (left[0].strip() if left else proc.stderr))
                             + f" (mlir-opt exit code {proc.returncode})")
    text = re.sub(r"^\s*shard\.grid .*$", "", proc.stdout, flags=re.M)
    text = _per_rank(text, name, ranks, routes.pipeline(tensor.route()))
    return mpi.compile(text, name, timeout=timeout)
