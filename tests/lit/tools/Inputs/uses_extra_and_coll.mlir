func.func @f() {
  "extra.marker"() : () -> ()
  %t = "coll.join"() : () -> !coll.token
  "coll.wait"(%t) : (!coll.token) -> ()
  return
}
