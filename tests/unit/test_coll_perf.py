"""coll-perf: nccl-tests' output, its numbers against values computed by
hand and against coll-run's for the same module and times, #wrong of a
wrong program, --json and --plot, skipped back ends, and bad arguments
(a usage error, exit 1, never a traceback)."""
import json
import re
import subprocess
import sys

import pytest

from coll.collectives import COLLECTIVES, Broadcast, Reduce
from coll.execution import measure
from coll.ir import make_context
from coll.ir.generate import collective_module
from coll.lowering import cpu
from coll.lowering import gpu as cuda
from coll.tools import coll_perf, coll_run

TIMES = [2e-6, 1e-6, 4e-6]  # median 2 us
N = 4

# op, -b/-e, and by hand (f32, N = 4, 2 us): the line nccl-tests prints.
# size is the larger of a device's buffers: all_gather's 256 KiB output is
# 4 inputs of 16384 elements; count = size / 4; algbw = size / 2 us;
# busbw = algbw x 1.5 (all_reduce), 0.75 (reduce_scatter, all_gather,
# all_to_all), 1 (reduce, broadcast); root -1 unless rooted; no in-place
# form: N/A. The average bus bandwidth is busbw unrounded.
AVERAGE = {"all_reduce": "786.4320", "reduce_scatter": "393.2160", "all_gather": "98.3040", "reduce": "262.1440",
           "broadcast": "1048.5760", "all_to_all": "393.2160"}
CASES = {
    "all_reduce": ("1M", "     1048576        262144     float     sum      -1     2.00  524.29  786.43      0"
                         "     2.00  524.29  786.43      0"),
    "reduce_scatter": ("1M", "     1048576        262144     float     sum      -1     2.00  524.29  393.22      0"
                             "      N/A     N/A     N/A    N/A"),
    "all_gather": ("256K", "      262144         65536     float    none      -1     2.00  131.07   98.30      0"
                           "      N/A     N/A     N/A    N/A"),
    "reduce": ("512K", "      524288        131072     float     sum       0     2.00  262.14  262.14      0"
                       "     2.00  262.14  262.14      0"),
    "broadcast": ("2M", "     2097152        524288     float    none       0     2.00  1048.58  1048.58      0"
                        "     2.00  1048.58  1048.58      0"),
    "all_to_all": ("1M", "     1048576        262144     float    none      -1     2.00  524.29  393.22      0"
                         "      N/A     N/A     N/A    N/A"),
}


@pytest.fixture
def fixed_times(monkeypatch):
    monkeypatch.setattr(measure, "timed", lambda prog, i, o, iters, warmup=0: list(TIMES))


def perf(capsys, *argv):
    code = coll_perf.run([str(a) for a in argv])
    out = capsys.readouterr()
    return code, out.out.splitlines(), out.err


@pytest.mark.parametrize("op", CASES)
def test_lines_by_hand(capsys, fixed_times, op):
    size, want = CASES[op]
    code, out, err = perf(capsys, op, "-b", size, "-e", size, "-g", N, "-n", 3, "-w", 0, "--quiet")
    assert code == 0, err
    data = [l for l in out if not l.startswith("#")]
    assert data == [want]
    assert "# Out of bounds values : 0 OK" in out
    assert f"# Avg bus bandwidth    : {AVERAGE[op]} " in out
    assert out[-1] == "#"


def test_the_header_is_nccl_tests(capsys, fixed_times):
    code, out, _ = perf(capsys, "-b", "4K", "-e", "64K", "-f", "4", "-g", 2, "-n", 3, "-w", 2, "-s", "ring")
    assert code == 0
    assert out[0] == "# coll-perf: all_reduce_perf, backend cpu, 2 devices, strategy ring, float (f32), sum"
    assert out[1] == ("# nThread 1 nGpus 2 minBytes 4096 maxBytes 65536 step: 4(factor) warmup iters: 2 "
                      "iters: 3 agg iters: 1 validation: 1 graph: 0")
    assert out[3].split() == ["#", "out-of-place", "in-place"]
    assert out[4].split() == ["#", "size", "count", "type", "redop", "root"] + ["time", "algbw", "busbw", "#wrong"] * 2
    assert out[5].split() == ["#", "(B)", "(elements)"] + ["(us)", "(GB/s)", "(GB/s)"] * 2
    sizes = [int(l.split()[0]) for l in out if not l.startswith("#")]
    assert sizes == [4096, 16384, 65536]
    # Every column lines up under its header (right-aligned, as nccl-tests).
    for l in out[6:9]:
        assert len(l) == len(out[6])


