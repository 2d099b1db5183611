"""For the lit tests: `python import.py FILE PIPELINE` reads FILE with the
StableHLO frontend's parser (coll.frontends.stablehlo.parse: what
coll-opt's own parser cannot read, e.g. calls in a shard_map body), runs
PIPELINE on it and prints the module; errors as `file:line:col: error:`."""
import sys

from mlir import ir

from coll.core.pipeline import run
from coll.frontends import stablehlo
from coll.ir import make_context


def main(path, pipeline):
    with make_context():
        try:
            module = stablehlo.parse(open(path).read())
            run(module, pipeline)
        except stablehlo.StableHLOError as e:
            print(f"{e.location}: error: {e}", file=sys.stderr)
            return 1
        except ir.MLIRError as e:
            for d in e.error_diagnostics:
                print(f"{d.location}: error: {d.message}", file=sys.stderr)
            return 1
        print(module)
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
