"""coll-lower-all-reduce: coll-choose-strategy, then the general lowering
(passes/lower_collectives.py) of the module's all_reduce ops."""
from mlir import ir

from ..collectives.all_reduce import DEFAULT_THRESHOLD, AllReduce
from ..core.registry import choice, register
from ..ir.ops import ORDERS
from .choose_strategy import choose_strategies
from .lower_collectives import lower_collectives


@register("coll-lower-all-reduce",
          "Lower coll.all_reduce to explicit per-device copies, combines and tokens, by the "
          "strategy attribute (ops without one: as coll-choose-strategy with these options)",
          strategy=(choice("auto", *AllReduce.STRATEGIES), "auto"), threshold=(int, DEFAULT_THRESHOLD),
          profile=(str, ""), order=(choice(*ORDERS), ""))
def lower_all_reduce_pass(op: ir.Operation, strategy: str = "auto", threshold: int = DEFAULT_THRESHOLD,
                          profile: str = "", order: str = "") -> None:
    # The options are a shorthand for coll-choose-strategy first: one rule,
    # in one place, and the attribute it writes is what the lowering reads.
    choose_strategies(op, strategy, threshold, profile, order=order)
    lower_collectives(op, only=(AllReduce.NAME,))
