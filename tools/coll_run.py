"""coll-run: compile a collective module, run it on a backend, check it
against numpy, print time and bandwidth.

  coll-run FILE --backend=cpu|cuda|mpi [--strategy auto|S|all]
           [--inputs in.npz] [--outputs out.npz] [--repeat K] [--seed S]
           [--ranks N] [--timeout SECONDS]

FILE is at the collective level (one coll.all_reduce, reduce_scatter,
all_gather, reduce, broadcast or all_to_all) or the explicit level.
--strategy (other than auto) overrides the module's strategy attribute; `all`
runs every strategy of the collective in turn (an in-place one gets fresh
copies of the inputs for every run). Inputs come from --inputs (npz keys
x0..x{N-1}) or are generated from --seed; --outputs receives y0..y{M-1} of the
first strategy run, and only when everything succeeded. bf16 arrays are
uint16 bit patterns. Bandwidth counts the bytes the explicit program reads
plus writes. Errors are MLIR-style diagnostics and exit code 1.

--backend=mpi runs one process per device under mpirun (runtime/mpi.py):
--ranks must be the program's device count (a run with another is refused
before anything starts); a run that has not finished within --timeout
seconds is killed and reported rank by rank.

A FILE annotated with upstream shard (a shard.grid, shard.shard on a
tensor program, not partitioned) runs on --backend=mpi over its grid (or
on --backend=cpu, one simulated device per process of the grid): the
npz holds the global arguments x0.. (generated from --seed without one);
coll-run partitions it (the `shard` route), scatters each argument by its
annotation, runs, gathers the results into y0.. and checks them against
the same function run unsharded (CPU JIT).
"""
import dataclasses
import re
import sys

from coll.ir import STRATEGIES

from .cl import ArgumentParser

STRATEGY_CHOICES = tuple(STRATEGIES) + ("all",)


class Failure(Exception):
    """Diagnostics already formatted for stderr."""


def _parser():
    p = ArgumentParser(prog="coll-run", description="Run an allreduce module and check it against numpy.")
    p.add_argument("file", help="input .mlir file")
    p.add_argument("--backend", required=True, help="cpu, cuda or mpi")
    p.add_argument("--strategy", default="auto", choices=STRATEGY_CHOICES)
    p.add_argument("--inputs", help="npz with x0..x{N-1} (default: generated from --seed)")
    p.add_argument("--outputs", help="npz to write y0..y{M-1} to")
    p.add_argument("--repeat", type=int, default=5, help="timed runs per strategy (default 5)")
    p.add_argument("--seed", type=int, default=0, help="seed of the generated inputs (default 0)")
    p.add_argument("--entry", default=None, help="function to run (default: the one with llvm.emit_c_interface)")
    p.add_argument("--ranks", type=int, default=None,
                   help="mpi: the number of ranks (default: one per device of the program)")
    p.add_argument("--timeout", type=float, default=None,
                   help="mpi: seconds a run may take before it is killed (default 120)")
    p.add_argument("--dump-pass-pipeline", action="store_true",
                   help="print the route each strategy is lowered with (coll-opt --pass-pipeline text) on stderr")
    return p


def _fail(msg):
    raise Failure(f"coll-run: error: {msg}")


def _diag_text(diags):
    return "\n".join(d.format() for d in diags)


def _located(exc, filename):
    """Formats the errors coll's lowering raises (with their locations)."""
    from coll.ir.verifier import VerifyError
    from coll.core.errors import PassError
    from mlir import ir
    from .diagnostics import Diag, from_location, from_mlir
    if isinstance(exc, ir.MLIRError):
        infos = getattr(exc, "error_diagnostics", None) or []
        return _diag_text([from_mlir(d, filename) for d in infos]) or f"{filename}:1:1: error: {exc}"
    if isinstance(exc, VerifyError):
        return _diag_text([from_location(loc, msg, filename) for loc, msg in exc.findings])
    if isinstance(exc, PassError):
        found = getattr(exc, "findings", None) or [(exc.location, str(exc), ())]
        return _diag_text([from_location(loc, msg, filename) if loc is not None
                           else Diag("error", msg, filename, 1, 1) for loc, msg, *_ in found])
    return f"{filename}:1:1: error: {exc}"  # about the program as a whole


