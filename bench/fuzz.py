"""The long fuzz run of coll-opt's full pipeline (issue target: 10,000
inputs, zero tracebacks, crashes and hangs). The fuzzer itself is
tools/fuzz.py; the test suite runs a short bounded version of it.

  python bench/fuzz.py [--count 10000] [--seed 0] [--save DIR] [--top 20]
"""
import sys

from coll.tools.fuzz import main

if __name__ == "__main__":
    argv = sys.argv[1:]
    if not any(a.startswith("--count") for a in argv):
        argv = ["--count", "10000"] + argv
    sys.exit(main(argv))
