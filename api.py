"""coll's Python entry points, in one module (docs/embedding.md walks
through them). The names here stay: when a module moves inside the
package, this module keeps its name and the old import path still works
with a FutureWarning (coll/__init__.py MOVED).

    from coll import api
    with api.make_context():
        text = api.collective_module("all_reduce", devices=4, shape=[1000], dtype="f32")
    prog = api.compile(text, backend="cpu", strategy="ring")   # or "mpi", "gpu"
    prog.run(xs, ys)                                            # numpy arrays, outputs in place
    g = api.compile_global(lowered.compiler_ir("stablehlo"), api.stablehlo, backend="cpu")
    ys = g.run(xs)                                              # JAX's global arrays in and out

It sits above every layer (docs/architecture.md) and holds no logic of
its own beyond choosing a back end by name."""
from typing import Any

from mlir import ir

from .core import routes
from .core.errors import PassError, PipelineError
from .core.pipeline import add_pass, run_pm
from .core.pipeline import run as run_pipeline
from .execution.signature import from_bf16, to_bf16
from .frontends import shard, stablehlo, tensor
from .frontends.run.global_arrays import GlobalProgram
from .frontends.run.global_arrays import compile as compile_global
from .frontends.run.shard import compile as compile_shard
from .ir import builders, load_dialect, make_context
from .ir.generate import collective_module
from .ir.ops import view
from .ir.verifier import VerifyError
from .lowering import BACKENDS, lower
from .lowering import get as backend
from .lowering import names as backend_names
from .lowering.base import Runnable

__all__ = [
    "BACKENDS", "GlobalProgram", "PassError", "PipelineError", "Runnable", "VerifyError", "add_pass", "backend",
    "backend_names", "builders", "collective_module", "compile", "compile_global", "compile_shard", "from_bf16",
    "load_dialect", "lower", "make_context", "routes", "run_pipeline", "run_pm", "shard", "stablehlo", "tensor",
    "to_bf16", "view",
]


def compile(module: str | ir.Module, backend: str = "cpu", entry: str | None = None, strategy: str = "auto",
            threshold: int | None = None, **options: Any) -> Runnable:
    """`module` (MLIR text or an ir.Module: collective, explicit or lower
    level, tensor or memref form, global view or SPMD) compiled for the back
    end named `backend` (backend_names()): a program with run(inputs,
    outputs), time(inputs, outputs, repeat), strategies, traffic_bytes,
    pipeline. Raises ValueError for an unknown back end or bad argument,
    ir.MLIRError / VerifyError / PassError (located) for bad input."""
    chosen = get_backend(backend) if isinstance(backend, str) else None
    if chosen is None:
        raise ValueError(f"unknown back end {backend!r}; expected one of: {', '.join(backend_names())}")
    return chosen.compile(module, entry=entry, strategy=strategy, threshold=threshold, **options)


get_backend = backend
