"""The cost model (passes/cost_model.py), coll-predict, the profile option of
coll-lower-all-reduce, and coll-timeline.

What these tests say of `auto` survives a new strategy: its pick is the
cheapest candidate by the model, and where a test needs the model to
prefer one strategy it says so as a comparison between those strategies
("naive beats ring here"), not as the name `auto` picks among all of them
(docs/architecture.md, "A strategy")."""
import json
import os
import subprocess
import sys

import pytest
from mlir import ir

from coll.analysis import cost_model
from coll.collectives import AllReduce
from coll.core.pipeline import build
from coll.ir.generate import all_reduce_module
from coll.passes import choose_strategy

# A tiny profile whose numbers are easy to add up by hand.
HAND = {"name": "hand", "resources": "ports", "order": "ready",
        "link_latency_s": 1e-6, "link_bandwidth_Bps": 1e9,
        "kernel_launch_s": 2e-6, "memory_bandwidth_Bps": 1e10}


def _write(tmp_path, data, name="p.json"):
    path = tmp_path / name
    path.write_text(json.dumps(data))
    return str(path)


def _run(text, pipeline):
    m = ir.Module.parse(text)
    build(pipeline).run(m.operation)
    return m


def _predict_table(text, profile_path, tmp_path):
    out = tmp_path / "pred.txt"
    _run(text, f"builtin.module(coll-predict{{profile={profile_path} file={out}}})")
    rows = {}
    for line in out.read_text().splitlines():
        parts = line.split()
        if parts and parts[0] in AllReduce.STRATEGIES + ("-",):
            rows[parts[0]] = float(parts[-1])  # predicted_us
    return out.read_text(), rows


def test_printed_prediction_matches_hand_computation(ctx, tmp_path):
    # N = 2, 1024 f32 = 4096 bytes per device.
    text = all_reduce_module(2, [1024], "f32", "sum")
    printed, rows = _predict_table(text, _write(tmp_path, HAND), tmp_path)
    # naive: both copies of 4096 B run at once (different ports), then each
    # device combines 2 inputs into 1 output: 3 x 4096 bytes touched.
    naive = (1e-6 + 4096 / 1e9) + (2e-6 + 3 * 4096 / 1e10)
    # ring and all2all at N = 2: a 2048 B chunk each way, one combine of
    # 3 x 2048 bytes, the reduced chunk copied back.
    chunked = 2 * (1e-6 + 2048 / 1e9) + (2e-6 + 3 * 2048 / 1e10)
    assert rows["naive"] == pytest.approx(naive * 1e6, abs=1e-3)
    assert rows["ring"] == pytest.approx(chunked * 1e6, abs=1e-3)
    assert rows["all2all"] == pytest.approx(chunked * 1e6, abs=1e-3)
    # The pick is the cheapest row (naive of these three; a new strategy
    # may be cheaper still); the reference rule has no model.
    cheapest = min(rows, key=rows.get)
    assert rows["naive"] < rows["ring"] and f"pick {cheapest}" in printed and "reference rule: naive" in printed


