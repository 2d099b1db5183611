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
    ("mpi_run.py", ["--repeat", "0"], "--kib sizes must be 1.."),
    ("mpi_run.py", ["--kib", "-4"], "--kib sizes must be 1.."),
    ("mpi_run.py", ["--kib", "1" + "0" * 12], "--kib sizes must be 1.."),
    ("mpi_run.py", ["--json", "/proc/x.json"], "--json: '/proc/x.json' is not writable"),
    ("calibrate_mpi.py", ["-o", "/proc/x.json"], "'/proc/x.json' is not writable"),
    ("mpi_run.py", ["--ranks", "0"], "--ranks must be 1.."),
    ("mpi_run.py", ["--ranks", "999"], "--ranks must be 1.."),
    ("mpi_run.py", ["--json", ""], "--json: the output path is empty"),
    ("mpi_run.py", ["--profile", "nope"], "unknown profile 'nope'"),
    ("mpi_run.py", ["--bogus"], "unrecognized arguments: --bogus"),
    ("compile_time.py", ["--ns", "abc"], "--ns must be comma-separated device counts"),
    ("compile_time.py", ["--ns", "0"], "--ns counts must be 1..1024"),
    ("compile_time.py", ["--strategies", "bogus"], "unknown strategy 'bogus'"),
    ("compile_time.py", ["--json", "/nonexistent/x.json"], "--json: the folder of"),
    ("calibrate_mpi.py", ["-o", ""], "the output path is empty"),
    ("calibrate_mpi.py", ["--repeat", "0"], "--repeat must be at least 1"),
    ("calibrate_cpu.py", ["-o", "/nonexistent/p.json"], "the folder of"),
    ("timed_call.py", ["--devices", "0"], "--devices must be 1..64"),
    ("timed_call.py", ["--mib", "0"], "--mib sizes must be 1..4096"),
    ("timed_call.py", ["--rounds", "0"], "--rounds at least 1"),
    ("timed_call.py", ["--json", "/proc/x.json"], "--json: '/proc/x.json' is not writable"),
    ("timed_call.py", ["--strategies", "bogus"], "invalid choice: 'bogus'"),
    ("cpu_strategies.py", ["--devices", "999"], "--devices must be 1..64"),
    ("cpu_strategies.py", ["--mib", "-1"], "--mib sizes must be 1..4096"),
    ("cpu_strategies.py", ["--json", ""], "--json: the output path is empty"),
    ("mpi_side_by_side.py", ["--ranks", "0"], "--ranks must be 1.."),
    ("mpi_side_by_side.py", ["--kib", "0"], "--kib sizes must be 1.."),
    ("mpi_side_by_side.py", ["--repeat", "0"], "--repeat at least 1"),
    ("mpi_side_by_side.py", ["--json", "/proc/x.json"], "--json: '/proc/x.json' is not writable"),
    ("profile_run.py", ["--top", "x", "--", "f.mlir"], "argument --top: invalid int value"),
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
