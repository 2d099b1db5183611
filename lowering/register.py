"""Imports every module of lowering/ that registers a pass (an entry point
of the `coll.passes` group in pyproject.toml)."""
from .cpu import ieee_minmax, to_cpu  # noqa: F401
from .gpu import legalize_memcpy, local_buffers, to_gpu  # noqa: F401
from .mpi import abi, requests, static_scratch, to_mpi  # noqa: F401
