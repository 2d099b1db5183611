// Which dialects are loaded, as mlir-opt: --allow-unregistered-dialect,
// --irdl-file for extra dialects (coll stays loaded), --show-dialects,
// --no-implicit-module.
// RUN: mlir-opt %s --allow-unregistered-dialect > %t.up
// RUN: coll-opt %s --allow-unregistered-dialect > %t.co
// RUN: diff %t.up %t.co
// RUN: FileCheck %s --input-file=%t.co --check-prefix=UNREG
// RUN: not coll-opt %s 2>&1 | FileCheck %s --check-prefix=NOUNREG
// RUN: mlir-opt %S/Inputs/uses_extra.mlir --irdl-file=%S/Inputs/extra.irdl.mlir > %t.up
// RUN: coll-opt %S/Inputs/uses_extra.mlir --irdl-file=%S/Inputs/extra.irdl.mlir > %t.co
// RUN: diff %t.up %t.co
// RUN: FileCheck %s --input-file=%t.co --check-prefix=IRDL
// RUN: coll-opt %S/Inputs/uses_extra_and_coll.mlir -irdl-file=%S/Inputs/extra.irdl.mlir -coll-check-order | FileCheck %s --check-prefix=BOTH
// RUN: not coll-opt %S/Inputs/uses_extra.mlir 2>&1 | FileCheck %s --check-prefix=NOIRDL
// RUN: not coll-opt %S/Inputs/uses_extra.mlir --irdl-file=%S/Inputs/missing.irdl.mlir 2>&1 | FileCheck %s --check-prefix=MISSING
// RUN: coll-opt --show-dialects | FileCheck %s --check-prefix=SHOW
// RUN: coll-opt --show-dialects --irdl-file=%S/Inputs/extra.irdl.mlir | FileCheck %s --check-prefix=SHOWEXTRA
// RUN: mlir-opt %S/Inputs/uses_extra.mlir --irdl-file=%S/Inputs/extra.irdl.mlir --no-implicit-module > %t.up
// RUN: coll-opt %S/Inputs/uses_extra.mlir --irdl-file=%S/Inputs/extra.irdl.mlir --no-implicit-module > %t.co
// RUN: diff %t.up %t.co
// RUN: FileCheck %s --input-file=%t.co --check-prefix=NOMODULE
// RUN: not coll-opt %s --allow-unregistered-dialect --no-implicit-module 2>&1 | FileCheck %s --check-prefix=TWOOPS -DFILE=%s

// UNREG: "mystery.op"() {size = 3 : i64} : () -> ()
// IRDL: "extra.marker"() : () -> ()
// BOTH: "extra.marker"() : () -> ()
// BOTH: "coll.wait"
// NOIRDL: uses_extra.mlir:2:17: error: operation being parsed with an unregistered dialect
// MISSING: coll-opt: error: could not open IRDL file '{{.*}}missing.irdl.mlir': No such file or directory
// SHOW: Available Dialects: {{.*}}arith,{{.*}}coll,{{.*}}func,{{.*}}memref,{{.*}}scf,{{.*}}
// SHOWEXTRA: Available Dialects: {{.*}}coll,{{.*}}extra,{{.*}}func,
// NOMODULE: {{^}}func.func @f() {
// TWOOPS: [[FILE]]:0:0: error: source must contain a single top-level operation, found: 2

func.func @f() {
  // NOUNREG: dialects.mlir:[[@LINE+1]]:15: error: operation being parsed with an unregistered dialect
  "mystery.op"() {size = 3} : () -> ()
  return
}

func.func @g() {
  return
}
