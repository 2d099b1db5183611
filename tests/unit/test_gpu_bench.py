"""bench/gpu_prepare.py and bench/gpu_run.py without a GPU: the bundle's
contents and size, its programs run on the emulator, the schedule that
gpu_run replays with torch (replayed here with numpy), and the driver's
clean exit where it cannot run."""
import ast
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from mlir import ir

from coll.ir import make_context
from coll.ir.generate import all_reduce_module
from coll.backends.gpu import nvvm
from coll.core import tools
from coll.passes.lower_collectives import lower_collectives
from gpu_emulator import Emulator

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench"))
import gpu_prepare  # noqa: E402
import gpu_run  # noqa: E402


def test_job_list():
    jobs = gpu_prepare.jobs()
    perf = [j for j in jobs if j["set"] == "perf"]
    assert len(gpu_prepare.STRATEGIES) == 5  # naive ring all2all oneshot twoshot
    assert len(perf) == len(gpu_prepare.STRATEGIES) * 3 * 3 * len(gpu_prepare.VARIANTS)
    sanitize = [j for j in jobs if j["set"] == "sanitize"]
    assert sorted(j["strategy"] for j in sanitize) == sorted(gpu_prepare.STRATEGIES)
    assert all(j["n"] == 4 and j["numel"] < 1 << 16 for j in sanitize)
    assert {(j["n"], j["size"]) for j in perf} == {(n, s) for n in (2, 4, 8)
                                                   for s in ("1MB", "64MB", "1GB")}
    assert {j["numel"] for j in perf} == {1 << 18, 1 << 24, 1 << 28}
    assert len({j["file"] for j in jobs}) == len(jobs)


@pytest.fixture(scope="module")
def bundle(tmp_path_factory):
    out = tmp_path_factory.mktemp("bundle") / "gpu"
    pick = lambda j: (j["set"] == "dtype" and j["numel"] == 1001
                      and j["dtype"] in ("bf16", "i1", "f64")
                      ) or (j["set"] == "perf" and j["size"] == "1MB" and j["n"] == 4
                      ) or (j["set"] == "sanitize" and j["strategy"] in ("ring", "oneshot"))
    entries, failed, total = gpu_prepare.prepare(out, workers=2, job_filter=pick)
    assert not failed, [(f["file"], f["error"]) for f in failed]
    return out, entries, total


def test_bundle_contents(bundle):
    out, entries, total = bundle
    k = len(gpu_prepare.STRATEGIES)
    assert len(entries) == k * len(gpu_prepare.VARIANTS) + 3 * k + 2
    names = {p.name for p in out.iterdir()}
    assert {"manifest.json", "libmlir_cuda_runtime.so", "libLLVM.so", "cuda_driver.py",
            "gpu_run.py"} <= names
    assert total < gpu_prepare.CARRY_LIMIT
    manifest = json.loads((out / "manifest.json").read_text())
    for e in manifest["programs"]:
        lib = out / e["file"]
        assert lib.exists()
        dyn = subprocess.run([tools.tool("llvm-readelf"), "-d", str(lib)], capture_output=True,
                             text=True).stdout
        assert "[libmlir_cuda_runtime.so]" in dyn and "[$ORIGIN]" in dyn
        calls = e["mgpu_calls"]  # per call
        assert calls["mgpuMemcpy"] == e["stats"]["copies"] + e["stats"]["local_copies"]
        assert calls["mgpuLaunchKernel"] == e["stats"]["kernels"]
        assert calls["mgpuStreamCreate"] == calls["mgpuEventCreate"] == calls["mgpuMemAlloc"] == 0
        assert calls["mgpuStreamSynchronize"] == 1
        scratch = e["strategy"] not in gpu_prepare.PEER  # oneshot, twoshot need none
        assert (e["workspace_bytes"] > 0) == (e["workspace"] == "arg" and scratch)
    # The stub only has to exist under the name the wrappers need.
    dyn = subprocess.run([tools.tool("llvm-readelf"), "-d", str(out / "libLLVM.so")],
                         capture_output=True, text=True).stdout
    assert "[libLLVM.so]" in dyn


