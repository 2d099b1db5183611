"""The MPI installation (find), and a per-rank program in the LLVM dialect
(the `mpi` route: backends/mpi/__init__.py) on to a shared library or an
executable linked with the MPI's own mpicc, with the shim (shim.c) that
coll-mpi-requests calls into (requests.py)."""
import hashlib
import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from mlir import ir

from ...core.errors import PassError
from ...ir.kinds import ELEMENTS
from ...ir.walk import find_ops
from ...core.tools import tool
from ..gpu.nvvm import host_llvm_ir

SHIM = Path(__file__).with_name("shim.c")

# -- the MPI installation ----------------------------------------------------

@dataclass(frozen=True)
class Mpi:
    implementation: str   # "OpenMPI" or "MPICH": the dlti.map value
    mpirun: str
    mpicc: str


@lru_cache(maxsize=None)
def find():
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

def cache_dir():
    d = Path(os.environ.get("COLL_CACHE", Path.home() / ".cache" / "coll")) / "mpi"
    d.mkdir(parents=True, exist_ok=True)
    return d


def _run(cmd):
    r = subprocess.run(cmd, capture_output=True)
    if r.returncode:
        raise PassError(f"{Path(cmd[0]).name} failed: {r.stderr.decode().strip()}")


def shim_object(mpi):
    """mpi_shim.c compiled by `mpi`'s mpicc, cached by source and compiler."""
    key = hashlib.sha256(SHIM.read_bytes() + mpi.mpicc.encode() + mpi.implementation.encode()).hexdigest()[:16]
    obj = cache_dir() / f"mpi_shim-{mpi.implementation}-{key}.o"
    if not obj.exists():
        tmp = obj.with_suffix(f".{os.getpid()}.o")
        _run([mpi.mpicc, "-O2", "-fPIC", "-c", str(SHIM), "-o", str(tmp)])
        os.replace(tmp, obj)  # several ranks or tools may build it at once
    return obj


def build(module_op, out, mpi, executable_main=None):
    """An LLVM-dialect module -> shared library `out`, linked by mpicc with
    the shim (or an executable, given the object of a `main`)."""
    if executable_main is not None:
        _rename_main(module_op)
    text = host_llvm_ir(module_op)
    with tempfile.TemporaryDirectory() as tmp:
        ll, obj = Path(tmp) / "prog.ll", Path(tmp) / "prog.o"
        ll.write_text(text)
        _run([tool("llc"), "-O2", "-filetype=obj", "-relocation-model=pic", str(ll), "-o", str(obj)])
        cmd = [mpi.mpicc, "-o", str(out), str(obj), str(shim_object(mpi))]
        # -Bsymbolic: several programs loaded in one process keep their own
        # (same-named) symbols; -z defs: a symbol no linked library defines
        # (a runtime helper the lowering left) fails here, named, not when
        # every rank loads the library.
        cmd[1:1] = ["-shared", "-Wl,-Bsymbolic", "-Wl,-z,defs"] if executable_main is None else []
        if executable_main is not None:
            cmd.append(str(executable_main))
        cmd.append("-lm")  # local work's math (linalg.exp -> expf)
        try:
            _run(cmd)
        except PassError as e:
            raise PassError(str(e), _caller_of_undefined(module_op, str(e))) from None
    return Path(out)


def _caller_of_undefined(module_op, message):
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


def _rename_main(module_op):
    """An entry named @main (JAX's name) would be the executable's C main:
    it becomes @coll_entry_main (its C interface keeps its name)."""
    for op in module_op.regions[0].blocks[0].operations:
        op = op.operation
        if op.name == "llvm.func" and ir.StringAttr(op.attributes["sym_name"]).value == "main":
            ir.SymbolTable.replace_all_symbol_uses("main", "coll_entry_main", module_op)
            ir.SymbolTable.set_symbol_name(op, "coll_entry_main")


# -- an executable for the user's own mpirun ---------------------------------

_C_TYPES = {"f16": "uint16_t", "bf16": "uint16_t", "f32": "float", "f64": "double", "i1": "uint8_t",
            "i8": "int8_t", "i16": "int16_t", "i32": "int32_t", "i64": "int64_t"}


