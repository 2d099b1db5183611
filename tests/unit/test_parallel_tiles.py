"""A collective's work shared among threads (coll-to-cpu's `workers`):
a large group's tiles (lowering/cpu/fuse.py `_tile_loop`: an scf.parallel
over the workers, each with its own scratch tiles) or a segment's small
groups whole (`emit_shared`: an scf.parallel whose body switches on the
worker), run by upstream's async-parallel-for on the async runtime's
pool. Every collective x strategy, in place, shuffled, with heap scratch
and with a fused epilogue, against numpy and bit for bit against the same
program on one thread.

Here every group shares its tiles ("tiles": MIN_PARALLEL_BYTES 0), or no
group does and every segment's groups are shared whole ("groups"), among
three workers (more than this machine's cores: a worker waits for a
thread) in tiles of 64 elements, so the workers' ranges, a last worker
with fewer tiles and a rest after the whole tiles all occur on small
buffers.
"""
import importlib
import os
import sys

import numpy as np
import pytest
from mlir import ir

from coll import api
from coll.collectives import COLLECTIVES
from coll.core.pipeline import run as run_pipeline
from coll.execution import check
from coll.ir import make_context
from coll.ir.generate import collective_module
from coll.lowering import cpu
from coll.lowering.cpu import fuse

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "bench"))
import epilogue as bench  # noqa: E402

cpu_route = importlib.import_module("coll.lowering.cpu.route")  # (the module; the package exports its function)
WORKERS = 3
# One op per group (fuse.py's `single`): on one thread each runs whole, not
# tiled; shared among threads, in tiles.
SINGLES = {("permute", "direct"), ("reduce", "oneshot")}
# Strided copies (a block along an inner axis), which fuse.py does not
# follow: whole, on one thread, their own loops.
WHOLE = {("all_to_all", "direct")}
# The families whose programs hold several groups in one segment (a chunk
# each, or a device's each): the "groups" mode shares them whole.
SHARED_GROUPS = {("all_reduce", "ring"), ("all_reduce", "all2all"), ("all_reduce", "twoshot"),
                 ("reduce_scatter", "ring"), ("reduce_scatter", "direct"), ("all_gather", "ring"),
                 ("all_gather", "direct"), ("reduce", "ring"), ("broadcast", "ring"), ("permute", "direct")}
FAMILIES = [(cls, s) for cls in COLLECTIVES for s in cls.runnable(cpu.BACKEND.capabilities)]


def _loops(text: str, pipeline: str) -> str:
    """The tile loops `pipeline` (a program's, as coll-opt replays it), run
    up to coll-to-cpu on `text`, makes: "parallel" (tiles shared among
    workers), "for" (on one thread) or "" (no tiled group: single copies,
    as all_to_all's, run whole)."""
    upto = pipeline[:pipeline.index("}", pipeline.index("coll-to-cpu")) + 1] + ")"
    with make_context():
        module = ir.Module.parse(text)
        run_pipeline(module, upto)
        lowered = "".join(str(op) for op in module.body.operations  # (not the shared kernels' own loops)
                          if not ir.StringAttr(op.attributes["sym_name"]).value.startswith("coll_"))
    return "parallel" if "scf.parallel" in lowered else "for" if "scf.for" in lowered else ""


@pytest.fixture(autouse=True, params=["tiles", "groups"])
def shared(request, monkeypatch):
    """Every group's tiles shared among WORKERS threads ("tiles"), or no
    group's but every segment's groups shared whole ("groups":
    fuse.emit_shared, as ring's chunks at 8 x 1 MiB); cached programs
    dropped (the pipeline text names the workers, not the thresholds)."""
    cpu.clear_cache()
    monkeypatch.setattr(fuse, "MIN_PARALLEL_BYTES", 0)
    monkeypatch.setattr(cpu_route, "cores", lambda: WORKERS)
    if request.param == "groups":
        monkeypatch.setattr(fuse, "_workers", lambda group, accesses, workers: 1)
    yield request.param
    cpu.clear_cache()


def _run(cls, strategy, n, dtype, kind, seed=None, in_place=False, tile=64, shared_groups=None, **options):
    """`shared_groups`: None (tiles shared: every tiled program shares), or
    the (collective, strategy) pairs whose groups are shared whole."""
    with make_context():
        shape, attrs = cls.sample(n, "large")
        text = collective_module(cls.short_name(), n, list(shape), dtype, kind=kind, strategy=strategy,
                                 in_place=in_place, **attrs)
        problem = check.describe(ir.Module.parse(text))
    inputs = check.make_inputs(problem, seed=n)
    outs, loops = [], []
    for parallel in ("on", "off"):
        prog = cpu.compile(text, tile=tile, shuffle_seed=seed, parallel=parallel, **options)
        loops.append(_loops(text, prog.pipeline))
        given = [x.copy() for x in inputs]
        outputs = check.make_outputs(problem)
        prog.run(given, outputs)
        got = check.op_outputs(problem, given, outputs)
        ok, worst = check.check(problem, inputs, got)
        assert ok, f"{parallel}: max error {worst}"
        outs.append((got, prog.threaded))
    family = (cls.short_name(), strategy)
    if shared_groups is None:
        assert loops == (["for", "for"] if family in WHOLE else ["parallel", "" if family in SINGLES else "for"]), \
            loops
    elif (cls.short_name(), strategy) in shared_groups:
        assert loops[0] == "parallel", loops
    (shared, _), (alone, _) = outs
    for a, b in zip(shared, alone):
        assert a.tobytes() == b.tobytes()


