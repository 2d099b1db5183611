"""The analysis passes: coll-stats and coll-timeline (an entry point of the
`coll.passes` group in pyproject.toml)."""
from ..core.errors import PassError
from ..core.registry import register


@register("coll-stats",
          "Print per-function schedule statistics as JSON (stderr, or file=PATH)",
          anchor="builtin.module", file=(str, "-"))
def stats(module_op, file="-"):
    from .stats import stats_pass
    try:
        stats_pass(module_op, file)
    except OSError as e:
        raise PassError(f"could not write '{file}': {e.strerror}") from None


@register("coll-timeline",
          "Draw the explicit program as one lane per device (copies as arrows, combines as "
          "boxes) into file=PATH.png; by dependent step, or by predicted time with profile=NAME",
          anchor="builtin.module", file=(str, "timeline.png"), profile=(str, ""), title=(str, ""))
def timeline(module_op, file="timeline.png", profile="", title=""):
    from .timeline import timeline_pass
    timeline_pass(module_op, file, profile, title)
