"""One rank of bench/mpi_side_by_side.py's mpi4py column, under mpirun:
MPI_Allreduce (mpi4py, out of place, f32 sum) of each size in the job.

  mpirun -n N python bench/mpi4py_worker.py JOB.json OUT.json

Per size: one checked call (wrong elements counted against the exact
sum), `warmup` untimed calls, then `repeat` timed runs of `calls` calls
each, each run after a barrier, as coll's MPI runtime times its programs
(execution/mpi_worker.py); a run's time per call is the slowest rank's.
"""
import json
import sys

import numpy as np
from mpi4py import MPI
from side_by_side_inputs import expected, rank_input


def main(job_path, out_path):
    job = json.loads(open(job_path).read())
    comm = MPI.COMM_WORLD
    rank, n = comm.Get_rank(), comm.Get_size()
    out = {}
    for numel in job["numels"]:
        calls = job["calls"][str(numel)]
        x = rank_input(rank, numel)
        y = np.empty_like(x)
        comm.Allreduce(x, y, op=MPI.SUM)
        wrong = np.array([np.count_nonzero(y != expected(n, numel))], np.int64)
        for _ in range(job["warmup"]):
            comm.Allreduce(x, y, op=MPI.SUM)
        times = np.empty(job["repeat"])
        for i in range(job["repeat"]):
            comm.Barrier()
            t0 = MPI.Wtime()
            for _ in range(calls):
                comm.Allreduce(x, y, op=MPI.SUM)
            times[i] = (MPI.Wtime() - t0) / calls
        slowest = np.empty_like(times)
        comm.Allreduce(times, slowest, op=MPI.MAX)
        total = np.empty_like(wrong)
        comm.Allreduce(wrong, total, op=MPI.SUM)
        out[str(numel)] = {"times": slowest.tolist(), "wrong": int(total[0])}
    if rank == 0:
        with open(out_path, "w") as f:
            json.dump({"library": MPI.Get_library_version().splitlines()[0].strip(), "sizes": out}, f)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
