// coll-gpu-local-buffers: on the GPU route, the local work's allocations,
// frees and copies become their gpu ops in device memory, each waited for
// at once (upstream gpu-to-llvm lowers only the async forms); placed
// buffers (#coll.device) are left to coll-to-gpu.
// RUN: coll-opt %s --coll-gpu-local-buffers | FileCheck %s

// CHECK-LABEL: func.func @local
// CHECK: %[[T0:.*]] = gpu.wait async
// CHECK-NEXT: %[[M:.*]], %[[T1:.*]] = gpu.alloc async [%[[T0]]] () : memref<8xf32>
// CHECK-NEXT: gpu.wait [%[[T1]]]
// CHECK: linalg.add {{.*}} outs(%[[M]] : memref<8xf32>)
// CHECK: %[[T2:.*]] = gpu.wait async
// CHECK-NEXT: %[[T3:.*]] = gpu.memcpy async [%[[T2]]] %arg1, %[[M]] : memref<8xf32>, memref<8xf32>
// CHECK-NEXT: gpu.wait [%[[T3]]]
// CHECK: %[[T4:.*]] = gpu.wait async
// CHECK-NEXT: %[[T5:.*]] = gpu.dealloc async [%[[T4]]] %[[M]] : memref<8xf32>
// CHECK-NEXT: gpu.wait [%[[T5]]]
// CHECK-NOT: memref.alloc
// CHECK-NOT: memref.copy
// CHECK-NOT: memref.dealloc
// CHECK: return
func.func @local(%x: memref<8xf32>, %y: memref<8xf32>) {
  %a = memref.alloc() : memref<8xf32>
  linalg.add ins(%x, %x : memref<8xf32>, memref<8xf32>) outs(%a : memref<8xf32>)
  memref.copy %a, %y : memref<8xf32> to memref<8xf32>
  memref.dealloc %a : memref<8xf32>
  return
}
