// The local compute: coll-stablehlo-to-linalg runs jaxlib's
// stablehlo-legalize-to-linalg in a child process, after the import (the
// collectives are coll's by then, their kinds read). The shard_map MLP
// becomes linalg around one coll.all_reduce (its jax.nn.relu, a call that
// only the frontend's parser reads in a shard_map body, Inputs/import.py,
// inlined); a jit program's Shardy shardings become upstream shard
// annotations on the same linalg.
// REQUIRES: jaxlib
// RUN: %PYTHON %S/Inputs/import.py %S/Inputs/mlp_shard_map.mlir 'builtin.module(coll-from-stablehlo,coll-stablehlo-to-linalg)' | FileCheck %s --check-prefix=SMAP
// RUN: coll-opt --allow-unregistered-dialect --coll-from-stablehlo %S/Inputs/mlp_jit.mlir | FileCheck %s --check-prefix=JIT
// RUN: coll-opt --allow-unregistered-dialect --pass-pipeline='builtin.module(coll-from-stablehlo,coll-stablehlo-to-linalg)' %S/Inputs/mlp_jit.mlir | FileCheck %s --check-prefix=JITLIN

// SMAP-LABEL: func.func @main(%arg0: tensor<8x16xf32> {bufferization.writable = false}, %arg1: tensor<16x1xf32> {bufferization.writable = false}, %arg2: tensor<1x16xf32> {bufferization.writable = false}) -> tensor<8x16xf32> attributes {coll.ranks = 8 : i64}
// SMAP: %[[H:.*]] = linalg.matmul ins(%arg0, %arg1 : tensor<8x16xf32>, tensor<16x1xf32>)
// SMAP: arith.maximumf
// SMAP: %[[Y:.*]] = linalg.matmul ins(%{{.*}}, %arg2 : tensor<8x1xf32>, tensor<1x16xf32>)
// SMAP: "coll.all_reduce"(%[[Y]]) {devices = array<i64: 0, 1, 2, 3, 4, 5, 6, 7>, kind = "sum"
// SMAP-NOT: stablehlo
// SMAP-NOT: call
// SMAP-NOT: @relu

// in_shardings (P(), P(None, "x"), P("x", None)) and a replicated result.
// JIT: shard.grid @mesh(shape = 8)
// JIT-LABEL: func.func @main(%arg0: tensor<8x16xf32>, %arg1: tensor<16x8xf32>, %arg2: tensor<8x16xf32>) -> tensor<8x16xf32>
// JIT: %[[S0:.*]] = shard.sharding @mesh split_axes = {{\[\[\]\]}} : !shard.sharding
// JIT-NEXT: shard.shard %arg0 to %[[S0]] : tensor<8x16xf32>
// JIT-NEXT: %[[S1:.*]] = shard.sharding @mesh split_axes = {{\[\[\], \[0\]\]}} : !shard.sharding
// JIT-NEXT: shard.shard %arg1 to %[[S1]] : tensor<16x8xf32>
// JIT-NEXT: %[[S2:.*]] = shard.sharding @mesh split_axes = {{\[\[0\]\]}} : !shard.sharding
// JIT-NEXT: shard.shard %arg2 to %[[S2]] : tensor<8x16xf32>
// JIT: %[[SR:.*]] = shard.sharding @mesh split_axes = {{\[\[\]\]}} : !shard.sharding
// JIT-NEXT: %[[A:.*]] = shard.shard %{{.*}} to %[[SR]] : tensor<8x16xf32>
// JIT-NEXT: %[[B:.*]] = shard.shard %[[A]] to %[[SR]] annotate_for_users : tensor<8x16xf32>
// JIT-NEXT: return %[[B]]
// JIT-NOT: sdy.

// JITLIN: shard.grid @mesh(shape = 8)
// JITLIN: linalg.matmul
// JITLIN: linalg.matmul
// JITLIN-NOT: stablehlo
