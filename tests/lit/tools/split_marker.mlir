// --split-input-file=MARKER splits at MARKER; --output-split-marker joins the
// output with another one; both as mlir-opt.
// RUN: mlir-opt %S/Inputs/custom_marker.mlir '--split-input-file=// ==' > %t.up
// RUN: coll-opt %S/Inputs/custom_marker.mlir '--split-input-file=// ==' > %t.co
// RUN: diff %t.up %t.co
// RUN: FileCheck %s --input-file=%t.co
// RUN: mlir-opt %S/Inputs/custom_marker.mlir '--split-input-file=// ==' '--output-split-marker=// ~~' > %t.up
// RUN: coll-opt %S/Inputs/custom_marker.mlir '--split-input-file=// ==' '--output-split-marker=// ~~' > %t.co
// RUN: diff %t.up %t.co
// RUN: FileCheck %s --input-file=%t.co --check-prefix=OUT

// CHECK: func.func @a
// CHECK-NEXT: return
// CHECK: {{^// [-][-][-][-][-]$}}
// CHECK: func.func @b
// OUT: func.func @a
// OUT: {{^// ~~$}}
// OUT: func.func @b
