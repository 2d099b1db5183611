"""coll-choose-strategy: writes the `strategy` attribute of every collective.

Without a profile it applies the collective's default rule (its
`reference_rule`, coll/collectives/; all_reduce: ring when N > 2 and numel >
threshold, else naive); with one (`profile=cpu|nvlink-h200|FILE.json`) it
lowers each candidate strategy in a private Context and picks the one the
cost model (analysis/cost_model.py) predicts fastest. A strategy already on
the op wins, unless the pass is given `strategy=S`, which forces S on every
collective (what `coll-run --strategy` does). The lowering then only reads
the attribute. The candidates are the strategies whose needs the target
meets: the module's (peer access: its coll.peer_access attribute) and the
back end's, `capabilities=peer_access,...` (each Backend.capabilities, which
lowering/driver.py passes: the CPU's simulated devices share one memory,
logical devices on one GPU too; MPI ranks do not). A
peer strategy chosen by that capability sets coll.peer_access, which then
holds. The candidates are lowered under each op's order contract
(`order`, ir/ops.py ORDERS; the pass option `order=any|canonical` writes
it first): by default the device-order forms are costed.
"""
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, cast

from mlir import ir
from mlir.dialects import func

from ..analysis import cost_model, taskgraph
from ..collectives import BY_NAME
from ..collectives.all_reduce import DEFAULT_THRESHOLD, AllReduce
from ..collectives.base import Collective
from ..collectives.emit import require_global_view, require_memref_form
from ..core.errors import PassError
from ..core.registry import choice, register
from ..ir import STRATEGIES, builders, make_context, peers
from ..ir.kinds import ELEMENTS
from ..ir.ops import CAPABILITIES, COLLECTIVE_NAMES, ORDERS, PEER_ACCESS, view
from ..ir.types import flat_type, numel
from ..ir.walk import find_ops
from .lower_collectives import check_size, count_ops, estimate, lower_collectives, set_order, size_problem


@dataclass(frozen=True)
class Instance:
    """What the lowering of one collective op depends on: a collective that
    moves whole buffers (no axes), its flat size; one with axes, its shapes
    too; and its attributes."""
    devices: tuple[int, ...]
    numel: int
    elem: str
    kind: str | None
    to_device: int | None = None
    op: str = AllReduce.NAME
    # (input shape, output shape, inputs, outputs)
    shapes: tuple[tuple[int, ...], tuple[int, ...], int, int] | None = None
    # ((name, value), ...): root, axes, arrays (as tuples)
    attrs: tuple[tuple[str, int | tuple[int, ...] | None], ...] = ()
    peer_access: bool = False  # coll.peer_access: the peer strategies are candidates
    order: str | None = None  # a reducing collective's order contract (ir/ops.py ORDERS)

    @staticmethod
    def of(op: ir.Operation, capabilities: Iterable[str] = ()) -> "Instance":
        """The collective `op`, on a back end with `capabilities`."""
        c = cast(Collective, view(op))  # a collective: its class is collectives/
        mt = ir.MemRefType(c.inputs[0].type)
        access = peers.enabled(op) or PEER_ACCESS in capabilities
        attrs: tuple[tuple[str, int | tuple[int, ...] | None], ...] = tuple((k, c.axis(k)) for k in c.AXES)
        if c.root is not None:
            attrs += (("root", c.root),)
        attrs += tuple((k, tuple(v)) for k, v in c.arrays.items() if v is not None)  # e.g. pairs
        shapes = None  # whole buffers: the lowering flattens them
        if c.AXES:
            shapes = (tuple(mt.shape), tuple(ir.MemRefType(c.outputs[0].type).shape),
                      len(c.inputs), len(c.outputs))
        return Instance(tuple(c.devices), numel(mt), str(mt.element_type),
                        c.kind if c.HAS_KIND else None, c.to_device, op.name, shapes, attrs, access,
                        c.order if c.HAS_KIND else None)

    @property
    def capabilities(self) -> tuple[str, ...]:
        return (PEER_ACCESS,) if self.peer_access else ()

    def strategies(self) -> tuple[str, ...]:
        """The candidate strategies: those whose needs the module meets."""
        return BY_NAME[self.op].runnable(self.capabilities)

    def nbytes(self) -> int:
        return self.numel * ELEMENTS[self.elem].bytes if self.elem in ELEMENTS else 0


