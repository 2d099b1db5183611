"""The lit tests' generated inputs, written in one process.

A lit test that runs a pass on a coll-gen module names it on a line

    // GEN: ring3 = coll-gen all-gather --devices 3 --shape 2 --axis 0 --strategy ring

and reads it as `%S/Inputs/gen/<test>.ring3.mlir` (here:
all_gather.ring3.mlir next to all_gather.mlir): the exact output of that
coll-gen command, stored, so that a RUN line starts one Python process (the
tool under test) instead of two. coll-gen itself is tested on its own
lines (tests/lit/collectives/gen.mlir).

    python tests/lit/gen_inputs.py          # (re)writes every stored input
    python tests/lit/gen_inputs.py --check  # exit 1 and the names when one is stale

tests/unit/test_lit_inputs.py runs the check: a stored input that differs
from what its GEN line makes now, one no GEN line makes, or a GEN line
whose input is missing, fails the test suite.
"""
import contextlib
import io
import re
import shlex
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent
GEN = re.compile(r"^// GEN: (?P<name>[\w.-]+) = coll-gen (?P<args>.*)$")
FOLDER = Path("Inputs") / "gen"


def specs(root=ROOT):
    """{stored path: (test file, line number, coll-gen arguments)} of every GEN line."""
    out = {}
    for test in sorted(root.rglob("*.mlir")):
        if "Inputs" in test.parts or "Output" in test.parts:
            continue
        for k, line in enumerate(test.read_text().splitlines(), 1):
            m = GEN.match(line)
            if m:
                path = test.parent / FOLDER / f"{test.stem}.{m['name']}.mlir"
                if path in out:
                    raise SystemExit(f"{test}:{k}: GEN name '{m['name']}' is used twice in this test")
                out[path] = (test, k, shlex.split(m["args"]))
    return out


def generate(argv):
    """coll-gen's output for `argv`, run in this process."""
    from coll.tools import coll_gen
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = coll_gen.run(argv)
    if code:
        raise ValueError(f"coll-gen {shlex.join(argv)} failed: {err.getvalue().strip()}")
    return out.getvalue()


def stale(root=ROOT):
    """[(path, why)] of the stored inputs that are not what their GEN lines make."""
    wanted = specs(root)
    found = {p for p in root.rglob(f"{FOLDER}/*.mlir")}
    problems = [(p, "no GEN line makes it") for p in sorted(found - set(wanted))]
    for path, (test, line, argv) in wanted.items():
        text = generate(argv)
        if not path.exists():
            problems.append((path, f"missing (GEN line {test.name}:{line})"))
        elif path.read_text() != text:
            problems.append((path, f"differs from what {test.name}:{line} makes now"))
    return problems


def write(root=ROOT):
    wanted = specs(root)
    for p in root.rglob(f"{FOLDER}/*.mlir"):
        if p not in wanted:
            p.unlink()
    for path, (_, _, argv) in wanted.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        text = generate(argv)
        if not path.exists() or path.read_text() != text:
            path.write_text(text)


def main(argv):
    if argv == ["--check"]:
        problems = stale()
        for path, why in problems:
            print(f"{path.relative_to(ROOT)}: {why}", file=sys.stderr)
        return 1 if problems else 0
    if argv:
        print("usage: gen_inputs.py [--check]", file=sys.stderr)
        return 2
    write()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
