// coll-to-cpu{nontemporal=B}: in a block whose buffers take at least B
// bytes, a tiled copy that writes a result region nothing reads again (the
// all-gather copies of all2all, twoshot, the last hop of ring) calls
// coll_copy_streaming: aligned non-temporal vector stores, which skip the
// cache and do not read each line before writing it. Other copies stay
// memref.copy; with nontemporal=0 (the default) nothing streams.
// all2all on 2 devices, 1000 elements (16000 bytes of arguments,
// 4000 of scratch), tiles of 128.
// RUN: coll-opt %s --pass-pipeline='builtin.module(coll-lower-all-reduce{strategy=all2all},coll-to-cpu{tile=128 split=0 nontemporal=20000})' | FileCheck %s
// RUN: coll-opt %s --pass-pipeline='builtin.module(coll-lower-all-reduce{strategy=all2all},coll-to-cpu{tile=128 split=0 nontemporal=20001})' | FileCheck %s --check-prefix=SMALL
// RUN: coll-opt %s --pass-pipeline='builtin.module(coll-lower-all-reduce{strategy=all2all},coll-to-cpu{tile=128 split=0})' | FileCheck %s --check-prefix=SMALL
// RUN: coll-opt %s --pass-pipeline='builtin.module(coll-lower-all-reduce{strategy=all2all},coll-to-cpu{tile=128 nontemporal=1},coll-cpu-to-llvm)' | FileCheck %s --check-prefix=LLVM
// RUN: not coll-opt %s --pass-pipeline='builtin.module(coll-to-cpu{nontemporal=-1})' 2>&1 | FileCheck %s --check-prefix=BAD

// CHECK-LABEL: func.func private @coll_copy_streaming(%arg0: !llvm.ptr, %arg1: !llvm.ptr, %arg2: i64)
// CHECK: scf.for
// CHECK: vector.store %{{.*}}, %{{.*}}[%{{.*}}] {alignment = 64 : i64, nontemporal = true} : memref<?xi8>, vector<64xi8>
// CHECK: llvm.fence seq_cst
// CHECK-LABEL: func.func @all_reduce(
// Per tile of chunk 0: x1's tile into scratch (a plain copy: the combine
// reads it next), the combine into y0, then y0's tile streamed into y1.
// CHECK: scf.for
// CHECK: memref.copy %{{.*}}, %{{.*}} : memref<128xf32, strided<[1], offset: ?>> to memref<128xf32>
// CHECK: call @coll_combine_sum_f32_x2(
// CHECK: call @coll_copy_streaming(%{{.*}}, %{{.*}}, %c512_i64)
// CHECK: }
// SMALL-NOT: coll_copy_streaming
// LLVM: llvm.store %{{.*}}, %{{.*}} {alignment = 64 : i64, nontemporal} : vector<64xi8>, !llvm.ptr
// LLVM: llvm.fence seq_cst
// BAD: error: coll-to-cpu: nontemporal must be 0 (never) or a number of bytes, got -1

module {
  func.func @all_reduce(%x0: memref<1000xf32>, %x1: memref<1000xf32>, %y0: memref<1000xf32>, %y1: memref<1000xf32>)
      attributes {llvm.emit_c_interface} {
    %t = "coll.all_reduce"(%x0, %x1, %y0, %y1)
        {devices = array<i64: 0, 1>, kind = "sum", operandSegmentSizes = array<i32: 2, 2, 0>}
        : (memref<1000xf32>, memref<1000xf32>, memref<1000xf32>, memref<1000xf32>) -> !coll.token
    "coll.wait"(%t) : (!coll.token) -> ()
    return
  }
}
