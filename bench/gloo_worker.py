"""bench/mpi_side_by_side.py's gloo column: torch.distributed's allreduce
on the gloo back end (f32 sum), N processes on this host. Runs with a
Python that has torch (a separate environment: the project does not
depend on torch).

  TORCH_PYTHON bench/gloo_worker.py JOB.json OUT.json N

Per size, as bench/mpi4py_worker.py: one checked call, `warmup` untimed
calls, `repeat` timed runs of `calls` calls after a barrier; a run's time
per call is the slowest rank's. gloo's allreduce is in place: the timed
calls reduce the tensor the previous call left (the values grow; the time
of an f32 add does not depend on them).
"""
import json
import os
import socket
import sys
import time

from side_by_side_inputs import expected, rank_input


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def rank_main(rank, n, job, out_path, port):
    import torch
    import torch.distributed as dist
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    torch.set_num_threads(1)
    dist.init_process_group("gloo", rank=rank, world_size=n)
    out = {}
    for numel in job["numels"]:
        calls = job["calls"][str(numel)]
        t = torch.from_numpy(rank_input(rank, numel))
        dist.all_reduce(t)
        wrong = torch.tensor([int((t.numpy() != expected(n, numel)).sum())], dtype=torch.int64)
        for _ in range(job["warmup"]):
            dist.all_reduce(t)
        times = torch.empty(job["repeat"], dtype=torch.float64)
        for i in range(job["repeat"]):
            dist.barrier()
            t0 = time.perf_counter()
            for _ in range(calls):
                dist.all_reduce(t)
            times[i] = (time.perf_counter() - t0) / calls
        dist.all_reduce(times, op=dist.ReduceOp.MAX)
        dist.all_reduce(wrong)
        out[str(numel)] = {"times": times.tolist(), "wrong": int(wrong[0])}
    if rank == 0:
        with open(out_path, "w") as f:
            json.dump({"library": f"torch {torch.__version__} gloo", "sizes": out}, f)
    dist.destroy_process_group()


def main(job_path, out_path, n):
    import torch.multiprocessing as mp
    job = json.loads(open(job_path).read())
    mp.spawn(rank_main, args=(n, job, out_path, _free_port()), nprocs=n, join=True)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]))
