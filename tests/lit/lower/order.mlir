// The order contract. By default (no `order` attribute: canonical) a ring
// runs every chunk along d0 -> d1 -> d2, so each element is ((x0 + x1) + x2)
// as naive computes it; order=any (a pass option of coll-choose-strategy,
// coll-lower-collectives and coll-lower-all-reduce, written on every
// reducing collective) keeps today's ring, chunk c starting on device c.
// RUN: coll-gen all-reduce --devices 3 --shape 64 --strategy ring | coll-opt --coll-lower-collectives | FileCheck %s --check-prefix=CANON
// RUN: coll-gen all-reduce --devices 3 --shape 64 --strategy ring | coll-opt --coll-lower-collectives=order=any | FileCheck %s --check-prefix=ANY
// RUN: coll-gen all-reduce --devices 4 --shape 64 | coll-opt --pass-pipeline='builtin.module(coll-choose-strategy{order=any})' | FileCheck %s --check-prefix=ATTR
// RUN: coll-gen all-gather --devices 2 --shape 4 --axis 0 | coll-opt --pass-pipeline='builtin.module(coll-choose-strategy{order=any})' | FileCheck %s --check-prefix=GATHER
// RUN: coll-gen all-reduce --devices 3 --shape 64 --dtype bf16 --strategy ring | coll-opt --coll-lower-collectives | FileCheck %s --check-prefix=BF16
// RUN: coll-gen all-reduce --devices 2 --shape 4 | not coll-opt --pass-pipeline='builtin.module(coll-choose-strategy{order=fast})' 2>&1 | FileCheck %s --check-prefix=BAD

// 64 elements in chunks of 32, 32, 0: both chunks start on d0.
// CANON: "coll.copy"({{.*}}) : (memref<32xf32, strided<[1]>, #coll.device<0 : i64>>, memref<32xf32, #coll.device<1 : i64>>)
// CANON: "coll.copy"({{.*}}) : (memref<32xf32, strided<[1], offset: 32>, #coll.device<0 : i64>>, memref<32xf32, #coll.device<1 : i64>>)
// ANY: "coll.copy"({{.*}}) : (memref<32xf32, strided<[1]>, #coll.device<0 : i64>>, memref<32xf32, #coll.device<1 : i64>>)
// ANY: "coll.copy"({{.*}}) : (memref<32xf32, strided<[1], offset: 32>, #coll.device<1 : i64>>, memref<32xf32, #coll.device<2 : i64>>)

// bf16: the partial between devices is f32 (d0's contribution moves as
// bf16, d1 combines it with its own into f32, d2 rounds once into y2),
// then the allgather moves bf16.
// BF16: "coll.copy"({{.*}}) : (memref<32xbf16, strided<[1]>, #coll.device<0 : i64>>, memref<32xbf16, #coll.device<1 : i64>>)
// BF16: %[[P:.*]] = "coll.alloc"() : () -> memref<32xf32, #coll.device<1 : i64>>
// BF16: "coll.combine"(%{{.*}}, %{{.*}}, %[[P]], %{{.*}}) {{.*}} : (memref<32xbf16, #coll.device<1 : i64>>, memref<32xbf16, strided<[1]>, #coll.device<1 : i64>>, memref<32xf32, #coll.device<1 : i64>>, !coll.token)
// BF16: "coll.copy"(%[[P]], %{{.*}}) : (memref<32xf32, #coll.device<1 : i64>>, memref<32xf32, #coll.device<2 : i64>>
// BF16: "coll.combine"({{.*}}) {{.*}} : (memref<32xf32, #coll.device<2 : i64>>, memref<32xbf16, strided<[1]>, #coll.device<2 : i64>>, memref<32xbf16, strided<[1]>, #coll.device<2 : i64>>, !coll.token)

// ATTR: "coll.all_reduce"{{.*}}order = "any"
// Only a reducing collective has an order.
// GATHER-NOT: order =
// BAD: invalid value 'fast' for option 'order' of pass 'coll-choose-strategy'; expected one of: canonical, any
