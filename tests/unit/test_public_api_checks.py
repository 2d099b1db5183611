"""The small findings of issue 34's outside attack: the public Python calls
check their arguments (a ValueError naming the argument, before anything
runs), moved modules say where they went, and `coll-run --strategy=all`
on a frontend's program runs every strategy that can run it (or says
why only auto runs)."""
import os
import subprocess
import sys

import numpy as np
import pytest

from coll.ir import make_context
from coll.ir.generate import collective_module
from coll.lowering import cpu, mpi

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _all_reduce(n=2, shape=(8,)):
    with make_context():
        return collective_module("all_reduce", n, list(shape), "f32")


@pytest.mark.parametrize("repeat, says", [
    (0, "repeat must be in 1..1000000, got 0"),  # found by the attack: it timed one run
    (-3, "repeat must be in 1..1000000, got -3"),
    (10 ** 7, "repeat must be in 1..1000000, got 10000000"),
    (2.5, "repeat must be an integer, got float 2.5"),
    (True, "repeat must be an integer, got bool True"),
    ("3", "repeat must be an integer, got str '3'"),
])
def test_time_refuses_a_repeat_it_cannot_honour(repeat, says):
    prog = cpu.compile(_all_reduce())
    xs, ys = [np.ones(8, np.float32)] * 2, [np.zeros(8, np.float32) for _ in range(2)]
    with pytest.raises(ValueError, match=f"^{says.replace('.', '[.]').replace('(', '[(]')}"):
        prog.time(xs, ys, repeat)
    assert not ys[0].any()  # nothing ran
    assert len(prog.time(xs, ys, 3)) == 3


@pytest.mark.skipif(not mpi.available()[0], reason="no MPI")
def test_mpi_time_and_launch_check_repeat_before_mpirun():
    prog = mpi.compile(_all_reduce())
    xs, ys = [np.ones(8, np.float32)] * 2, [np.zeros(8, np.float32) for _ in range(2)]
    with pytest.raises(ValueError, match="repeat must be in 1..1000000, got 0"):
        prog.time(xs, ys, 0)
    with pytest.raises(ValueError, match="repeat must be in 0..1000000, got -1"):
        prog.launch(xs, ys, -1)
    assert not ys[0].any()


def _lower(module, backend):
    from coll import lowering as backends
    return backends.lower(module, backend)


def _explicit(**kw):
    from coll.core import routes
    return routes.explicit(**kw)


@pytest.mark.parametrize("call, says", [
    (lambda t: cpu.compile(123), "module must be MLIR text or an ir.Module, got int"),
    (lambda t: cpu.compile(t, entry=5), "entry must be a function name (str) or None, got int 5"),
    (lambda t: cpu.compile(t, strategy=None), "unknown strategy 'None'; expected one of: auto, "),
    (lambda t: cpu.compile(t, threshold=-1), "threshold must be None or an integer >= 0, got -1"),
    (lambda t: cpu.compile(t, threshold="big"), "threshold must be None or an integer >= 0, got 'big'"),
    (lambda t: cpu.compile(t, bogus=1), "cpu.compile has no option 'bogus'; expected one of: tile, "),
    (lambda t: mpi.compile(t, timeout=-1), "timeout must be seconds, > 0 and at most a week (604800), got -1"),
    (lambda t: mpi.compile(t, timeout=float("nan")), "timeout must be seconds, > 0 and at most a week"),
    (lambda t: _lower(t, "tpu"), "unknown back end 'tpu'; expected one of: cpu, gpu, cuda, mpi"),
    (lambda t: _lower(5, "cpu"), "module_op must be an MLIR operation (an ir.Module's .operation), got int"),
    (lambda t: _explicit(strategy="bogus"), "unknown strategy 'bogus'; expected one of: auto, "),
    (lambda t: _explicit(threshold=-1), "threshold must be None or an integer >= 0, got -1"),
])
def test_compile_names_the_bad_argument(call, says):
    with pytest.raises(ValueError) as e:
        call(_all_reduce())
    assert str(e.value).startswith(says), str(e.value)


