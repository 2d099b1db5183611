"""Frontends: the forms programs come in (StableHLO from JAX, ...), each one
module with `detect(module_op)` and `route(module_op)` (docs/architecture.md)."""
