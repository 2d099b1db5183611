"""coll-opt: mlir-opt with the coll dialect and passes registered.

  coll-opt [FILE|-] [-o OUT] [--pass-pipeline='builtin.module(...)' | --<pass>[=opts] ...]
           [options as mlir-opt spells them; `coll-opt --help` lists them]

Options are spelled with one dash or two, as LLVM's command line takes
them. Errors are MLIR diagnostics (file:line:col: error: ...) and exit code
1; nothing is written to -o unless every chunk succeeded.
"""
from __future__ import annotations

import contextlib
import difflib
import io
import re
import sys
from collections.abc import Collection, Sequence
from typing import Any, NoReturn

from mlir import ir, passmanager
from mlir.dialects import irdl

from coll.core.errors import take_warnings
from coll.core.pipeline import PipelineError, build, describe, run_pm, split_top
from coll.core.registry import load_all, names
from coll.ir import make_context
from coll.ir.errors import LocatedError, MLIRError
from coll.ir.verifier import verify

from .diagnostics import Collector, Diag, diags_of, from_location, print_diags, tool_main
from .opt import cl
from .opt.ir_print import only_dumps_of
from .opt.upstream import dialects, list_passes
from .opt.verify import check_expectations, parse_expectations
from .output import write_output
from .parse_guard import SourceError, check_input
from .source import DEFAULT_MARKER, as_text, parse, read_input, split_chunks

USAGE = ("OVERVIEW: coll-opt: MLIR modular optimizer driver with the coll dialect and passes\n\n"
         "USAGE: coll-opt [options] <input file>\n\n"
         "Passes are given as --pass-pipeline='builtin.module(...)' or one by one as\n"
         "--<pass-name>[=<options>] (e.g. --coll-lower-all-reduce=strategy=ring -cse);\n"
         "--list-passes lists them.")

OPTIONS = [
    cl.Option("o", cl.VALUE, "Output filename", "filename", default="-"),
    cl.Option("pass-pipeline", cl.VALUE, "Textual description of the pass pipeline to run", "string", default=""),
    cl.Option("p", cl.VALUE, "Alias for --pass-pipeline", "string", default=""),
    cl.Option("split-input-file", cl.OPTIONAL, "Split the input file into chunks using the given or default marker "
              "and process each chunk independently", "string"),
    cl.Option("output-split-marker", cl.VALUE, "Split marker to use for merging the output", "string",
              default=DEFAULT_MARKER),
    cl.Option("verify-diagnostics", cl.OPTIONAL, "Check that emitted diagnostics match expected-* lines on the "
              "corresponding line (=only-expected: ignore unexpected ones)", "all|only-expected",
              choices=("", "all", "only-expected")),
    cl.Option("allow-unregistered-dialect", cl.FLAG, "Allow operation with no registered dialects"),
    cl.Option("no-implicit-module", cl.FLAG, "Disable implicit addition of a top-level module op during parsing"),
    cl.Option("irdl-file", cl.VALUE, "IRDL file to register before processing the input (coll is always loaded)",
              "filename", default=""),
    cl.Option("emit-bytecode", cl.FLAG, "Emit bytecode when generating output"),
    cl.Option("list-passes", cl.FLAG, "Print the list of registered passes and exit"),
    cl.Option("show-dialects", cl.FLAG, "Print the list of registered dialects and exit"),
    cl.Option("dump-pass-pipeline", cl.FLAG, "Print the pipeline that will be run"),
    cl.Option("mlir-disable-threading", cl.FLAG, "Disable multi-threading within MLIR"),
    cl.Option("mlir-elide-elementsattrs-if-larger", cl.VALUE, "Elide ElementsAttrs with \"...\" that have more "
              "elements than the given upper limit", "uint"),
    cl.Option("mlir-pass-statistics", cl.FLAG, "Display the statistics of each pass"),
    cl.Option("mlir-pass-statistics-display", cl.VALUE, "Display method for pass statistics", "list|pipeline",
              choices=("list", "pipeline"), default="pipeline"),
    cl.Option("mlir-print-debuginfo", cl.FLAG, "Print debug info in MLIR output"),
    cl.Option("mlir-pretty-debuginfo", cl.FLAG, "Print pretty debug info in MLIR output"),
    cl.Option("mlir-print-local-scope", cl.FLAG, "Print with local scope and inline information (eliding aliases "
              "for attributes, types, and locations)"),
    cl.Option("mlir-print-op-generic", cl.FLAG, "Print the generic op form"),
    cl.Option("mlir-print-ir-before", cl.LIST, "Print IR before specified passes", "pass-arg"),
    cl.Option("mlir-print-ir-after", cl.LIST, "Print IR after specified passes", "pass-arg"),
    cl.Option("mlir-print-ir-before-all", cl.FLAG, "Print IR before each pass"),
    cl.Option("mlir-print-ir-after-all", cl.FLAG, "Print IR after each pass"),
    cl.Option("mlir-print-ir-after-change", cl.FLAG, "When printing the IR after a pass, only print if the IR changed"),
    cl.Option("mlir-print-ir-after-failure", cl.FLAG,
              "When printing the IR after a pass, only print if the pass failed"),
    cl.Option("mlir-print-ir-module-scope", cl.FLAG, "When printing IR for print-ir-[before|after]{-all} always "
              "print the top-level operation"),
    cl.Option("mlir-timing", cl.FLAG, "Display execution times"),
    cl.Option("help", cl.FLAG, "Display available options"),
    cl.Option("h", cl.FLAG, "Alias for --help"),
]


