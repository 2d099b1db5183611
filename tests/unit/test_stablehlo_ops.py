"""The table of StableHLO ops (frontends/stablehlo_lower.py OPS) is true and
docs/frontends.md shows it: each row's example is exported by JAX (one child
process for all), holds its op, and coll-stablehlo-to-linalg takes it to
what the row says (no StableHLO left) or refuses it at the op, naming it and
the JAX calls behind it."""
import json
import subprocess
import sys
from pathlib import Path

import pytest
from mlir import ir

from coll.core.pipeline import run
from coll.frontends import stablehlo
from coll.frontends.stablehlo_lower import OPS, table
from coll.ir import make_context
from jax_exports import ROOT, TIMEOUT, needs_jax

DOC = ROOT / "docs" / "frontends.md"
BEGIN, END = "<!-- stablehlo ops: begin -->\n", "<!-- stablehlo ops: end -->\n"

EXPORT = """
import json, sys
import jax, jax.numpy as jnp, numpy as np
from jax import lax
x, m, i = jnp.arange(8.0), jnp.arange(16.0).reshape(4, 4), jnp.array([1, 5, 9], jnp.int32)
out = {}
for name, example in json.loads(sys.argv[1]).items():
    f = eval("lambda x, m, i: " + example)
    out[name] = jax.jit(f).lower(x, m, i).compiler_ir("stablehlo").operation.get_asm(
        print_generic_op_form=True, enable_debug_info=True)
print(json.dumps(out))
"""


def test_the_doc_shows_the_table():
    text = DOC.read_text()
    assert text[text.index(BEGIN) + len(BEGIN):text.index(END)] == table(), \
        "docs/frontends.md is stale: python -m coll.frontends.stablehlo_lower"


@pytest.fixture(scope="module")
def exported():
    examples = {name: row[3] for name, row in OPS.items()}
    proc = subprocess.run([sys.executable, "-c", EXPORT, json.dumps(examples)], capture_output=True, text=True,
                          timeout=TIMEOUT, env={"JAX_PLATFORMS": "cpu", "PATH": "/usr/bin:/bin"})
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout)


@needs_jax
@pytest.mark.parametrize("name", list(OPS))
def test_each_row_holds(exported, name):
    who, how, calls, _ = OPS[name]
    text = exported[name]
    assert f'"{name}"' in text  # the example emits the op
    with make_context():
        module = stablehlo.parse(text)
        if who == "refused":
            with pytest.raises(ir.MLIRError) as e:
                run(module, "builtin.module(coll-from-stablehlo,coll-stablehlo-to-linalg)")
            (d,) = e.value.error_diagnostics
            assert f"'{name}' (from {calls})" in d.message and "<lambda>" in str(d.location)  # JAX's line
            return
        run(module, "builtin.module(coll-from-stablehlo,coll-stablehlo-to-linalg)")
        out = str(module)
    assert "stablehlo." not in out
    assert any(to.strip().split()[0] in out for to in how.split(",") if "." in to.strip().split()[0]) or \
        who == "coll", out
