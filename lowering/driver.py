"""Lowering a module down its way, as the back ends' `compile`, coll-run,
coll-build and benchmarks do: the frontends first (frontends/: each that
detects its form adds its route), then the explicit route (so that the
chosen strategies and the explicit program's traffic can be read), then
the back end's route. Errors are ir.MLIRError with located diagnostics."""
from dataclasses import dataclass
from typing import Any

from mlir import ir

from ..analysis.effects import ASYNC_OPS
from ..analysis.stats import TRAFFIC_OPS, traffic_bytes
from ..collectives import COLLECTIVES
from ..core import routes
from ..core.errors import PassError
from ..execution.program import Program
from ..frontends import FRONTENDS
from ..frontends import register as _frontend_passes  # noqa: F401 - the passes the routes name
from ..ir import peers
from ..ir.kinds import ELEMENTS
from ..ir.ops import COLLECTIVE_NAMES, DATA_OPS, PEER_ACCESS, OpView, view
from ..ir.views import BRANCH_OPS, VIEW_OPS
from ..ir.walk import OpIndex
from ..passes import register as _passes  # noqa: F401
from ..passes.inline_calls import may_need as may_need_inlining
from . import register as _backend_passes  # noqa: F401
from .base import Backend


@dataclass
class Lowered:
    strategies: list[str]  # one per collective, in program order
    traffic: int | None    # bytes the explicit program moves (None: input was below it)
    pipeline: str      # the whole route, as coll-opt --pass-pipeline text
    scratch: int = 0   # bytes of the explicit program's coll.alloc buffers (an upper bound)


def lower(target: Program | ir.Operation | ir.Module, backend: Backend | None, strategy: str | None = None,
          threshold: int | None = None, profile: str | None = None, check_order: bool = True,
          check_semantics: bool | None = None, **options: Any) -> Lowered:
    """Lowers `target` (a Program, execution/program.py, or a module
    operation) in place: each frontend that detects its form
    (in FRONTENDS order, once each), the explicit route, then
    `backend.route(module_op, **options)` (`backend`: a Backend object,
    lowering/base.py, or None to stop at the explicit level). A module that
    holds an explicit program we did not lower ourselves (alone or next to
    collectives) is checked by coll-check-order and coll-check-semantics
    before the back end (`check_order=False`: neither, for chaos tests that
    run a racy program on purpose; `check_semantics` None: as
    `check_order`). A strategy that needs peer access (oneshot, twoshot)
    on a back end that has it sets coll.peer_access, which holds there;
    `auto` chooses among the strategies the back end's capabilities allow,
    by its profile (`profile` None: the back end's; "": none, the reference
    threshold rule). What it learns about the program is read from one walk
    of each state of the module (Program.index) and kept on the Program."""
    program = Program.of(target)
    module_op = program.operation
    if check_semantics is None:
        check_semantics = check_order
    if profile is None:  # ("": no profile, the reference rule)
        profile = getattr(backend, "profile", None)
    theirs = bool(program.index.find(lambda name: name in DATA_OPS))  # checked after our lowering too
    # A collective nothing waits for: refused where the user wrote it (our
    # lowering of a lone collective, and an SPMD function on MPI, are not
    # order-checked otherwise).
    for op in program.index.find(lambda name: name in COLLECTIVE_NAMES):
        if not _view(op).is_tensor and _unwaited(op):
            raise PassError(f"nothing waits for the token of this {op.name} (no coll.wait takes it, nor a "
                            "coll.join or a later op that is waited for); expected a coll.wait of it before the "
                            "function returns", op.location)
    front = []
    for frontend in FRONTENDS:
        if program.detected(frontend):
            elems = frontend.route(module_op, backend, strategy=None if strategy == "auto" else strategy,
                                   threshold=threshold, profile=profile)
            program.run(elems)
            front += elems
    # A call whose buffers may alias, into a function holding coll ops: its
    # checks hold within one function, so it is inlined first.
    inline = ["coll-inline-aliased-calls"] if may_need_inlining(program.index) else []
    program.run(inline)
    front += inline
    collectives = program.index.find(lambda name: name in COLLECTIVE_NAMES)
    asked = [strategy] + [_view(op).strategy for op in collectives]
    caps: frozenset[str] = getattr(backend, "capabilities", frozenset())
    if PEER_ACCESS in caps and any(PEER_ACCESS in cls.needs(s) for cls in COLLECTIVES for s in asked):
        peers.enable(module_op)
    # Our own lowering of a lone collective is ordered by construction; an
    # explicit program of theirs, or local work around collectives (host
    # ops on their buffers), is checked once lowered.
    ordered = theirs or _local_work(program.index)
    choose = routes.explicit(None if strategy == "auto" else strategy, threshold, profile,
                             check_order=check_order and ordered, check_semantics=check_semantics and theirs,
                             capabilities=caps)
    choose, rest = choose[:1], choose[1:]  # through coll-choose-strategy
    strategies, traffic = [], None
    if collectives or theirs:
        program.run(choose)
        strategies = [_view(op).strategy for op in program.index.find(lambda n: n in COLLECTIVE_NAMES)]
        program.run(rest)
        traffic = traffic_bytes(program.index.find(lambda n: n in TRAFFIC_OPS))
    else:
        choose, rest = [], []
    back = backend.route(module_op, **options) if backend is not None else []
    scratch = sum(_bytes(op.results[0].type) for op in program.index.find("coll.alloc"))
    program.run(back)
    program.strategies, program.traffic, program.scratch = strategies, traffic, scratch
    program.pipeline = routes.pipeline(front, choose, rest, back)
    return Lowered(strategies, traffic, program.pipeline, scratch)


