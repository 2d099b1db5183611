"""The frontends: the forms a program may come in above the collective
level's memref form, one module each, listed once (FRONTENDS, in the order
the driver asks them: lowering/driver.py). Each has `NAME`, `GLOBAL` (its arguments are global arrays
that a runner lays out over the devices), `detect(module_op)`
(does the module use this form?) and `route(module_op, backend, **options)`
(the pipeline elements that bring it down to the next form). Adding a
frontend is one module here and its line in `_load` (and, when it reads
its own input bytes, its pattern in sniff.py).

The modules load on first use of FRONTENDS or BY_NAME, not with the
package: a tool that only asks sniff.py whether its input belongs to a
frontend does not pay for them (~10 ms of coll-opt's start,
bench/startup.py)."""
from types import ModuleType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .shard import Boundary, Layout  # noqa: F401 - what a frontend's `layouts` returns

    FRONTENDS: tuple[ModuleType, ...]
    BY_NAME: dict[str, ModuleType]


def _load() -> dict[str, Any]:
    from . import shard, spmd, stablehlo, tensor  # on first use: see above
    # StableHLO first: its route ends in the shard, tensor or SPMD form.
    frontends = (stablehlo, shard, tensor, spmd)
    return {"FRONTENDS": frontends, "BY_NAME": {f.NAME: f for f in frontends},
            "Boundary": shard.Boundary, "Layout": shard.Layout}


def __getattr__(name: str) -> Any:
    if name not in ("FRONTENDS", "BY_NAME", "Boundary", "Layout"):
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    loaded = _load()
    globals().update(loaded)
    return loaded[name]
