// coll.combine on the CPU: one vector loop (64-byte vectors) plus a scalar
// tail. Float max/min are arith.maximumf/minimumf (NaN-propagating, like
// numpy), integer max/min are signed, f16/bf16 are combined in f32 and
// rounded once, i1 buffers are stored as i8 (one byte per element).
// kernels=inline: the loops in place (the default puts the same loops in one
// shared function per signature, tests/lit/cpu/shared.mlir).
// RUN: coll-opt %s --split-input-file --coll-to-cpu=kernels=inline | FileCheck %s

// 20 f32 = one vector<16xf32> step + 4 scalar steps; the output aliases lhs.
// CHECK-LABEL: func.func @max_f32(%arg0: memref<20xf32>, %arg1: memref<20xf32>)
// CHECK: scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NEXT: %[[A:.*]] = vector.load %arg0[%[[I]]] : memref<20xf32>, vector<16xf32>
// CHECK-NEXT: %[[B:.*]] = vector.load %arg1[%[[I]]] : memref<20xf32>, vector<16xf32>
// CHECK-NEXT: %[[M:.*]] = arith.maximumf %[[A]], %[[B]] : vector<16xf32>
// CHECK-NEXT: vector.store %[[M]], %arg0[%[[I]]] : memref<20xf32>, vector<16xf32>
// CHECK: scf.for
// CHECK: memref.load %arg0
// CHECK: arith.maximumf %{{.*}}, %{{.*}} : f32
// CHECK: return
func.func @max_f32(%a: memref<20xf32>, %b: memref<20xf32>) attributes {llvm.emit_c_interface} {
  %x = memref.memory_space_cast %a : memref<20xf32> to memref<20xf32, #coll.device<0>>
  %y = memref.memory_space_cast %b : memref<20xf32> to memref<20xf32, #coll.device<0>>
  %t = "coll.combine"(%x, %y, %x) {kind = "max", operandSegmentSizes = array<i32: 1, 1, 1, 0>}
      : (memref<20xf32, #coll.device<0>>, memref<20xf32, #coll.device<0>>, memref<20xf32, #coll.device<0>>) -> !coll.token
  "coll.wait"(%t) : (!coll.token) -> ()
  return
}

// -----

// Three inputs, signed min, one scalar loop (4 i32 < one vector).
// CHECK-LABEL: func.func @min_i32(
// CHECK: scf.for
// CHECK: %[[A:.*]] = memref.load %arg0
// CHECK: %[[B:.*]] = memref.load %arg1
// CHECK: %[[M:.*]] = arith.minsi %[[A]], %[[B]] : i32
// CHECK: %[[C:.*]] = memref.load %arg2
// CHECK: %[[N:.*]] = arith.minsi %[[M]], %[[C]] : i32
// CHECK: memref.store %[[N]], %arg3
func.func @min_i32(%a: memref<4xi32>, %b: memref<4xi32>, %c: memref<4xi32>, %d: memref<4xi32>) attributes {llvm.emit_c_interface} {
  %x = memref.memory_space_cast %a : memref<4xi32> to memref<4xi32, #coll.device<1>>
  %y = memref.memory_space_cast %b : memref<4xi32> to memref<4xi32, #coll.device<1>>
  %z = memref.memory_space_cast %c : memref<4xi32> to memref<4xi32, #coll.device<1>>
  %o = memref.memory_space_cast %d : memref<4xi32> to memref<4xi32, #coll.device<1>>
  %t = "coll.combine"(%x, %y, %z, %o) {kind = "min", operandSegmentSizes = array<i32: 1, 2, 1, 0>}
      : (memref<4xi32, #coll.device<1>>, memref<4xi32, #coll.device<1>>, memref<4xi32, #coll.device<1>>, memref<4xi32, #coll.device<1>>) -> !coll.token
  "coll.wait"(%t) : (!coll.token) -> ()
  return
}

// -----

// bf16 sum: 32 lanes of bf16, extended to f32, added, rounded back.
// CHECK-LABEL: func.func @sum_bf16(
// CHECK: %[[A:.*]] = vector.load %arg0[%{{.*}}] : memref<64xbf16>, vector<32xbf16>
// CHECK-NEXT: %[[AF:.*]] = arith.extf %[[A]] : vector<32xbf16> to vector<32xf32>
// CHECK: %[[S:.*]] = arith.addf %{{.*}}, %{{.*}} : vector<32xf32>
// CHECK-NEXT: %[[R:.*]] = arith.truncf %[[S]] : vector<32xf32> to vector<32xbf16>
// CHECK-NEXT: vector.store %[[R]], %arg2
func.func @sum_bf16(%a: memref<64xbf16>, %b: memref<64xbf16>, %c: memref<64xbf16>) attributes {llvm.emit_c_interface} {
  %x = memref.memory_space_cast %a : memref<64xbf16> to memref<64xbf16, #coll.device<2>>
  %y = memref.memory_space_cast %b : memref<64xbf16> to memref<64xbf16, #coll.device<2>>
  %o = memref.memory_space_cast %c : memref<64xbf16> to memref<64xbf16, #coll.device<2>>
  %t = "coll.combine"(%x, %y, %o) {kind = "sum", operandSegmentSizes = array<i32: 1, 1, 1, 0>}
      : (memref<64xbf16, #coll.device<2>>, memref<64xbf16, #coll.device<2>>, memref<64xbf16, #coll.device<2>>) -> !coll.token
  "coll.wait"(%t) : (!coll.token) -> ()
  return
}

// -----

// i1 xor: the buffers are retyped to i8 (same bytes, same descriptor).
// CHECK-LABEL: func.func @xor_i1(%arg0: memref<70xi8>, %arg1: memref<70xi8>)
// CHECK: vector.load %arg0[%{{.*}}] : memref<70xi8>, vector<64xi8>
// CHECK: arith.xori %{{.*}}, %{{.*}} : vector<64xi8>
// CHECK: arith.xori %{{.*}}, %{{.*}} : i8
func.func @xor_i1(%a: memref<70xi1>, %b: memref<70xi1>) attributes {llvm.emit_c_interface} {
  %x = memref.memory_space_cast %a : memref<70xi1> to memref<70xi1, #coll.device<0>>
  %y = memref.memory_space_cast %b : memref<70xi1> to memref<70xi1, #coll.device<0>>
  %t = "coll.combine"(%x, %y, %y) {kind = "xor", operandSegmentSizes = array<i32: 1, 1, 1, 0>}
      : (memref<70xi1, #coll.device<0>>, memref<70xi1, #coll.device<0>>, memref<70xi1, #coll.device<0>>) -> !coll.token
  "coll.wait"(%t) : (!coll.token) -> ()
  return
}
