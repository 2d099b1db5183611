"""coll-build: compile a coll module for the GPU and dump any stage, or
build an MPI program.

  python -m coll.tools.coll_build [FILE|-] --emit=gpu|llvm|ptx|llvmir|so|mpi-exe [-o OUT]
      [--strategy=auto] [--threshold=N] [--device-map=0,0] [--chip=sm_90]
      [--format=auto|isa|bin] [--workspace=alloc|arg] [--streams=device|single]

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
          [--repeat K]` (-o required; the mpi route, runtime/mpi.py): rank r
          reads its inputs from PREFIX<r>.bin (raw, concatenated; default:
          rank + 1 in every element), writes its outputs to PREFIX<r>.bin;
          started on the wrong number of ranks it exits 1 before any message
No GPU is needed. Errors are printed as `file:line:col: error: ...`, exit 1.
"""
import argparse
import sys

STAGES = ("gpu", "llvm", "ptx", "llvmir", "so", "mpi-exe")


def _parser():
    p = argparse.ArgumentParser(prog="coll-build", description=__doc__.split("\n\n")[0])
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
    p.add_argument("--runtime-dir", default=None)
    return p


def build(text, args, filename="-"):
    """Returns the requested stage as text (or writes the library)."""
    from mlir import ir

    from coll.ir import make_context
    from coll.ir.verifier import verify_or_raise
    from coll.lowering import nvvm
    from coll.lowering.route import lower

    if args.emit == "mpi-exe":
        from coll.runtime import mpi
        mpi.compile(text, strategy=args.strategy, threshold=args.threshold, executable=args.output)
        return None
    with make_context():
        module = ir.Module.parse(text)
        verify_or_raise(module.operation)
        if not _is_gpu_level(module.operation):
            lower(module.operation, "gpu", args.strategy, args.threshold,
                  device_map=args.device_map, chip=args.chip,
                  workspace=args.workspace, streams=args.streams)
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


def _is_gpu_level(module_op):
    """True when no coll op is left to lower."""
    from coll.ir.walk import find_ops
    return not find_ops(module_op, lambda name: name.startswith("coll."))


def main(argv=None):
    args = _parser().parse_args(argv)
    if args.emit in ("so", "mpi-exe") and args.output == "-":
        print(f"coll-build: error: --emit={args.emit} needs -o <output path>", file=sys.stderr)
        return 1
    text = sys.stdin.read() if args.input == "-" else open(args.input).read()
    from mlir import ir

    from coll.ir.verifier import VerifyError
    from coll.core.errors import PassError
    from .diagnostics import from_location
    try:
        out = build(text, args, args.input)
    except ir.MLIRError as e:
        for d in e.error_diagnostics:
            print(f"{args.input}: error: {d.message}", file=sys.stderr)
        return 1
    except VerifyError as e:
        for loc, msg in e.findings:
            print(from_location(loc, msg, args.input).format(), file=sys.stderr)
        return 1
    except PassError as e:
        if e.location is not None:
            print(from_location(e.location, str(e), args.input).format(), file=sys.stderr)
        else:
            print(f"coll-build: error: {e}", file=sys.stderr)
        return 1
    except (FileNotFoundError, ValueError) as e:
        print(f"coll-build: error: {e}", file=sys.stderr)
        return 1
    if out is not None:
        if args.output == "-":
            sys.stdout.write(out if out.endswith("\n") else out + "\n")
        else:
            with open(args.output, "w") as f:
                f.write(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
