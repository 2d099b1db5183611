"""coll-run's check follows the groups (issue 23, item 3): an SPMD
collective over one axis of a 2x2 grid (two groups of two ranks), or over
both axes in the other order (grid_axes = [1, 0]: one group [0, 2, 1, 3]),
is checked group by group, its replicas compared within each group. Every
collective, on the cpu back end and under mpirun; the outputs' bits are
compared with numpy's reading of each group here too."""
import subprocess
import sys

import numpy as np
import pytest

from coll.execution.check import Problem, check
from coll.lowering import mpi

SHAPE = 4  # per rank
CASES = {  # op: (attributes, output length per rank)
    "all_reduce": ('kind = "sum"', SHAPE),
    "reduce": ('kind = "max", root = 1 : i64', SHAPE),
    "broadcast": ("root = 1 : i64", SHAPE),
    "all_gather": ("gather_axis = 0 : i64", None),      # SHAPE * group size
    "reduce_scatter": ('kind = "sum", scatter_axis = 0 : i64', None),  # SHAPE / group size
    "all_to_all": ("split_axis = 0 : i64, concat_axis = 0 : i64", SHAPE),
}
GROUPINGS = {"columns": [[0, 2], [1, 3]], "both axes, [1, 0]": [[0, 2, 1, 3]]}


def module(op, groups):
    attrs, out = CASES[op]
    size = len(groups[0])
    if out is None:
        out = SHAPE * size if op == "all_gather" else SHAPE // size
    flat = ", ".join(str(r) for g in groups for r in g)
    devices = ", ".join(map(str, range(size)))
    return (f"func.func @f(%x: memref<{SHAPE}xi32>, %y: memref<{out}xi32>) attributes {{coll.ranks = 4 : i64}} {{\n"
            f'  %t = "coll.{op}"(%x, %y) {{devices = array<i64: {devices}>, groups = array<i64: {flat}>, {attrs}, '
            f"operandSegmentSizes = array<i32: 1, 1, 0>}} : (memref<{SHAPE}xi32>, memref<{out}xi32>) -> !coll.token\n"
            '  "coll.wait"(%t) : (!coll.token) -> ()\n  return\n}\n')


def expected(op, groups, xs):
    """{rank: what its output must hold} (a reduce: its root's only)."""
    want = {}
    for g in groups:
        vals = [xs[r] for r in g]
        for pos, r in enumerate(g):
            if op == "all_reduce":
                want[r] = sum(vals)
            elif op == "reduce":
                if pos == 1:
                    want[r] = np.maximum.reduce(vals)
            elif op == "broadcast":
                want[r] = vals[1]
            elif op == "all_gather":
                want[r] = np.concatenate(vals)
            elif op == "reduce_scatter":
                want[r] = np.split(sum(vals), len(g))[pos]
            else:  # all_to_all: block pos of every input, in group order
                want[r] = np.concatenate([np.split(v, len(g))[pos] for v in vals])
    return {r: np.asarray(w, np.int32) for r, w in want.items()}


def run(tmp_path, op, groups, backend):
    src = tmp_path / f"{op}.mlir"
    src.write_text(module(op, groups))
    rng = np.random.default_rng(3)
    xs = [rng.integers(-1000, 1000, SHAPE, dtype=np.int32) for _ in range(4)]
    np.savez(tmp_path / "in.npz", **{f"x{r}": x for r, x in enumerate(xs)})
    out = tmp_path / "out.npz"
    r = subprocess.run([sys.executable, "-m", "coll.tools.coll_run", str(src), f"--backend={backend}", "--repeat=1",
                        "--inputs", str(tmp_path / "in.npz"), "--outputs", str(out)],
                       capture_output=True, text=True, timeout=300)
    return r, xs, out


@pytest.mark.parametrize("grouping", list(GROUPINGS))
@pytest.mark.parametrize("op", list(CASES))
def test_every_collective_is_checked_per_group_on_the_cpu(tmp_path, op, grouping):
    groups = GROUPINGS[grouping]
    r, xs, out = run(tmp_path, op, groups, "cpu")
    assert r.returncode == 0, r.stdout + r.stderr
    text = " ".join("[" + ",".join(map(str, g)) + "]" for g in groups)
    assert f"in {len(groups)} group(s) of {len(groups[0])} ({text})" in r.stdout.splitlines()[0], r.stdout
    row = r.stdout.splitlines()[-1].split()
    assert row[-1] == "ok" and row[-2] == ("-" if op in ("reduce", "reduce_scatter", "all_to_all") else "identical")
    got = np.load(out)
    for rank, want in expected(op, groups, xs).items():
        assert got[f"y{rank}"].tobytes() == want.tobytes(), (rank, got[f"y{rank}"], want)


@pytest.mark.skipif(not mpi.available()[0], reason="no MPI here")
@pytest.mark.parametrize("op", list(CASES))
def test_every_collective_is_checked_per_group_under_mpi(tmp_path, op):
    groups = GROUPINGS["columns"]
    r, xs, out = run(tmp_path, op, groups, "mpi")
    assert r.returncode == 0 and r.stdout.splitlines()[-1].split()[-1] == "ok", r.stdout + r.stderr
    got = np.load(out)
    for rank, want in expected(op, groups, xs).items():
        assert got[f"y{rank}"].tobytes() == want.tobytes(), (rank, got[f"y{rank}"], want)


def test_a_wrong_group_fails():
    # The per-group check is not vacuous: rank 3 holding rank 2's group's
    # sum (the whole grid's reading, or a swapped group) fails.
    xs = [np.arange(4, dtype=np.int32) * (r + 1) for r in range(4)]
    p = Problem("f", 4, 4, (4,), "i32", "sum", collective=True, op="all_reduce", groups=((0, 2), (1, 3)))
    good = [xs[0] + xs[2], xs[1] + xs[3], xs[0] + xs[2], xs[1] + xs[3]]
    assert check(p, xs, good)[0]
    assert not check(p, xs, [good[0], good[1], good[2], good[0]])[0]
    assert not check(p, xs, [sum(xs)] * 4)[0]


