// coll-blas-contractions: f32/f64 contractions on memrefs become calls to
// OpenBLAS's cblas_sgemm/cblas_dgemm (scipy-openblas32: symbols prefixed
// scipy_), row-major (101), NoTrans 111 / Trans 112, alpha = beta = 1
// (linalg accumulates: C += A * B), the leading dimensions from the strides;
// the dimensions one call does not cover are loops around it. A layout BLAS
// cannot read stays a linalg op (then convert-linalg-to-loops).
// RUN: coll-opt %s --split-input-file --pass-pipeline='builtin.module(coll-blas-contractions,canonicalize)' | FileCheck %s

// Order, TransA, TransB, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc.
// CHECK-LABEL: func.func @matmul
// CHECK: call @scipy_cblas_sgemm(%c101_i32, %c111_i32, %c111_i32, %c16_i32, %c12_i32, %c8_i32, %cst, %{{.*}}, %c8_i32, %{{.*}}, %c12_i32, %cst, %{{.*}}, %c12_i32)
// CHECK-NOT: linalg.matmul
func.func @matmul(%a: memref<16x8xf32>, %b: memref<8x12xf32>, %c: memref<16x12xf32>) {
  linalg.matmul ins(%a, %b : memref<16x8xf32>, memref<8x12xf32>) outs(%c : memref<16x12xf32>)
  return
}

// -----

// A sub-view: lda is the parent's row (32); its dynamic offset is added to
// the aligned pointer (4 bytes an element).
// CHECK-LABEL: func.func @subview
// CHECK: %[[BASE:.*]], %[[OFF:.*]], %{{.*}}:2, %{{.*}}:2 = memref.extract_strided_metadata %[[A:.*]] :
// CHECK: %[[PTR:.*]] = memref.extract_aligned_pointer_as_index %[[A]]
// CHECK: %[[BYTES:.*]] = arith.muli %[[OFF]], %c4
// CHECK: arith.addi %[[PTR]], %[[BYTES]]
// CHECK: call @scipy_cblas_sgemm(%c101_i32, %c111_i32, %c111_i32, %c16_i32, %c12_i32, %c8_i32, %cst, %{{.*}}, %c32_i32, %{{.*}}, %c12_i32, %cst, %{{.*}}, %c12_i32)
func.func @subview(%p: memref<64x32xf32>, %i: index, %b: memref<8x12xf32>, %c: memref<16x12xf32>) {
  %a = memref.subview %p[%i, 4] [16, 8] [1, 1] : memref<64x32xf32> to memref<16x8xf32, strided<[32, 1], offset: ?>>
  linalg.matmul ins(%a, %b : memref<16x8xf32, strided<[32, 1], offset: ?>>, memref<8x12xf32>) outs(%c : memref<16x12xf32>)
  return
}

// -----

