"""One rank of an MPI run (lowering/mpi/runtime.py starts N of these under mpirun):
`python .../lowering/mpi/worker.py JOBDIR`, run as a file, not as
`-m coll.lowering.mpi.worker`: importing the coll package loads MLIR, which a
rank never uses (0.3 s of CPU a rank: 1.8 s against 0.5 s for a 4-rank
mpirun on two cores). So it imports the standard library, numpy and
execution/descriptors.py (loaded by its path), nothing else.

It loads the per-rank programs (JOBDIR/job.json lists them), initializes
MPI, refuses a group of the wrong size before any message is sent, runs
each entry once on its own arrays (JOBDIR/in{program}_{rank}.npz), times
`repeat` rounds of every program in turn, each run after a barrier, and
writes JOBDIR/out{program}_{rank}.npz. Before each step it writes what
it is doing to JOBDIR/status{rank}, so that the launcher can say what a
rank that crashed or hung was doing.
"""
import ctypes
import importlib.util
import json
import os
import signal
import sys
import time
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np


@cache
def _descriptors() -> ModuleType:
    """execution/descriptors.py, loaded from its file (it imports nothing
    of coll): how a rank stages its arrays as the CPU runtime does."""
    path = Path(__file__).resolve().parents[2] / "execution" / "descriptors.py"
    spec = importlib.util.spec_from_file_location("coll_mpi_worker_descriptors", path)
    assert spec is not None and spec.loader is not None, path
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# For the fault tests (tests/unit/test_mpi_runtime.py): "RANK:kill" makes
# that rank kill itself while running the program, "RANK:exit" makes it
# exit without a word, "RANK:hang" makes it sleep forever.
FAULT_ENV = "COLL_MPI_TEST_FAULT"


def _env_rank() -> int | None:
    for key in ("OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK"):
        if key in os.environ:
            return int(os.environ[key])
    return None


class _Status:
    def __init__(self, job: Path, rank: int) -> None:
        self.path = job / f"status{rank}"

    def read(self) -> str:
        try:
            return self.path.read_text().partition(" ")[2]
        except OSError:
            return "starting"

    def __call__(self, text: str) -> None:
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(f"{os.getpid()} {text}")
        os.replace(tmp, self.path)


def _fault(rank: int) -> None:
    target, _, when = os.environ.get(FAULT_ENV, "").partition(":")
    if target != str(rank):
        return
    if when == "kill":
        os.kill(os.getpid(), signal.SIGKILL)
    if when == "exit":
        os._exit(3)
    while when == "hang":
        time.sleep(60)


def _load(job: Path, program: dict[str, Any]) -> ctypes.CDLL:
    # RTLD_GLOBAL: OpenMPI's plugins resolve libmpi symbols globally (the
    # programs are linked -Bsymbolic, so their own symbols never clash).
    lib = ctypes.CDLL(str(job / program["lib"]), mode=ctypes.RTLD_GLOBAL)
    lib.coll_mpi_wtime.restype = ctypes.c_double
    return lib


def _read_profile(lib: ctypes.CDLL) -> np.ndarray:
    """[nanoseconds in collectives, calls] since the last read, which zeroes
    them (coll_profile_read, lowering/cpu/profile.py)."""
    out = np.zeros(2, np.int64)
    lib._mlir_ciface_coll_profile_read(ctypes.pointer(_descriptors().descriptor(out)))
    return out


def main(job: str | Path) -> int:
    """Runs `_main`; an exception (a library that does not load: an undefined
    symbol) is written to the status file, whole, so that the launcher
    reports it (mpirun's own message would bury this rank's stderr)."""
    job = Path(job)
    rank = _env_rank()
    try:
        return _main(job, rank)
    except Exception as e:
        if rank is not None:
            doing = _Status(job, rank).read()
            _Status(job, rank)(f"failed while {doing}: {type(e).__name__}: {e}")
        raise


