// A flag that is neither an option nor a pass is an unknown command line
// argument, as in mlir-opt (exit 1), not "not a registered pass".
// RUN: not mlir-opt %s --mlir-bogus 2>&1 | FileCheck %s --check-prefix=MLIR -DTOOL=mlir-opt
// RUN: not coll-opt %s --mlir-bogus 2>&1 | FileCheck %s --check-prefix=MLIR -DTOOL=coll-opt
// RUN: not mlir-opt %s -bogus 2>&1 | FileCheck %s --check-prefix=DASH -DTOOL=mlir-opt
// RUN: not coll-opt %s -bogus 2>&1 | FileCheck %s --check-prefix=DASH -DTOOL=coll-opt
// RUN: not mlir-opt %s --mlir-print-ir-afterall 2>&1 | FileCheck %s --check-prefix=TYPO -DTOOL=mlir-opt
// RUN: not coll-opt %s --mlir-print-ir-afterall 2>&1 | FileCheck %s --check-prefix=TYPO -DTOOL=coll-opt
// RUN: not mlir-opt %s -o 2>&1 | FileCheck %s --check-prefix=VALUE -DTOOL=mlir-opt
// RUN: not coll-opt %s -o 2>&1 | FileCheck %s --check-prefix=VALUE -DTOOL=coll-opt
// RUN: not mlir-opt %s --emit-bytecode=maybe 2>&1 | FileCheck %s --check-prefix=BOOL -DTOOL=mlir-opt
// RUN: not coll-opt %s --emit-bytecode=maybe 2>&1 | FileCheck %s --check-prefix=BOOL -DTOOL=coll-opt
// RUN: not mlir-opt %s -cse --mlir-print-ir-after=bogus 2>&1 | FileCheck %s --check-prefix=NOPASS -DTOOL=mlir-opt
// RUN: not coll-opt %s -cse --mlir-print-ir-after=bogus 2>&1 | FileCheck %s --check-prefix=NOPASS -DTOOL=coll-opt
// RUN: not mlir-opt %s %s 2>&1 | FileCheck %s --check-prefix=TWO -DTOOL=mlir-opt
// RUN: not coll-opt %s %s 2>&1 | FileCheck %s --check-prefix=TWO -DTOOL=coll-opt

// MLIR: [[TOOL]]: Unknown command line argument '--mlir-bogus'.  Try: '{{.*}}[[TOOL]] --help'
// MLIR-NOT: registered pass
// DASH: [[TOOL]]: Unknown command line argument '-bogus'.  Try: '{{.*}}[[TOOL]] --help'
// DASH-NOT: registered pass
// TYPO: [[TOOL]]: Unknown command line argument '--mlir-print-ir-afterall'.
// TYPO-NEXT: [[TOOL]]: Did you mean '--mlir-print-ir-after-all'?
// VALUE: [[TOOL]]: for the -o option: requires a value!
// BOOL: [[TOOL]]: for the --emit-bytecode option: 'maybe' is invalid value for boolean argument! Try 0 or 1
// NOPASS: [[TOOL]]: for the --mlir-print-ir-after option: Cannot find option named 'bogus'!
// TWO: [[TOOL]]: Too many positional arguments specified!

func.func @f() {
  return
}