@pytest.mark.parametrize("cls,strategy", FAMILIES, ids=[f"{c.short_name()}-{s}" for c, s in FAMILIES])
@pytest.mark.parametrize("n", [3, 5])
def test_every_strategy_shared_among_workers(cls, strategy, n, shared):
    dtype, kind = ("f32", "sum") if cls.HAS_KIND else ("i32", None)
    _run(cls, strategy, n, dtype, kind, seed=None if n == 3 else 2,
         shared_groups=SHARED_GROUPS if shared == "groups" else None)


@pytest.mark.parametrize("cls,strategy", [(c, s) for c, s in FAMILIES if c.IN_PLACE][:6])
def test_in_place_and_heap_scratch(cls, strategy, shared):
    _run(cls, strategy, 4, "f32" if cls.HAS_KIND else "bf16", "max" if cls.HAS_KIND else None,
         in_place=True, scratch="heap", shared_groups=SHARED_GROUPS if shared == "groups" else None)


@pytest.mark.parametrize("tile", [64, 100, 4096])
def test_two_workers_or_one_tile(tile, shared):
    """Ring's chunks of 250 elements in tiles of 64 (four tiles, the last
    worker's range short), of 100 (two tiles and a rest: fewer tiles than
    workers), or one tile (no tiles to share; the chunks' groups are shared
    whole where groups are)."""
    cls = next(c for c in COLLECTIVES if c.short_name() == "all_reduce")
    if tile == 4096:  # one tile: nothing to share
        with make_context():
            shape, attrs = cls.sample(4, "large")
            text = collective_module("all_reduce", 4, list(shape), "f32", kind="sum", strategy="ring", **attrs)
        assert _loops(text, cpu.compile(text, tile=tile).pipeline) == ("" if shared == "tiles" else "parallel")
        return
    _run(cls, "ring", 4, "f32", "sum", tile=tile, shared_groups=SHARED_GROUPS if shared == "groups" else None)


@pytest.mark.parametrize("strategy", ["ring", "rhd", "twoshot"])
def test_fused_epilogue_shared_among_workers(strategy, shared):
    """all_reduce + residual + RMSNorm, the epilogue in the tiles of rows
    that the workers share: bit for bit the program on one thread (fused
    and unfused), within f32 rounding of numpy."""
    n, rows, h = 4, 13, 256  # tiles of 2 rows: 6 whole tiles among 3 workers, and a rest of one row
    text, ins = bench.program(n, rows, h), bench.inputs(n, rows, h)
    results = []
    for parallel, epilogues in (("on", "on"), ("off", "on"), ("off", "off")):
        prog = api.compile(text, "cpu", strategy=strategy, tile=2 * h, epilogues=epilogues, parallel=parallel)
        if shared == "tiles" and epilogues == "on":  # (a group with an epilogue is never shared whole)
            assert _loops(text, prog.pipeline) == {"on": "parallel", "off": "for"}[parallel]
        outs = [np.full((rows, h), np.nan, np.float32) for _ in range(2 * n)]
        prog.run(ins, outs)
        results.append(outs)
    for got, want in zip(results[0], bench.reference(n, ins)):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
    for other in results[1:]:
        assert all(a.tobytes() == b.tobytes() for a, b in zip(results[0], other))


@pytest.mark.parametrize("strategy", ["naive", "ring", "rhd", "tree", "twoshot"])
def test_workers_run_at_once_each_on_its_own_scratch(strategy):
    """Thousands of tiles a worker, so that the workers run at the same time:
    a scratch tile two of them shared would mix their partial sums."""
    n, numel = 4, (1 << 18) + 37
    with make_context():
        text = collective_module("all_reduce", n, [numel], "f32", kind="sum", strategy=strategy)
    rng = np.random.default_rng(1)
    xs = [rng.standard_normal(numel).astype(np.float32) for _ in range(n)]
    outs = {}
    for parallel in ("on", "off"):
        prog = cpu.compile(text, tile=256, parallel=parallel)
        outs[parallel] = []
        for _ in range(3):
            ys = [np.full(numel, np.nan, np.float32) for _ in range(n)]
            prog.run(xs, ys)
            outs[parallel].append(ys)
    want = outs["off"][0]
    np.testing.assert_allclose(want[0], sum(x.astype(np.float64) for x in xs), rtol=1e-4, atol=1e-4)
    for ys in outs["on"] + outs["off"]:
        assert all(a.tobytes() == b.tobytes() for a, b in zip(ys, want))