class Args:
    """The parsed options as attributes (`args.split_input_file`)."""
    # Set by run() after parsing.
    irdl_file_text: bytes | None
    irdl_dialects: list[str]
    pass_pipeline: str

    def __init__(self, values: dict[str, Any]) -> None:
        for k, v in values.items():
            setattr(self, k.replace("-", "_"), v)

    def __getattr__(self, name: str) -> Any:  # the type checker's view of the attributes set above
        raise AttributeError(name)


def _fail(message: str) -> int:
    print(f"coll-opt: {message}", file=sys.stderr)
    return 1


def all_passes() -> list[str]:
    """The name of every coll pass (core/registry.py: declared as data, so
    that no pass module is imported before a pipeline uses it)."""
    return names()


def _is_pass(name: str, coll_names: Collection[str]) -> bool:
    """True when `name` is a coll pass or one the upstream registry knows."""
    if name in coll_names:
        return True
    if not re.fullmatch(r"[A-Za-z0-9][\w.-]*", name):
        return False
    with ir.Context():
        try:
            passmanager.PassManager.parse(f"builtin.module({name})")
        except ValueError as e:
            return "does not refer to a registered pass" not in str(e)
    return True


def _unknown(arg: str, coll_names: Collection[str]) -> int:
    msg = f"Unknown command line argument '{arg}'.  Try: 'coll-opt --help'"
    names = [o.name for o in OPTIONS if len(o.name) > 1] + sorted(coll_names)
    close = difflib.get_close_matches(arg.lstrip("-").partition("=")[0], names, n=1, cutoff=0.75)
    if close:
        msg += f"\ncoll-opt: Did you mean '--{close[0]}'?"
    return _fail(msg)


def _pass_elements(flags: Sequence[tuple[str, str, str | None]],
                   coll_names: Collection[str]) -> tuple[list[str] | None, str | None]:
    """[('--coll-x=strategy=ring', 'coll-x', 'strategy=ring')] -> pipeline
    elements ['coll-x{strategy=ring}'], or the unknown argument."""
    elems = []
    for spelled, name, value in flags:
        if not _is_pass(name, coll_names):
            return None, spelled
        value = (value or "").strip("'\"")
        elems.append(f"{name}{{{value}}}" if value else name)
    return elems, None


def _pretty_pipeline(text: str, indent: int = 0) -> str:
    """builtin.module(a,func.func(b)) the way --dump-pass-pipeline shows it."""
    pad = "  " * indent
    if text.endswith(")") and "(" in text and ("{" not in text or text.index("(") < text.index("{")):
        anchor, _, inner = text.partition("(")
        parts = split_top(inner[:-1])
        body = ",\n".join(_pretty_pipeline(p, indent + 1) for p in parts)
        return f"{pad}{anchor}(\n{body}\n{pad})"
    return pad + text


