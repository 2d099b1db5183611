"""Registration of the coll passes that live in passes/."""
from .lower_all_reduce import DEFAULT_THRESHOLD, lower_all_reduce
from ..ir import STRATEGIES
from .registry import PassError, choice, register


@register("coll-lower-all-reduce",
          "Lower coll.all_reduce to explicit per-device copies, combines and tokens "
          "(auto: the reference threshold rule, or the cost model with profile=NAME)",
          strategy=(choice(*STRATEGIES), "auto"), threshold=(int, DEFAULT_THRESHOLD),
          profile=(str, ""))
def lower_all_reduce_pass(module_op, strategy="auto", threshold=DEFAULT_THRESHOLD, profile=""):
    if threshold < 0:
        raise PassError(f"threshold must be >= 0, got {threshold}")
    # profile=<name|path.json>: `auto` picks by the cost model (cost_model.py).
    prof = None
    if profile:
        from .cost_model import load_profile
        try:
            prof = load_profile(profile)
        except ValueError as e:
            raise PassError(str(e)) from None
    lower_all_reduce(module_op, strategy, threshold, prof)


@register("coll-verify", "Run the coll verifier (what IRDL cannot check); every coll pass also runs it")
def verify_pass(module_op):
    pass  # the pass wrapper (passes/pipeline.py) verifies after every coll pass


@register("coll-stats",
          "Print per-function schedule statistics as JSON (stderr, or file=PATH)",
          file=(str, "-"))
def stats(module_op, file="-"):
    from .stats import stats_pass
    stats_pass(module_op, file)
