"""coll: a collectives dialect on upstream MLIR (see README.md).

The collectives register their op classes first (coll/collectives/), so
that every layer, the verifier included, sees the whole op set whichever
coll module is imported first.

Modules that moved (docs/architecture.md) still import by their old path,
with a FutureWarning that says where they went (MOVED)."""

import importlib
import importlib.util
import types
import warnings
from collections.abc import Sequence
from importlib.machinery import ModuleSpec
from typing import TYPE_CHECKING, Any, cast

if TYPE_CHECKING:
    from importlib.abc import Loader

# Old import paths -> where they went. The longest old prefix of an
# imported name wins (`coll.backends.cpu.runtime` -> `coll.lowering.cpu.runtime`).
MOVED = {
    "coll.runtime": "coll.execution",
    "coll.runtime.cpu": "coll.lowering.cpu",
    "coll.runtime.cuda": "coll.lowering.gpu",
    "coll.runtime.cuda_driver": "coll.lowering.gpu.driver",
    "coll.runtime.mpi": "coll.lowering.mpi",
    "coll.runtime.mpi_worker": "coll.lowering.mpi.worker",
    "coll.runtime.shard": "coll.frontends.run.shard",
    "coll.backends": "coll.lowering",
    "coll.backends.frontend": "coll.frontends.run.global_arrays",
    "coll.backends.sharded": "coll.frontends.run.shard",
    "coll.backends.placement": "coll.lowering.stored_types",
    "coll.backends.mpi.project": "coll.lowering.mpi.to_mpi",
    "coll.backends.mpi.place": "coll.lowering.mpi.local_work",
    "coll.passes.cost_passes": "coll.passes.predict",
    "coll.passes.registry": "coll.core.registry",
    "coll.passes.emit": "coll.collectives.emit",
    "coll.passes.chunking": "coll.collectives.chunking",
    "coll.passes.cost_model": "coll.analysis.cost_model",
    "coll.passes.taskgraph": "coll.analysis.taskgraph",
    "coll.passes.stats": "coll.analysis.stats",
    "coll.passes.timeline": "coll.analysis.timeline",
    "coll.analysis.fluid": "coll.analysis.switch_schedule",
}


def moved_to(name: str) -> str | None:
    """Where the module an old import path `name` names lives now, or None."""
    parts = name.split(".")
    for i in range(len(parts), 1, -1):
        old = ".".join(parts[:i])
        if old in MOVED:
            return ".".join([MOVED[old], *parts[i:]])
    return None


class _Alias:
    """Imports the module an old path names, under the old name too, and
    warns (FutureWarning) where it went: code written against the old
    layout keeps working and learns the new path."""

    def __init__(self, target: str) -> None:
        self.target = target

    def create_module(self, spec: ModuleSpec) -> types.ModuleType:
        warnings.warn(f"{spec.name} moved to {self.target}; import that instead", FutureWarning, stacklevel=2)
        new = importlib.import_module(self.target)
        if not any(k.startswith(spec.name + ".") for k in MOVED):
            return new
        # A package whose modules went to different places (coll.runtime):
        # a stand-in that imports each by its old path (`from coll.runtime
        # import cpu`) and reads anything else from where the package went.
        shim = types.ModuleType(spec.name, f"moved to {self.target}")
        shim.__path__ = []

        def attr(name: str) -> Any:  # whatever the module holds
            if name.startswith("__"):
                raise AttributeError(name)
            if f"{spec.name}.{name}" in MOVED or not hasattr(new, name):
                return importlib.import_module(f"{spec.name}.{name}")
            return getattr(new, name)
        # A module reads a missing attribute through its __getattr__ (PEP 562).
        shim.__getattr__ = attr  # type: ignore[method-assign]
        return shim

    def exec_module(self, module: types.ModuleType) -> None:
        pass


class _Moved:
    """A meta path finder for MOVED names (the one place a module is
    imported by a name string outside the pass registry)."""

    @staticmethod
    def find_spec(name: str, path: Sequence[str] | None = None,
                  target: types.ModuleType | None = None) -> ModuleSpec | None:
        where = moved_to(name)
        if where is None:
            return None
        # _Alias has what a loader needs (create_module, exec_module).
        return importlib.util.spec_from_loader(name, cast("Loader", _Alias(where)))


# pytest also imports this file as a package named after the checkout's
# folder (the repository root is the package): only `coll` loads the op set.
if __name__ == "coll":
    import sys as _sys

    if not any(isinstance(f, _Moved) for f in _sys.meta_path):
        _sys.meta_path.insert(0, _Moved())
    from . import collectives  # noqa: F401
