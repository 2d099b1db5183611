"""The StableHLO frontend's Python API without JAX in the process:
detect, parse (and its refusals of the pretty form and bytecode), the
layouts at the boundary, the route, and programs JAX does not export on
the CPU (collective_broadcast, groups through a mesh's device_ids),
checked against numpy. The samples are tests/lit/stablehlo/Inputs
(JAX 0.10.2's lowering, generic form; Inputs/gen.py).

JAX's own programs, exported at test time and compared with XLA's
results: test_stablehlo_jax.py (CPU), test_mpi_stablehlo_jax.py (mpirun)."""
import os
from pathlib import Path

import numpy as np
import pytest
from mlir import ir

import coll.ir
from coll.core import pipeline, routes
from coll.frontends import stablehlo, tensor
from coll.frontends.run import global_arrays
from coll.frontends.stablehlo import StableHLOError

INPUTS = Path(__file__).resolve().parents[1] / "lit" / "stablehlo" / "Inputs"


def _text(name):
    return (INPUTS / f"{name}.mlir").read_text()


@pytest.fixture
def ctx():
    c = coll.ir.make_context()
    with c, ir.Location.unknown():
        yield c


def test_detect(ctx):
    assert stablehlo.detect(stablehlo.parse(_text("psum")).operation)
    plain = ir.Module.parse("func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> { return %a : tensor<4xf32> }")
    assert not stablehlo.detect(plain.operation)


PRETTY = """module @jit_f attributes {mhlo.num_partitions = 2 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["x"=2]>
  func.func public @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {
    return %arg0 : tensor<4xf32>
  }
}
"""


def test_sniff_before_parsing():
    assert stablehlo.sniff(_text("psum").encode()) and stablehlo.sniff(PRETTY.encode())
    assert stablehlo.sniff(_text("psum_2d_gspmd").encode())
    assert not stablehlo.sniff(b"func.func @f() { return }")
    assert not stablehlo.sniff(b"ML\xefR\x00...")


def test_pretty_form_is_refused_with_how_to_print_generic(ctx):
    with pytest.raises(StableHLOError) as e:
        stablehlo.parse(PRETTY)
    said = str(e.value)
    assert "pretty form" in said and "Dialect `sdy' not found" in said
    assert "get_asm(print_generic_op_form=True" in said
    loc = e.value.location
    assert loc.is_a_file() and (loc.start_line, loc.start_col) == (2, 3)  # at the sdy.mesh


def test_bytecode_is_refused_with_how_to_print_generic(ctx):
    with pytest.raises(StableHLOError, match="bytecode .* is not read across MLIR versions; print the generic form"):
        stablehlo.parse(b"ML\xefR\x00rest of a bytecode file")


def test_parse_takes_a_module_of_another_context():
    other = ir.Context()
    other.allow_unregistered_dialects = True
    with other:
        theirs = ir.Module.parse(_text("psum"))
    with coll.ir.make_context() as mine:
        module = stablehlo.parse(theirs)
        assert module.context is mine and stablehlo.detect(module.operation)


def test_layouts_of_a_shard_map(ctx):
    b = stablehlo.layouts(stablehlo.parse(_text("psum_2d")).operation)
    assert b.entry == "main" and b.grid == [2, 4]
    (x,), (y,) = b.inputs, b.outputs
    assert (x.shape, x.local, x.split, x.element) == ((64,), (8,), [[0, 1]], "f32")
    assert (y.shape, y.local, y.split) == ((16,), (8,), [[0]])
    # rank 6 = (dp 1, tp 2): block 6 of x, block 1 of y
    assert x.block(b.grid, 6) == (slice(48, 56),) and y.block(b.grid, 6) == (slice(8, 16),)


def test_layouts_of_a_jit_program(ctx):
    b = stablehlo.layouts(stablehlo.parse(_text("mlp_jit")).operation)
    assert b.grid == [8]
    assert [lay.split for lay in b.inputs] == [[[], []], [[], [0]], [[0], []]]
    assert [lay.local for lay in b.inputs] == [(8, 16), (16, 1), (1, 16)]
    assert b.outputs[0].split == [[], []] and b.outputs[0].local == (8, 16)


def test_layouts_name_arguments_as_jax_does(ctx):
    text = _text("psum").replace("^bb0(%arg0: tensor<64xf32>):", '^bb0(%arg0: tensor<64xf32> loc("xs")):')
    text = text.replace('jax.result_info = "result"', 'jax.result_info = "[\'total\']"')
    b = stablehlo.layouts(stablehlo.parse(text).operation)
    assert b.inputs[0].name == "xs" and b.outputs[0].name == "['total']"
    assert stablehlo.layouts(stablehlo.parse(_text("psum")).operation).inputs[0].name is None  # x0 then


def test_route_by_form(ctx):
    smap = stablehlo.route(stablehlo.parse(_text("psum")).operation)
    jit = stablehlo.route(stablehlo.parse(_text("mlp_jit")).operation)
    assert smap[:2] == jit[1:3] == ["coll-from-stablehlo", "coll-stablehlo-to-linalg"]
    # A jit program is partitioned by XLA first, then routed as a shard_map body.
    assert jit == ["coll-xla-partition"] + smap
    assert tensor.route()[0] in smap
    pipeline.build(routes.pipeline(jit))  # every element is a pass coll-opt knows


