"""argparse for the tools that take plain options (coll-gen, coll-run,
coll-build, coll-perf; coll-opt parses LLVM's way, tools/opt/cl.py): a
usage error exits 1, as every other error and mlir-opt's do, not argparse's 2."""
import argparse
import sys
from typing import NoReturn


class ArgumentParser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        self.exit(1, f"{self.prog}: error: {message}\n")
