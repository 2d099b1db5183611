"""The cost model of local work around a collective (analysis/overlap.py)
and the decision it makes for coll-mpi-overlap: the tasks it adds, where
it puts them in each rank's program, the costs it gives them, and that
`--epilogues=auto` tiles exactly where the prediction on a rank switch
says it pays."""
import os
import re
import sys

import pytest
from mlir import ir

from coll.analysis import cost_model, overlap, taskgraph
from coll.analysis.cost_model import simulate
from coll.core.pipeline import run as run_pipeline
from coll.ir import make_context
from coll.ir.generate import collective_module
from coll.ir.walk import find_ops
from coll.lowering.mpi.overlap import PREDICTED, mark, pays, prediction_of
from coll.lowering.mpi.to_mpi import overlap_predictions
from coll.passes.choose_strategy import Instance, candidate_graph

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "bench"))
import collective_matmul as cm  # noqa: E402
import epilogue as bench  # noqa: E402

MIB = 1 << 20


def _profile(cores: int | None = None, **more: object) -> cost_model.Profile:
    data = {"resources": "ports", "memory_bandwidth_Bps": [[1 << 20, 40e9], [64 << 20, 10e9]],
            "link_bandwidth_Bps": 10e9, "link_latency_s": 1e-6, "flops_per_s": 50e9, "copy_cores": "target", **more}
    if cores:
        data["cores"] = cores
    return cost_model.profile_from_dict(data)


def _all_gather(n: int, numel: int, strategy: str = "ring") -> taskgraph.Graph:
    """`strategy`'s all_gather of `numel` f32 a device into n x numel (arguments: n
    inputs, then n outputs)."""
    with make_context(), ir.Location.unknown():
        module = ir.Module.parse(collective_module("all_gather", n, [numel], "f32"))
        [op] = find_ops(module.operation, "coll.all_gather")
        return candidate_graph(Instance.of(op), strategy)


def _epilogue(graph: taskgraph.Graph, n: int, rows: int, row_bytes: int, tile: int, flops: float = 0.0,
              streamed: float = 0.0, reused: float = 0.0) -> overlap.Local:
    """Local work on each device's all_gather output (argument n + d)."""
    return overlap.Local(flops, streamed, reused, rows * row_bytes, rows, row_bytes, tile,
                         tuple((d, n + d) for d in range(n)))


def test_regions_name_the_arguments_a_task_touches():
    g = _all_gather(2, 1024)
    copies = [t for t in g.tasks if t.kind == "copy"]
    assert copies
    for t in copies:  # (reads an input, writes a chunk of an output: 4 KiB each)
        (ra, lo_a, hi_a, wa), (rb, lo_b, hi_b, wb) = t.regions
        assert (ra, wa, hi_a - lo_a) == (t.src, False, 4096)
        assert (rb, wb, hi_b - lo_b) == (2 + t.device, True, 4096)


def test_nothing_to_do_costs_nothing():
    """Local work of no flops and no bytes leaves the prediction as it was,
    in tiles or whole."""
    g = _all_gather(4, 1 << 16)
    p = _profile(cores=4)
    run = _epilogue(g, 4, 64, 4096 * 4, 16)
    assert overlap.predict(g, [run], p)[:2] == pytest.approx((simulate(g, p).total,) * 2)


