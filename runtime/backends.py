"""The back ends by name, for coll-run: each module has `available()` and
`compile(text, entry, strategy=...)` returning a program with `run`/`time`."""
from . import cpu, cuda, mpi

BACKENDS = {"cpu": cpu, "cuda": cuda, "mpi": mpi}
