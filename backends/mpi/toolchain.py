"""A per-rank program (coll-to-mpi, then coll-to-cpu for its combines) to
the LLVM dialect (the `mpi` route in core/routes.py: coll-mpi-requests,
upstream passes, coll-mpi-abi), and on to a shared library linked with MPI.

Upstream's `convert-to-llvm` (22.1.8) lowers comm_world, comm_rank,
init/finalize, send/recv and allreduce, for the ABI that the module's
`dlti.map<"MPI:Implementation" = ...>` names; it leaves isend, irecv and
wait in the IR and still succeeds. Those three become calls into
backends/mpi/shim.c (built with the MPI's own mpicc, so it fits either ABI),
before upstream runs. On the OpenMPI ABI upstream names the MPI_Op globals
`ompi_mpi_sum`, where libmpi exports `ompi_mpi_op_sum`: renamed after it.
"""
import hashlib
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from mlir import ir
from mlir.dialects import arith, func, llvm, memref

from ...core.errors import PassError
from ...core.registry import register
from ...ir.kinds import ELEMENTS
from ...ir.walk import find_ops
from ...core.tools import tool
from ..gpu.nvvm import host_llvm_ir

SHIM = Path(__file__).with_name("shim.c")

# MPI_Op names upstream emits for OpenMPI, without libmpi's `op_` infix.
_OMPI_OPS = ("sum", "max", "min", "prod", "land", "band", "lor", "bor", "lxor", "bxor",
             "maxloc", "minloc", "replace", "no_op")


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


# -- isend / irecv / wait -> shim calls --------------------------------------

_SHIM_CALLS = {"mpi.isend": "coll_mpi_isend", "mpi.irecv": "coll_mpi_irecv", "mpi.wait": "coll_mpi_wait"}


def _pointer_and_bytes(buf, op):
    """(!llvm.ptr to the first element, i64 byte count) of a contiguous
    memref: a message is the buffer's bytes."""
    m = ir.MemRefType(buf.type)
    strides, _ = m.get_strides_and_offset()
    expect, contiguous = 1, m.has_static_shape
    for d, s in reversed(list(zip(m.shape, strides))):
        contiguous = contiguous and (d == 1 or s == expect)
        expect *= d
    if not contiguous:
        raise PassError(f"{op.name}: the buffer {m} is not a contiguous static memref; "
                        "expected one message per contiguous buffer or slice", op.location)
    element = ELEMENTS.get(str(m.element_type))
    if element is None:
        raise PassError(f"{op.name}: unsupported element type {m.element_type}", op.location)
    idx, i64 = ir.IndexType.get(), ir.IntegerType.get_signless(64)
    base = memref.ExtractAlignedPointerAsIndexOp(buf).result
    meta = memref.ExtractStridedMetadataOp(buf)
    size = arith.ConstantOp(idx, element.bytes).result
    addr = arith.AddIOp(base, arith.MulIOp(meta.offset, size).result).result
    ptr = llvm.IntToPtrOp(llvm.PointerType.get(), arith.IndexCastOp(i64, addr).result).result
    return ptr, arith.ConstantOp(i64, expect * element.bytes).result


def lower_requests(module_op):
    """mpi.isend/irecv/wait -> func.call of the shim; requests are !llvm.ptr."""
    ops = find_ops(module_op, lambda n: n in _SHIM_CALLS)
    if not ops:
        return
    ptr, i32, i64 = llvm.PointerType.get(), ir.IntegerType.get_signless(32), ir.IntegerType.get_signless(64)
    requests = {}
    for op in ops:
        with ir.InsertionPoint(op), op.location:
            if op.name == "mpi.wait":
                func.CallOp([i32], _SHIM_CALLS[op.name], [requests[op.operands[0]]])
                continue
            buf, tag, peer = op.operands[0], op.operands[1], op.operands[2]
            p, n = _pointer_and_bytes(buf, op)
            call = func.CallOp([ptr], _SHIM_CALLS[op.name], [p, n, peer, tag])
            requests[op.results[len(op.results) - 1]] = call.result
    for op in reversed(ops):  # waits (the users) first
        op.erase()
    body = module_op.regions[0].blocks[0]
    with ir.InsertionPoint(body), module_op.location:
        for name, args, res in (("coll_mpi_isend", [ptr, i64, i32, i32], [ptr]),
                                ("coll_mpi_irecv", [ptr, i64, i32, i32], [ptr]),
                                ("coll_mpi_wait", [ptr], [i32])):
            f = func.FuncOp(name, ir.FunctionType.get(args, res))
            f.attributes["sym_visibility"] = ir.StringAttr.get("private")


