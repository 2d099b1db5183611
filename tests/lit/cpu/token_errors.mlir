// coll-to-cpu: a token that reaches an op that is not coll's is a located
// error at that op, naming the op that made it.
// RUN: coll-opt %s --coll-to-cpu --verify-diagnostics

func.func @returned(%a: memref<8xf32, #coll.device<0>>, %b: memref<8xf32, #coll.device<0>>) -> !coll.token {
  %t = "coll.copy"(%a, %b) : (memref<8xf32, #coll.device<0>>, memref<8xf32, #coll.device<0>>) -> !coll.token
  // expected-error @below {{coll-to-cpu: 'coll.copy' result is still used by 'func.return' after lowering to CPU (tokens may only flow into coll ops)}}
  return %t : !coll.token
}
