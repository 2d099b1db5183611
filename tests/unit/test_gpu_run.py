"""The staged device run (bench/gpu_run.py) end to end without a GPU: the
very bundle gpu_prepare.py builds (small sizes), torch faked on numpy
(fake_torch.py), the emulated CUDA runtime and driver (mgpu_emulator.c,
kernels on the CPU), and a fake compute-sanitizer; every process gpu_run
starts gets the fake GPU from fake_gpu/sitecustomize.py. Each failure path
exits non-zero with its message: a missing sanitizer, a sanitizer finding,
a kernel fault, a time-out, a wrong result, a spent budget."""
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from gpu_emulator import build_emulator

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT / "bench"))
import gpu_prepare  # noqa: E402
import gpu_run  # noqa: E402

LIBS = {"smoke_ring_n4.so", "sanitize_twoshot_n4.so", "perf_ring_n2.so", "perf_oneshot_n2.so",
        "dtype_bf16_max.so"}
SIZES = (4096, 16384)


@pytest.fixture(scope="module")
def fake(tmp_path_factory):
    """(bundle, environment of a machine with a fake GPU and sanitizer)."""
    top = tmp_path_factory.mktemp("fakegpu")
    libs = [lib for lib in gpu_prepare.plan(sizes=SIZES, devices=(2,), dtype_numels=(33,),
                                            smoke=dict(strategy="ring", n=4, bytes=16384))
            if lib["file"] in LIBS]
    entries, failed, _, _ = gpu_prepare.prepare(top / "bundle", libs, workers=2, sizes=SIZES,
                                                devices=(2,))
    assert not failed, failed
    # The carried wrappers need a real driver: the emulator takes their place.
    build_emulator(top / "bundle")
    cuda = build_emulator(top, "libcuda.so.1", ["-DEMULATE_DRIVER"])
    tools = top / "bin"
    tools.mkdir()
    sanitizer = tools / "compute-sanitizer"
    sanitizer.write_text(f"#!{sys.executable}\n" + (HERE / "fake_compute_sanitizer.py").read_text())
    sanitizer.chmod(0o755)
    env = dict(os.environ, COLL_FAKE_GPU=str(top / "bundle"), COLL_FAKE_CUDA=str(cuda),
               PYTHONPATH=os.pathsep.join(p for p in (str(HERE / "fake_gpu"), os.environ.get("PYTHONPATH"))
                                          if p),  # the coll this test imports, in the children too
               PATH=f"{tools}:/usr/bin:/bin")
    for var in ("COLL_EMU_INJECT", "FAKE_SANITIZER_FIND", "CUDA_HOME", "CUDA_PATH"):
        env.pop(var, None)
    return top / "bundle", env


def gpu_run_cmd(bundle, env, *args, timeout=600, **extra):
    r = subprocess.run([sys.executable, str(bundle / "gpu_run.py"), *args], capture_output=True,
                       text=True, env=dict(env, **extra), timeout=timeout, cwd=bundle.parent)
    return r


def rows(results):
    return gpu_run.read_rows(str(results))


def test_smoke_runs_under_memcheck_and_initcheck(fake, tmp_path):
    """The first device call: the smoke program checked cold, warm (a graph
    replay) and op by op, under each tool in a process of its own; racecheck
    recorded as not applicable (no shared memory in the kernels)."""
    bundle, env = fake
    r = gpu_run_cmd(bundle, env, "smoke", "--results", str(tmp_path))
    assert r.returncode == 0, r.stdout + r.stderr
    assert "compute-sanitizer --tool memcheck smoke_ring_n4.so:all_reduce: clean" in r.stdout
    assert "compute-sanitizer --tool initcheck smoke_ring_n4.so:all_reduce: clean" in r.stdout
    got = {x["id"]: x for x in rows(tmp_path)}
    assert got["smoke_ring_n4.so:all_reduce:memcheck"]["ok"] and got["smoke_ring_n4.so:all_reduce:memcheck"]["errors"] == 0
    check = got["smoke_ring_n4.so:all_reduce"]
    assert check["calls"] == {"cold": True, "warm": True, "direct": True, "graph": True}
    assert check["graph_counts"] == {"captures": 1, "replays": 1, "direct": 1, "refused": 0}
    assert "no kernel of this library uses shared memory" in got["smoke_ring_n4.so:all_reduce:racecheck"]["skipped"]
    env_json = json.loads((tmp_path / "environment.json").read_text())
    assert env_json["driver_cuda_version"] == 13000 and env_json["tools"]["ptxas"]


