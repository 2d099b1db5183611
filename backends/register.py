"""Imports every module of backends/ that registers a pass (an entry point
of the `coll.passes` group in pyproject.toml)."""
from .cpu import ieee_minmax, to_cpu  # noqa: F401
from .gpu import legalize_memcpy, local_buffers, to_gpu  # noqa: F401
from .mpi import abi, project, requests, static_scratch  # noqa: F401
