"""Epilogues fused into a collective on the CPU (lowering/cpu/epilogue.py):
the local work right after a collective runs in its tiles. Fused and
unfused programs must agree bit for bit (and with numpy), for every
all_reduce strategy, other collectives, tails of partial tiles, and the
epilogues whose legality is the point (writing the collective's input in
place, a result read again after the epilogue); and the fusion must
really happen (the collective's own buffer gone)."""
import os
import re
import sys

import numpy as np
import pytest
from mlir import ir

from coll import api
from coll.core.pipeline import run as run_pipeline
from coll.ir import make_context
from coll.lowering import mpi
from coll.lowering.cpu.row_reductions import ROW_MIN

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "bench"))
import epilogue as bench  # noqa: E402

ALL_REDUCE = ("naive", "ring", "all2all", "rhd", "tree", "oneshot", "twoshot")
ID, ROW = "affine_map<(i, j) -> (i, j)>", "affine_map<(i, j) -> (i)>"


def _cpu_ir(text: str, strategy: str, epilogues: str = "on") -> str:
    with make_context():
        module = ir.Module.parse(text)
        run_pipeline(module, f"builtin.module(coll-spmd-to-global,coll-lower-collectives{{strategy={strategy}}},"
                             f"coll-to-cpu{{epilogues={epilogues}}})")
        return str(module)


def _fused(ir_text: str) -> bool:
    """No linalg op left at the top level of @step: every one runs in a
    tile loop (the printer indents the function's body by 4)."""
    body = ir_text[ir_text.index("func.func @step"):]
    return re.search(r"^ {4}linalg\.", body, re.M) is None and re.search(r"^ {6,}linalg\.generic", body, re.M) is not None


def _run(text: str, strategy: str, ins: list[np.ndarray], n_out: int, shape: tuple[int, ...],
         epilogues: str = "on") -> list[np.ndarray]:
    prog = api.compile(text, "cpu", strategy=strategy, epilogues=epilogues)
    outs = [np.full(shape, np.nan, np.float32) for _ in range(n_out)]
    prog.run(ins, outs)
    return outs


@pytest.mark.parametrize("strategy", ALL_REDUCE)
@pytest.mark.parametrize("devices,rows,h", [(3, 40, 64), (8, 24, 160), (5, 3, 63)])
def test_rmsnorm_epilogue_is_bitwise_the_unfused_program(strategy, devices, rows, h):
    """Rows of 63 are shorter than ROW_MIN: the row sum is neither outlined
    nor reassociated, so the epilogue stops before it (only the residual
    add is fused) and the sum, in order, does not depend on what was fused
    around it (an outside attack found 50 of 63 elements an ulp apart at
    N >= 3 when short rows were still reassociated)."""
    text = bench.program(devices, rows, h)
    fused_ir = _cpu_ir(text, strategy)
    assert _fused(fused_ir) == (h >= ROW_MIN), "the epilogue was not fused"
    if h < ROW_MIN:
        assert re.search(r"^ {6,}linalg\.generic", fused_ir, re.M) and re.search(r"^ {4}linalg\.generic", fused_ir, re.M)
    assert not _fused(_cpu_ir(text, strategy, "off"))
    ins = bench.inputs(devices, rows, h, seed=devices)
    fused = _run(text, strategy, ins, 2 * devices, (rows, h))
    unfused = _run(text, strategy, ins, 2 * devices, (rows, h), "off")
    for f, u in zip(fused, unfused):
        np.testing.assert_array_equal(f, u)
    for f, r in zip(fused, bench.reference(devices, ins)):
        np.testing.assert_allclose(f, r, rtol=2e-5, atol=2e-5)


def test_the_collectives_buffer_shrinks_to_a_tile():
    text = bench.program(4, 64, 256)
    fused, unfused = _cpu_ir(text, "twoshot"), _cpu_ir(text, "twoshot", "off")
    big = re.compile(r"memref\.alloc\(\) .*: memref<64x256xf32>")
    assert len(big.findall(unfused)) == 4
    assert not big.findall(fused)


def test_many_tiles_and_a_partial_one():
    """Rows of 4096 f32: several whole tiles and a rest (rows not a power of two)."""
    devices, rows, h = 4, 100, 4096
    text = bench.program(devices, rows, h)
    ins = bench.inputs(devices, rows, h)
    fused = _run(text, "twoshot", ins, 2 * devices, (rows, h))
    unfused = _run(text, "twoshot", ins, 2 * devices, (rows, h), "off")
    for f, u in zip(fused, unfused):
        np.testing.assert_array_equal(f, u)


