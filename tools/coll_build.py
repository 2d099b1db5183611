"""coll-build: compile a coll module for the GPU and dump any stage, or
build an MPI program.

  python -m coll.tools.coll_build [FILE|-] --emit=gpu|llvm|ptx|llvmir|so|mpi-exe [-o OUT]
      [--strategy=auto] [--threshold=N] [--device-map=0,0] [--chip=sm_90]
      [--format=auto|isa|bin] [--workspace=alloc|arg] [--streams=device|single]
      [--graph=true|false] [--epilogues=on|off]

The input may be at the collective, explicit or gpu level; what is not
lowered yet is lowered (coll-lower-all-reduce, coll-to-gpu, then
gpu-lower-to-nvvm-pipeline). Stages:
  gpu     gpu dialect: host ops + gpu.module of combine kernels
  llvm    LLVM dialect host + gpu.binary (after gpu-lower-to-nvvm-pipeline)
  ptx     the kernels' PTX
  llvmir  the host's LLVM IR (mlir-translate --mlir-to-llvmir)
  so      the shared library (-o required), linked against
          libmlir_cuda_runtime.so with rpath $ORIGIN (--runtime-dir: where
          to link it from; default the mlir wheel)
  mpi-exe a program for your own `mpirun -n N OUT [--in PREFIX] [--out PREFIX]
          [--repeat K]` (-o required; the mpi route, its contract in
          lowering/mpi/exe.py and docs/running.md, "MPI"): rank r reads the inputs the
          note lists (in place ones too) from PREFIX<r>.bin, raw, exactly;
          every rank checks its file before any runs; --repeat restores the
          inputs before each timed run; outputs are written to PREFIX<r>.bin
          only when every rank succeeded; OUT --layout prints the note
No GPU is needed. Errors are printed as `file:line:col: error: ...`, exit 1.
"""
from __future__ import annotations

import argparse
import re
import subprocess
import sys
from collections.abc import Sequence
from typing import Any, NoReturn

from mlir import ir

from coll.core.errors import PassError
from coll.core.tools import tool
from coll.ir import make_context
from coll.ir.errors import LocatedError, MLIRError
from coll.ir.verifier import verify_or_raise
from coll.ir.walk import find_ops, is_public

from .args import ArgumentParser
from .diagnostics import Collector, diags_of, print_diags, print_warnings, tool_main
from .output import AtomicPath, write_output
from .parse_guard import SourceError, check_input
from .source import parse, read_input

STAGES = ("gpu", "llvm", "ptx", "llvmir", "so", "mpi-exe")


def _parser() -> ArgumentParser:
    p = ArgumentParser(prog="coll-build", description=__doc__.split("\n\n")[0])
    p.add_argument("input", nargs="?", default="-")
    p.add_argument("-o", dest="output", default="-")
    p.add_argument("--emit", choices=STAGES, default="so")
    p.add_argument("--strategy", default="auto")
    p.add_argument("--threshold", type=int, default=None)
    p.add_argument("--device-map", default="")
    p.add_argument("--chip", default="sm_90")
    p.add_argument("--format", default="auto", choices=("auto", "isa", "bin"))
    p.add_argument("--workspace", default="alloc", choices=("alloc", "arg"))
    p.add_argument("--streams", default="device", choices=("device", "single"))
    p.add_argument("--graph", default="true", choices=("true", "false"),
                   help="each call one CUDA graph (default), or op by op")
    p.add_argument("--epilogues", default="on", choices=("on", "off"),
                   help="the elementwise work after a device's last combine in its kernel (default), or apart")
    p.add_argument("--runtime-dir", default=None)
    return p


