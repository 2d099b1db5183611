// The kernels' PTX: one entry per (kind, type, arity), 16-byte vector
// loads and stores in the main loop, scalar ones for the head and tail.
// RUN: coll-gen all-reduce --devices 3 --shape 1000 | %PYTHON -m coll.tools.coll_build --emit=ptx --strategy=naive | FileCheck %s
// RUN: coll-gen all-reduce --devices 2 --shape 1001 --dtype f64 --kind prod | %PYTHON -m coll.tools.coll_build --emit=ptx --strategy=ring | FileCheck %s --check-prefix=F64
// RUN: coll-gen all-reduce --devices 3 --shape 64 --dtype f16 | %PYTHON -m coll.tools.coll_build --emit=ptx --strategy=naive --chip=sm_80 | FileCheck %s --check-prefix=F16

// CHECK: .version 8.0
// CHECK: .target sm_90
// CHECK: .visible .entry combine_sum_f32_x3(
// CHECK-COUNT-3: ld.global.v4.b32
// CHECK: add.{{(rn.)?}}f32
// CHECK: st.global.v4.b32
// CHECK-COUNT-3: ld.global.b32
// CHECK: st.global.b32
// CHECK-NOT: .entry

// F64: .visible .entry combine_prod_f64_x2(
// F64-COUNT-2: ld.global.v2.b64
// F64: mul.{{(rn.)?}}f64
// F64: st.global.v2.b64
// F64-NOT: .entry

// f16 is loaded 8 to a vector, and three inputs are added in f32, rounded once.
// F16: .target sm_80
// F16: .visible .entry combine_sum_f16_x3(
// F16-COUNT-3: ld.global.v4.b32
// F16: cvt.f32.f16
// F16: add.{{(rn.)?}}f32
// F16: cvt.rn.f16x2.f32
// F16: st.global.v4.b32

// oneshot on 8 devices: one kernel of arity 8 (each device reads all eight
// inputs in place), 8 vector loads per step; twoshot shares it.
// RUN: coll-gen all-reduce --devices 8 --shape 1000 | %PYTHON -m coll.tools.coll_build --emit=ptx --strategy=oneshot | FileCheck %s --check-prefix=ONESHOT
// RUN: coll-gen all-reduce --devices 8 --shape 1000 | %PYTHON -m coll.tools.coll_build --emit=ptx --strategy=twoshot | FileCheck %s --check-prefix=ONESHOT
// ONESHOT: .visible .entry combine_sum_f32_x8(
// 9 buffers (8 inputs, the output) of 5 descriptor fields each, then n.
// ONESHOT: .param .u64 combine_sum_f32_x8_param_45
// ONESHOT-NEXT: )
// ONESHOT-COUNT-8: ld.global.v4.b32
// ONESHOT: st.global.v4.b32
// ONESHOT-NOT: .entry
