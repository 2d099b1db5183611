"""The corpus (bench/jax_corpus.py): whole JAX programs as users write them,
one per pattern, exported at test time on 8 host devices and run through
coll on the CPU back end (one simulated device per rank), against XLA's
results: bitwise on exact data, 1e-5 relative in f32, 1e-2 in bf16
(jax_corpus.TOLERANCE). The same programs under mpirun at 4 ranks:
test_mpi_jax_corpus.py. Every program of the corpus runs (what coll still
refuses is tested at its op: test_stablehlo_loops_jax.py, test_stablehlo_ops.py,
tests/lit/stablehlo)."""
import sys

import pytest
from jax_exports import ROOT, export_corpus, matches, needs_jax

from coll.frontends import stablehlo
from coll.frontends.run import global_arrays

sys.path.insert(0, str(ROOT / "bench"))
import jax_corpus  # noqa: E402

pytestmark = needs_jax
@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    return export_corpus(tmp_path_factory.mktemp("corpus"), 8)


@pytest.mark.parametrize("name", jax_corpus.NAMES)
def test_corpus_matches_xla_on_cpu(corpus, name):
    text, xs, want = corpus[name]
    prog = global_arrays.compile(text, stablehlo, backend="cpu")
    ys = prog.run(xs)
    assert matches(ys, want, prog.outputs, jax_corpus.TOLERANCE[name]) == ""
    # And XLA, run by coll's own check on the same inputs, agrees with JAX.
    assert prog.checked_against == "XLA"
    assert matches(prog.reference(xs), want, prog.outputs, "exact") == ""


def test_jit_programs_are_partitioned_by_xla(corpus):
    """jit + NamedSharding: XLA's own partitioner (coll-xla-partition) makes
    one device's program, with the collectives XLA inserts, on a 1-D and a
    2-D mesh; a batch split (jit_mlp_bias) has none, and each rank runs
    its block."""
    for name, ranks in (("jit_mlp_bias", 8), ("jit_transformer_2d", 8)):
        prog = global_arrays.compile(corpus[name][0], stablehlo, backend="cpu")
        assert prog.pipeline.startswith("builtin.module(coll-xla-partition,coll-from-stablehlo,"), name
        assert prog.ranks == ranks and "coll-shard-partition" not in prog.pipeline
    assert global_arrays.compile(corpus["jit_mlp_bias"][0], stablehlo, backend="cpu").inputs[0].split == [[0], []]
