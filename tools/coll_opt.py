"""coll-opt: like mlir-opt, with the coll dialect and passes registered.

  coll-opt [FILE|-] [-o OUT] [--pass-pipeline='builtin.module(...)']
           [--split-input-file] [--verify-diagnostics]
           [--mlir-print-ir-after-all] [--mlir-timing] [--<pass>[=opts] ...]

Errors are MLIR diagnostics (file:line:col: error: ...) and exit code 1;
nothing is written to -o unless every step succeeded.
"""
import argparse
import sys

SPLIT_MARKER = "// -----"


def _parser():
    p = argparse.ArgumentParser(
        prog="coll-opt", description="MLIR optimizer driver with the coll dialect and passes.",
        epilog="Passes may also be given one by one as --<pass-name>[=<options>], "
               "e.g. --coll-lower-all-reduce='strategy=ring' --canonicalize. "
               "--list-passes prints the coll passes.")
    p.add_argument("input", nargs="?", default="-", help="input file (default: stdin)")
    p.add_argument("-o", dest="output", default="-", help="output file (default: stdout)")
    p.add_argument("--pass-pipeline", default="", help="textual pipeline, e.g. 'builtin.module(coll-lower-all-reduce,cse)'")
    p.add_argument("--split-input-file", action="store_true", help=f"process chunks separated by '{SPLIT_MARKER}' independently")
    p.add_argument("--verify-diagnostics", action="store_true", help="check diagnostics against expected-* annotations")
    p.add_argument("--mlir-print-ir-after-all", action="store_true", help="print the IR after every pass (stderr)")
    p.add_argument("--mlir-print-ir-before-all", action="store_true", help="print the IR before every pass (stderr)")
    p.add_argument("--mlir-timing", action="store_true", help="print pass timing (stderr)")
    p.add_argument("--mlir-print-op-generic", action="store_true", help="print operations in generic form")
    p.add_argument("--mlir-print-debuginfo", action="store_true", help="print locations")
    p.add_argument("--list-passes", action="store_true", help="list the coll passes and their options")
    return p


def _read(path):
    from .parse_guard import read_source
    return read_source(path)


def _chunks(text, split):
    """[(chunk text padded so line numbers match the file, first line)]."""
    if not split:
        return [(text, 1)]
    out, start, cur = [], 1, []
    lines = text.split("\n")
    for i, line in enumerate(lines):
        if line.strip() == SPLIT_MARKER:
            out.append(("\n" * (start - 1) + "\n".join(cur), start))
            cur, start = [], i + 2
        else:
            cur.append(line)
    out.append(("\n" * (start - 1) + "\n".join(cur), start))
    return out


def _extra_pass_flags(extra):
    """['--canonicalize', '--coll-lower-all-reduce=strategy=ring'] ->
    ['canonicalize', 'coll-lower-all-reduce{strategy=ring}']."""
    elems = []
    for a in extra:
        if not a.startswith("--") or len(a) < 3:
            raise ValueError(f"unexpected argument '{a}'")
        name, eq, opts = a[2:].partition("=")
        opts = opts.strip("'\"")
        elems.append(f"{name}{{{opts}}}" if eq and opts else name)
    return elems


class Failed(Exception):
    pass


def process(text, filename, pipeline, args):
    """Runs one chunk. Returns (output text or None, diags)."""
    from mlir import ir
    from coll.ir import make_context
    from coll.ir.verifier import verify
    from coll.core.pipeline import PipelineError, build
    from .diagnostics import Collector, Diag, from_location
    from .parse_guard import SourceError, check_source

    ctx = make_context()
    col = Collector(ctx, filename)
    try:
        with ctx:
            try:
                pm = build(pipeline)
            except PipelineError as e:
                return None, [Diag("error", f"invalid pass pipeline: {e}", "coll-opt")]
            if args.mlir_print_ir_after_all or args.mlir_print_ir_before_all:
                pm.enable_ir_printing(print_before_all=args.mlir_print_ir_before_all,
                                      print_after_all=args.mlir_print_ir_after_all)
            if args.mlir_timing:
                pm.enable_timing()
            try:
                check_source(text, filename)
            except SourceError as e:  # would abort the process inside the parser
                return None, [Diag("error", m, f, line, c) for f, line, c, m in e.findings]
            try:
                module = ir.Module.parse(text)
            except ir.MLIRError as e:
                col.add_error(e)
                return None, col.diags
            findings = verify(module.operation)
            if findings:
                return None, col.diags + [from_location(l, m, filename) for l, m in findings]
            try:
                pm.run(module.operation)
            except ir.MLIRError as e:
                col.add_error(e)
                return None, col.diags
            if any(d.severity == "error" for d in col.diags):
                return None, col.diags
            out = module.operation.get_asm(print_generic_op_form=args.mlir_print_op_generic,
                                           enable_debug_info=args.mlir_print_debuginfo)
            return out, col.diags
    finally:
        col.detach()


def _write(path, text):
    if path == "-":
        sys.stdout.write(text)
        return
    from .output import write_atomically
    write_atomically(path, text)


def run(argv):
    from .diagnostics import check_expectations, parse_expectations, print_diags
    args, extra = _parser().parse_known_args(argv)
    if args.list_passes:
        from coll.core.registry import load_all
        for name, info in sorted(load_all().items()):
            opts = " ".join(f"{k}={d}" for k, (_, d) in info.options.items())
            print(f"  --{name}{'  {' + opts + '}' if opts else ''}\n      {info.description}")
        return 0
    try:
        elems = _extra_pass_flags(extra)
    except ValueError as e:
        print(f"coll-opt: error: {e}", file=sys.stderr)
        return 1
    pipeline = args.pass_pipeline
    if elems:
        if pipeline:
            print("coll-opt: error: give passes either with --pass-pipeline or as --<pass> flags, not both", file=sys.stderr)
            return 1
        pipeline = "builtin.module(" + ",".join(elems) + ")"
    from .parse_guard import SourceError
    try:
        text, filename = _read(args.input)
    except SourceError as e:
        f, line, _, msg = e.findings[0]
        print(e.format() if line else f"coll-opt: error: {msg.replace('input file', f'input file {f!r}')}",
              file=sys.stderr)
        return 1

    outputs, ok = [], True
    for chunk, first in _chunks(text, args.split_input_file):
        out, diags = process(chunk, filename, pipeline, args)
        if args.verify_diagnostics:
            problems = check_expectations(parse_expectations(chunk), diags, filename)
            print_diags(problems)
            ok = ok and not problems
        else:
            print_diags(diags)
            ok = ok and out is not None
        if out is not None:
            outputs.append(out)
    if not ok:
        return 1
    sep = "\n" + SPLIT_MARKER + "\n" if args.split_input_file else ""
    try:
        _write(args.output, sep.join(o.rstrip("\n") + "\n" for o in outputs))
    except OSError as e:
        print(f"coll-opt: error: could not write '{args.output}': {e.strerror}", file=sys.stderr)
        return 1
    return 0


def main():
    try:
        sys.exit(run(sys.argv[1:]))
    except KeyboardInterrupt:
        sys.exit(130)


if __name__ == "__main__":
    main()
