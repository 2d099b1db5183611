"""bench/calibrate_mpi.py inverts the cost model: medians that the model
itself predicts for the calibration programs under a known profile derive
that profile's numbers back (no MPI needed: the programs are simulated)."""
import os
import sys

import pytest
from mlir import ir

from coll.analysis import cost_model, taskgraph
from coll.ir import make_context

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "bench"))
import calibrate_mpi  # noqa: E402

SIZES = [1 << 10, 1 << 14, 1 << 18]  # f32 elements per message
KEYS = [calibrate_mpi.combine_key("reduce", s) for s in SIZES]
ALONE = [calibrate_mpi.combine_key("combine", s) for s in SIZES]
# Messages of 64 bytes cost only their latency (the chains that measure it).
# The smallest combine after a receive is under a quarter of its step: the
# calibration measures it alone.
KNOWN = {"name": "known", "resources": "ports", "order": "ready", "cores": 2, "copy_cores": "target",
         "link_latency_s": 2e-6, "call_overhead_s": 5e-6, "kernel_launch_s": 0.0,
         "link_bandwidth_Bps": [[128, 1e15], [4 * 2 * SIZES[0], 2e9], [4 * 2 * SIZES[-1], 5e9]],
         "memory_bandwidth_Bps": [[ALONE[0], 4e9], [KEYS[0], 2e10], [ALONE[1], 1e10], [KEYS[1], 2e10],
                                  [ALONE[2], 5e9], [KEYS[2], 1e10]]}


def simulated(kind, k, size, profile):
    with make_context():
        module = ir.Module.parse(calibrate_mpi.program(kind, k, size))
        return cost_model.simulate(taskgraph.from_function(module.body.operations[0]), profile).total


def test_derive_inverts_the_model():
    profile = cost_model.profile_from_dict(KNOWN)
    programs = [("chain", 8, calibrate_mpi.SMALL), ("chain", 64, calibrate_mpi.SMALL)]
    programs += [(kind, calibrate_mpi.CHAIN, s) for s in SIZES
                 for kind in ("chain", "exchange", "reduce", "combine")]
    t = {p: simulated(*p, profile) for p in programs}
    alpha, base, link, mem = calibrate_mpi.derive(t, SIZES)
    assert alpha == pytest.approx(2e-6) and base == pytest.approx(5e-6)
    assert [ws for ws, _ in link] == [2 * 4 * s for s in SIZES]
    for ws, bw in link:
        assert bw == pytest.approx(profile.value("link_bandwidth_Bps", ws))
    assert [ws for ws, _ in mem] == [ALONE[0]] + KEYS[1:]
    for ws, bw in mem:
        assert bw == pytest.approx(profile.value("memory_bandwidth_Bps", ws))


def test_combines_are_keyed_where_the_model_reads_them():
    # The reduce program's combine adds what its rank just received: its
    # data-sharing group is both ranks' slice of x, scratch and y.
    # The combines alone: x and y.
    assert KEYS == [6 * 4 * s for s in SIZES] and ALONE == [2 * 4 * s for s in SIZES]


def test_wakeup_inverts_the_model():
    # More ranks than cores: the steps programs' medians that the model
    # predicts with a known wakeup_s (a table by message size) give it back.
    wake = [[2 * 4 * s, w] for s, w in zip(calibrate_mpi.WAKE_SIZES, (2e-6, 4e-6, 8e-6, 15e-6))]
    known = dict(KNOWN, wakeup_s=wake)
    profile = cost_model.profile_from_dict(known)
    n = calibrate_mpi.wakeup_ranks(KNOWN["cores"])
    assert n == 4
    t = {}
    for s in calibrate_mpi.WAKE_SIZES:
        for k in calibrate_mpi.WAKE_STEPS:
            with make_context():
                module = ir.Module.parse(calibrate_mpi.steps_program(n, k, s))
                g = taskgraph.from_function(module.body.operations[0])
            t["steps", k, s] = cost_model.simulate(g, profile).total
    got = calibrate_mpi.wakeup_table(t, dict(KNOWN))
    assert [ws for ws, _ in got] == [ws for ws, _ in wake]
    for (_, w), (_, want) in zip(got, wake):
        assert w == pytest.approx(want, rel=1e-6)
    # The same programs on as many ranks as cores: no wakeup is predicted.
    assert calibrate_mpi.wakeup_ranks(4) == 8


def test_small_messages_keep_their_rate():
    # A message whose bytes are under a quarter of its time (OpenMPI's 2 KiB
    # eager messages here) counts a quarter of it: dropping the point would
    # hold the next size's (rendezvous) rate flat below it.
    table = calibrate_mpi._table([(4096, 2048, 0.1e-6, 1e-6), (8192, 4096, 3e-6, 3.5e-6)])
    assert table == [[4096, pytest.approx(2048 / 0.25e-6)], [8192, pytest.approx(4096 / 3e-6)]]
