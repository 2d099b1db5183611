"""coll-lower-collectives: every collective -> the explicit level.

One rewrite pattern per collective of the registry (coll/collectives/):
the op's strategy (its `strategy` attribute, what coll-choose-strategy
wrote; else the pass option; `auto`: the collective's default rule) is
emitted before it by the collective's own code, then the op's token is
replaced by the join of the program's terminal tokens, and the program is
claimed (`coll.implements`) for coll-check-semantics.
coll-lower-all-reduce (passes/lower_all_reduce.py) is this lowering.
"""
from collections.abc import Iterable
from typing import cast

from mlir import ir
from mlir.rewrite import FrozenRewritePatternSet, PatternRewriter, RewritePatternSet, walk_and_apply_patterns

from ..collectives import BY_NAME, COLLECTIVES
from ..collectives.all_reduce import DEFAULT_THRESHOLD
from ..collectives.base import Collective
from ..collectives.emit import Emitter, claim, require_global_view, require_memref_form
from ..core.errors import PassError
from ..core.registry import choice, register
from ..ir import STRATEGIES, peers
from ..ir.ops import COLLECTIVE_NAMES as NAMES
from ..ir.ops import ORDERS, PEER_ACCESS, view
from ..ir.types import numel
from ..ir.walk import find_ops

MAX_OPS = 2_000_000  # above this, building the program would exhaust memory


def reference_rule(name: str, n: int, size: int, threshold: int = DEFAULT_THRESHOLD) -> str:
    """The default strategy of collective `name` over n devices and `size`
    elements per input (the collective's own rule)."""
    return BY_NAME[name].reference_rule(n, size, threshold)


def check_global_form(op: ir.Operation, c: Collective) -> None:
    """The lowerings take one buffer per device: an SPMD-form collective
    (one rank's buffers, `devices` naming the group) is refused, located."""
    if len(c.inputs) != len(c.input_devices) or len(c.outputs) != len(c.output_devices):
        raise PassError(f"{op.name} has {len(c.inputs)} input(s) and {len(c.outputs)} output(s) for "
                        f"devices {list(c.devices)}; expected one buffer per device (an SPMD-form "
                        "collective needs coll-spmd-to-global first)", op.location)


def estimate(op: ir.Operation, strategy: str) -> tuple[int, str, str]:
    """(ops, what, advice): collective `op`'s estimate by `strategy`
    (Collective.estimated_ops, from the real decomposition)."""
    c = cast(Collective, view(op))  # a collective: its class is collectives/
    n, shape = len(c.devices), list(ir.MemRefType(c.inputs[0].type).shape)
    return c.estimated_ops(strategy, n, shape, cast(list[int], c.axes))  # the verifier: integers


def size_problem(op: ir.Operation, strategy: str) -> str | None:
    """The limit message when lowering collective `op` by `strategy` would
    emit more than MAX_OPS ops (its estimate, from the real decomposition),
    else None; nothing is built to know it."""
    size, what, advice = estimate(op, strategy)
    if size > MAX_OPS:
        return (f"lowering this {op.name} {what} would emit about {size} ops, above the limit of "
                f"{MAX_OPS}; use fewer devices" + (f" or {advice}" if advice else ""))
    return None


def check_size(op: ir.Operation, strategy: str) -> None:
    """Refuses (located) a lowering of `op` by `strategy` above MAX_OPS."""
    problem = size_problem(op, strategy)
    if problem:
        raise PassError(problem, op.location)


def choose(op: ir.Operation, strategy: str = "auto", threshold: int = DEFAULT_THRESHOLD) -> str:
    """The strategy collective `op` is lowered by: its own, else `strategy`
    (auto: the collective's default rule); a located error for one it has not."""
    c = cast(Collective, view(op))
    chosen = c.strategy if c.strategy not in (None, "auto") else strategy
    if chosen in (None, "auto"):
        t = c.threshold if c.threshold is not None else threshold
        chosen = c.reference_rule(len(c.devices), numel(c.inputs[0].type), t)
    if chosen not in c.STRATEGIES:
        raise PassError(f"unknown strategy '{chosen}' for {op.name}; expected one of: "
                        f"{', '.join(c.STRATEGIES)}", op.location)
    return chosen