@pytest.mark.parametrize("waits", ["token", "coll.wait"])
@pytest.mark.parametrize("second", ["global", "view", "callee"])
def test_a_collective_that_waits_on_another_through_a_second_name_is_not_run_with_it(second, waits, shared):
    """all_reduce B waits on A (its token, or a coll.wait on it before B)
    and reads, through a second name of the memory A writes (another
    memref.get_global of the user's global, a memref.view of the same
    bytes, or a callee's second argument the caller passed the same buffer
    as), half of A's result: the fuse analysis sees two roots, so only the
    tokens and waits say B's chunks must not run with A's (emit_shared ran
    them at once: 65088 of 262144 elements wrong, found by an outside
    attack; with a coll.wait, by a third; a race, so three calls)."""
    n, L = 4, 1 << 16  # (long enough that the racing groups overlap in time)
    H = L // 2
    T, TH = f"memref<{L}xf32>", f"memref<{H}xf32, strided<[1]>>"
    if second == "callee":  # (@inner's %a and %b: one buffer, passed twice)
        head = ""
        args = "".join(f", %a{i}: {T}, %b{i}: {T}" for i in range(n))
        names = ""
    elif second == "global":
        head = "\n".join(f'memref.global "private" @g{i} : {T} = uninitialized' for i in range(n))
        args = ""
        names = "\n".join(f"  %a{i} = memref.get_global @g{i} : {T}\n  %b{i} = memref.get_global @g{i} : {T}"
                          for i in range(n))
    else:  # (A's buffer a view at byte 0 of w; B's the same bytes)
        head, args = "", "".join(f", %w{i}: memref<{4 * L}xi8>" for i in range(n))
        names = "\n".join(f"  %c0_{i} = arith.constant 0 : index\n"
                          f"  %a{i} = memref.view %w{i}[%c0_{i}][] : memref<{4 * L}xi8> to {T}\n"
                          f"  %b{i} = memref.view %w{i}[%c0_{i}][] : memref<{4 * L}xi8> to {T}" for i in range(n))
    halves = "\n".join(f"  %h{i} = memref.subview %b{i}[0] [{H}] [1] : {T} to {TH}" for i in range(n))
    sig = ", ".join([f"%x{i}: {T}" for i in range(n)] + [f"%z{i}: memref<{H}xf32>" for i in range(n)]) + args
    devs = "array<i64: 0, 1, 2, 3>"
    xa = ", ".join([f"%x{i}" for i in range(n)] + [f"%a{i}" for i in range(n)])
    hz = ", ".join([f"%h{i}" for i in range(n)] + [f"%z{i}" for i in range(n)])
    fn = "inner" if second == "callee" else "f"
    dep, after = (", %t1", "") if waits == "token" else ("", '  "coll.wait"(%t1) : (!coll.token) -> ()\n')
    text = f"""{head}
func.func {"private " if second == "callee" else ""}@{fn}({sig}) {"" if second == "callee" else "attributes {llvm.emit_c_interface} "}{{
{names}
{halves}
  %t1 = "coll.all_reduce"({xa}) {{devices = {devs}, kind = "sum", operandSegmentSizes = array<i32: 4, 4, 0>, strategy = "ring"}} : ({", ".join([T] * 2 * n)}) -> !coll.token
{after}  %t2 = "coll.all_reduce"({hz}{dep}) {{devices = {devs}, kind = "sum", operandSegmentSizes = array<i32: 4, 4, {int(waits == "token")}>, strategy = "ring"}} : ({", ".join([TH] * n + [f"memref<{H}xf32>"] * n)}{", !coll.token" if waits == "token" else ""}) -> !coll.token
  "coll.wait"(%t2) : (!coll.token) -> ()
  return
}}
"""
    if second == "callee":
        outer = ", ".join([f"%x{i}: {T}" for i in range(n)] + [f"%z{i}: memref<{H}xf32>" for i in range(n)]
                          + [f"%y{i}: {T}" for i in range(n)])
        passed = ", ".join([f"%x{i}" for i in range(n)] + [f"%z{i}" for i in range(n)]
                           + [v for i in range(n) for v in (f"%y{i}", f"%y{i}")])
        types = ", ".join([T] * n + [f"memref<{H}xf32>"] * n + [T] * 2 * n)
        text += f"""func.func @f({outer}) attributes {{llvm.emit_c_interface}} {{
  call @inner({passed}) : ({types}) -> ()
  return
}}
"""
    rng = np.random.default_rng(0)
    prog = api.compile(text, "cpu", tile=64)
    for _ in range(3):
        xs = [rng.integers(-50, 50, L).astype(np.float32) for _ in range(n)]
        zs = [np.zeros(H, np.float32) for _ in range(n)]
        extra = ([np.zeros(4 * L, np.int8) for _ in range(n)] if second == "view" else
                 [np.zeros(L, np.float32) for _ in range(n)] if second == "callee" else [])
        args = xs + zs + extra  # (the signature's order; the runtime splits inputs from outputs)
        n_in = len(args) if prog.n_inputs is None else prog.n_inputs  # (callee: z an output before y, in place)
        prog.run(args[:n_in], args[n_in:])
        want = n * sum(xs)[:H]
        assert all(np.array_equal(z, want) for z in zs)
