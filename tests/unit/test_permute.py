"""coll.permute beyond the registry-driven grids (which run its default
ring shift at every N, on the CPU, under MPI and through coll-check-semantics):
partial permutations, identity pairs, no pairs, positions that are not
device ids, every element type; what an output that receives nothing holds
(memref form: untouched, seen through a sentinel; tensor form: zeros, on
the CPU and under mpirun, global and SPMD); the reference and the semantic
check refusing wrong programs.

Covering design: pair lists by kind (full, partial with a source-only and a
target-only device, identity, one pair, none) x N in 1..5 on the CPU; one
mpirun for the MPI programs; each form (memref global, tensor global,
memref SPMD, tensor SPMD) at least once on each back end it runs on."""
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from mlir import ir

from coll.collectives.permute import Permute, pairs_error
from coll.execution import check
from coll.ir import make_context
from coll.ir.generate import collective_module
from coll.lowering import cpu, mpi
from coll.passes.check_semantics import check_module

ROOT = Path(__file__).resolve().parents[2]
TYPES = ("f16", "bf16", "f32", "f64", "i1", "i8", "i32", "i64")


def pair_lists(n):
    """{label: flat pairs} of the kinds of pair list over n devices."""
    shift = [v for i in range(n) for v in (i, (i + 1) % n)]
    out = {"ring": shift, "identity": [v for i in range(n) for v in (i, i)], "none": []}
    if n > 1:
        out["one"] = [n - 1, 0]
        out["chain"] = shift[:-2]  # i -> i+1 without the wrap: n-1 sends only, 0 receives nothing
    if n > 2:
        out["partial"] = [0, 2, 2, 0, 1, 1] if n == 3 else [0, n - 1, n - 1, 1, 2, 2]
    return out


def targets(flat):
    return dict(zip(flat[1::2], flat[0::2]))


def module(n, shape, dtype, pairs, name="permute"):
    with make_context():
        return collective_module("permute", n, shape, dtype, pairs=pairs, name=name)


def sentinel(shape, dtype):
    """A value no input of these tests holds (they hold 10 and more, or
    make_inputs' values), so an output the op writes differs from it."""
    return np.full(shape, 7, check.NUMPY_DTYPES[dtype])


CASES = [(n, label) for n in range(1, 6) for label in pair_lists(n)]


@pytest.mark.parametrize("n,label", CASES)
def test_pairs_on_the_cpu_against_numpy(n, label):
    """Each pair list runs and matches the collective's reference, and an
    output no pair targets keeps the sentinel it held (memref form)."""
    flat = pair_lists(n)[label]
    text = module(n, [3, 5], "i32", flat)
    with make_context():
        problem = check.describe(ir.Module.parse(text))
    assert problem.attrs["pairs"] == flat
    prog = cpu.compile(text)
    assert prog.strategies == ["direct"]
    xs = check.make_inputs(problem, seed=n)
    ys = [sentinel((3, 5), "i32") for _ in range(n)]
    prog.run([x.copy() for x in xs], ys)
    to = targets(flat)
    for j, y in enumerate(ys):
        want = xs[to[j]] if j in to else sentinel((3, 5), "i32")
        np.testing.assert_array_equal(y, want, err_msg=f"output {j}")
    # The check's own verdict, on outputs that start as zeros (make_outputs).
    ys = check.make_outputs(problem)
    prog.run([x.copy() for x in xs], ys)
    assert check.check(problem, xs, ys)[0]


@pytest.mark.parametrize("dtype", TYPES)
def test_every_element_type(dtype):
    flat = [0, 2, 2, 1]
    text = module(3, [7], dtype, flat)
    with make_context():
        problem = check.describe(ir.Module.parse(text))
    xs = check.make_inputs(problem, seed=1)
    ys = check.make_outputs(problem)
    cpu.compile(text).run([x.copy() for x in xs], ys)
    ok, worst = check.check(problem, xs, ys)
    assert ok, worst
    assert np.array_equal(ys[2].view(np.uint8), xs[0].view(np.uint8))  # bit for bit