def test_ports_and_switch_share_a_devices_link(ctx):
    # naive on 4 devices: every device sends 3 full copies through its one
    # send port: one after the other (ports), or at a third of the bandwidth
    # each after one latency (switch); with no contention they would all
    # overlap.
    b = 4096
    copy, combine = 1e-6 + b / 1e9, 2e-6 + 5 * b / 1e10
    coll = choose_strategy.Instance((0, 1, 2, 3), b // 4, "f32", "sum")
    g = choose_strategy.candidate_graph(coll, "naive")
    ports = cost_model.profile_from_dict(HAND)
    switch = cost_model.profile_from_dict(dict(HAND, resources="switch"))
    free = cost_model.profile_from_dict(dict(HAND, resources="none"))
    assert cost_model.simulate(g, ports).total == pytest.approx(3 * copy + combine)
    assert cost_model.simulate(g, switch).total == pytest.approx(1e-6 + 3 * b / 1e9 + combine)
    assert cost_model.simulate(g, free).total == pytest.approx(copy + combine)


def test_cores_serialize_ranks_that_share_one(ctx):
    # The same naive program as processes on cores (profile `mpi`): on one
    # core every copy and combine runs after the other; with a core per
    # device each core carries its rank's 3 sends and 3 receives (the ports
    # alone would overlap them), then its combine; on 2 cores in between.
    b = 4096
    copy, combine = 1e-6 + b / 1e9, 2e-6 + 5 * b / 1e10
    g = choose_strategy.candidate_graph(choose_strategy.Instance((0, 1, 2, 3), b // 4, "f32", "sum"), "naive")
    one, two, four = (cost_model.profile_from_dict(dict(HAND, cores=c)) for c in (1, 2, 4))
    assert cost_model.simulate(g, one).total == pytest.approx(12 * copy + 4 * combine)
    assert cost_model.simulate(g, four).total == pytest.approx(6 * copy + combine)
    assert 6 * copy + combine < cost_model.simulate(g, two).total < 12 * copy + 4 * combine
    with pytest.raises(ValueError, match="cores must be a positive integer, got 0"):
        cost_model.profile_from_dict(dict(HAND, cores=0))
    with pytest.raises(ValueError, match="'hand': cores needs resources ports, got resources 'host'"):
        cost_model.profile_from_dict(dict(HAND, cores=2, resources="host"), "hand")


def test_profile_errors_name_the_profile(ctx):
    for bad, message in ((dict(order="random"), "'p.json': order must be program|ready, got 'random'"),
                         (dict(resources="wires"), "'p.json': resources must be none|ports|switch|host"),
                         (dict(link_bandwidth_Bps=[[8192, 1e9], [8192, 2e9]]),
                          "'p.json': 'link_bandwidth_Bps' has two values for working set 8192"),
                         # JSON integers beyond a float (was an OverflowError)
                         (dict(link_latency_s=10 ** 400), "'p.json': 'link_latency_s' must be a number >= 0"),
                         (dict(cores=2, wakeup_s=[[10 ** 400, 1e-6]]), "'p.json': 'wakeup_s' must be")):
        with pytest.raises(ValueError, match=message.replace("|", "[|]")):
            cost_model.profile_from_dict(dict(HAND, **bad), "p.json")


def test_copy_cores_target_lets_opposite_messages_overlap(ctx):
    # copy_cores target: a message holds only its receiver's core. naive on
    # 4 devices, a core each: the receive ports alone bound it (3 copies in,
    # then the combine), where holding both cores serializes 6 per core.
    b = 4096
    copy, combine = 1e-6 + b / 1e9, 2e-6 + 5 * b / 1e10
    g = choose_strategy.candidate_graph(choose_strategy.Instance((0, 1, 2, 3), b // 4, "f32", "sum"), "naive")
    target = cost_model.profile_from_dict(dict(HAND, cores=4, copy_cores="target"))
    assert cost_model.simulate(g, target).total == pytest.approx(3 * copy + combine)
    one = cost_model.profile_from_dict(dict(HAND, cores=1, copy_cores="target"))
    assert cost_model.simulate(g, one).total == pytest.approx(12 * copy + 4 * combine)
    with pytest.raises(ValueError, match="copy_cores must be both or target, got 'source'"):
        cost_model.profile_from_dict(dict(HAND, cores=2, copy_cores="source"))


def test_link_table_is_read_at_the_message_size(ctx):
    # A link table by working set: a 4096-byte message is read at 8192 (its
    # source and target), 1 GB/s here, not at the program's working set
    # (inputs, outputs and scratch of both devices: more would be read).
    b = 4096
    table = dict(HAND, link_bandwidth_Bps=[[2 * b, 1e9], [64 * b, 4e9]])
    g = choose_strategy.candidate_graph(choose_strategy.Instance((0, 1), b // 4, "f32", "sum"), "naive")
    assert 2 * b < g.working_set < 64 * b
    naive = (1e-6 + b / 1e9) + (2e-6 + 3 * b / 1e10)
    assert cost_model.simulate(g, cost_model.profile_from_dict(table)).total == pytest.approx(naive)


def test_a_saved_profile_loads_back(ctx, tmp_path):
    # What the calibration scripts write is what `auto` then reads.
    path = str(tmp_path / "saved.json")
    cost_model.save_profile(dict(HAND, cores=2, copy_cores="target"), path)
    p = cost_model.load_profile(path)
    assert (p.resources, p.params["cores"], p.params["copy_cores"]) == ("ports", 2, "target")
    assert p.value("link_bandwidth_Bps", 1 << 20) == 1e9


def test_switch_shares_only_what_is_shared(ctx):
    # ring on 3 devices, 3 KB: every device sends one chunk at a time to one
    # peer, so nothing is shared: each copy runs at full bandwidth, and the
    # switch schedule equals the contention-free critical path.
    coll = choose_strategy.Instance((0, 1, 2), 768, "f32", "sum", order="any")  # the ring of any order
    g = choose_strategy.candidate_graph(coll, "ring")
    switch = cost_model.profile_from_dict(dict(HAND, resources="switch"))
    free = cost_model.profile_from_dict(dict(HAND, resources="none"))
    copy, combine = 1e-6 + 1024 / 1e9, 2e-6 + 3 * 1024 / 1e10
    assert cost_model.simulate(g, free).total == pytest.approx(4 * copy + 2 * combine)
    assert cost_model.simulate(g, switch).total == pytest.approx(4 * copy + 2 * combine)


def test_host_profile_is_the_sum_of_op_costs(ctx):
    host = cost_model.profile_from_dict(dict(HAND, resources="host", order="program",
                                             call_overhead_s=5e-7))
    coll = choose_strategy.Instance((0, 1, 2), 3000, "f32", "sum")
    g = choose_strategy.candidate_graph(coll, "ring")
    total = sum(cost_model.task_cost(t, host, g.working_set) for t in g.tasks)
    assert cost_model.simulate(g, host).total == pytest.approx(total + 5e-7)


@pytest.mark.parametrize("profile", cost_model.profile_names())
def test_predictions_are_monotone_in_size(profile):
    nv = cost_model.load_profile(profile)
    for n in (2, 4, 8):
        for s in AllReduce.STRATEGIES:
            times = []
            for numel in (1, 64, 4096, 1 << 16, 1 << 20, 1 << 24):
                coll = choose_strategy.Instance(tuple(range(n)), numel, "f32", "sum")
                times.append(choose_strategy.candidates(coll, nv, (s,))[0]["predicted_s"])
            assert times == sorted(times), (n, s, times)
            # Bandwidth-bound at the large end: 16x the bytes, > 4x the time.
            assert times[-1] > 4 * times[-2], (n, s, times)


def _predicted(n, numel, nv, order=None):
    """{strategy: predicted seconds} of an all_reduce of numel f32 over n
    (`order`: its order contract, None the default)."""
    coll = choose_strategy.Instance(tuple(range(n)), numel, "f32", "sum", order=order)
    return {c["strategy"]: c["predicted_s"] for c in choose_strategy.candidates(coll, nv)}


@pytest.mark.parametrize("n", [4, 8, 16])
def test_naive_beats_chunked_when_tiny_and_loses_when_large(n):
    """Latency-bound (16 elements): naive's one step beats ring's and
    all2all's; bandwidth-bound (16M): both chunked strategies beat naive.
    Said between these strategies, so a new one changes nothing here; of
    the ring that associates freely (order=any): the device-order ring runs
    every chunk along one chain, which at N = 4 the model puts behind naive
    (the default contract then picks all2all)."""
    nv = cost_model.load_profile("nvlink-h200")
    tiny, large = _predicted(n, 16, nv, "any"), _predicted(n, 1 << 24, nv, "any")
    assert tiny["naive"] < min(tiny["ring"], tiny["all2all"])
    assert max(large["ring"], large["all2all"]) < large["naive"]


def _lower(text, pipeline):
    return str(_run(text, f"builtin.module({pipeline})"))


def test_lowering_with_a_profile_picks_by_the_model(ctx):
    """With a profile, coll-lower-all-reduce lowers the model's cheapest
    strategy (whichever it is); here the model prefers all2all to ring,
    the reference rule's pick, so the two routes differ."""
    nv = cost_model.load_profile("nvlink-h200")
    text = all_reduce_module(8, [1 << 22], "f32", "sum")
    predicted = _predicted(8, 1 << 22, nv)
    want = min(predicted, key=predicted.get)
    assert AllReduce.reference_rule(8, 1 << 22) == "ring" and predicted["all2all"] < predicted["ring"]

    def lowered_as(strategy):
        return _lower(text, f"coll-lower-all-reduce{{strategy={strategy}}}")
    assert _lower(text, "coll-lower-all-reduce{profile=nvlink-h200}") == lowered_as(want)
    assert _lower(text, "coll-lower-all-reduce") == lowered_as("ring")
    # An explicit strategy still wins over the model.
    assert _lower(text, "coll-lower-all-reduce{strategy=naive profile=nvlink-h200}") == lowered_as("naive")
    forced = all_reduce_module(8, [1 << 22], "f32", "sum", strategy="ring")
    assert _lower(forced, "coll-lower-all-reduce{profile=nvlink-h200}") == lowered_as("ring")


def test_explicit_program_prediction_matches_candidate(ctx, tmp_path):
    text = all_reduce_module(4, [1000], "f32", "sum")
    path = _write(tmp_path, HAND)
    _, before = _predict_table(text, path, tmp_path)
    lowered = str(_run(text, "builtin.module(coll-lower-all-reduce{strategy=ring})"))
    printed, after = _predict_table(lowered, path, tmp_path)
    assert "explicit program" in printed
    assert after["-"] == pytest.approx(before["ring"], abs=1e-3)


def test_interpolation_is_log_log():
    p = cost_model.profile_from_dict({"memory_bandwidth_Bps": [[1e3, 1e9], [1e5, 1e11]]})
    assert p.value("memory_bandwidth_Bps", 1e4) == pytest.approx(1e10)
    assert p.value("memory_bandwidth_Bps", 10) == 1e9 and p.value("memory_bandwidth_Bps", 1e9) == 1e11


def test_bad_profiles_are_reported(tmp_path):
    with pytest.raises(ValueError, match="unknown profile 'nope'.*nvlink-h200"):
        cost_model.load_profile("nope")
    with pytest.raises(ValueError, match="resources must be"):
        cost_model.profile_from_dict(dict(HAND, resources="gpu"))
    with pytest.raises(ValueError, match="switch needs 'link_bandwidth_Bps'"):
        cost_model.profile_from_dict(dict(HAND, resources="switch", link_bandwidth_Bps=None))
    with pytest.raises(ValueError, match="needs 'memory_bandwidth_Bps'"):
        cost_model.profile_from_dict({"resources": "none"})


def test_shipped_profiles_load():
    for name in cost_model.profile_names():
        p = cost_model.load_profile(name)
        assert p.value("memory_bandwidth_Bps", 1 << 20) > 0


def test_unknown_profile_is_a_diagnostic():
    gen = subprocess.run([sys.executable, "-m", "coll.tools.coll_gen", "all-reduce", "--devices", "2"],
                         capture_output=True, text=True, check=True)
    r = subprocess.run([sys.executable, "-m", "coll.tools.coll_opt", "--coll-lower-all-reduce=profile=nope"],
                       input=gen.stdout, capture_output=True, text=True)
    assert r.returncode == 1
    assert "error: coll-lower-all-reduce: unknown profile 'nope'" in r.stderr
    assert "Traceback" not in r.stderr


def test_timeline_draws_a_png(ctx, tmp_path):
    text = all_reduce_module(4, [64], "f32", "sum")
    out = tmp_path / "t.png"
    _run(text, f"builtin.module(coll-lower-all-reduce{{strategy=ring}},coll-timeline{{file={out}}})")
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    timed = tmp_path / "timed.png"
    _run(text, f"builtin.module(coll-lower-all-reduce,coll-timeline{{file={timed} profile=nvlink-h200}})")
    assert os.path.getsize(timed) > 1000


def test_timeline_needs_explicit_ops(ctx, tmp_path):
    text = all_reduce_module(4, [64], "f32", "sum")
    with pytest.raises(ir.MLIRError, match="run coll-lower-all-reduce first"):
        _run(text, f"builtin.module(coll-timeline{{file={tmp_path / 't.png'}}})")
    assert not (tmp_path / "t.png").exists()


# -- the CPU runtime's code paths and locality (profile=cpu) ------------------

HOST = {"name": "host", "resources": "host", "order": "program", "call_overhead_s": 0.0,
        "link_latency_s": 1e-8, "kernel_launch_s": 1e-8, "alloc_s": 1e-7, "link_bandwidth_Bps": None,
        "memory_bandwidth_Bps": [[1 << 14, 1e11], [1 << 20, 1e10]]}


def _graph(n, numel, strategy):
    coll = choose_strategy.Instance(tuple(range(n)), numel, "f32", "sum")
    return choose_strategy.candidate_graph(coll, strategy)


def test_pointer_level_numbers_replace_the_others_only_for_programs_that_take_that_path():
    # 8 devices, 4 KB: ring is 168 copies and combines (the runtime's pointer
    # level: scratch in one arena, no malloc per buffer), tree 21 (memref path).
    with_pointer = dict(HOST, pointer_level={"min_ops": 129, "max_buffer_bytes": 1 << 22, "alloc_s": 0.0})
    plain, pointer = cost_model.profile_from_dict(HOST), cost_model.profile_from_dict(with_pointer)
    ring, tree = _graph(8, 1024, "ring"), _graph(8, 1024, "tree")
    allocs = sum(t.kind == "alloc" for t in ring.tasks)
    assert allocs > 0
    drop = cost_model.simulate(ring, plain).total - cost_model.simulate(ring, pointer).total
    assert drop == pytest.approx(allocs * 1e-7)
    assert cost_model.simulate(tree, plain).total == cost_model.simulate(tree, pointer).total
    # Large buffers are tiled instead: the numbers do not apply.
    big = _graph(8, 1 << 21, "ring")
    assert cost_model.simulate(big, plain).total == cost_model.simulate(big, pointer).total


@pytest.mark.parametrize("bad", [{"min_ops": 1}, {"min_ops": 1, "max_buffer_bytes": 2, "alloc_z": 0}, 3])
def test_pointer_level_must_name_its_path_and_known_numbers(bad):
    with pytest.raises(ValueError, match="pointer_level"):
        cost_model.profile_from_dict(dict(HOST, pointer_level=bad))


def test_bandwidth_is_read_at_the_data_a_task_shares():
    # A ring's chunk is a group of its own (1/N of the data); a naive
    # reduction reads every input whole, so its group is the whole program.
    ring, naive = _graph(8, 1 << 14, "ring"), _graph(8, 1 << 14, "naive")
    ring_sets = {t.group_set for t in ring.tasks if t.kind in ("copy", "combine")}
    assert max(ring_sets) < ring.working_set / 4
    assert {t.group_set for t in naive.tasks if t.kind in ("copy", "combine")} == {naive.working_set}
    # So a ring copy costs the cache bandwidth of its chunk, not DRAM's.
    prof = cost_model.profile_from_dict(HOST)
    copy = next(t for t in ring.tasks if t.kind == "copy")
    assert cost_model.task_cost(copy, prof, ring.working_set) < copy.touched / 1e10 + 1e-8


def test_output_path_error_is_asked_before_measuring(tmp_path):
    # bench/calibrate_*.py and bench/mpi_run.py --json refuse a path they
    # could not write before spending minutes measuring.
    assert cost_model.output_path_error(str(tmp_path / "p.json")) is None
    assert "is a directory" in cost_model.output_path_error(str(tmp_path))
    assert "does not exist" in cost_model.output_path_error(str(tmp_path / "no" / "p.json"))
    r = subprocess.run([sys.executable, os.path.join(os.path.dirname(__file__), "..", "..", "bench",
                                                     "calibrate_mpi.py"), "-o", str(tmp_path / "no" / "p.json")],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 1 and "calibrate_mpi: the folder of" in r.stderr and "Traceback" not in r.stderr
    assert not (tmp_path / "no").exists()


def test_wakeup_waits_once_per_step_with_more_ranks_than_cores(ctx):
    # wakeup_s: with more devices than cores a message first waits, holding
    # nothing, for its receiver to be scheduled. naive on 4 devices (2
    # cores) is one step: its copies all wait at once, so the program takes
    # one wakeup longer, not one per copy; on 2 devices (a core each) none.
    b = 4096
    cores = dict(HAND, cores=2, copy_cores="target")
    for n, extra in ((4, 5e-6), (2, 0.0)):
        g = choose_strategy.candidate_graph(choose_strategy.Instance(tuple(range(n)), b // 4, "f32", "sum"),
                                            "naive")
        plain = cost_model.simulate(g, cost_model.profile_from_dict(cores)).total
        woken = cost_model.simulate(g, cost_model.profile_from_dict(dict(cores, wakeup_s=5e-6))).total
        assert woken == pytest.approx(plain + extra)
    # A table by the message's working set, as the calibration writes it.
    g = choose_strategy.candidate_graph(choose_strategy.Instance((0, 1, 2, 3), b // 4, "f32", "sum"), "naive")
    table = cost_model.profile_from_dict(dict(cores, wakeup_s=[[2 * b, 3e-6], [64 * b, 0.0]]))
    assert cost_model.simulate(g, table).total == pytest.approx(
        cost_model.simulate(g, cost_model.profile_from_dict(cores)).total + 3e-6)
    with pytest.raises(ValueError, match="'hand': wakeup_s needs cores"):
        cost_model.profile_from_dict(dict(HAND, wakeup_s=1e-6), "hand")


def test_ranks_run_on_any_idle_core(ctx):
    # tree (the binomial one, order=any) on 4 ranks, 2 cores: its first round sends 1 -> 0 and 3 -> 2 at
    # once. Cores are a pool (ranks are not pinned when there are more of
    # them than cores): the two receives run side by side, where a fixed
    # rank -> core map (d mod 2) put both receivers on core 0.
    b = 4096
    copy = 1e-6 + b / 1e9
    g = choose_strategy.candidate_graph(choose_strategy.Instance((0, 1, 2, 3), b // 4, "f32", "sum", order="any"), "tree")
    prof = cost_model.profile_from_dict(dict(HAND, cores=2, copy_cores="target"))
    s = cost_model.simulate(g, prof)
    first = [i for i, t in enumerate(g.tasks) if t.kind == "copy" and (t.src, t.device) in ((1, 0), (3, 2))]
    assert len(first) == 2 and s.start[first[0]] == s.start[first[1]] == 0.0
    assert s.end[first[0]] == pytest.approx(copy)


def test_wakeup_only_in_crowded_rounds(ctx):
    # tree (the binomial one, order=any) on 4 ranks, 2 cores: round 1 (1 -> 0, 3 -> 2) and round 3
    # (0 -> 1, 0 -> 2) involve more ranks than cores (receivers wait to be
    # scheduled), rounds 2 (2 -> 0) and 4 (1 -> 3) two: each of them holds
    # a core, no wakeup.
    b = 4096
    cores = dict(HAND, cores=2, copy_cores="target")
    g = choose_strategy.candidate_graph(choose_strategy.Instance((0, 1, 2, 3), b // 4, "f32", "sum", order="any"), "tree")
    delays = cost_model.wakeup_delays(g, cost_model.profile_from_dict(dict(cores, wakeup_s=5e-6)))
    waits = sorted((t.src, t.device) for t, d in zip(g.tasks, delays) if d)
    assert waits == [(0, 1), (0, 2), (1, 0), (3, 2)]
    plain = cost_model.simulate(g, cost_model.profile_from_dict(cores)).total
    woken = cost_model.simulate(g, cost_model.profile_from_dict(dict(cores, wakeup_s=5e-6))).total
    assert woken == pytest.approx(plain + 2 * 5e-6)


@pytest.mark.parametrize("order", ["ready", "program"])
def test_a_profile_of_countless_cores_costs_what_enough_cores_do(ctx, order):
    """cores = 10**30 (a valid positive integer): the schedule draws on no
    more cores than its tasks can hold, so it is as quick, and predicts
    the same, as a profile of enough cores (an outside attack's profile
    ran out of memory building the pool)."""
    g = choose_strategy.candidate_graph(choose_strategy.Instance((0, 1, 2, 3), 1024, "f32", "sum"), "ring")
    many = cost_model.profile_from_dict(dict(HAND, cores=10 ** 30, order=order))
    enough = cost_model.profile_from_dict(dict(HAND, cores=2 * len(g.tasks), order=order))
    assert cost_model.simulate(g, many).total == cost_model.simulate(g, enough).total
