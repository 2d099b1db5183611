// The rhd and tree allreduce strategies.
// rhd: recursive halving (each round a device sends the half its partner
// keeps and combines the half it keeps, operands in device order), then
// recursive doubling into the partner's output; with N not a power of two,
// device 2i first sends its input to 2i+1 and gets the result back at the end.
// tree: binomial reduce into y0, then binomial broadcast from it.
// GEN: rhd2 = coll-gen all-reduce --devices 2 --shape 128 --strategy rhd
// RUN: coll-opt --coll-lower-collectives < %S/Inputs/gen/all_reduce_rhd_tree.rhd2.mlir | FileCheck %s --check-prefix=RHD2
// GEN: rhd3 = coll-gen all-reduce --devices 3 --shape 128 --strategy rhd
// RUN: coll-opt --coll-lower-collectives < %S/Inputs/gen/all_reduce_rhd_tree.rhd3.mlir | FileCheck %s --check-prefix=RHD3
// GEN: rhd4 = coll-gen all-reduce --devices 4 --shape 128 --strategy rhd
// RUN: coll-opt --coll-lower-collectives < %S/Inputs/gen/all_reduce_rhd_tree.rhd4.mlir | FileCheck %s --check-prefix=RHD4
// GEN: rhdsmall = coll-gen all-reduce --devices 4 --shape 3 --strategy rhd
// RUN: coll-opt --coll-lower-collectives --coll-check-order < %S/Inputs/gen/all_reduce_rhd_tree.rhdsmall.mlir | FileCheck %s --check-prefix=RHDSMALL
// GEN: rhdto = coll-gen all-reduce --devices 3 --shape 8 --strategy rhd --to-device 3
// RUN: coll-opt --coll-lower-collectives --coll-check-order < %S/Inputs/gen/all_reduce_rhd_tree.rhdto.mlir | FileCheck %s --check-prefix=RHDTO
// GEN: tree2 = coll-gen all-reduce --devices 2 --shape 8 --strategy tree
// RUN: coll-opt --coll-lower-collectives < %S/Inputs/gen/all_reduce_rhd_tree.tree2.mlir | FileCheck %s --check-prefix=TREE2
// GEN: tree3 = coll-gen all-reduce --devices 3 --shape 8 --strategy tree
// RUN: coll-opt --coll-lower-collectives < %S/Inputs/gen/all_reduce_rhd_tree.tree3.mlir | FileCheck %s --check-prefix=TREE3
// GEN: tree4 = coll-gen all-reduce --devices 4 --shape 8 --strategy tree --in-place
// RUN: coll-opt --coll-lower-collectives --coll-check-order < %S/Inputs/gen/all_reduce_rhd_tree.tree4.mlir | FileCheck %s --check-prefix=TREE4

// N = 2: one exchange of halves, each combined into its own output, then
// each half sent to the other's output.
// RHD2: %[[X0:.*]] = memref.memory_space_cast %arg0 {{.*}}#coll.device<0 : i64>>
// RHD2: %[[X1:.*]] = memref.memory_space_cast %arg1 {{.*}}#coll.device<1 : i64>>
// RHD2: %[[A:.*]] = "coll.copy"({{.*}}) : (memref<64xf32, strided<[1]>, #coll.device<1 : i64>>, memref<64xf32, #coll.device<0 : i64>>)
// RHD2: %[[B:.*]] = "coll.copy"({{.*}}) : (memref<64xf32, strided<[1], offset: 64>, #coll.device<0 : i64>>, memref<64xf32, #coll.device<1 : i64>>)
// Device order: on d0 its own half is the lhs, on d1 the received one.
// RHD2: "coll.combine"(%{{.*}}, %{{.*}}, %{{.*}}, %[[A]]) {kind = "sum"{{.*}} : (memref<64xf32, strided<[1]>, #coll.device<0 : i64>>, memref<64xf32, #coll.device<0 : i64>>
// RHD2: "coll.combine"(%{{.*}}, %{{.*}}, %{{.*}}, %[[B]]) {kind = "sum"{{.*}} : (memref<64xf32, #coll.device<1 : i64>>, memref<64xf32, strided<[1], offset: 64>, #coll.device<1 : i64>>
// RHD2-COUNT-2: "coll.copy"({{.*}}, !coll.token) -> !coll.token
// RHD2-NOT: "coll.copy"

// N = 3: fold d0 into d1, rhd over d1, d2, the result back to d0: 6 copies.
// RHD3: "coll.copy"({{.*}}) : (memref<128xf32, #coll.device<0 : i64>>, memref<128xf32, #coll.device<1 : i64>>)
// RHD3-COUNT-4: "coll.copy"({{.*}}memref<64xf32
// RHD3: "coll.copy"({{.*}}) : (memref<128xf32, #coll.device<1 : i64>>, memref<128xf32, #coll.device<0 : i64>>, !coll.token, !coll.token)
// RHD3-NOT: "coll.copy"

// N = 4: 2 halving rounds (64, then 32 elements) and 2 doubling rounds
// (32, then 64), 4 copies each.
// RHD4-COUNT-4: "coll.copy"({{.*}}memref<64xf32
// RHD4-COUNT-4: "coll.copy"({{.*}}memref<32xf32
// RHD4-COUNT-4: "coll.copy"({{.*}}memref<32xf32
// RHD4-COUNT-4: "coll.copy"({{.*}}memref<64xf32
// RHD4-NOT: "coll.copy"

// 3 elements on 4 devices: chunks 1, 1, 1, 0; empty halves move nothing.
// RHDSMALL-NOT: memref<0xf32
// RHDSMALL: "coll.join"

// Single-device output: every reduced chunk goes to device 3.
// RHDTO: "coll.copy"({{.*}}#coll.device<3 : i64>>
// RHDTO: "coll.join"

// TREE2: "coll.copy"({{.*}}) : (memref<8xf32, #coll.device<1 : i64>>, memref<8xf32, #coll.device<0 : i64>>)
// TREE2: %[[K:.*]] = "coll.combine"
// TREE2: "coll.copy"({{.*}}, %[[K]]) : (memref<8xf32, #coll.device<0 : i64>>, memref<8xf32, #coll.device<1 : i64>>, !coll.token)
// TREE2-NOT: "coll.copy"

// TREE3-COUNT-2: "coll.copy"({{.*}}memref<8xf32, #coll.device<0 : i64>>)
// TREE3-COUNT-2: "coll.copy"({{.*}}(memref<8xf32, #coll.device<0 : i64>>
// TREE3-NOT: "coll.copy"

// In place over 4: the reduction lands in x0, which is y0, and is sent on.
// TREE4: %[[X0:.*]] = memref.memory_space_cast %arg0 : memref<8xf32> to memref<8xf32, #coll.device<0 : i64>>
// TREE4: %[[K:.*]] = "coll.combine"(%[[X0]], %{{.*}}, %[[X0]], %{{.*}}, %{{.*}})
// TREE4: "coll.copy"(%[[X0]], %{{.*}}, %[[K]])
// TREE4: "coll.copy"(%[[X0]], %{{.*}}, %[[K]])
