// Blocks along a non-leading axis are one strided copy or combine each
// (collectives/emit.py), lowered to a loop of row copies (lowering/cpu/
// kernels.py copy_strided): issue 34's all_to_all of 300000x2 i8 (split 0,
// concat 1: rows of 2 bytes), once refused by the op limit, runs and
// matches numpy; so do all_gather and reduce_scatter along the last axis.
// GEN: a2a = coll-gen all-to-all --devices 4 --shape 300000x2 --dtype i8 --split-axis 0 --concat-axis 1
// RUN: coll-run %S/Inputs/gen/strided_blocks.a2a.mlir --backend=cpu --repeat 1 | FileCheck %s --check-prefix=A2A
// GEN: ag = coll-gen all-gather --devices 3 --shape 300000x1 --dtype i8 --axis 1
// RUN: coll-run %S/Inputs/gen/strided_blocks.ag.mlir --backend=cpu --repeat 1 --strategy=all | FileCheck %s --check-prefix=AG
// GEN: rs = coll-gen reduce-scatter --devices 2 --shape 300000x2 --dtype f32 --axis 1
// RUN: coll-run %S/Inputs/gen/strided_blocks.rs.mlir --backend=cpu --repeat 1 --strategy=all | FileCheck %s --check-prefix=RS

// A2A: direct {{.*}} ok
// AG: ring {{.*}} identical ok
// AG: direct {{.*}} identical ok
// RS: ring {{.*}} ok
// RS: direct {{.*}} ok

// The explicit program: one copy per pair of devices (16), whatever the rows.
// RUN: coll-opt --coll-lower-collectives < %S/Inputs/gen/strided_blocks.a2a.mlir | FileCheck %s --check-prefix=OPS
// OPS-COUNT-16: "coll.copy"({{.*}}) : (memref<75000x2xi8, strided<[2, 1]{{.*}}>, memref<75000x2xi8, strided<[8, 1]{{.*}}>)
// OPS-NOT: "coll.copy"
// The CPU code: each copy a loop over the rows, a 2-byte memcpy each.
// RUN: coll-opt --pass-pipeline='builtin.module(coll-lower-collectives,coll-to-cpu)' < %S/Inputs/gen/strided_blocks.a2a.mlir | FileCheck %s --check-prefix=CPU
// CPU: scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step
// CPU-NEXT: memref.subview %{{.*}}[%[[I]], 0] [1, 2] [1, 1] : memref<75000x2xi8, strided<[2, 1]>> to memref<2xi8, strided<[1], offset: ?>>
// CPU-NEXT: memref.subview %{{.*}}[%[[I]], 0] [1, 2] [1, 1] : memref<75000x2xi8, strided<[8, 1]>> to memref<2xi8, strided<[1], offset: ?>>
// CPU-NEXT: memref.copy