def main_source(entry, ranks, rank_specs, rank_inputs, given=None, max_tag=0):
    """C `main` for a per-rank program: MPI_Init, a group-size and tag check
    before any message, this rank's buffers (its first `given` (default
    `rank_inputs`) slots from PREFIX<rank>.bin, else rank + 1 in every
    element; f16/bf16: zero), one run, `--repeat` timed runs after
    barriers, the written slots (from `rank_inputs` on) to PREFIX<rank>.bin,
    MPI_Finalize. `rank_specs`: [(shape, element)] of one rank's slots (a
    rank without a buffer in a slot, as a rooted op's non-roots, reads and
    writes its placeholder's bytes there too)."""
    given = rank_inputs if given is None else given
    dims = sorted({len(shape) for shape, _ in rank_specs})
    structs = "\n".join(
        "typedef struct { void *allocated, *aligned; int64_t offset"
        + (f", sizes[{d}], strides[{d}]" if d else "") + f"; }} memref{d};" for d in dims)
    params = ", ".join(f"memref{len(s)} *" for s, _ in rank_specs)
    lines = []
    for i, (shape, elem) in enumerate(rank_specs):
        n = 1
        for d in shape:
            n *= d
        lines.append(f"  memref{len(shape)} m{i} = {{0}};")
        lines.append(f"  bytes[{i}] = {n * ELEMENTS[elem].bytes}LL;")
        lines.append(f"  buf[{i}] = m{i}.allocated = m{i}.aligned = calloc(1, bytes[{i}] ? bytes[{i}] : 1);")
        stride = 1
        for j in reversed(range(len(shape))):
            lines.append(f"  m{i}.sizes[{j}] = {shape[j]}; m{i}.strides[{j}] = {stride};")
            stride *= shape[j]
        if i < given and elem not in ("f16", "bf16"):
            value = "(rank + 1) & 1" if elem == "i1" else "rank + 1"
            lines.append(f"  for (int64_t e = 0; e < {n}; e++) (({_C_TYPES[elem]} *)buf[{i}])[e] = "
                         f"({_C_TYPES[elem]})({value});")
    k = len(rank_specs)
    setup = "\n".join(lines)
    args = ", ".join(f"&m{i}" for i in range(k))
    return f"""/* Generated by coll-build --emit=mpi-exe for @{entry} on {ranks} ranks. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
{structs}
int32_t coll_mpi_init(void);
int32_t coll_mpi_finalize(void);
int32_t coll_mpi_rank(void);
int32_t coll_mpi_size(void);
int32_t coll_mpi_barrier(void);
int32_t coll_mpi_tag_ub(void);
double coll_mpi_wtime(void);
void _mlir_ciface_{entry}({params});

static int io(const char *prefix, int rank, void **buf, long long *bytes, int first, int last, int out) {{
  char path[4096];
  snprintf(path, sizeof path, "%s%d.bin", prefix, rank);
  FILE *f = fopen(path, out ? "wb" : "rb");
  if (!f) {{ fprintf(stderr, "rank %d: cannot open %s\\n", rank, path); return 1; }}
  for (int i = first; i < last; i++)
    if ((out ? fwrite(buf[i], 1, bytes[i], f) : fread(buf[i], 1, bytes[i], f)) != (size_t)bytes[i]) {{
      fprintf(stderr, "rank %d: %s holds fewer bytes than rank %d's buffers\\n", rank, path, rank);
      fclose(f); return 1;
    }}
  fclose(f);
  return 0;
}}

int main(int argc, char **argv) {{
  const char *in = NULL, *out = NULL;
  int repeat = 0;
  for (int a = 1; a + 1 < argc; a += 2) {{
    if (!strcmp(argv[a], "--in")) in = argv[a + 1];
    else if (!strcmp(argv[a], "--out")) out = argv[a + 1];
    else if (!strcmp(argv[a], "--repeat")) repeat = atoi(argv[a + 1]);
  }}
  coll_mpi_init();
  int rank = coll_mpi_rank(), size = coll_mpi_size();
  if (size != {ranks}) {{
    if (rank == 0)
      fprintf(stderr, "%s: error: built for {ranks} ranks, started on %d; nothing was sent\\n", argv[0], size);
    coll_mpi_finalize();
    return 1;
  }}
  if (coll_mpi_tag_ub() < {max_tag}) {{
    if (rank == 0)
      fprintf(stderr, "%s: error: the program uses MPI tags up to {max_tag}, above this MPI's MPI_TAG_UB %d; "
              "nothing was sent\\n", argv[0], coll_mpi_tag_ub());
    coll_mpi_finalize();
    return 1;
  }}
  void *buf[{k}];
  long long bytes[{k}];
{setup}
  if (in && io(in, rank, buf, bytes, 0, {given}, 0)) return 1;
  _mlir_ciface_{entry}({args});
  double worst = 0;
  for (int r = 0; r < repeat; r++) {{
    coll_mpi_barrier();
    double t0 = coll_mpi_wtime();
    _mlir_ciface_{entry}({args});
    double t = coll_mpi_wtime() - t0;
    if (t > worst) worst = t;
  }}
  if (repeat && rank == 0) printf("rank 0: slowest of %d runs %.3f ms\\n", repeat, worst * 1e3);
  if (out && io(out, rank, buf, bytes, {rank_inputs}, {k}, 1)) return 1;
  coll_mpi_finalize();
  return 0;
}}
"""