# What is no local work in a function of collectives.
_NOT_WORK = ("func.return", "arith.constant", "coll.wait", "coll.join")


def _view(op: ir.Operation | ir.OpView) -> OpView:
    """view(op) of an op known to be coll's (the op layer's view, never None)."""
    v = view(op)
    assert v is not None, op.name
    return v


def _unwaited(op: ir.Operation) -> bool:
    """Whether nothing waits for collective `op`'s token: no use of it, or
    of a coll.join of it or of an op that depends on it, but those."""
    stack: list[ir.Value] = [op.results[0]]
    seen: list[ir.Operation] = []
    while stack:
        token = stack.pop()
        for use in token.uses:
            user = use.owner.operation
            if user.name != "coll.join" and user.name not in ASYNC_OPS:
                return False  # (a coll.wait, a return, a claim: waited, or refused elsewhere)
            if not any(user == s for s in seen):
                seen.append(user)
                stack.append(user.results[0])
    return True


def _local_work(index: OpIndex) -> bool:
    """Whether a function holding collectives does other work (whose order
    against them the tokens must give)."""
    for f in index.find("func.func"):
        ops = [op for op in index.ops if op.name != "func.func" and _inside(op, f)]
        colls = [op for op in ops if op.name in COLLECTIVE_NAMES]
        if any(op.parent != f for op in colls):
            continue  # a collective in a loop: coll-check-order follows straight-line functions only
        if any(len(op.regions) and not op.name.startswith("linalg.") and op.name not in BRANCH_OPS
               for op in ops if op.name not in COLLECTIVE_NAMES):
            continue  # loops of local work (affine.for, scf.for): their writes are not followed (22.1.8 effects)
        if colls and any(op.name not in COLLECTIVE_NAMES and op.name not in _NOT_WORK and op.name not in VIEW_OPS
                         for op in ops):
            return True
    return False


def _inside(op: ir.Operation | ir.OpView, ancestor: ir.Operation | ir.OpView) -> bool:
    """Whether `ancestor` holds `op` (at any depth)."""
    parent, ancestor = op.parent, getattr(ancestor, "operation", ancestor)
    while parent is not None:
        if getattr(parent, "operation", parent) == ancestor:
            return True
        parent = parent.parent
    return False


def _bytes(type_: ir.Type) -> int:
    mt = ir.MemRefType(type_)
    el = ELEMENTS.get(str(mt.element_type))
    size = el.bytes if el else 8
    for d in mt.shape:
        size *= max(d, 0)
    return size
