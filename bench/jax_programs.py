"""The JAX programs coll is tested and measured against, in one place:
tests/unit/test_stablehlo_jax*.py export them at test time,
bench/xla_side_by_side.py times them under XLA and coll, and
tests/lit/stablehlo/Inputs/gen.py stores small ones for FileCheck.

    python bench/jax_programs.py OUTDIR [--names psum,pmax] [--n 64] [--devices 8]

writes, per program P: P.mlir (the StableHLO JAX lowers, generic form, as
coll reads it) and P.npz (its global inputs x0.., and JAX's outputs y0..
computed by XLA's CPU runtime on `--devices` host devices). It sets
XLA_FLAGS itself, so run it as its own process (the device count is fixed
when JAX starts). `n` is the elements of f32 (or i32) per device.
"""
import os
import sys

DEVICES = 8
NAMES = ("psum", "pmax", "pmin_i32", "psum_bf16", "all_gather", "psum_scatter", "all_to_all", "ppermute_ring",
         "ppermute_partial", "psum_2d", "ppermute_2d", "axis_index", "mlp_shard_map", "mlp_jit", "mlp_jit_2d")


def _jax(devices):
    flag = f"--xla_force_host_platform_device_count={devices}"
    if flag not in os.environ.get("XLA_FLAGS", ""):
        os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") + " " + flag).strip()
    os.environ.setdefault("JAX_PLATFORMS", "cpu")
    import jax
    return jax