def _build(coll: Instance, strategy: str, args: list[ir.Value]) -> ir.Value:
    """The collective `coll` with `strategy` over the function arguments."""
    cls = BY_NAME[coll.op]
    n_in = cls.buffers(len(coll.devices), coll.to_device)[0]
    return builders.collective(cls.short_name(), args[:n_in], args[n_in:], list(coll.devices),
                               (), kind=coll.kind, strategy=strategy, to_device=coll.to_device, order=coll.order,
                               **dict(coll.attrs))


@lru_cache(maxsize=1024)  # a graph is a few KB; auto over every profile and size reuses them
def candidate_graph(coll: Instance, strategy: str) -> taskgraph.Graph:
    """The explicit program `strategy` emits for `coll`, as a task graph
    (built in a private Context, so the caller's IR is untouched)."""
    with make_context(), ir.Location.unknown():
        module = ir.Module.create()
        if PEER_ACCESS in BY_NAME[coll.op].needs(strategy):
            peers.enable(module.operation)
        el = ir.Type.parse(coll.elem)
        if coll.shapes is None:
            n_in, n_out = BY_NAME[coll.op].buffers(len(coll.devices), coll.to_device)
            types: list[ir.MemRefType] = [flat_type(el, coll.numel)] * (n_in + n_out)
        else:
            ins, outs, n_in, n_out = coll.shapes
            types = [ir.MemRefType.get(list(ins), el)] * n_in + [ir.MemRefType.get(list(outs), el)] * n_out
        with ir.InsertionPoint(module.body):
            f = func.FuncOp("f", ir.FunctionType.get(types, []))
            with ir.InsertionPoint(f.add_entry_block()):
                tok = _build(coll, strategy, list(f.entry_block.arguments))
                builders.wait([tok])
                func.ReturnOp([])
        lower_collectives(module.operation, strategy)
        return taskgraph.from_function(f.operation)


def candidates(coll: Instance, profile: cost_model.Profile,
               strategies: Sequence[str] | None = None) -> list[dict[str, Any]]:
    """[{strategy, predicted_s, copies, kernels, steps, max_sent, ...}] of
    `strategies` (default: coll.strategies())."""
    out: list[dict[str, Any]] = []
    for s in strategies or coll.strategies():
        g = candidate_graph(coll, s)
        out.append(dict(strategy=s, predicted_s=cost_model.simulate(g, profile).total,
                        **cost_model.summary(g)))
    return out


def pick(cands: list[dict[str, Any]]) -> str:
    """The fastest candidate's strategy; ties go to the earlier one."""
    return min(cands, key=lambda c: c["predicted_s"])["strategy"]


def choose_by_model(op: ir.Operation, profile: cost_model.Profile, capabilities: Iterable[str] = ()) -> str:
    """The strategy with the lowest predicted time for collective `op`."""
    coll = Instance.of(op, capabilities)
    if len(coll.devices) == 1 or coll.numel == 0:
        return BY_NAME[coll.op].STRATEGIES[0]
    # Candidates over the op limit are not built to be costed; with none
    # left, the first one's refusal is the op's.
    fits = [s for s in coll.strategies() if size_problem(op, s) is None]
    if not fits:
        check_size(op, coll.strategies()[0])
    return pick(candidates(coll, profile, fits))


def choose(op: ir.Operation, strategy: str = "auto", threshold: int = DEFAULT_THRESHOLD,
           profile: cost_model.Profile | None = None, capabilities: Iterable[str] = ()) -> str:
    """The strategy for collective `op` (see the module doc)."""
    require_memref_form(op)
    require_global_view(op)
    c = cast(Collective, view(op))  # a collective: its class is collectives/
    if strategy != "auto":
        if strategy not in c.STRATEGIES:
            raise PassError(f"strategy '{strategy}' does not apply to {op.name}; expected one of: "
                            f"{', '.join(('auto',) + c.STRATEGIES)}", op.location)
        return strategy
    if c.strategy not in (None, "auto"):
        return c.strategy
    if profile is not None:
        return choose_by_model(op, profile, capabilities)
    mt = ir.MemRefType(c.inputs[0].type)
    t = c.threshold if c.threshold is not None else threshold
    return c.reference_rule(len(c.devices), numel(mt), t)


