"""Imports every module of passes/ that registers a pass (an entry point of
the `coll.passes` group in pyproject.toml)."""
from . import (blas_contractions, check_order, check_results, check_semantics, choose_strategy, predict,  # noqa: F401
               lower_all_reduce, lower_collectives, shuffle, widen_contractions)
