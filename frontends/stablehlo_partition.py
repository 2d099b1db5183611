"""coll-xla-partition: a jit program with shardings (JAX's `jax.jit` with
NamedSharding in/out shardings: `sdy.sharding` on its arguments and
results, no collective) partitioned by XLA's own partitioner, in a child
process (frontends/jaxlib_partition.py: jaxlib bundles another MLIR than
coll's). What comes back is one device's program with the collectives XLA
inserted, in StableHLO, which coll-from-stablehlo imports as it imports a
shard_map body.

Why XLA's partitioner and not upstream's (`sharding-propagation`,
`shard-partition`, which this route ran until issue 33): on real JAX
programs upstream's fails. Its ShardingInterface for linalg takes only
indexing maps of dimensions (a constant index such as the `(d0, d1) -> (0,
d1)` of a bias broadcast, or the `(d0, d1, 0)` of a `keepdims` mean in a
layernorm, is "fail to get sharding option"); tensor.expand_shape and
collapse_shape (attention's heads) have no sharding interface in LLVM
22.1.8; resharding aborts on a grid of more than one axis (a 2x4 mesh).
Fusing elementwise ops first rescues an MLP with biases but not a
transformer block. XLA's is the partitioner JAX itself runs, so the
program coll runs is partitioned as JAX's is (the same collectives on
the same groups), on any mesh.
"""
import json
import math
import subprocess
import sys
from pathlib import Path
from typing import Any

from mlir import ir

from ..core.registry import register
from ..ir.walk import all_ops
from .shard import Boundary
from .stablehlo import PARTITIONED_ATTR, StableHLOError, detect, entry, is_jit, layouts
from .stablehlo_import import _legalize_error, replace_body

PARTITION = Path(__file__).with_name("jaxlib_partition.py")
PARTITION_TIMEOUT = 300


def _slices(block: tuple[slice, ...]) -> list[list[int | None]]:
    """A Layout.block as [start, stop] per dimension, as the child gives them."""
    return [[s.start or 0, s.stop] for s in block]


def _check_blocks(module_op: ir.Operation, boundary: Boundary, found: dict[str, Any]) -> None:
    """The block each partition holds, as XLA compiled the program, is the
    block rank p holds by the layouts coll scatters and gathers by (they
    differ where a value has no sharding and XLA chose one)."""
    n = math.prod(boundary.grid)
    where = entry(module_op).location
    for what, lays, blocks in (("argument", boundary.inputs, found["inputs"]),
                               ("result", boundary.outputs, found["outputs"])):
        for i, (lay, per_partition) in enumerate(zip(lays, blocks)):
            full: list[list[int | None]] = [[0, d] for d in lay.shape]
            for p in range(n):
                want = _slices(lay.block(boundary.grid, p))
                want = [w if w[1] is not None else f for w, f in zip(want, full)]
                if per_partition[p] != want:
                    raise StableHLOError(
                        f"XLA's partitioner gives partition {p} the block {per_partition[p]} of {what} #{i} "
                        f"but its sharding gives rank {p} {want}; expected a sharding on every argument and "
                        "result (jit's in_shardings and out_shardings, which XLA keeps) over a mesh in device "
                        "order (device_ids 0..N-1: partition p is rank p)", where)


@register("coll-xla-partition",
          "Partition a jit program with shardings (sdy.sharding on its arguments and results) with XLA's own "
          "partitioner, in a child process (jaxlib): the module becomes one device's program, with the "
          "collectives XLA inserted, for coll-from-stablehlo; other modules are left alone",
          anchor="builtin.module")
def xla_partition(module_op: ir.Operation) -> None:
    with module_op.context, module_op.location:
        if not detect(module_op) or not is_jit(module_op):
            return
        boundary = layouts(module_op)
        n = math.prod(boundary.grid)
        if n > 1:
            _partition(module_op, boundary, n)
        # XLA's attribute for the partition count, and the mark that this
        # is XLA's per-device program (one device's: as it was): what the
        # import reads.
        module_op.attributes["mhlo.num_partitions"] = ir.IntegerAttr.get(ir.IntegerType.get_signless(32), n)
        module_op.attributes[PARTITIONED_ATTR] = ir.UnitAttr.get()


def _partition(module_op: ir.Operation, boundary: Boundary, n: int) -> None:
    """The module replaced by the one XLA's partitioner makes of it for n
    partitions (XLA runs no partitioner for one)."""
    ops = [op for op in all_ops(module_op) if op.name.startswith("stablehlo.")]  # where XLA's errors go
    text = str(module_op.get_asm(enable_debug_info=True, print_generic_op_form=True))
    try:
        proc = subprocess.run([sys.executable, str(PARTITION), str(n)], input=text, capture_output=True,
                              text=True, timeout=PARTITION_TIMEOUT)
    except subprocess.TimeoutExpired:
        raise StableHLOError(f"XLA's partitioner did not finish within {PARTITION_TIMEOUT} s",
                             module_op.location) from None
    if proc.returncode == 3:
        raise StableHLOError(f"a jit program with shardings is partitioned by XLA's partitioner, and jaxlib "
                             f"does not import here ({proc.stderr.strip()}); expected jax and jaxlib installed "
                             "(`make setup`, or pip install -e '.[jax]')", entry(module_op).location)
    if proc.returncode != 0:
        raise _legalize_error(proc.stderr, ops, module_op, who="XLA's partitioner")
    found = json.loads(proc.stdout)
    _check_blocks(module_op, boundary, found)
    new = replace_body(module_op, found["module"])
    for name in list(new.operation.attributes):
        module_op.attributes[name] = new.operation.attributes[name]
