"""Registration of the cost-model passes: coll-predict and coll-timeline."""
from .registry import PassError, choice, register


@register("coll-predict",
          "Print the cost model's predicted time of each strategy for every all_reduce "
          "(and of every explicit function); stderr, or file=PATH",
          profile=(str, "nvlink-h200"), file=(str, "-"), format=(choice("table", "json"), "table"))
def predict(module_op, profile="nvlink-h200", file="-", format="table"):
    from .predict import predict_pass
    try:
        predict_pass(module_op, profile, file, format)
    except ValueError as e:
        raise PassError(str(e)) from None
    except OSError as e:
        raise PassError(f"could not write '{file}': {e.strerror}") from None


@register("coll-timeline",
          "Draw the explicit program as one lane per device (copies as arrows, combines as "
          "boxes) into file=PATH.png; by dependent step, or by predicted time with profile=NAME",
          file=(str, "timeline.png"), profile=(str, ""), title=(str, ""))
def timeline(module_op, file="timeline.png", profile="", title=""):
    from .timeline import timeline_pass
    timeline_pass(module_op, file, profile, title)