@pytest.mark.parametrize("statement, old, where, module", [
    ("import coll.runtime.cpu as m", "coll.runtime.cpu", "coll.lowering.cpu", None),  # the docs' path before
    ("from coll.runtime import cpu as m", "coll.runtime.cpu", "coll.lowering.cpu", None),
    ("from coll.backends import mpi as m", "coll.backends.mpi", "coll.lowering.mpi", None),
    ("import coll.backends.frontend as m", "coll.backends.frontend", "coll.frontends.run.global_arrays", None),
    ("import coll.backends.mpi.project as m", "coll.backends.mpi.project", "coll.lowering.mpi.to_mpi", None),
    ("from coll.passes import cost_model as m", "coll.passes.cost_model", "coll.analysis.cost_model", None),
])
def test_a_moved_module_still_imports_and_says_where_it_went(statement, old, where, module):
    # the module itself, or (a package whose modules went to several places)
    # a stand-in that answers every name as the new module does
    code = (f"{statement}\nimport {module or where} as new\n"
            "assert m is new or all(getattr(m, k) is getattr(new, k) for k in dir(new) if k[0] != '_'), m")
    r = subprocess.run([sys.executable, "-W", "always::FutureWarning", "-c", code], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert f"{old} moved to {where}; import that instead" in r.stderr, r.stderr


def test_an_unknown_module_is_still_an_error():
    r = subprocess.run([sys.executable, "-c", "import coll.runtime.nosuch"], capture_output=True, text=True)
    assert r.returncode == 1 and "ModuleNotFoundError" in r.stderr, r.stderr


def _coll_run(*args):
    return subprocess.run([sys.executable, "-m", "coll.tools.coll_run", *map(str, args)], capture_output=True,
                          text=True, timeout=600)


def test_strategy_all_on_a_jax_export_runs_every_strategy():
    # Found by the attack: it silently ran auto alone.
    from coll.collectives import AllReduce
    r = _coll_run(os.path.join(ROOT, "tests/lit/stablehlo/Inputs/psum.mlir"), "--backend=cpu", "--strategy=all",
                  "--repeat", "1")
    assert r.returncode == 0, r.stderr
    rows = [line.split() for line in r.stdout.splitlines()[2:]]
    assert [row[0] for row in rows] == list(AllReduce.runnable(cpu.BACKEND.capabilities)), r.stdout
    # Each checked against XLA where jax is installed, else against the first.
    title = r.stdout.splitlines()[0]
    xla = title.endswith("checked against XLA")
    assert xla or title.endswith("no reference to check against: every strategy against the first"), title
    assert {row[-1] for row in rows} == {"ok" if xla else "unchecked"}, r.stdout


def test_strategy_all_says_when_only_auto_can_run(tmp_path):
    src = tmp_path / "none.mlir"  # a tensor program with no collective
    src.write_text("func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {\n  return %x : tensor<4xf32>\n}\n")
    r = _coll_run(src, "--backend=cpu", "--strategy=all", "--repeat", "1")
    assert f"{src}: note: --strategy=all: the program has no collective; running auto only" in r.stderr, \
        r.stdout + r.stderr


@pytest.mark.parametrize("backend", ["cpu", "mpi"])
def test_time_leaves_the_result_of_one_run_in_place(backend):
    # As mpi-exe's --repeat: an in-place all_reduce timed 3 times leaves
    # one sum, not the sum of runs on its own results.
    b = {"cpu": cpu, "mpi": mpi}[backend]
    if not b.available()[0]:
        pytest.skip(b.available()[1])
    with make_context():
        text = collective_module("all_reduce", 2, [8], "f32", in_place=True)
    xs = [np.arange(8, dtype=np.float32) + r for r in range(2)]
    want = xs[0] + xs[1]
    assert len(b.compile(text).time(xs, [], 3)) == 3
    assert np.array_equal(xs[0], want) and np.array_equal(xs[1], want), xs


# -- api.collective_module: its arguments, refused where they are wrong ----------
# (found by the attack: an empty module for devices=0, invalid text for
# kind="avg", IndexError, TypeError deep inside the bindings)

def _module(op="all_reduce", devices=2, shape=(8,), dtype="f32", **kw):
    from coll import api
    with api.make_context():
        return api.collective_module(op, devices=devices, shape=shape if not isinstance(shape, tuple) else list(shape),
                                     dtype=dtype, **kw)


@pytest.mark.parametrize("kw, error, says", [
    (dict(devices=0), ValueError, "devices must be in 1..1024, got 0"),
    (dict(devices=-1), ValueError, "devices must be in 1..1024, got -1"),
    (dict(devices=1025), ValueError, "devices must be in 1..1024, got 1025"),
    (dict(devices=2.0), TypeError, "devices must be an int in 1..1024, got float 2.0"),
    (dict(devices=True), TypeError, "devices must be an int in 1..1024, got bool True"),
    (dict(kind="avg"), ValueError, "kind must be one of the reduction kinds valid for f32: sum, prod, max, min; "
                                   "got 'avg'"),
    (dict(kind="avg", dtype="i32"), ValueError, "kind must be one of the reduction kinds valid for i32: sum, prod, "
                                                "max, min, and, or, xor; got 'avg'"),
    (dict(kind="xor"), ValueError, "bitwise reduction kind 'xor' needs an integer or i1 element type, got f32"),
    (dict(op="all_gather", axis=5), ValueError, "axis must be an int with 0 <= axis < 1 (the rank of shape [8]), "
                                                "got 5"),
    (dict(op="all_gather", axis=-1), ValueError, "axis must be an int with 0 <= axis < 1"),
    (dict(op="all_to_all", shape=(8, 8), split_axis=3), ValueError, "split_axis must be an int with "
                                                                    "0 <= split_axis < 2"),
    (dict(op="reduce_scatter", devices=3), ValueError, "scatter_axis 0 has size 8, which the 3 devices do not "
                                                       "divide; expected a multiple of 3"),
    (dict(shape=8), TypeError, "shape must be a list of non-negative ints (e.g. [4, 100]; [] for a scalar), got 8"),
    (dict(shape=[2.5]), TypeError, "shape must be a list of non-negative ints (e.g. [4, 100]; [] for a scalar), "
                                   "got [2.5]"),
    (dict(shape=[float("nan")]), TypeError, "shape must be a list of non-negative ints"),
    (dict(shape=[-1]), ValueError, "shape must be a list of non-negative ints below 2^62, got [-1]"),
    (dict(dtype="f99"), ValueError, "dtype must be one of f16, bf16, f8E4M3FN, f8E5M2, f32, f64, i1, i8, i16, i32, i64, got 'f99'"),
    (dict(strategy="bogus"), ValueError, "strategy must be one of all_reduce's: auto, naive, ring, all2all, rhd, "
                                         "tree, oneshot, twoshot (or None); got 'bogus'"),
    (dict(op="reduce"), ValueError, "reduce needs root (the root device)"),
    (dict(in_place="yes"), TypeError, "in_place must be a bool, got str 'yes'"),
    (dict(name="a b"), ValueError, "name must be a symbol name like all_reduce, got 'a b'"),
    (dict(threshold=-1), ValueError, "'threshold' must be a non-negative integer (elements)"),
    (dict(op="permute", pairs=[0, 5]), ValueError, "pair #0 (0, 5) names target position 5, outside the group"),
])
def test_collective_module_refuses_bad_arguments(kw, error, says):
    with pytest.raises(error) as e:
        _module(**kw)
    assert str(e.value).startswith(says), str(e.value)


def test_collective_module_takes_what_coll_gen_takes():
    assert '"coll.all_gather"' in _module("all_gather")  # axis: 0 by default, as coll-gen's --axis
    assert "memref<4x8xf32>" in _module("all_to_all", shape=(4, 8), split_axis=1, concat_axis=0)
    assert "memref<8xi32>" in _module(shape=[np.int64(8)], dtype="i32", kind="xor")  # numpy ints are ints
    assert "memref<f32>" in _module(shape=[])  # a scalar


# -- api.compile_global: the frontend by module or by name -----------------------

SHARD_PROGRAM = os.path.join(ROOT, "examples", "mlp_shard_4.mlir")


def test_compile_global_takes_the_frontends_name():
    # Found by the attack: AttributeError at frontends/run/global_arrays.py.
    from coll import api
    text = open(SHARD_PROGRAM).read()
    assert api.compile_global(text, "shard", backend="cpu").ranks == 4
    assert api.compile_global(text, api.shard, backend="cpu").ranks == 4


@pytest.mark.parametrize("frontend, error, says", [
    ("nope", ValueError, "frontend 'nope' is not one whose arguments are global arrays; expected one of: "
                         "stablehlo, shard"),
    ("tensor", ValueError, "frontend 'tensor' is not one whose arguments are global arrays"),
    ("module:tensor", ValueError, "frontend 'tensor' is not one whose arguments are global arrays"),
    (3, TypeError, "frontend must be one of coll.frontends (stablehlo, shard: the module or its name) or one of "
                   "your own (parse, layouts, route), got int 3"),
])
def test_compile_global_refuses_what_is_no_frontend(frontend, error, says):
    from coll import api
    if frontend == "module:tensor":
        frontend = api.tensor
    with pytest.raises(error) as e:
        api.compile_global(open(SHARD_PROGRAM).read(), frontend, backend="cpu")
    assert str(e.value).startswith(says), str(e.value)
    with pytest.raises(TypeError, match="^source must be the program as text, bytes or an ir.Module, got int"):
        api.compile_global(5, "shard", backend="cpu")


# -- a back end's own options: only their documented values ----------------------

@pytest.mark.parametrize("backend", ["cpu", "mpi"])
def test_compile_refuses_a_blas_value_it_does_not_document(backend):
    # Found by the attack: blas="maybe" was taken (and meant on).
    from coll import api
    for value in ("maybe", 1, "ON"):
        with pytest.raises(ValueError, match=f"^blas must be one of: 'on', 'off' [(]or True/False[)], got {value!r}"):
            api.compile(_all_reduce(), backend=backend, blas=value)


def test_compile_takes_the_documented_blas_values():
    from coll import api
    for value in (True, False, "on", "off", None):
        assert api.compile(_all_reduce(), backend="cpu", blas=value).strategies


# -- the other api calls: a TypeError naming what they take ----------------------

def test_the_other_api_calls_refuse_arguments_of_another_kind():
    from mlir import ir

    from coll import api
    with api.make_context():
        text = _all_reduce()
        with pytest.raises(TypeError, match="^module_op must be an ir.Module or an operation, got str"):
            api.run_pipeline(text, "builtin.module(cse)")  # was AttributeError: 'str' has no 'operation'
        with pytest.raises(TypeError, match="^text must be pipeline text like 'builtin.module[(]cse[)]', got int 5"):
            api.run_pipeline(ir.Module.parse(text).operation, 5)
        with pytest.raises(TypeError, match=r"^view takes an operation \(ir.Operation or an OpView\), got str"):
            api.view("coll.all_reduce")
    with pytest.raises(TypeError, match="^from_bf16 takes uint16 bf16 bit patterns .*, got float32"):
        api.from_bf16(np.ones(3, np.float32))  # was: cannot reshape array of size 6 into shape (3,)
    with pytest.raises(TypeError, match="^load_dialect takes an ir.Context .*, got int"):
        api.load_dialect(5)