def fix_openmpi_ops(module_op):
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


def implementation_of(module_op):
    """The module's dlti.map MPI:Implementation ('OpenMPI', 'MPICH'), or None."""
    attrs = module_op.attributes
    text = str(attrs["dlti.map"]) if "dlti.map" in attrs else ""
    return "OpenMPI" if '"OpenMPI"' in text else "MPICH" if '"MPICH"' in text else None


@register("coll-mpi-requests",
          "Lower mpi.isend/irecv/wait (which upstream convert-to-llvm leaves in the IR) to calls into "
          "the MPI shim (backends/mpi/shim.c); requests become !llvm.ptr", anchor="builtin.module")
def mpi_requests(module_op):
    with module_op.context, module_op.location:
        if implementation_of(module_op) is None and find_ops(module_op, lambda n: n.startswith("mpi.")):
            raise PassError('the module needs dlti.map = #dlti.map<"MPI:Implementation" = "OpenMPI"> '
                            '(or "MPICH"): upstream picks the MPI ABI from it', module_op.location)
        lower_requests(module_op)


def static_scratch(module_op):
    """Every coll.alloc of a per-rank program -> a buffer of its own in the
    module's static memory (memref.global, uninitialized: zero pages until
    touched, and only the rank whose case uses one touches it). MPI
    libraries keep their buffers too: a fresh malloc per call would fault
    in every page of a message received into it each call (measured here at
    under 1 GB/s, slower than the message itself). Scratch is only read
    after it is written (coll-check-order), so what a call leaves in it is
    never seen. A rank runs one call at a time. i1 scratch stays a
    coll.alloc: coll-to-cpu stores i1 as i8 by rewriting the types it
    sees, which a global's would escape."""
    allocs = [op for op in find_ops(module_op, "coll.alloc")
              if str(ir.MemRefType(op.results[0].type).element_type) != "i1"]
    body = module_op.regions[0].blocks[0]
    for i, op in enumerate(allocs):
        t = ir.MemRefType(op.results[0].type)
        plain = ir.MemRefType.get(t.shape, t.element_type)
        name = f"coll_scratch_{i}"
        with ir.InsertionPoint.at_block_begin(body), op.location:
            memref.GlobalOp(name, ir.TypeAttr.get(plain), sym_visibility="private",
                            initial_value=ir.UnitAttr.get(),
                            alignment=ir.IntegerAttr.get(ir.IntegerType.get_signless(64), 64))
        with ir.InsertionPoint(op), op.location:
            buf = memref.get_global(plain, name)
            op.results[0].replace_all_uses_with(memref.memory_space_cast(t, buf))
        op.erase()


@register("coll-mpi-static-scratch",
          "Per-rank programs: every coll.alloc becomes a static buffer (memref.global), kept across "
          "calls as MPI keeps its own, instead of a fresh malloc whose pages each call faults in",
          anchor="builtin.module")
def mpi_static_scratch(module_op):
    with module_op.context, module_op.location:
        static_scratch(module_op)


@register("coll-mpi-abi",
          "After convert-to-llvm: check that no mpi op is left, and fix upstream's OpenMPI symbol "
          "names (ompi_mpi_sum -> ompi_mpi_op_sum)", anchor="builtin.module")
def mpi_abi(module_op):
    with module_op.context, module_op.location:
        left = find_ops(module_op, lambda n: n.startswith(("mpi.", "coll.")))
        if left:
            raise PassError(f"'{left[0].name}' was not lowered to the LLVM dialect", left[0].location)
        if implementation_of(module_op) == "OpenMPI":
            fix_openmpi_ops(module_op)


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
    text = host_llvm_ir(module_op)
    with tempfile.TemporaryDirectory() as tmp:
        ll, obj = Path(tmp) / "prog.ll", Path(tmp) / "prog.o"
        ll.write_text(text)
        _run([tool("llc"), "-O2", "-filetype=obj", "-relocation-model=pic", str(ll), "-o", str(obj)])
        cmd = [mpi.mpicc, "-o", str(out), str(obj), str(shim_object(mpi))]
        # -Bsymbolic: several programs loaded in one process keep their own
        # (same-named) symbols.
        cmd[1:1] = ["-shared", "-Wl,-Bsymbolic"] if executable_main is None else []
        if executable_main is not None:
            cmd.append(str(executable_main))
        _run(cmd)
    return Path(out)


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
        f"typedef struct {{ void *allocated, *aligned; int64_t offset"
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
