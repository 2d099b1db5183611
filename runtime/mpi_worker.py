"""One rank of an MPI run (runtime/mpi.py starts N of these under mpirun):
`python -m coll.runtime.mpi_worker JOBDIR`.

It loads the per-rank program (JOBDIR/prog.so), initializes MPI, refuses a
group of the wrong size before any message is sent, runs the entry on its
own arrays (JOBDIR/in{rank}.npz), times `repeat` further runs between
barriers, and writes JOBDIR/out{rank}.npz. Before each step it writes what
it is doing to JOBDIR/status{rank}, so that the launcher can say what a
rank that crashed or hung was doing.
"""
import ctypes
import json
import os
import sys
from pathlib import Path

import numpy as np

from .signature import descriptor

# For the fault tests (tests/unit/test_mpi_runtime.py): "RANK:kill" makes
# that rank kill itself while running the program, "RANK:exit" makes it
# exit without a word, "RANK:hang" makes it sleep forever.
FAULT_ENV = "COLL_MPI_TEST_FAULT"


def _env_rank():
    for key in ("OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK"):
        if key in os.environ:
            return int(os.environ[key])
    return None


class _Status:
    def __init__(self, job, rank):
        self.path = job / f"status{rank}"

    def __call__(self, text):
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(f"{os.getpid()} {text}")
        os.replace(tmp, self.path)


def _fault(rank):
    target, _, when = os.environ.get(FAULT_ENV, "").partition(":")
    if target != str(rank):
        return
    import signal
    import time
    if when == "kill":
        os.kill(os.getpid(), signal.SIGKILL)
    if when == "exit":
        os._exit(3)
    while when == "hang":
        time.sleep(60)


def main(job):
    job = Path(job)
    spec = json.loads((job / "job.json").read_text())
    rank = _env_rank()
    if rank is None:
        print("coll mpi worker: no rank in the environment (not started by mpirun?)", file=sys.stderr)
        return 2
    status = _Status(job, rank)
    status("loading the program")
    # RTLD_GLOBAL: OpenMPI's plugins resolve libmpi symbols globally.
    lib = ctypes.CDLL(str(job / "prog.so"), mode=ctypes.RTLD_GLOBAL)
    lib.coll_mpi_wtime.restype = ctypes.c_double
    status("in MPI_Init")
    lib.coll_mpi_init()
    size = lib.coll_mpi_size()
    if size != spec["ranks"] or lib.coll_mpi_rank() != rank:
        status(f"refused: the program is for {spec['ranks']} ranks, the job has {size}")
        lib.coll_mpi_finalize()
        return 4
    data = np.load(job / f"in{rank}.npz")
    arrays = [np.ascontiguousarray(data[f"a{i}"]) for i in range(spec["n_inputs"])]
    arrays += [np.zeros(shape, dtype) for shape, dtype in spec["outputs"]]
    descs = [descriptor(a) for a in arrays]
    ptrs = [ctypes.pointer(d) for d in descs]
    entry = getattr(lib, "_mlir_ciface_" + spec["entry"])
    status("running the program")
    _fault(rank)
    entry(*ptrs)
    times = []
    for i in range(spec["repeat"]):
        status(f"timing the program (run {i + 1} of {spec['repeat']})")
        lib.coll_mpi_barrier()
        t0 = lib.coll_mpi_wtime()
        entry(*ptrs)
        times.append(lib.coll_mpi_wtime() - t0)
    status("writing its outputs")
    np.savez(job / f"out{rank}.npz", *arrays[spec["n_inputs"]:], times=np.array(times))
    status("in MPI_Finalize")
    lib.coll_mpi_finalize()
    status("done")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
