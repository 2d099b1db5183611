"""bench/mpi_side_by_side.py: coll's MPI back end, upstream's and
mpi4py's MPI_Allreduce (and gloo where torch is) in one run, with the
measurement columns; every result checked. Starts mpirun (runs alone)."""
import os
import subprocess
import sys
from importlib.util import find_spec

import pytest

from coll.collectives import AllReduce
from coll.lowering import mpi

BENCH = os.path.join(os.path.dirname(__file__), "..", "..", "bench")
sys.path.insert(0, BENCH)
import mpi_side_by_side as side  # noqa: E402
from side_by_side_inputs import expected, rank_input  # noqa: E402


def test_judge_by_hand():
    """Medians 2, 3, 4 us ... (1 MiB): the fastest coll strategy, auto
    within 10% of it or not, algbw/busbw of a 2-rank allreduce (factor 1)."""
    programs = {s: ([1e-6 * (k + 2)] * 3, 0) for k, s in enumerate(side.STRATEGIES)}
    programs["auto (ring)"] = ([2.2e-6, 2.1e-6, 9e-6], 0)
    programs["mpi4py MPI_Allreduce"] = ([1e-6] * 3, 0)
    ms, fastest, good = side.judge(2, 1024, programs)
    assert fastest == side.STRATEGIES[0] and good  # 2.2 us <= 1.1 x 2 us
    assert ms["mpi4py MPI_Allreduce"].algbw == pytest.approx(1024 * 1024 / 1e-6)
    assert ms["mpi4py MPI_Allreduce"].busbw == ms["mpi4py MPI_Allreduce"].algbw
    programs["auto (ring)"] = ([2.3e-6] * 3, 0)
    assert not side.judge(2, 1024, programs)[2]
    programs["ring"] = ([1e-6] * 3, -1)  # a failed check
    assert not side.judge(2, 1024, programs)[0]["ring"].ok


def test_foreign_inputs_sum_exactly():
    for n in (2, 3, 4):
        assert (sum(rank_input(r, 1000) for r in range(n)) == expected(n, 1000)).all()


@pytest.mark.skipif(not mpi.available()[0], reason="no MPI here (make setup installs OpenMPI)")
def test_one_point_side_by_side():
    args = ["--ranks", "2", "--kib", "4", "--repeat", "1", "--torch-python", "/nonexistent"]
    have_mpi4py = find_spec("mpi4py") is not None
    if not have_mpi4py:
        args.append("--no-mpi4py")
    r = subprocess.run([sys.executable, os.path.join(BENCH, "mpi_side_by_side.py"), *args], capture_output=True,
                       text=True, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    rows = [l.split("  ") for l in r.stdout.splitlines() if l.startswith(" 2 ")]
    names = [[c.strip() for c in row if c.strip()][2] for row in rows]
    want = list(AllReduce.runnable(())) + ["MPI_Allreduce (mpi dialect)"] + (["mpi4py MPI_Allreduce"] if have_mpi4py else [])
    assert [n for n in names if not n.startswith("auto")] == want
    assert sum(n.startswith("auto (") for n in names) == 1
    assert all(l.rstrip().endswith(" ok") for l in r.stdout.splitlines() if l.startswith(" 2 ")), r.stdout
    assert "gloo: skipped: --torch-python /nonexistent does not exist" in r.stdout
    assert "auto within 10% of the fastest coll strategy at" in r.stdout
