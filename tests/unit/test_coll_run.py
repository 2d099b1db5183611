"""coll-run end to end, as a user runs it (a subprocess): the table, the
--inputs/--outputs round trip, failing checks, and bad input."""
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from coll.collectives import AllReduce
from coll.ir import make_context
from coll.ir.generate import all_reduce_module
from coll.lowering import cpu

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "allreduce_4x.mlir"

# An explicit-level allreduce on 2 devices whose second combine reads x1
# twice instead of x1 and the copy of x0: y1 = 2*x1 is wrong.
WRONG = """
func.func @f(%a0: memref<8xi32>, %a1: memref<8xi32>, %b0: memref<8xi32>, %b1: memref<8xi32>) attributes {llvm.emit_c_interface} {
  %x0 = memref.memory_space_cast %a0 : memref<8xi32> to memref<8xi32, #coll.device<0>>
  %x1 = memref.memory_space_cast %a1 : memref<8xi32> to memref<8xi32, #coll.device<1>>
  %y0 = memref.memory_space_cast %b0 : memref<8xi32> to memref<8xi32, #coll.device<0>>
  %y1 = memref.memory_space_cast %b1 : memref<8xi32> to memref<8xi32, #coll.device<1>>
  %r0 = "coll.alloc"() : () -> memref<8xi32, #coll.device<0>>
  %t0 = "coll.copy"(%x1, %r0) : (memref<8xi32, #coll.device<1>>, memref<8xi32, #coll.device<0>>) -> !coll.token
  %t1 = "coll.combine"(%x0, %r0, %y0, %t0) {kind = "sum", operandSegmentSizes = array<i32: 1, 1, 1, 1>}
      : (memref<8xi32, #coll.device<0>>, memref<8xi32, #coll.device<0>>, memref<8xi32, #coll.device<0>>, !coll.token) -> !coll.token
  %r1 = "coll.alloc"() : () -> memref<8xi32, #coll.device<1>>
  %t2 = "coll.copy"(%x0, %r1) : (memref<8xi32, #coll.device<0>>, memref<8xi32, #coll.device<1>>) -> !coll.token
  %t3 = "coll.combine"(%x1, %SECOND, %y1, %t2) {kind = "sum", operandSegmentSizes = array<i32: 1, 1, 1, 1>}
      : (memref<8xi32, #coll.device<1>>, memref<8xi32, #coll.device<1>>, memref<8xi32, #coll.device<1>>, !coll.token) -> !coll.token
  %j = "coll.join"(%t1, %t3) : (!coll.token, !coll.token) -> !coll.token
  %CLAIM
  "coll.wait"(%j) : (!coll.token) -> ()
  return
}
"""
CLAIM = ('"coll.implements"(%a0, %a1, %b0, %b1, %j) {op = "all_reduce", kind = "sum", devices = array<i64: 0, 1>, '
         'operandSegmentSizes = array<i32: 2, 2, 1>} : (memref<8xi32>, memref<8xi32>, memref<8xi32>, memref<8xi32>, '
         '!coll.token) -> ()')


def coll_run(*args):
    return subprocess.run([sys.executable, "-m", "coll.tools.coll_run", *map(str, args)],
                          capture_output=True, text=True, timeout=120)


def write_module(path, n, shape, dtype, kind, **kw):
    with make_context():
        path.write_text(all_reduce_module(n, shape, dtype, kind, **kw))
    return path


def test_example_every_strategy():
    r = coll_run(EXAMPLE, "--backend=cpu", "--strategy=all", "--repeat=2")
    assert r.returncode == 0, r.stderr
    rows = [line.split() for line in r.stdout.splitlines()[2:]]
    assert [row[0] for row in rows] == list(AllReduce.runnable(cpu.BACKEND.capabilities))
    for row in rows:
        assert row[1] == "4" and row[2:4] == ["1.00", "MiB"] and row[-1] == "ok"
        assert row[-3] == "GB/s" and float(row[-4]) > 0
        assert row[-2] == "identical"  # every replica holds the same bits


def _rows(stdout):
    return [line.split()[0] for line in stdout.splitlines()[2:]]


