// coll-gen spells every collective; each module verifies and round-trips.
// RUN: coll-gen reduce-scatter --devices 4 --shape 8x6 --dtype f32 --kind sum --axis 0 | coll-opt | FileCheck %s --check-prefix=RS
// RS: func.func @reduce_scatter({{.*}}: memref<8x6xf32>{{.*}}, %arg4: memref<2x6xf32>
// RS: "coll.reduce_scatter"({{.*}}) {devices = array<i64: 0, 1, 2, 3>, kind = "sum", operandSegmentSizes = array<i32: 4, 4, 0>, scatter_axis = 0 : i64}
// RUN: coll-gen all-gather --devices 4 --shape 8x6 --dtype f32 --axis 1 --strategy direct | coll-opt | FileCheck %s --check-prefix=AG
// AG: "coll.all_gather"({{.*}}) {devices = array<i64: 0, 1, 2, 3>, gather_axis = 1 : i64, operandSegmentSizes = array<i32: 4, 4, 0>, strategy = "direct"} : ({{.*}}memref<8x24xf32>) -> !coll.token
// RUN: coll-gen reduce --devices 4 --shape 8x6 --dtype f32 --kind max --root 2 | coll-opt | FileCheck %s --check-prefix=RED
// RED: "coll.reduce"({{.*}}) {devices = array<i64: 0, 1, 2, 3>, kind = "max", operandSegmentSizes = array<i32: 4, 1, 0>, root = 2 : i64}
// RUN: coll-gen reduce --devices 4 --shape 8 --kind sum --root 2 --in-place | coll-opt | FileCheck %s --check-prefix=REDIP
// REDIP: "coll.reduce"(%arg0, %arg1, %arg2, %arg3, %arg2)
// RUN: coll-gen broadcast --devices 3 --shape 8x6 --root 0 --strategy tree | coll-opt | FileCheck %s --check-prefix=BC
// BC: "coll.broadcast"({{.*}}) {devices = array<i64: 0, 1, 2>, operandSegmentSizes = array<i32: 1, 3, 0>, root = 0 : i64, strategy = "tree"}
// RUN: coll-gen broadcast --devices 3 --shape 8 --root 1 --in-place | coll-opt | FileCheck %s --check-prefix=BCIP
// BCIP: "coll.broadcast"(%arg0, %arg1, %arg0, %arg2)
// RUN: coll-gen all-to-all --devices 4 --shape 8x8 --split-axis 0 --concat-axis 1 | coll-opt | FileCheck %s --check-prefix=A2A
// A2A: "coll.all_to_all"({{.*}}) {concat_axis = 1 : i64, devices = array<i64: 0, 1, 2, 3>, operandSegmentSizes = array<i32: 4, 4, 0>, split_axis = 0 : i64} : ({{.*}}memref<2x32xf32>) -> !coll.token
// RUN: coll-gen all-reduce --devices 2 --shape 4 --in-place --strategy rhd | coll-opt | FileCheck %s --check-prefix=ARIP
// ARIP: "coll.all_reduce"(%arg0, %arg1, %arg0, %arg1) {{.*}}strategy = "rhd"
// RUN: not coll-gen reduce-scatter --devices 4 --shape 6x6 --axis 0 2>&1 | FileCheck %s --check-prefix=ERR
// ERR: coll-gen: error: scatter_axis 0 has size 6, which the 4 devices do not divide; expected a multiple of 4
// RUN: not coll-gen all-gather --devices 4 --shape 6 --axis 1 2>&1 | FileCheck %s --check-prefix=AXIS
// AXIS: coll-gen: error: --axis 1 is out of range for shape '6'; expected 0 <= axis < 1
// RUN: not coll-gen all-to-all --devices 2 --shape 4 --strategy ring 2>&1 | FileCheck %s --check-prefix=STRAT
// STRAT: invalid choice: 'ring'