def _chunk_context(args: Args) -> Any:
    """A fresh coll context for one chunk, set up from the options."""

    ctx = make_context()
    if args.allow_unregistered_dialect:
        ctx.allow_unregistered_dialects = True
    if args.mlir_disable_threading:
        ctx.enable_multithreading(False)
    if args.irdl_file_text is not None:  # checked by _irdl_problem already
        with ctx, ir.Location.unknown():
            irdl.load_dialects(ir.Module.parse(args.irdl_file_text))
    return ctx


def _configure(pm: Any, args: Args) -> tuple[set[str], set[str]] | None:
    """IR printing, statistics, timing on `pm`. Returns the dump filter
    (before, after) or None when every dump is wanted."""
    before_all = args.mlir_print_ir_before_all or bool(args.mlir_print_ir_before)
    after_all = args.mlir_print_ir_after_all or bool(args.mlir_print_ir_after)
    failure = args.mlir_print_ir_after_failure
    # As mlir-opt: after-failure makes every pass eligible, then only the
    # failing one prints.
    after_all = after_all or failure
    if before_all or after_all:
        limit = args.mlir_elide_elementsattrs_if_larger
        pm.enable_ir_printing(print_before_all=before_all, print_after_all=after_all,
                              print_module_scope=args.mlir_print_ir_module_scope,
                              print_after_change=args.mlir_print_ir_after_change,
                              print_after_failure=failure,
                              large_elements_limit=None if limit is None else int(limit),
                              enable_debug_info=args.mlir_print_debuginfo)
    if args.mlir_pass_statistics:
        mode = passmanager.PassDisplayMode.LIST if args.mlir_pass_statistics_display == "list" \
            else passmanager.PassDisplayMode.PIPELINE
        pm.enable_statistics(mode)
    if args.mlir_timing:
        pm.enable_timing()
    filtered = ((args.mlir_print_ir_before and not args.mlir_print_ir_before_all)
                or (args.mlir_print_ir_after and not args.mlir_print_ir_after_all))
    if not filtered:
        return None
    every = {"*"}
    before = every if args.mlir_print_ir_before_all else set(args.mlir_print_ir_before)
    after = every if args.mlir_print_ir_after_all or failure else set(args.mlir_print_ir_after)
    return before, after


def _print(top: Any, args: Args) -> bytes:
    """The op as mlir-opt prints it (bytes): text or bytecode."""
    if args.emit_bytecode:
        buf = io.BytesIO()
        top.write_bytecode(buf)
        return buf.getvalue()
    limit = args.mlir_elide_elementsattrs_if_larger
    text = top.get_asm(print_generic_op_form=args.mlir_print_op_generic,
                       enable_debug_info=args.mlir_print_debuginfo,
                       pretty_debug_info=args.mlir_pretty_debuginfo,
                       use_local_scope=args.mlir_print_local_scope,
                       large_elements_limit=None if limit is None else int(limit))
    return text.encode("utf-8", errors="surrogateescape") + b"\n"


def _warnings(filename: str) -> list[Diag]:
    """The passes' warnings (core/errors.py warn) as located diagnostics."""

    return [from_location(loc, msg, filename, "warning") for loc, msg in take_warnings()]