def test_strategy_all_says_what_the_mpi_back_end_does_not_run(tmp_path):
    # Found by the attack (issue 34 item 3): oneshot and twoshot were
    # dropped in silence.
    from coll.lowering import mpi
    if not mpi.available()[0]:
        pytest.skip(mpi.available()[1])
    mod = write_module(tmp_path / "m.mlir", 2, [64], "f32", "sum")  # 2 ranks: 5 mpiruns on 2 cores
    r = coll_run(mod, "--backend=mpi", "--strategy=all", "--repeat=1")
    assert r.returncode == 0, r.stderr
    assert _rows(r.stdout) == ["naive", "ring", "all2all", "rhd", "tree"], r.stdout
    assert r.stderr == (f"{mod}: note: --strategy=all: oneshot, twoshot: need peer access, which the mpi back "
                        "end does not offer\n")


SHARD = ROOT / "examples" / "mlp_shard_4.mlir"  # an all_reduce (layer 1) and an all_gather (layer 2)
SHARD_NOTE = (f"{SHARD}: note: --strategy=all: naive, all2all, rhd, tree, oneshot, twoshot: do not apply to "
              "all_gather; direct: does not apply to all_reduce\n")


def test_strategy_all_on_a_shard_program_says_what_it_does_not_run():
    # Found by the attack: one row, ring, and no word of the others.
    r = coll_run(SHARD, "--backend=cpu", "--strategy=all", "--repeat=1")
    assert r.returncode == 0, r.stderr
    assert _rows(r.stdout) == ["ring"] and r.stdout.split()[-1] == "ok", r.stdout
    assert r.stderr == SHARD_NOTE


def test_strategy_all_on_a_shard_program_under_mpi_names_its_strategy():
    # Found by the attack: a single row `-` (the mpi route lowers each
    # collective in place and reports no strategy).
    from coll.lowering import mpi
    if not mpi.available()[0]:
        pytest.skip(mpi.available()[1])
    r = coll_run(SHARD, "--backend=mpi", "--ranks=4", "--strategy=all", "--repeat=1")
    assert r.returncode == 0, r.stderr
    assert _rows(r.stdout) == ["ring"] and r.stdout.split()[-1] == "ok", r.stdout
    assert r.stderr == SHARD_NOTE.replace(
        "naive, all2all, rhd, tree, oneshot, twoshot: do not apply to all_gather",
        "naive, all2all, rhd, tree: do not apply to all_gather; oneshot, twoshot: need peer access, which the mpi "
        "back end does not offer")


def test_strategy_all_on_an_explicit_program_runs_it_as_written():
    # It was `error: unknown strategy 'all'`.
    grid = ROOT / "examples" / "allreduce_2x2_grid.mlir"
    r = coll_run(grid, "--backend=cpu", "--strategy=all", "--repeat=1")
    assert r.returncode == 0, r.stderr
    assert _rows(r.stdout) == ["-"] and r.stdout.split()[-1] == "ok", r.stdout
    assert r.stderr == (f"{grid}: note: --strategy=all: the program is at the explicit level (its copies and "
                        "combines are the algorithm, there is no strategy to choose); running it as written\n")


@pytest.mark.parametrize("dtype,kind,make", [
    ("i32", "xor", lambda rng: rng.integers(-2 ** 31, 2 ** 31, (3, 5), dtype=np.int32)),
    ("bf16", "max", lambda rng: rng.integers(0, 0x7F80, (3, 5)).astype(np.uint16)),  # finite, >= 0
])
def test_inputs_outputs_round_trip(tmp_path, dtype, kind, make):
    mod = write_module(tmp_path / "m.mlir", 3, [3, 5], dtype, kind, strategy="ring")
    rng = np.random.default_rng(5)
    xs = {f"x{i}": make(rng) for i in range(3)}
    np.savez(tmp_path / "in.npz", **xs)
    r = coll_run(mod, "--backend=cpu", "--inputs", tmp_path / "in.npz", "--outputs", tmp_path / "out.npz")
    assert r.returncode == 0, r.stderr
    out = np.load(tmp_path / "out.npz")
    assert sorted(out.files) == ["y0", "y1", "y2"]
    if dtype == "i32":
        want = xs["x0"] ^ xs["x1"] ^ xs["x2"]
    else:  # positive bf16 bit patterns order like their values
        want = np.maximum(np.maximum(xs["x0"], xs["x1"]), xs["x2"])
    for y in out.files:
        assert out[y].dtype == xs["x0"].dtype and np.array_equal(out[y], want)


