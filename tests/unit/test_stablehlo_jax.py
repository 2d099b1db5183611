"""JAX's own programs through coll on the CPU back end (one simulated
device per rank), against XLA's results on 8 host devices.

Covering design: each program is exported at test time (jax_exports.py:
one child process for all), imported by the StableHLO frontend, run by
frontends/run/global_arrays.py (scatter by the shard_map's/jit's shardings, gather the
results as JAX lays them out) and compared with what XLA computed:
bitwise where the data is exact in any order (small integers, in f32,
i32 or bf16), within 1e-5 relative where f32 compute is rounded (the MLPs:
a shard_map, a jit with shardings on a 1-D and on a 2-D mesh). Two
shard_maps also as GSPMD lowers them. The same programs under mpirun:
test_mpi_stablehlo_jax.py."""
import numpy as np
import pytest
from jax_exports import export, needs_jax, relative_error

from coll.frontends import stablehlo
from coll.frontends.run import global_arrays

pytestmark = needs_jax
EXACT = ["psum", "no_collective", "pmax", "pmin_i32", "psum_bf16", "all_gather", "psum_scatter", "all_to_all", "psum_2d",
         "axis_index"]
ROUNDED = ["mlp_shard_map", "mlp_jit", "mlp_jit_2d"]
# ppermute (coll.permute): a ring, a partial permutation (the devices no
# pair targets get zeros) and over one axis of a 2-D mesh.
PERMUTES = ["ppermute_ring", "ppermute_partial", "ppermute_2d"]


# Training and inference steps as JAX users write them (bench/jax_programs.py
# _training_and_inference): f32 compute within 1e-5 relative, the bf16
# training step within 1e-2, ints and bools bitwise.
STEPS_F32 = ["megatron_mlp", "sequence_parallel", "moe_all_to_all"]
STEPS_EXACT = ["int_collectives", "bool_collectives"]
STEPS = STEPS_F32 + ["bf16_train_step"] + STEPS_EXACT


# The same shard_maps lowered with GSPMD (jax_use_shardy_partitioner=False):
# their manual region between SPMDFullToShardShape and SPMDShardToFullShape.
GSPMD = ["psum_2d", "mlp_shard_map"]


@pytest.fixture(scope="module")
def programs(tmp_path_factory):
    folder = tmp_path_factory.mktemp("jax")
    return {**export(folder, EXACT + ROUNDED + PERMUTES + STEPS), **export(folder, GSPMD, gspmd=True)}


@pytest.mark.parametrize("name", EXACT + ["psum_2d_gspmd"] + STEPS_EXACT)
def test_exact_programs_match_xla_bitwise(programs, name):
    text, xs, want = programs[name]
    prog = global_arrays.compile(text, stablehlo, backend="cpu")
    ys = prog.run(xs)
    assert len(ys) == len(want)
    for y, w in zip(ys, want):
        assert y.dtype == w.dtype and y.shape == w.shape
        assert np.array_equal(y, w)


def test_bf16_arrays_as_jax_hands_them_out(programs):
    """JAX's bf16 arrays are ml_dtypes.bfloat16: taken as their bits; the
    results are coll's uint16 bit patterns."""
    import ml_dtypes
    text, (x,), (want,) = programs["psum_bf16"]
    (y,) = global_arrays.compile(text, stablehlo, backend="cpu").run([x.view(ml_dtypes.bfloat16)])
    assert y.dtype == np.uint16 and np.array_equal(y, want)


@pytest.mark.parametrize("name", ROUNDED + ["mlp_shard_map_gspmd"])
def test_mlps_match_xla(programs, name):
    text, xs, (want,) = programs[name]
    prog = global_arrays.compile(text, stablehlo, backend="cpu")
    (y,) = prog.run(xs)
    assert y.shape == want.shape and relative_error(y, want) <= 1e-5


def test_the_shard_map_mlp_keeps_jax_names_and_layouts(programs):
    text, _, _ = programs["mlp_shard_map"]
    prog = global_arrays.compile(text, stablehlo, backend="cpu")
    assert [lay.name for lay in prog.inputs] == ["xb", "a", "c"]  # mlp_local's parameters
    assert [lay.split for lay in prog.inputs] == [[[], []], [[], [0]], [[0], []]]
    assert prog.pipeline.startswith("builtin.module(coll-from-stablehlo,coll-stablehlo-to-linalg,")


def test_the_jit_mlp_is_partitioned_by_xla(programs):
    """XLA's own partitioner, then the shard_map route (the corpus's jit
    programs, test_jax_corpus.py, are the ones upstream's could not)."""
    prog = global_arrays.compile(programs["mlp_jit"][0], stablehlo, backend="cpu")
    assert prog.pipeline.startswith("builtin.module(coll-xla-partition,coll-from-stablehlo,")
    assert "coll-shard-partition" not in prog.pipeline


@pytest.mark.parametrize("name", PERMUTES)
def test_ppermute_matches_xla_bitwise(programs, name):
    text, xs, (want,) = programs[name]
    (y,) = global_arrays.compile(text, stablehlo, backend="cpu").run(xs)
    assert y.dtype == want.dtype and np.array_equal(y, want)


@pytest.mark.parametrize("name", STEPS_F32 + ["bf16_train_step"])
def test_training_and_inference_steps_match_xla(programs, name):
    text, xs, want = programs[name]
    ys = global_arrays.compile(text, stablehlo, backend="cpu").run(xs)
    assert len(ys) == len(want)
    for y, w in zip(ys, want):
        assert y.dtype == w.dtype and y.shape == w.shape
        assert relative_error(y, w) <= (1e-2 if name.startswith("bf16") else 1e-5)


def test_bools_gather_reduce_and_count_as_jax_does(programs):
    """pmax/pmin of bools are or/and (StableHLO's maximum/minimum on i1);
    JAX's psum of bools counts them in int32."""
    text, (a,), want = programs["bool_collectives"]
    gathered, anyone, everyone, count = global_arrays.compile(text, stablehlo, backend="cpu").run([a])
    up = (a > 0).reshape(8, -1)
    assert anyone.dtype == bool and np.array_equal(anyone, up.any(axis=0))
    assert np.array_equal(everyone, up.all(axis=0))
    assert count.dtype == np.int32 and np.array_equal(count, up.sum(axis=0))
    assert np.array_equal(gathered, np.tile(a > 0, 8)) and np.array_equal(count, want[3])
