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


def _split(name: str) -> bool:
    """Whether some module under the old package `name` went elsewhere than
    under where `name` went (coll.runtime: coll.runtime.cpu is not
    coll.execution.cpu)."""
    return any(k.startswith(name + ".") for k in MOVED)


def _warn(old: str, new: str, stacklevel: int) -> None:
    warnings.warn(f"{old} moved to {new}; import that instead", FutureWarning, stacklevel=stacklevel + 1)


class _Alias:
    """The loader of an old path: the module is the new module itself,
    under its old name too (`coll.backends.cpu is coll.lowering.cpu`), and
    a FutureWarning says where it went: code written against the old layout
    keeps working and learns the new path. The import system sets the
    module's `__spec__` to the old name's; exec_module puts the new one
    back, so the module stays what it is under its own name.

    A package whose modules went to different places (coll.runtime) cannot
    be the new package: `from coll.runtime import cpu` would look for
    coll.execution.cpu. It is a stand-in (_stand_in) that reads what the new
    package holds and imports each moved module by its old path."""

    def __init__(self, target: str) -> None:
        self.target = target
        self.spec: ModuleSpec | None = None

    def create_module(self, spec: ModuleSpec) -> types.ModuleType:
        if _split(spec.name):
            return _stand_in(spec.name, self.target)
        new = importlib.import_module(self.target)
        self.spec = new.__spec__
        # One warning per import: a module under an old path that was the
        # new module already warned when its parent was imported (and this
        # one is where it said).
        parent = spec.name.rpartition(".")[0]
        if moved_to(parent) is None or _split(parent):
            _warn(spec.name, self.target, stacklevel=2)
        return new

    def exec_module(self, module: types.ModuleType) -> None:
        if self.spec is not None:
            module.__spec__ = self.spec


def _stand_in(old: str, target: str) -> types.ModuleType:
    """The old package `old`, whose modules went to several places: an
    empty package that imports each of them by its old path and reads
    anything else from `target`, as a module does (an AttributeError for a
    name neither has). It warns when it is read, not when it is imported:
    importing one of its modules (coll.runtime.cpu) warns of that module
    alone, with the place it went."""
    new = importlib.import_module(target)
    shim = types.ModuleType(old, f"{old} moved to {target}")
    shim.__path__ = []
    warned: list[bool] = []

    def attr(name: str) -> Any:
        child = f"{old}.{name}"
        if child in MOVED or _split(child):
            return importlib.import_module(child)
        if name == "__all__":  # `from old import *`: what `from new import *` gives
            names = getattr(new, "__all__", None)
            found = list(names) if names is not None else [k for k in vars(new) if not k.startswith("_")]
        elif not name.startswith("__") and hasattr(new, name):
            found = getattr(new, name)
        else:  # (a submodule not imported yet is not an attribute, as in any package: say where it is)
            sub = f"{target}.{name}"
            hint = f"; {old} moved to {target}" + (f": import {sub}" if not name.startswith("_")
                                                   and importlib.util.find_spec(sub) else "")
            raise AttributeError(f"module {old!r} has no attribute {name!r}{hint}")
        if not warned:
            warned.append(True)
            _warn(old, target, stacklevel=2)
        return found

    def names() -> list[str]:
        return sorted(set(vars(shim)) | set(dir(new)))

    # A module reads a missing attribute through its __getattr__, dir()
    # through its __dir__ (PEP 562).
    shim.__getattr__ = attr  # type: ignore[method-assign]
    shim.__dir__ = names  # type: ignore[method-assign]
    return shim


class _Moved:
    """A meta path finder for MOVED names (the one place a module is
    imported by a name string outside the pass registry)."""

    @staticmethod
    def find_spec(name: str, path: Sequence[str] | None = None,
                  target: types.ModuleType | None = None) -> ModuleSpec | None:
        where = moved_to(name)
        if where is None:
            return None
        try:  # a name under an old path that is nowhere now: no module, as for any other name
            if importlib.util.find_spec(where) is None:
                return None
        except ModuleNotFoundError:
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
