"""The Python API takes modules as well as text: a frontend that built (or
imported) a module in its own Context hands it to coll as it is.
pipeline.run takes an ir.Module; the CPU and MPI runtimes' compile take a
module of any Context (printed with its locations, parsed again in theirs)."""
import numpy as np
import pytest
from mlir import ir

import coll.ir
from coll.core import pipeline, routes
from coll.ir import generate
from coll.lowering import cpu, mpi


def _own_context_module(devices=4, shape=(64,)):
    """An allreduce module in a Context coll did not make."""
    ctx = ir.Context()
    coll.ir.load_dialect(ctx)
    with ctx:
        text = generate.collective_module("all_reduce", devices=devices, shape=list(shape), dtype="f32")
        return ctx, ir.Module.parse(text)


def test_pipeline_run_takes_a_module():
    ctx, module = _own_context_module()
    ring = routes.pipeline(routes.explicit(strategy="ring"))
    with ctx:
        pipeline.run(module, ring)
        text = str(module)
    with coll.ir.make_context():  # the same pipeline on the module's operation
        other = ir.Module.parse(generate.collective_module("all_reduce", devices=4, shape=[64], dtype="f32"))
        pipeline.run(other.operation, ring)
        want = str(other)
    assert '"coll.all_reduce"' not in text and '"coll.copy"' in text and text == want


def test_cpu_compile_takes_a_module_of_another_context():
    ctx, module = _own_context_module()
    prog = cpu.compile(module, strategy="ring")
    xs = [np.full(64, i + 1, np.float32) for i in range(4)]
    ys = [np.zeros(64, np.float32) for _ in range(4)]
    prog.run(xs, ys)
    assert prog.strategies == ["ring"]
    assert all(np.array_equal(y, np.full(64, 10, np.float32)) for y in ys)
    with ctx:
        assert '"coll.all_reduce"' in str(module)  # the caller's module is left as it was


@pytest.mark.skipif(not mpi.available()[0], reason=f"MPI back end not available: {mpi.available()[1]}")
def test_mpi_compile_takes_a_module():
    _, module = _own_context_module(devices=2, shape=(16,))
    prog = mpi.compile(module, strategy="naive")
    assert prog.ranks == 2 and prog.strategies == ["naive"]
