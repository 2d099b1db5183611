"""Imports every module of lowering/ that registers a pass (an entry point
of the `coll.passes` group in pyproject.toml)."""
from . import bufferize, cpu, gpu, gpu_local, ieee_minmax, mpi, shard, spmd  # noqa: F401
