"""Compiled GPU programs run end to end without a GPU: the host library is
built exactly as for the GPU and linked against an emulator of
libmlir_cuda_runtime.so that runs queued work in seeded orders (see
gpu_emulator.py). Checks results, stream/event hygiene and call counts."""
import numpy as np
import pytest
from gpu_emulator import Emulator, reference
from mlir import ir

from coll.collectives import BY_NAME
from coll.ir import make_context
from coll.ir.generate import all_reduce_module
from coll.ir.ops import PEER_ACCESS
from coll.lowering import lower
from coll.lowering.gpu.nvvm import compile_module
from coll.lowering.gpu.to_gpu import to_gpu
from coll.passes.lower_collectives import lower_collectives

# Every all_reduce strategy of the registry; those that need peer access run
# with it (logical devices on one GPU: it holds).
STRATEGIES = BY_NAME["coll.all_reduce"].STRATEGIES
PEER = tuple(s for s in STRATEGIES if PEER_ACCESS in BY_NAME["coll.all_reduce"].needs(s))


@pytest.fixture(scope="module")
def emu(tmp_path_factory):
    return Emulator(tmp_path_factory.mktemp("emu"))


_count = [0]
_built = {}  # (text, strategy, options) -> build's result: the same program is compiled once


def build(emu, out_dir, text, strategy="auto", **options):
    """-> (library path, entry, workspace bytes, explicit-level op counts)."""
    key = (text, strategy, tuple(sorted(options.items())))
    if key not in _built:
        _built[key] = _build(emu, out_dir, text, strategy, **options)
    return _built[key]


def _build(emu, out_dir, text, strategy, **options):
    _count[0] += 1
    path = out_dir / f"libprog{_count[0]}.so"
    with make_context():
        m = ir.Module.parse(text)
        lower_collectives(m.operation, strategy)
        counts = {"coll.copy": 0, "coll.combine": 0}

        def visit(op):
            if op.name in counts:
                counts[op.name] += 1
            return ir.WalkResult.ADVANCE
        m.operation.walk(visit)
        to_gpu(m.operation, **options)
        f = m.body.operations[0]
        ws = f.attributes["coll.workspace_bytes"] if "coll.workspace_bytes" in f.attributes else None
        ws = ir.IntegerAttr(ws).value if ws is not None else 0
        name = ir.StringAttr(f.attributes["sym_name"]).value
        compile_module(m.operation, path, fmt="isa", runtime_dir=emu.dir)
    return path, name, ws, counts


def inputs(dtype, n, shape, kind, rng):
    if dtype == "i1":
        return [rng.random(shape) > 0.5 for _ in range(n)]
    if dtype.startswith("i"):
        np_t = {"i8": np.int8, "i16": np.int16, "i32": np.int32, "i64": np.int64}[dtype]
        return [rng.integers(-50, 50, shape).astype(np_t) for _ in range(n)]
    if dtype == "bf16":
        return [(rng.random(shape).astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)
                for _ in range(n)]
    np_t = {"f16": np.float16, "f32": np.float32, "f64": np.float64}[dtype]
    return [(rng.random(shape) + 0.5).astype(np_t) for _ in range(n)]


def as_float(dtype, a):
    if dtype == "bf16":
        return (a.astype(np.uint32) << 16).view(np.float32)
    if dtype in ("f16", "f32", "f64"):
        return a.astype(np.float64)
    return a


def check(dtype, kind, xs, outs):
    ref = reference(kind, [as_float(dtype, x) for x in xs])
    for y in outs:
        got = as_float(dtype, y)
        if dtype in ("f16", "bf16"):
            np.testing.assert_allclose(got, ref, rtol=1e-2)
        elif dtype.startswith("f"):
            np.testing.assert_allclose(got, ref, rtol=1e-6)
        else:
            np.testing.assert_array_equal(got, ref)


