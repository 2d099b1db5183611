"""The measurement columns (execution/measure.py) as coll-run prints them:
size, algbw and busbw against values computed here by hand for every
collective, the time spread, a program that writes its inputs, and the
columns defined in --help and in docs/running.md."""
import re
from pathlib import Path

import numpy as np
import pytest

from coll.execution import check, measure
from coll.ir import make_context
from coll.ir.generate import collective_module
from coll.tools import coll_run

ROOT = Path(__file__).resolve().parents[2]
TIMES = [2e-6, 1e-6, 4e-6]  # min 1 us, median 2 us, max 4 us
N = 4

# op, per-device input shape, attributes, and by hand: nccl-tests' size
# (bytes: the larger of a device's input and output buffer, f32), algbw =
# size / 2 us and busbw = algbw x factor, in GB/s as the table rounds them.
CASES = [
    # 262144 x 4 B = 1 MiB in and out; factor 2(4-1)/4 = 1.5
    ("all_reduce", [262144], {}, "1.00 MiB", "524.29 GB/s", "786.43 GB/s"),
    # input 1 MiB, each output 256 KiB: size is the input; factor 3/4
    ("reduce_scatter", [262144], {"axis": 0}, "1.00 MiB", "524.29 GB/s", "393.22 GB/s"),
    # input 64 KiB x 4 devices = 1 MiB output: size is the output; factor 3/4
    ("all_gather", [16384], {"axis": 0}, "256.00 KiB", "131.07 GB/s", "98.30 GB/s"),
    # 512 KiB in, one output on the root; factor 1
    ("reduce", [131072], {"root": 0}, "512.00 KiB", "262.14 GB/s", "262.14 GB/s"),
    # one 2 MiB input on the root, 2 MiB per output; factor 1
    ("broadcast", [524288], {"root": 1}, "2.00 MiB", "1048.58 GB/s", "1048.58 GB/s"),
    # 1 MiB in and out; factor 3/4
    ("all_to_all", [262144], {"split_axis": 0, "concat_axis": 0}, "1.00 MiB", "524.29 GB/s", "393.22 GB/s"),
]


@pytest.mark.parametrize("op,shape,attrs,size,alg,bus", CASES, ids=[c[0] for c in CASES])
def test_coll_run_columns_by_hand(tmp_path, capsys, monkeypatch, op, shape, attrs, size, alg, bus):
    monkeypatch.setattr(measure, "timed", lambda prog, i, o, iters, warmup=0: list(TIMES))
    with make_context():
        text = collective_module(op, N, shape, "f32", **attrs)
    path = tmp_path / "m.mlir"
    path.write_text(text)
    code = coll_run.run([str(path), "--backend=cpu", "--repeat=3"])
    out = capsys.readouterr().out.splitlines()
    assert code == 0, out
    assert out[1].split() == ["strategy", "devices", "size", "time", "min", "median", "max", "algbw", "busbw",
                              "replicas", "check"]
    cells = re.split(r"\s{2,}", out[2].strip())
    assert cells[1:8] == [str(N), size, "0.001 ms", "0.002 ms", "0.004 ms", alg, bus], cells
    assert cells[-1] == "ok"


def test_bus_factors_are_nccl_tests():
    """busbw / algbw per collective, N = 1, 2, 8 (nccl-tests' *GetBw)."""
    want = {"all_reduce": lambda n: 2 * (n - 1) / n, "reduce_scatter": lambda n: (n - 1) / n,
            "all_gather": lambda n: (n - 1) / n, "all_to_all": lambda n: (n - 1) / n,
            "broadcast": lambda n: 1.0, "reduce": lambda n: 1.0}
    for op, f in want.items():
        for n in (1, 2, 8):
            assert measure.bus_factor(op, n) == pytest.approx(f(n)), (op, n)
    m = measure.Measurement("all_reduce", 8, 64 << 20, 16 << 20, [0.3, 0.1, 0.2])
    assert (m.min, m.median, m.max) == (0.1, 0.2, 0.3)
    assert m.algbw == pytest.approx((64 << 20) / 0.2) and m.busbw == pytest.approx(m.algbw * 14 / 8)


class _Sum:
    """A 'program' that adds its inputs (and, `clobber`, then adds 1 to
    input 0's first element)."""

    def __init__(self, clobber):
        self.clobber = clobber

    def run(self, inputs, outputs):
        for y in outputs:
            y[...] = sum(inputs)
        if self.clobber:
            inputs[0].reshape(-1)[0] += 1

    def time(self, inputs, outputs, repeat):
        return [1e-3] * repeat


def test_a_program_that_writes_its_inputs_fails_and_the_next_gets_them_back():
    from mlir import ir
    with make_context():
        problem = check.describe(ir.Module.parse(collective_module("all_reduce", 2, [8], "i32")))
    xs = check.make_inputs(problem, 0)
    keep = [x.copy() for x in xs]
    runs = measure.Runs(problem, xs, reload=lambda: [x.copy() for x in keep])
    m = runs.measure(_Sum(clobber=True), 2)
    # Its outputs were right (the sum was taken first); its inputs changed.
    assert (m.ok, m.wrote_inputs, m.wrong, m.status) == (False, True, 0, "FAIL (wrote its inputs)")
    assert all(np.array_equal(a, b) for a, b in zip(runs.pristine, keep))
    m = runs.measure(_Sum(clobber=False), 2)
    assert (m.ok, m.wrote_inputs, m.status) == (True, False, "ok")
    runs = measure.Runs(problem, [x.copy() for x in keep])  # nothing to reload from
    with pytest.raises(ValueError, match="wrote its input buffers"):
        runs.measure(_Sum(clobber=True), 1)


class _OffByOne:
    """A 'program' whose every output element is its all_to_all value + 1."""

    def run(self, inputs, outputs):
        n = len(inputs)
        for j, y in enumerate(outputs):
            y[...] = np.concatenate([np.split(x, n)[j] for x in inputs]) + 1

    def time(self, inputs, outputs, repeat):
        return [1e-3] * repeat


def test_the_check_counts_every_wrong_element_of_every_output():
    """3 outputs of 6 i32, all wrong: 18 elements differ (not the worst
    output's 6)."""
    from mlir import ir
    with make_context():
        problem = check.describe(ir.Module.parse(collective_module("all_to_all", 3, [6], "i32", split_axis=0,
                                                                   concat_axis=0)))
    m = measure.Runs(problem, check.make_inputs(problem, 0)).measure(_OffByOne(), 1)
    assert (m.ok, m.wrong, m.status) == (False, 18, "FAIL (18 elements differ)")


def test_help_and_the_docs_define_every_column(capsys):
    with pytest.raises(SystemExit):
        coll_run.run(["--help"])
    text = capsys.readouterr().out
    readme = (ROOT / "docs" / "running.md").read_text()
    for name, what in measure.COLUMNS.items():
        listed = re.search(rf"^  {re.escape(name)}\s", text, re.M)
        assert bool(listed) == (name not in measure.PERF_ONLY), name  # the columns it prints, only those
        assert f"| `{name}` | {what} |" in readme, name  # the same words as execution/measure.py


def test_warm_up_calls_are_not_counted():
    class Prog:
        asked = None

        def time(self, inputs, outputs, repeat):
            Prog.asked = repeat
            return [9.0, 8.0] + [1.0, 2.0, 3.0][:repeat - 2]

    assert measure.timed(Prog(), [], [], 3, warmup=2) == [1.0, 2.0, 3.0] and Prog.asked == 5
