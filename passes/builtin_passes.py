"""Registration of coll-lower-all-reduce and coll-verify."""
from ..core.registry import choice, register
from ..ir.ops import AllReduce
from .choose_strategy import choose_strategies
from .lower_all_reduce import DEFAULT_THRESHOLD, lower_all_reduce


@register("coll-lower-all-reduce",
          "Lower coll.all_reduce to explicit per-device copies, combines and tokens, by the "
          "strategy attribute (ops without one: as coll-choose-strategy with these options)",
          strategy=(choice("auto", *AllReduce.STRATEGIES), "auto"), threshold=(int, DEFAULT_THRESHOLD),
          profile=(str, ""))
def lower_all_reduce_pass(op, strategy="auto", threshold=DEFAULT_THRESHOLD, profile=""):
    # The options are a shorthand for coll-choose-strategy first: one rule,
    # in one place, and the attribute it writes is what the lowering reads.
    choose_strategies(op, strategy, threshold, profile)
    lower_all_reduce(op)


@register("coll-verify", "Run the coll verifier (what IRDL cannot check); every coll pass also runs it")
def verify_pass(op):
    pass  # the pass wrapper (core/pipeline.py) verifies after every coll pass
