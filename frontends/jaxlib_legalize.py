"""jaxlib's stablehlo-legalize-to-linalg, run as a child process of
frontends/stablehlo_import.py (`python jaxlib_legalize.py [chlo|linalg] < in.mlir > out.mlir`).

jaxlib bundles its own MLIR (another LLVM than coll's 22.1.8 wheels), so
the two never share a process: generic text with locations goes in on
stdin and comes back on stdout, which is the form both versions read.
Ops jaxlib does not know (coll's, mpi's, shard's) pass through unregistered.
Exit status 3: jaxlib does not import here (stderr says why); 1: the
pipeline failed (stderr: one JSON list of [location, message]).
"""
import json
import sys

# By stage (argv[1]): chlo alone (chlo.top_k is a stablehlo.sort, which coll
# lowers before the rest), then to linalg.
PIPELINES = {"chlo": "builtin.module(func.func(chlo-legalize-to-stablehlo))",
             "linalg": "builtin.module(func.func(chlo-legalize-to-stablehlo),stablehlo-legalize-to-linalg,"
                       "stablehlo-convert-to-signless,canonicalize)"}


def main() -> int:
    try:  # here, not at the top: jaxlib may be missing (exit status 3)
        from jaxlib.mlir import ir, passmanager  # jaxlib: optional, ~35 ms to import
        from jaxlib.mlir._mlir_libs import _jax_mlir_ext  # jaxlib: optional, as above
        from jaxlib.mlir.dialects import chlo, sdy, stablehlo  # jaxlib: optional, as above
    except ImportError as e:
        print(f"{type(e).__name__}: {e}", file=sys.stderr)
        return 3
    text = sys.stdin.read()
    # The dialects and passes JAX's own context has (jax 0.10.2,
    # jax/_src/interpreters/mlir.py make_ir_context), without importing
    # jax itself: that takes seconds, this child a third of one.
    upstream = ir.DialectRegistry()
    _jax_mlir_ext.register_dialects(upstream)
    ctx = ir.Context()
    ctx.append_dialect_registry(upstream)
    ctx.load_all_available_dialects()
    for dialect in (stablehlo, chlo, sdy):
        dialect.register_dialect(ctx)
    with ctx:
        stablehlo.register_stablehlo_passes()
        ctx.allow_unregistered_dialects = True
        try:
            module = ir.Module.parse(text)
            stage = sys.argv[1] if len(sys.argv) > 1 else "linalg"
            passmanager.PassManager.parse(PIPELINES[stage]).run(module.operation)
        except ir.MLIRError as e:
            found = [[str(d.location), d.message] for d in e.error_diagnostics] or [["", str(e)]]
            print(json.dumps(found), file=sys.stderr)
            return 1
        sys.stdout.write(module.operation.get_asm(print_generic_op_form=True, enable_debug_info=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
