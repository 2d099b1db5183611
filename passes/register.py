"""The passes of passes/ as data: pass name -> "module:function" (core/registry.py
reads this table and imports a module only when its pass is used)."""

PASSES = {
    "coll-blas-contractions": "coll.passes.blas_contractions:blas_contractions",
    "coll-check-order": "coll.passes.check_order:check_order",
    "coll-check-results": "coll.passes.check_results:check_results",
    "coll-check-semantics": "coll.passes.check_semantics:check_semantics",
    "coll-choose-strategy": "coll.passes.choose_strategy:choose_strategy_pass",
    "coll-inline-aliased-calls": "coll.passes.inline_calls:inline_aliased_calls",
    "coll-lower-all-reduce": "coll.passes.lower_all_reduce:lower_all_reduce_pass",
    "coll-lower-collectives": "coll.passes.lower_collectives:lower_collectives_pass",
    "coll-predict": "coll.passes.predict:predict",
    "coll-shuffle": "coll.passes.shuffle:shuffle",
    "coll-widen-contractions": "coll.passes.widen_contractions:widen_contractions",
}