def test_single_device_output_and_seed(tmp_path):
    mod = write_module(tmp_path / "m.mlir", 3, [40], "f16", "prod", to_device=3)
    r = coll_run(mod, "--backend=cpu", "--strategy=all2all", "--seed=9", "--outputs", tmp_path / "o.npz")
    assert r.returncode == 0, r.stderr
    assert "-> 1 output(s)" in r.stdout and r.stdout.rstrip().endswith("ok")
    assert np.load(tmp_path / "o.npz").files == ["y0"]


def test_wrong_result_fails_and_writes_nothing(tmp_path):
    # With its claim, the program's numbers are checked against the claimed
    # collective; the wrong one is refused before it runs (coll-check-semantics,
    # at the claim: line 16), and nothing is written.
    good = tmp_path / "good.mlir"
    good.write_text(WRONG.replace("%SECOND", "%r1").replace("%CLAIM", CLAIM))
    r = coll_run(good, "--backend=cpu", "--outputs", tmp_path / "out.npz")
    assert r.returncode == 0 and r.stdout.rstrip().endswith("identical  ok"), r.stdout + r.stderr
    os.remove(tmp_path / "out.npz")
    bad = tmp_path / "bad.mlir"
    bad.write_text(WRONG.replace("%SECOND", "%x1").replace("%CLAIM", CLAIM))
    r = coll_run(bad, "--backend=cpu", "--outputs", tmp_path / "out.npz")
    assert r.returncode == 1 and r.stdout == "", r.stdout + r.stderr
    assert r.stderr.startswith(f"{bad}:16:3: error: coll-check-semantics: output #1 (%arg3 on device 1) [0, 8) holds "
                               "sum(x1[0:8], x1[0:8]) but should hold sum(x0[0:8], x1[0:8])"), r.stderr
    assert not (tmp_path / "out.npz").exists()


def test_unclaimed_explicit_program_runs_unchecked(tmp_path):
    # Without a coll.implements nothing says what the program computes: it
    # runs, its outputs are written, and the table says unchecked, never ok
    # (before, it was read as an allreduce of its arguments).
    bad = tmp_path / "bad.mlir"
    bad.write_text(WRONG.replace("%SECOND", "%x1").replace("%CLAIM", ""))
    xs = {"x0": np.arange(8, dtype=np.int32), "x1": np.arange(8, dtype=np.int32) * 100}
    np.savez(tmp_path / "in.npz", **xs)
    r = coll_run(bad, "--backend=cpu", "--repeat=1", "--inputs", tmp_path / "in.npz", "--outputs", tmp_path / "out.npz")
    assert r.returncode == 0, r.stdout + r.stderr
    lines = r.stdout.splitlines()
    assert lines[0] == (f"{bad}: explicit program (no coll.implements on its arguments, unchecked) of 2 x 8xi32 "
                        "-> 2 output(s), backend cpu, 1 timed run(s) after an untimed one")
    assert lines[-1].split()[-2:] == ["-", "unchecked"] and " ok" not in r.stdout
    out = np.load(tmp_path / "out.npz")
    assert out.files == ["y0", "y1"]
    assert out["y0"].tobytes() == (xs["x0"] + xs["x1"]).tobytes()  # what the program computes
    assert out["y1"].tobytes() == (2 * xs["x1"]).tobytes()