@pytest.fixture
def no_jaxlib(tmp_path, monkeypatch):
    """Child processes find a jaxlib that does not import."""
    fake = tmp_path / "jaxlib"
    fake.mkdir()
    (fake / "__init__.py").write_text("raise ImportError('no jaxlib in this test')\n")
    monkeypatch.setenv("PYTHONPATH", str(tmp_path) + os.pathsep + os.environ.get("PYTHONPATH", ""))


def test_missing_jaxlib_is_a_located_error(no_jaxlib, ctx):
    module = stablehlo.parse(_text("mlp_shard_map"))
    with pytest.raises(ir.MLIRError) as e:
        pipeline.run(module, routes.pipeline(["coll-from-stablehlo", "coll-stablehlo-to-linalg"]))
    d = e.value.error_diagnostics[0]
    assert "'stablehlo.dot_general': the local compute is StableHLO" in d.message
    assert "jaxlib does not import here (ImportError: no jaxlib in this test)" in d.message
    assert "make setup" in d.message


def test_missing_jaxlib_for_xla_partitioning_is_a_located_error(no_jaxlib, ctx):
    module = stablehlo.parse(_text("mlp_jit"))
    with pytest.raises(ir.MLIRError) as e:
        pipeline.run(module, routes.pipeline(["coll-xla-partition"]))
    d = e.value.error_diagnostics[0]
    assert "partitioned by XLA's partitioner, and jaxlib does not import here" in d.message
    assert "no jaxlib in this test" in d.message and "make setup" in d.message


BROADCAST = """"builtin.module"() ({
  "sdy.mesh"() <{mesh = #sdy.mesh<["x"=4], device_ids=[1, 0, 3, 2]>, sym_name = "mesh"}> : () -> ()
  "func.func"() <{function_type = (tensor<16xf32>) -> (tensor<16xf32>, tensor<16xf32>), sym_name = "main"}> ({
  ^bb0(%arg0: tensor<16xf32>):
    %0:2 = "sdy.manual_computation"(%arg0) <{in_shardings = #sdy.sharding_per_value<[<@mesh, [{"x"}]>]>, manual_axes = #sdy<manual_axes{"x"}>, out_shardings = #sdy.sharding_per_value<[<@mesh, [{"x"}]>, <@mesh, [{"x"}]>]>}> ({
    ^bb0(%arg1: tensor<4xf32>):
      %1 = "stablehlo.collective_broadcast"(%arg1) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = dense<[[2, 3], [1, 0]]> : tensor<2x2xi64>}> : (tensor<4xf32>) -> tensor<4xf32>
      %2 = "stablehlo.all_reduce"(%arg1) <{channel_handle = #stablehlo.channel_handle<handle = 2, type = 1>, replica_groups = dense<[[0, 2], [1, 3]]> : tensor<2x2xi64>, use_global_device_ids}> ({
      ^bb0(%a: tensor<f32>, %b: tensor<f32>):
        %s = "stablehlo.minimum"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
        "stablehlo.return"(%s) : (tensor<f32>) -> ()
      }) : (tensor<4xf32>) -> tensor<4xf32>
      "sdy.return"(%1, %2) : (tensor<4xf32>, tensor<4xf32>) -> ()
    }) : (tensor<16xf32>) -> (tensor<16xf32>, tensor<16xf32>)
    "func.return"(%0#0, %0#1) : (tensor<16xf32>, tensor<16xf32>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 4 : i32, mhlo.num_replicas = 1 : i32} : () -> ()
"""


def test_broadcast_and_groups_through_device_ids_on_the_cpu():
    """Rank r holds block r and is device device_ids[r] = [1, 0, 3, 2][r].
    Broadcast groups [[2, 3], [1, 0]] (devices): device 2 (rank 3) sends to
    device 3 (rank 2), device 1 (rank 0) to device 0 (rank 1). The min over
    devices {0, 2} is over ranks {1, 3}, {1, 3} over ranks {0, 2}."""
    prog = global_arrays.compile(BROADCAST, stablehlo, backend="cpu")
    x = np.arange(16, dtype=np.float32)[::-1].copy()
    bcast, low = prog.run([x])
    blocks = x.reshape(4, 4)
    assert np.array_equal(bcast.reshape(4, 4), blocks[[0, 0, 3, 3]])
    want_min = np.stack([np.minimum(blocks[0], blocks[2]), np.minimum(blocks[1], blocks[3])] * 2)
    assert np.array_equal(low.reshape(4, 4), want_min)
    assert prog.ranks == 4 and prog.grid == [4]


ONE_DEVICE = """"builtin.module"() ({
  "func.func"() <{function_type = (tensor<4xf32>) -> tensor<4xf32>, sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg0: tensor<4xf32>):
    %0 = "stablehlo.multiply"(%arg0, %arg0) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    "func.return"(%0) : (tensor<4xf32>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} : () -> ()
"""


def test_a_program_of_one_device_runs_on_the_cpu_not_under_mpi():
    prog = global_arrays.compile(ONE_DEVICE, stablehlo, backend="cpu")
    x = np.arange(4, dtype=np.float32)
    (y,) = prog.run([x])
    assert prog.ranks == 1 and np.array_equal(y, x * x)
    with pytest.raises(ValueError, match="runs on one device .* expected backend='cpu'"):
        global_arrays.compile(ONE_DEVICE, stablehlo, backend="mpi")
