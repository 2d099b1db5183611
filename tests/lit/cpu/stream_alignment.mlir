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
// The rest: every input as far from a line (mask 63), the output a
// multiple of 16 bytes from them (mask 15): the loop on the inputs' lines,
// one loop per distance d. At d = 16 bytes the output's lines hold the
// last 4 elements of the previous step's sum and the first 12 of this one:
// a masked store of the first vector up to its first line, one shuffle and
// one line per step, a masked store of the last vector's last 4.
// ONE-LABEL: func.func private @coll_combine_sum_f32_x4_to_s_skewed(
// ONE: arith.constant 15 : index
// ONE: arith.constant 63 : index
// ONE: scf.if
// ONE: scf.for
// ONE: vector.store %{{.*}} {alignment = 64 : i64, nontemporal = true} : memref<?xf32>, vector<16xf32>
// ONE: } else {
// ONE: %[[FIRST:.*]] = arith.constant dense<[true, true, true, true, true, true, true, true, true, true, true, true, false, false, false, false]> : vector<16xi1>
// ONE-NEXT: vector.maskedstore %[[OUT:.*]][%{{.*}}], %[[FIRST]], %{{.*}} : memref<?xf32>, vector<16xi1>, vector<16xf32>
// ONE: scf.for %[[I:.*]] = %{{.*}} iter_args(%[[PREV:.*]] = %{{.*}}) -> (vector<16xf32>)
// ONE-COUNT-4: vector.load
// ONE: %[[SUM:.*]] = arith.addf %{{.*}} : vector<16xf32>
// ONE-NEXT: %[[LINE:.*]] = vector.shuffle %[[PREV]], %[[SUM]] [12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27]
// ONE-NEXT: %[[C4:.*]] = arith.constant 4 : index
// ONE-NEXT: %[[AT:.*]] = arith.subi %[[I]], %[[C4]]
// ONE-NEXT: vector.store %[[LINE]], %[[OUT]][%[[AT]]] {alignment = 64 : i64, nontemporal = true}
// ONE-NEXT: scf.yield %[[SUM]]
// ONE: %[[LAST:.*]] = arith.constant dense<[false, false, false, false, false, false, false, false, false, false, false, false, true, true, true, true]> : vector<16xi1>
// ONE-NEXT: vector.maskedstore %[[OUT]][%{{.*}}], %[[LAST]], %{{.*}}
// ONE: vector.shuffle %{{.*}} [8, 9, 10, 11, 12
// ONE: vector.shuffle %{{.*}} [4, 5, 6, 7, 8
// ONE: llvm.fence seq_cst
// Else the output's own line (the loads across lines).
// ONE: } else {
// ONE: scf.if
// ONE: scf.for
// ONE: vector.store %{{.*}} {alignment = 64 : i64, nontemporal = true} : memref<?xf32>, vector<16xf32>
// ONE: llvm.fence seq_cst
// Else (not even whole elements from a line) through a buffer of 8 KiB on
// the stack, plain stores there, then from it into the output (plain
// stores here: off whole elements).
// ONE: } else {
// ONE: %[[STAGE:.*]] = memref.alloca() {alignment = 64 : i64} : memref<2048xf32>
// ONE: scf.for %[[C:.*]] = %{{.*}} step %c2048
// ONE: vector.store %{{.*}}, %[[STAGE]][%{{.*}}] : memref<2048xf32>, vector<16xf32>
// ONE: vector.load %[[STAGE]]
// ONE: llvm.fence seq_cst

// Several outputs: all as far from a line: one-line stores into each.
// MANY-LABEL: func.func private @coll_combine_sum_f32_x2_to_ss(
// MANY: scf.if
// MANY: scf.for
// MANY-COUNT-2: vector.store %{{.*}} {alignment = 64 : i64, nontemporal = true} : memref<?xf32>, vector<16xf32>
// MANY: llvm.fence seq_cst
// MANY: } else {
// MANY-NEXT: func.call @coll_combine_sum_f32_x2_to_ss_skewed(
// Else, with the inputs as far from a line and the outputs a multiple of
// 16 bytes from them: the loop on the inputs' lines, a branch per step on
// each output's distance (the same way every step; one loop per distance
// only where a single output's is unknown, as in ONE).
// MANY-LABEL: func.func private @coll_combine_sum_f32_x2_to_ss_skewed(
// MANY: scf.if
// MANY: scf.for %{{.*}} iter_args(%[[PREV:.*]] = %{{.*}}) -> (vector<16xf32>)
// MANY: %[[SUM:.*]] = arith.addf %{{.*}} : vector<16xf32>
// MANY-NEXT: %[[C0:.*]] = arith.constant 0 : index
// MANY-NEXT: %[[D0:.*]] = arith.cmpi eq, %[[D:.*]], %[[C0]] : index
// MANY-NEXT: scf.if %[[D0]] {
// MANY-NEXT: vector.store %[[SUM]], %[[Y:.*]][%{{.*}}] {alignment = 64 : i64, nontemporal = true}
// MANY-NEXT: } else {
// MANY: vector.shuffle %[[PREV]], %[[SUM]] [12, 13
// MANY: vector.shuffle %[[PREV]], %[[SUM]] [8, 9
// MANY: vector.shuffle %[[PREV]], %[[SUM]] [4, 5
// The second output's distance: another branch.
// MANY: arith.cmpi eq, %[[D2:.*]], %{{.*}} : index
// MANY: vector.shuffle %[[PREV]], %[[SUM]] [12, 13
// MANY: scf.yield %[[SUM]]
// MANY: llvm.fence seq_cst
// Else on the first output's line, the second output's lines by shuffles.
// MANY: } else {
// MANY: scf.for %{{.*}} iter_args(%{{.*}}) -> (vector<16xf32>)
// MANY: vector.store %{{.*}} {alignment = 64 : i64, nontemporal = true}
// MANY: vector.shuffle %{{.*}} [12, 13
// Else (outputs not 16 bytes apart) through the buffer on the stack, then
// each output on its own lines.
// MANY: } else {
// MANY: memref.alloca() {alignment = 64 : i64} : memref<2048xf32>
// MANY: vector.store %{{.*}} {alignment = 64 : i64, nontemporal = true} : memref<?xf32>, vector<16xf32>
// MANY: vector.store %{{.*}} {alignment = 64 : i64, nontemporal = true} : memref<?xf32>, vector<16xf32>
// MANY: llvm.fence seq_cst
// LLVM: llvm.shufflevector
// LLVM: llvm.store %{{.*}} {alignment = 64 : i64, nontemporal} : vector<16xf32>, !llvm.ptr
// LLVM: llvm.intr.masked.store

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
