"""The corpus (bench/jax_corpus.py) under mpirun: every program
exported on 4 host devices and run as 4 ranks
in one mpirun (frontends/run/global_arrays.py launch), against XLA's results with
the corpus's tolerances."""
import sys

import numpy as np
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


@pytest.fixture(scope="module")
def overlapped(tmp_path_factory):
    """The corpus with coll-mpi-overlap forced on (at 4 ranks the default
    leaves it off on the 2-core profile): the local work around each
    collective in tiles among its messages."""
    programs = export_corpus(tmp_path_factory.mktemp("corpus4on"), 4, RUNS)
    progs = {name: global_arrays.compile(text, stablehlo, backend="mpi", epilogues="on")
             for name, (text, _, _) in programs.items()}
    got = global_arrays.launch([(progs[name], programs[name][1]) for name in RUNS])
    return {name: (ys, progs[name]) for name, ys in zip(RUNS, got)}


@pytest.mark.parametrize("name", RUNS)
def test_corpus_with_overlap_forced_is_bitwise_the_default(results, overlapped, name):
    """Each program's outputs bit for bit those of the default build (an
    outside check found moe_all_to_all's one-hot, whose body reads its row
    index, wrong when it was cut into tiles)."""
    ys, prog = overlapped[name]
    assert "coll-mpi-overlap," in prog.pipeline
    for got, want in zip(ys, results[name][0]):
        assert np.array_equal(got, want, equal_nan=True)
