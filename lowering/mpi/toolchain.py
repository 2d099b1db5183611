"""The MPI installation (find), and a per-rank program in the LLVM dialect
(the `mpi` route: lowering/mpi/__init__.py) on to a shared library or an
executable linked with the MPI's own mpicc, with the shim (shim.c) that
coll-mpi-requests calls into (requests.py)."""
import hashlib
import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from mlir import ir

from ...core.errors import PassError
from ...core.tools import tool
from ...ir.walk import find_ops
from ...passes.blas_contractions import linked_libraries
from ..gpu.nvvm import host_llvm_ir

SHIM = Path(__file__).with_name("shim.c")

# -- the MPI installation ----------------------------------------------------

@dataclass(frozen=True)
class Mpi:
    implementation: str   # "OpenMPI" or "MPICH": the dlti.map value
    mpirun: str
    mpicc: str


@cache
def find() -> Mpi | None:
    """The MPI on PATH (mpirun + mpicc), or None. COLL_MPI=openmpi|mpich
    picks one of two installed side by side (mpirun.openmpi, ...)."""
    want = os.environ.get("COLL_MPI", "").lower()
    suffixes = {"openmpi": [".openmpi"], "mpich": [".mpich"]}.get(want, ["", ".openmpi", ".mpich"])
    for sfx in suffixes:
        run, cc = shutil.which("mpirun" + sfx) or shutil.which("mpiexec" + sfx), shutil.which("mpicc" + sfx)
        if not (run and cc):
            continue
        try:
            out = subprocess.run([run, "--version"], capture_output=True, text=True, timeout=30)
        except (OSError, subprocess.TimeoutExpired):
            continue
        text = out.stdout + out.stderr
        impl = "OpenMPI" if "Open MPI" in text or "OpenRTE" in text else \
            "MPICH" if "HYDRA" in text or "MPICH" in text else None
        if impl:
            return Mpi(impl, run, cc)
    return None


# -- building ----------------------------------------------------------------

def cache_dir() -> Path:
    d = Path(os.environ.get("COLL_CACHE", Path.home() / ".cache" / "coll")) / "mpi"
    d.mkdir(parents=True, exist_ok=True)
    return d


def _run(cmd: list[str]) -> None:
    r = subprocess.run(cmd, capture_output=True)
    if r.returncode:
        raise PassError(f"{Path(cmd[0]).name} failed: {r.stderr.decode().strip()}")


def shim_object(mpi: Mpi) -> Path:
    """mpi_shim.c compiled by `mpi`'s mpicc, cached by source and compiler."""
    key = hashlib.sha256(SHIM.read_bytes() + mpi.mpicc.encode() + mpi.implementation.encode()).hexdigest()[:16]
    obj = cache_dir() / f"mpi_shim-{mpi.implementation}-{key}.o"
    if not obj.exists():
        tmp = obj.with_suffix(f".{os.getpid()}.o")
        _run([mpi.mpicc, "-O2", "-fPIC", "-c", str(SHIM), "-o", str(tmp)])
        os.replace(tmp, obj)  # several ranks or tools may build it at once
    return obj


def target_cpu(portable: bool = False) -> str:
    """The CPU the code is compiled for: COLL_MPI_CPU (an llc -mcpu name,
    e.g. x86-64-v3 for a cluster's oldest node), else the building host's;
    `portable` (an mpi-exe, built to be copied to other machines): the
    target's generic CPU, which any node runs."""
    return os.environ.get("COLL_MPI_CPU") or ("generic" if portable else "native")


@cache
def default_triple() -> str:
    """llc's default target triple (`llc --version`: the host's)."""
    out = subprocess.run([tool("llc"), "--version"], capture_output=True, text=True).stdout
    m = re.search(r"Default target:\s*(\S+)", out)
    if m is None:
        raise PassError(f"llc --version names no default target: {out.strip()}")
    return m.group(1)


def build(module_op: ir.Operation, out: str | Path, mpi: Mpi, executable_main: str | Path | None = None) -> Path:
    """An LLVM-dialect module -> shared library `out`, linked by mpicc with
    the shim (or an executable, given the object of a `main`)."""
    if executable_main is not None:
        _rename_main(module_op)
    text = host_llvm_ir(module_op)
    with tempfile.TemporaryDirectory() as tmp:
        ll, bc, obj = Path(tmp) / "prog.ll", Path(tmp) / "prog.bc", Path(tmp) / "prog.o"
        ll.write_text(text)
        # opt first: llc alone runs no loop optimizations, so the local work
        # (lowering/cpu/local_math.py) would stay scalar. Both for the
        # building host's CPU, as the CPU route's JIT (AVX-512 there: tanh
        # 0.48 ms on 1024 x 1024 against 2.9 for llc's generic x86-64);
        # an mpi-exe, made to be copied to a cluster, for the generic CPU
        # (a login node's CPU may be newer than the ranks'); COLL_MPI_CPU
        # names one for either.
        cpu = f"-mcpu={target_cpu(portable=executable_main is not None)}"
        _run([tool("opt"), "-O2", f"-mtriple={default_triple()}", cpu, str(ll), "-o", str(bc)])
        _run([tool("llc"), "-O2", cpu, "-filetype=obj", "-relocation-model=pic", str(bc), "-o", str(obj)])
        cmd = [mpi.mpicc, "-o", str(out), str(obj), str(shim_object(mpi))]
        # -Bsymbolic: several programs loaded in one process keep their own
        # (same-named) symbols; -z defs: a symbol no linked library defines
        # (a runtime helper the lowering left) fails here, named, not when
        # every rank loads the library.
        cmd[1:1] = ["-shared", "-Wl,-Bsymbolic", "-Wl,-z,defs"] if executable_main is None else []
        if executable_main is not None:
            cmd.append(str(executable_main))
        cmd.append("-lm")  # local work's math (linalg.exp -> expf)
        for lib in map(Path, linked_libraries(module_op)):  # OpenBLAS (passes/blas_contractions.py)
            cmd += [str(lib), f"-Wl,-rpath,{lib.parent}"]
        try:
            _run(cmd)
        except PassError as e:
            raise PassError(str(e), _caller_of_undefined(module_op, str(e))) from None
    return Path(out)


def _caller_of_undefined(module_op: ir.Operation, message: str) -> ir.Location | None:
    """The location of the first llvm.call of the symbol the linker names
    undefined (the op of the program that needs it, located at its JAX
    line), or None."""
    m = re.search(r"undefined reference to `([^']+)'", message)
    if m is None:
        return None
    for op in find_ops(module_op, "llvm.call"):
        if "callee" in op.attributes and ir.FlatSymbolRefAttr(op.attributes["callee"]).value == m.group(1):
            return op.location
    return None


def _rename_main(module_op: ir.Operation) -> None:
    """An entry named @main (JAX's name) would be the executable's C main:
    it becomes @coll_entry_main (its C interface keeps its name)."""
    for view in module_op.regions[0].blocks[0].operations:
        op = view.operation
        if op.name == "llvm.func" and ir.StringAttr(op.attributes["sym_name"]).value == "main":
            ir.SymbolTable.replace_all_symbol_uses("main", "coll_entry_main", module_op)
            ir.SymbolTable.set_symbol_name(op, "coll_entry_main")