def process(data: bytes, filename: str, pipeline: str, args: Args,
            chunk_start: tuple[int, int] | None = None) -> tuple[bytes | None, list[Diag]]:
    """Runs one chunk (bytes). Returns (output bytes or None, diags).
    chunk_start: (line, col) of a later chunk, where mlir-opt locates its
    implicit module."""




    ctx = _chunk_context(args)
    col = Collector(ctx, filename)
    try:
        with ctx:
            try:
                pm = build(pipeline)
            except PipelineError as e:
                return None, [Diag("error", f"invalid pass pipeline: {e}", "coll-opt")]
            dumps = _configure(pm, args)
            try:  # known parser crashes, then a parse in a child process
                check_input(data, filename)
            except SourceError as e:
                return None, [Diag("error", m, f, line, c) for f, line, c, m in e.findings]
            try:
                # _owner keeps the parsed module alive while `top` is used.
                _owner, top = parse(data, filename, implicit_module=not args.no_implicit_module)
            except MLIRError as e:
                col.add_error(e)
                return None, col.diags
            except LocatedError as e:  # a frontend's parse (the pretty form of StableHLO, ...)
                return None, col.diags + diags_of(e, filename)
            if chunk_start and not args.no_implicit_module and str(top.location).endswith(':0:0)'):
                top.location = ir.Location.file(filename, *chunk_start)
            findings = verify(top)
            if findings:
                return None, col.diags + [from_location(l, m, filename) for l, m in findings]
            take_warnings()  # a chunk reports its own
            if args.no_implicit_module and not args.pass_pipeline and pipeline \
                    and top.name != "builtin.module":
                # As mlir-opt: pass flags anchor on the top-level op.
                pm = build(top.name + pipeline[len("builtin.module"):])
                dumps = _configure(pm, args)
            try:
                # An empty pipeline is anchored on builtin.module too; with
                # --no-implicit-module the top op may be anything.
                if pipeline or top.name == "builtin.module":
                    with only_dumps_of(*dumps) if dumps else contextlib.nullcontext():
                        run_pm(pm, top)
            except MLIRError as e:
                col.add_error(e)
                return None, col.diags + _warnings(filename)
            col.diags.extend(_warnings(filename))
            if any(d.severity == "error" for d in col.diags):
                return None, col.diags
            return _print(top, args), col.diags
    finally:
        col.detach()


def _check_flags(args: Args) -> str | None:
    """Option values mlir-opt would reject before reading any input."""
    limit = args.mlir_elide_elementsattrs_if_larger
    if limit is not None and not limit.isdigit():
        return f"for the --mlir-elide-elementsattrs-if-larger option: '{limit}' value invalid for uint argument!"
    printing = (args.mlir_print_ir_before_all or args.mlir_print_ir_after_all or args.mlir_print_ir_before
                or args.mlir_print_ir_after or args.mlir_print_ir_after_failure)
    if args.mlir_print_ir_module_scope and printing and not args.mlir_disable_threading:
        # The bindings abort the process here; mlir-opt reports it.
        return ("error: IR print for module scope can't be setup on a pass-manager without disabling "
                "multi-threading first (add --mlir-disable-threading)")
    return None


def run(argv: Sequence[str]) -> int:
    try:
        parsed = cl.parse(argv, OPTIONS)
    except cl.UsageError as e:
        return _fail(str(e))
    args = Args(parsed.values)
    if args.help or args.h:
        sys.stdout.write(cl.help_text(OPTIONS, USAGE))
        return 0
    coll_passes = all_passes()
    elems, unknown = _pass_elements(parsed.passes, coll_passes)
    if unknown is not None:
        return _unknown(unknown, coll_passes)
    for flag in ("mlir-print-ir-before", "mlir-print-ir-after"):
        for name in parsed.values[flag]:
            if not _is_pass(name, coll_passes):
                return _fail(f"for the --{flag} option: Cannot find option named '{name}'!")
    if args.list_passes:
        sys.stdout.write(list_passes(load_all()))
        return 0
    problem = _check_flags(args)
    if problem:
        return _fail(problem)
    args.irdl_file_text = None
    if args.irdl_file:
        try:
            with open(args.irdl_file, "rb") as f:
                args.irdl_file_text = f.read()
        except OSError as e:
            return _fail(f"error: could not open IRDL file '{args.irdl_file}': {e.strerror}")
        if _irdl_problem(args):
            return 1
    if args.show_dialects:
        return _show_dialects(args)
    args.pass_pipeline = args.pass_pipeline or args.p  # -p: mlir-opt's alias
    pipeline = args.pass_pipeline
    if elems:
        if pipeline:
            return _fail("error: '--pass-pipeline' option can't be used with individual pass options")
        pipeline = "builtin.module(" + ",".join(elems) + ")"
    if args.dump_pass_pipeline:
        _dump_pipeline(pipeline)
    path = parsed.positional[0] if parsed.positional else "-"
    try:
        data, filename = read_input(path)
    except OSError as e:
        return _fail(f"error: could not open input file '{path}': {e.strerror}")

    marker = args.split_input_file
    if marker == "":
        marker = DEFAULT_MARKER
    outputs, ok = [], True
    chunks, near_misses = split_chunks(data, marker)
    for line, col in near_misses:
        print(f"{filename}:{line}:{col}: warning: near miss with file split marker", file=sys.stderr)
    for k, (chunk, start) in enumerate(chunks):
        out, diags = process(chunk, filename, pipeline, args, start if k else None)
        if args.verify_diagnostics is not None:
            problems = check_expectations(parse_expectations(as_text(chunk)), diags, filename,
                                          only_expected=args.verify_diagnostics == "only-expected")
            print_diags(problems)
            ok = ok and not problems
        else:
            print_diags(diags)
            ok = ok and out is not None
        outputs.append(out or b"")
    # mlir-opt: every chunk's output, failed ones empty, joined by the marker.
    data = (args.output_split_marker.encode() + b"\n").join(outputs)
    if args.o == "-":
        rc = write_output("coll-opt", "-", data)  # like mlir-opt, what succeeded is shown
        return rc if ok else 1
    if not ok:
        return 1
    return write_output("coll-opt", args.o, data)


