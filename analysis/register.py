"""Imports every module of analysis/ that registers a pass (an entry point
of the `coll.passes` group in pyproject.toml): coll-stats, coll-timeline."""
from . import stats, timeline  # noqa: F401