def test_numbers_agree_with_coll_run(tmp_path, capsys, fixed_times):
    """coll-run on the module coll-perf measures, with the same times:
    the same size, time, algbw and busbw."""
    code, out, _ = perf(capsys, "all_gather", "-b", "96K", "-e", "96K", "-g", 3, "-s", "ring", "-n", 3,
                        "--json", tmp_path / "p.json")
    assert code == 0
    line = [l for l in out if not l.startswith("#")][0].split()
    with make_context():
        (tmp_path / "m.mlir").write_text(collective_module("all_gather", 3, [8192], "f32", strategy="ring", axis=0))
    assert coll_run.run([str(tmp_path / "m.mlir"), "--backend=cpu", "--repeat=3"]) == 0
    row = re.split(r"\s{2,}", capsys.readouterr().out.splitlines()[2].strip())
    assert row[2] == "96.00 KiB" and int(line[0]) == 96 * 1024
    assert row[4] == f"{float(line[5]) / 1e3:.3f} ms"
    assert row[6:8] == [f"{float(line[6]):.2f} GB/s", f"{float(line[7]):.2f} GB/s"]
    got = json.loads((tmp_path / "p.json").read_text())["results"][0]
    assert got["algbw_GBps"] == pytest.approx(float(row[6].split()[0]), abs=0.005)
    assert got["busbw_GBps"] == pytest.approx(got["algbw_GBps"] * 2 / 3)
    assert got["times_s"] == TIMES and got["median_s"] == 2e-6


class _Off:
    """A compiled program whose every run leaves one output element wrong."""

    def __init__(self, prog):
        self.prog, self.strategies = prog, prog.strategies

    def run(self, inputs, outputs):
        self.prog.run(inputs, outputs)
        (outputs or inputs)[0].reshape(-1)[3] += 1  # in place, the inputs are the outputs

    def time(self, inputs, outputs, repeat):
        return self.prog.time(inputs, outputs, repeat)


def test_wrong_results_are_counted(capsys, monkeypatch):
    real = cpu.BACKEND.compile
    monkeypatch.setattr(cpu.BACKEND, "compile", lambda text, **kw: _Off(real(text, **kw)))
    code, out, _ = perf(capsys, "-b", "1K", "-e", "2K", "-f", 2, "-g", 2, "-n", 1, "-w", 0, "-s", "naive", "--quiet")
    data = [l.split() for l in out if not l.startswith("#")]
    assert code == 1
    assert [(d[8], d[12]) for d in data] == [("1", "1"), ("1", "1")]
    assert "# Out of bounds values : 4 FAILED" in out
    code, out, _ = perf(capsys, "-b", "1K", "-e", "1K", "-g", 2, "-n", 1, "-c", 0, "-s", "naive", "--quiet")
    assert code == 0 and [l.split()[8] for l in out if not l.startswith("#")] == ["N/A"]


