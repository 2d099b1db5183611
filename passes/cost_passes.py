"""Registration of coll-predict (it lowers candidates, so it lives above analysis)."""
from ..core.errors import PassError
from ..core.registry import choice, register


@register("coll-predict",
          "Print the cost model's predicted time of each strategy for every collective "
          "(and of every explicit function); stderr, or file=PATH; capabilities=peer_access,...: "
          "the back end's, as coll-choose-strategy takes them",
          anchor="builtin.module",
          profile=(str, "nvlink-h200"), file=(str, "-"), format=(choice("table", "json"), "table"),
          capabilities=(str, ""))
def predict(module_op, profile="nvlink-h200", file="-", format="table", capabilities=""):
    from .choose_strategy import parse_capabilities
    from .predict import predict_pass
    caps = parse_capabilities(capabilities)
    try:
        predict_pass(module_op, profile, file, format, caps)
    except ValueError as e:
        raise PassError(str(e)) from None
    except OSError as e:
        raise PassError(f"could not write '{file}': {e.strerror}") from None
