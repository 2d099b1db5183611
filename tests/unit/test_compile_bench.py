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
