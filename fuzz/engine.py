"""Fuzz the tools: mutate valid modules (and npz inputs, and argument
lists), run them through coll-opt's full pipeline, coll-run, coll-build and
coll-gen, and require that every input ends in success (exit 0) or a
located diagnostic with exit code 1 (file:line:col: error: for bad IR; the
file or flag named for bad files and arguments): never a Python traceback,
an internal error, a crash (signal), or a hang.

  python -m coll.fuzz.engine --count 10000 [--seed 0] [--timeout 30] [--save DIR]
                            [--tools opt,run,build,gen]

Categories, besides text mutations: view chains and strided slices on coll
operands, upstream memory ops on the arguments, deep nesting, byte-level
corruption (invalid UTF-8, NUL, truncation), npz corruption for
coll-run --inputs, file-system errors (missing input, a directory, a
missing output directory, a full disk), and coll-gen's flags; and the
program classes of fuzz/classes.py (host memory ops between coll ops,
partial aliases through views, SPMD collectives over groups and
partitioned shard programs, collectives in loops, local work around
collectives), with the front passes they need in coll-opt's pipeline.

Inputs run in a worker process that calls the tools' entry points in a
loop (fuzz/run.py); a worker that dies (signal) or overruns the timeout is
recorded with its input and restarted. Input i depends only on (seed, i): a
failure is replayed with `--seed S --only i --save DIR`. The inputs and
their mutations are fuzz/generate.py's, the jobs fuzz/jobs.py's; this
module is the driver and its command line.
"""
import base64
import collections
import json
import re
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..tools.args import ArgumentParser
from ..tools.argtypes import count, seconds
from ..tools.argtypes import seed as seed_type
from .generate import corpus
from .jobs import TOOLS, describe_job, make_job
from .run import FAILURES, OUTCOMES, Runner


def fuzz(count: int, seed: int = 0, timeout: float = 30.0, save: str | None = None, only: int | None = None,
         progress: int | None = None,
         tools: Sequence[str] = TOOLS) -> tuple[dict[str, int], list[tuple[int, str, str, str, str]]]:
    """Runs `count` inputs over `tools`; returns ({outcome: n}, [(i,
    outcome, detail, input text, job description)]). `fuzz.table` holds
    the counts per tool, `fuzz.categories` the inputs per category."""
    seeds = corpus()
    counts = dict.fromkeys(OUTCOMES, 0)
    table = {t: dict.fromkeys(OUTCOMES, 0) for t in tools}
    categories: collections.Counter[str] = collections.Counter()
    messages: collections.Counter[str] = collections.Counter()
    failures: list[tuple[int, str, str, str, str]] = []
    runner = Runner(timeout)
    indices = [only] if only is not None else range(count)
    t0 = time.monotonic()
    try:
        for n, i in enumerate(indices):
            job = make_job(seeds, seed, i, tools)
            outcome, detail = runner.run_job(job)
            counts[outcome] += 1
            table[job["tool"]][outcome] += 1
            categories[f"{job['tool']}:{job.get('category', 'flags').split(':')[0]}"] += 1
            if outcome == "diagnosed":  # the first error, numbers blurred
                messages[re.sub(r"\d+", "N", detail)[:100]] += 1
            if outcome in FAILURES:
                text, what = describe_job(job)
                failures.append((i, outcome, detail, text, what))
                if save:
                    _save(save, seed, i, outcome, detail, job)
            if progress and (n + 1) % progress == 0:
                rate = (n + 1) / (time.monotonic() - t0)
                print(f"[{n + 1}/{len(indices)}] {rate:.1f}/s {counts}", file=sys.stderr, flush=True)
    finally:
        runner.close()
    counts["tried"] = len(indices)
    # The last run's counts, on the function (main and tests/unit/test_fuzz.py read them).
    fuzz.messages, fuzz.table, fuzz.categories = messages, table, categories  # type: ignore[attr-defined]
    return counts, failures


def _save(directory: str, seed: int, i: int, outcome: str, detail: str, job: dict[str, Any]) -> None:
    d = Path(directory)
    d.mkdir(parents=True, exist_ok=True)
    if "data" in job:
        (d / f"{seed}-{i}.mlir").write_bytes(base64.b64decode(job["data"]))
    if "npz" in job:
        (d / f"{seed}-{i}.npz").write_bytes(base64.b64decode(job["npz"]))
    (d / f"{seed}-{i}.txt").write_text(f"{outcome}\njob: {describe_job(job)[1]}\n\n{detail}\n")


def format_table(table: dict[str, dict[str, int]]) -> str:
    """The outcome counts per tool, as a Markdown table."""
    cols = ("succeeded", "diagnosed", "check_failed") + FAILURES
    lines = ["| tool | inputs | " + " | ".join(cols) + " |", "|---" * (len(cols) + 2) + "|"]
    for tool, c in table.items():
        lines.append(f"| coll-{tool} | {sum(c.values())} | " + " | ".join(str(c[k]) for k in cols) + " |")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    # Usage errors exit 1; a count of 0 or less would run nothing and print
    # an all-zero table, as a clean run does.
    p = ArgumentParser(prog="coll-fuzz", description=__doc__.split("\n\n")[0])
    p.add_argument("--count", type=count(1, 10 ** 8), default=1000)
    p.add_argument("--seed", type=seed_type(), default=0)
    p.add_argument("--timeout", type=seconds(3600), default=30.0, help="seconds per input before it counts as a hang")
    p.add_argument("--save", default=None, help="directory for failing inputs")
    p.add_argument("--only", type=count(0, 10 ** 8), default=None, help="run input number ONLY alone")
    p.add_argument("--progress", type=count(1), default=500, help="print counts every N inputs")
    p.add_argument("--top", type=count(0, 10 ** 6), default=0, help="print the N most frequent diagnostics")
    p.add_argument("--tools", default=",".join(TOOLS), help="tools to fuzz (default: all of opt,run,build,gen)")
    args = p.parse_args(argv)
    tools = tuple(t.strip() for t in args.tools.split(",") if t.strip())
    if not tools or any(t not in TOOLS for t in tools):
        p.error(f"--tools takes a list of {', '.join(TOOLS)}")
    t0 = time.monotonic()
    counts, failures = fuzz(args.count, args.seed, args.timeout, args.save, args.only, args.progress, tools)
    for msg, n in fuzz.messages.most_common(args.top):  # type: ignore[attr-defined]
        print(f"{n:6d}  {msg}", file=sys.stderr)
    for i, outcome, detail, _, what in failures[:20]:
        print(f"--- input {i}: {outcome} ({what[:300]})\n{detail.strip()[:2000]}", file=sys.stderr)
    print(format_table(fuzz.table))  # type: ignore[attr-defined]
    print("inputs per category: " + ", ".join(f"{k} {v}" for k, v in sorted(fuzz.categories.items())))  # type: ignore[attr-defined]
    print(json.dumps(dict(counts, seconds=round(time.monotonic() - t0, 1))))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