def test_missing_sanitizer_exits_3(fake, tmp_path):
    bundle, env = fake
    r = gpu_run_cmd(bundle, env, "smoke", "--results", str(tmp_path), PATH="/usr/bin:/bin")
    assert r.returncode == 3, r.stdout + r.stderr
    assert "gpu_run: error: compute-sanitizer not found" in r.stderr and "did NOT run" in r.stderr
    assert rows(tmp_path)[-1]["id"] == "compute-sanitizer" and not rows(tmp_path)[-1]["ok"]


def test_sanitizer_from_pip_without_execute_bit(fake, tmp_path):
    """pip's nvidia packages install compute-sanitizer without the execute
    bit, outside PATH: found on sys.path and made runnable."""
    bundle, env = fake
    site = tmp_path / "site"
    where = site / "nvidia" / "cu13" / "bin"
    where.mkdir(parents=True)
    shutil.copy(bundle.parent / "bin" / "compute-sanitizer", where / "compute-sanitizer")
    (where / "compute-sanitizer").chmod(0o644)
    r = gpu_run_cmd(bundle, env, "sanitize", "--results", str(tmp_path / "r"), PATH="/usr/bin:/bin",
                    PYTHONPATH=f"{env['PYTHONPATH']}:{site}")
    assert r.returncode == 0, r.stdout + r.stderr
    assert f"compute-sanitizer: {where / 'compute-sanitizer'} (made executable in place" in r.stdout
    assert "--tool initcheck sanitize_twoshot_n4.so:all_reduce: clean" in r.stdout


def test_sanitizer_finding_exits_1(fake, tmp_path):
    bundle, env = fake
    r = gpu_run_cmd(bundle, env, "smoke", "--results", str(tmp_path),
                    FAKE_SANITIZER_FIND="initcheck:smoke_ring")
    assert r.returncode == 1, r.stdout + r.stderr
    assert "--tool memcheck smoke_ring_n4.so:all_reduce: clean" in r.stdout
    assert ("gpu_run: smoke_ring_n4.so:all_reduce:initcheck: 1 sanitizer error(s): "
            "========= Invalid __global__ read of size 4 bytes") in r.stderr
    bad = [x for x in rows(tmp_path) if not x["ok"]]
    assert [x["id"] for x in bad] == ["smoke_ring_n4.so:all_reduce:initcheck"]


def test_all_stages_and_report(fake, tmp_path):
    """The second device call, `all`: the sanitize programs under both tools,
    every dtype program, every perf entry checked cold, warm and op by op
    and timed (wall and device time, as a graph and op by op; torch's
    equivalent; the D2D copy rate), then the report: results.json and the
    README table."""
    bundle, env = fake
    r = gpu_run_cmd(bundle, env, "all", "--results", str(tmp_path), "--budget", "500")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "--tool memcheck sanitize_twoshot_n4.so:all_reduce: clean" in r.stdout
    perf = [x for x in rows(tmp_path) if x["stage"] == "perf"]
    assert len(perf) == 4 and all(x["ok"] for x in perf)
    for x in perf:
        assert x["checks"] == {"cold": True, "warm": True, "direct": True, "timed": True, "graph": True,
                              "memory": True}
        for k in ("graph_wall_s", "graph_device_s", "direct_wall_s", "direct_device_s",
                  "torch_device_s", "torch_wall_s", "d2d_Bps"):
            assert x[k] > 0, k
        assert x["graph_counts"]["captures"] == 1 and x["graph_counts"]["replays"] > x["repeat"]
        assert 0 < x["peak_device_bytes"] <= gpu_prepare.MEMORY_CAP
    assert len([x for x in rows(tmp_path) if x["stage"] == "dtype" and x["ok"]]) == 7
    result = json.loads((tmp_path / "results.json").read_text())
    assert {(x["strategy"], x["bytes"]) for x in result["perf"]} == {
        (s, b) for s in ("ring", "oneshot") for b in SIZES}
    for x in result["perf"]:
        assert x["device_s"] == x["graph_device_s"] and 0 < x["d2d_share"]
        assert x["membw"] == pytest.approx(x["d2d_share"] * x["d2d_Bps"])
    nv = result["auto_vs_fastest"]["nvlink-h200"]
    assert nv["of"] == 2 and all(p["ratio"] >= 1 for p in nv["points"])
    text = (tmp_path / "README.md").read_text()
    assert "## N = 2" in text and "| 4 KiB |" in text and "auto (nvlink-h200)" in text
    assert "sanitize_twoshot_n4.so:all_reduce:initcheck: clean" in text and "Failed: none" in text
    # The report alone, from the rows (no GPU needed), gives the same tables.
    r = gpu_run_cmd(bundle, env, "report", str(tmp_path), "--out", str(tmp_path / "again"),
                    COLL_FAKE_GPU="")
    assert r.returncode == 0 and (tmp_path / "again" / "README.md").read_text() == text


