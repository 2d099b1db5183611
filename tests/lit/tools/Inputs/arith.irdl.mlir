irdl.dialect @arith {
  irdl.operation @nop {
  }
}