def _load(path, entry):
    """(module text, Problem, name for locations); located diagnostics on
    bad input. Reads what coll-opt reads: a file or '-' (stdin), text (any
    bytes in comments) or bytecode."""
    from mlir import ir
    from coll.ir import make_context
    from coll.ir.verifier import verify
    from coll.runtime.check import describe
    from coll.runtime.signature import find_entry
    from .diagnostics import Collector, from_location
    from .parse_guard import SourceError, check_input
    from .source import parse, read_input
    try:
        data, name = read_input(path)
    except OSError as e:
        _fail(f"could not open input file '{path}': {e.strerror}")
    try:  # known parser crashes, then a parse in a child process
        check_input(data, name)
    except SourceError as e:
        raise Failure(e.format()) from None
    ctx = make_context()
    col = Collector(ctx, name)
    try:
        with ctx:
            try:
                module, _top = parse(data, name)
            except ir.MLIRError as e:
                col.add_error(e)
                raise Failure(_diag_text(col.diags)) from None
            findings = verify(module.operation)
            if findings:
                raise Failure(_diag_text(col.diags + [from_location(l, m, name) for l, m in findings]))
            try:
                problem = describe(module, entry)
                _fits(problem)
            except ir.MLIRError as e:  # bufferizing the tensor form (routes.bufferize)
                raise Failure(_located(e, path)) from None
            except ValueError as e:
                loc = getattr(e, "location", None) or find_entry(module, entry).location
                d = from_location(loc, str(e), name)
                raise Failure(d.format() if d.line else f"{name}:1:1: error: {e}") from None
            # The runtimes compile text: with its locations, so that later
            # errors still name the input (bytecode, stdin).
            return module.operation.get_asm(enable_debug_info=True), problem, name
    finally:
        col.detach()


def _fits(problem):
    """Refuses, before anything is allocated, a run whose arrays cannot fit
    in memory: inputs (and two copies), outputs (twice), and the float64
    arrays of the check."""
    import numpy as np
    from coll.runtime.memory import require
    numel = int(np.prod(problem.shape, dtype=object))
    b = problem.bytes_per_device if numel < 2 ** 62 else numel
    need = b * (3 * problem.n_inputs + 2 * problem.n_outputs) + 8 * numel * (problem.n_inputs + 4)
    require(need, f"coll-run of {problem.n_inputs} inputs and {problem.n_outputs} outputs of "
                  f"{'x'.join(map(str, problem.shape)) or 'scalar'}x{problem.element}")


def _read_inputs(path, problem):
    from coll.runtime.npz import NpzError, load
    from coll.runtime.signature import NUMPY_DTYPES
    want = NUMPY_DTYPES[problem.element]
    names = [f"x{i}" for i in range(problem.n_inputs)]
    hint = " (bf16 as uint16 bits)" if problem.element == "bf16" else ""
    try:
        data = load(path, {n: (tuple(problem.shape), want) for n in names}, hint)
    except NpzError as e:
        _fail(f"{path}: {e}")
    except OSError as e:
        _fail(f"could not read inputs '{path}': {e.strerror or e}")
    return [data[n] for n in names]


def _finish(ok, path, outputs):
    """Exit code 1 after a failed check (no output file), else 0 once
    `outputs` are written to --outputs `path` (when given)."""
    if not ok:
        return 1
    if path:
        try:
            _write_outputs(path, outputs)
        except OSError as e:
            _fail(f"could not write '{path}': {e.strerror}")
    return 0


def _write_outputs(path, outputs):
    import io

    import numpy as np

    from .output import write_atomically
    buf = io.BytesIO()
    np.savez(buf, **{f"y{j}": y for j, y in enumerate(outputs)})
    write_atomically(path, buf.getvalue())


def _size(n):
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.2f} {unit}"
        n /= 1024


def _seconds(t):
    return f"{t * 1e3:.3f} ms" if t < 1 else f"{t:.3f} s"


def _depth(text, entry, strategy, backend):
    """The combine depth of the explicit program `strategy` lowers the
    collective to (runtime/check.py: combine_depth), or None (the check's
    N-1 bound) when it cannot be had here."""
    from mlir import ir
    from coll.ir import make_context
    from coll.lowering.route import lower
    from coll.runtime.check import combine_depth
    from coll.runtime.signature import find_entry
    try:
        with make_context():
            module = ir.Module.parse(text)
            lower(module.operation, None, strategy, check_order=False)
            return combine_depth(find_entry(module, entry))
    except Exception:  # noqa: BLE001 - only a tighter bound is lost
        return None