def test_fault_timeout_and_wrong_result(fake, tmp_path):
    """A kernel fault ends its worker and the next worker goes on; a hang is
    killed at --timeout; a wrong result is reported; the rest still runs."""
    bundle, env = fake
    inject = ("fault:oneshot_n2.so:ar_4096,hang:oneshot_n2.so:ar_16384,"
              "wrong:ring_n2.so:ar_16384")
    r = gpu_run_cmd(bundle, env, "perf", "--results", str(tmp_path), "--timeout", "10",
                    COLL_EMU_INJECT=inject)
    assert r.returncode == 1, r.stdout + r.stderr
    got = {x["id"]: x for x in rows(tmp_path)}
    assert got["perf_ring_n2.so:ar_4096"]["ok"]
    assert "wrong result" in got["perf_ring_n2.so:ar_16384"]["error"]
    assert got["perf_oneshot_n2.so:ar_4096"]["error"].startswith("kernel fault")
    assert got["perf_oneshot_n2.so:ar_16384"]["error"] == "timed out after 10 s (killed)"
    for pid in ("perf_ring_n2.so:ar_16384", "perf_oneshot_n2.so:ar_4096", "perf_oneshot_n2.so:ar_16384"):
        assert f"gpu_run: {pid}: " in r.stderr


def test_fault_under_the_sanitizer_check(fake, tmp_path):
    """The sanitizer's child (the CUDA driver alone) sees a fault as well."""
    bundle, env = fake
    r = gpu_run_cmd(bundle, env, "smoke", "--results", str(tmp_path), COLL_EMU_INJECT="fault:smoke")
    assert r.returncode == 1, r.stdout + r.stderr
    assert "kernel fault" in r.stderr


def test_budget_and_resume(fake, tmp_path):
    bundle, env = fake
    r = gpu_run_cmd(bundle, env, "perf", "--results", str(tmp_path), "--budget", "0")
    assert r.returncode == 5 and "rerun with --resume" in r.stderr
    r = gpu_run_cmd(bundle, env, "perf", "--results", str(tmp_path), "--only", "ring")
    assert r.returncode == 0
    r = gpu_run_cmd(bundle, env, "perf", "--results", str(tmp_path), "--resume")
    assert r.returncode == 0 and "perf: 2 programs (2 done before)" in r.stdout


def test_no_gpu_exits_2(fake, tmp_path):
    """Without a GPU (this machine, no fake): a one-line error, exit 2."""
    bundle, _ = fake
    env = {k: v for k, v in os.environ.items() if not k.startswith("COLL_FAKE")}
    r = subprocess.run([sys.executable, str(bundle / "gpu_run.py"), "smoke", "--results", str(tmp_path)],
                       capture_output=True, text=True, env=env, timeout=300)
    if r.returncode == 0:
        pytest.skip("a GPU is present")
    assert r.returncode == 2, r.stdout + r.stderr
    assert r.stderr.startswith("gpu_run: error:") and "Traceback" not in r.stderr


def test_old_driver_refused(fake, tmp_path, monkeypatch):
    """Cubins from ptxas 13.0 need a CUDA 13.0 driver: an older one is refused
    before anything runs, with both versions."""
    import types
    manifest = json.loads((fake[0] / "manifest.json").read_text())
    fake_driver = types.SimpleNamespace(available=lambda d: (True, ""), driver_version=lambda: 12080)
    monkeypatch.setitem(sys.modules, "cuda_driver", fake_driver)
    with pytest.raises(gpu_run.SetupError, match=r"supports CUDA 12\.8; the cubins .* need CUDA 13\.0 \(R580\+ driver\)"):
        gpu_run.preflight(None, manifest)


def test_runs_from_bench_with_folder(fake, tmp_path):
    """bench/gpu_run.py itself (not the bundle's copy) with --folder: the
    bundle's cuda_driver.py is found (past the preflight: the sanitizer is
    what is missing here)."""
    bundle, env = fake
    r = subprocess.run([sys.executable, str(ROOT / "bench" / "gpu_run.py"), "smoke", "--folder", str(bundle),
                        "--results", str(tmp_path)], capture_output=True, text=True, timeout=300,
                       env=dict(env, PATH="/usr/bin:/bin"))
    assert r.returncode == 3, r.stdout + r.stderr
    assert "GPU: host emulator" in r.stdout


# Found by an outside attack: bad values ran (--timeout 0 or nan, --n -1,
# --budget nan) or exited argparse's 2 (SETUP_EXIT here); a broken folder gave
# tracebacks. Run without site-packages: gpu_run.py needs neither coll nor numpy
# to refuse them.
def bare_gpu_run(*args, cwd=None):
    return subprocess.run([sys.executable, "-S", str(ROOT / "bench" / "gpu_run.py"), *args], capture_output=True,
                          text=True, timeout=60, cwd=cwd)