def _main(job: Path, rank: int | None) -> int:
    spec = json.loads((job / "job.json").read_text())
    if rank is None:
        print("coll mpi worker: no rank in the environment (not started by mpirun?)", file=sys.stderr)
        return 2
    status = _Status(job, rank)
    status("loading the program")
    programs = spec["programs"]
    libs = [_load(job, p) for p in programs]
    mpi = libs[0]
    status("in MPI_Init")
    mpi.coll_mpi_init()
    size = mpi.coll_mpi_size()
    if size != spec["ranks"] or mpi.coll_mpi_rank() != rank:
        status(f"refused: the program is for {spec['ranks']} ranks, the job has {size}")
        # Every rank of the job refuses: none exits (and has mpirun kill the
        # others) before all have said so.
        mpi.coll_mpi_barrier()
        mpi.coll_mpi_finalize()
        return 4
    tag_ub = mpi.coll_mpi_tag_ub()
    if spec.get("max_tag", 0) > tag_ub:
        status(f"refused: the program uses MPI tags up to {spec['max_tag']}, this MPI's MPI_TAG_UB "
               f"is {tag_ub}")
        mpi.coll_mpi_finalize()
        return 4
    staged = _descriptors().staged
    calls = []
    for j, (p, lib) in enumerate(zip(programs, libs)):
        data = np.load(job / f"in{j}_{rank}.npz")
        arrays = [np.asarray(data[f"a{i}"], order="C") if f"a{i}" in data.files else np.zeros(shape, dtype)
                  for i, (shape, dtype, _, _) in enumerate(p["slots"])]
        # A slot with a static layout runs in a buffer of its span; what is
        # saved is the window the program sees.
        got = [staged(a, tuple(shape), (layout[0], tuple(layout[1])) if layout else None)
               for a, (shape, _, _, layout) in zip(arrays, p["slots"])]
        arrays = [view for view, _, _ in got]
        ptrs = [ctypes.pointer(d) for _, d, _ in got]
        calls.append((getattr(lib, "_mlir_ciface_" + p["entry"]), ptrs, arrays, got))

    def what(j: int) -> str:
        if len(programs) > 1:
            return f"program {j + 1} of {len(programs)}, {programs[j]['label']}"
        return programs[j]["label"]
    for j, (entry, ptrs, _, _) in enumerate(calls):
        status(f"running the program ({what(j)})")
        _fault(rank)
        entry(*ptrs)
    # What the checked run wrote is what comes back: timed runs of a program
    # in place would run on its own results (an all_reduce's K-fold sum).
    results = [[a.copy() for a in arrays[p["n_inputs"]:]] if spec["repeat"] else arrays[p["n_inputs"]:]
               for p, (_, _, arrays, _) in zip(programs, calls)]
    # A profiled program's counters (lowering/cpu/profile.py) count the
    # timed runs only: read (and zeroed) before them and after.
    profiles = [_read_profile(lib) if p.get("profiled") else None for p, lib in zip(programs, libs)]
    times: list[list[float]] = [[] for _ in calls]
    batch = spec.get("calls", 1)  # calls per timed run: short programs, less barrier skew
    for i in range(spec["repeat"]):
        for j, (entry, ptrs, _, _) in enumerate(calls):
            status(f"timing the program (run {i + 1} of {spec['repeat']}, {what(j)})")
            mpi.coll_mpi_barrier()
            t0 = mpi.coll_mpi_wtime()
            for _ in range(batch):
                entry(*ptrs)
            times[j].append((mpi.coll_mpi_wtime() - t0) / batch)
    profiles = [_read_profile(lib) if p.get("profiled") else None for p, lib in zip(programs, libs)]
    status("writing its outputs")
    for j, (p, (_, _, arrays, _)) in enumerate(zip(programs, calls)):
        # The checked run (no timing) also returns its inputs: a program in
        # place leaves its results there.
        ins = {f"in_{i}": a for i, a in enumerate(arrays[:p["n_inputs"]])} if not spec["repeat"] else {}
        saved: dict[str, Any] = {"times": np.array(times[j]), **ins}  # (numpy's stub: **kwds as allow_pickle)
        if profiles[j] is not None:
            saved["profile"] = profiles[j]
        np.savez(job / f"out{j}_{rank}.npz", *results[j], **saved)
    status("in MPI_Finalize")
    mpi.coll_mpi_finalize()
    status("done")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