def _spmd(devices: int, params: str, body: str) -> str:
    return (f"module attributes {{coll.peer_access}} {{\nfunc.func @step({params}) attributes "
            f"{{coll.ranks = {devices} : i64}} {{\n{body}  return\n}}\n}}\n")


def _add(a: str, b: str, out: str, t: str, op: str = "arith.addf") -> str:
    return (f"  linalg.generic {{indexing_maps = [{ID}, {ID}, {ID}], iterator_types = [\"parallel\", \"parallel\"]}} "
            f"ins({a}, {b} : {t}, {t}) outs({out} : {t}) {{\n  ^bb0(%a: f32, %b: f32, %o: f32):\n"
            f"    %s = {op} %a, %b : f32\n    linalg.yield %s : f32\n  }}\n")


def _collective(name: str, devices: int, x: str, y: str, tx: str, ty: str, kind: bool = True) -> str:
    devs = ", ".join(map(str, range(devices)))
    k = ' kind = "sum",' if kind else ""
    k += {"all_gather": " gather_axis = 0 : i64,", "reduce_scatter": " scatter_axis = 0 : i64,"}.get(name, "")
    return (f'  %t = "coll.{name}"({x}, {y}) {{devices = array<i64: {devs}>,{k} '
            f'operandSegmentSizes = array<i32: 1, 1, 0>}} : ({tx}, {ty}) -> !coll.token\n'
            f'  "coll.wait"(%t) : (!coll.token) -> ()\n')


@pytest.mark.parametrize("name,strategy", [("all_gather", "ring"), ("all_gather", "direct"),
                                           ("reduce_scatter", "ring"), ("reduce_scatter", "direct")])