# The same collectives as upstream shard writes them in a partitioned
# program (shard-partition's output on a 2x2 grid): coll-run takes one
# rank's program (per-device arrays; coll-from-shard, no partitioning).
SHARD = {
    "all_reduce": ("shard.all_reduce %a on @g grid_axes = {axes} : tensor<4xi32> -> tensor<4xi32>", 4),
    "reduce": ("shard.reduce %a on @g grid_axes = {axes} reduction = max root = [1] : (tensor<4xi32>) -> "
               "tensor<4xi32>", 4),
    "broadcast": ("shard.broadcast %a on @g grid_axes = {axes} root = [1] : (tensor<4xi32>) -> tensor<4xi32>", 4),
    "all_gather": ("shard.all_gather %a on @g grid_axes = {axes} gather_axis = 0 : tensor<4xi32> -> "
                   "tensor<{g4}xi32>", None),
    "reduce_scatter": ("shard.reduce_scatter %a on @g grid_axes = {axes} scatter_axis = 0 : tensor<4xi32> -> "
                       "tensor<{g4}xi32>", None),
    "all_to_all": ("shard.all_to_all %a on @g grid_axes = {axes} split_axis = 0 concat_axis = 0 : tensor<4xi32> -> "
                   "tensor<4xi32>", 4),
}
# grid_axes -> the groups they make on a 2x2 grid (rank = 2 * i0 + i1).
AXES = {"[0]": [[0, 2], [1, 3]], "[1, 0]": [[0, 2, 1, 3]]}


def shard_module(op, axes):
    body, out = SHARD[op]
    g = len(AXES[axes][0])
    out = out or (4 * g if op == "all_gather" else 4 // g)
    body = body.format(axes=axes, g4=out)
    return (f"shard.grid @g(shape = 2x2)\nfunc.func @f(%a: tensor<4xi32>) -> tensor<{out}xi32> {{\n"
            f"  %0 = {body}\n  return %0 : tensor<{out}xi32>\n}}\n")


def run_text(tmp_path, text, backend):
    src = tmp_path / "p.mlir"
    src.write_text(text)
    rng = np.random.default_rng(5)
    xs = [rng.integers(-1000, 1000, SHAPE, dtype=np.int32) for _ in range(4)]
    np.savez(tmp_path / "in.npz", **{f"x{r}": x for r, x in enumerate(xs)})
    out = tmp_path / "out.npz"
    r = subprocess.run([sys.executable, "-m", "coll.tools.coll_run", str(src), f"--backend={backend}", "--repeat=1",
                        "--inputs", str(tmp_path / "in.npz"), "--outputs", str(out)],
                       capture_output=True, text=True, timeout=300)
    return r, xs, out


def _shard_cases():
    """Every (op, axes) on the cpu; under mpi each op once, the axes taken
    in turn (both are seen there; an mpirun per case was a third of this
    file's time)."""
    out = []
    for i, op in enumerate(SHARD):
        axes = [a for a in AXES if not (op in ("reduce", "broadcast") and a != "[0]")]  # a root on one axis
        out += [(op, a, "cpu") for a in axes] + [(op, axes[i % len(axes)], "mpi")]
    return out


SHARD_CASES = _shard_cases()


@pytest.mark.parametrize("op,axes,backend", SHARD_CASES)
def test_partitioned_shard_program_is_checked_per_group(tmp_path, op, axes, backend):
    if backend == "mpi" and not mpi.available()[0]:
        pytest.skip("no MPI here")
    r, xs, out = run_text(tmp_path, shard_module(op, axes), backend)
    assert r.returncode == 0, r.stdout + r.stderr
    groups = AXES[axes]
    text = " ".join("[" + ",".join(map(str, g)) + "]" for g in groups)
    assert f"({text})" in r.stdout.splitlines()[0] and r.stdout.splitlines()[-1].split()[-1] == "ok", r.stdout
    got = np.load(out)
    for rank, want in expected(op, groups, xs).items():
        assert got[f"y{rank}"].tobytes() == want.tobytes(), (rank, got[f"y{rank}"], want)


@pytest.mark.parametrize("backend", ["cpu", "mpi"])
def test_spmd_in_place_over_groups_is_checked(tmp_path, backend):
    # In place, each rank's buffer is its output: 4 outputs checked (before:
    # "0 output(s)" and "ok", nothing compared).
    if backend == "mpi" and not mpi.available()[0]:
        pytest.skip("no MPI here")
    text = ("func.func @f(%x: memref<4xi32>) attributes {coll.ranks = 4 : i64} {\n"
            '  %t = "coll.all_reduce"(%x, %x) {devices = array<i64: 0, 1>, groups = array<i64: 0, 2, 1, 3>, '
            'kind = "sum", operandSegmentSizes = array<i32: 1, 1, 0>} : (memref<4xi32>, memref<4xi32>) -> !coll.token\n'
            '  "coll.wait"(%t) : (!coll.token) -> ()\n  return\n}\n')
    r, xs, out = run_text(tmp_path, text, backend)
    assert r.returncode == 0 and "-> 4 output(s)" in r.stdout and r.stdout.rstrip().endswith("identical  ok"), \
        r.stdout + r.stderr
    got = np.load(out)
    for rank, want in expected("all_reduce", [[0, 2], [1, 3]], xs).items():
        assert got[f"y{rank}"].tobytes() == want.tobytes()
