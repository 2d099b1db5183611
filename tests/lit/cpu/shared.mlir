// The code shape that scales: every coll.combine of one signature (kind,
// element type, arity) calls one private kernel, defined once, on pointers
// and an element count; a program longer than split=N copies and combines
// becomes functions of at most N of them, called in order, each reading
// the base pointers it needs from one table; copies call one coll_copy.
// ring, 3 devices, 14 elements (chunks of 4, 4, 6): 18 copies and combines.
// RUN: coll-opt %s --pass-pipeline='builtin.module(coll-lower-all-reduce{strategy=ring},coll-to-cpu)' | FileCheck %s
// RUN: coll-opt %s --pass-pipeline='builtin.module(coll-lower-all-reduce{strategy=ring},coll-to-cpu{split=4 scratch=heap})' | FileCheck %s --check-prefix=SPLIT
// RUN: coll-opt %s --pass-pipeline='builtin.module(coll-lower-all-reduce{strategy=ring},coll-to-cpu{split=4 tile=2})' | FileCheck %s --check-prefix=TILED
// RUN: coll-opt %s --pass-pipeline='builtin.module(coll-lower-all-reduce{strategy=ring},coll-to-cpu{split=4},coll-cpu-to-llvm)' | FileCheck %s --check-prefix=LLVM

// Small program: the memref form, each combine a call (6 = 3 chunks x 2).
// CHECK: func.func private @coll_combine_sum_f32_x2(%arg0: !llvm.ptr, %arg1: !llvm.ptr, %arg2: !llvm.ptr, %arg3: i64) attributes {passthrough = ["noinline"]}
// CHECK: scf.for
// CHECK: vector.load %{{.*}} : memref<?xf32>, vector<16xf32>
// CHECK: arith.addf %{{.*}}, %{{.*}} : vector<16xf32>
// CHECK-NOT: func.func private @coll_combine
// CHECK-LABEL: func.func @all_reduce(
// CHECK-NOT: scf.for
// CHECK-COUNT-6: call @coll_combine_sum_f32_x2(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) : (!llvm.ptr, !llvm.ptr, !llvm.ptr, i64) -> ()
// CHECK-NOT: call @coll_combine
// CHECK: return

// Split: 5 functions of at most 4 copies and combines, on pointers.
// SPLIT: func.func private @coll_copy(%arg0: !llvm.ptr, %arg1: !llvm.ptr, %arg2: i64) attributes {passthrough = ["noinline"]}
// SPLIT-NEXT: "llvm.intr.memcpy"(%arg0, %arg1, %arg2)
// SPLIT: func.func private @coll_combine_sum_f32_x2(
// SPLIT-NOT: func.func private @coll_combine
// SPLIT-LABEL: func.func private @all_reduce_part0(%arg0: !llvm.ptr) attributes {passthrough = ["noinline", "optnone"]}
// SPLIT: %[[X0:.*]] = llvm.load %arg0 : !llvm.ptr -> !llvm.ptr
// SPLIT: %[[S:.*]] = llvm.load %{{.*}} : !llvm.ptr -> !llvm.ptr
// SPLIT: call @coll_copy(%[[S]], %[[X0]], %{{.*}})
// SPLIT: call @coll_combine_sum_f32_x2(%[[S]], %{{.*}}, %[[S]], %{{.*}})
// SPLIT-LABEL: func.func private @all_reduce_part4(
// SPLIT-NOT: @all_reduce_part5(
// SPLIT-LABEL: func.func @all_reduce(
// SPLIT: %[[T:.*]] = memref.alloca() : memref<7xi64>
// SPLIT: %[[ARENA:.*]] = memref.alloc() {alignment = 64 : i64} : memref<{{[0-9]+}}xi8>
// SPLIT: %[[P:.*]] = llvm.inttoptr
// SPLIT-NEXT: call @all_reduce_part0(%[[P]]) : (!llvm.ptr) -> ()
// SPLIT-NEXT: call @all_reduce_part1(%[[P]])
// SPLIT-NEXT: call @all_reduce_part2(%[[P]])
// SPLIT-NEXT: call @all_reduce_part3(%[[P]])
// SPLIT-NEXT: call @all_reduce_part4(%[[P]])
// SPLIT-NEXT: memref.dealloc %[[ARENA]]
// SPLIT-NEXT: return

// Tiles asked for: the memref form, split too; buffers pass through a table
// of pointers (memref<?xi64>), not as arguments. Chunks of 4 and 6 in tiles
// of 2: parts in a tile loop take the tile's start as well.
// TILED-LABEL: func.func private @all_reduce_part0(%arg0: memref<?xi64>, %arg1: index)
// TILED: memref.load %arg0
// TILED: builtin.unrealized_conversion_cast %{{.*}} : !llvm.struct<{{.*}}> to memref<14xf32>
// TILED: call @coll_combine_sum_f32_x2(
// TILED: scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// TILED-NEXT: func.call @all_reduce_part0(%arg0, %[[I]]) : (memref<?xi64>, index) -> ()
// TILED-LABEL: func.func @all_reduce(
// TILED: %[[T:.*]] = memref.alloc(%{{.*}}) : memref<?xi64>
// TILED: call @all_reduce_part6(%[[T]]) : (memref<?xi64>) -> ()
// TILED: memref.dealloc %[[T]]
// TILED-NEXT: return

// In the LLVM dialect the kernel is still one function, called 6 times.
// LLVM: llvm.func @coll_combine_sum_f32_x2(
// LLVM: llvm.fadd %{{.*}}, %{{.*}} : vector<16xf32>
// LLVM-NOT: llvm.func @coll_combine
// LLVM-COUNT-6: llvm.call @coll_combine_sum_f32_x2(
// LLVM-NOT: llvm.call @coll_combine
// LLVM: llvm.func @_mlir_ciface_all_reduce(
module {
  func.func @all_reduce(%x0: memref<14xf32>, %x1: memref<14xf32>, %x2: memref<14xf32>,
                        %y0: memref<14xf32>, %y1: memref<14xf32>, %y2: memref<14xf32>)
      attributes {llvm.emit_c_interface} {
    %t = "coll.all_reduce"(%x0, %x1, %x2, %y0, %y1, %y2)
        {devices = array<i64: 0, 1, 2>, kind = "sum", operandSegmentSizes = array<i32: 3, 3, 0>}
        : (memref<14xf32>, memref<14xf32>, memref<14xf32>, memref<14xf32>, memref<14xf32>, memref<14xf32>) -> !coll.token
    "coll.wait"(%t) : (!coll.token) -> ()
    return
  }
}
