// coll-static-local-buffers: a function's own local buffers (static shape,
// freed in its block) become globals allocated once per program; buffers
// of one type whose lifetimes do not overlap share one (%a and %c: %a's
// last use is before %c is allocated), buffers alive together do not (%a
// and %b); a buffer returned, of a dynamic shape, of i1, or of a function
// that may call itself (one global would serve every activation: an outside
// attack's recursion computed 16x for 8x) stays. The globals carry
// coll.made (coll-to-cpu may shrink them to a tile; not a user's global)
// until coll-to-cpu drops it.
// RUN: coll-opt %s --coll-static-local-buffers | FileCheck %s

// CHECK: memref.global "private" @coll_cpu_scratch_0 : memref<16xf32> = uninitialized {alignment = 64 : i64, coll.made}
// CHECK: memref.global "private" @coll_cpu_scratch_1 : memref<16xf32> = uninitialized {alignment = 64 : i64, coll.made}
// CHECK-LABEL: func.func @step
// CHECK: %[[A:.*]] = memref.get_global @coll_cpu_scratch_0 : memref<16xf32>
// CHECK: %[[B:.*]] = memref.get_global @coll_cpu_scratch_1 : memref<16xf32>
// CHECK: memref.copy %arg0, %[[A]]
// CHECK: memref.copy %[[A]], %[[B]]
// CHECK: %[[C:.*]] = memref.get_global @coll_cpu_scratch_0 : memref<16xf32>
// CHECK: memref.copy %[[B]], %[[C]]
// CHECK: memref.copy %[[C]], %arg1
// CHECK: %[[D:.*]] = memref.alloc(%{{.*}}) : memref<?xf32>
// CHECK: %[[M:.*]] = memref.alloc() : memref<16xi1>
// CHECK-NOT: memref.get_global
// CHECK: memref.dealloc %[[D]]
// CHECK: memref.dealloc %[[M]]
// CHECK-NOT: memref.dealloc
func.func @step(%x: memref<16xf32>, %y: memref<16xf32>, %n: index) {
  %a = memref.alloc() : memref<16xf32>
  %b = memref.alloc() : memref<16xf32>
  memref.copy %x, %a : memref<16xf32> to memref<16xf32>
  memref.copy %a, %b : memref<16xf32> to memref<16xf32>
  %c = memref.alloc() : memref<16xf32>
  memref.copy %b, %c : memref<16xf32> to memref<16xf32>
  memref.copy %c, %y : memref<16xf32> to memref<16xf32>
  %d = memref.alloc(%n) : memref<?xf32>
  %m = memref.alloc() : memref<16xi1>
  memref.dealloc %a : memref<16xf32>
  memref.dealloc %b : memref<16xf32>
  memref.dealloc %c : memref<16xf32>
  memref.dealloc %d : memref<?xf32>
  memref.dealloc %m : memref<16xi1>
  return
}

// A buffer that escapes (returned, never freed here) stays an allocation.
// CHECK-LABEL: func.func @escapes
// CHECK: memref.alloc() : memref<8xf32>
func.func @escapes() -> memref<8xf32> {
  %a = memref.alloc() : memref<8xf32>
  return %a : memref<8xf32>
}

// CHECK-LABEL: func.func @recursive
// CHECK: memref.alloc() : memref<4xf32>
// CHECK: call @recursive
func.func @recursive(%x: memref<4xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %b = memref.alloc() : memref<4xf32>
  memref.copy %x, %b : memref<4xf32> to memref<4xf32>
  %p = arith.cmpi sgt, %n, %c0 : index
  scf.if %p {
    %m = arith.subi %n, %c1 : index
    func.call @recursive(%b, %m) : (memref<4xf32>, index) -> ()
  }
  memref.copy %b, %x : memref<4xf32> to memref<4xf32>
  memref.dealloc %b : memref<4xf32>
  return
}

// A buffer whose pointer is stored into memory lives to the end of the
// block (an outside attack read %a through the stored pointer after %b,
// of the same type, had taken %a's global): %a and %b get globals of
// their own.
// CHECK-LABEL: func.func @escaped
// CHECK: %[[A:.*]] = memref.get_global @[[GA:.*]] : memref<64xf32>
// CHECK: %[[B:.*]] = memref.get_global @[[GB:.*]] : memref<64xf32>
// CHECK-NOT: @[[GA]]
// CHECK: return
func.func @escaped(%x: memref<64xf32>, %out: memref<64xf32>, %slot: memref<1xindex>) {
  %c0 = arith.constant 0 : index
  %a = memref.alloc() : memref<64xf32>
  memref.copy %x, %a : memref<64xf32> to memref<64xf32>
  %p = memref.extract_aligned_pointer_as_index %a : memref<64xf32> -> index
  memref.store %p, %slot[%c0] : memref<1xindex>
  %b = memref.alloc() : memref<64xf32>
  memref.copy %x, %b : memref<64xf32> to memref<64xf32>
  memref.copy %b, %out : memref<64xf32> to memref<64xf32>
  memref.dealloc %a : memref<64xf32>
  memref.dealloc %b : memref<64xf32>
  return
}

// Recursion through an indirect call, several blocks, a layout, a buffer
// past MAX_BYTES (256 MiB): left as they are.
// CHECK-LABEL: func.func @indirect
// CHECK: memref.alloc() : memref<4xf32>
// CHECK: call_indirect
func.func @indirect(%x: memref<4xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %b = memref.alloc() : memref<4xf32>
  memref.copy %x, %b : memref<4xf32> to memref<4xf32>
  %p = arith.cmpi sgt, %n, %c0 : index
  scf.if %p {
    %m = arith.subi %n, %c1 : index
    %f = func.constant @indirect : (memref<4xf32>, index) -> ()
    func.call_indirect %f(%b, %m) : (memref<4xf32>, index) -> ()
  }
  memref.copy %b, %x : memref<4xf32> to memref<4xf32>
  memref.dealloc %b : memref<4xf32>
  return
}

// CHECK-LABEL: func.func @blocks
// CHECK: memref.alloc() : memref<4xf32>
func.func @blocks(%x: memref<4xf32>, %out: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %a = memref.alloc() : memref<4xf32>
  memref.copy %x, %a : memref<4xf32> to memref<4xf32>
  %v = memref.load %a[%c0] : memref<4xf32>
  memref.dealloc %a : memref<4xf32>
  cf.br ^next
^next:
  memref.store %v, %out[%c0] : memref<4xf32>
  return
}

// CHECK-LABEL: func.func @layout_and_huge
// CHECK: memref.alloc() : memref<4x4xf32, strided<[64, 1]>>
// CHECK: memref.alloc() : memref<67108865xf32>
func.func @layout_and_huge(%x: memref<4x4xf32>) {
  %a = memref.alloc() : memref<4x4xf32, strided<[64, 1]>>
  memref.copy %x, %a : memref<4x4xf32> to memref<4x4xf32, strided<[64, 1]>>
  %h = memref.alloc() : memref<67108865xf32>
  memref.dealloc %a : memref<4x4xf32, strided<[64, 1]>>
  memref.dealloc %h : memref<67108865xf32>
  return
}
