// What coll-cpu-to-llvm's local work becomes under LLVM -O3 (what the JIT
// runs at, lowering/cpu/runtime.py OPT_LEVEL) for an AVX2 x86-64: a row
// sum and a tanh are loops over <8 x float> (lowering/cpu/local_math.py);
// the row sum in the function that adds one row (row_reductions.py).
// RUN: coll-opt %s --pass-pipeline='builtin.module(coll-cpu-to-llvm)' | mlir-translate --mlir-to-llvmir | opt -O3 -mtriple=x86_64-unknown-linux-gnu -mcpu=x86-64-v3 -S | FileCheck %s

#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>

// CHECK-LABEL: define void @rows(
// CHECK: call void @coll_row_reduction_0(
func.func @rows(%a: memref<64x256xf32>, %s: memref<64xf32>) {
  linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%a : memref<64x256xf32>) outs(%s : memref<64xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %r = arith.addf %x, %acc : f32
    linalg.yield %r : f32
  }
  return
}

// CHECK-LABEL: define void @tanh(
// CHECK-NOT: call {{.*}}tanh
// CHECK: fdiv <8 x float>
func.func @tanh(%a: memref<64x256xf32>, %b: memref<64x256xf32>) {
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a : memref<64x256xf32>) outs(%b : memref<64x256xf32>) {
  ^bb0(%x: f32, %o: f32):
    %t = math.tanh %x : f32
    linalg.yield %t : f32
  }
  return
}

// CHECK-LABEL: define void @coll_row_reduction_0(
// CHECK: fadd reassoc <8 x float>
