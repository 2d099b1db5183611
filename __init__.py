"""coll: a collectives dialect on upstream MLIR (see README.md)."""