# The same allreduce in place (each device's buffer is its input and its
# output), written by hand: every argument is read before it is written,
# so each is an input (the program writes it in place).
IN_PLACE = """
func.func @f(%a0: memref<8xi32>, %a1: memref<8xi32>) attributes {llvm.emit_c_interface} {
  %x0 = memref.memory_space_cast %a0 : memref<8xi32> to memref<8xi32, #coll.device<0>>
  %x1 = memref.memory_space_cast %a1 : memref<8xi32> to memref<8xi32, #coll.device<1>>
  %r0 = "coll.alloc"() : () -> memref<8xi32, #coll.device<0>>
  %t0 = "coll.copy"(%x1, %r0) : (memref<8xi32, #coll.device<1>>, memref<8xi32, #coll.device<0>>) -> !coll.token
  %r1 = "coll.alloc"() : () -> memref<8xi32, #coll.device<1>>
  %t2 = "coll.copy"(%x0, %r1) : (memref<8xi32, #coll.device<0>>, memref<8xi32, #coll.device<1>>) -> !coll.token
  %t1 = "coll.combine"(%x0, %r0, %x0, %t0, %t2) {kind = "sum", operandSegmentSizes = array<i32: 1, 1, 1, 2>}
      : (memref<8xi32, #coll.device<0>>, memref<8xi32, #coll.device<0>>, memref<8xi32, #coll.device<0>>, !coll.token, !coll.token) -> !coll.token
  %t3 = "coll.combine"(%x1, %SECOND, %x1, %t2, %t0) {kind = "sum", operandSegmentSizes = array<i32: 1, 1, 1, 2>}
      : (memref<8xi32, #coll.device<1>>, memref<8xi32, #coll.device<1>>, memref<8xi32, #coll.device<1>>, !coll.token, !coll.token) -> !coll.token
  %j = "coll.join"(%t1, %t3) : (!coll.token, !coll.token) -> !coll.token
  %CLAIM
  "coll.wait"(%j) : (!coll.token) -> ()
  return
}
"""
IN_PLACE_CLAIM = ('"coll.implements"(%a0, %a1, %a0, %a1, %j) {op = "all_reduce", kind = "sum", '
                  'devices = array<i64: 0, 1>, operandSegmentSizes = array<i32: 2, 2, 1>} : (memref<8xi32>, '
                  'memref<8xi32>, memref<8xi32>, memref<8xi32>, !coll.token) -> ()')


def test_in_place_explicit_program_is_checked(tmp_path):
    good = tmp_path / "good.mlir"
    good.write_text(IN_PLACE.replace("%SECOND", "%r1").replace("%CLAIM", IN_PLACE_CLAIM))
    r = coll_run(good, "--backend=cpu", "--repeat=1", "--outputs", tmp_path / "out.npz")
    assert r.returncode == 0 and r.stdout.startswith(f"{good}: all_reduce sum of 2 x 8xi32 -> 2 output(s)"), r.stdout + r.stderr
    assert r.stdout.rstrip().endswith("identical  ok"), r.stdout
    x = [np.load(tmp_path / "out.npz")[f"y{j}"] for j in (0, 1)]
    assert np.array_equal(x[0], x[1])
    bad = tmp_path / "bad.mlir"
    bad.write_text(IN_PLACE.replace("%SECOND", "%x1").replace("%CLAIM", IN_PLACE_CLAIM))
    r = coll_run(bad, "--backend=cpu", "--repeat=1")
    assert r.returncode == 1 and r.stdout == "" and "x1 contributes 2 times" in r.stderr, r.stdout + r.stderr
    # Without the claim: both arguments are inputs (read, then written in
    # place), the npz supplies both, and the run is unchecked.
    plain = tmp_path / "plain.mlir"
    plain.write_text(IN_PLACE.replace("%SECOND", "%r1").replace("%CLAIM", ""))
    xs = {"x0": np.arange(8, dtype=np.int32), "x1": np.arange(8, dtype=np.int32) * 3}
    np.savez(tmp_path / "in.npz", **xs)
    r = coll_run(plain, "--backend=cpu", "--repeat=1", "--inputs", tmp_path / "in.npz", "--outputs", tmp_path / "o.npz")
    assert r.returncode == 0 and "unchecked) of 2 x 8xi32 -> 2 output(s)" in r.stdout, r.stdout + r.stderr
    out = np.load(tmp_path / "o.npz")
    assert [out[f"y{j}"].tobytes() for j in (0, 1)] == [(xs["x0"] + xs["x1"]).tobytes()] * 2