def test_positions_name_devices_of_the_group():
    """devices = [2, 0, 1]: pair (0, 1) sends from device 2's buffer (input
    #0) to device 0's (output #1), whatever the device ids."""
    text = """
func.func @f(%x0: memref<4xf32>, %x1: memref<4xf32>, %x2: memref<4xf32>, %y0: memref<4xf32>, %y1: memref<4xf32>, %y2: memref<4xf32>) attributes {llvm.emit_c_interface} {
  %t = "coll.permute"(%x0, %x1, %x2, %y0, %y1, %y2) {devices = array<i64: 2, 0, 1>, pairs = array<i64: 0, 1, 1, 2>, operandSegmentSizes = array<i32: 3, 3, 0>} : (memref<4xf32>, memref<4xf32>, memref<4xf32>, memref<4xf32>, memref<4xf32>, memref<4xf32>) -> !coll.token
  "coll.wait"(%t) : (!coll.token) -> ()
  return
}"""
    xs = [np.full(4, k + 1, np.float32) for k in range(3)]
    ys = [np.full(4, -1, np.float32) for _ in range(3)]
    cpu.compile(text).run(xs, ys)
    np.testing.assert_array_equal(np.stack(ys), [[-1] * 4, [1] * 4, [2] * 4])


def test_the_reference_rejects_wrong_answers():
    text = module(3, [4], "i32", [0, 1, 1, 2])
    with make_context():
        problem = check.describe(ir.Module.parse(text))
    xs = check.make_inputs(problem, 0)
    good = [np.zeros(4, np.int32), xs[0].copy(), xs[1].copy()]
    assert check.check(problem, xs, good)[0]
    assert not check.check(problem, xs, [good[0], good[2], good[1]])[0]  # swapped
    assert not check.check(problem, xs, [xs[2].copy(), good[1], good[2]])[0]  # a non-receiver written
    bad = [g.copy() for g in good]
    bad[1][3] += 1
    assert not check.check(problem, xs, bad)[0]


def test_pairs_error_messages():
    assert pairs_error([0, 1, 1, 0], 2) is None and pairs_error([], 3) is None
    assert "odd count" in pairs_error([0, 1, 1], 2)
    assert "outside the group of 2" in pairs_error([0, 2], 2)
    assert "source of pairs #0 and #1" in pairs_error([0, 1, 0, 2], 3)
    assert "target of pairs #0 and #1" in pairs_error([0, 2, 1, 2], 3)
    assert Permute.parse_array("pairs", "shift:2", 4) == [0, 2, 1, 3, 2, 0, 3, 1]
    assert Permute.parse_array("pairs", "0:1,2:0", 3) == [0, 1, 2, 0]
    assert Permute.parse_array("pairs", "none", 3) == []
    with pytest.raises(ValueError, match="invalid --pairs"):
        Permute.parse_array("pairs", "0-1", 3)


# -- coll-check-semantics on hand-written permute programs ----------------------

PROGRAM = """
!a = memref<4xi32>
!d0 = memref<4xi32, #coll.device<0>>
!d1 = memref<4xi32, #coll.device<1>>
!d2 = memref<4xi32, #coll.device<2>>
func.func @f(%a0: !a, %a1: !a, %a2: !a, %b0: !a, %b1: !a, %b2: !a) {
  %x0 = memref.memory_space_cast %a0 : !a to !d0
  %x1 = memref.memory_space_cast %a1 : !a to !d1
  %y1 = memref.memory_space_cast %b1 : !a to !d1
  %y2 = memref.memory_space_cast %b2 : !a to !d2
  %t0 = "coll.copy"(%x0, %y2) : (!d0, !d2) -> !coll.token
  %t1 = "coll.copy"(%SRC, %DST) : (!d1, !TYPE) -> !coll.token
  %j = "coll.join"(%t0, %t1) : (!coll.token, !coll.token) -> !coll.token
  "coll.implements"(%a0, %a1, %a2, %b0, %b1, %b2, %j) {op = "permute", devices = array<i64: 0, 1, 2>, pairs = array<i64: 0, 2, 1, 1>, operandSegmentSizes = array<i32: 3, 3, 1>} : (!a, !a, !a, !a, !a, !a, !coll.token) -> ()
  "coll.wait"(%j) : (!coll.token) -> ()
  return
}
"""