def nvptx_chips() -> list[str]:
    """The sm_NN names the wheel's NVPTX backend knows (`llc -mcpu=help`),
    sorted by number; [] when llc cannot be asked."""
    try:
        r = subprocess.run([tool("llc"), "-march=nvptx64", "-mcpu=help"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return []
    names = set(re.findall(r"^\s+(sm_\d+[a-z]?)\s+- ", r.stdout + r.stderr, re.M))
    return sorted(names, key=lambda n: (int(re.sub(r"\D", "", n)), n))


def _chip_problem(chip: str) -> str | None:
    if not re.fullmatch(r"sm_\d+[a-z]?", chip):
        return f"--chip must be an NVPTX chip name such as sm_90, got '{chip}'"
    known = nvptx_chips()
    if known and chip not in known:
        return f"--chip: the NVPTX backend does not know '{chip}'; it knows: {', '.join(known)}"
    return None


def build(data: bytes, args: argparse.Namespace, filename: str = "-", ctx: Any = None) -> str | None:
    """Returns the requested stage as text (or writes the library to
    args.output). `data` is the input's bytes (text or bytecode), parsed
    with `filename` in its locations."""
    from coll.lowering import lower  # lazy: coll.lowering adds ~140 ms to coll-build's start-up
    from coll.lowering.gpu import nvvm  # lazy: as coll.lowering

    with ctx or make_context():
        module, _top = parse(data, filename)  # implicit module: an ir.Module
        verify_or_raise(module.operation)
        nested = [op for op in module.body.operations if op.operation.name == "builtin.module"]
        if nested:  # gpu-lower-to-nvvm-pipeline crashes (SIGSEGV) on them
            raise PassError("nested modules are not supported by the GPU route; expected the "
                            "functions at the top level of the module", nested[0].location)
        if not any(op.operation.name in ("func.func", "llvm.func") and len(op.regions[0].blocks) and is_public(op)
                   for op in module.body.operations):  # (an empty library or PTX would build)
            raise PassError("the module has no public func.func with a body to build",
                            ir.Location.file(filename, 1, 1))
        from coll.frontends import FRONTENDS  # lazy: ~40 ms of start-up
        from coll.frontends.shard import partitioned  # lazy: as coll.frontends
        glob = next((f for f in FRONTENDS if f.GLOBAL and f.detect(module.operation)
                     and not partitioned(module.operation)), None)
        if glob is not None:  # global arrays: build the SPMD function on each device's blocks
            from coll.frontends.run.global_arrays import lower as to_spmd  # lazy: ~200 ms of start-up
            from coll.lowering import get  # lazy: as coll.lowering
            text, boundary, _, _ = to_spmd(module, glob, backend=get("mpi" if args.emit == "mpi-exe" else "gpu"))
            module = ir.Module.parse(text)
            print_layouts(boundary, glob, filename)
        if args.emit == "mpi-exe":
            from coll.lowering import mpi  # lazy: as coll.lowering
            # Text with its locations: diagnostics name the input's lines
            # (printed without them, they named the printed module's).
            prog = mpi.compile(module.operation.get_asm(enable_debug_info=True), strategy=args.strategy,
                               threshold=args.threshold, executable=args.output)
            # (a frontend's program: argument i * N + r is device r's block of array i)
            print_rank_slots(prog, filename)
            return None
        if not _is_gpu_level(module.operation):
            lower(module.operation, "gpu", args.strategy, args.threshold,
                  device_map=args.device_map, chip=args.chip,
                  workspace=args.workspace, streams=args.streams, graph=args.graph, epilogues=args.epilogues)
            print_warnings(filename)
        if args.emit == "gpu":
            return str(module)
        fmt = args.format
        if args.emit == "ptx":
            fmt = "isa"
        elif fmt == "auto":
            fmt = "bin" if nvvm.have_ptxas() else "isa"
        nvvm.lower_to_llvm(module.operation, args.chip, fmt)
        if args.emit == "llvm":
            return str(module)
        if args.emit == "ptx":
            return nvvm.ptx_text(module.operation)
        llvm_ir = nvvm.host_llvm_ir(module.operation)
        nvvm.check_streams(llvm_ir)
        if args.emit == "llvmir":
            return llvm_ir
        nvvm.build_shared_library(llvm_ir, args.output, args.runtime_dir)
        return None


def print_layouts(boundary: Any, frontend: Any, filename: str) -> None:
    """Notes (stderr) on what the built program takes in place of a
    frontend's global arrays: each device's block of each of them, in
    the order of the SPMD function's arguments (inputs, then outputs)."""
    n = 1
    for d in boundary.grid:
        n *= d
    grid = "x".join(map(str, boundary.grid))
    lines = [f"{filename}: note: a {frontend.NAME} program on global arrays: @{boundary.entry} is built on "
             f"{n} devices (grid {grid}), each with its block of every array; --emit=so's entry takes argument "
             f"i * {n} + r = device r's block of array i, mpi-exe's rank r its blocks in this order "
             "(coll-run scatters and gathers them for you)"]
    k_in = len(boundary.inputs)
    for i, lay in enumerate(boundary.inputs + boundary.outputs):
        role = f"x{i}" if i < k_in else f"y{i - k_in}"
        name = f" '{lay.name}'" if lay.name else ""
        split = [f"dim {d} over grid axes {axes}" for d, axes in enumerate(lay.split) if axes]
        how = "split: " + ", ".join(split) if split else "the whole array on every device"
        lines.append(f"  array {i} ({role}{name}): {'x'.join(map(str, lay.shape))}x{lay.element}, "
                     f"blocks of {'x'.join(map(str, lay.local))}, {how}")
    print("\n".join(lines), file=sys.stderr)


def print_rank_slots(prog: Any, filename: str) -> None:
    """A note (stderr) on the files of an mpi-exe: what rank r reads from
    PREFIX<r>.bin and writes back (lowering/mpi/exe.py, whose tables the
    executable reads, and which `PROG --layout` prints in full)."""
    from coll.lowering.mpi.exe import FileLayout  # lazy: as coll.lowering
    lines = FileLayout.of(prog).note()
    print("\n".join([f"{filename}: note: {lines[0]}"] + lines[1:]), file=sys.stderr)


def _is_gpu_level(module_op: Any) -> bool:
    """True when no coll op is left to lower."""
    return not find_ops(module_op, lambda name: name.startswith("coll."))


def main(argv: list[str] | None = None) -> NoReturn:
    """The `coll-build` command (tools/diagnostics.py main: exit codes, errors, `| head`)."""
    tool_main("coll-build", _main, argv)


def _main(argv: Sequence[str]) -> int:
    args = _parser().parse_args(argv)
    if args.emit in ("so", "mpi-exe") and args.output == "-":
        return _fail(f"--emit={args.emit} needs -o <output path>")
    problem = _chip_problem(args.chip)
    if problem:
        return _fail(problem)
    try:
        data, filename = read_input(args.input)
    except OSError as e:
        return _fail(f"could not open input file '{args.input}': {e.strerror}")
    try:  # known parser crashes, then a parse in a child process
        check_input(data, filename)
    except SourceError as e:
        print(e.format(), file=sys.stderr)
        return 1
    if args.emit in ("so", "mpi-exe"):
        try:
            with AtomicPath(args.output) as ap:
                final, args.output = args.output, ap.tmp
                rc = _build_and_report(data, args, filename)
                args.output = final
                if rc == 0:
                    ap.commit()
            return rc
        except OSError as e:
            return _fail(f"could not write '{args.output}': {e.strerror}")
    rc, out = _build_and_report(data, args, filename, want_text=True)
    if rc:
        return rc
    return write_output("coll-build", args.output, out if out.endswith("\n") else out + "\n")


def _fail(message: str) -> int:
    print(f"coll-build: error: {message}", file=sys.stderr)
    return 1


def _build_and_report(data: bytes, args: argparse.Namespace, filename: str,
                      want_text: bool = False) -> Any:
    """Runs build(); every failure becomes diagnostics on stderr and rc 1.
    Returns rc, or (rc, text) with want_text."""

    ctx = make_context()
    col = Collector(ctx, filename)
    out, rc = None, 1
    try:
        out = build(data, args, filename, ctx)
        rc = 1 if any(d.severity == "error" for d in col.diags) else 0
    except MLIRError as e:
        col.add_error(e)
    except LocatedError as e:
        col.diags += diags_of(e, filename)
    except (OSError, ValueError) as e:
        print(f"coll-build: error: {e}", file=sys.stderr)
    finally:
        col.detach()
    print_diags(col.diags)
    return (rc, out) if want_text else rc


if __name__ == "__main__":
    main()
