"""The corpus (bench/jax_corpus.py) under mpirun: every program
exported on 4 host devices and run as 4 ranks
in one mpirun (frontends/run/global_arrays.py launch), against XLA's results with
the corpus's tolerances."""
import sys

import pytest
from jax_exports import ROOT, export_corpus, matches, needs_jax

from coll.frontends import stablehlo
from coll.frontends.run import global_arrays
from coll.lowering import mpi

sys.path.insert(0, str(ROOT / "bench"))
import jax_corpus  # noqa: E402

OK, WHY = mpi.available()
pytestmark = [needs_jax, pytest.mark.skipif(not OK, reason=f"MPI back end not available: {WHY}")]
RUNS = list(jax_corpus.NAMES)


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    programs = export_corpus(tmp_path_factory.mktemp("corpus4"), 4, RUNS)
    progs = {name: global_arrays.compile(text, stablehlo, backend="mpi") for name, (text, _, _) in programs.items()}
    got = global_arrays.launch([(progs[name], programs[name][1]) for name in RUNS])
    return {name: (ys, programs[name][2], progs[name]) for name, ys in zip(RUNS, got)}


@pytest.mark.parametrize("name", RUNS)
def test_corpus_matches_xla_under_mpirun(results, name):
    ys, want, prog = results[name]
    assert prog.ranks == 4
    assert matches(ys, want, prog.outputs, jax_corpus.TOLERANCE[name]) == ""
