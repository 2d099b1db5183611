// Bool (i1) buffers are stored as i8 (lowering/stored_types.py); the local
// work on them keeps computing on i1: in every structured op an i8 buffer's
// block argument is truncated to i1 for the body and an i1 yielded into an
// i8 init is widened (extui: 0 or 1, as numpy's bools), a fill of an i1
// value fills it widened, loads and stores convert likewise, and a bool
// constant (memref.global) holds one byte per element.
// RUN: coll-opt %s --split-input-file --coll-to-cpu=kernels=inline | FileCheck %s

// CHECK-LABEL: func.func @compare_and_reduce(%arg0: memref<8xf32>, %arg1: memref<8xi8>, %arg2: memref<i8>)
// CHECK: linalg.generic {{.*}} ins(%arg0 : memref<8xf32>) outs(%arg1 : memref<8xi8>)
// CHECK-NEXT: ^bb0(%{{.*}}: f32, %{{.*}}: i8):
// CHECK: %[[GT:.*]] = arith.cmpf ogt
// CHECK: %[[W:.*]] = arith.extui %[[GT]] : i1 to i8
// CHECK-NEXT: linalg.yield %[[W]] : i8
// CHECK: %[[T:.*]] = arith.extui %true : i1 to i8
// CHECK: linalg.fill ins(%[[T]] : i8) outs(%arg2 : memref<i8>)
// CHECK: linalg.reduce ins(%arg1 : memref<8xi8>) outs(%arg2 : memref<i8>)
// CHECK-NEXT: (%[[IN:.*]]: i8, %[[ACC:.*]]: i8) {
// CHECK-NEXT: %[[A:.*]] = arith.trunci %[[IN]] : i8 to i1
// CHECK-NEXT: %[[B:.*]] = arith.trunci %[[ACC]] : i8 to i1
// CHECK-NEXT: %[[AND:.*]] = arith.andi %[[B]], %[[A]] : i1
// CHECK-NEXT: %[[R:.*]] = arith.extui %[[AND]] : i1 to i8
// CHECK-NEXT: linalg.yield %[[R]] : i8
// CHECK: %[[L:.*]] = memref.load %arg2[] : memref<i8>
// CHECK-NEXT: %[[LB:.*]] = arith.trunci %[[L]] : i8 to i1
// CHECK-NEXT: %[[N:.*]] = arith.xori %[[LB]], %true : i1
// CHECK-NEXT: %[[NW:.*]] = arith.extui %[[N]] : i1 to i8
// CHECK-NEXT: memref.store %[[NW]], %arg2[] : memref<i8>
!f = memref<8xf32, #coll.device<0>>
!b = memref<8xi1, #coll.device<0>>
!s = memref<i1, #coll.device<0>>
#id = affine_map<(d0) -> (d0)>
func.func @compare_and_reduce(%x: memref<8xf32>, %m: memref<8xi1>, %all: memref<i1>) attributes {llvm.emit_c_interface} {
  %xd = memref.memory_space_cast %x : memref<8xf32> to !f
  %md = memref.memory_space_cast %m : memref<8xi1> to !b
  %ad = memref.memory_space_cast %all : memref<i1> to !s
  %zero = arith.constant 0.0 : f32
  %true = arith.constant true
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%xd : !f) outs(%md : !b) {
  ^bb0(%in: f32, %out: i1):
    %gt = arith.cmpf ogt, %in, %zero : f32
    linalg.yield %gt : i1
  }
  linalg.fill ins(%true : i1) outs(%ad : !s)
  linalg.reduce { arith.andi } ins(%md : !b) outs(%ad : !s) dimensions = [0]
  %v = memref.load %ad[] : !s
  %n = arith.xori %v, %true : i1
  memref.store %n, %ad[] : !s
  return
}

// -----
// A bool constant (bufferized to a memref.global) is stored as bytes too.
// CHECK: memref.global "private" constant @mask : memref<4xi8> = dense<[1, 0, 0, 1]>
// CHECK-LABEL: func.func @constant_mask(%arg0: memref<4xi8>)
// CHECK: %[[G:.*]] = memref.get_global @mask : memref<4xi8>
// CHECK: linalg.copy ins(%[[G]] : memref<4xi8>) outs(%arg0 : memref<4xi8>)
memref.global "private" constant @mask : memref<4xi1> = dense<[true, false, false, true]>
func.func @constant_mask(%out: memref<4xi1>) attributes {llvm.emit_c_interface} {
  %g = memref.get_global @mask : memref<4xi1>
  %o = memref.memory_space_cast %out : memref<4xi1> to memref<4xi1, #coll.device<0>>
  linalg.copy ins(%g : memref<4xi1>) outs(%o : memref<4xi1, #coll.device<0>>)
  return
}