# An input read before it is written among outputs only written: device 1's
# buffer is its input and its output (in place), device 0 writes b0.
MIXED = """
func.func @f(%a0: memref<8xi32>, %a1: memref<8xi32>, %b0: memref<8xi32>) attributes {llvm.emit_c_interface} {
  %x0 = memref.memory_space_cast %a0 : memref<8xi32> to memref<8xi32, #coll.device<0>>
  %x1 = memref.memory_space_cast %a1 : memref<8xi32> to memref<8xi32, #coll.device<1>>
  %y0 = memref.memory_space_cast %b0 : memref<8xi32> to memref<8xi32, #coll.device<0>>
  %r0 = "coll.alloc"() : () -> memref<8xi32, #coll.device<0>>
  %t0 = "coll.copy"(%x1, %r0) : (memref<8xi32, #coll.device<1>>, memref<8xi32, #coll.device<0>>) -> !coll.token
  %t1 = "coll.combine"(%x0, %r0, %y0, %t0) {kind = "sum", operandSegmentSizes = array<i32: 1, 1, 1, 1>}
      : (memref<8xi32, #coll.device<0>>, memref<8xi32, #coll.device<0>>, memref<8xi32, #coll.device<0>>, !coll.token) -> !coll.token
  %t2 = "coll.copy"(%y0, %x1, %t1) : (memref<8xi32, #coll.device<0>>, memref<8xi32, #coll.device<1>>, !coll.token) -> !coll.token
  "coll.wait"(%t2) : (!coll.token) -> ()
  return
}
"""


def test_argument_read_before_written_is_an_input(tmp_path):
    src = tmp_path / "mixed.mlir"
    src.write_text(MIXED)
    xs = {"x0": np.arange(8, dtype=np.int32) - 3, "x1": np.arange(8, dtype=np.int32) * 7}
    np.savez(tmp_path / "in.npz", **xs)
    r = coll_run(src, "--backend=cpu", "--repeat=1", "--inputs", tmp_path / "in.npz", "--outputs", tmp_path / "o.npz")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "unchecked) of 2 x 8xi32 -> 2 output(s)" in r.stdout, r.stdout
    out = np.load(tmp_path / "o.npz")
    want = (xs["x0"] + xs["x1"]).tobytes()
    assert out.files == ["y0", "y1"] and out["y0"].tobytes() == want and out["y1"].tobytes() == want


def test_bf16_tolerance_follows_the_combine_depth(tmp_path):
    # bf16, N = 48, a binomial tree with its claim: 6 combines on any path,
    # not 47; on normal inputs it passes within the depth bound. The same
    # tree with one device added twice (and one never) is refused before it
    # runs, at its claim (with the N-1 bound it passed the numbers before).
    import re

    from coll.execution.signature import to_bf16
    gen = write_module(tmp_path / "c.mlir", 48, [64], "bf16", "sum", strategy="tree")
    r = subprocess.run([sys.executable, "-m", "coll.tools.coll_opt", gen, "--coll-lower-all-reduce"],
                       capture_output=True, text=True, timeout=300)
    good = r.stdout
    first = re.search(r'"coll.combine"\((%\w+), (%\w+), ', good)
    bad = good.replace(first.group(0), f'"coll.combine"({first.group(1)}, {first.group(1)}, ', 1)
    rng = np.random.default_rng(1)
    inputs = tmp_path / "in.npz"
    np.savez(inputs, **{f"x{i}": to_bf16(rng.standard_normal(64)) for i in range(48)})
    path = tmp_path / "p.mlir"
    path.write_text(good)
    r = coll_run(path, "--backend=cpu", "--repeat=1", "--inputs", inputs)
    assert r.returncode == 0 and r.stdout.rstrip().endswith("identical  ok"), r.stdout + r.stderr
    path.write_text(bad)
    r = coll_run(path, "--backend=cpu", "--repeat=1", "--inputs", inputs)
    assert r.returncode == 1 and "contributes 2 times" in r.stderr and "is missing" in r.stderr, r.stdout + r.stderr


def test_collective_inputs_are_judged_by_the_strategy_depth(tmp_path):
    # With --inputs, a collective is judged by the depth of the program the
    # strategy lowers it to: bf16 N = 48 on normal inputs passes every strategy
    # (tree and rhd gather in device order by default: one combine deep).
    from coll.execution.signature import to_bf16
    from coll.tools.coll_run import _depth
    gen = write_module(tmp_path / "c.mlir", 48, [64], "bf16", "sum")
    text = gen.read_text()
    assert [_depth(text, None, s) for s in ("naive", "ring", "tree", "rhd")] == [1, 47, 1, 1]
    any_order = text.replace('kind = "sum"', 'kind = "sum", order = "any"')
    assert [_depth(any_order, None, s) for s in ("tree", "rhd")] == [6, 6]
    rng = np.random.default_rng(1)
    inputs = tmp_path / "in.npz"
    np.savez(inputs, **{f"x{i}": to_bf16(rng.standard_normal(64)) for i in range(48)})
    r = coll_run(gen, "--backend=cpu", "--repeat=1", "--strategy=tree", "--inputs", inputs)
    assert r.returncode == 0 and r.stdout.rstrip().endswith("identical  ok"), r.stdout + r.stderr