@pytest.mark.parametrize("args,says", [
    (["smoke", "--timeout", "0"], "argument --timeout: 0 is out of range; expected seconds > 0"),
    (["smoke", "--timeout", "nan"], "argument --timeout: nan is out of range"),
    (["smoke", "--timeout", "x"], "argument --timeout: 'x' is not a number"),
    (["perf", "--n", "-1"], "argument --n: -1 is out of range; expected 1..1024"),
    (["perf", "--n", "two"], "argument --n: 'two' is not an integer"),
    (["all", "--budget", "nan"], "argument --budget: nan is out of range"),
    (["all", "--budget", "-1"], "argument --budget: -1 is out of range; expected seconds >= 0"),
    (["perf", "--max-bytes", "0"], "argument --max-bytes: 0 is out of range; expected 1.."),
    (["bogus"], "argument stage: invalid choice: 'bogus'"),
    (["smoke", "some/dir"], "results folders (some/dir) are report's; expected --results DIR"),
])
def test_bad_arguments_exit_1(args, says):
    r = bare_gpu_run(*args)
    assert r.returncode == 1, (r.returncode, r.stderr)
    assert says in r.stderr and "Traceback" not in r.stderr, r.stderr


ENTRY = {"entry": "f", "n": 2, "numel": 4, "dtype": "f32", "kind": "sum", "workspace_bytes": 0}


@pytest.mark.parametrize("stage", ["smoke", "report"])
@pytest.mark.parametrize("text,says", [
    ("{}", "is not gpu_prepare.py's manifest: it has no 'libraries' list"),
    ("garbage{", "is not gpu_prepare.py's manifest: not JSON"),
    ("[1, 2]", "is not gpu_prepare.py's manifest: it holds a JSON list; expected an object"),
    ('{"libraries": [], "tools": 3}', "it has no 'tools' object"),
    (json.dumps({"libraries": [{"file": "a.so"}], "tools": {}}), "libraries[0] has no 'file' and 'set'"),
    (json.dumps({"libraries": [{"file": "a.so", "set": "perf", "entries": [dict(ENTRY, n="2")]}], "tools": {}}),
     "libraries[0].entries[0] (a.so) has no valid 'n'"),
    (json.dumps({"libraries": [{"file": "a.so", "set": "perf", "entries": [dict(ENTRY, dtype="f7")]}],
                 "tools": {}}), "libraries[0].entries[0] (a.so) has element type 'f7'"),
    (b"\xff\xfe", "is not gpu_prepare.py's manifest: not JSON"),
])
def test_a_broken_manifest_is_refused(tmp_path, stage, text, says):
    (tmp_path / "manifest.json").write_bytes(text if isinstance(text, bytes) else text.encode())
    r = bare_gpu_run(stage, "--folder", str(tmp_path), "--results", str(tmp_path / "results"))
    assert r.returncode == 1, (r.returncode, r.stderr)
    assert r.stderr.startswith("gpu_run: error: ") and says in r.stderr and "Traceback" not in r.stderr, r.stderr


def test_a_folder_without_cuda_driver_is_refused(tmp_path):
    (tmp_path / "manifest.json").write_text(json.dumps({"libraries": [], "tools": {}}))
    r = bare_gpu_run("smoke", "--folder", str(tmp_path), "--results", str(tmp_path / "results"))
    assert r.returncode == 1 and "has a manifest.json but no cuda_driver.py" in r.stderr, r.stderr
    assert not (tmp_path / "results").exists()


def test_argument_types_agree_with_coll_tools():
    """gpu_run.py's copies of coll/tools/argtypes.py give the same values and
    the same messages (one validation, copied only because the bundle runs
    without the package)."""
    import argparse

    from coll.tools import argtypes

    def outcome(parse, text):
        try:
            return parse(text)
        except argparse.ArgumentTypeError as e:
            return str(e)
    for text in ("0", "1", "7", "-1", "1024", "1025", "x", "1.5", "", " 3"):
        assert outcome(gpu_run.count(1, 1024), text) == outcome(argtypes.count(1, 1024), text), text
        assert outcome(gpu_run.count(1), text) == outcome(argtypes.count(1), text), text
    for text in ("0", "1", "0.5", "-2", "nan", "inf", "1e9", "x", "604800"):
        assert outcome(gpu_run.seconds(), text) == outcome(argtypes.seconds(), text), text
        assert outcome(gpu_run.seconds(zero=True), text) == outcome(argtypes.seconds(zero=True), text), text
