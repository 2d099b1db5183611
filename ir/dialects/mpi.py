"""As coll.py, for upstream's `mpi` dialect, which has no Python module in
the 22.1.8 bindings: the per-rank projection wraps thousands of mpi ops,
and each wrap retried the failing import (a third of an MPI compile)."""
