// Until coll's registry has coll.permute, JAX's ppermute (StableHLO's
// collective_permute) is refused at the op (permute.mlir: imported).
// UNSUPPORTED: coll-permute
// RUN: not coll-opt --allow-unregistered-dialect --coll-from-stablehlo %S/Inputs/ppermute_ring.mlir 2>&1 | filecheck %s
// CHECK: ppermute_ring.mlir:7:12: error: coll-from-stablehlo: 'stablehlo.collective_permute' has no coll form: coll has no permute collective yet (ppermute)
