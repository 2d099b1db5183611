"""Frontends: the forms programs come in (StableHLO from JAX, ...), each one
module with `detect(module_op)`, `parse(source)`, `layouts(module_op)` and
`route(module_op)` (docs/frontends.md)."""
from dataclasses import dataclass

from ..lowering.shard import Layout  # noqa: F401 - what a Boundary holds


@dataclass
class Boundary:
    """A program's entry function, its global arguments and results, and the
    block of each that rank r holds (`Layout.block(grid, r)`): what a
    runner scatters and gathers by (runtime/frontend.py)."""
    entry: str
    grid: list        # rank r = the grid position with linear index r
    inputs: list      # Layout per argument
    outputs: list     # Layout per result
