"""Registration of coll-verify."""
from ..core.registry import register


@register("coll-verify", "Run the coll verifier (what IRDL cannot check); every coll pass also runs it")
def verify_pass(op):
    pass  # the pass wrapper (core/pipeline.py) verifies after every coll pass
