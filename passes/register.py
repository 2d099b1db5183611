"""Imports every module of passes/ that registers a pass (an entry point of
the `coll.passes` group in pyproject.toml)."""
from . import builtin_passes, check_order, choose_strategy, cost_passes, lower_collectives, shuffle  # noqa: F401