def run(argv):
    import numpy as np
    args = _parser().parse_args(argv)
    if args.repeat < 1:
        _fail(f"--repeat must be >= 1, got {args.repeat}")
    if not 0 <= args.seed < 2 ** 63:  # numpy's generators take a non-negative seed
        _fail(f"--seed must be in 0..2^63-1, got {args.seed}")
    if args.outputs is not None:
        import os
        for flag, other in (("the program", args.file), ("--inputs", args.inputs)):
            if other is not None and other != "-" and os.path.exists(args.outputs) and os.path.exists(other) \
                    and os.path.samefile(args.outputs, other):
                _fail(f"--outputs '{args.outputs}' is {flag}; expected another file")
    mpi_options = {}
    if args.backend == "mpi":
        if args.timeout is not None:
            if not 0 < args.timeout <= 7 * 24 * 3600:
                _fail(f"--timeout must be > 0 seconds and at most a week (604800), got {args.timeout}")
            mpi_options["timeout"] = args.timeout
    elif args.ranks is not None or args.timeout is not None:
        _fail("--ranks and --timeout apply to --backend=mpi only")
    from coll.runtime.backends import BACKENDS
    backend = BACKENDS.get(args.backend)
    if backend is None:
        _fail(f"unknown backend '{args.backend}'; expected one of: {', '.join(BACKENDS)}")
    ok, why = backend.available()
    if not ok:
        _fail(f"backend '{args.backend}' is not available here: {why}")

    if _is_sharded(args.file):
        return _run_sharded(args, mpi_options)
    text, problem, shown = _load(args.file, args.entry)
    from coll.ir.ops import OPS
    from coll.runtime.check import judge, make_inputs, make_outputs, op_outputs
    from .diagnostics import print_warnings
    inputs = _read_inputs(args.inputs, problem) if args.inputs else make_inputs(problem, args.seed)
    # The reference reads this copy: a program that writes its own inputs
    # cannot hide it, and every run starts from the same values.
    pristine = [x.copy() for x in inputs]
    collective = problem.collective
    cls = OPS["coll." + problem.op]
    # Ranks under mpirun share no memory: no peer strategies there.
    every = list(cls.STRATEGIES if args.backend != "mpi" else cls.runnable(()))
    strategies = every if args.strategy == "all" else [args.strategy]
    if not collective:
        strategies = strategies[:1]

    rows, failed, first_outputs = [], False, None
    for strategy in strategies:
        try:
            # The runtime lowers once (core/routes.py) and reports what it chose.
            prog = backend.compile(text, args.entry, strategy=strategy, **mpi_options)
            print_warnings(args.file)
            if args.ranks is not None and args.ranks != prog.ranks:
                _fail(f"{shown}: the program is for {prog.ranks} ranks (one per device), "
                      f"not --ranks {args.ranks}; nothing was started")
            chosen = prog.strategies[0] if prog.strategies else "-"
            if args.dump_pass_pipeline:
                print(prog.pipeline, file=sys.stderr)
            traffic = prog.traffic_bytes
            given, outputs = [x.copy() for x in pristine], make_outputs(problem)
            prog.run(given, outputs)
            outputs = op_outputs(problem, given, outputs)
            judged = problem
            if collective and args.inputs:  # generated inputs are exact in any order
                judged = dataclasses.replace(problem, depth=_depth(text, args.entry, strategy, args.backend))
            verdict = judge(judged, pristine, outputs)
            times = prog.time([x.copy() for x in pristine], make_outputs(problem), args.repeat)
        except Failure:
            raise
        except Exception as e:  # noqa: BLE001 - reported as a diagnostic
            raise Failure(_located(e, shown)) from None
        t = float(np.median(times))
        if first_outputs is None:
            first_outputs = outputs
        failed = failed or not verdict.ok
        label = chosen if collective else "-"
        rows.append((label, str(max(problem.n_inputs, len(problem.alias) or problem.n_outputs)),
                     _size(problem.bytes_per_device), _seconds(t),
                     f"{traffic / t / 1e9:.2f} GB/s" if t > 0 and traffic else "-", verdict.replicas,
                     verdict.status))

    shape = "x".join(str(d) for d in problem.shape)
    n_out = len(problem.alias) if problem.alias else problem.n_outputs
    print(f"{shown}: {problem.summary} of {problem.n_inputs} x "
          f"{shape or 'scalar'}x{problem.element} -> {n_out} output(s), "
          f"backend {args.backend}, median of {args.repeat}")
    header = ("strategy", "devices", "bytes/device", "time (median)", "bandwidth", "replicas", "check")
    widths = [max(len(r[i]) for r in rows + [header]) for i in range(len(header))]
    for r in [header] + rows:
        print("  ".join(c.rjust(w) if 0 < i < 5 else c.ljust(w) for i, (c, w) in enumerate(zip(r, widths))).rstrip())
    return _finish(not failed, args.outputs, first_outputs)


