// Tokens that cross a call: a call that returns one runs on the buffers it is
// given until that token is waited for; a token passed into a call, or
// received as an argument, is refused with a located error.
// RUN: coll-opt %s --split-input-file --verify-diagnostics --coll-check-order
!d0 = memref<8xf32, #coll.device<0>>
!d1 = memref<8xf32, #coll.device<1>>
func.func private @start(!d1) -> !coll.token
func.func @call_token_returned(%y: !d1) -> !coll.token {
  %t = func.call @start(%y) : (!d1) -> !coll.token
  return %t : !coll.token
}

// -----
!d1 = memref<8xf32, #coll.device<1>>
func.func private @start(!d1) -> !coll.token
func.func @call_token_dropped(%y: !d1) {
  // expected-error @+1 {{func.call writes %arg0[0, 8) on device 1 but nothing waits for it: @call_token_dropped has no coll.wait and returns no token}}
  %t = func.call @start(%y) : (!d1) -> !coll.token
  return
}

// -----
// The callee's pending work on %y races with the copy into %y.
!d0 = memref<8xf32, #coll.device<0>>
!d1 = memref<8xf32, #coll.device<1>>
func.func private @start(!d1) -> !coll.token
func.func @call_token_not_awaited_before_a_copy(%x: !d0, %y: !d1) -> !coll.token {
  // expected-note @+2 {{also written by this func.call, not ordered with it}}
  // expected-error @+1 {{func.call writes %arg1[0, 8) on device 1 but is not ordered before the final returned token}}
  %t = func.call @start(%y) : (!d1) -> !coll.token
  // expected-error @+1 {{coll.copy writes %arg1[0, 8) on device 1, racing with another write}}
  %t1 = "coll.copy"(%x, %y) : (!d0, !d1) -> !coll.token
  // expected-note @+1 {{the final returned token}}
  return %t1 : !coll.token
}

// -----
!d0 = memref<8xf32, #coll.device<0>>
!d1 = memref<8xf32, #coll.device<1>>
func.func private @finish(!coll.token)
func.func @token_passed_to_a_call(%x: !d0, %y: !d1) {
  %t = "coll.copy"(%x, %y) : (!d0, !d1) -> !coll.token
  // expected-error @+1 {{a !coll.token passed to func.call is not followed by coll-check-order; expected the caller to coll.wait for it before the call}}
  func.call @finish(%t) : (!coll.token) -> ()
  return
}

// -----
!d1 = memref<8xf32, #coll.device<1>>
// expected-error @+1 {{@token_argument takes a !coll.token argument: coll-check-order cannot tell which buffers the caller's pending work touches}}
func.func @token_argument(%x: !d1, %y: !d1, %t: !coll.token) -> !coll.token {
  "coll.wait"() : () -> ()
  return %t : !coll.token
}
