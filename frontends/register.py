"""Imports every module of frontends/ that registers a pass (an entry point
of the `coll.passes` group in pyproject.toml)."""
from . import fusion, shard, spmd, stablehlo_import, stablehlo_partition, tensor  # noqa: F401
