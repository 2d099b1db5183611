// Chips that need a PTX version above 8.0 (arch- and family-specific ones,
// sm_103, sm_110) get it: llc stopped with "PTX version 8.0 does not
// support target" before.
// RUN: coll-build %s --emit=ptx --chip=sm_100a | FileCheck %s --check-prefix=SM100A
// RUN: coll-build %s --emit=ptx --chip=sm_103 | FileCheck %s --check-prefix=SM103
// RUN: coll-build %s --emit=ptx --chip=sm_110f | FileCheck %s --check-prefix=SM110F
// RUN: coll-build %s --emit=ptx --chip=sm_120a | FileCheck %s --check-prefix=SM120A

// SM100A: .version 8.6
// SM100A: .target sm_100a
// SM103: .version 8.8
// SM103: .target sm_103
// SM110F: .version 9.0
// SM110F: .target sm_110f
// SM120A: .version 8.7
// SM120A: .target sm_120a
func.func @all_reduce(%x0: memref<8xf32>, %x1: memref<8xf32>, %y0: memref<8xf32>, %y1: memref<8xf32>) attributes {llvm.emit_c_interface} {
  %t = "coll.all_reduce"(%x0, %x1, %y0, %y1) {devices = array<i64: 0, 1>, kind = "sum", operandSegmentSizes = array<i32: 2, 2, 0>} : (memref<8xf32>, memref<8xf32>, memref<8xf32>, memref<8xf32>) -> !coll.token
  "coll.wait"(%t) : (!coll.token) -> ()
  return
}