def load_profile(profile: str) -> cost_model.Profile | None:
    """A cost-model profile by name or path, or None for ''."""
    if not profile:
        return None
    try:
        return cost_model.load_profile(profile)
    except ValueError as e:
        raise PassError(str(e)) from None


def parse_capabilities(text: str) -> tuple[str, ...]:
    """'peer_access,shared_memory' -> the tuple of names (checked)."""
    names = tuple(c.strip() for c in text.split(",") if c.strip()) if text else ()
    for c in names:
        if c not in CAPABILITIES:
            raise PassError(f"unknown capability '{c}'; expected a comma-separated list of: "
                            f"{', '.join(CAPABILITIES)}")
    return names


def choose_strategies(root: ir.Operation, strategy: str = "auto", threshold: int = DEFAULT_THRESHOLD,
                      profile: str = "", capabilities: str | Iterable[str] = "", order: str = "") -> list[str]:
    """Writes `strategy` on every collective under `root`; returns them.
    `capabilities`: the back end's (names, or their comma-separated text);
    `order`: every reducing collective's order contract, written first (the
    candidates are costed under it)."""
    if threshold < 0:
        raise PassError(f"threshold must be >= 0, got {threshold}")
    set_order(root, order)
    caps = parse_capabilities(capabilities) if isinstance(capabilities, str) else tuple(capabilities)
    prof = load_profile(profile)
    ops = find_ops(root, lambda name: name in COLLECTIVE_NAMES)
    if prof is not None:  # costing builds every candidate: a program over the limit is refused first
        total = 0
        for op in ops:
            total = count_ops(total, op, fewest_ops(op, strategy), at_least=True)
    chosen: list[str] = []
    total = 0  # the program's ops so far: refused past the limit before the next op is costed
    for op in ops:
        s = choose(op, strategy, threshold, prof, caps)
        total = count_ops(total, op, s)
        module = _module(op)
        if PEER_ACCESS in BY_NAME[op.name].needs(s) and PEER_ACCESS in caps and module is not None:
            peers.enable(module)
        op.attributes["strategy"] = ir.StringAttr.get(s, op.context)
        chosen.append(s)
    return chosen


def fewest_ops(op: ir.Operation, strategy: str = "auto") -> str:
    """The strategy `op` is lowered by when it is fixed (forced or the op's
    own), else the one of its strategies whose lowering emits fewest ops:
    a lower bound on what the cost model can pick, known without building."""
    require_memref_form(op)
    require_global_view(op)
    c = cast(Collective, view(op))
    if strategy != "auto" or c.strategy not in (None, "auto"):
        return choose(op, strategy)
    return min(c.STRATEGIES, key=lambda s: estimate(op, s)[0])


def _module(op: ir.Operation | ir.OpView) -> ir.Operation | None:
    """The module that holds `op` (None if none does)."""
    at: ir.Operation | None = op.operation
    while at is not None and at.name != "builtin.module":
        at = at.parent
    return at


@register("coll-choose-strategy",
          "Write the strategy attribute of every collective: the reference threshold rule, "
          "or the cost model's fastest with profile=NAME|FILE (strategy=S forces S) among the "
          "strategies whose needs the module and capabilities=peer_access,... (the back end's) meet; "
          "order=canonical|any sets every reducing collective's order contract first",
          strategy=(choice(*STRATEGIES), "auto"), threshold=(int, DEFAULT_THRESHOLD),
          profile=(str, ""), capabilities=(str, ""), order=(choice(*ORDERS), ""))
def choose_strategy_pass(op: ir.Operation, strategy: str = "auto", threshold: int = DEFAULT_THRESHOLD,
                         profile: str = "", capabilities: str = "", order: str = "") -> None:
    choose_strategies(op, strategy, threshold, profile, capabilities, order)
