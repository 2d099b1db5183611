"""coll-gen: prints a collective-level module for the common case.

  coll-gen all-reduce --devices 4 --shape 4x100 --dtype f32 --kind sum
                      [--to-device 2] [--strategy ring] [--threshold N] [--in-place]
  coll-gen reduce-scatter --devices 4 --shape 8x6 --kind sum --axis 0
  coll-gen all-gather     --devices 4 --shape 8x6 --axis 1
  coll-gen reduce         --devices 4 --shape 8x6 --kind max --root 2 [--in-place]
  coll-gen broadcast      --devices 4 --shape 8x6 --root 0 [--in-place]
  coll-gen all-to-all     --devices 4 --shape 8x8 --split-axis 0 --concat-axis 1
  coll-gen permute        --devices 4 --shape 8 [--pairs 0:1,1:2 | shift:K | none]
each with [--strategy S] (the op's strategies, or auto).
"""
import sys
from collections.abc import Sequence
from typing import NoReturn

from mlir import ir

from coll.collectives import COLLECTIVES
from coll.ir import KINDS, MAX_DEVICES, make_context, peers
from coll.ir.generate import SYMBOL_NAME, GenerateError, collective_module, parse_shape
from coll.ir.ops import ORDERS
from coll.ir.types import ELEMENT_TYPES

from .args import ArgumentParser
from .diagnostics import tool_main

# subcommand -> op class (its options beyond the common ones: cls.GEN)
COMMANDS = {cls.short_name().replace("_", "-"): cls for cls in COLLECTIVES}


def _parser() -> ArgumentParser:
    p = ArgumentParser(prog="coll-gen", description="Print a collective-level coll module.")
    sub = p.add_subparsers(dest="collective", required=True)
    for command, cls in COMMANDS.items():
        a = sub.add_parser(command, help=(cls.__doc__ or "").strip().splitlines()[0])
        a.add_argument("--devices", type=int, required=True, help=f"number of devices, 1..{MAX_DEVICES}")
        a.add_argument("--shape", default="1024", help="static shape, e.g. 4x100 (default 1024)")
        a.add_argument("--dtype", default="f32", choices=ELEMENT_TYPES)
        a.add_argument("--strategy", default=None, choices=("auto",) + cls.STRATEGIES)
        a.add_argument("--name", default=cls.short_name(), help="function name")
        opts = cls.GEN
        if "kind" in opts:
            a.add_argument("--kind", default="sum", choices=KINDS)
            a.add_argument("--order", default=None, choices=ORDERS,
                           help="the order contract (default: none written, canonical)")
        if "to_device" in opts:
            a.add_argument("--to-device", type=int, default=None, help="single-device output on this device")
            a.add_argument("--peer-access", action="store_true",
                           help="the devices address each other's memory (module attribute coll.peer_access)")
        if "threshold" in opts:
            a.add_argument("--threshold", type=int, default=None, help="elements above which auto picks ring")
        if "root" in opts:
            a.add_argument("--root", type=int, required=True, help="the root device (reduce: may be outside the group)")
        if "axis" in opts:
            a.add_argument("--axis", type=int, default=0, help="the scatter/gather axis (default 0)")
        for key in (k for k in opts if k in cls.AXES):  # axes by their attribute names (all_to_all's)
            a.add_argument(f"--{key.replace('_', '-')}", type=int, default=0)
        if "in_place" in opts:
            a.add_argument("--in-place", action="store_true", help="outputs are the inputs")
        for key, meaning in cls.ARRAYS.items():  # the collective's own arrays (cls.parse_array reads them)
            a.add_argument(f"--{key.replace('_', '-')}", default=None, help=f"{meaning}; "
                           f"{(cls.parse_array.__doc__ or '').split(':', 1)[-1].strip()}")
    return p


def run(argv: Sequence[str]) -> int:
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
    if not SYMBOL_NAME.fullmatch(args.name):
        print(f"coll-gen: error: invalid --name '{args.name}'; expected a symbol name like all_reduce", file=sys.stderr)
        return 1
    for flag, v in (("--to-device", getattr(args, "to_device", None)),
                    ("--threshold", getattr(args, "threshold", None)),
                    ("--root", getattr(args, "root", None))):
        if v is not None and not -2 ** 63 <= v < 2 ** 63:
            print(f"coll-gen: error: {flag} {v} does not fit in 64 bits", file=sys.stderr)
            return 1
    op = COMMANDS[args.collective].short_name()
    cls = COMMANDS[args.collective]
    axes = {k: getattr(args, k) for k in cls.AXES if hasattr(args, k)}
    for key, a in [("axis", getattr(args, "axis", None)), *axes.items()]:
        if a is not None and not 0 <= a < len(shape):
            print(f"coll-gen: error: --{key.replace('_', '-')} {a} is out of range for shape "
                  f"'{args.shape}'; expected 0 <= axis < {len(shape)}", file=sys.stderr)
            return 1
    arrays = {}
    for key in cls.ARRAYS:
        given = getattr(args, key, None)
        if given is not None:
            try:
                arrays[key] = cls.parse_array(key, given, args.devices)
            except ValueError as e:
                print(f"coll-gen: error: {e}", file=sys.stderr)
                return 1
    with make_context():
        try:
            text = collective_module(
                op, args.devices, shape, args.dtype, kind=getattr(args, "kind", None) or "sum",
                strategy=args.strategy, root=getattr(args, "root", None), axis=getattr(args, "axis", None),
                **axes,
                in_place=getattr(args, "in_place", False), to_device=getattr(args, "to_device", None),
                threshold=getattr(args, "threshold", None), name=args.name, order=getattr(args, "order", None),
                **arrays)
            if getattr(args, "peer_access", False):
                m = ir.Module.parse(text)
                peers.enable(m.operation)
                text = str(m)
        except GenerateError as e:  # the verifier's findings on the module: by the flag they are about
            for msg in e.findings:
                print(f"coll-gen: error: {msg} ({_flag_of(msg)})", file=sys.stderr)
            return 1
        except ValueError as e:
            print(f"coll-gen: error: {e}", file=sys.stderr)
            return 1
    try:
        sys.stdout.write(text)
        sys.stdout.flush()
    except OSError as e:
        print(f"coll-gen: error: could not write the module to stdout: {e.strerror or e}", file=sys.stderr)
        return 1
    return 0


def _flag_of(message: str) -> str | None:
    """The flag a verifier finding on the generated module is about."""
    for word, flag in (("pair", "--pairs"), ("destination", "--to-device"), ("threshold", "--threshold"),
                       ("bytes", "--shape"), ("kind", "--kind"), ("element type", "--dtype"),
                       ("strategy", "--strategy")):
        if word in message:
            return flag
    return "--devices"


def main(argv: list[str] | None = None) -> NoReturn:
    """The `coll-gen` command (tools/diagnostics.py main: exit codes, errors, `| head`)."""
    tool_main("coll-gen", run, argv)


if __name__ == "__main__":
    main()
