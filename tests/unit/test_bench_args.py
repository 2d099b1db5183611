"""The bench scripts refuse bad arguments before measuring anything: a
usage error naming the argument, exit 1, no traceback, no output file
(found by an outside attack: tracebacks after minutes of measuring, and 99
ranks started on 2 cores)."""
import json
import os
import subprocess
import sys

import pytest

BENCH = os.path.join(os.path.dirname(__file__), "..", "..", "bench")


def bench(script, *args):
    return subprocess.run([sys.executable, os.path.join(BENCH, script), *args], capture_output=True,
                          text=True, timeout=120)


@pytest.mark.parametrize("script,args,says", [
    ("mpi_run.py", ["--repeat", "0"], "argument --repeat: 0 is out of range; expected 1.."),
    ("alignment.py", ["--mib", "nan"], "argument --mib: nan is out of range; expected MiB in (0, 1024]"),
    ("alignment.py", ["--mib", "0"], "argument --mib: 0 is out of range; expected MiB in (0, 1024]"),
    ("alignment.py", ["--strategies", "bogus"], "argument --strategies: invalid choice: 'bogus'"),
    ("epilogue.py", ["--devices", "0"], "argument --devices: 0 is out of range; expected 1..64"),
    ("epilogue.py", ["--strategies", "ring,bogus"], "--strategies: unknown strategy 'bogus'"),
    ("matmul_blas.py", ["--sizes", "abc"], "argument --sizes: 'abc' is not an integer"),
    ("matmul_blas.py", ["--transform", "300"], "--transform: sizes must be multiples of 256"),
    ("mpi_run.py", ["--kib", "-4"], "argument --kib: -4 is out of range; expected 1.."),
    ("mpi_run.py", ["--kib", "1" + "0" * 12], "argument --kib: 1000000000000 is out of range; expected 1.."),
    ("mpi_run.py", ["--json", "/proc/x.json"], "--json: '/proc/x.json' is not writable"),
    ("calibrate_mpi.py", ["-o", "/proc/x.json"], "'/proc/x.json' is not writable"),
    ("mpi_run.py", ["--ranks", "0"], "argument --ranks: 0 is out of range; expected 1.."),
    ("mpi_run.py", ["--ranks", "999"], "argument --ranks: 999 is out of range; expected 1.."),
    ("mpi_run.py", ["--json", ""], "--json: the output path is empty"),
    ("mpi_run.py", ["--profile", "nope"], "unknown profile 'nope'"),
    ("mpi_run.py", ["--bogus"], "unrecognized arguments: --bogus"),
    ("lowering_bounds.py", ["--rows", "0"], "argument --rows: 0 is out of range; expected 1.."),
    ("lowering_bounds.py", ["--timeout", "-1"], "argument --timeout: -1 is out of range; expected seconds > 0"),
    ("lowering_bounds.py", ["--only", "bogus"], "--only: unknown group(s) bogus; expected issue, huge, worst, many, gpu, run, route"),
    ("compile_time.py", ["--ns", "abc"], "--ns must be comma-separated device counts"),
    ("compile_time.py", ["--ns", "0"], "--ns counts must be 1..1024"),
    ("compile_time.py", ["--strategies", "bogus"], "unknown strategy 'bogus'"),
    ("compile_time.py", ["--json", "/nonexistent/x.json"], "--json: the folder of"),
    ("calibrate_mpi.py", ["-o", ""], "the output path is empty"),
    ("calibrate_mpi.py", ["--repeat", "0"], "argument --repeat: 0 is out of range; expected 1.."),
    ("calibrate_cpu.py", ["-o", "/nonexistent/p.json"], "the folder of"),
    ("xla_side_by_side.py", ["--kib", "0"], "argument --kib: 0 is out of range; expected 1..1048576"),
    ("xla_side_by_side.py", ["--programs", "nope"], "--programs must name programs of bench/jax_programs.py"),
    ("xla_side_by_side.py", ["--torch", "/nonexistent/python"], "--torch: no python at"),
    # issue 23 item 7: one validation (coll/tools/argtypes.py) for every numeric argument
    ("check_semantics.py", ["--n", "0"], "argument --n: 0 is out of range; expected 1..1024"),
    ("check_semantics.py", ["--n", "-1"], "argument --n: -1 is out of range; expected 1..1024"),
    ("check_semantics.py", ["--numel", "-3"], "argument --numel: -3 is out of range; expected 1.."),
    ("check_semantics.py", ["--n", "2x"], "argument --n: '2x' is not an integer"),
    ("check_semantics.py", ["--numel", "1" + "0" * 12], "argument --numel: 1000000000000 is out of range; "
     "expected 1..268435456"),  # was numpy's _ArrayMemoryError
    ("fuzz.py", ["--count", "-1"], "argument --count: -1 is out of range; expected 1.."),
    ("fuzz.py", ["--count", "0"], "argument --count: 0 is out of range; expected 1.."),
    ("fuzz.py", ["--timeout", "nan"], "argument --timeout: nan is out of range"),
    ("fuzz.py", ["--seed", "-1"], "argument --seed: -1 is out of range"),
    ("fuzz.py", ["--bogus"], "unrecognized arguments: --bogus"),
    ("check_order_crosscheck.py", ["--count", "0"], "argument --count: 0 is out of range"),
    ("check_order_crosscheck.py", ["--ring", "-2"], "argument --ring: -2 is out of range"),
    ("collectives_run.py", ["--devices", "0"], "argument --devices: 0 is out of range"),
    ("collectives_run.py", ["--mib", "-1"], "argument --mib: -1 is out of range"),
    ("collectives_run.py", ["--repeat", "0"], "argument --repeat: 0 is out of range"),
    ("cpu_run.py", ["--devices", "-4"], "argument --devices: -4 is out of range"),
    ("cpu_run.py", ["--mib", "0"], "argument --mib: 0 is out of range"),
    ("compile_time.py", ["--numel", "0"], "argument --numel: 0 is out of range"),
    ("compile_time.py", ["--limit", "-5"], "argument --limit: -5 is out of range"),
    ("compile_time.py", ["--limit", "inf"], "argument --limit: inf is out of range"),
    ("gpu_prepare.py", ["--jobs", "0"], "argument --jobs: 0 is out of range"),
    ("shard_side_by_side.py", ["--ranks", "0"], "argument --ranks: 0 is out of range"),
    ("shard_side_by_side.py", ["--repeat", "-1"], "argument --repeat: -1 is out of range"),
    ("mpi_side_by_side.py", ["--ranks", "0"], "argument --ranks: 0 is out of range; expected 1.."),
    ("mpi_side_by_side.py", ["--kib", "0"], "argument --kib: 0 is out of range; expected 1.."),
    ("mpi_side_by_side.py", ["--repeat", "0"], "argument --repeat: 0 is out of range; expected 1.."),
    ("timed_call.py", ["--devices", "0"], "argument --devices: 0 is out of range; expected 1..64"),
    ("timed_call.py", ["--mib", "0"], "argument --mib: 0 is out of range; expected 1..4096"),
    ("timed_call.py", ["--rounds", "0"], "argument --rounds: 0 is out of range; expected 1.."),
    ("timed_call.py", ["--json", "/proc/x.json"], "--json: '/proc/x.json' is not writable"),
    ("timed_call.py", ["--strategies", "bogus"], "invalid choice: 'bogus'"),
    ("cpu_strategies.py", ["--devices", "999"], "argument --devices: 999 is out of range; expected 1..64"),
    ("cpu_strategies.py", ["--mib", "-1"], "argument --mib: -1 is out of range; expected 1..4096"),
    ("cpu_strategies.py", ["--json", ""], "--json: the output path is empty"),
    ("mpi_side_by_side.py", ["--json", "/proc/x.json"], "--json: '/proc/x.json' is not writable"),
    ("profile_run.py", ["--top", "x", "--", "f.mlir"], "argument --top: 'x' is not an integer"),
    ("profile_run.py", ["--top", "0", "--", "f.mlir"], "argument --top: 0 is out of range"),
    # found by an outside attack: tracebacks (ValueError, ZeroDivisionError) or a silent run
    ("pass_output_diff.py", ["--base", ".", "--ns", "nan"], "argument --ns: 'nan' is not an integer"),
    ("pass_output_diff.py", ["--base", ".", "--ns", "abc"], "argument --ns: 'abc' is not an integer"),
    ("pass_output_diff.py", ["--base", ".", "--ns", "2,,3"], "argument --ns: '' is not an integer"),
    ("pass_output_diff.py", ["--base", ".", "--ns", "0"], "argument --ns: 0 is out of range; expected 1..64"),
    ("pass_output_diff.py", ["--base", ".", "--ns", "2..65"], "argument --ns: 65 is out of range; expected 1..64"),
    ("pass_output_diff.py", ["--base", ".", "--ns", "5..2"], "argument --ns: '5..2' is an empty range"),
    ("pass_output_diff.py", ["--base", "/nonexistent"], "argument --base: '/nonexistent' is not a folder"),
    ("pass_output_diff.py", ["--base", BENCH], "is not a coll checkout: it has no __init__.py"),
    ("compile_time_ab.py", ["--base", "/nonexistent"], "argument --base: '/nonexistent' is not a folder"),
    # found by an outside attack: the whole benchmark ran, then FileNotFoundError or ValueError
    ("cpu_run.py", ["--json", "/nonexistent/dir/x.json"], "--json: the folder of '/nonexistent/dir/x.json' does not exist"),
    ("collectives_run.py", ["--json", "/nonexistent/dir/x.json"], "--json: the folder of"),
    ("collectives_run.py", ["--small", "--profile", "bogus"], "--profile: unknown profile 'bogus'"),
    ("validate.py", ["--json", "/nonexistent/dir/x.json"], "--json: the folder of"),
    ("validate.py", ["--profile", "bogus"], "--profile: unknown profile 'bogus'; expected a path to a .json file"),
    ("validate.py", ["--profile", "/dev/null"], "--profile: profile '/dev/null' is not valid JSON"),
    ("profile_run.py", ["--", "/nonexistent.mlir", "--backend", "cpu"],
     "coll-run: error: could not open input file '/nonexistent.mlir'"),
    ("profile_run.py", ["--", "/dev/null", "--backend", "cpu"], "/dev/null:1:1: error: the module has no func.func"),
    ("profile_run.py", ["/nonexistent.mlir"], "coll-run: error: the following arguments are required: --backend"),
    ("compile_time_ab.py", ["--base", os.path.join(BENCH, "..", "core")],
     "is not a coll checkout: it has no collectives/__init__.py"),
])
def test_bad_arguments_are_refused_up_front(script, args, says):
    r = bench(script, *args)
    assert r.returncode == 1, (r.returncode, r.stderr)
    assert says in r.stderr and "Traceback" not in r.stderr, r.stderr


