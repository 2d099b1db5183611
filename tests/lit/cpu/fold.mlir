// coll-to-cpu{nontemporal=B} folds the copies of a combine's result that
// follow it in a tiled group (its allgather, or the root's broadcast) into
// the combine: one kernel stores the result into every destination, and a
// destination that is a result nothing reads again, and no earlier op of the
// group wrote, is stored non-temporally ('s'; 'p': plain). The kernel takes
// that path when the streamed outputs share their offset from a 64-byte
// boundary (scalars up to it, aligned vector stores, a fence), else others
// by where the buffers are (tests/lit/cpu/stream_alignment.mlir). Without streaming nothing
// folds: in cache, a combine and memcpys are faster (bench/cpu_strategies.py).
// tree on 2 and 4 devices, 1000 elements, tiles of 128; order=any: the
// tree of partial sums (its device-order form gathers at the root).
// RUN: coll-opt %s --pass-pipeline='builtin.module(coll-lower-all-reduce{strategy=tree order=any},coll-to-cpu{tile=128 split=0 nontemporal=1})' | FileCheck %s
// RUN: coll-opt %s --pass-pipeline='builtin.module(coll-lower-all-reduce{strategy=tree order=any},coll-to-cpu{tile=128 split=0})' | FileCheck %s --check-prefix=PLAIN
// RUN: coll-opt %s --pass-pipeline='builtin.module(coll-lower-all-reduce{strategy=tree order=any},coll-to-cpu{tile=128 nontemporal=1},coll-cpu-to-llvm)' | FileCheck %s --check-prefix=LLVM

// Four devices: the root's result holds partial sums first, so its last
// store is plain; the three copies to the others stream.
// CHECK-LABEL: func.func private @coll_combine_sum_f32_x2_to_psss(
// A partial sum copied on to the next scratch: both plain.
// CHECK-LABEL: func.func private @coll_combine_sum_f32_x2_to_pp(
// CHECK-LABEL: func.func private @coll_combine_sum_f32_x2_to_ss(%arg0: !llvm.ptr, %arg1: !llvm.ptr, %arg2: !llvm.ptr, %arg3: !llvm.ptr, %arg4: i64)
// CHECK: memref.extract_aligned_pointer_as_index
// CHECK: memref.extract_aligned_pointer_as_index
// CHECK: scf.if
// CHECK: scf.for
// CHECK: memref.store
// CHECK: scf.for
// CHECK-COUNT-2: vector.load
// CHECK: arith.addf %{{.*}}, %{{.*}} : vector<16xf32>
// CHECK-NEXT: vector.store %{{.*}}, %{{.*}}[%{{.*}}] {alignment = 64 : i64, nontemporal = true} : memref<?xf32>, vector<16xf32>
// CHECK-NEXT: vector.store %{{.*}}, %{{.*}}[%{{.*}}] {alignment = 64 : i64, nontemporal = true} : memref<?xf32>, vector<16xf32>
// CHECK: scf.for
// CHECK: llvm.fence seq_cst
// Outputs not aligned alike: lines filled by shuffles; at last (not even
// 16 bytes apart) the result through a buffer on the stack, copied from it
// into each output on its own lines; no copy from an output read back.
// CHECK: } else {
// CHECK-NEXT: func.call @coll_combine_sum_f32_x2_to_ss_skewed(
// CHECK-LABEL: func.func private @coll_combine_sum_f32_x2_to_ss_skewed(
// CHECK: vector.shuffle
// CHECK: memref.alloca() {alignment = 64 : i64} : memref<2048xf32>
// CHECK-NOT: coll_copy_streaming
// CHECK-LABEL: func.func @two(
// x1's tile into scratch, then one kernel: y0 and y1 (no copy of y0's tile).
// CHECK: scf.for
// CHECK-NEXT: memref.subview
// CHECK: memref.copy
// CHECK: call @coll_combine_sum_f32_x2_to_ss(
// CHECK-NOT: coll_copy
// CHECK: }
// CHECK-LABEL: func.func @four(
// CHECK: call @coll_combine_sum_f32_x2_to_psss(
// CHECK-NOT: coll_copy_streaming
// PLAIN-NOT: _to_
// LLVM: llvm.store %{{.*}}, %{{.*}} {alignment = 64 : i64, nontemporal} : vector<16xf32>, !llvm.ptr
// LLVM: llvm.fence seq_cst

module {
  func.func @two(%x0: memref<1000xf32>, %x1: memref<1000xf32>, %y0: memref<1000xf32>, %y1: memref<1000xf32>)
      attributes {llvm.emit_c_interface} {
    %t = "coll.all_reduce"(%x0, %x1, %y0, %y1)
        {devices = array<i64: 0, 1>, kind = "sum", operandSegmentSizes = array<i32: 2, 2, 0>}
        : (memref<1000xf32>, memref<1000xf32>, memref<1000xf32>, memref<1000xf32>) -> !coll.token
    "coll.wait"(%t) : (!coll.token) -> ()
    return
  }
  func.func @four(%x0: memref<1000xf32>, %x1: memref<1000xf32>, %x2: memref<1000xf32>, %x3: memref<1000xf32>,
                  %y0: memref<1000xf32>, %y1: memref<1000xf32>, %y2: memref<1000xf32>, %y3: memref<1000xf32>)
      attributes {llvm.emit_c_interface} {
    %t = "coll.all_reduce"(%x0, %x1, %x2, %x3, %y0, %y1, %y2, %y3)
        {devices = array<i64: 0, 1, 2, 3>, kind = "sum", operandSegmentSizes = array<i32: 4, 4, 0>}
        : (memref<1000xf32>, memref<1000xf32>, memref<1000xf32>, memref<1000xf32>,
           memref<1000xf32>, memref<1000xf32>, memref<1000xf32>, memref<1000xf32>) -> !coll.token
    "coll.wait"(%t) : (!coll.token) -> ()
    return
  }
}
