// Scratch is static by default (lowering/cpu/scratch.py): every buffer that
// coll-to-cpu would malloc at each call is a memref.global of the compiled
// program, allocated once, so no call faults fresh pages in. That holds for
// whole scratch buffers (untiled), the one-tile buffers of tiled groups,
// and the arena of the pointer-level form. ring on 3 devices, 14 elements (chunks of 4, 4 and 6).
// RUN: coll-opt %s --pass-pipeline='builtin.module(coll-lower-all-reduce{strategy=ring},coll-to-cpu{tile=0})' | FileCheck %s --check-prefix=WHOLE
// RUN: coll-opt %s --pass-pipeline='builtin.module(coll-lower-all-reduce{strategy=ring},coll-to-cpu{tile=2 split=0})' | FileCheck %s --check-prefix=TILE
// RUN: coll-opt %s --pass-pipeline='builtin.module(coll-lower-all-reduce{strategy=ring},coll-to-cpu{split=4})' | FileCheck %s --check-prefix=ARENA
// RUN: coll-opt %s --pass-pipeline='builtin.module(coll-lower-all-reduce{strategy=ring},coll-to-cpu{tile=0},coll-cpu-to-llvm)' | FileCheck %s --check-prefix=LLVM

// Untiled: one global per scratch buffer (3 chunks x 2 hops), read through
// memref.get_global; nothing is allocated or freed.
// WHOLE: memref.global "private" @coll_cpu_scratch_0 : memref<4xf32> = uninitialized {alignment = 64 : i64}
// WHOLE-COUNT-3: memref.global "private" @coll_cpu_scratch_{{[1-3]}} : memref<4xf32> = uninitialized
// WHOLE-COUNT-2: memref.global "private" @coll_cpu_scratch_{{[45]}} : memref<6xf32> = uninitialized
// WHOLE-LABEL: func.func @all_reduce(
// WHOLE-NOT: memref.alloc
// WHOLE: %[[R:.*]] = memref.get_global @coll_cpu_scratch_0 : memref<4xf32>
// WHOLE-NEXT: memref.copy %{{.*}}, %[[R]]
// WHOLE-NOT: memref.dealloc
// WHOLE: return

// Tiled: a chunk's scratch shrinks to one tile of 2 elements, static too.
// TILE: memref.global "private" @coll_cpu_scratch_0 : memref<2xf32> = uninitialized
// TILE-LABEL: func.func @all_reduce(
// TILE: %[[T:.*]] = memref.get_global @coll_cpu_scratch_0 : memref<2xf32>
// TILE: memref.copy %{{.*}}, %[[T]]
// TILE-NOT: memref.dealloc
// TILE: return

// Pointer level: the arena is one static buffer of bytes.
// ARENA: memref.global "private" @coll_cpu_scratch_0 : memref<{{[0-9]+}}xi8> = uninitialized
// ARENA-LABEL: func.func @all_reduce(
// ARENA: %[[A:.*]] = memref.get_global @coll_cpu_scratch_0
// ARENA: memref.extract_aligned_pointer_as_index %[[A]]
// ARENA-NOT: memref.dealloc
// ARENA: return

// In the LLVM dialect: internal globals, no malloc or free.
// LLVM: llvm.mlir.global private @coll_cpu_scratch_0() {addr_space = 0 : i32, alignment = 64 : i64} : !llvm.array<4 x f32>
// LLVM-NOT: @malloc
// LLVM-NOT: @free
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