GOOD = {"ranks": 2, "kib": 4, "ok": {"naive": True}, "times_s": {
    n: [1e-6, 2e-6] for n in ("naive", "ring", "all2all", "rhd", "tree", "MPI_Allreduce")}}


def _bad(**change):
    point = json.loads(json.dumps(GOOD))
    for key, value in change.items():
        if key in point["times_s"]:
            point["times_s"][key] = value
        else:
            point[key] = value
    return [point]


def test_mpi_run_from_judges_a_good_point(tmp_path):
    path = tmp_path / "points.json"
    path.write_text(json.dumps([GOOD]))
    r = bench("mpi_run.py", "--from", str(path))
    assert r.returncode == 0 and "model pick within 10% of the fastest at" in r.stdout, r.stderr


# Found by an outside attack: these gave tracebacks, nan verdicts or minutes of lowering.
@pytest.mark.parametrize("points", [[1, 2], {"points": 5}, [], [{"ranks": 0, "kib": -1, "times_s": {}}],
                                    _bad(ok="yes"), _bad(MPI_Allreduce=[0.0, 1e-6]), _bad(ranks=1025),
                                    _bad(ranks=True), _bad(kib=10 ** 400), _bad(kib=10 ** 12),
                                    _bad(ring=[-1e-6]), _bad(ring=[float("nan")])])