def _irdl_problem(args: Args) -> bool:
    """Reports an IRDL file that does not load (located, exit 1)."""


    ctx = make_context()
    col = Collector(ctx, args.irdl_file)
    try:
        with ctx:
            try:
                assert args.irdl_file_text is not None  # run() read it
                module, top = parse(args.irdl_file_text, args.irdl_file)
                names = _drop_loaded_dialects(top, args.irdl_file)
                irdl.load_dialects(module)
            except MLIRError as e:
                col.add_error(e)
            except _DialectClash as e:
                col.diags.append(e.diag)
            if col.diags:
                print_diags(col.diags)
                return True
            args.irdl_dialects = names
            args.irdl_file_text = str(module).encode()  # without the dialects already there
            return False
    finally:
        col.detach()


class _DialectClash(Exception):
    def __init__(self, diag: Diag) -> None:
        super().__init__(diag.message)
        self.diag = diag


def _drop_loaded_dialects(top: Any, filename: str) -> list[str]:
    """The IRDL file's dialect names. coll's own definition (ir/coll.irdl.mlir,
    as given to upstream mlir-opt) is dropped: coll is always loaded, and
    registering a dialect twice aborts the process. A dialect named like an
    upstream one is refused for the same reason."""
    upstream, names = None, []
    for op in list(top.regions[0].blocks[0]):
        if op.name != "irdl.dialect":
            continue
        name = str(op.attributes["sym_name"]).strip('"')
        if name == "coll":
            op.erase()
            continue
        upstream = set(dialects()) if upstream is None else upstream
        if name in upstream:
            raise _DialectClash(from_location(
                op.location, f"dialect '{name}' is already registered; an IRDL file can only add new dialects",
                filename))
        names.append(name)
    return names


def _show_dialects(args: Args) -> int:
    names = set(dialects()) | {"coll"} | set(getattr(args, "irdl_dialects", []))
    print("Available Dialects: " + ",".join(sorted(names)))
    return 0


def _dump_pipeline(pipeline: str) -> None:
    with make_context():
        try:  # coll options spelled out and nesting kept (str(pm) has neither)
            text = describe(pipeline)
        except PipelineError:
            return  # reported per chunk, located like every other error
    inner = text[len("builtin.module("):-1] if text.startswith("builtin.module(") else text
    count = len(split_top(inner)) if inner else 0
    print(f"Pass Manager with {count} passes:\n{_pretty_pipeline(text)}\n", file=sys.stderr)


def main(argv: list[str] | None = None) -> NoReturn:
    """coll-opt as a call (tools/diagnostics.py main: exit codes, errors,
    `| head`): raises SystemExit."""
    tool_main("coll-opt", run, argv)


def command() -> NoReturn:
    """The `coll-opt` executable (pyproject's script): `main` that ends the
    process without the interpreter's teardown (a transform: its output is
    written when `run` returns)."""
    tool_main("coll-opt", run, quick_exit=True)


if __name__ == "__main__":
    main()