def test_a_hand_written_permute_is_proved(ctx):
    m = ir.Module.parse(PROGRAM.replace("%SRC", "%x1").replace("%DST", "%y1").replace("!TYPE", "!d1"))
    assert check_module(m.operation) == []


def test_writing_an_output_no_pair_targets_is_reported(ctx):
    """y0 receives nothing (no pair targets position 0): a program that
    writes it is wrong, even with the right data elsewhere."""
    text = PROGRAM.replace("%SRC", "%x1").replace("%DST", "%y1").replace("!TYPE", "!d1")
    text = text.replace('  %j = "coll.join"(%t0, %t1)',
                        '  %y0 = memref.memory_space_cast %b0 : !a to !d0\n'
                        '  %t2 = "coll.copy"(%x0, %y0) : (!d0, !d0) -> !coll.token\n'
                        '  %j = "coll.join"(%t0, %t1, %t2)').replace("(%t0, %t1, %t2) : (!coll.token, !coll.token)",
                                                                    "(%t0, %t1, %t2) : (!coll.token, !coll.token, !coll.token)")
    msgs = [f[1] for f in check_module(ir.Module.parse(text).operation)]
    assert msgs == ["output #0 (%arg3 on device 0) [0, 4) holds x0[0:4] but should hold nothing (never written): "
                    "the claimed collective does not write it (no input reaches this output)"], msgs


def test_the_wrong_source_is_reported(ctx):
    m = ir.Module.parse(PROGRAM.replace("%SRC", "%x1").replace("%DST", "%y2").replace("!TYPE", "!d2"))
    msgs = [f[1] for f in check_module(m.operation)]
    assert any("output #2" in s and "x1's data instead of x0's" in s for s in msgs), msgs
    assert any("output #1" in s and "never written" in s for s in msgs), msgs


# -- the tensor form: zeros where nothing is received --------------------------

GLOBAL_TENSOR = """
func.func @f(%t0: tensor<2x3xTYPE>, %t1: tensor<2x3xTYPE>, %t2: tensor<2x3xTYPE>) -> (tensor<2x3xTYPE>, tensor<2x3xTYPE>, tensor<2x3xTYPE>) {
  %tok, %r0, %r1, %r2 = "coll.permute"(%t0, %t1, %t2) {devices = array<i64: 0, 1, 2>, pairs = array<i64: 0, 2, 2, 1>, operandSegmentSizes = array<i32: 3, 0, 0>}
      : (tensor<2x3xTYPE>, tensor<2x3xTYPE>, tensor<2x3xTYPE>) -> (!coll.token, tensor<2x3xTYPE>, tensor<2x3xTYPE>, tensor<2x3xTYPE>)
  return %r0, %r1, %r2 : tensor<2x3xTYPE>, tensor<2x3xTYPE>, tensor<2x3xTYPE>
}
"""

SPMD_TENSOR = """
func.func @f(%t: tensor<5xi32>) -> tensor<5xi32> attributes {coll.ranks = 4 : i64} {
  %tok, %r = "coll.permute"(%t) {devices = array<i64: 0, 1, 2, 3>, pairs = array<i64: 0, 1, 1, 2, 2, 3>, operandSegmentSizes = array<i32: 1, 0, 0>}
      : (tensor<5xi32>) -> (!coll.token, tensor<5xi32>)
  return %r : tensor<5xi32>
}
"""

SPMD_BOOL = """
func.func @f(%t: tensor<5xi1>) -> tensor<5xi1> attributes {coll.ranks = 3 : i64} {
  %tok, %r = "coll.permute"(%t) {devices = array<i64: 0, 1, 2>, pairs = array<i64: 0, 1, 1, 2>, operandSegmentSizes = array<i32: 1, 0, 0>}
      : (tensor<5xi1>) -> (!coll.token, tensor<5xi1>)
  return %r : tensor<5xi1>
}
"""

