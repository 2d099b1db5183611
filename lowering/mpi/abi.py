"""coll-mpi-abi: after convert-to-llvm, no mpi op may be left, and
upstream's OpenMPI symbol names are fixed: on the OpenMPI ABI upstream
(22.1.8) names the MPI_Op globals `ompi_mpi_sum`, where libmpi exports
`ompi_mpi_op_sum`. Also: which ABI a module is for (its dlti.map)."""
from mlir import ir

from ...core.errors import PassError
from ...core.registry import register
from ...ir.walk import find_ops

# MPI_Op names upstream emits for OpenMPI, without libmpi's `op_` infix.
_OMPI_OPS = ("sum", "max", "min", "prod", "land", "band", "lor", "bor", "lxor", "bxor",
             "maxloc", "minloc", "replace", "no_op")



def implementation_of(module_op: ir.Operation) -> str | None:
    """The module's dlti.map MPI:Implementation ('OpenMPI', 'MPICH'), or None."""
    attrs = module_op.attributes
    text = str(attrs["dlti.map"]) if "dlti.map" in attrs else ""
    return "OpenMPI" if '"OpenMPI"' in text else "MPICH" if '"MPICH"' in text else None


def fix_openmpi_ops(module_op: ir.Operation) -> None:
    """WORKAROUND (MLIR 22.1.8, OpenMPI ABI): @ompi_mpi_sum -> @ompi_mpi_op_sum."""
    body = module_op.regions[0].blocks[0]
    for op in body.operations:
        if op.operation.name != "llvm.mlir.global":
            continue
        name = ir.StringAttr(op.attributes["sym_name"]).value
        if name.startswith("ompi_mpi_") and name[len("ompi_mpi_"):] in _OMPI_OPS:
            new = "ompi_mpi_op_" + name[len("ompi_mpi_"):]
            ir.SymbolTable.replace_all_symbol_uses(name, new, module_op)
            op.attributes["sym_name"] = ir.StringAttr.get(new)


@register("coll-mpi-abi",
          "After convert-to-llvm: check that no mpi op is left, and fix upstream's OpenMPI symbol "
          "names (ompi_mpi_sum -> ompi_mpi_op_sum)", anchor="builtin.module")
def mpi_abi(module_op: ir.Operation) -> None:
    with module_op.context, module_op.location:
        left = find_ops(module_op, lambda n: n.startswith(("mpi.", "coll.")))
        if left:
            raise PassError(f"'{left[0].name}' was not lowered to the LLVM dialect", left[0].location)
        if implementation_of(module_op) == "OpenMPI":
            fix_openmpi_ops(module_op)