def count_ops(total: int, op: ir.Operation, strategy: str, at_least: bool = False) -> int:
    """`total` plus the ops collective `op` emits by `strategy` (its
    estimate); refuses (located, at `op`) when that crosses MAX_OPS: the
    limit bounds what one program builds, not each collective alone.
    `at_least`: `strategy` is the op's fewest, not its choice (the message
    says so)."""
    check_size(op, strategy)  # one collective above it: its own message
    size = estimate(op, strategy)[0]
    if total + size > MAX_OPS:
        raise PassError(f"lowering this program's collectives up to this {op.name} would emit "
                        f"{'at least' if at_least else 'about'} "
                        f"{total + size} ops, above the limit of {MAX_OPS} for one program; use fewer "
                        "devices or split the program", op.location)
    return total + size


def check_program_size(ops: list[ir.Operation], strategy: str, threshold: int) -> None:
    """Refuses a program whose collectives together are above MAX_OPS
    (count_ops), before any is built."""
    total = 0
    for op in ops:
        c = cast(Collective, view(op))
        if not all(isinstance(v.type, ir.MemRefType) for v in c.inputs) or len(c.inputs) != len(c.input_devices):
            continue  # the tensor or SPMD form: lower_op refuses it, located
        total = count_ops(total, op, choose(op, strategy, threshold))


def lower_op(op: ir.Operation | ir.OpView, strategy: str = "auto",
             threshold: int = DEFAULT_THRESHOLD) -> tuple[str, ir.Value]:
    """Replaces one collective with its explicit program; returns the
    strategy used (the op's own, else `strategy`; auto: the default rule)."""
    op = op.operation
    require_memref_form(op)
    require_global_view(op)
    c = cast(Collective, view(op))  # a collective: its class is collectives/
    check_global_form(op, c)
    chosen = choose(op, strategy, threshold)
    n = len(c.devices)
    check_size(op, chosen)
    if PEER_ACCESS in c.needs(chosen) and n > 1 and not peers.enabled(op):
        raise PassError(f"strategy '{chosen}' reads buffers of other devices in place; the "
                        f"module has no '{peers.ATTR}' (set it when the devices can address "
                        "each other's memory, e.g. logical devices on one GPU)", op.location)
    with ir.InsertionPoint(op), op.location:
        e = cast("type[Emitter]", c.EMITTER)(op)  # every collective names its emitter
        c.emit(e, chosen)
        final = e.finish()
        claim(c, final)  # what the program computes, for coll-check-semantics
    return chosen, final


def patterns(strategy: str = "auto", threshold: int = DEFAULT_THRESHOLD, only: Iterable[str] | None = None,
             used: list[str] | None = None) -> FrozenRewritePatternSet:
    """The pattern set: one pattern per collective (`only`: those names);
    `used` collects the strategies chosen, in program order."""
    def lower(op: ir.Operation, rewriter: PatternRewriter) -> None:
        chosen, final = lower_op(op, strategy, threshold)
        rewriter.replace_op(op, [final])
        if used is not None:
            used.append(chosen)
    s = RewritePatternSet()
    for cls in COLLECTIVES:
        if only is None or cls.NAME in only:
            s.add(cls.NAME, lower)
    return s.freeze()


def set_order(root: ir.Operation, order: str) -> None:
    """Writes `order` (ir/ops.py ORDERS; '' leaves each op's own) on every
    reducing collective under `root`: the pass option of coll-choose-strategy
    and coll-lower-collectives."""
    if not order:
        return
    for op in find_ops(root, lambda name: name in NAMES):
        if BY_NAME[op.name].HAS_KIND:
            op.attributes["order"] = ir.StringAttr.get(order, op.context)


def lower_collectives(module_op: ir.Operation, strategy: str = "auto", threshold: int = DEFAULT_THRESHOLD,
                      only: Iterable[str] | None = None, order: str = "") -> list[str]:
    """Lowers every collective under module_op (`only`: of those names), in
    program order; returns the strategies used. `order`: set_order first."""
    set_order(module_op, order)
    used: list[str] = []
    ops = find_ops(module_op, lambda name: name in NAMES and (only is None or name in only))
    if ops:
        check_program_size(ops, strategy, threshold)
        walk_and_apply_patterns(module_op, patterns(strategy, threshold, only, used))
    return used


@register("coll-lower-collectives",
          f"Lower every collective ({', '.join(cls.short_name() for cls in COLLECTIVES)}) to explicit "
          "copies, combines and tokens, by its strategy attribute "
          "(ops without one: strategy=S, or the default rule for auto); order=canonical|any sets every "
          "reducing collective's order contract first",
          strategy=(choice(*STRATEGIES), "auto"), threshold=(int, DEFAULT_THRESHOLD),
          order=(choice(*ORDERS), ""))
def lower_collectives_pass(op: ir.Operation, strategy: str = "auto", threshold: int = DEFAULT_THRESHOLD,
                           order: str = "") -> None:
    lower_collectives(op, strategy, threshold, order=order)

