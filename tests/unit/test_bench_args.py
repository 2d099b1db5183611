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
    ("mpi_run.py", ["--repeat", "0"], "--kib sizes and --repeat must be at least 1"),
    ("mpi_run.py", ["--kib", "-4"], "--kib sizes and --repeat must be at least 1"),
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
])
def test_bad_arguments_are_refused_up_front(script, args, says):
    r = bench(script, *args)
    assert r.returncode == 1, (r.returncode, r.stderr)
    assert says in r.stderr and "Traceback" not in r.stderr, r.stderr


@pytest.mark.parametrize("points", [[1, 2], {"points": 5}, [], [{"ranks": 0, "kib": -1, "times_s": {}}]])
def test_mpi_run_from_refuses_what_a_run_cannot_have_written(tmp_path, points):
    path = tmp_path / "points.json"
    path.write_text(json.dumps(points))
    r = bench("mpi_run.py", "--from", str(path))
    assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr
    assert "is not a --json run's points" in r.stderr or "holds no points" in r.stderr