def test_parse_error_is_a_located_diagnostic(tmp_path):
    bad = tmp_path / "bad.mlir"
    bad.write_text("module {\n  func.func @f() {\n    %x = foo\n  }\n}\n")
    r = coll_run(bad, "--backend=cpu", "--outputs", tmp_path / "out.npz")
    assert r.returncode == 1
    assert r.stderr.startswith(f"{bad}:3:10: error: custom op 'foo' is unknown")
    assert "Traceback" not in r.stderr and r.stdout == ""
    assert not (tmp_path / "out.npz").exists()


def test_verifier_error_is_located(tmp_path):
    mod = write_module(tmp_path / "m.mlir", 2, [4], "f32", "sum")
    mod.write_text(mod.read_text().replace('kind = "sum"', 'kind = "and"'))
    r = coll_run(mod, "--backend=cpu")
    assert r.returncode == 1
    assert f"{mod}:3:" in r.stderr and "bitwise reduction kind 'and'" in r.stderr
    assert "Traceback" not in r.stderr


@pytest.mark.parametrize("arrays,message", [
    ({"x0": np.zeros(4, np.float32)}, "missing array 'x1'"),
    ({"x0": np.zeros(4, np.float32), "x1": np.zeros(5, np.float32)}, "'x1' is float32[5], expected float32[4]"),
    ({"x0": np.zeros(4), "x1": np.zeros(4)}, "'x0' is float64[4], expected float32[4]"),
    ({"x0": np.zeros(4, np.float32), "x1": np.zeros(4, np.float32), "y": np.zeros(1)}, "unexpected arrays y"),
])
def test_bad_inputs_file(tmp_path, arrays, message):
    mod = write_module(tmp_path / "m.mlir", 2, [4], "f32", "sum")
    np.savez(tmp_path / "in.npz", **arrays)
    r = coll_run(mod, "--backend=cpu", "--inputs", tmp_path / "in.npz", "--outputs", tmp_path / "o.npz")
    assert r.returncode == 1
    assert r.stderr.startswith("coll-run: error: ") and message in r.stderr
    assert not (tmp_path / "o.npz").exists()


def test_missing_file_and_unknown_backend(tmp_path):
    r = coll_run(tmp_path / "nope.mlir", "--backend=cpu")
    assert r.returncode == 1 and r.stderr.startswith("coll-run: error: could not open input file")
    r = coll_run(EXAMPLE, "--backend=tpu")
    assert r.returncode == 1 and "unknown backend 'tpu'" in r.stderr


def test_cuda_without_gpu_is_a_clear_error():
    from coll.lowering import gpu as cuda
    ok, _ = cuda.available()
    if ok:
        pytest.skip("a GPU is present: the error path is not reachable here")
    r = coll_run(EXAMPLE, "--backend=cuda")
    assert r.returncode != 0
    assert r.stderr.startswith("coll-run: error: backend 'cuda' is not available here")
    assert "Traceback" not in r.stderr


@pytest.mark.parametrize("where, why", [("nodir/o.npz", "No such file or directory"), (".", "Is a directory")])
def test_an_outputs_path_it_cannot_write_is_said_before_anything_runs(tmp_path, where, why):
    # Found by an outside attack: a missing folder was said after every run.
    mod = write_module(tmp_path / "m.mlir", 2, [8], "f32", "sum")
    r = coll_run(mod, "--backend=cpu", "--strategy=all", "--outputs", tmp_path / where)
    assert r.returncode == 1 and r.stdout == "", r.stdout
    assert r.stderr == f"coll-run: error: could not write '{tmp_path / where}': {why}\n", r.stderr


def test_an_empty_outputs_path_is_said_as_such(tmp_path):
    # An outside attack: `--outputs ""` said "could not write '': Is a directory".
    mod = write_module(tmp_path / "m.mlir", 2, [8], "f32", "sum")
    r = coll_run(mod, "--backend=cpu", "--outputs", "")
    assert r.returncode == 1 and r.stdout == "", r.stdout
    assert r.stderr == "coll-run: error: --outputs needs a file path (.npz), got ''\n", r.stderr
