"""Imports every module of passes/ that registers a pass (an entry point of
the `coll.passes` group in pyproject.toml)."""
from . import (  # noqa: F401
               blas_contractions,
               check_order,
               check_results,
               check_semantics,
               choose_strategy,
               lower_all_reduce,
               lower_collectives,
               predict,
               shuffle,
               widen_contractions,
)