SPMD_MEMREF_GROUPS = """
func.func @f(%x: memref<6xf32>, %y: memref<6xf32>) attributes {coll.ranks = 4 : i64} {
  %t = "coll.permute"(%x, %y) {devices = array<i64: 0, 1>, groups = array<i64: 0, 2, 1, 3>, pairs = array<i64: 0, 1, 1, 0>, operandSegmentSizes = array<i32: 1, 1, 0>}
      : (memref<6xf32>, memref<6xf32>) -> !coll.token
  "coll.wait"(%t) : (!coll.token) -> ()
  return
}
"""


def _ints(n, shape, dtype=np.int32):
    """Distinct inputs per rank (bool: a different pattern per rank)."""
    k = int(np.prod(shape))
    if dtype == np.bool_:
        return [(np.arange(k) % (r + 2) == 0).reshape(shape) for r in range(n)]
    return [np.arange(k, dtype=dtype).reshape(shape) + 10 * (r + 1) for r in range(n)]


@pytest.mark.parametrize("dtype", TYPES)
def test_global_tensor_form_gives_zeros_on_the_cpu(dtype):
    prog = cpu.compile(GLOBAL_TENSOR.replace("TYPE", dtype))
    np_t = check.NUMPY_DTYPES[dtype]
    xs = _ints(3, (2, 3), np_t)
    ys = [sentinel((2, 3), dtype) for _ in range(3)]  # the fill, not the caller, gives the zeros
    prog.run(xs, ys)
    np.testing.assert_array_equal(ys[0], np.zeros((2, 3)))
    np.testing.assert_array_equal(ys[1], xs[2])
    np.testing.assert_array_equal(ys[2], xs[0])


def test_spmd_tensor_form_on_the_cpu():
    prog = cpu.compile(SPMD_TENSOR)
    xs = _ints(4, (5,))
    ys = [sentinel((5,), "i32") for _ in range(4)]
    prog.run(xs, ys)
    assert [y.tolist() for y in ys] == [[0] * 5] + [x.tolist() for x in xs[:3]]


def test_spmd_groups_on_the_cpu():
    """Groups {0, 2} and {1, 3}, each swapping its two positions."""
    prog = cpu.compile(SPMD_MEMREF_GROUPS)
    xs = _ints(4, (6,), np.float32)
    ys = [np.zeros(6, np.float32) for _ in range(4)]
    prog.run(xs, ys)
    for r, src in enumerate((2, 3, 0, 1)):
        np.testing.assert_array_equal(ys[r], xs[src])


