func.func @f() {
  "extra.marker"() : () -> ()
  return
}
