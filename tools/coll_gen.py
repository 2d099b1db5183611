"""coll-gen: prints a collective-level module for the common case.

  coll-gen all-reduce --devices 4 --shape 4x100 --dtype f32 --kind sum
                      [--to-device 2] [--strategy ring] [--threshold N]
"""
import argparse
import re
import sys

from coll.ir import KINDS, MAX_DEVICES, STRATEGIES
from coll.ir.types import ELEMENT_TYPES


def _parser():
    p = argparse.ArgumentParser(prog="coll-gen", description="Print a collective-level coll module.")
    sub = p.add_subparsers(dest="collective", required=True)
    a = sub.add_parser("all-reduce", help="an allreduce over N devices")
    a.add_argument("--devices", type=int, required=True, help=f"number of devices, 1..{MAX_DEVICES}")
    a.add_argument("--shape", default="1024", help="static shape, e.g. 4x100 (default 1024)")
    a.add_argument("--dtype", default="f32", choices=ELEMENT_TYPES)
    a.add_argument("--kind", default="sum", choices=KINDS)
    a.add_argument("--to-device", type=int, default=None, help="single-device output on this device")
    a.add_argument("--strategy", default=None, choices=STRATEGIES)
    a.add_argument("--threshold", type=int, default=None, help="elements above which auto picks ring")
    a.add_argument("--name", default="all_reduce", help="function name")
    a.add_argument("--peer-access", action="store_true",
                   help="the devices address each other's memory (module attribute coll.peer_access)")
    return p


def run(argv):
    from coll.ir import make_context
    from coll.ir.generate import all_reduce_module, parse_shape
    from coll.ir.verifier import verify
    from mlir import ir
    args = _parser().parse_args(argv)
    if not 1 <= args.devices <= MAX_DEVICES:
        print(f"coll-gen: error: --devices must be in 1..{MAX_DEVICES}, got {args.devices}", file=sys.stderr)
        return 1
    try:
        shape = parse_shape(args.shape)
    except ValueError:
        print(f"coll-gen: error: invalid --shape '{args.shape}'; expected dimensions like 4x100", file=sys.stderr)
        return 1
    if any(d >= 2 ** 62 for d in shape):
        print(f"coll-gen: error: invalid --shape '{args.shape}': a dimension is 2^62 or more", file=sys.stderr)
        return 1
    if not re.fullmatch(r"[A-Za-z_][\w$.]*", args.name):
        print(f"coll-gen: error: invalid --name '{args.name}'; expected a symbol name like all_reduce", file=sys.stderr)
        return 1
    for flag, v in (("--to-device", args.to_device), ("--threshold", args.threshold)):
        if v is not None and not -2 ** 63 <= v < 2 ** 63:
            print(f"coll-gen: error: {flag} {v} does not fit in 64 bits", file=sys.stderr)
            return 1
    with make_context():
        text = all_reduce_module(args.devices, shape, args.dtype, args.kind, args.to_device,
                                 args.strategy, args.threshold, args.name, args.peer_access)
        findings = verify(ir.Module.parse(text).operation)
    if findings:
        for _, msg in findings:
            print(f"coll-gen: error: {msg} ({_flag_of(msg)})", file=sys.stderr)
        return 1
    try:
        sys.stdout.write(text)
        sys.stdout.flush()
    except OSError as e:
        print(f"coll-gen: error: could not write the module to stdout: {e.strerror or e}", file=sys.stderr)
        return 1
    return 0


def _flag_of(message):
    """The flag a verifier finding on the generated module is about."""
    for word, flag in (("destination", "--to-device"), ("threshold", "--threshold"), ("bytes", "--shape"),
                       ("kind", "--kind"), ("element type", "--dtype"), ("strategy", "--strategy")):
        if word in message:
            return flag
    return "--devices"


def main():
    try:
        code = run(sys.argv[1:])
    except Exception as e:  # noqa: BLE001 - never a traceback
        print(f"coll-gen: error: internal error: {type(e).__name__}: {e}", file=sys.stderr)
        code = 1
    try:
        sys.stdout.flush()
    except OSError:
        pass
    sys.exit(code)


if __name__ == "__main__":
    main()
