"""Every bad input ends in a diagnostic, exit code 1, no traceback and no
output file."""
import os
import re
import subprocess
import sys

import pytest

BIN = os.path.dirname(sys.executable)
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
INPUTS = os.path.join(ROOT, "tests", "lit", "tools", "Inputs")
GOOD = """func.func @f(%x0: memref<8xf32>, %x1: memref<8xf32>, %y0: memref<8xf32>, %y1: memref<8xf32>) {
  %t = "coll.all_reduce"(%x0, %x1, %y0, %y1) {kind = "sum", devices = array<i64: 0, 1>, operandSegmentSizes = array<i32: 2, 2, 0>} : (memref<8xf32>, memref<8xf32>, memref<8xf32>, memref<8xf32>) -> !coll.token
  "coll.wait"(%t) : (!coll.token) -> ()
  return
}
"""
LOCATED = re.compile(r"^\S+\.mlir:\d+:\d+: error: ", re.M)


def _variant(old, new):
    assert old in GOOD
    return GOOD.replace(old, new)


# (name, input text or path, extra args, located?, expected message)
CASES = [
    ("shapes differ", os.path.join(INPUTS, "mixed_types.mlir"), [], True, "expected 'memref<8xf32>' but got 'memref<8xi32>'"),
    ("output shape differs", _variant("%y1: memref<8xf32>) {", "%y1: memref<4xf32>) {").replace(
        "memref<8xf32>, memref<8xf32>) -> !coll.token", "memref<8xf32>, memref<4xf32>) -> !coll.token"), [], True, "expected 'memref<8xf32>' but got 'memref<4xf32>'"),
    ("device out of range", _variant("array<i64: 0, 1>", "array<i64: 0, 4096>"), [], True, "device id 4096 is out of range"),
    ("device repeated", _variant("array<i64: 0, 1>", "array<i64: 1, 1>"), [], True, "device 1 is repeated"),
    ("unknown kind", _variant('kind = "sum"', 'kind = "mean"'), [], True, "does not satisfy the constraint"),
    ("unknown strategy", _variant('kind = "sum"', 'kind = "sum", strategy = "bogus"'), [], True, "unknown strategy"),
    ("bitwise on floats", _variant('kind = "sum"', 'kind = "or"'), [], True, "bitwise reduction kind 'or'"),
    ("dynamic shape", GOOD.replace("memref<8xf32>", "memref<?xf32>"), [], True, "dynamic shapes are not supported yet"),
    ("zero devices", os.path.join(INPUTS, "zero_devices.mlir"), [], True, "zero devices"),
    ("unparsable", os.path.join(INPUTS, "unparsable.mlir"), [], True, "custom op 'coll.nonsense' is unknown"),
    ("truncated", GOOD[: len(GOOD) // 2], [], True, "error"),
    ("malformed pipeline", GOOD, ["--pass-pipeline=builtin.module(cse"], False, "invalid pass pipeline"),
    ("unknown pass", GOOD, ["--pass-pipeline=builtin.module(coll-frobnicate)"], False, "'coll-frobnicate' does not refer to a registered pass"),
    ("unknown strategy option", GOOD, ["--coll-lower-all-reduce=strategy=direct"], False, "expected one of: auto, naive, ring, all2all"),
    ("missing input", os.path.join(INPUTS, "nope.mlir"), [], False, "could not open input file"),
]


@pytest.mark.parametrize("name,src,extra,located,message", CASES, ids=[c[0] for c in CASES])
def test_bad_input(tmp_path, name, src, extra, located, message):
    if not src.endswith(".mlir"):
        path = tmp_path / "input.mlir"
        path.write_text(src)
        src = str(path)
    out = tmp_path / "out.mlir"
    r = subprocess.run([os.path.join(BIN, "coll-opt"), src, "-o", str(out),
                        "--coll-lower-all-reduce", *extra] if not extra else
                       [os.path.join(BIN, "coll-opt"), src, "-o", str(out), *extra],
                       capture_output=True, text=True)
    assert r.returncode == 1, r.stderr
    assert "Traceback" not in r.stderr
    assert message in r.stderr
    if located:
        assert LOCATED.search(r.stderr), r.stderr
    else:
        assert r.stderr.startswith("coll-opt: error: ")
    assert not out.exists()
    assert r.stdout == ""


def test_good_input_writes_output(tmp_path):
    path = tmp_path / "input.mlir"
    path.write_text(GOOD)
    out = tmp_path / "out.mlir"
    r = subprocess.run([os.path.join(BIN, "coll-opt"), str(path), "-o", str(out), "--coll-lower-all-reduce"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert '"coll.copy"' in out.read_text()


def test_failure_keeps_existing_output_untouched(tmp_path):
    path = tmp_path / "input.mlir"
    path.write_text(GOOD.replace('kind = "sum"', 'kind = "xor"'))
    out = tmp_path / "out.mlir"
    out.write_text("previous")
    r = subprocess.run([os.path.join(BIN, "coll-opt"), str(path), "-o", str(out)], capture_output=True, text=True)
    assert r.returncode == 1
    assert out.read_text() == "previous"


@pytest.mark.parametrize("tool,args", [
    ("coll-gen", ["all-reduce", "--devices", "3", "--bogus"]),
    ("coll-gen", ["all-reduce", "--devices", "x"]),
    ("coll-gen", ["reduce-scatter", "--devices", "3", "--shape", "6", "--in-place"]),
    ("coll-run", ["in.mlir"]),                                   # no --backend
    ("coll-run", ["in.mlir", "--backend=cpu", "--repeat", "x"]),
    ("coll-build", ["in.mlir", "--bogus"]),
])
def test_usage_errors_exit_1(tmp_path, tool, args):
    # Every tool's command-line mistake is an error like any other: exit 1
    # with '<tool>: error: ...' (argparse's own exit status is 2).
    (tmp_path / "in.mlir").write_text(GOOD)
    r = subprocess.run([os.path.join(BIN, tool), *args], capture_output=True, text=True, cwd=tmp_path)
    assert r.returncode == 1, r.stderr
    assert re.search(rf"^{tool}( [\w-]+)?: error: ", r.stderr, re.M) and "Traceback" not in r.stderr, r.stderr
    assert r.stdout == ""