def run(emu, tmp, n, shape, dtype, kind, strategy, seed=1, to_device=None, calls=1, graphs=True,
        **options):
    with make_context():
        text = all_reduce_module(n, shape, dtype, kind, to_device=to_device, strategy=strategy,
                                 peer_access=strategy in PEER)
    path, entry, ws, counts = build(emu, tmp, text, strategy, **options)
    rng = np.random.default_rng(seed)
    xs = inputs(dtype, n, shape, kind, rng)
    outs = [np.zeros_like(xs[0]) for _ in range(1 if to_device is not None else n)]
    extra = [np.zeros(ws, np.uint8)] if ws else []
    got = emu.run(path, entry, xs + outs + extra, seed=seed, calls=calls, graphs=graphs)
    check(dtype, kind, xs, outs)
    return got, counts


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("n", [2, 3, 4])
@pytest.mark.parametrize("shape", [[7], [4, 100]])
def test_strategies(emu, tmp_path, strategy, n, shape):
    """f32 sum, every strategy: one mgpuMemcpy per coll.copy, one launch per
    coll.combine, streams and events all destroyed, pool freed (the peer
    strategies need no scratch)."""
    for seed in (0, 1, 2):
        calls, counts = run(emu, tmp_path, n, shape, "f32", "sum", strategy, seed)
        assert calls["copies"] == counts["coll.copy"]
        assert calls["kernels"] == counts["coll.combine"]
        pools = 0 if strategy in PEER else 1
        assert calls["allocs"] == calls["frees"] == pools


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("n", [4, 8])
def test_per_call_work(emu, tmp_path, strategy, n):
    """Streams, events and the pool are made once, at load. With graphs (the
    default) the first call captures its work (one mgpuMemcpy per coll.copy,
    one launch per coll.combine, each event recorded once) and launches the
    graph; every later call (each in another random order) is one graph
    launch and one sync, nothing else. Op by op (coll_set_graphs(0)) every
    call enqueues the work itself. Either way the results are checked and
    the unload destroys everything."""
    calls, counts = run(emu, tmp_path, n, [1000], "f32", "sum", strategy, seed=n, calls=3)
    assert calls["streams"] == n
    assert calls["allocs"] == calls["frees"] == (0 if strategy in PEER else 1)
    first, *warm = calls["per_call"]
    assert (first["captures"], first["instantiations"], first["graph_launches"]) == (1, 1, 1)
    assert first["copies"] == counts["coll.copy"] and first["kernels"] == counts["coll.combine"]
    assert first["records"] == calls["events"] and first["syncs"] == 1
    for c in warm:
        assert {k: v for k, v in c.items() if v} == {"graph_launches": 1, "syncs": 1}
    assert calls["graph_counts"] == {"captures": 1, "replays": 2, "direct": 0, "refused": 0}

    calls, counts = run(emu, tmp_path, n, [1000], "f32", "sum", strategy, seed=n, calls=3,
                        graphs=False)
    for c in calls["per_call"]:
        assert (c["streams"], c["events"], c["allocs"], c["frees"]) == (0, 0, 0, 0)
        assert c["copies"] == counts["coll.copy"] and c["kernels"] == counts["coll.combine"]
        assert c["records"] == calls["events"] and c["stream_waits"] >= c["records"]
        assert (c["syncs"], c["captures"], c["graph_launches"]) == (1, 0, 0)
    assert calls["graph_counts"] == {"captures": 0, "replays": 0, "direct": 3, "refused": 0}


@pytest.mark.parametrize("strategy", ["ring", "twoshot"])
def test_graph_follows_the_buffers(emu, tmp_path, strategy):
    """The graph bakes in the buffers' addresses: a call on other buffers
    captures anew (and gives their allreduce), back on the first buffers
    captures again; same buffers replay. Timing events bracket every call."""
    with make_context():
        text = all_reduce_module(4, [999], "f32", "sum", strategy=strategy,
                                 peer_access=strategy in PEER)
    path, entry, ws, _ = build(emu, tmp_path, text, strategy)
    rng = np.random.default_rng(7)
    sets = []
    for _ in range(2):
        xs = inputs("f32", 4, [999], "sum", rng)
        sets.append((xs, [np.zeros_like(xs[0]) for _ in range(4)]))
    (xa, ya), (xb, yb) = sets
    got = emu.run(path, entry, xa + ya, seed=4, calls=2, more=[xb + yb, xa + ya], timing=True)
    check("f32", "sum", xa, ya)
    check("f32", "sum", xb, yb)
    assert [c["captures"] for c in got["per_call"]] == [1, 0, 1, 1]
    assert [c["graph_launches"] for c in got["per_call"]] == [1, 1, 1, 1]
    assert got["graph_counts"] == {"captures": 3, "replays": 1, "direct": 0, "refused": 0}
    assert got["device_seconds"] is not None and got["device_seconds"] >= 0
    # two driver-API records per call, and the two timing events made once
    assert got["timing"] == 2 * 4 + 2


