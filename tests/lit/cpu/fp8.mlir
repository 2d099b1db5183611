// coll.combine of fp8 on the CPU: every operand extended to f32, added in
// f32 in order, rounded once to fp8 at the store; an f32 lhs (a ring's
// partial result) is read as it is. coll-fp8-conversions then turns the
// conversions into integer arithmetic (LLVM 22 has no fp8 type and no
// upstream lowering for them): no fp8 extf/truncf is left.
// RUN: coll-opt %s --split-input-file --coll-to-cpu=kernels=inline | FileCheck %s
// RUN: coll-opt %s --split-input-file --pass-pipeline='builtin.module(coll-to-cpu{kernels=inline},coll-fp8-conversions)' | FileCheck %s --check-prefix=EXPAND

// Three f8E4M3FN inputs: 64 lanes, three extf, two addf in f32, one truncf.
// CHECK-LABEL: func.func @sum_e4m3(
// CHECK: %[[A:.*]] = vector.load %arg0[%{{.*}}] : memref<128xf8E4M3FN>, vector<64xf8E4M3FN>
// CHECK-NEXT: %[[AF:.*]] = arith.extf %[[A]] : vector<64xf8E4M3FN> to vector<64xf32>
// CHECK-NEXT: %[[B:.*]] = vector.load %arg1
// CHECK-NEXT: %[[BF:.*]] = arith.extf %[[B]] : vector<64xf8E4M3FN> to vector<64xf32>
// CHECK-NEXT: %[[S:.*]] = arith.addf %[[AF]], %[[BF]] : vector<64xf32>
// CHECK-NOT: arith.truncf
// CHECK: %[[CF:.*]] = arith.extf %{{.*}} : vector<64xf8E4M3FN> to vector<64xf32>
// CHECK-NEXT: %[[T:.*]] = arith.addf %[[S]], %[[CF]] : vector<64xf32>
// CHECK-NEXT: %[[R:.*]] = arith.truncf %[[T]] : vector<64xf32> to vector<64xf8E4M3FN>
// CHECK-NEXT: vector.store %[[R]], %arg3
// EXPAND-LABEL: func.func @sum_e4m3(
// EXPAND-NOT: arith.extf
// EXPAND-NOT: arith.truncf
// EXPAND: arith.bitcast %{{.*}} : vector<64xf8E4M3FN> to vector<64xi8>
// EXPAND: arith.addf %{{.*}}, %{{.*}} : vector<64xf32>
// EXPAND: arith.bitcast %{{.*}} : vector<64xi8> to vector<64xf8E4M3FN>
// EXPAND: return
func.func @sum_e4m3(%a: memref<128xf8E4M3FN>, %b: memref<128xf8E4M3FN>, %c: memref<128xf8E4M3FN>, %d: memref<128xf8E4M3FN>) attributes {llvm.emit_c_interface} {
  %x = memref.memory_space_cast %a : memref<128xf8E4M3FN> to memref<128xf8E4M3FN, #coll.device<0>>
  %y = memref.memory_space_cast %b : memref<128xf8E4M3FN> to memref<128xf8E4M3FN, #coll.device<0>>
  %z = memref.memory_space_cast %c : memref<128xf8E4M3FN> to memref<128xf8E4M3FN, #coll.device<0>>
  %o = memref.memory_space_cast %d : memref<128xf8E4M3FN> to memref<128xf8E4M3FN, #coll.device<0>>
  %t = "coll.combine"(%x, %y, %z, %o) {kind = "sum", operandSegmentSizes = array<i32: 1, 2, 1, 0>}
      : (memref<128xf8E4M3FN, #coll.device<0>>, memref<128xf8E4M3FN, #coll.device<0>>, memref<128xf8E4M3FN, #coll.device<0>>, memref<128xf8E4M3FN, #coll.device<0>>) -> !coll.token
  "coll.wait"(%t) : (!coll.token) -> ()
  return
}

// -----

// A ring's last step on f8E5M2: the f32 partial (lhs) read as it is, the
// device's own contribution extended, one rounding at the store.
// CHECK-LABEL: func.func @last_hop_e5m2(
// CHECK: %[[P:.*]] = vector.load %arg0[%{{.*}}] : memref<64xf32>, vector<64xf32>
// CHECK-NEXT: %[[X:.*]] = vector.load %arg1[%{{.*}}] : memref<64xf8E5M2>, vector<64xf8E5M2>
// CHECK-NEXT: %[[XF:.*]] = arith.extf %[[X]] : vector<64xf8E5M2> to vector<64xf32>
// CHECK-NEXT: %[[S:.*]] = arith.addf %[[P]], %[[XF]] : vector<64xf32>
// CHECK-NEXT: %[[R:.*]] = arith.truncf %[[S]] : vector<64xf32> to vector<64xf8E5M2>
// CHECK-NEXT: vector.store %[[R]], %arg2
// EXPAND-LABEL: func.func @last_hop_e5m2(
// EXPAND-NOT: arith.truncf
// EXPAND: arith.bitcast %{{.*}} : vector<64xi8> to vector<64xf8E5M2>
func.func @last_hop_e5m2(%a: memref<64xf32>, %b: memref<64xf8E5M2>, %c: memref<64xf8E5M2>) attributes {llvm.emit_c_interface} {
  %x = memref.memory_space_cast %a : memref<64xf32> to memref<64xf32, #coll.device<1>>
  %y = memref.memory_space_cast %b : memref<64xf8E5M2> to memref<64xf8E5M2, #coll.device<1>>
  %o = memref.memory_space_cast %c : memref<64xf8E5M2> to memref<64xf8E5M2, #coll.device<1>>
  %t = "coll.combine"(%x, %y, %o) {kind = "sum", operandSegmentSizes = array<i32: 1, 1, 1, 0>}
      : (memref<64xf32, #coll.device<1>>, memref<64xf8E5M2, #coll.device<1>>, memref<64xf8E5M2, #coll.device<1>>) -> !coll.token
  "coll.wait"(%t) : (!coll.token) -> ()
  return
}
