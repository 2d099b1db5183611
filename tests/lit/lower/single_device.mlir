// Single-device output: only the target device gets the result.
// naive: every input not on the target is copied there; the target reduces,
// the operands in device order.
// GEN: naive = coll-gen all-reduce --devices 3 --shape 8 --to-device 1
// RUN: coll-opt --coll-lower-all-reduce=strategy=naive < %S/Inputs/gen/single_device.naive.mlir | FileCheck %s --check-prefix=NAIVE
// A target outside the group (the host, say device 3): the first copy lands in the output, which is then reduced in place.
// GEN: host = coll-gen all-reduce --devices 3 --shape 8 --to-device 3
// RUN: coll-opt --coll-lower-all-reduce=strategy=naive < %S/Inputs/gen/single_device.host.mlir | FileCheck %s --check-prefix=HOST
// ring/all2all: reduce-scatter, then each reduced chunk is copied straight into the output slice; no allgather.
// GEN: ring = coll-gen all-reduce --devices 4 --shape 4x100 --to-device 2
// RUN: coll-opt --coll-lower-all-reduce="strategy=ring order=any" < %S/Inputs/gen/single_device.ring.mlir | FileCheck %s --check-prefix=RING
// RUN: coll-opt --coll-lower-all-reduce=strategy=ring < %S/Inputs/gen/single_device.ring.mlir | FileCheck %s --check-prefix=CANON
// GEN: a2a = coll-gen all-reduce --devices 4 --shape 4x100 --to-device 0
// RUN: coll-opt --coll-lower-all-reduce=strategy=all2all < %S/Inputs/gen/single_device.a2a.mlir | FileCheck %s --check-prefix=A2A

// NAIVE-DAG: %[[X1:.*]] = memref.memory_space_cast %arg1 : memref<8xf32> to memref<8xf32, #coll.device<1 : i64>>
// NAIVE-DAG: %[[Y:.*]] = memref.memory_space_cast %arg3 : memref<8xf32> to memref<8xf32, #coll.device<1 : i64>>
// NAIVE: %[[R0:.*]] = "coll.alloc"() : () -> memref<8xf32, #coll.device<1 : i64>>
// NAIVE: %[[T0:.*]] = "coll.copy"(%{{.*}}, %[[R0]])
// NAIVE: %[[R2:.*]] = "coll.alloc"() : () -> memref<8xf32, #coll.device<1 : i64>>
// NAIVE: %[[T2:.*]] = "coll.copy"(%{{.*}}, %[[R2]])
// NAIVE: %[[K:.*]] = "coll.combine"(%[[R0]], %[[X1]], %[[R2]], %[[Y]], %[[T0]], %[[T2]])
// NAIVE: "coll.join"(%[[K]])
// NAIVE-NOT: "coll.copy"

// HOST-DAG: %[[X0:.*]] = memref.memory_space_cast %arg0 : memref<8xf32> to memref<8xf32, #coll.device<0 : i64>>
// HOST-DAG: %[[Y:.*]] = memref.memory_space_cast %arg3 : memref<8xf32> to memref<8xf32, #coll.device<3 : i64>>
// HOST: %[[T0:.*]] = "coll.copy"(%[[X0]], %[[Y]])
// HOST-COUNT-2: "coll.copy"
// HOST: "coll.combine"(%[[Y]], %{{.*}}, %{{.*}}, %[[Y]], %[[T0]], %{{.*}}, %{{.*}})

// Ring: 12 reduce-scatter copies plus one copy per chunk not reduced on the
// target (chunk 3 ends on device 2 itself and is written in place).
// RING-COUNT-15: "coll.copy"
// RING-NOT: "coll.copy"
// In device order every chunk ends on d3: 12 + 4 copies.
// CANON-COUNT-16: "coll.copy"
// CANON-NOT: "coll.copy"

// All2all: chunk 0 is reduced on the target itself.
// A2A-COUNT-15: "coll.copy"
// A2A-NOT: "coll.copy"
