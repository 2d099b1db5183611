func.func @f() {
  %x = arith.constant 1 : i32
  coll.nonsense %x
  return
}
