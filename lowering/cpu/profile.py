"""coll-profile-collectives: how much of a program's time its collectives
take (`coll-run --profile`, issue 36): the rest is local work.

Every run of copies and combines in a block (one collective, or several
in a row, between two ops of local work; in any block: a loop's body, a
rank's case) is bracketed by reads of the monotonic clock (clock_gettime,
from the C library the JIT and the MPI library link), and the nanoseconds
between them are added to a counter in static memory; the entry function
counts its calls. On the MPI route (after coll-to-mpi) a rank's messages
and its waits for them are the collective's too. `coll_profile_read(out:
memref<2xi64>)` (C interface) hands the counters over and zeroes them:
nanoseconds in collectives, calls.

The brackets are ops the tiling does not understand, so they sit between
segments, where local work would; but they end an epilogue
(lowering/cpu/epilogue.py): a profiled program runs its epilogues after
their collectives, as `epilogues=off` does, and reports that program's
split. Each bracket costs two clock reads (about 50 ns).
"""
from mlir import ir
from mlir.dialects import arith, func, memref

from ...core.registry import register
from .fuse import BENIGN_OPS

COUNTERS = "coll_profile_counters"
NOW = "coll_profile_now"
READ = "coll_profile_read"
WORK = ("coll.copy", "coll.combine", "mpi.isend", "mpi.irecv", "mpi.wait")
PASSIVE = BENIGN_OPS + ("memref.get_global",)  # (a rank's scratch, between its messages)


DECLARATIONS = f"""
memref.global "private" @{COUNTERS} : memref<2xi64> = dense<0>
llvm.func @clock_gettime(i32, !llvm.ptr) -> i32
func.func private @{NOW}() -> i64 {{
  %one = llvm.mlir.constant(1 : i64) : i64
  %spec = llvm.alloca %one x !llvm.array<2 x i64> : (i64) -> !llvm.ptr
  %monotonic = llvm.mlir.constant(1 : i32) : i32
  %r = llvm.call @clock_gettime(%monotonic, %spec) : (i32, !llvm.ptr) -> i32
  %s = llvm.load %spec : !llvm.ptr -> i64
  %at = llvm.getelementptr %spec[1] : (!llvm.ptr) -> !llvm.ptr, i64
  %ns = llvm.load %at : !llvm.ptr -> i64
  %giga = arith.constant 1000000000 : i64
  %t = arith.muli %s, %giga : i64
  %now = arith.addi %t, %ns : i64
  return %now : i64
}}
func.func @{READ}(%out: memref<2xi64>) attributes {{llvm.emit_c_interface}} {{
  %src = memref.get_global @{COUNTERS} : memref<2xi64>
  memref.copy %src, %out : memref<2xi64> to memref<2xi64>
  %zero = arith.constant 0 : i64
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  memref.store %zero, %src[%c0] : memref<2xi64>
  memref.store %zero, %src[%c1] : memref<2xi64>
  return
}}
"""


def _declare(module_op: ir.Operation) -> None:
    """The counters, the clock (CLOCK_MONOTONIC = 1 on Linux) and the
    reader, once per module."""
    body = module_op.regions[0].blocks[0]
    parsed = ir.Module.parse(DECLARATIONS)
    first = next(iter(body.operations), None)
    for op in list(parsed.body.operations):
        if first is None:
            body.append(op.operation)
        else:
            op.operation.move_before(first)


def _add(slot: int, amount: ir.Value) -> None:
    """counters[slot] += amount, at the insertion point."""
    i64 = ir.IntegerType.get_signless(64)
    buf = memref.get_global(ir.MemRefType.get([2], i64), COUNTERS)
    at = [arith.constant(ir.IndexType.get(), slot)]
    memref.store(arith.addi(memref.load(buf, at), amount), buf, at)


def _runs(block: ir.Block) -> list[tuple[ir.Operation, ir.Operation]]:
    """(first, last) op of each run of copies and combines (benign ops
    between them belong to the run)."""
    runs: list[tuple[ir.Operation, ir.Operation]] = []
    run: list[ir.Operation] = []
    for op in block.operations:
        name = op.operation.name
        if name in WORK:
            run.append(op.operation)
        elif name not in PASSIVE and run:
            runs.append((run[0], run[-1]))
            run = []
    if run:
        runs.append((run[0], run[-1]))
    return runs


def profile_collectives(module_op: ir.Operation) -> None:
    i64 = ir.IntegerType.get_signless(64)
    functions = [op.operation for op in module_op.regions[0].blocks[0].operations
                 if op.operation.name == "func.func" and op.operation.regions[0].blocks]
    _declare(module_op)
    for f in functions:
        block = f.regions[0].blocks[0]
        if "llvm.emit_c_interface" in f.attributes:  # an entry: count its calls
            with ir.InsertionPoint.at_block_begin(block), f.location:
                _add(1, arith.constant(i64, 1))
        for inner in _blocks(f):
            for first, last in _runs(inner):
                with ir.InsertionPoint(first), first.location:
                    start = func.CallOp([i64], NOW, []).result
                with ir.InsertionPoint.after(last), last.location:
                    end = func.CallOp([i64], NOW, []).result
                    _add(0, arith.subi(end, start))


def _blocks(op: ir.Operation) -> list[ir.Block]:
    """Every block in `op`'s regions, nested ones too (a run holds no op
    with regions, so no bracket is inside another)."""
    out: list[ir.Block] = []
    for region in op.regions:
        for block in region.blocks:
            out.append(block)
            for inner in block.operations:
                out += _blocks(inner.operation)
    return out


@register("coll-profile-collectives",
          "Bracket every run of copies and combines with clock reads and add the nanoseconds to a "
          "static counter (and count the entry's calls), read by coll_profile_read: the time a "
          "program spends in its collectives (coll-run --profile)", anchor="builtin.module")
def profile_collectives_pass(module_op: ir.Operation) -> None:
    with module_op.context, module_op.location:
        profile_collectives(module_op)
