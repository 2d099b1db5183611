"""The coll dialect: loading, types, builders and the verifier."""
from pathlib import Path

from mlir import ir
from mlir._mlir_libs import _mlir
from mlir.dialects import irdl

# Where the bindings find the (empty) Python module of the coll dialect.
if "coll.ir.dialects" not in _mlir.globals.dialect_search_modules:
    _mlir.globals.append_dialect_search_prefix("coll.ir.dialects")

IRDL_FILE = Path(__file__).with_name("coll.irdl.mlir")
_IRDL_TEXT = IRDL_FILE.read_text()

from .kinds import BITWISE_KINDS, KINDS  # noqa: E402,F401 - re-exported

# `auto` (chosen by coll-choose-strategy: default rule or cost model) and
# the names of every collective's strategies (each collective's own are in
# its file, coll/collectives/): filled when the collectives register.
from .ops import STRATEGIES  # noqa: E402,F401
from .types import made_context  # noqa: E402

MAX_DEVICES = 1024


def load_dialect(ctx: ir.Context | None = None) -> ir.Context:
    """Registers the coll dialect (from ir/coll.irdl.mlir) in `ctx`.

    Idempotent: a Context that already knows coll is left alone.
    """
    if ctx is not None and not isinstance(ctx, ir.Context):
        raise TypeError(f"load_dialect takes an ir.Context (or None: the current one), got {type(ctx).__name__}")
    ctx = ctx or ir.Context.current
    if ctx is None:
        raise ValueError("load_dialect: no Context given and none is current")
    if getattr(ctx, "_coll_loaded", False):
        return ctx
    with ctx, ir.Location.unknown():
        # load_dialects comes from the IRDL extension, which has no stub.
        irdl.load_dialects(ir.Module.parse(_IRDL_TEXT))
    try:
        setattr(ctx, "_coll_loaded", True)  # noqa: B010 - the stub has no such field
    except AttributeError:  # contexts without a __dict__: loading twice is harmless
        pass
    return ctx


def make_context() -> ir.Context:
    """A fresh Context with coll (and all upstream dialects) available."""
    ctx = ir.Context()
    load_dialect(ctx)
    made_context(ctx)
    return ctx
