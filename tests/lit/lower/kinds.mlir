// Every reduction kind reaches the combines unchanged, on a type it is valid for.
// 48 elements: 3 chunks of 16 (whole 16-byte vectors for every type), 2 combines each.
// GEN: sum = coll-gen all-reduce --devices 3 --shape 48 --kind sum --dtype f32
// RUN: coll-opt --coll-lower-all-reduce=strategy=ring < %S/Inputs/gen/kinds.sum.mlir | FileCheck %s --check-prefix=SUM -DT=f32
// GEN: prod = coll-gen all-reduce --devices 3 --shape 48 --kind prod --dtype f64
// RUN: coll-opt --coll-lower-all-reduce=strategy=ring < %S/Inputs/gen/kinds.prod.mlir | FileCheck %s --check-prefix=PROD -DT=f64
// GEN: max = coll-gen all-reduce --devices 3 --shape 48 --kind max --dtype bf16
// RUN: coll-opt --coll-lower-all-reduce=strategy=ring < %S/Inputs/gen/kinds.max.mlir | FileCheck %s --check-prefix=MAX -DT=bf16
// GEN: min = coll-gen all-reduce --devices 3 --shape 48 --kind min --dtype i16
// RUN: coll-opt --coll-lower-all-reduce=strategy=ring < %S/Inputs/gen/kinds.min.mlir | FileCheck %s --check-prefix=MIN -DT=i16
// GEN: and = coll-gen all-reduce --devices 3 --shape 48 --kind and --dtype i1
// RUN: coll-opt --coll-lower-all-reduce=strategy=ring < %S/Inputs/gen/kinds.and.mlir | FileCheck %s --check-prefix=AND -DT=i1
// GEN: or = coll-gen all-reduce --devices 3 --shape 48 --kind or --dtype i8
// RUN: coll-opt --coll-lower-all-reduce=strategy=ring < %S/Inputs/gen/kinds.or.mlir | FileCheck %s --check-prefix=OR -DT=i8
// GEN: xor = coll-gen all-reduce --devices 3 --shape 48 --kind xor --dtype i64
// RUN: coll-opt --coll-lower-all-reduce=strategy=ring < %S/Inputs/gen/kinds.xor.mlir | FileCheck %s --check-prefix=XOR -DT=i64

// SUM-COUNT-6: "coll.combine"{{.*}}{kind = "sum"{{.*}}memref<{{[0-9]+}}x[[T]]
// SUM-NOT: "coll.combine"
// PROD-COUNT-6: "coll.combine"{{.*}}{kind = "prod"{{.*}}memref<{{[0-9]+}}x[[T]]
// PROD-NOT: "coll.combine"
// MAX-COUNT-6: "coll.combine"{{.*}}{kind = "max"{{.*}}memref<{{[0-9]+}}x[[T]]
// MAX-NOT: "coll.combine"
// MIN-COUNT-6: "coll.combine"{{.*}}{kind = "min"{{.*}}memref<{{[0-9]+}}x[[T]]
// MIN-NOT: "coll.combine"
// AND-COUNT-6: "coll.combine"{{.*}}{kind = "and"{{.*}}memref<{{[0-9]+}}x[[T]]
// AND-NOT: "coll.combine"
// OR-COUNT-6: "coll.combine"{{.*}}{kind = "or"{{.*}}memref<{{[0-9]+}}x[[T]]
// OR-NOT: "coll.combine"
// XOR-COUNT-6: "coll.combine"{{.*}}{kind = "xor"{{.*}}memref<{{[0-9]+}}x[[T]]
// XOR-NOT: "coll.combine"
