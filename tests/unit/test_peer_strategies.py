"""oneshot and twoshot (passes/peer_strategies.py): structure, replicas that
agree bit for bit, the peer-access rule, the op layer, the order check and
the cost model. Their numpy checks on CPU-simulated devices (which share
one address space) for N = 1..8, every output mode, sizes, tiles and
shuffled orders are test_cpu_grid.py's (the registry's runnable
strategies of the CPU back end)."""
import pytest
from mlir import ir

from coll.analysis import cost_model, taskgraph
from coll.collectives import AllReduce
from coll.core.errors import PassError
from coll.execution import check
from coll.ir import make_context, peers
from coll.ir.generate import all_reduce_module
from coll.ir.ops import Combine, Copy
from coll.ir.verifier import verify
from coll.ir.walk import find_ops
from coll.lowering import cpu
from coll.passes import choose_strategy
from coll.passes.lower_collectives import lower_collectives

PEER = tuple(s for s in AllReduce.STRATEGIES if AllReduce.needs(s))  # the peer-access ones


def run(n, shape, dtype, kind, strategy, seed=0):
    with make_context():
        text = all_reduce_module(n, shape, dtype, kind, strategy=strategy)
        problem = check.describe(ir.Module.parse(text))
    prog = cpu.compile(text)
    inputs = check.make_inputs(problem, seed)
    outputs = check.make_outputs(problem)
    prog.run(inputs, outputs)
    ok, worst = check.check(problem, inputs, outputs)
    assert prog.strategies == [strategy]
    assert ok, f"max error {worst}"
    return inputs, outputs


@pytest.mark.parametrize("strategy", PEER)
def test_every_replica_gets_the_same_bits(strategy):
    """Inputs are combined in device order everywhere: float sums whose
    order matters still agree bit for bit across the outputs."""
    _, outs = run(6, [4097], "f32", "sum", strategy, seed=5)
    for y in outs[1:]:
        assert y.tobytes() == outs[0].tobytes()


def _lowered(n, numel, strategy, to_device=None):
    m = ir.Module.parse(all_reduce_module(n, [numel], "f32", "sum", to_device=to_device,
                                          peer_access=True))
    lower_collectives(m.operation, strategy)
    return m


@pytest.mark.parametrize("n", [2, 3, 4, 8])
def test_structure(n):
    """oneshot: N combines of arity N, each reading N-1 peers, no copies.
    twoshot: N combines of arity N into result slices, N(N-1) copies."""
    with make_context():
        one = _lowered(n, 1024, "oneshot")
        combines = [Combine.of(op) for op in find_ops(one.operation, Combine.NAME)]
        assert not find_ops(one.operation, Copy.NAME)
        assert len(combines) == n
        for c in combines:
            assert len(c.inputs) == n
            assert sorted(h for _, h in c.peers) == [d for d in range(n) if d != c.device]
            assert [peers.home_device(v) for v in c.inputs] == list(range(n))
        two = _lowered(n, 1024, "twoshot")
        combines = [Combine.of(op) for op in find_ops(two.operation, Combine.NAME)]
        assert len(combines) == n and all(len(c.inputs) == n for c in combines)
        assert len(find_ops(two.operation, Copy.NAME)) == n * (n - 1)
        assert not find_ops(two.operation, "coll.alloc")
        assert verify(two.operation) == []


def test_needs_peer_access():
    with make_context():
        m = ir.Module.parse(all_reduce_module(3, [8], "f32", "sum"))
        with pytest.raises(PassError, match="strategy 'oneshot' reads buffers of other devices"
                                            ".*no 'coll.peer_access'") as e:
            lower_collectives(m.operation, "oneshot")
        assert e.value.location is not None
        one = ir.Module.parse(all_reduce_module(1, [8], "f32", "sum"))
        lower_collectives(one.operation, "oneshot")  # N = 1 reads no peer: the identity copy
        assert len(find_ops(one.operation, Copy.NAME)) == 1


def test_verifier_rejects_peer_reads_without_peer_access():
    with make_context():
        m = _lowered(3, 8, "oneshot")
        assert verify(m.operation) == []
        del m.operation.attributes[peers.ATTR]
        findings = verify(m.operation)
    assert len(findings) == 3
    assert "combine on device 1 reaches its lhs in the memory of device 0 (a peer view)" \
        in findings[1][1]


@pytest.mark.parametrize("strategy", ("oneshot", "twoshot"))  # their structure, named
def test_order_check_reads_peer_inputs(strategy):
    """coll-check-order sees a combine's peer inputs as reads of the peers'
    buffers: dropping the token a twoshot all-gather copy waits for (so it
    may read the combine's result slice before it is written) is reported."""
    from coll.core.pipeline import run as run_pipeline
    with make_context():
        m = _lowered(4, 64, strategy)
        run_pipeline(m.operation, "builtin.module(coll-check-order)")
        if strategy == "oneshot":
            return
        copy = next(op for op in find_ops(m.operation, Copy.NAME) if len(op.operands) > 2)
        new = ir.Operation.create("coll.copy", results=[copy.results[0].type],
                                  operands=list(copy.operands)[:2],
                                  ip=ir.InsertionPoint(copy), loc=copy.location)
        copy.results[0].replace_all_uses_with(new.results[0])
        copy.erase()
        with pytest.raises(Exception, match="before it is written|unordered"):
            run_pipeline(m.operation, "builtin.module(coll-check-order)")


def test_cost_model_counts_peer_reads_over_the_link():
    nv = cost_model.load_profile("nvlink-h200")
    with make_context():
        m = _lowered(4, 1 << 20, "oneshot")
        g = taskgraph.from_function(m.body.operations[0])
    combines = [t for t in g.tasks if t.kind == "combine"]
    assert [len(t.peer_reads) for t in combines] == [3] * 4
    t = combines[0]
    link = nv.value("link_bandwidth_Bps", g.working_set)
    expect = (nv.value("kernel_launch_s", g.working_set) + 3 * (4 << 20) / link
              + (t.touched - 3 * (4 << 20)) / nv.value("memory_bandwidth_Bps", g.working_set))
    assert cost_model.task_cost(t, nv, g.working_set) == pytest.approx(expect)
    assert cost_model.summary(g)["max_received"] == 3 * (4 << 20)


def test_model_considers_peer_strategies_only_with_peer_access():
    nv = cost_model.load_profile("nvlink-h200")
    with make_context():
        plain = AllReduce.runnable(())
        for access, allowed in ((False, plain),
                                (True, AllReduce.STRATEGIES)):
            m = ir.Module.parse(all_reduce_module(8, [1 << 16], "f32", "sum", peer_access=access))
            op = find_ops(m.operation, "coll.all_reduce")[0]
            coll = choose_strategy.Instance.of(op)
            assert coll.strategies() == tuple(allowed)
            best = min(choose_strategy.candidates(coll, nv, allowed),
                       key=lambda c: c["predicted_s"])["strategy"]
            assert choose_strategy.choose_by_model(op, nv) == best
            assert (best in PEER) == access
