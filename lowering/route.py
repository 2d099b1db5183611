"""Lowering a module down a route (core/routes.py), as runtimes, coll-run,
coll-build and benchmarks do: the explicit part first, so that the chosen
strategies and the explicit program's traffic can be read, then the back
end's part. Errors are ir.MLIRError with located diagnostics."""
from dataclasses import dataclass

from mlir import ir

from ..analysis.stats import traffic_bytes
from ..core import routes
from ..core.pipeline import run
from ..ir.kinds import ELEMENTS
from ..ir.ops import COLLECTIVES, DATA_OPS, view
from ..ir.walk import find_ops


@dataclass
class Lowered:
    strategies: list   # one per collective, in program order
    traffic: object    # bytes the explicit program moves (None: input was below it)
    pipeline: str      # the whole route, as coll-opt --pass-pipeline text
    scratch: int = 0   # bytes of the explicit program's coll.alloc buffers (an upper bound)


def lower(module_op, backend, strategy=None, threshold=None, profile=None, check_order=True,
          **options):
    """Lowers `module_op` in place through the explicit route and then
    `routes.ROUTES[backend](**options)` (backend None: stop at the
    explicit level). An explicit program that we did not lower ourselves is
    checked by coll-check-order first (`check_order=False`: not, for chaos
    tests that run a racy program on purpose)."""
    collectives = find_ops(module_op, lambda name: name in COLLECTIVES)
    explicit = find_ops(module_op, lambda name: name in DATA_OPS)
    choose, rest = routes.explicit(None if strategy == "auto" else strategy, threshold, profile,
                                   check_order=check_order and bool(explicit and not collectives)), []
    choose, rest = choose[:1], choose[1:]
    back = routes.ROUTES[backend](**options) if backend else []
    strategies, traffic = [], None
    if collectives or explicit:
        run(module_op, routes.pipeline(choose))
        strategies = [view(op).strategy for op in find_ops(module_op, lambda n: n in COLLECTIVES)]
        run(module_op, routes.pipeline(rest))
        traffic = traffic_bytes(module_op)
    scratch = sum(_bytes(op.results[0].type) for op in find_ops(module_op, "coll.alloc"))
    if back:
        run(module_op, routes.pipeline(back))
    return Lowered(strategies, traffic, routes.pipeline(choose, rest, back), scratch)


def _bytes(type_):
    mt = ir.MemRefType(type_)
    el = ELEMENTS.get(str(mt.element_type))
    size = el.bytes if el else 8
    for d in mt.shape:
        size *= max(d, 0)
    return size
