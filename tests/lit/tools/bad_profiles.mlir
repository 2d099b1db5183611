// A profile that is not a usable file gives a located, plain diagnostic
// naming the file and what is wrong, never a Python exception name.
// RUN: rm -rf %t && mkdir -p %t/dir.json
// RUN: echo '[1, 2]' > %t/list.json
// RUN: echo '{"memory_bandwidth_Bps": "fast"}' > %t/str.json
// RUN: echo '{"memory_bandwidth_Bps": 0}' > %t/zero.json
// RUN: echo '{"memory_bandwidth_Bps": -1}' > %t/neg.json
// RUN: echo '{"memory_bandwidth_Bps": [[1, 2], [3]]}' > %t/pair.json
// RUN: echo '{"memory_bandwidth_Bps": []}' > %t/empty.json
// RUN: printf '\377\376' > %t/bin.json
// RUN: not coll-opt %s --coll-choose-strategy=profile=%t/dir.json 2>&1 | FileCheck %s --check-prefix=DIR
// RUN: not coll-opt %s --coll-choose-strategy=profile=%t/list.json 2>&1 | FileCheck %s --check-prefix=LIST
// RUN: not coll-opt %s --coll-choose-strategy=profile=%t/str.json 2>&1 | FileCheck %s --check-prefix=STR
// RUN: not coll-opt %s --coll-choose-strategy=profile=%t/zero.json 2>&1 | FileCheck %s --check-prefix=ZERO
// RUN: not coll-opt %s --coll-choose-strategy=profile=%t/neg.json 2>&1 | FileCheck %s --check-prefix=NEG
// RUN: not coll-opt %s --coll-choose-strategy=profile=%t/pair.json 2>&1 | FileCheck %s --check-prefix=PAIR
// RUN: not coll-opt %s --coll-choose-strategy=profile=%t/empty.json 2>&1 | FileCheck %s --check-prefix=EMPTY
// RUN: not coll-opt %s --coll-choose-strategy=profile=%t/bin.json 2>&1 | FileCheck %s --check-prefix=BIN
// RUN: not coll-opt %s --coll-choose-strategy=profile=%t/none.json 2>&1 | FileCheck %s --check-prefix=NONE

// DIR: error: coll-choose-strategy: profile '{{.*}}dir.json' is a directory; expected a .json file
// LIST: error: coll-choose-strategy: profile '{{.*}}list.json' must be a JSON object
// STR: error: coll-choose-strategy: profile '{{.*}}str.json': 'memory_bandwidth_Bps' must be a positive number or a list of [bytes, value] pairs
// ZERO: error: coll-choose-strategy: profile '{{.*}}zero.json': 'memory_bandwidth_Bps' must be a positive number or a list of [bytes, value] pairs
// NEG: error: coll-choose-strategy: profile '{{.*}}neg.json': 'memory_bandwidth_Bps' must be a positive number or a list of [bytes, value] pairs
// PAIR: error: coll-choose-strategy: profile '{{.*}}pair.json': 'memory_bandwidth_Bps' must be a positive number or a list of [bytes, value] pairs
// EMPTY: error: coll-choose-strategy: profile '{{.*}}empty.json': 'memory_bandwidth_Bps' must be a positive number or a list of [bytes, value] pairs
// BIN: error: coll-choose-strategy: profile '{{.*}}bin.json' is not UTF-8 text
// NONE: error: coll-choose-strategy: profile '{{.*}}none.json' does not exist
// CHECK-NOT: internal error

func.func @f(%x0: memref<4xf32>, %x1: memref<4xf32>, %x2: memref<4xf32>, %y0: memref<4xf32>, %y1: memref<4xf32>, %y2: memref<4xf32>) {
  %t = "coll.all_reduce"(%x0, %x1, %x2, %y0, %y1, %y2) {kind = "sum", devices = array<i64: 0, 1, 2>, operandSegmentSizes = array<i32: 3, 3, 0>} : (memref<4xf32>, memref<4xf32>, memref<4xf32>, memref<4xf32>, memref<4xf32>, memref<4xf32>) -> !coll.token
  "coll.wait"(%t) : (!coll.token) -> ()
  return
}
