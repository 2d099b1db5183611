"""A short, bounded fuzz run of coll-opt's full pipeline (the long run is
`python -m coll.tools.fuzz --count 10000`): every mutated input ends in
success or a located diagnostic; no traceback, crash or hang."""
from coll.tools import fuzz

GOOD = """func.func @f(%x0: memref<8xf32>, %x1: memref<8xf32>, %y0: memref<8xf32>, %y1: memref<8xf32>) {
  %t = "coll.all_reduce"(%x0, %x1, %y0, %y1) {kind = "sum", devices = array<i64: 0, 1>, operandSegmentSizes = array<i32: 2, 2, 0>} : (memref<8xf32>, memref<8xf32>, memref<8xf32>, memref<8xf32>) -> !coll.token
  "coll.wait"(%t) : (!coll.token) -> ()
  return
}
"""
PIPELINE = "builtin.module(coll-lower-all-reduce,coll-check-order,canonicalize,cse)"


def test_short_fuzz_run():
    counts, failures = fuzz.fuzz(200, seed=12345, timeout=30)
    print(f"fuzz counts: {counts}")
    assert not failures, "\n".join(f"input {i}: {o}\n{d[:1500]}\n{t[:1500]}" for i, o, d, t, _ in failures[:3])
    assert counts["tried"] == 200
    assert counts["succeeded"] >= 10 and counts["diagnosed"] >= 50  # both paths exercised


def test_inputs_are_reproducible():
    seeds = fuzz.corpus()
    assert fuzz.make_input(seeds, 7, 42) == fuzz.make_input(seeds, 7, 42)
    assert len({fuzz.make_input(seeds, 7, i)[0] for i in range(50)}) > 40


def test_runner_detects_every_failure():
    # The fuzz run above could not fail if the runner missed these.
    r = fuzz.Runner(timeout=20)
    try:
        assert r.run(GOOD, PIPELINE)[0] == "succeeded"
        assert r.run(GOOD.replace('"sum"', '"mean"'), PIPELINE)[0] == "diagnosed"
        assert r.run(GOOD, PIPELINE, selftest="raise")[0] == "tracebacks"
        outcome, detail = r.run(GOOD, PIPELINE, selftest="abort")
        assert outcome == "crashes" and "SIGABRT" in detail
        assert r.run(GOOD, PIPELINE)[0] == "succeeded"  # restarted
        r.timeout = 2
        assert r.run(GOOD, PIPELINE, selftest="sleep")[0] == "hangs"
        r.timeout = 20
        # Found by fuzzing: each aborted the process or raised a traceback.
        for old, new in (("array<i64: 0, 1>", "array<index: 0, 1>"),
                         ('  "coll.wait"', '  @ "coll.wait"'),
                         ("array<i64: 0, 1>", "array<f8E4M3FN: 0.0, 1.0>")):
            assert r.run(GOOD.replace(old, new), PIPELINE)[0] == "diagnosed", new
    finally:
        r.close()


def test_classify():
    assert fuzz.classify(1, "in.mlir:3:8: error: bad")[0] == "diagnosed"
    assert fuzz.classify(1, "coll-opt: error: bad")[0] == "unlocated"
    assert fuzz.classify(1, "in.mlir:3:8: error: x\nTraceback (most recent call last):")[0] == "tracebacks"
    assert fuzz.classify(2, "")[0] == "bad_exit"