// dot_general's generic with both operands transposed (A is k x m, B is
// n x k): CblasTrans for both, lda = 16 (m), ldb = 8 (k).
// CHECK-LABEL: func.func @transposed
// CHECK: call @scipy_cblas_sgemm(%c101_i32, %c112_i32, %c112_i32, %c16_i32, %c12_i32, %c8_i32, %cst, %{{.*}}, %c16_i32, %{{.*}}, %c8_i32, %cst, %{{.*}}, %c12_i32)
// CHECK-NOT: linalg.generic
func.func @transposed(%a: memref<8x16xf32>, %b: memref<12x8xf32>, %c: memref<16x12xf32>) {
  linalg.generic {indexing_maps = [affine_map<(m, n, k) -> (k, m)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<8x16xf32>, memref<12x8xf32>) outs(%c : memref<16x12xf32>) {
  ^bb0(%x: f32, %y: f32, %z: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %z, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// A column-major output (unit stride along m) is computed as its transpose,
// C^T += B^T A^T: M and N swap, B is the first matrix.
// CHECK-LABEL: func.func @column_major_out
// CHECK: call @scipy_cblas_sgemm(%c101_i32, %c112_i32, %c112_i32, %c12_i32, %c16_i32, %c8_i32, %cst, %{{.*}}, %c12_i32, %{{.*}}, %c8_i32, %cst, %{{.*}}, %c16_i32)
func.func @column_major_out(%a: memref<16x8xf32>, %b: memref<8x12xf32>, %c: memref<16x12xf32, strided<[1, 16]>>) {
  linalg.matmul ins(%a, %b : memref<16x8xf32>, memref<8x12xf32>) outs(%c : memref<16x12xf32, strided<[1, 16]>>)
  return
}

// -----

// batch_matmul in f64: a loop over the batch around dgemm, each operand's
// pointer advanced by its batch stride (in bytes: 128 * 8, 96 * 8, 192 * 8).
// CHECK: func.func private @scipy_cblas_dgemm(i32, i32, i32, i32, i32, i32, f64, !llvm.ptr, i32, !llvm.ptr, i32, f64, !llvm.ptr, i32)
// CHECK-LABEL: func.func @batch
// CHECK: scf.for %[[B:.*]] = %c0 to %c3 step %c1 {
// CHECK: arith.muli %[[B]], %c1024 : index
// CHECK: arith.muli %[[B]], %c768 : index
// CHECK: arith.muli %[[B]], %c1536 : index
// CHECK: func.call @scipy_cblas_dgemm(%c101_i32, %c111_i32, %c111_i32, %c16_i32, %c12_i32, %c8_i32, %cst, %{{.*}}, %c8_i32, %{{.*}}, %c12_i32, %cst, %{{.*}}, %c12_i32)
func.func @batch(%a: memref<3x16x8xf64>, %b: memref<3x8x12xf64>, %c: memref<3x16x12xf64>) {
  linalg.batch_matmul ins(%a, %b : memref<3x16x8xf64>, memref<3x8x12xf64>) outs(%c : memref<3x16x12xf64>)
  return
}

// -----

// matvec: gemv (OpenBLAS's gemm with N = 1 is 2.7x slower than its gemv,
// 4096^2 f32), order, trans, M, N, alpha, A, lda, x, incx, beta, y, incy.
// CHECK-LABEL: func.func @matvec
// CHECK: call @scipy_cblas_sgemv(%c101_i32, %c111_i32, %c16_i32, %c8_i32, %cst, %{{.*}}, %c8_i32, %{{.*}}, %c1_i32, %cst, %{{.*}}, %c1_i32)
func.func @matvec(%a: memref<16x8xf32>, %x: memref<8xf32>, %y: memref<16xf32>) {
  linalg.matvec ins(%a, %x : memref<16x8xf32>, memref<8xf32>) outs(%y : memref<16xf32>)
  return
}

// vecmat on a strided vector (a column of a 8x16 matrix): y += B^T x, B as
// stored (8 x 12) transposed, incx = 16.
// CHECK-LABEL: func.func @vecmat_strided
// CHECK: call @scipy_cblas_sgemv(%c101_i32, %c112_i32, %c8_i32, %c12_i32, %cst, %{{.*}}, %c12_i32, %{{.*}}, %c16_i32, %cst, %{{.*}}, %c1_i32)
func.func @vecmat_strided(%p: memref<8x16xf32>, %b: memref<8x12xf32>, %y: memref<12xf32>) {
  %x = memref.subview %p[0, 3] [8, 1] [1, 1] : memref<8x16xf32> to memref<8xf32, strided<[16], offset: 3>>
  linalg.vecmat ins(%x, %b : memref<8xf32, strided<[16], offset: 3>>, memref<8x12xf32>) outs(%y : memref<12xf32>)
  return
}

// -----

// No unit stride along m or k in A (every other column): no call can read
// it, the op stays for convert-linalg-to-loops.
// CHECK-LABEL: func.func @non_unit_inner_stride
// CHECK-NOT: call
// CHECK: linalg.matmul
func.func @non_unit_inner_stride(%a: memref<16x8xf32, strided<[16, 2]>>, %b: memref<8x12xf32>, %c: memref<16x12xf32>) {
  linalg.matmul ins(%a, %b : memref<16x8xf32, strided<[16, 2]>>, memref<8x12xf32>) outs(%c : memref<16x12xf32>)
  return
}

// -----

// bf16 inputs accumulating in f32 (coll-widen-contractions' form): f32
// copies of the inputs, sgemm on them, the copies freed.
// CHECK-LABEL: func.func @bf16_inputs
// CHECK: %[[A32:.*]] = memref.alloc() {alignment = 64 : i64} : memref<16x8xf32>
// CHECK: arith.extf %{{.*}} : bf16 to f32
// CHECK: %[[B32:.*]] = memref.alloc() {alignment = 64 : i64} : memref<8x12xf32>
// CHECK: call @scipy_cblas_sgemm
// CHECK: memref.dealloc %[[A32]]
// CHECK: memref.dealloc %[[B32]]
func.func @bf16_inputs(%a: memref<16x8xbf16>, %b: memref<8x12xbf16>, %c: memref<16x12xf32>) {
  linalg.matmul ins(%a, %b : memref<16x8xbf16>, memref<8x12xbf16>) outs(%c : memref<16x12xf32>)
  return
}

// -----

// Integers and a bf16 output (rounded at every partial sum) stay on loops.
// CHECK-LABEL: func.func @stay
// CHECK-NOT: call
// CHECK: linalg.matmul
// CHECK: linalg.matmul
func.func @stay(%a: memref<16x8xi32>, %b: memref<8x12xi32>, %c: memref<16x12xi32>,
                %d: memref<16x8xbf16>, %e: memref<8x12xbf16>, %f: memref<16x12xbf16>) {
  linalg.matmul ins(%a, %b : memref<16x8xi32>, memref<8x12xi32>) outs(%c : memref<16x12xi32>)
  linalg.matmul ins(%d, %e : memref<16x8xbf16>, memref<8x12xbf16>) outs(%f : memref<16x12xbf16>)
  return
}

// -----

// An operand indexed by a constant, not a dimension: stays.
// CHECK-LABEL: func.func @constant_index
// CHECK-NOT: call
// CHECK: linalg.generic
func.func @constant_index(%a: memref<16x8x2xf32>, %b: memref<8x12xf32>, %c: memref<16x12xf32>) {
  linalg.generic {indexing_maps = [affine_map<(m, n, k) -> (m, k, 0)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<16x8x2xf32>, memref<8x12xf32>) outs(%c : memref<16x12xf32>) {
  ^bb0(%x: f32, %y: f32, %z: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %z, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// An elementwise producer fused into the contraction (dp_mlp_step's weight
// gradient after linalg-fuse-elementwise-ops: relu's backward mask on one
// factor): the factor is computed into a copy first (the cmpf and select
// of the body, over the factor's own dimensions k x m), then one call.
// CHECK-LABEL: func.func @fused_factor
// CHECK: %[[F:.*]] = memref.alloc() {alignment = 64 : i64} : memref<64x32xf32>
// CHECK: linalg.generic {{.*}} ins(%arg0, %arg1, %arg2 : memref<64x32xf32>, memref<64x32xf32>, memref<64x32xf32>) outs(%[[F]] : memref<64x32xf32>)
// CHECK: arith.cmpf ogt
// CHECK-NEXT: arith.select
// CHECK-NEXT: linalg.yield
// CHECK: call @scipy_cblas_sgemm(%c101_i32, %c112_i32, %c111_i32, %c32_i32, %c16_i32, %c64_i32, %cst, %{{.*}}, %c32_i32, %{{.*}}, %c16_i32, %cst, %{{.*}}, %c16_i32)
// CHECK: memref.dealloc %[[F]]
func.func @fused_factor(%x: memref<64x32xf32>, %z: memref<64x32xf32>, %g: memref<64x32xf32>, %d: memref<64x16xf32>,
                        %w: memref<32x16xf32>) {
  linalg.generic {indexing_maps = [affine_map<(m, n, k) -> (k, m)>, affine_map<(m, n, k) -> (k, m)>, affine_map<(m, n, k) -> (k, m)>,
                                   affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %z, %g, %d : memref<64x32xf32>, memref<64x32xf32>, memref<64x32xf32>, memref<64x16xf32>) outs(%w : memref<32x16xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32, %e: f32, %o: f32):
    %gt = arith.cmpf ogt, %a, %b : f32
    %s = arith.select %gt, %c, %b : f32
    %p = arith.mulf %s, %e : f32
    %r = arith.addf %o, %p : f32
    linalg.yield %r : f32
  }
  return
}

// -----
// out + out is no contraction (it stays; an outside attack's internal error).
// CHECK-LABEL: func.func @doubled
// CHECK: linalg.generic
// CHECK-NOT: call @scipy_cblas
#id = affine_map<(i) -> (i)>
func.func @doubled(%x: memref<16xf32>) {
  linalg.generic {indexing_maps = [#id], iterator_types = ["parallel"]} outs(%x : memref<16xf32>) {
  ^bb0(%o: f32):
    %t = arith.addf %o, %o : f32
    linalg.yield %t : f32
  }
  return
}
