// REQUIRES: mpi
// A block along a non-leading axis is one strided copy; between ranks it
// is one message, packed into scratch before its isend and unpacked after
// the wait of its irecv (lowering/mpi/to_mpi.py): issue 34's all_to_all
// of 300000x2 i8 (split 0, concat 1) over 4 ranks is 12 messages, not one
// per row (which would also pass MPI's 32767 tags), and matches numpy.
// GEN: a2a = coll-gen all-to-all --devices 4 --shape 300000x2 --dtype i8 --split-axis 0 --concat-axis 1
// RUN: coll-run %S/Inputs/gen/strided_blocks.a2a.mlir --backend=mpi --repeat 1 | FileCheck %s --check-prefix=A2A
// GEN: rs = coll-gen reduce-scatter --devices 2 --shape 3000x2 --dtype f32 --axis 1
// RUN: coll-run %S/Inputs/gen/strided_blocks.rs.mlir --backend=mpi --repeat 1 --strategy=all | FileCheck %s --check-prefix=RS
// RUN: coll-opt --pass-pipeline='builtin.module(coll-lower-collectives,coll-to-mpi)' < %S/Inputs/gen/strided_blocks.a2a.mlir | FileCheck %s

// A2A: direct {{.*}} ok
// RS: ring {{.*}} ok
// RS: direct {{.*}} ok

// Rank 0 packs its block for rank 1 (a contiguous 75000x2 source needs no
// packing), receives rank 1's into scratch and unpacks it into the 2-column
// block of its output once waited for.
// CHECK: case 0 {
// CHECK: %[[R:.*]] = "coll.alloc"() : () -> memref<75000x2xi8, #coll.device<0 : i64>>
// CHECK: %[[Q:.*]] = mpi.irecv(%[[R]], %{{.*}}, %{{.*}}, %{{.*}}) : memref<75000x2xi8, #coll.device<0 : i64>>, i32, i32 -> !mpi.request
// CHECK: mpi.isend(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) : memref<75000x2xi8, strided<[2, 1], offset: 150000>, #coll.device<0 : i64>>
// CHECK: mpi.wait(%[[Q]])
// CHECK-NEXT: "coll.copy"(%[[R]], %{{.*}}) : (memref<75000x2xi8, #coll.device<0 : i64>>, memref<75000x2xi8, strided<[8, 1], offset: 2>, #coll.device<0 : i64>>)
