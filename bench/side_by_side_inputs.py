"""The inputs of bench/mpi_side_by_side.py's foreign columns (mpi4py,
gloo): rank r holds (r + 1) * ((i mod 13) - 6) / 64 at element i, f32, so
that every partial sum is exact and a result is checked exactly."""
import numpy as np


def rank_input(rank, numel):
    i = np.arange(numel, dtype=np.int64)
    return ((rank + 1) * ((i % 13) - 6) / 64.0).astype(np.float32)


def expected(n, numel):
    i = np.arange(numel, dtype=np.int64)
    return (n * (n + 1) // 2 * ((i % 13) - 6) / 64.0).astype(np.float32)