def test_json_and_plot(tmp_path, capsys):
    code, out, _ = perf(capsys, "reduce", "broadcast", "-b", "1K", "-e", "4K", "-g", 3, "-r", 1, "-n", 2, "-w", 1,
                        "-s", "all", "--json", tmp_path / "r.json", "--plot", tmp_path / "r.png", "--quiet")
    assert code == 0
    doc = json.loads((tmp_path / "r.json").read_text())
    rows = doc["results"]
    strategies = {(r["op"], r["requested"]) for r in rows}
    runnable = {op: cls.runnable(cpu.BACKEND.capabilities) for op, cls in (("reduce", Reduce), ("broadcast", Broadcast))}
    assert strategies == {(op, s) for op, names in runnable.items() for s in names}
    assert runnable["reduce"] == Reduce.STRATEGIES  # the CPU's devices share memory: peer strategies too
    assert len(rows) == len(strategies) * 2 * 2  # 2 sizes, out of place and in place
    for r in rows:
        assert r["root"] == 1 and r["devices"] == 3 and r["ok"] and r["wrong"] == 0 and len(r["times_s"]) == 2
        assert r["busbw_GBps"] == pytest.approx(r["algbw_GBps"])  # factor 1
        assert r["min_s"] <= r["median_s"] <= r["max_s"]
    assert (tmp_path / "r.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_unavailable_backends_are_skipped_with_the_reason(capsys, monkeypatch, fixed_times):
    monkeypatch.setattr(cuda.BACKEND, "available", lambda *a: (False, "no GPU in this test"))
    with pytest.raises(coll_perf.Failure, match="no back end to run on"):
        perf(capsys, "--backend", "cuda", "-b", "1K", "-e", "1K")
    assert "backend gpu skipped: no GPU in this test" in capsys.readouterr().err
    from coll.lowering import mpi
    monkeypatch.setattr(mpi.BACKEND, "available", lambda *a: (False, "no mpirun in this test"))
    code, out, _ = perf(capsys, "--backend", "all", "-b", "1K", "-e", "1K", "-g", 2, "-s", "ring")
    assert code == 0
    assert "# backend mpi skipped: no mpirun in this test" in out
    assert "# backend gpu skipped: no GPU in this test" in out
    assert sum(l.startswith("# coll-perf: all_reduce_perf, backend cpu") for l in out) == 1


def test_a_sweep_that_cannot_fit_is_refused_before_measuring(capsys):
    with pytest.raises(coll_perf.Failure) as e:
        perf(capsys, "-g", 8, "-b", "1K", "-e", "1T")
    assert str(e.value).startswith("coll-perf: error: -e 1099511627776: coll-perf's all_reduce of 8 x "
                                   "1099511627776 bytes (f32) needs about ")
    assert capsys.readouterr().out == ""  # nothing measured, nothing printed


@pytest.mark.parametrize("argv,message", [
    (["-b", "4Q"], "argument -b/--minbytes: invalid size '4Q'; expected bytes, optionally with K, M, G or T (e.g. 64K)"),
    (["-b", "8M", "-e", "4M"], "-b (8388608 bytes) is larger than -e (4194304 bytes)"),
    (["-g", "0"], "-g must be 1..1024 devices, got 0"),
    (["-o", "avg"], "unknown op 'avg'; expected one of: sum, prod, max, min, and, or, xor, all"),
    (["-o", "xor"], "-o xor: bitwise reduction kind 'xor' needs an integer or i1 element type, got f32"),
    (["-s", "bogus"], "unknown strategy 'bogus' for all_reduce; expected one of: auto, all, all2all, naive, oneshot, "
                      "rhd, ring, tree, twoshot"),
    (["-r", "4"], "-r must be a device of the group, 0..3, got 4"),
    (["-f", "1"], "-f must be >= 2, got 1"),
    (["-f", "2", "-i", "1K"], "-f and -i exclude each other; give one"),
    (["allreduce"], "unknown collective 'allreduce'; expected one of: "
                    + ", ".join(c.short_name() for c in COLLECTIVES) + ", all"),
    (["--backend", "tpu"], "unknown backend 'tpu'; expected one of: cpu, gpu, cuda, mpi, all"),
    (["--json", "/nonexistent/x.json"], "--json: the folder of '/nonexistent/x.json' does not exist"),
    (["-n", "0"], "-n must be >= 1 and -w >= 0, got -n 0 -w 5"),
    (["-w", "x"], "argument -w/--warmup_iters: invalid int value: 'x'"),
])
def test_bad_arguments(argv, message):
    r = subprocess.run([sys.executable, "-m", "coll.tools.coll_perf", *argv], capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 1 and r.stdout == ""
    assert r.stderr.startswith("usage: coll-perf") and r.stderr.endswith(f"coll-perf: error: {message}\n"), r.stderr
    assert "Traceback" not in r.stderr


def test_help_defines_every_column():
    r = subprocess.run([sys.executable, "-m", "coll.tools.coll_perf", "--help"], capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 0
    for name in measure.COLUMNS:
        assert re.search(rf"^  {re.escape(name)}\s", r.stdout, re.M), name
