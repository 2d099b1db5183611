"""Registration of the coll passes that live in passes/."""
from ..ir.verifier import verify_or_raise
from .lower_all_reduce import DEFAULT_THRESHOLD, lower_all_reduce
from .registry import register


@register("coll-lower-all-reduce",
          "Lower coll.all_reduce to explicit per-device copies, combines and tokens",
          strategy=(str, "auto"), threshold=(int, DEFAULT_THRESHOLD))
def lower_all_reduce_pass(module_op, strategy="auto", threshold=DEFAULT_THRESHOLD):
    from ..ir import STRATEGIES
    from .registry import PassError
    if strategy not in STRATEGIES:
        raise PassError(f"unknown strategy '{strategy}'; expected one of: {', '.join(STRATEGIES)}")
    if threshold < 0:
        raise PassError(f"threshold must be >= 0, got {threshold}")
    lower_all_reduce(module_op, strategy, threshold)
    verify_or_raise(module_op)


@register("coll-verify", "Run the coll verifier (what IRDL cannot check)")
def verify_pass(module_op):
    verify_or_raise(module_op)
