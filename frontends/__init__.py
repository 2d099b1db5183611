"""The frontends: the forms a program may come in above the collective
level's memref form, one module each, listed once (FRONTENDS, in the order
the driver asks them: lowering/driver.py). Each has `NAME`, `GLOBAL` (its arguments are global arrays
that a runner lays out over the devices), `detect(module_op)`
(does the module use this form?) and `route(module_op, backend, **options)`
(the pipeline elements that bring it down to the next form). Adding a
frontend is one module here and its line below."""
from . import shard, spmd, stablehlo, tensor
from .shard import Boundary, Layout  # noqa: F401 - what a frontend's `layouts` returns

# StableHLO first: its route ends in the shard, tensor or SPMD form.
FRONTENDS = (stablehlo, shard, tensor, spmd)
BY_NAME = {f.NAME: f for f in FRONTENDS}
