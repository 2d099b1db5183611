irdl.dialect @extra {
  irdl.operation @marker {
  }
}
