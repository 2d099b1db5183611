"""JAX programs with loops around collectives and with scatters, through
coll on the CPU back end (4 simulated devices) and under mpirun (4 ranks),
against XLA's results on 4 host devices: pipeline stages and ring attention
(ppermute in lax.fori_loop: stablehlo.while -> scf.for, unrolled in the
global view, kept as a loop per rank on MPI), a psum per step of lax.scan,
an FSDP step (all_gather, its gradient a reduce_scatter), `.at[].set/add`
and the gradient of take_along_axis (stablehlo.scatter, lowered by
frontends/stablehlo_lower.py). Bitwise on exact data, within 1e-5
relative with f32 compute. A while_loop whose trip count the data decides
is refused at the loop, located at the JAX line."""
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from jax_exports import export, needs_jax, relative_error

from coll.frontends import stablehlo
from coll.frontends.run import global_arrays
from coll.lowering import mpi

pytestmark = needs_jax
DEVICES = 4
EXACT = ["scan_psum", "at_set", "take_along_grad"]
ROUNDED = ["pipeline_fori", "ring_attention", "fsdp_step"]
MPI_OK, MPI_WHY = mpi.available()


@pytest.fixture(scope="module")
def programs(tmp_path_factory):
    return export(tmp_path_factory.mktemp("jax"), EXACT + ROUNDED + ["while_psum"], n=16, devices=DEVICES)


def check(name, ys, want):
    assert len(ys) == len(want)
    for y, w in zip(ys, want):
        assert y.dtype == w.dtype and y.shape == w.shape
        if name in EXACT:
            assert np.array_equal(y, w)
        else:
            assert relative_error(y, w) <= 1e-5


@pytest.mark.parametrize("name", EXACT + ROUNDED)
def test_cpu_matches_xla(programs, name):
    text, xs, want = programs[name]
    prog = global_arrays.compile(text, stablehlo, backend="cpu")
    check(name, prog.run(xs), want)


@pytest.mark.skipif(not MPI_OK, reason=f"MPI back end not available: {MPI_WHY}")
def test_mpi_matches_xla(programs):
    """All in one mpirun; the loops stay loops in each rank's program."""
    names = EXACT + ROUNDED
    runs = [(global_arrays.compile(programs[n][0], stablehlo, backend="mpi"), programs[n][1]) for n in names]
    for name, ys in zip(names, global_arrays.launch(runs)):
        check(name, ys, programs[name][2])


@pytest.mark.parametrize("backend", ["cpu", "mpi"])
def test_a_data_dependent_loop_around_collectives_is_refused_at_the_loop(programs, backend):
    if backend == "mpi" and not MPI_OK:
        pytest.skip(f"MPI back end not available: {MPI_WHY}")
    with pytest.raises(Exception) as e:
        global_arrays.compile(programs["while_psum"][0], stablehlo, backend=backend)
    text = str(e.value)
    assert "scf.while" in text and "jax_programs.py" in text and "while_psum" in text


@pytest.mark.parametrize("name", ["pipeline_fori", "ring_attention"])
def test_the_gpu_route_builds_loops_around_collectives(programs, tmp_path, name):
    """coll-build takes the unrolled loops down to PTX (no GPU needed)."""
    src, out = tmp_path / f"{name}.mlir", tmp_path / f"{name}.ptx"
    src.write_text(programs[name][0])
    r = subprocess.run([str(Path(sys.executable).with_name("coll-build")), str(src), "--emit", "ptx", "-o", str(out)],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert ".entry main_kernel" in out.read_text()


def test_xla_checks_a_parsed_loop_program(programs):
    """coll-run hands the parsed module to the XLA oracle: the loop body's
    call, deferred by the parser, is a func.call again for XLA."""
    from coll.ir import make_context
    text, xs, want = programs["pipeline_fori"]
    with make_context():
        prog = global_arrays.compile(stablehlo.parse(text), stablehlo, backend="cpu")
    assert prog.checked_against == "XLA"
    check("pipeline_fori", prog.reference(xs), want)
