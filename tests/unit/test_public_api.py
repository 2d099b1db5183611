"""coll.api: the one module of Python entry points (docs/embedding.md)."""
import numpy as np
import pytest

from coll import api


def test_every_public_name_is_there():
    missing = [name for name in api.__all__ if not hasattr(api, name)]
    assert not missing, missing


def test_compile_runs_a_collective_on_each_available_back_end_by_name():
    with api.make_context():
        text = api.collective_module("all_reduce", devices=4, shape=[100], dtype="f32")
    xs = [np.full(100, i + 1, np.float32) for i in range(4)]
    ys = [np.zeros(100, np.float32) for _ in range(4)]
    prog = api.compile(text, backend="cpu", strategy="ring")
    prog.run(xs, ys)
    assert prog.strategies == ["ring"] and all((y == 10).all() for y in ys)
    assert api.backend("cuda") is api.backend("gpu") is api.BACKENDS["gpu"]


@pytest.mark.parametrize("backend", ["tpu", None, 3])
def test_compile_names_an_unknown_back_end(backend):
    with pytest.raises(ValueError, match="unknown back end .*; expected one of: cpu, gpu, cuda, mpi"):
        api.compile("module {}", backend=backend)


def test_bad_input_is_a_located_error():
    from mlir import ir
    with pytest.raises(ir.MLIRError) as e:
        api.compile('func.func @f(%a: memref<4xf32>) {\n  "coll.bogus"(%a) : (memref<4xf32>) -> ()\n}\n', backend="cpu")
    assert e.value.error_diagnostics and "2:" in str(e.value.error_diagnostics[0].location), str(e.value)


def test_lower_stops_at_the_explicit_level_with_the_strategies_it_chose():
    from mlir import ir
    with api.make_context():
        text = api.collective_module("reduce", devices=3, shape=[8], dtype="f32", root=1)
        module = ir.Module.parse(text)
        low = api.lower(module.operation, None, strategy="direct")
        assert low.strategies == ["direct"] and '"coll.reduce"' not in str(module)