def programs(n, devices=DEVICES, names=None):
    """{name: (jitted function, global input arrays)} for `names` (default
    all): each function runs on `devices` host devices; inputs hold small
    integers where the result is exact in any order (bitwise comparable),
    random floats in the MLPs, from a generator seeded by the name (only
    the programs asked for are made: at 64 MiB per device an input is
    512 MiB)."""
    jax = _jax(devices)
    import zlib

    import jax.numpy as jnp
    import numpy as np
    from jax.sharding import NamedSharding, PartitionSpec as P

    d = devices
    mesh = jax.make_mesh((d,), ("x",))
    mesh2 = jax.make_mesh((2, d // 2), ("dp", "tp"))

    def smap(f, in_specs, out_specs, m=mesh):
        return jax.jit(jax.shard_map(f, mesh=m, in_specs=in_specs, out_specs=out_specs)), m, in_specs

    def small(*shape, dtype=np.float32):  # exact sums in any order
        return lambda rng: [rng.integers(-8, 8, shape).astype(dtype)]

    ring = [(i, (i + 1) % d) for i in range(d)]
    partial = [(0, d - 1), (d - 1, 0), (1, 2)]  # not a ring: the others receive zeros
    rows = max(n // 4, d)  # 2-D programs: rows x 4 per device
    table = {
        "psum": (smap(lambda a: jax.lax.psum(a, "x"), P("x"), P()), small(d * n)),
        "pmax": (smap(lambda a: jax.lax.pmax(a, "x"), P("x"), P()), small(d * n)),
        "pmin_i32": (smap(lambda a: jax.lax.pmin(a, "x"), P("x"), P()), small(d * n, dtype=np.int32)),
        "psum_bf16": (smap(lambda a: jax.lax.psum(a, "x"), P("x"), P()), small(d * n, dtype=jnp.bfloat16)),
        "all_gather": (smap(lambda a: jax.lax.all_gather(a, "x", axis=0, tiled=True), P("x"), P("x")),
                       small(d * n)),
        "psum_scatter": (smap(lambda a: jax.lax.psum_scatter(a, "x", scatter_dimension=0, tiled=True),
                              P("x"), P("x")), small(d * d * max(n // d, 1))),
        "all_to_all": (smap(lambda a: jax.lax.all_to_all(a, "x", 0, 0, tiled=True), P("x"), P("x")),
                       small(d * rows, 4)),
        "ppermute_ring": (smap(lambda a: jax.lax.ppermute(a, "x", ring), P("x"), P("x")), small(d * n)),
        "ppermute_partial": (smap(lambda a: jax.lax.ppermute(a, "x", partial), P("x"), P("x")), small(d * n)),
        "psum_2d": (smap(lambda a: jax.lax.psum(a, "tp"), P(("dp", "tp")), P("dp"), m=mesh2), small(d * n)),
        "ppermute_2d": (smap(lambda a: jax.lax.ppermute(a, "tp", [(i, (i + 1) % (d // 2)) for i in range(d // 2)]),
                             P(("dp", "tp")), P(("dp", "tp")), m=mesh2), small(d * n)),
        "axis_index": (smap(lambda a: jax.lax.psum(a * (jax.lax.axis_index("x") + 1).astype(a.dtype), "x"),
                            P("x"), P()), small(d * n)),
    }

    # A two-layer MLP, tensor parallel by hand (Megatron: W1 split by
    # columns, W2 by rows, one psum; relu), and the same with jit + NamedSharding
    # (XLA's partitioner inserts the collective; coll's shard route too).
    b, k = 8, 16
    h = d * max(n // (b * 4), 1)

    def mlp_inputs(rng):
        return [rng.standard_normal((b, k)).astype(np.float32),
                (rng.standard_normal((k, h)) / np.sqrt(k)).astype(np.float32),
                (rng.standard_normal((h, k)) / np.sqrt(h)).astype(np.float32)]

    def mlp_local(xb, a, c):  # jax.nn.relu: a call to a private function in the shard_map body
        return jax.lax.psum(jax.nn.relu(xb @ a) @ c, "x")

    def mlp(xb, a, c):
        return jnp.maximum(xb @ a, 0.0) @ c

    table["mlp_shard_map"] = (smap(mlp_local, (P(), P(None, "x"), P("x", None)), P()), mlp_inputs)
    sharded = lambda spec: NamedSharding(mesh, spec)
    jitted = jax.jit(mlp, in_shardings=(sharded(P()), sharded(P(None, "x")), sharded(P("x", None))),
                     out_shardings=sharded(P()))
    table["mlp_jit"] = ((jitted, None, None), mlp_inputs)
    # On a 2x4 mesh: the batch split over dp, the hidden layer over tp.
    sharded2 = lambda spec: NamedSharding(mesh2, spec)
    jitted2 = jax.jit(lambda xb, a, c: jax.nn.relu(xb @ a) @ c,
                      in_shardings=(sharded2(P("dp", None)), sharded2(P(None, "tp")), sharded2(P("tp", None))),
                      out_shardings=sharded2(P("dp", None)))
    table["mlp_jit_2d"] = ((jitted2, None, None), mlp_inputs)
    assert tuple(table) == NAMES, "NAMES lists the programs"
    unknown = sorted(set(names or ()) - set(table))
    if unknown:
        raise KeyError(f"unknown program(s) {', '.join(unknown)}; expected: {', '.join(table)}")
    return {name: (f, make(np.random.default_rng(zlib.crc32(name.encode()))))
            for name, (f, make) in table.items() if names is None or name in names}


def placed(entry):
    """(function, its inputs placed as it wants them): shard_map wants
    its inputs laid out as its in_specs say (JAX 0.10)."""
    import jax
    from jax.sharding import NamedSharding
    (f, mesh, specs), xs = entry
    if mesh is None:
        return f, xs
    specs = specs if isinstance(specs, tuple) else (specs,)
    return f, [jax.device_put(x, NamedSharding(mesh, s)) for x, s in zip(xs, specs)]


def _stored(x):
    """An array as npz keeps it: bf16 as its uint16 bit patterns (coll's
    convention; npz has no bfloat16)."""
    import numpy as np
    x = np.asarray(x)
    return x.view(np.uint16) if x.dtype.name == "bfloat16" else x


def generic(f, xs, debug_info=False):
    """The StableHLO JAX lowers `f` to, in the generic form coll reads."""
    return f.lower(*xs).compiler_ir("stablehlo").operation.get_asm(print_generic_op_form=True,
                                                                    enable_debug_info=debug_info)


def main(argv=None):
    from coll.tools.args import ArgumentParser  # usage errors exit 1, as the tools'
    from coll.tools.argtypes import count
    ap = ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("outdir")
    ap.add_argument("--names", default=None, help="comma-separated program names (default: all)")
    ap.add_argument("--n", type=count(1, 1 << 28), default=64, help="elements per device (default 64)")
    ap.add_argument("--devices", type=count(1, 64), default=DEVICES)
    ap.add_argument("--debug-info", action="store_true", help="keep JAX's locations (Python source lines)")
    ap.add_argument("--no-outputs", action="store_true", help="do not run the programs under XLA")
    ap.add_argument("--gspmd", action="store_true",
                    help="lower with GSPMD, not Shardy (jax_use_shardy_partitioner=False); files P_gspmd.*")
    a = ap.parse_args(argv)
    import numpy as np
    suffix = ""
    if a.gspmd:
        _jax(a.devices).config.update("jax_use_shardy_partitioner", False)
        suffix = "_gspmd"
    try:
        found = programs(a.n, a.devices, a.names.split(",") if a.names else None)
    except KeyError as e:
        print(f"jax_programs: {e.args[0]}", file=sys.stderr)
        return 2
    names = list(found)
    os.makedirs(a.outdir, exist_ok=True)
    for name in names:
        f, xs = placed(found[name])
        with open(os.path.join(a.outdir, f"{name}{suffix}.mlir"), "w") as fh:
            fh.write(generic(f, xs, a.debug_info))
        arrays = {f"x{i}": _stored(x) for i, x in enumerate(found[name][1])}
        if not a.no_outputs:
            ys = f(*xs)
            ys = ys if isinstance(ys, (tuple, list)) else [ys]
            arrays.update({f"y{j}": _stored(y) for j, y in enumerate(ys)})
        np.savez(os.path.join(a.outdir, f"{name}{suffix}.npz"), **arrays)
    return 0


if __name__ == "__main__":
    sys.exit(main())
