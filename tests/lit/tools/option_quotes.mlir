// coll pass option values may be quoted or braced like upstream ones: the
// quotes and braces are not part of the value; a value with a space or a
// comma is printed braced so that the dumped pipeline reads back.
// RUN: rm -rf "%t" && mkdir -p "%t/sp ace"
// RUN: cp %S/../../../analysis/profiles/cpu.json "%t/sp ace/p,1.json"
// RUN: coll-opt %s --pass-pipeline="builtin.module(coll-choose-strategy{profile='cpu'})" | FileCheck %s
// RUN: coll-opt %s --pass-pipeline='builtin.module(coll-choose-strategy{profile="cpu"})' | FileCheck %s
// RUN: coll-opt %s --pass-pipeline='builtin.module(coll-choose-strategy{profile={cpu}})' | FileCheck %s
// RUN: coll-opt %s --pass-pipeline='builtin.module(coll-choose-strategy{profile=""})' | FileCheck %s --check-prefix=RULE
// RUN: coll-opt %s "--coll-choose-strategy=profile={%t/sp ace/p,1.json}" | FileCheck %s
// RUN: coll-opt %s "--coll-choose-strategy=profile={%t/sp ace/p,1.json}" --dump-pass-pipeline -o /dev/null 2>&1 | FileCheck %s --check-prefix=DUMP
// RUN: coll-opt %s --pass-pipeline="builtin.module(coll-choose-strategy{profile={%t/sp ace/p,1.json} threshold=1})" | FileCheck %s

// The cost model (profile cpu) picks tree here, the reference rule naive.
// CHECK: strategy = "tree"
// RULE: strategy = "naive"
// DUMP: coll-choose-strategy{strategy=auto threshold=256000 profile={{[{]}}{{.*}}sp ace/p,1.json{{[}]}} capabilities= order=}

func.func @f(%x0: memref<5x7xi8>, %x1: memref<5x7xi8>, %x2: memref<5x7xi8>, %y0: memref<5x7xi8>, %y1: memref<5x7xi8>, %y2: memref<5x7xi8>) {
  %t = "coll.all_reduce"(%x0, %x1, %x2, %y0, %y1, %y2) {kind = "max", devices = array<i64: 0, 1, 2>, operandSegmentSizes = array<i32: 3, 3, 0>} : (memref<5x7xi8>, memref<5x7xi8>, memref<5x7xi8>, memref<5x7xi8>, memref<5x7xi8>, memref<5x7xi8>) -> !coll.token
  "coll.wait"(%t) : (!coll.token) -> ()
  return
}
