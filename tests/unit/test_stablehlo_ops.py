"""The table of StableHLO ops (frontends/stablehlo_lower.py OPS) is true and
docs/frontends.md shows it. Each row's example (over x: f32[8], m: f32[4,4],
i: i32[3]) is exported by JAX in a shard_map of 2 devices that psums it
(one child process for all), holds its op, and through coll on the CPU
and under mpirun matches XLA (bitwise, or 1e-5 relative where f32 is rounded); a row that
reaches linalg only (LINALG_ONLY) gets there and no further; a refused
row's op is refused at the op, named with the JAX calls behind it, at the
Python line."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest
from jax_exports import ROOT, TIMEOUT, needs_jax, relative_error
from mlir import ir

from coll.core.pipeline import run
from coll.frontends import stablehlo
from coll.frontends.run import global_arrays
from coll.frontends.stablehlo_lower import LINALG_ONLY, OPS, table
from coll.ir import make_context
from coll.lowering import mpi

DOC = ROOT / "docs" / "frontends.md"
BEGIN, END = "<!-- stablehlo ops: begin -->\n", "<!-- stablehlo ops: end -->\n"

EXPORT = """
import json, os, sys
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=2"
import jax, jax.numpy as jnp, numpy as np
from jax import lax
from jax.sharding import PartitionSpec as P
mesh = jax.make_mesh((2,), ("x",))
x, m, i = jnp.arange(8.0) - 3.5, jnp.arange(16.0).reshape(4, 4) / 7, jnp.array([1, 5, 9], jnp.int32)
out = {}
for name, example in json.loads(sys.argv[1]).items():
    f = eval("lambda x, m, i: " + example)
    body = lambda x, m, i: lax.psum(jnp.asarray(f(x, m, i)).astype(jnp.float32).reshape(-1), "x")
    g = jax.jit(jax.shard_map(body, mesh=mesh, in_specs=(P(), P(), P()), out_specs=P()))
    text = g.lower(x, m, i).compiler_ir("stablehlo").operation.get_asm(print_generic_op_form=True,
                                                                       enable_debug_info=True)
    out[name] = (text, np.asarray(g(x, m, i)).tolist())
print(json.dumps({"inputs": {"x": np.asarray(x).tolist(), "m": np.asarray(m).tolist(), "i": np.asarray(i).tolist()},
                  "programs": out}))
"""


def test_the_doc_shows_the_table():
    text = DOC.read_text()
    assert text[text.index(BEGIN) + len(BEGIN):text.index(END)] == table(), \
        "docs/frontends.md is stale: python -m coll.frontends.stablehlo_lower"


@pytest.fixture(scope="module")
def exported():
    examples = {name: row[3] for name, row in OPS.items()}
    env = {**os.environ, "JAX_PLATFORMS": "cpu"}
    proc = subprocess.run([sys.executable, "-c", EXPORT, json.dumps(examples)], capture_output=True, text=True,
                          timeout=TIMEOUT, env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout)


@needs_jax
@pytest.mark.parametrize("name", list(OPS))
def test_each_row_holds(exported, name):
    who, how, calls, _ = OPS[name]
    text, want = exported["programs"][name]
    assert f'"{name}"' in text  # the example emits the op
    if who == "refused":
        with make_context(), pytest.raises(ir.MLIRError) as e:
            run(stablehlo.parse(text), "builtin.module(coll-from-stablehlo,coll-stablehlo-to-linalg)")
        (d,) = e.value.error_diagnostics
        assert f"'{name}' (from {calls})" in d.message and "<lambda>" in str(d.location)  # JAX's line
        return
    if name in LINALG_ONLY:
        with make_context():
            module = stablehlo.parse(text)
            run(module, "builtin.module(coll-from-stablehlo,coll-stablehlo-to-linalg)")
            assert "stablehlo." not in str(module)
        with pytest.raises(ir.MLIRError):
            global_arrays.compile(text, stablehlo, backend="cpu")
        return
    prog = global_arrays.compile(text, stablehlo, backend="cpu")
    inputs = {k: np.asarray(v, np.int32 if k == "i" else np.float32) for k, v in exported["inputs"].items()}
    (y,) = prog.run([inputs[lay.name] for lay in prog.inputs])
    want = np.asarray(want, np.float32)
    assert y.shape == want.shape and (np.array_equal(y, want) or relative_error(y, want) <= 1e-5)


@needs_jax
@pytest.mark.skipif(not mpi.available()[0], reason="MPI back end not available")
def test_the_rows_that_run_run_under_mpirun(exported):
    """The same programs, 2 ranks each, in one mpirun."""
    names = [n for n, row in OPS.items() if row[0] != "refused" and n not in LINALG_ONLY]
    inputs = {k: np.asarray(v, np.int32 if k == "i" else np.float32) for k, v in exported["inputs"].items()}
    progs = [global_arrays.compile(exported["programs"][n][0], stablehlo, backend="mpi") for n in names]
    got = global_arrays.launch([(p, [inputs[lay.name] for lay in p.inputs]) for p in progs])
    for name, (y,) in zip(names, got):
        want = np.asarray(exported["programs"][name][1], np.float32)
        assert y.shape == want.shape and (np.array_equal(y, want) or relative_error(y, want) <= 1e-5), name