def test_mpi_run_from_refuses_what_a_run_cannot_have_written(tmp_path, points):
    path = tmp_path / "points.json"
    path.write_text(json.dumps(points))
    r = bench("mpi_run.py", "--from", str(path))
    assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr
    assert "is not a --json run's points" in r.stderr or "holds no points" in r.stderr


def test_every_numeric_argument_is_validated():
    """The class, not the instances: no bench script (nor the fuzzer) takes
    a bare int or float argument; each goes through coll/tools/argtypes.py,
    and every parser is coll's (usage errors exit 1). gpu_run.py is left
    out: it runs on the GPU machine without the package."""
    import ast
    files = [os.path.join(BENCH, f) for f in sorted(os.listdir(BENCH)) if f.endswith(".py") and f != "gpu_run.py"]
    files.append(os.path.join(BENCH, "..", "fuzz", "engine.py"))
    bare = []
    for path in files:
        tree = ast.parse(open(path).read())
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "add_argument":
                for kw in node.keywords:
                    if kw.arg == "type" and isinstance(kw.value, ast.Name) and kw.value.id in ("int", "float"):
                        bare.append(f"{os.path.basename(path)}:{node.lineno}")
            if isinstance(node, ast.Attribute) and node.attr == "ArgumentParser" \
                    and isinstance(node.value, ast.Name) and node.value.id == "argparse":
                bare.append(f"{os.path.basename(path)}:{node.lineno} argparse.ArgumentParser")
    assert bare == []


def test_device_count_lists_and_checkouts_that_are_accepted():
    from coll.tools.argtypes import checkout, counts
    assert counts(1, 64)("2..4") == [2, 3, 4] and counts(1, 64)("8,3") == [8, 3] and counts(1, 64)("5..5") == [5]
    root = os.path.join(BENCH, "..")
    assert checkout(os.path.join("core", "registry.py"))(root) == root
