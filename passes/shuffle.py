"""coll-shuffle{seed=K}: reorder the ops of every block into another valid
order, chosen at random (deterministic for a seed).

A test pass: a lowering or runtime that depends on the emission order
rather than on the token graph shows up as a wrong result after a shuffle.
Constraints kept (the terminator stays last):
- SSA def-use, including values used inside an op's nested regions;
- ops that may have side effects we do not model (coll.wait, calls,
  stores, ...) keep their order relative to each other and to every
  coll op: a wait blocks the host, so what came after it stays after it.
Everything else (views, constants, coll.alloc, and coll.copy/combine/join
among themselves) moves freely within those constraints.
"""
import random

from mlir import ir

from ..core.registry import register
from ..ir.ops import ASYNC_OPS
from ..ir.views import VIEW_OPS

# Ops without side effects whose order only SSA constrains.
FREE_OPS = VIEW_OPS + ("arith.constant", "coll.alloc", "memref.alloc")
ATTEMPTS = 8  # tries to find an order that differs from the current one


def _uses_in(op: ir.Operation, index: dict[ir.Operation, int]) -> set[int]:
    """Indices (in `index`) of the block ops whose results `op` uses,
    directly or inside its regions."""
    deps: set[int] = set()

    def add(o: ir.Operation) -> ir.WalkResult:
        for v in o.operands:
            if isinstance(v, ir.OpResult):
                j = index.get(v.owner.operation)
                if j is not None:
                    deps.add(j)
        return ir.WalkResult.ADVANCE
    if len(op.regions):
        op.walk(add, ir.WalkOrder.POST_ORDER)
    else:
        add(op)
    return deps


def _graph(ops: list[ir.Operation]) -> list[set[int]]:
    """preds[i]: the ops that must come before ops[i]."""
    index = {op: i for i, op in enumerate(ops)}
    preds = [_uses_in(op, index) for op in ops]
    last_barrier: int | None = None
    since: list[int] = []  # the coll ops after the last barrier
    for i, op in enumerate(ops):
        name = op.name
        if name in FREE_OPS:
            continue
        if name in ASYNC_OPS:
            if last_barrier is not None:
                preds[i].add(last_barrier)
            since.append(i)
            continue
        # A barrier: after the previous one and every coll op since.
        if last_barrier is not None:
            preds[i].add(last_barrier)
        preds[i].update(since)
        last_barrier, since = i, []
    preds = [p - {i} for i, p in enumerate(preds)]
    return preds


def _random_order(preds: list[set[int]], rng: random.Random) -> list[int]:
    n = len(preds)
    succs: list[list[int]] = [[] for _ in range(n)]
    count = [len(p) for p in preds]
    for i, p in enumerate(preds):
        for j in p:
            succs[j].append(i)
    ready = [i for i in range(n) if count[i] == 0]
    order: list[int] = []
    while ready:
        k = rng.randrange(len(ready))
        ready[k], ready[-1] = ready[-1], ready[k]
        i = ready.pop()
        order.append(i)
        for s in succs[i]:
            count[s] -= 1
            if count[s] == 0:
                ready.append(s)
    assert len(order) == n, "SSA or token cycle in a block"
    return order


def shuffle_block(block: ir.Block, rng: random.Random) -> None:
    ops = [op.operation for op in block.operations]
    if len(ops) < 3:
        return
    term, ops = ops[-1], ops[:-1]
    preds = _graph(ops)
    fixed = [i for i, op in enumerate(ops) if op.name not in FREE_OPS]
    is_fixed = set(fixed)
    order = best = list(range(len(ops)))
    # Prefer an order that moves the coll ops themselves, not only views.
    for _ in range(ATTEMPTS):
        order = _random_order(preds, rng)
        if [i for i in order if i in is_fixed] != fixed:
            break
        if best == sorted(best):
            best = order
    else:
        order = best
    for i in order:
        ops[i].move_before(term)


def _blocks(module_op: ir.Operation) -> list[ir.Block]:
    """Every block below the module's own body (function bodies and the
    blocks nested in them)."""
    out: list[ir.Block] = []

    def visit(op: ir.Operation) -> ir.WalkResult:
        if op.name != "builtin.module":
            for region in op.regions:
                out.extend(region.blocks)
        return ir.WalkResult.ADVANCE
    module_op.walk(visit, ir.WalkOrder.POST_ORDER)
    return out


@register("coll-shuffle", "Reorder the ops of every block into another valid order "
          "(token graph, SSA, side effects), at random by seed: a test pass",
          seed=(int, 0))
def shuffle(module_op: ir.Operation, seed: int = 0) -> None:
    rng = random.Random(seed)
    for block in _blocks(module_op):
        shuffle_block(block, rng)
