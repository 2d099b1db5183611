"""coll: a collectives dialect on upstream MLIR (see README.md).

The collectives register their op classes first (coll/collectives/), so
that every layer, the verifier included, sees the whole op set whichever
coll module is imported first.

Modules that moved (the redesign into layers, docs/architecture.md) answer
an import by their old path with where they went (MOVED)."""

# old import path -> where it went (what to import instead)
MOVED = {
    "coll.runtime.cpu": "coll.backends.cpu (`from coll.backends import cpu; cpu.compile(text)`)",
    "coll.runtime.cuda": "coll.backends.gpu (`from coll.backends import gpu; gpu.compile(text)`)",
    "coll.runtime.cuda_driver": "coll.backends.gpu.driver",
    "coll.runtime.mpi": "coll.backends.mpi (`from coll.backends import mpi; mpi.compile(text)`)",
    "coll.runtime.mpi_worker": "coll.backends.mpi.worker",
    "coll.runtime.shard": "coll.backends.sharded",
    "coll.lowering": "coll.backends (cpu, gpu, mpi: each back end's lowering) and coll.frontends (shard, spmd, tensor)",
    "coll.lowering.cpu": "coll.backends.cpu.to_cpu",
    "coll.lowering.gpu": "coll.backends.gpu.to_gpu",
    "coll.lowering.mpi": "coll.backends.mpi.toolchain",
    "coll.lowering.nvvm": "coll.backends.gpu.nvvm",
    "coll.lowering.shard": "coll.frontends.shard",
    "coll.lowering.spmd": "coll.frontends.spmd",
    "coll.lowering.bufferize": "coll.frontends.tensor",
    "coll.passes.registry": "coll.core.registry",
    "coll.passes.emit": "coll.collectives.emit",
    "coll.passes.chunking": "coll.collectives.chunking",
    "coll.passes.cost_model": "coll.analysis.cost_model",
    "coll.passes.taskgraph": "coll.analysis.taskgraph",
    "coll.passes.stats": "coll.analysis.stats",
    "coll.passes.timeline": "coll.analysis.timeline",
}


class _Moved:
    """A meta path finder: importing a MOVED name raises
    ModuleNotFoundError saying where it went (never imports it for you:
    modules are not imported by name strings, tests/unit/test_layers.py)."""

    @staticmethod
    def find_spec(name, path=None, target=None):
        if name in MOVED:
            # (no `name=`: `from coll.runtime import cpu` would swallow it
            # into "cannot import name 'cpu'")
            raise ModuleNotFoundError(f"No module named '{name}': it moved to {MOVED[name]}")
        return None


# pytest also imports this file as a package named after the checkout's
# folder (the repository root is the package): only `coll` loads the op set.
if __name__ == "coll":
    import sys as _sys

    if not any(isinstance(f, _Moved) for f in _sys.meta_path):
        _sys.meta_path.insert(0, _Moved())
    from . import collectives  # noqa: F401