def test_bundle_programs_run_on_the_emulator(bundle, tmp_path):
    """The very libraries to be carried (cubin when ptxas is here), on host
    memory: every perf and dtype program gives the allreduce."""
    out, entries, _ = bundle
    emu = Emulator(tmp_path)
    rng = np.random.default_rng(0)
    np_types = {"f32": np.float32, "bf16": np.uint16, "i1": np.bool_, "f64": np.float64}
    for e in entries:
        n, numel, dtype = e["n"], e["numel"], e["dtype"]
        if dtype == "f64":
            xs = [rng.random(numel) + 0.5 for _ in range(n)]
        elif dtype == "i1":
            xs = [rng.random(numel) > 0.5 for _ in range(n)]
        elif dtype == "bf16":
            xs = [(rng.random(numel).astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)
                  for _ in range(n)]
        else:
            xs = [rng.random(numel).astype(np.float32) for _ in range(n)]
        ys = [np.zeros(numel, np_types[dtype]) for _ in range(n)]
        ws = [np.zeros(e["workspace_bytes"], np.uint8)] if e["workspace_bytes"] else []
        emu.run(out / e["file"], e["entry"], xs + ys + ws, seed=3)
        if dtype == "f64":
            want = xs[0] * xs[1] * xs[2]
        elif dtype == "i1":
            want = xs[0] ^ xs[1] ^ xs[2]
        elif dtype == "bf16":
            f = lambda a: (a.astype(np.uint32) << 16).view(np.float32)
            want, ys = np.maximum(np.maximum(f(xs[0]), f(xs[1])), f(xs[2])), [f(y) for y in ys]
        else:
            want = sum(x.astype(np.float64) for x in xs)
        for y in ys:
            np.testing.assert_allclose(y.astype(np.float64), want, rtol=1e-5, err_msg=e["file"])


@pytest.mark.parametrize("strategy", gpu_prepare.STRATEGIES)
@pytest.mark.parametrize("n,numel,to_device", [(3, 7, None), (4, 1000, None), (4, 3, None),
                                               (3, 50, 1)])
def test_schedule_replay_is_the_allreduce(strategy, n, numel, to_device):
    """gpu_run's torch reference replays the exported schedule; with numpy
    arrays the replay must give the allreduce."""
    with make_context():
        m = ir.Module.parse(all_reduce_module(n, [numel], "f32", "sum", to_device=to_device,
                                              peer_access=strategy in gpu_prepare.PEER))
        lower_collectives(m.operation, strategy)
        sched = gpu_prepare.schedule(m.body.operations[0], n)
    rng = np.random.default_rng(1)
    xs = [rng.random(numel) for _ in range(n)]
    ys = [np.full(numel, np.nan) for _ in range(1 if to_device is not None else n)]
    bufs = {**{f"x{i}": x for i, x in enumerate(xs)}, **{f"y{i}": y for i, y in enumerate(ys)},
            **{k: np.full(v, np.nan) for k, v in sched["buffers"].items()}}

    def copy(dst, src):
        dst[...] = src

    def combine(kind, ins, out, aliased):
        acc = ins[0].copy()
        for v in ins[1:]:
            acc = acc + v
        out[...] = acc

    gpu_run.replay(sched, bufs, copy, combine)
    for y in ys:
        np.testing.assert_allclose(y, sum(xs))


def test_table_and_targets():
    p = {"numel": 1 << 24, "n": 4, "traffic_bytes": 10 << 26}
    m = gpu_run.row_metrics(p, 1e-3, copy_bw=4e12)
    assert m["algbw"] == pytest.approx((1 << 26) / 1e-3)
    assert m["busbw"] == pytest.approx(m["algbw"] * 1.5)
    assert m["efficiency"] == pytest.approx((10 << 26) / 1e-3 / 4e12)
    rows = [dict(size="64MB", n=4, strategy="ring", variant="dev-arg", ok=True, seconds=1e-3,
                 torch_seconds=2e-3, replay_seconds=5e-3, **m),
            dict(size="1MB", n=4, strategy="ring", variant="dev-arg", ok=True, seconds=1e-3,
                 **m)]
    table = gpu_run.format_table(rows)
    assert table.count("\n") == 3 and " 2.00 " in table
    (row, ok_eff, ok_torch), = gpu_run.verdicts(rows)
    assert row is rows[0] and ok_eff == (m["efficiency"] >= 0.7) and ok_torch is True
    assert gpu_run._aliases([["s0", 0, 4]], ["s0", 2, 4]) and not gpu_run._aliases(
        [["s0", 0, 4]], ["s0", 4, 4])


def test_numpy_check_and_sanitizer_reports():
    """gpu_run's numpy reference, the two-ends sampling of large buffers,
    and the error counts of compute-sanitizer's two report formats."""
    xs = [np.arange(10, dtype=np.float32) + i for i in range(3)]
    want = gpu_run.numpy_reference(xs, "sum")
    assert gpu_run.numpy_close(sum(xs), want, "f32", 3)
    assert not gpu_run.numpy_close(sum(xs) + 1, want, "f32", 3)
    assert gpu_run.sanitizer_errors("========= ERROR SUMMARY: 0 errors\n") == 0
    assert gpu_run.sanitizer_errors("========= RACECHECK SUMMARY: 2 hazards displayed "
                                    "(2 errors, 0 warnings)\n") == 2
    assert gpu_run.sanitizer_errors("no summary") is None


