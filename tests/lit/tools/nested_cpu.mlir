// coll-to-cpu with shared kernels adds functions to the module: inside
// func.func(...) or any(...) it says where it must run, like the other
// module-level passes; with kernels=inline, split=0 and scratch=heap it
// nests (static scratch is a memref.global: the module's; an outside
// attack found it put inside the function, which the verifier refused).
// RUN: not coll-opt %s --pass-pipeline='builtin.module(func.func(coll-to-cpu))' 2>&1 | FileCheck %s
// RUN: not coll-opt %s --pass-pipeline='builtin.module(any(coll-to-cpu))' 2>&1 | FileCheck %s --check-prefix=ANY
// RUN: not coll-opt %s --pass-pipeline='builtin.module(func.func(coll-to-cpu{kernels=inline}))' 2>&1 | FileCheck %s
// RUN: not coll-opt %s --pass-pipeline='builtin.module(func.func(coll-to-cpu{kernels=inline split=0}))' 2>&1 | FileCheck %s
// RUN: coll-opt %s --pass-pipeline='builtin.module(func.func(coll-to-cpu{kernels=inline split=0 scratch=heap}))' | FileCheck %s --check-prefix=INLINE

// CHECK: error: invalid pass pipeline: 'coll-to-cpu' runs on the whole module: put it at the top level, 'builtin.module(coll-to-cpu)', not inside 'func.func(...)'
// CHECK-NOT: SymbolTable
// ANY: error: invalid pass pipeline: 'coll-to-cpu' runs on the whole module: put it at the top level, 'builtin.module(coll-to-cpu)', not inside 'any(...)'
// INLINE-NOT: coll.combine
// INLINE: arith.addf

func.func @f(%a: memref<8xf32>, %b: memref<8xf32>) {
  %x = memref.memory_space_cast %a : memref<8xf32> to memref<8xf32, #coll.device<0 : i64>>
  %y = memref.memory_space_cast %b : memref<8xf32> to memref<8xf32, #coll.device<0 : i64>>
  %t = "coll.combine"(%x, %y, %x) {kind = "sum", operandSegmentSizes = array<i32: 1, 1, 1, 0>} : (memref<8xf32, #coll.device<0 : i64>>, memref<8xf32, #coll.device<0 : i64>>, memref<8xf32, #coll.device<0 : i64>>) -> !coll.token
  "coll.wait"(%t) : (!coll.token) -> ()
  return
}