def test_coll_run_checks_a_partial_permute(tmp_path):
    f = tmp_path / "p.mlir"
    f.write_text(module(4, [8], "f64", [0, 3, 3, 1, 2, 2]))
    r = subprocess.run([sys.executable, "-m", "coll.tools.coll_run", str(f), "--backend=cpu"],
                       capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 0, r.stderr
    assert "permute copy of 4 x 8xf64 -> 4 output(s)" in r.stdout and " ok" in r.stdout


# -- under mpirun: one launch for every program ---------------------------------

@pytest.mark.skipif(not mpi.available()[0], reason="MPI back end not available (make setup installs OpenMPI)")
def test_under_mpirun():
    """Global memref partial and identity pairs (3 ranks, messages and a
    local copy), the SPMD tensor form (zeros on rank 0) and SPMD groups
    (4 ranks): each program checked against numpy after one launch per
    size."""
    runs, checks = [], []
    for flat in ([0, 2, 2, 0, 1, 1], [1, 2]):
        text = module(3, [2, 5], "f32", flat)
        xs, ys = _ints(3, (2, 5), np.float32), [sentinel((2, 5), "f32") for _ in range(3)]
        runs.append((mpi.compile(text), xs, ys))
        to = targets(flat)
        checks.append((ys, [xs[to[j]] if j in to else sentinel((2, 5), "f32") for j in range(3)]))
    xs, ys = _ints(4, (5,)), [sentinel((5,), "i32") for _ in range(4)]
    runs.append((mpi.compile(SPMD_TENSOR), xs, ys))
    checks.append((ys, [np.zeros(5, np.int32)] + xs[:3]))
    xs, ys = _ints(4, (6,), np.float32), [np.zeros(6, np.float32) for _ in range(4)]
    runs.append((mpi.compile(SPMD_MEMREF_GROUPS), xs, ys))
    checks.append((ys, [xs[2], xs[3], xs[0], xs[1]]))
    xs, ys = _ints(3, (5,), np.bool_), [np.ones(5, np.bool_) for _ in range(3)]  # i1 stored as i8
    runs.append((mpi.compile(SPMD_BOOL), xs, ys))
    checks.append((ys, [np.zeros(5, np.bool_)] + xs[:2]))
    assert [p.ranks for p, _, _ in runs] == [3, 3, 4, 4, 3]
    mpi.launch([r for r in runs if r[0].ranks == 3], 0)
    mpi.launch([r for r in runs if r[0].ranks == 4], 0)
    for k, (got, want) in enumerate(checks):
        for j, (g, w) in enumerate(zip(got, want)):
            np.testing.assert_array_equal(g, w, err_msg=f"program {k} output {j}")


# -- the GPU route without a GPU: the host library run on the emulated runtime --

@pytest.fixture(scope="module")
def emu(tmp_path_factory):
    from gpu_emulator import Emulator
    return Emulator(tmp_path_factory.mktemp("emu_permute"))


@pytest.mark.parametrize("flat", [[0, 1, 1, 2, 2, 0], [0, 2, 2, 1], [1, 1]])
def test_gpu_route_on_the_emulated_runtime(emu, tmp_path, flat):
    """Built exactly as for the GPU (gpu.memcpy on one stream per device),
    run in three seeded stream orders: y_t = x_s, and an output no pair
    targets keeps its sentinel (the tensor form's fill is a local-work
    kernel, which the emulator does not run: tests/lit/gpu/permute.mlir
    checks its PTX)."""
    from coll.lowering.gpu.nvvm import compile_module
    from coll.lowering.gpu.to_gpu import to_gpu
    from coll.passes.lower_collectives import lower_collectives
    with make_context():
        m = ir.Module.parse(module(3, [4, 5], "f32", flat))
        lower_collectives(m.operation)
        to_gpu(m.operation)
        compile_module(m.operation, tmp_path / "libprog.so", fmt="isa", runtime_dir=emu.dir)
    to = targets(flat)
    for seed in (0, 1, 2):
        xs = _ints(3, (4, 5), np.float32)
        ys = [sentinel((4, 5), "f32") for _ in range(3)]
        emu.run(tmp_path / "libprog.so", "permute", xs + ys, seed=seed)
        for j, y in enumerate(ys):
            np.testing.assert_array_equal(y, xs[to[j]] if j in to else sentinel((4, 5), "f32"),
                                          err_msg=f"seed {seed} output {j}")


def test_a_claim_with_wrong_pairs_is_refused(ctx):
    from coll.core.errors import PassError
    good = PROGRAM.replace("%SRC", "%x1").replace("%DST", "%y1").replace("!TYPE", "!d1")
    for pairs, why in (("0, 2, 1", "odd count"), ("0, 2, 1, 2", "target of pairs #0 and #1")):
        m = ir.Module.parse(good.replace("pairs = array<i64: 0, 2, 1, 1>", f"pairs = array<i64: {pairs}>"))
        with pytest.raises(PassError, match=f"coll.implements claims permute with wrong pairs: .*{why}"):
            check_module(m.operation)
    m = ir.Module.parse(good.replace("pairs = array<i64: 0, 2, 1, 1>, ", ""))
    with pytest.raises(PassError, match="claims permute with wrong pairs: 'pairs' must be an array<i64"):
        check_module(m.operation)
