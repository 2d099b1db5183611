// Printing options as in mlir-opt: elided large elements, local scope,
// generic form, pretty debug info; the same output for the same flags.
// RUN: mlir-opt %s --mlir-elide-elementsattrs-if-larger=2 > %t.up
// RUN: coll-opt %s --mlir-elide-elementsattrs-if-larger=2 > %t.co
// RUN: diff %t.up %t.co
// RUN: FileCheck %s --input-file=%t.co --check-prefix=ELIDE
// RUN: mlir-opt %s --mlir-print-debuginfo --mlir-print-local-scope > %t.up
// RUN: coll-opt %s --mlir-print-debuginfo --mlir-print-local-scope > %t.co
// RUN: diff %t.up %t.co
// RUN: FileCheck %s --input-file=%t.co --check-prefix=LOCAL
// RUN: mlir-opt %s --mlir-print-op-generic > %t.up
// RUN: coll-opt %s --mlir-print-op-generic > %t.co
// RUN: diff %t.up %t.co
// RUN: FileCheck %s --input-file=%t.co --check-prefix=GENERIC
// RUN: mlir-opt %s --mlir-pretty-debuginfo > %t.up
// RUN: coll-opt %s --mlir-pretty-debuginfo > %t.co
// RUN: diff %t.up %t.co
// RUN: mlir-opt %s --mlir-print-debuginfo --mlir-pretty-debuginfo > %t.up
// RUN: coll-opt %s --mlir-print-debuginfo --mlir-pretty-debuginfo > %t.co
// RUN: diff %t.up %t.co
// RUN: FileCheck %s --input-file=%t.co --check-prefix=PRETTY
// RUN: mlir-opt %s --mlir-disable-threading -cse > %t.up
// RUN: coll-opt %s --mlir-disable-threading -cse > %t.co
// RUN: diff %t.up %t.co

// ELIDE: arith.constant dense_resource<__elided__> : tensor<4xi32>
// ELIDE: arith.constant dense<[1, 2]> : tensor<2xi32>
// LOCAL-NOT: #loc
// GENERIC: "func.func"() <{function_type = () -> (tensor<4xi32>, tensor<2xi32>), sym_name = "f"}>

func.func @f() -> (tensor<4xi32>, tensor<2xi32>) {
  // LOCAL: arith.constant dense<[1, 2, 3, 4]> : tensor<4xi32> loc("{{.*}}printing_options.mlir":[[@LINE+1]]:10)
  %big = arith.constant dense<[1, 2, 3, 4]> : tensor<4xi32>
  // PRETTY: arith.constant dense<[1, 2]> : tensor<2xi32> {{.*}}printing_options.mlir:[[@LINE+1]]:12
  %small = arith.constant dense<[1, 2]> : tensor<2xi32>
  return %big, %small : tensor<4xi32>, tensor<2xi32>
}