def _is_sharded(path):
    """Whether FILE is a program annotated with upstream shard (a shard.grid)."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return re.search(r"^\s*shard\.grid\s+@", f.read(), re.M) is not None
    except OSError:
        return False


def _run_sharded(args, mpi_options):
    """An annotated, unpartitioned tensor program: partition it, scatter the
    global arguments x0.. by their annotations, run under mpirun, gather the
    results y0.. and check them against the function run unsharded."""
    import numpy as np
    from coll.runtime import shard
    from coll.runtime.signature import NUMPY_DTYPES
    from .parse_guard import SourceError, check_input, read_source
    if args.backend not in ("mpi", "cpu"):
        _fail(f"{args.file}: a program annotated with shard runs on --backend=mpi (one rank per process of "
              f"its grid) or --backend=cpu (one simulated device per process), not '{args.backend}'")
    try:
        text, _ = read_source(args.file)
        check_input(text.encode(), args.file)
    except SourceError as e:
        raise Failure(e.format()) from None
    try:
        prog = shard.compile(text, args.entry, strategy=args.strategy if args.strategy != "all" else "auto",
                             backend=args.backend, **mpi_options)
    except Exception as e:  # noqa: BLE001 - reported as a diagnostic
        raise Failure(_located(e, args.file)) from None
    if args.ranks is not None and args.ranks != prog.ranks:
        _fail(f"{args.file}: the program is partitioned over a grid of {prog.ranks} processes, not --ranks "
              f"{args.ranks}; nothing was started")
    if args.dump_pass_pipeline:
        print(prog.pipeline, file=sys.stderr)
    if args.inputs:
        from coll.runtime.npz import NpzError, load
        want = {f"x{i}": (lay.shape, NUMPY_DTYPES[lay.element]) for i, lay in enumerate(prog.inputs)}
        try:
            data = load(args.inputs, want)
        except NpzError as e:
            _fail(f"{args.inputs}: {e}")
        except OSError as e:
            _fail(f"could not read inputs '{args.inputs}': {e.strerror or e}")
        xs = [data[f"x{i}"] for i in range(len(prog.inputs))]
    else:
        rng = np.random.default_rng(args.seed)
        xs = [(rng.uniform(-1, 1, lay.shape) if lay.element.startswith(("f", "b"))
               else rng.integers(-8, 8, lay.shape)).astype(NUMPY_DTYPES[lay.element]) for lay in prog.inputs]
    try:
        ys, times = prog.run(xs, args.repeat)
        ref = prog.reference(xs)
    except Exception as e:  # noqa: BLE001 - reported as a diagnostic
        raise Failure(_located(e, args.file)) from None
    worst, good = 0.0, True
    for y, r in zip(ys, ref):
        if y.dtype.kind == "f":
            err = float(np.max(np.abs(y.astype(np.float64) - r), initial=0.0))
            scale = max(1.0, float(np.max(np.abs(r), initial=0.0)))
            good = good and err <= 1e-4 * scale
        else:
            err = float(np.count_nonzero(y != r))
            good = good and err == 0
        worst = max(worst, err)
    grid = "x".join(map(str, prog.grid))
    shapes = ", ".join("x".join(map(str, lay.shape)) + "x" + lay.element for lay in prog.inputs)
    print(f"{args.file}: partitioned over a grid of {grid} ({prog.ranks} ranks), arguments {shapes}, "
          f"backend {args.backend}, median of {args.repeat}")
    print(f"  time (median)  {_seconds(float(np.median(times)))}")
    print(f"  check          {'ok' if good else 'FAIL'} (max error {worst:.3g} against the unsharded function)")
    return _finish(good, args.outputs, ys)


def main():
    try:
        code = run(sys.argv[1:])
    except Failure as f:
        print(str(f), file=sys.stderr)
        code = 1
    except KeyboardInterrupt:
        code = 130
    except Exception as e:  # noqa: BLE001 - never a traceback
        print(f"coll-run: error: internal error: {type(e).__name__}: {e}", file=sys.stderr)
        code = 1
    sys.exit(code)


if __name__ == "__main__":
    main()