def test_bundle_scripts_need_no_mlir():
    """The GPU machine has no MLIR wheels and no coll package."""
    for path in (ROOT / "bench" / "gpu_run.py", ROOT / "backends" / "gpu" / "driver.py"):
        tree = ast.parse(path.read_text())
        imported = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                imported.update(a.name.split(".")[0] for a in node.names)
            elif isinstance(node, ast.ImportFrom):
                imported.add((node.module or "").split(".")[0] if not node.level else ".")
        assert not imported & {"mlir", "coll", "."}, (path, imported)


def test_driver_exits_cleanly_without_a_gpu(bundle, tmp_path):
    out, _, _ = bundle
    r = subprocess.run([sys.executable, str(out / "gpu_run.py"), str(out), "--quick",
                        "--results", str(tmp_path)], capture_output=True, text=True, cwd=tmp_path)
    if r.returncode == 0:
        pytest.skip("a GPU and torch are present: the driver ran")
    assert r.returncode == 2, r.stderr
    assert r.stderr.startswith("gpu_run: error:") and "Traceback" not in r.stderr


FAKE_GPU_RUN = r"""
import ctypes, json, os, sys
sys.path.insert(0, sys.argv[2])
import fake_torch
sys.modules["torch"] = fake_torch
from gpu_emulator import Emulator, build_emulator
bundle = sys.argv[1]
# The carried wrappers need libcuda.so.1: the emulator takes their place; a
# host-memory libcuda.so.1 serves --check-one's CUDA driver calls.
os.makedirs(sys.argv[3], exist_ok=True)
ctypes.CDLL(str(build_emulator(sys.argv[3], "libcuda.so.1", ["-DEMULATE_DRIVER"])),
            mode=ctypes.RTLD_GLOBAL)
emu = Emulator(bundle)
emu.lib.mgpuEmuReset(1, emu._cb)
sys.path.insert(0, bundle)
import gpu_run
os.environ["PATH"] = "/nonexistent"  # no compute-sanitizer: reported as not run
rc = gpu_run.main([bundle, "--results", sys.argv[3]])
# What each compute-sanitizer child runs: the program alone, against numpy.
for p in json.load(open(os.path.join(bundle, "manifest.json")))["programs"]:
    if p["set"] == "sanitize":
        assert gpu_run.main([bundle, "--check-one", p["file"]]) == 0, p["file"]
        print("checked", p["file"])
err = emu.lib.mgpuEmuError().decode() or emu.error
print("rc", rc, "emulator:", err or "clean")
sys.exit(rc or (3 if err else 0))
"""


def test_driver_runs_on_a_fake_gpu(bundle, tmp_path):
    """The whole driver, end to end, with torch faked on numpy and the
    emulator in place of libmlir_cuda_runtime.so: every program checked and
    timed, both torch references, the table and the result files."""
    import shutil
    out, entries, _ = bundle
    copy = tmp_path / "gpu"
    shutil.copytree(out, copy)
    r = subprocess.run([sys.executable, "-c", FAKE_GPU_RUN, str(copy), str(Path(__file__).parent),
                        str(tmp_path / "results")], capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    assert "emulator: clean" in r.stdout
    text = (tmp_path / "results" / "results.txt").read_text()
    checked = [e for e in entries if e["set"] != "sanitize"]  # those run under the sanitizer
    assert f"correctness: {len(checked)}/{len(checked)} programs ok" in text
    rows = json.loads((tmp_path / "results" / "results.json").read_text())["rows"]
    perf = [r for r in rows if r["set"] == "perf"]
    k = len(gpu_prepare.STRATEGIES) * len(gpu_prepare.VARIANTS)
    assert len(perf) == k and all(r["ok"] and r["seconds"] > 0 for r in perf)
    assert all(r["numpy_ok"] and r["torch_ok"] and r["event_seconds"] > 0 for r in perf)
    assert all(r["torch_seconds"] > 0 and r["replay_ok"] for r in perf)
    assert text.count(" 1MB  4 ") == k
    assert "compute-sanitizer: not found on this machine (racecheck/memcheck NOT run)" in text
    assert r.stdout.count("checked sanitize_") == 2
