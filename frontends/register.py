"""The passes of frontends/ as data: pass name -> "module:function" (core/registry.py
reads this table and imports a module only when its pass is used)."""

PASSES = {
    "coll-inits-as-inputs": "coll.frontends.fusion:inits_as_inputs",
    "coll-transposes-into-producers": "coll.frontends.fusion:transposes_into_producers",
    "coll-from-shard": "coll.frontends.shard:from_shard",
    "coll-shard-partition": "coll.frontends.shard:shard_partition",
    "coll-unroll-collective-loops": "coll.frontends.spmd:unroll_collective_loops",
    "coll-spmd-to-global": "coll.frontends.spmd:spmd_to_global",
    "coll-from-stablehlo": "coll.frontends.stablehlo_import:from_stablehlo",
    "coll-stablehlo-to-linalg": "coll.frontends.stablehlo_import:stablehlo_to_linalg",
    "coll-xla-partition": "coll.frontends.stablehlo_partition:xla_partition",
    "coll-bufferize": "coll.frontends.tensor:bufferize",
    "coll-distinct-results": "coll.frontends.tensor:distinct_results",
    "coll-free-local-buffers": "coll.frontends.tensor:free_local_buffers",
    "coll-entry": "coll.frontends.tensor:entry",
}
