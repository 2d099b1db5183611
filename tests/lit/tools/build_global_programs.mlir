// coll-build builds programs on per-device buffers; a frontend's program on
// global arrays (a JAX export, a shard-annotated function) runs through
// coll-run, which lays the arrays out. It was: an LLVM conversion error at a
// func.return (StableHLO), or the input printed back unlowered (shard).
// RUN: not coll-build %root/tests/lit/stablehlo/Inputs/psum.mlir --emit=llvm -o %t.ll 2>&1 | FileCheck %s --check-prefix=JAX
// RUN: not test -e %t.ll
// RUN: not coll-build %root/examples/mlp_shard_4.mlir --emit=gpu 2>&1 | FileCheck %s --check-prefix=SHARD
// JAX: psum.mlir:2:3: error: a stablehlo program takes global arrays laid out over its devices: coll-run --backend=cpu|mpi runs it
// SHARD: mlp_shard_4.mlir:14:3: error: a shard program takes global arrays laid out over its devices