@pytest.mark.parametrize("tiled", [True, False])
def test_tasks_come_after_what_they_wait_for(tiled):
    g = _all_gather(4, 1 << 14)
    run = _epilogue(g, 4, 64, (1 << 14) * 4 * 4 // 64, 8, streamed=1e6)
    pro = overlap.Local(1e6, 0, 0, 1 << 16, 64, 1 << 10, 8, tuple((d, d) for d in range(4)), before=True)
    out = overlap.with_local(g, [run, pro], _profile(), tiled)
    assert all(d < i for i, t in enumerate(out.tasks) for d in t.deps)
    local = [t for t in out.tasks if t.kind == "local"]
    assert len(local) == 4 * (2 * 8 if tiled else 2)


def test_a_whole_epilogue_waits_for_all_of_its_ranks_tasks_and_a_tile_for_its_rows():
    n, numel = 2, 1 << 14
    g = _all_gather(n, numel)
    row_bytes = 4 * numel * n // 64  # 64 rows of the gathered output
    whole = overlap.with_local(g, [_epilogue(g, n, 64, row_bytes, 64, streamed=1.0)], _profile(), False)
    for t in (t for t in whole.tasks if t.kind == "local"):
        mine = {i for i, u in enumerate(whole.tasks) if u.kind != "local" and t.device in (u.device, u.src)}
        assert mine <= set(t.deps)
    tiles = overlap.with_local(g, [_epilogue(g, n, 64, row_bytes, 32, streamed=1.0)], _profile(), True)
    for t in (t for t in tiles.tasks if t.kind == "local"):
        writers = {i for i in t.deps if tiles.tasks[i].kind == "copy"}
        assert writers  # (a tile of half the rows: one device's chunk)
        for i in writers:
            assert any(w and r == n + t.device for r, _, _, w in tiles.tasks[i].regions)


def test_reuse_is_cheaper_in_tiles():
    """Bytes touched again cost the tile's working set in tiles (in cache),
    the run's whole; bytes streamed cost the run's in both."""
    p = _profile()
    run = overlap.Local(0.0, 0.0, 64 * MIB, 64 * MIB, 64, MIB, 1, ((0, 0),))
    assert run.seconds(1 / 64, p) * 64 < run.seconds(1.0, p) / 2
    streamed = overlap.Local(0.0, 64 * MIB, 0.0, 64 * MIB, 64, MIB, 1, ((0, 0),))
    assert streamed.seconds(1 / 64, p) * 64 == pytest.approx(streamed.seconds(1.0, p))


def test_tiles_overlap_messages_that_take_no_core_and_not_messages_that_take_the_only_one():
    """A compute-bound epilogue (no reuse to gain) after a direct
    all_gather (every chunk sent at once): where messages hold only their
    ports (a network's NIC moves them), the tiles of the rows that arrived
    compute while the rest arrive; where every rank shares one core, which
    each message holds (shared memory: the receiver copies), nothing runs
    beside anything."""
    n, numel = 2, 1 << 20
    g = _all_gather(n, numel, "direct")
    run = _epilogue(g, n, 256, 4 * numel * n // 256, 16, flops=2e7)  # (about the collective's time)
    tiles, whole, compute_bound = overlap.predict(g, [run], _profile())
    assert tiles < whole * 0.95 and compute_bound
    tiles, whole, _ = overlap.predict(g, [run], _profile(cores=1))
    assert tiles >= whole * 0.99


def test_a_tile_on_a_rings_chain_delays_the_steps_after_it():
    """Ring: a rank posts its next step's messages before a tile, the ones
    after only once the tile is done, so with a core a rank the tiles gain
    nothing but their last arrival's overlap, and the later steps start
    later than without local work."""
    n, numel = 4, 1 << 20
    g = _all_gather(n, numel, "ring")
    p = _profile(cores=n)
    run = _epilogue(g, n, 256, 4 * numel * n // 256, 16, flops=6e7)
    out = overlap.with_local(g, [run], p, True)
    alone = simulate(g, p)
    with_tiles = simulate(out, p)
    last = max(i for i, t in enumerate(g.tasks) if t.kind == "copy")
    moved = [i for i, t in enumerate(out.tasks) if t.kind == "copy"][last]  # (the same copy, placed in `out`)
    assert with_tiles.end[moved] > alone.end[last] * 1.2


def test_flops_per_s_is_a_rate():
    with pytest.raises(ValueError, match="'flops_per_s' must be a positive number"):
        _profile(flops_per_s=0)


def test_the_shipped_mpi_profile_has_a_flops_rate():
    assert (cost_model.load_profile("mpi").params.get("flops_per_s") or 0) > 1e9


def _switch_with(text: str, p: overlap.Prediction) -> str:
    """`text` projected (coll-spmd-to-mpi, coll-to-mpi) with its prediction
    set to `p`, then coll-mpi-overlap as the default runs it (2 cores)."""
    with make_context(), ir.Location.unknown():
        module = ir.Module.parse(text)
        run_pipeline(module, "builtin.module(coll-spmd-to-mpi{strategy=ring profile=mpi},coll-to-mpi)")
        switches = [op.operation for op in module.body.operations[0].regions[0].blocks[0].operations
                    if op.operation.name == "scf.index_switch"]
        assert len(switches) == 1 and prediction_of(switches[0]) is not None
        mark(switches[0], p)
        run_pipeline(module, "builtin.module(coll-mpi-overlap{cores=2})")
        return str(module)


def _tiled(low: str) -> bool:
    """Whether the first case computes before its last wait."""
    case = low[low.index("case 0 {"):low.index("case 1 {")]
    first = min((i for i in (case.find("linalg.generic"), case.find("linalg.matmul")) if i >= 0), default=-1)
    return 0 <= first < case.rfind("mpi.wait")  # (not tiled: after the switch)


@pytest.mark.parametrize("ranks", [2, 4])
@pytest.mark.parametrize("compute_bound", [True, False])
@pytest.mark.parametrize("tiles,whole", [(1.0, 2.0), (2.0, 1.0), (0.97, 1.0)])
def test_the_default_tiles_where_the_prediction_says_it_pays(ranks, compute_bound, tiles, whole):
    """Predicted faster by the margin: tiled, with 4 ranks on a profile of
    2 cores only compute-bound runs; else not."""
    p = overlap.Prediction(tiles, whole, compute_bound)
    low = _switch_with(bench.program(ranks, 16, 64), p)
    assert _tiled(low) == pays(p, ranks, 2) == (tiles == 1.0 and (ranks <= 2 or compute_bound))


def test_the_prediction_is_on_the_switch_and_the_benchmarks_read_it():
    text = cm.gather_matmul(2, 64, 32, 16)
    with make_context():
        module = ir.Module.parse(text)
        run_pipeline(module, "builtin.module(coll-spmd-to-mpi{profile=mpi})")
        printed = str(module)
    found = re.findall(r"coll.overlap_predicted = \{compute_bound = (true|false), "
                       r"tiles = ([0-9.eE+-]+) : f64, whole = ([0-9.eE+-]+) : f64\}", printed)
    assert len(found) == 1, printed
    [p] = overlap_predictions(text)
    assert (p.tiles, p.whole) == pytest.approx(tuple(map(float, found[0][1:])))
    assert 0 < p.tiles and 0 < p.whole and p.compute_bound == (found[0][0] == "true")


def test_without_a_profile_there_is_no_prediction():
    with make_context():
        module = ir.Module.parse(cm.gather_matmul(2, 64, 32, 16))
        run_pipeline(module, "builtin.module(coll-spmd-to-mpi)")
        assert PREDICTED not in str(module)


def test_a_collective_without_local_work_around_it_has_no_prediction():
    assert overlap_predictions(cm.gather_matmul(2, 64, 32, 16, matmul=False)) == []


def test_empty_buffers_with_local_work_have_no_prediction():
    """A collective on 0-row buffers with an epilogue: nothing to place (an
    outside attack's case divided by the rows)."""
    t = "memref<0x8xf32>"
    text = f"""module {{
func.func @step(%x: {t}, %y: {t}, %z: {t}) attributes {{coll.ranks = 2 : i64}} {{
  %t = "coll.all_reduce"(%x, %y) {{devices = array<i64: 0, 1>, kind = "sum", operandSegmentSizes = array<i32: 1, 1, 0>}} : ({t}, {t}) -> !coll.token
  "coll.wait"(%t) : (!coll.token) -> ()
  linalg.generic {{indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}} ins(%y : {t}) outs(%z : {t}) {{
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %a, %a : f32
    linalg.yield %s : f32
  }}
  return
}}
}}"""
    assert overlap_predictions(text) == []
