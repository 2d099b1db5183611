// coll-cpu-to-llvm: upstream passes take the CPU program to the LLVM
// dialect. Contiguous copies (whole buffers and slices) become memcpy, never
// a call to the generic memrefCopy; the entry keeps its C interface.
// RUN: coll-opt %s --pass-pipeline='builtin.module(coll-lower-all-reduce{strategy=ring},coll-to-cpu{kernels=inline},coll-cpu-to-llvm)' | FileCheck %s
// RUN: coll-opt %s --pass-pipeline='builtin.module(coll-lower-all-reduce{strategy=ring},coll-to-cpu,coll-cpu-to-llvm)' | not grep -e memrefCopy -e 'coll\.' -e 'memref\.' -e 'scf\.' -e 'vector\.'
// RUN: coll-opt %s --pass-pipeline='builtin.module(coll-lower-all-reduce{strategy=naive},coll-to-cpu{tile=0 kernels=inline scratch=heap},coll-cpu-to-llvm)' | FileCheck %s --check-prefix=NAIVE

// CHECK: llvm.func @all_reduce(
// CHECK: "llvm.intr.memcpy"
// CHECK: llvm.fadd %{{.*}}, %{{.*}} : vector<16xf32>
// CHECK: llvm.func @_mlir_ciface_all_reduce(

// Untiled naive: 2 scratch buffers (N(N-1)) from malloc, each freed.
// NAIVE: llvm.call @malloc
// NAIVE: "llvm.intr.memcpy"
// NAIVE: llvm.fadd
// NAIVE: llvm.call @malloc
// NAIVE: "llvm.intr.memcpy"
// NAIVE: llvm.fadd
// NAIVE-COUNT-2: llvm.call @free
// NAIVE-NOT: llvm.call @malloc
module {
  func.func @all_reduce(%x0: memref<4x100xf32>, %x1: memref<4x100xf32>,
                        %y0: memref<4x100xf32>, %y1: memref<4x100xf32>)
      attributes {llvm.emit_c_interface} {
    %t = "coll.all_reduce"(%x0, %x1, %y0, %y1)
        {devices = array<i64: 0, 1>, kind = "sum", operandSegmentSizes = array<i32: 2, 2, 0>}
        : (memref<4x100xf32>, memref<4x100xf32>, memref<4x100xf32>, memref<4x100xf32>) -> !coll.token
    "coll.wait"(%t) : (!coll.token) -> ()
    return
  }
}
