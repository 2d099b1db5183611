// coll-to-gpu on a ring over 3 devices: one gpu.memcpy per coll.copy, one
// gpu.launch_func per coll.combine, every async op with exactly one
// dependency, chains joined with gpu.wait async, scratch in one pool.
// RUN: coll-gen all-reduce --devices 3 --shape 7 | coll-opt --pass-pipeline='builtin.module(coll-lower-all-reduce{strategy=ring},coll-to-gpu)' | filecheck %s
// RUN: coll-gen all-reduce --devices 3 --shape 7 | coll-opt --pass-pipeline='builtin.module(coll-lower-all-reduce{strategy=ring},coll-to-gpu)' | filecheck %s --check-prefix=COPIES
// RUN: coll-gen all-reduce --devices 3 --shape 7 | coll-opt --pass-pipeline='builtin.module(coll-lower-all-reduce{strategy=ring},coll-to-gpu)' | filecheck %s --check-prefix=KERNELS
// RUN: coll-gen all-reduce --devices 3 --shape 7 | coll-opt --pass-pipeline='builtin.module(coll-lower-all-reduce{strategy=ring},coll-to-gpu)' | filecheck %s --check-prefix=STREAMS

// Placement is gone from every type; the GPU is recorded on the function.
// CHECK-NOT: #coll.device
// CHECK-LABEL: func.func @all_reduce(%arg0: memref<7xf32>
// CHECK-SAME: attributes {coll.gpu = 0 : i64, llvm.emit_c_interface}
// Device 1's chain starts on a fresh stream and allocates the scratch pool
// (3 + 3 + 2 + 2 + 2 + 2 floats, 256-byte aligned slots).
// CHECK: %[[S1:.*]] = gpu.wait async
// CHECK-NEXT: %[[POOL:.*]], %[[A:.*]] = gpu.alloc async [%[[S1]]] () : memref<1536xi8>
// Chunk 0: x0[0:3] -> scratch on d1 (a slice copied as is), combined on d1.
// CHECK: %[[X0C0:.*]] = memref.subview %arg0[0] [3] [1] : memref<7xf32> to memref<3xf32, strided<[1]>>
// CHECK: %[[R1:.*]] = memref.view %[[POOL]][%c0][] : memref<1536xi8> to memref<3xf32>
// CHECK: %[[T1:.*]] = gpu.memcpy async [%[[A]]] %[[R1]], %[[X0C0]] : memref<3xf32>, memref<3xf32, strided<[1]>>
// CHECK: %[[K1:.*]] = gpu.launch_func async [%[[T1]]] @coll_kernels::@combine_sum_f32_x2 blocks in (%c1, %c1, %c1) threads in (%c256, %c1, %c1) args(%{{.*}} : memref<?xf32, strided<[1], offset: ?>>, %{{.*}} : memref<?xf32, strided<[1], offset: ?>>, %{{.*}} : memref<?xf32, strided<[1], offset: ?>>, %c3 : index)
// Device 2's chain starts on its own stream after d1's combine: the
// dependency is listed twice so that canonicalize does not fold the wait
// (which would put d2 on d1's stream).
// CHECK: %[[W2:.*]] = gpu.wait async [%[[K1]], %[[K1]]]
// CHECK-NEXT: %[[T2:.*]] = gpu.memcpy async [%[[W2]]]
// CHECK: %[[K2:.*]] = gpu.launch_func async [%[[T2]]] @coll_kernels::@combine_sum_f32_x2
// A chain that already exists joins the other chain with a two-token wait.
// CHECK: gpu.wait async [%[[K1]], %{{.*}}]
// The end: after every chain, the pool is freed; then the host waits on the
// last token of every stream (gpu.wait destroys the streams it syncs).
// CHECK: %[[END:.*]] = gpu.wait async [%{{.*}}, %{{.*}}, %{{.*}}]
// CHECK-NEXT: %[[D:.*]] = gpu.dealloc async [%[[END]]] %[[POOL]] : memref<1536xi8>
// CHECK-NEXT: gpu.wait [%{{[0-9]+}}, %{{[0-9]+}}, %{{[0-9]+}}, %{{[0-9]+}}, %{{[0-9]+}}, %{{[0-9]+}}, %{{[0-9]+}}, %{{[0-9]+}}, %{{[0-9]+}}, %{{[0-9]+}}, %[[D]]]
// CHECK-NEXT: return
// No coll op survives; the kernel exists once, for sm_90.
// CHECK-NOT: coll.
// CHECK: gpu.module @coll_kernels [#nvvm.target<O = 3, chip = "sm_90", features = "+ptx80">]
// CHECK: gpu.func @combine_sum_f32_x2(%arg0: memref<?xf32, strided<[1], offset: ?>>, %arg1: memref<?xf32, strided<[1], offset: ?>>, %arg2: memref<?xf32, strided<[1], offset: ?>>, %arg3: index) kernel
// CHECK: vector.load {{.*}} {alignment = 16 : i64} : memref<?xf32, strided<[1], offset: ?>>, vector<4xf32>
// CHECK-NOT: gpu.func

// ring on 3 devices: 2N(N-1) = 12 copies, N(N-1) = 6 combines.
// COPIES-COUNT-12: gpu.memcpy async
// COPIES-NOT: gpu.memcpy
// KERNELS-COUNT-6: gpu.launch_func async
// KERNELS-NOT: gpu.launch_func

// 11 streams (gpu.wait async), all synced and destroyed by the last gpu.wait
// (11 tokens above).
// STREAMS-COUNT-11: gpu.wait async
// STREAMS-NOT: gpu.wait async