def test_other_collectives_take_an_epilogue(name, strategy):
    n, rows, h = 4, 16, 48
    tx = f"memref<{rows}x{h}xf32>"
    ty = f"memref<{rows * n if name == 'all_gather' else rows // n}x{h}xf32>"
    body = (f"  %y = memref.alloc() : {ty}\n" + _collective(name, n, "%x", "%y", tx, ty, name != "all_gather")
            + _add("%y", "%r", "%z", ty, "arith.mulf") + f"  memref.dealloc %y : {ty}\n")
    text = _spmd(n, f"%x: {tx}, %r: {ty}, %z: {ty}", body)
    assert _fused(_cpu_ir(text, strategy))
    rng = np.random.default_rng(1)
    shape = tuple(int(d) for d in ty[7:].split("x")[:2])
    xs = [rng.standard_normal((rows, h), dtype=np.float32) for _ in range(n)]
    rs = [rng.standard_normal(shape, dtype=np.float32) for _ in range(n)]
    fused = _run(text, strategy, xs + rs, n, shape)
    unfused = _run(text, strategy, xs + rs, n, shape, "off")
    if name == "all_gather":
        y = [np.concatenate(xs)] * n
    else:
        total = xs[0] + xs[1] + xs[2] + xs[3]
        y = np.split(total, n)
    for d in range(n):
        np.testing.assert_array_equal(fused[d], unfused[d])
        np.testing.assert_allclose(fused[d], y[d] * rs[d], rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("strategy", ["ring", "twoshot", "rhd"])
def test_an_epilogue_that_writes_the_collectives_input_in_place(strategy):
    """x <- y + r, tile by tile, while later tiles of the collective still
    read x: legal only because each tile reads its own elements of x."""
    n, rows, h = 4, 32, 40
    t = f"memref<{rows}x{h}xf32>"
    body = (f"  %y = memref.alloc() : {t}\n" + _collective("all_reduce", n, "%x", "%y", t, t)
            + _add("%y", "%r", "%x", t) + _add("%x", "%r", "%out", t) + f"  memref.dealloc %y : {t}\n")
    text = _spmd(n, f"%x: {t}, %r: {t}, %out: {t}", body)
    assert _fused(_cpu_ir(text, strategy))
    rng = np.random.default_rng(2)
    xs = [rng.standard_normal((rows, h), dtype=np.float32) for _ in range(n)]
    rs = [rng.standard_normal((rows, h), dtype=np.float32) for _ in range(n)]
    # x is written (an in-place output): the program takes x, r and writes x, out.
    prog = api.compile(text, "cpu", strategy=strategy)
    assert prog.n_inputs == 2 * n
    y = xs[0] + xs[1] + xs[2] + xs[3]
    outs = [np.empty((rows, h), np.float32) for _ in range(n)]
    xin = [x.copy() for x in xs]
    prog.run(xin + rs, outs)
    for d in range(n):
        np.testing.assert_allclose(xin[d], y + rs[d], rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(outs[d], y + rs[d] + rs[d], rtol=1e-5, atol=1e-5)


def test_a_result_read_after_the_epilogue_is_kept():
    """y is read again after the epilogue: it must not shrink to a tile."""
    n, rows, h = 2, 8, 64
    t = f"memref<{rows}x{h}xf32>"
    body = (f"  %y = memref.alloc() : {t}\n" + _collective("all_reduce", n, "%x", "%y", t, t)
            + _add("%y", "%r", "%z", t) + "  memref.copy %y, %w : " + f"{t} to {t}\n"
            + f"  memref.dealloc %y : {t}\n")
    text = _spmd(n, f"%x: {t}, %r: {t}, %z: {t}, %w: {t}", body)
    fused = _cpu_ir(text, "ring")
    assert _fused(fused) and re.search(rf"memref\.alloc\(\) .*: {re.escape(t)}", fused)
    rng = np.random.default_rng(3)
    ins = [rng.standard_normal((rows, h), dtype=np.float32) for _ in range(2 * n)]
    outs = _run(text, "ring", ins, 2 * n, (rows, h))
    y = ins[0] + ins[1]
    for d in range(n):
        np.testing.assert_allclose(outs[d], y + ins[n + d], rtol=1e-6)
        np.testing.assert_array_equal(outs[n + d], y)


def _needs(backend: str) -> None:
    if backend == "mpi" and not mpi.available()[0]:
        pytest.skip(mpi.available()[1])


def _fused_on(backend: str, text: str, xs: list[np.ndarray], n_out: int, shape: tuple[int, ...]) -> list[np.ndarray]:
    """The outputs of `text` run with its epilogue fused, on `backend` (ring)."""
    prog = api.compile(text, backend, strategy="ring", epilogues="on")
    outs = [np.full(shape, np.nan, np.float32) for _ in range(n_out)]
    prog.run(xs, outs)
    return outs


def _add_row_index(y: str, out: str, t: str) -> str:
    """out[i, j] = y[i, j] + i: a body that reads its loop d0's index."""
    return (f"  linalg.generic {{indexing_maps = [{ID}, {ID}], iterator_types = [\"parallel\", \"parallel\"]}} "
            f"ins({y} : {t}) outs({out} : {t}) {{\n  ^bb0(%a: f32, %o: f32):\n"
            "    %i = linalg.index 0 : index\n    %k = arith.index_cast %i : index to i32\n"
            "    %f = arith.sitofp %k : i32 to f32\n    %s = arith.addf %a, %f : f32\n"
            "    linalg.yield %s : f32\n  }\n")


@pytest.mark.parametrize("backend", ["cpu", "mpi"])
def test_an_epilogue_that_reads_its_row_index_is_not_cut(backend):
    """Cut to rows [a, b), `linalg.index 0` would count from 0 in each tile:
    such an op ends the epilogue (the CPU route's tiles, and coll-mpi-overlap's
    under MPI); JAX's one-hot of a top-k (bench/jax_corpus.py moe_all_to_all)
    has one."""
    _needs(backend)
    n, rows, h = 2, 64, 4096
    t = f"memref<{rows}x{h}xf32>"
    body = (f"  %y = memref.alloc() : {t}\n" + _collective("all_reduce", n, "%x", "%y", t, t)
            + _add_row_index("%y", "%z", t) + f"  memref.dealloc %y : {t}\n")
    text = _spmd(n, f"%x: {t}, %z: {t}", body)
    rng = np.random.default_rng(5)
    xs = [rng.integers(-8, 8, (rows, h)).astype(np.float32) for _ in range(n)]
    outs = _fused_on(backend, text, xs, n, (rows, h))
    want = xs[0] + xs[1] + np.arange(rows, dtype=np.float32)[:, None]
    for d in range(n):
        np.testing.assert_array_equal(outs[d], want)


@pytest.mark.parametrize("backend", ["cpu", "mpi"])
def test_an_epilogue_that_loads_from_a_buffer_in_its_body_is_not_cut(backend):
    """out[i, j] = y[i, j] + y[rows - 1, j], the last row read by a
    memref.load in the body: no operand of the op says so, and a tile of the
    first rows must not run before the collective has written the last."""
    _needs(backend)
    n, rows, h = 2, 64, 4096
    t = f"memref<{rows}x{h}xf32>"
    load = (f"  %last = arith.constant {rows - 1} : index\n"
            f"  linalg.generic {{indexing_maps = [{ID}, {ID}], iterator_types = [\"parallel\", \"parallel\"]}} "
            f"ins(%y : {t}) outs(%z : {t}) {{\n  ^bb0(%a: f32, %o: f32):\n"
            "    %j = linalg.index 1 : index\n"
            f"    %b = memref.load %y[%last, %j] : {t}\n"
            "    %s = arith.addf %a, %b : f32\n    linalg.yield %s : f32\n  }\n")
    body = (f"  %y = memref.alloc() : {t}\n" + _collective("all_reduce", n, "%x", "%y", t, t) + load
            + f"  memref.dealloc %y : {t}\n")
    text = _spmd(n, f"%x: {t}, %z: {t}", body)
    rng = np.random.default_rng(6)
    xs = [rng.integers(-8, 8, (rows, h)).astype(np.float32) for _ in range(n)]
    outs = _fused_on(backend, text, xs, n, (rows, h))
    y = xs[0] + xs[1]
    for d in range(n):
        np.testing.assert_array_equal(outs[d], y + y[-1])



@pytest.mark.parametrize("backend", ["cpu", "mpi"])
def test_an_epilogue_whose_body_calls_is_not_cut(backend):
    """Two ops whose bodies call @next (a counter in a global): cut into
    tiles, the second op's calls would come between the first's (an outside
    attack's case); a body with anything but arithmetic is not cut."""
    _needs(backend)
    n, rows, h = 2, 64, 4096
    t = f"memref<{rows}x{h}xf32>"

    def counted(out: str) -> str:
        return (f"  linalg.generic {{indexing_maps = [{ID}, {ID}], iterator_types = [\"parallel\", \"parallel\"]}} "
                f"ins(%y : {t}) outs({out} : {t}) {{\n  ^bb0(%a: f32, %o: f32):\n"
                "    %c = func.call @next() : () -> f32\n    %s = arith.addf %a, %c : f32\n"
                "    linalg.yield %s : f32\n  }\n")
    body = (f"  %y = memref.alloc() : {t}\n" + _collective("all_reduce", n, "%x", "%y", t, t) + counted("%z")
            + counted("%w") + f"  memref.dealloc %y : {t}\n")
    text = _spmd(n, f"%x: {t}, %z: {t}, %w: {t}", body).replace("func.func @step", """memref.global "private" @C : memref<f32> = dense<0.0>
func.func private @next() -> f32 {
  %g = memref.get_global @C : memref<f32>
  %v = memref.load %g[] : memref<f32>
  %one = arith.constant 1.0 : f32
  %n = arith.addf %v, %one : f32
  memref.store %n, %g[] : memref<f32>
  return %v : f32
}
func.func @step""")
    xs = [np.zeros((rows, h), np.float32) for _ in range(n)]
    got = {}
    for mode in ("on", "off"):  # (each program's first call: its counter starts at 0)
        prog = api.compile(text, backend, strategy="ring", epilogues=mode)
        got[mode] = [np.full((rows, h), np.nan, np.float32) for _ in range(2 * n)]
        prog.run(xs, got[mode])
    for f, u in zip(got["on"], got["off"]):
        np.testing.assert_array_equal(f, u)
    for o in got["on"]:  # (each op counts through its rows in order)
        np.testing.assert_array_equal(np.diff(o.ravel()), np.ones(rows * h - 1, np.float32))


def test_a_global_of_the_users_as_the_collectives_result_is_written():
    """all_reduce into a global @G, an epilogue reading it, then @G read
    again through another get_global: @G must hold the sum (fused, it
    shrank to one tile and kept its initial 7.0: an outside attack's case).
    Only the globals coll makes for its buffers (coll.made) shrink."""
    n, rows, h = 2, 16, 64
    t = f"memref<{rows}x{h}xf32>"
    text = f"""module {{
memref.global "private" @G : {t} = dense<7.0>
func.func @step(%x: {t}, %r: {t}, %z: {t}, %w: {t}) attributes {{coll.ranks = {n} : i64}} {{
  %g = memref.get_global @G : {t}
{_collective("all_reduce", n, "%x", "%g", t, t)}{_add("%g", "%r", "%z", t, "arith.mulf")}  %g2 = memref.get_global @G : {t}
  memref.copy %g2, %w : {t} to {t}
  return
}}
}}
"""
    rng = np.random.default_rng(0)
    xs = [rng.standard_normal((rows, h), dtype=np.float32) for _ in range(2 * n)]
    for mode in ("on", "off"):
        prog = api.compile(text, "cpu", strategy="ring", epilogues=mode)
        outs = [np.full((rows, h), np.nan, np.float32) for _ in range(2 * n)]
        prog.run(xs, outs)
        y = xs[0] + xs[1]
        for d in range(n):
            np.testing.assert_array_equal(outs[d], y * xs[n + d])
            np.testing.assert_array_equal(outs[n + d], y, err_msg=f"epilogues={mode}: @G")