def test_refused_capture_and_graphs_off(emu, tmp_path, monkeypatch):
    """A capture the driver refuses: that call's work runs op by op (the
    captured work never ran), and so do the function's later calls, each
    correct; COLL_CUDA_GRAPHS=0 at load: no capture at all."""
    with make_context():
        text = all_reduce_module(4, [999], "f32", "sum", strategy="ring")
    path, entry, ws, counts = build(emu, tmp_path, text, "ring")
    rng = np.random.default_rng(11)
    xs = inputs("f32", 4, [999], "sum", rng)
    for env in ("COLL_EMU_REFUSE_CAPTURE", "COLL_CUDA_GRAPHS"):
        ys = [np.zeros_like(xs[0]) for _ in range(4)]
        monkeypatch.setenv(env, "0" if env == "COLL_CUDA_GRAPHS" else "1")
        got = emu.run(path, entry, xs + ys + [np.zeros(ws, np.uint8)], seed=5, calls=3, graphs=None)
        monkeypatch.delenv(env)
        check("f32", "sum", xs, ys)
        assert [c["graph_launches"] for c in got["per_call"]] == [0, 0, 0]
        k, c = counts["coll.combine"], counts["coll.copy"]
        if env == "COLL_EMU_REFUSE_CAPTURE":
            # the capture's enqueues (dropped), then the same work op by op
            assert [x["kernels"] for x in got["per_call"]] == [2 * k, k, k]
            assert [x["copies"] for x in got["per_call"]] == [2 * c, c, c]
            assert got["graph_counts"] == {"captures": 0, "replays": 0, "direct": 3, "refused": 1}
        else:
            assert [x["kernels"] for x in got["per_call"]] == [k, k, k]
            assert [x["captures"] for x in got["per_call"]] == [0, 0, 0]
            assert got["graph_counts"] == {"captures": 0, "replays": 0, "direct": 3, "refused": 0}


def test_graph_of_a_program_with_waits(emu, tmp_path):
    """coll.wait inside a function: in graph mode every chain joins the
    origin there and forks again (no host sync inside a capture); the work
    after the wait still sees the work before it."""
    text = """module {
  func.func @two(%x0: memref<64xf32, #coll.device<0 : i64>>, %x1: memref<64xf32, #coll.device<1 : i64>>,
                 %y0: memref<64xf32, #coll.device<0 : i64>>, %y1: memref<64xf32, #coll.device<1 : i64>>)
      attributes {llvm.emit_c_interface} {
    %t0 = "coll.copy"(%x0, %y1) : (memref<64xf32, #coll.device<0 : i64>>, memref<64xf32, #coll.device<1 : i64>>) -> !coll.token
    "coll.wait"(%t0) : (!coll.token) -> ()
    %t1 = "coll.copy"(%y1, %y0) : (memref<64xf32, #coll.device<1 : i64>>, memref<64xf32, #coll.device<0 : i64>>) -> !coll.token
    %t2 = "coll.copy"(%x1, %y1, %t1) : (memref<64xf32, #coll.device<1 : i64>>, memref<64xf32, #coll.device<1 : i64>>, !coll.token) -> !coll.token
    "coll.wait"(%t1, %t2) : (!coll.token, !coll.token) -> ()
    return
  }
}"""
    path = tmp_path / "libwaits.so"
    with make_context():
        m = ir.Module.parse(text)
        to_gpu(m.operation)
        compile_module(m.operation, path, fmt="isa", runtime_dir=emu.dir)
    for seed in range(1, 6):
        x0, x1 = np.arange(64, dtype=np.float32), np.arange(64, dtype=np.float32) + 100
        y0, y1 = np.zeros(64, np.float32), np.zeros(64, np.float32)
        got = emu.run(path, "two", [x0, x1, y0, y1], seed=seed, calls=2)
        np.testing.assert_array_equal(y0, x0)  # y1 (= x0 after the first wait), copied before x1 overwrote it
        np.testing.assert_array_equal(y1, x1)
        assert [c["syncs"] for c in got["per_call"]] == [1, 1]


TYPES = [("bf16", "max"), ("f16", "prod"), ("f64", "min"), ("i1", "xor"), ("i8", "sum"), ("i16", "and"),
         ("i32", "or"), ("i64", "prod")]


