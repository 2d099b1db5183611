"""JAX's own programs through coll under mpirun (one process per rank, 8
ranks), against XLA's results on 8 host devices: the programs of
test_stablehlo_jax.py, all in one mpirun (frontends/run/global_arrays.py launch):
each rank gets its block of every global input as the shard_map's or
jit's shardings lay them out; the results are gathered likewise (blocks
that several ranks hold must agree). Bitwise on exact data, within 1e-5
relative with f32 compute (the MLPs)."""
import numpy as np
import pytest
from jax_exports import export, needs_jax, relative_error

from coll.frontends import stablehlo
from coll.frontends.run import global_arrays
from coll.lowering import mpi

OK, WHY = mpi.available()
pytestmark = [needs_jax, pytest.mark.skipif(not OK, reason=f"MPI back end not available: {WHY}")]
EXACT = ["psum", "no_collective", "pmax", "all_gather", "psum_scatter", "all_to_all", "psum_2d", "axis_index", "ppermute_ring",
         "ppermute_partial"]
ROUNDED = ["mlp_shard_map", "mlp_jit"]
# Training and inference steps (bench/jax_programs.py), on 4 ranks: the
# local work links what it calls (libm, no bf16 helper: rsqrt, gelu's
# tanh, bf16 conversions), bools and ints move as JAX's do.
STEPS_F32 = ["megatron_mlp", "sequence_parallel", "moe_all_to_all"]
STEPS_EXACT = ["int_collectives", "bool_collectives"]


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    programs = export(tmp_path_factory.mktemp("jax"), EXACT + ROUNDED)
    runs = [(global_arrays.compile(text, stablehlo, backend="mpi"), xs) for text, xs, _ in programs.values()]
    assert {prog.ranks for prog, _ in runs} == {8}
    got = global_arrays.launch(runs)
    return {name: (ys, programs[name][2]) for name, ys in zip(programs, got)}


@pytest.mark.parametrize("name", EXACT)
def test_exact_programs_match_xla_bitwise_under_mpirun(results, name):
    ys, want = results[name]
    assert len(ys) == len(want)
    for y, w in zip(ys, want):
        assert y.dtype == w.dtype and y.shape == w.shape and np.array_equal(y, w)


@pytest.mark.parametrize("name", ROUNDED)
def test_mlps_match_xla_under_mpirun(results, name):
    (y,), (want,) = results[name]
    assert y.shape == want.shape and relative_error(y, want) <= 1e-5


@pytest.fixture(scope="module")
def steps(tmp_path_factory):
    programs = export(tmp_path_factory.mktemp("jax4"), STEPS_F32 + ["bf16_train_step"] + STEPS_EXACT, devices=4)
    runs = [(global_arrays.compile(text, stablehlo, backend="mpi"), xs) for text, xs, _ in programs.values()]
    assert {prog.ranks for prog, _ in runs} == {4}
    got = global_arrays.launch(runs)
    return {name: (ys, programs[name][2]) for name, ys in zip(programs, got)}


@pytest.mark.parametrize("name", STEPS_F32 + ["bf16_train_step"] + STEPS_EXACT)
def test_training_and_inference_steps_under_mpirun(steps, name):
    ys, want = steps[name]
    assert len(ys) == len(want)
    tolerance = 0 if name in STEPS_EXACT else 1e-2 if name.startswith("bf16") else 1e-5
    for y, w in zip(ys, want):
        assert y.dtype == w.dtype and y.shape == w.shape
        assert np.array_equal(y, w) if not tolerance else relative_error(y, w) <= tolerance
