"""bench/compile_time.py --quick: every stage runs in a child process and
the rows carry what bench/report.py reads."""
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "bench"))
import compile_time  # noqa: E402


def test_quick_rows(tmp_path):
    out = tmp_path / "rows.json"
    assert compile_time.main(["--quick", "--strategies", "ring", "--json", str(out)]) == 0
    rows = json.loads(out.read_text())
    assert [r["n"] for r in rows] == list(compile_time.QUICK_NS)
    for r in rows:
        assert "error" not in r
        for stage in ("lower", "route", "jit", "run", "e2e"):
            assert r[f"{stage}_s"] >= 0 and r[f"{stage}_rss"] > 0
        assert r["copies"] > 0 and r["kernels"] > 0
        assert len(compile_time.cells(r)) == len(compile_time.heads())
        if compile_time.gpu_available():  # the shared library was built, no GPU needed
            assert "gpu_error" not in r
            assert r["gpu_route_s"] > 0 and r["gpu_route_cpu"] > 0 and r["gpu_route_rss"] > 0


def test_report_renders_from_json(tmp_path, monkeypatch):
    """bench/report.py draws the compile-time plot (log axes) and table from
    rows a run wrote, without measuring; every column is in the table."""
    import report
    monkeypatch.setattr(report, "OUT_DIR", str(tmp_path))
    rows = [{"strategy": s, "n": n, "numel": 4096, "ops": 10 * n * n, "copies": 2 * n * n, "kernels": n * n,
             "lower_s": 1e-3 * n * n, "route_s": 2e-3 * n * n, "jit_s": 1e-3 * n * n, "run_s": 1e-4,
             "e2e_s": 4e-3 * n * n, "e2e_cpu": 4e-3 * n * n, "lower_cpu": 1e-3 * n * n,
             "route_cpu": 2e-3 * n * n, "jit_cpu": 1e-3 * n * n, "gpu_route_s": 3e-3 * n * n,
             "gpu_route_cpu": 3e-3 * n * n, "gpu_route_rss": 2 ** 28,
             **{f"{k}_rss": 2 ** 27 for k in ("lower", "route", "jit", "run", "e2e")}}
            for s in ("ring", "naive") for n in (16, 64)]
    path = tmp_path / "rows.json"
    path.write_text(json.dumps(rows))
    assert report.main(["--compile-json", str(path), "--compile-only"]) == 0
    assert (tmp_path / "compile_time.png").stat().st_size > 10000
    md = "\n".join(report.compile_render(rows))
    for head in compile_time.heads():
        assert f" {head} |" in md
    assert "| ring | 64 |" in md and "ring gpu_route (gpu_route_cpu) per copy+kernel N=64 vs N=16: 1.00x" in md


def test_targets_state_each_and_whether_it_is_met():
    """The issue's targets, from rows: a slow N=256 ring lowering is MISSED,
    a fast one ok; one line per target that has its row."""
    def row(s, n, lower_s, e2e_s):
        return {"strategy": s, "n": n, "copies": n, "kernels": n, "lower_s": lower_s, "lower_cpu": lower_s,
                "e2e_s": e2e_s, "e2e_rss": 2 ** 28}
    fast = compile_time.targets([row("ring", 16, 0.01, 0.5), row("ring", 256, 4.2, 30.0)])
    assert "N=256 ring lowered and verified 4.2 s, 4.2 CPU s (< 5 s): ok" in fast
    assert "N=256 ring end to end 30.0 s (< 180 s), 0.25 GB (< 4 GB): ok" in fast
    slow = compile_time.targets([row("ring", 16, 0.01, 0.5), row("ring", 256, 5.6, 200.0)])
    assert "N=256 ring lowered and verified 5.6 s, 5.6 CPU s (< 5 s): MISSED" in slow
    assert "N=256 ring end to end 200.0 s (< 180 s), 0.25 GB (< 4 GB): MISSED" in slow
    assert "ring lower (lower_cpu) per copy+kernel N=256 vs N=16: 35.00x (within 2x): MISSED" in slow