def rotated(i, k):
    """k consecutive strategies from the (k * i)-th, round the registry's
    list: over the parameters i = 0, 1, ... every strategy is taken (the
    kernels and the element handling do not depend on the strategy; the
    product of both cost a build each, most of this file's time)."""
    return [STRATEGIES[(k * i + j) % len(STRATEGIES)] for j in range(k)]


def test_rotations_take_every_strategy():
    assert {s for i in range(len(TYPES)) for s in rotated(i, 2)} == set(STRATEGIES)
    assert {s for i in range(len(OPTIONS)) for s in rotated(i, 3)} == set(STRATEGIES)


@pytest.mark.parametrize("i", range(len(TYPES)), ids=[f"{d}-{k}" for d, k in TYPES])
def test_types(emu, tmp_path, i):
    dtype, kind = TYPES[i]
    for strategy in rotated(i, 2):
        run(emu, tmp_path, 3, [33], dtype, kind, strategy, seed=5)


# split=8: the host code in parts of 8 calls (buffers through the pointer
# table, the pool an argument with workspace=arg), run in random orders.
OPTIONS = [{"workspace": "arg"}, {"streams": "single"}, {"workspace": "arg", "streams": "single"},
           {"split": 8}, {"split": 8, "workspace": "arg"}]


@pytest.mark.parametrize("i", range(len(OPTIONS)), ids=[str(o) for o in OPTIONS])
def test_options(emu, tmp_path, i):
    options = OPTIONS[i]
    for strategy in rotated(i, 3):
        calls, _ = run(emu, tmp_path, 4, [1000], "f32", "sum", strategy, seed=3, **options)
        if options.get("workspace") == "arg":
            assert calls["allocs"] == 0
        if options.get("streams") == "single":
            assert calls["streams"] == 1 and calls["events"] == 0


def test_single_device_output(emu, tmp_path):
    for strategy in STRATEGIES:
        run(emu, tmp_path, 3, [50], "f32", "sum", strategy, to_device=1)


def test_empty_chunks(emu, tmp_path):
    """numel 3 on 4 devices: some chunks are empty (no copy, no kernel)."""
    for strategy in ("ring", "all2all", "twoshot"):
        run(emu, tmp_path, 4, [3], "i32", "sum", strategy)


def test_missing_dependency_is_caught(emu, tmp_path):
    """The emulator fails a program where a ring copy does not wait for the
    combine (on another device) that produced its source: so the checks
    above can fail. (A combine after a copy into its device needs no token:
    copies run on their destination's stream.)"""
    with make_context():
        m = ir.Module.parse(all_reduce_module(3, [64], "f32", "sum", strategy="ring"))
        lower_collectives(m.operation, "ring")
        copy = next(op.operation for op in m.body.operations[0].regions[0].blocks[0].operations
                    if op.operation.name == "coll.copy" and len(op.operation.operands) > 2)
        new = ir.Operation.create("coll.copy", results=[copy.results[0].type],
                                  operands=list(copy.operands)[:2],
                                  ip=ir.InsertionPoint(copy), loc=copy.location)
        copy.results[0].replace_all_uses_with(new.results[0])
        copy.erase()
        to_gpu(m.operation)
        path = tmp_path / "libbroken.so"
        compile_module(m.operation, path, fmt="isa", runtime_dir=emu.dir)
    wrong = 0
    for seed in range(1, 9):
        rng = np.random.default_rng(seed)
        xs = inputs("f32", 3, [64], "sum", rng)
        ys = [np.zeros(64, np.float32) for _ in range(3)]
        emu.run(path, "all_reduce", xs + ys, seed=seed)
        try:
            check("f32", "sum", xs, ys)
        except AssertionError:
            wrong += 1
    assert wrong > 0


def test_gpu_route_reports_strategy_and_traffic():
    with make_context():
        m = ir.Module.parse(all_reduce_module(4, [1000], "f32", "sum"))
        low = lower(m.operation, "gpu", "ring")
    chosen, traffic = low.strategies, low.traffic
    assert chosen == ["ring"]
    # ring on 4 devices moves every element of the 1000 in 2(N-1) = 6 copies
    # (read + write) and N-1 = 3 two-input combines (2 reads + 1 write).
    assert traffic == 4 * (6 * 1000 * 2 + 3 * 1000 * 3)
