"""The back ends, one folder each, listed once (BACKENDS). Each folder's
`__init__.py` holds its one object (lowering/base.py Backend): name,
route, capabilities, command-line options, `available()` and `compile()`;
its passes and runtime sit beside it. Adding a back end is one folder and
its line below."""
from typing import Any

from mlir import ir

from . import cpu, gpu, mpi
from . import driver as _driver
from .base import Backend

BACKENDS = {b.name: b for b in (cpu.BACKEND, gpu.BACKEND, mpi.BACKEND)}
_ALIASES = {a: b for b in BACKENDS.values() for a in b.aliases}


def get(name: str) -> Backend | None:
    """The back end called `name` (or one of its aliases), or None."""
    return BACKENDS.get(name) or _ALIASES.get(name)


def names() -> list[str]:
    """Every name a back end answers to, in order."""
    return [n for b in BACKENDS.values() for n in (b.name, *b.aliases)]


def lower(module_op: ir.Operation | ir.Module, backend: Backend | str | None, *args: Any,
          **kwargs: Any) -> _driver.Lowered:
    """lowering/driver.py `lower`, with the back end also by name (None:
    stop at the explicit level)."""
    if isinstance(backend, str):
        found = get(backend)
        if found is None:
            raise ValueError(f"unknown back end '{backend}'; expected one of: {', '.join(names())}")
        backend = found
    op = getattr(module_op, "operation", module_op)
    if not hasattr(op, "walk"):
        raise ValueError(f"module_op must be an MLIR operation (an ir.Module's .operation), got "
                         f"{type(module_op).__name__}")
    return _driver.lower(module_op, backend, *args, **kwargs)
