"""The StableHLO frontend's reference: the same module run by XLA itself.

coll-run and `coll.frontends.run.global_arrays` check a JAX export against this, so
that it prints `ok` or `FAIL` like every other program instead of
`unchecked`. XLA compiles the module as JAX would (one replica, one
partition per device, Shardy's partitioner) on its CPU client; its own
parameter and output shardings scatter the inputs and gather the results,
so nothing of coll's layouts is shared with what is checked.

XLA runs in a child process (`python -m coll.frontends.stablehlo_xla DIR`):
its device count is fixed when jaxlib starts (XLA_FLAGS), and a failure
there cannot take the caller down. It needs jaxlib (the `jax` extra, which
`make setup` installs); `available()` says whether it is there.
"""
from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Sequence

import numpy as np

from .jaxlib_partition import compile_partitioned

TIMEOUT_S = 300


class XlaError(RuntimeError):
    """XLA could not compile or run the module (its message, as XLA said it)."""


def available() -> bool:
    """Whether jaxlib can be imported here."""
    return importlib.util.find_spec("jax") is not None and importlib.util.find_spec("jaxlib") is not None


def run(text: str, devices: int, xs: Sequence[np.ndarray], inputs: Sequence[str],
        outputs: Sequence[tuple[tuple[int, ...], str]]) -> list[np.ndarray]:
    """The global results of module `text` (StableHLO as JAX exports it, any
    printed form XLA reads) over `devices` devices, on global inputs `xs`
    whose element types coll names `inputs` (bf16 as uint16 bits, as coll's
    runtimes take them); `outputs` gives each result's (shape, element type).
    Raises XlaError."""
    with tempfile.TemporaryDirectory(prefix="coll-xla-") as d:
        with open(os.path.join(d, "module.mlir"), "w") as f:
            f.write(text)
        np.savez(os.path.join(d, "in.npz"), *[np.asarray(x) for x in xs])
        with open(os.path.join(d, "spec.json"), "w") as f:
            json.dump({"devices": devices, "inputs": list(inputs), "outputs": [[list(s), e] for s, e in outputs]}, f)
        env = dict(os.environ)
        env["XLA_FLAGS"] = (env.get("XLA_FLAGS", "") + f" --xla_force_host_platform_device_count={devices}").strip()
        env["JAX_PLATFORMS"] = "cpu"
        try:
            done = subprocess.run([sys.executable, "-m", "coll.frontends.stablehlo_xla", d], env=env,
                                  capture_output=True, text=True, timeout=TIMEOUT_S)
        except subprocess.TimeoutExpired:
            raise XlaError(f"XLA did not finish the reference run in {TIMEOUT_S} s") from None
        if done.returncode != 0:
            lines = [ln for ln in done.stderr.strip().splitlines() if ln.strip()]
            raise XlaError("XLA could not run the module: " + (lines[-1] if lines else f"exit {done.returncode}"))
        with np.load(os.path.join(d, "out.npz")) as got:
            return [got[f"arr_{j}"] for j in range(len(outputs))]


def _child(d: str) -> None:
    # jax in the child only: it starts slowly and takes its device count from XLA_FLAGS then
    import jax
    import ml_dtypes  # with jax (~0.9 s to import), in the child only
    jax.config.update("jax_enable_x64", True)  # f64 and i64 arrays stay what they are
    from jax._src.sharding_impls import GSPMDSharding  # jax: in the child only, as above

    with open(os.path.join(d, "spec.json")) as f:
        spec = json.load(f)
    with open(os.path.join(d, "module.mlir")) as f:
        text = f.read()
    exe, devices = compile_partitioned(text, spec["devices"])
    with np.load(os.path.join(d, "in.npz")) as data:
        xs = [data[f"arr_{i}"] for i in range(len(data.files))]
    xs = [x.view(ml_dtypes.bfloat16) if e == "bf16" else x for x, e in zip(xs, spec["inputs"])]
    params = exe.get_parameter_shardings()
    if len(params) != len(xs):
        raise SystemExit(f"the module takes {len(params)} arguments, {len(xs)} were given")
    arrays = [jax.device_put(x, GSPMDSharding(devices, s)) for x, s in zip(xs, params)]
    results = exe.execute_sharded(arrays).disassemble_into_single_device_arrays()
    ys = []
    for shards, sharding, (shape, element) in zip(results, exe.get_output_shardings(), spec["outputs"]):
        y = np.asarray(jax.make_array_from_single_device_arrays(tuple(shape), GSPMDSharding(devices, sharding),
                                                               shards))
        ys.append(y.view(np.uint16) if element == "bf16" else y)
    np.savez(os.path.join(d, "out.npz"), *ys)


if __name__ == "__main__":
    try:
        _child(sys.argv[1])
    except Exception as e:  # noqa: BLE001 - the parent reports it, located at the module
        print(f"{type(e).__name__}: {e}".replace("\n", " "), file=sys.stderr)
        sys.exit(1)
