// A 16-bit ring under the order contract hands f32 partials from device to
// device: its combines hold two element types (bf16 inputs, an f32 partial).
// They are tiled like any chunk and called through shared kernels of their
// own signature (one per operand type list), which widen each bf16 load to
// f32 and round only a bf16 result; the f32 partial is stored unrounded.
// RUN: coll-gen all-reduce --devices 3 --shape 96 --dtype bf16 --strategy ring | coll-opt --pass-pipeline='builtin.module(coll-lower-collectives,coll-to-cpu{tile=16})' | FileCheck %s
// RUN: coll-gen all-reduce --devices 3 --shape 96 --dtype bf16 --strategy ring | coll-opt --pass-pipeline='builtin.module(coll-lower-collectives,coll-to-cpu{tile=16},coll-cpu-to-llvm)' | FileCheck %s --check-prefix=LLVM

// The last hop: the f32 partial plus the last device's bf16, rounded once.
// CHECK-LABEL: func.func private @coll_combine_sum_bf16_x2_f32_bf16_bf16(
// CHECK: vector.load %{{.*}} : memref<?xf32>, vector<32xf32>
// CHECK-NEXT: vector.load %{{.*}} : memref<?xbf16>, vector<32xbf16>
// CHECK-NEXT: arith.extf %{{.*}} : vector<32xbf16> to vector<32xf32>
// CHECK-NEXT: arith.addf
// CHECK-NEXT: arith.truncf %{{.*}} : vector<32xf32> to vector<32xbf16>
// CHECK-NEXT: vector.store %{{.*}} : memref<?xbf16>, vector<32xbf16>
// The first hop: two bf16 inputs, the partial kept in f32.
// CHECK-LABEL: func.func private @coll_combine_sum_bf16_x2_bf16_bf16_f32(
// CHECK: arith.addf %{{.*}} : vector<32xf32>
// CHECK-NOT: arith.truncf
// CHECK: vector.store %{{.*}} : memref<?xf32>, vector<32xf32>
// A chunk runs tile by tile (16 of its 32 elements), both hops per tile.
// CHECK-LABEL: func.func private @all_reduce_part0(
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK: func.call @coll_combine_sum_bf16_x2_bf16_bf16_f32(
// CHECK: func.call @coll_combine_sum_bf16_x2_f32_bf16_bf16(
// CHECK: }

// LLVM-NOT: coll.
// LLVM-LABEL: llvm.func @coll_combine_sum_bf16_x2_f32_bf16_bf16(
