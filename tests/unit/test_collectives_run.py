"""coll-run on every collective, as a user runs it (a subprocess): generated
inputs with every strategy, and the --inputs/--outputs round trip with the
npz keys x0.. and y0.. checked against numpy here."""
import subprocess
import sys

import numpy as np
import pytest

GEN = {
    "reduce-scatter": ["--shape", "6x4", "--kind", "sum", "--axis", "1"],
    "all-gather": ["--shape", "2x3", "--axis", "0"],
    "reduce": ["--shape", "5x3", "--kind", "max", "--root", "1", "--in-place"],
    "broadcast": ["--shape", "7", "--root", "3"],
    "all-to-all": ["--shape", "4x2", "--split-axis", "0", "--concat-axis", "1"],
    "all-reduce": ["--shape", "9", "--in-place"],
    "permute": ["--shape", "3x4", "--pairs", "1:0"],
}


def tool(name, *args):
    return subprocess.run([sys.executable, "-m", f"coll.tools.{name}", *map(str, args)],
                          capture_output=True, text=True)


def generate(tmp_path, op, devices, dtype="i32"):
    r = tool("coll_gen", op, "--devices", devices, "--dtype", dtype, *GEN[op])
    assert r.returncode == 0, r.stderr
    path = tmp_path / f"{op}.mlir"
    path.write_text(r.stdout)
    return path


@pytest.mark.parametrize("op", GEN)
def test_every_strategy(tmp_path, op):
    r = tool("coll_run", generate(tmp_path, op, 2, "f32"), "--backend=cpu", "--strategy=all", "--repeat=1")
    assert r.returncode == 0, r.stderr
    rows = [line.split() for line in r.stdout.splitlines()[2:]]
    assert rows and all(row[-1] == "ok" for row in rows)
    assert op.replace("-", "_") in r.stdout.splitlines()[0]


def expected(op, xs):
    if op == "reduce-scatter":
        return np.split(sum(xs), 2, axis=1)
    if op == "all-gather":
        return [np.concatenate(xs, axis=0)] * 2
    if op == "reduce":
        return [np.maximum(xs[0], xs[1])]
    if op == "broadcast":
        return [xs[0]] * 2
    if op == "all-to-all":
        return [np.concatenate([np.split(x, 2, axis=0)[j] for x in xs], axis=1) for j in range(2)]
    if op == "permute":  # 1 -> 0; device 1 receives nothing: its output stays as coll-run made it, zeros
        return [xs[1], np.zeros_like(xs[0])]
    return [sum(xs)] * 2


@pytest.mark.parametrize("op", GEN)
def test_inputs_and_outputs(tmp_path, op):
    path = generate(tmp_path, op, 2)
    shape = [int(d) for d in GEN[op][1].split("x")]
    n_in = 1 if op == "broadcast" else 2
    rng = np.random.default_rng(7)
    xs = [rng.integers(-50, 50, shape, dtype=np.int32) for _ in range(n_in)]
    np.savez(tmp_path / "in.npz", **{f"x{i}": x for i, x in enumerate(xs)})
    r = tool("coll_run", path, "--backend=cpu", "--inputs", tmp_path / "in.npz",
             "--outputs", tmp_path / "out.npz", "--repeat=1")
    assert r.returncode == 0, r.stderr
    got = np.load(tmp_path / "out.npz")
    want = expected(op, xs)
    assert sorted(got.files) == [f"y{j}" for j in range(len(want))]
    for j, w in enumerate(want):
        np.testing.assert_array_equal(got[f"y{j}"], w)


def test_wrong_input_shape_is_a_diagnostic(tmp_path):
    path = generate(tmp_path, "reduce-scatter", 2)
    np.savez(tmp_path / "in.npz", x0=np.zeros((6, 4), np.int32), x1=np.zeros((4, 4), np.int32))
    r = tool("coll_run", path, "--backend=cpu", "--inputs", tmp_path / "in.npz")
    assert r.returncode == 1 and "Traceback" not in r.stderr
    assert "'x1' is int32[4, 4], expected int32[6, 4]" in r.stderr
