"""bench/collectives_run.py on a tiny grid: every op and strategy runs and
matches numpy's version of the same data movement, and the peak-memory
child reports the scratch of one run."""
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "bench"))
import collectives_run  # noqa: E402


def test_every_strategy_matches_numpy(tmp_path):
    out = tmp_path / "rows.json"
    collectives_run.main(["--devices", "3", "--mib", "1", "--repeat", "1", "--json", str(out)])
    rows = json.loads(out.read_text())["rows"]
    assert {(r["op"], r["strategy"]) for r in rows} == {
        (op, s) for op in collectives_run.NAMES for s in collectives_run.strategies(op)}
    for r in rows:
        assert r["ok"], r
        assert r["time_s"] > 0 and r["numpy_s"] > 0


def test_peak_memory_child_sees_buffers_not_scratch():
    # A 1 MiB reduce on 2 devices: 3 MiB of buffers made before the peak is
    # reset; the tiled run needs at most one buffer of scratch per device.
    m = collectives_run.peak_memory("reduce", 2, 1, "direct")
    assert m["buffer_bytes"] == 3 << 20
    assert 0 <= m["scratch_bytes"] <= m["bound_bytes"] == 2 << 20
    assert m["ok"]
    # Untiled, the root's copy of the other input is a whole 1 MiB scratch
    # buffer: static, held by the program from its load (counted whole).
    untiled = collectives_run.peak_memory("reduce", 2, 1, "direct", tile=0)
    assert untiled["static_bytes"] == 1 << 20 and untiled["scratch_bytes"] >= 1 << 20
