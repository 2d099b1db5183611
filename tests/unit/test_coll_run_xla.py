"""coll-run checks a JAX export against XLA itself: the same module run on
XLA's CPU client (frontends/stablehlo_xla.py) with the same inputs prints
`ok`; a compilation that computes something else prints `FAIL` and exits 1;
and the 2-D mesh step whose result bufferization once overwrote (issue 33)
runs right, while the old in-place rule is refused, located, by
coll-check-results instead of giving wrong numbers."""
import sys

import numpy as np
import pytest
from jax_exports import ROOT, export_corpus, needs_jax

import coll.frontends.stablehlo as stablehlo
import coll.frontends.tensor as tensor
from coll.frontends import fusion
from coll.frontends.run import global_arrays
from coll.tools import coll_run

sys.path.insert(0, str(ROOT / "bench"))

pytestmark = needs_jax


@pytest.fixture(scope="module")
def step(tmp_path_factory):
    folder = tmp_path_factory.mktemp("xla")
    text, xs, ys = export_corpus(folder, 8, ["mesh2d_step"])["mesh2d_step"]
    inputs = folder / "mesh2d_step.inputs.npz"  # (the export's, under JAX's names)
    assert np.load(inputs).files == ["w1", "w2", "x", "y"]
    return folder / "mesh2d_step.mlir", inputs, ys


def _run(capsys, *argv):
    """coll-run as its main() runs it: (exit code, stdout, stderr)."""
    global_arrays.clear_cache()
    try:
        code, failure = coll_run.run([str(a) for a in argv]), ""
    except coll_run.Failure as f:
        code, failure = 1, str(f)
    out = capsys.readouterr()
    return code, out.out, out.err + failure


def test_export_is_checked_against_xla(step, capsys, tmp_path):
    path, inputs, want = step
    code, out, err = _run(capsys, path, "--backend=cpu", "--inputs", inputs, "--outputs", tmp_path / "y.npz",
                          "--repeat", "1")
    assert code == 0, err
    assert "checked against XLA" in out
    assert out.strip().splitlines()[-1].split()[-1] == "ok"
    got = np.load(tmp_path / "y.npz")
    # The update of w1 (what the overwritten pmean once made g/g) is JAX's.
    assert np.allclose(got[got.files[0]], want[0], rtol=1e-5, atol=1e-6)


def test_a_wrong_compilation_fails_the_check(step, capsys, monkeypatch):
    path, inputs, _ = step
    # A mutated import: every psum/pmean becomes a max.
    monkeypatch.setitem(stablehlo.KINDS, "stablehlo.add", "max")
    code, out, err = _run(capsys, path, "--backend=cpu", "--inputs", inputs, "--repeat", "1")
    assert code == 1
    assert "FAIL" in out.strip().splitlines()[-1]
    assert "note:" not in err
    # On drawn inputs the FAIL says where they came from (a program that
    # amplifies rounding fails on them without a bug: pipeline_loop at bench scale).
    code, out, err = _run(capsys, path, "--backend=cpu", "--repeat", "1")
    assert code == 1 and "FAIL" in out.strip().splitlines()[-1]
    assert "note: the inputs were drawn uniformly from [-1, 1] (--seed 0)" in err


def test_the_old_in_place_rule_is_refused_not_wrong(step, capsys, monkeypatch):
    path, inputs, _ = step
    # coll-bufferize as it was: in place whenever the input itself is dead.
    monkeypatch.setattr(tensor, "_in_place_safe", lambda t, op, state: not tensor._used_after(t, op, mine=1) and tensor._writable(t))
    # The program as it was then: coll-transposes-into-producers (later) moves the
    # weight gradient's transpose into its contraction, and the overwrite goes away.
    monkeypatch.setattr(fusion, "_into_producer", lambda generic: None)
    code, out, err = _run(capsys, path, "--backend=cpu", "--inputs", inputs, "--repeat", "1")
    assert code == 1
    assert "coll-check-results: 'linalg.generic' overwrites the result of 'coll.all_reduce'" in err
    assert "jax_corpus.py:" in err.splitlines()[0]  # located at the JAX program's line
    assert "note: a later op that reads that result" in err
