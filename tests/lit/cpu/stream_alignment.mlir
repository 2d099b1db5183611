// A streamed combine's kernel (Combine.emit_1d_streaming) picks its loops at
// run time by where its buffers are: non-temporal stores must not cross a
// line, and the user's allocator puts buffers on 16 bytes only. The kernel
// holds the loop for buffers on one offset from a line; the others are in
// a function of their own (`_skewed`), so that they do not change how LLVM
// compiles that loop. oneshot on 4 devices (one output, four inputs per
// kernel: _x4_to_s) and tree on 2 (its root's result folded into copies:
// _x2_to_ss), streamed from 1 byte.
// RUN: coll-opt %s --pass-pipeline='builtin.module(coll-lower-all-reduce{strategy=oneshot},coll-to-cpu{tile=128 split=0 nontemporal=1})' | FileCheck %s --check-prefix=ONE
// RUN: coll-opt %s --pass-pipeline='builtin.module(coll-lower-all-reduce{strategy=tree order=any},coll-to-cpu{tile=128 split=0 nontemporal=1})' | FileCheck %s --check-prefix=MANY
// RUN: coll-opt %s --pass-pipeline='builtin.module(coll-lower-all-reduce{strategy=tree order=any},coll-to-cpu{tile=128 split=0 nontemporal=1},coll-cpu-to-llvm)' | FileCheck %s --check-prefix=LLVM

// One output: the output and the first input as far from a line (mask 63):
// scalars up to the output's line, then one-line stores; else the rest.
// ONE-LABEL: func.func private @coll_combine_sum_f32_x4_to_s(
// ONE: %[[OUT:.*]] = memref.extract_aligned_pointer_as_index
// ONE-NEXT: memref.extract_aligned_pointer_as_index
// ONE-NEXT: memref.extract_aligned_pointer_as_index
// ONE-NEXT: memref.extract_aligned_pointer_as_index
// ONE-NEXT: memref.extract_aligned_pointer_as_index
// ONE-NEXT: %[[C63:.*]] = arith.constant 63 : index
// ONE-NEXT: arith.andi %[[OUT]], %[[C63]]
// ONE: scf.if
// ONE: scf.for
// ONE: vector.store %{{.*}} {alignment = 64 : i64, nontemporal = true} : memref<?xf32>, vector<16xf32>
// ONE: llvm.fence seq_cst
// ONE: } else {
// ONE-NEXT: func.call @coll_combine_sum_f32_x4_to_s_skewed(
// The rest: every input as far from a line, the output as far from 16
// bytes (mask 15): the loop starts at the first input's line (its loads on
// lines), each result in four 16-byte stores.
// ONE-LABEL: func.func private @coll_combine_sum_f32_x4_to_s_skewed(
// ONE: arith.constant 15 : index
// ONE: scf.if
// ONE: scf.for
// ONE-COUNT-4: vector.load
// ONE-COUNT-4: vector.store %{{.*}} {alignment = 16 : i64, nontemporal = true} : memref<?xf32>, vector<4xf32>
// ONE: llvm.fence seq_cst
// Else the output's line (the loads across lines).
// ONE: } else {
// ONE: scf.if
// ONE: scf.for
// ONE: vector.store %{{.*}} {alignment = 64 : i64, nontemporal = true} : memref<?xf32>, vector<16xf32>
// ONE: llvm.fence seq_cst
// Else (not even whole elements from a line): plain stores.
// ONE: } else {
// ONE: vector.store %{{.*}} : memref<?xf32>, vector<16xf32>

// Several outputs: all as far from a line: one-line stores into each.
// MANY-LABEL: func.func private @coll_combine_sum_f32_x2_to_ss(
// MANY: scf.if
// MANY: scf.for
// MANY-COUNT-2: vector.store %{{.*}} {alignment = 64 : i64, nontemporal = true} : memref<?xf32>, vector<16xf32>
// MANY: llvm.fence seq_cst
// MANY: } else {
// MANY-NEXT: func.call @coll_combine_sum_f32_x2_to_ss_skewed(
// Else all as far from 16 bytes: on the first output's line; each output
// as far from it in one-line stores, else in 16-byte pieces (a branch per
// output, the same way every iteration).
// MANY-LABEL: func.func private @coll_combine_sum_f32_x2_to_ss_skewed(
// MANY: arith.constant 15 : index
// MANY: scf.if
// MANY: scf.for
// MANY: arith.addf %{{.*}} : vector<16xf32>
// MANY-NEXT: scf.if
// MANY-NEXT: vector.store %{{.*}} {alignment = 64 : i64, nontemporal = true} : memref<?xf32>, vector<16xf32>
// MANY-NEXT: } else {
// MANY-COUNT-4: vector.store %{{.*}} {alignment = 16 : i64, nontemporal = true} : memref<?xf32>, vector<4xf32>
// MANY: scf.if
// MANY: llvm.fence seq_cst
// Else the result into the first output, streamed copies into the others.
// MANY: } else {
// MANY: vector.store %{{.*}} : memref<?xf32>, vector<16xf32>
// MANY: call @coll_copy_streaming(
// LLVM: llvm.store %{{.*}} {alignment = 16 : i64, nontemporal} : vector<4xf32>, !llvm.ptr

module attributes {coll.peer_access} {
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
