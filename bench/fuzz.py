"""The long fuzz run over every tool (coll-opt's full pipeline, coll-run,
coll-build, coll-gen; target: 10,000 inputs, zero tracebacks, internal
errors, crashes, hangs, unlocated diagnostics and partial outputs). The
fuzzer itself is fuzz/ (its driver: fuzz/engine.py); the test suite runs
a short bounded version of it. Prints the outcome table per tool.

  python bench/fuzz.py [--count 10000] [--seed 0] [--save DIR] [--top 20] [--tools opt,run,build,gen]
"""
import sys

from coll.fuzz.engine import main

if __name__ == "__main__":
    argv = sys.argv[1:]
    if not any(a.startswith("--count") for a in argv):
        argv = ["--count", "10000"] + argv
    sys.exit(main(argv))
