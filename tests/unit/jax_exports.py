"""JAX's programs for the tests, exported at test time: one child process
runs bench/jax_programs.py (it sets XLA_FLAGS for 8 host devices before JAX
starts) and writes each program's generic StableHLO (with JAX's locations)
and its global inputs and XLA's outputs."""
import importlib.util
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
from jax_programs import matches, relative_error  # noqa: E402,F401 - the tests' (and the benchmarks') check

ROOT = Path(__file__).resolve().parents[2]
HAVE_JAX = importlib.util.find_spec("jax") is not None and importlib.util.find_spec("jaxlib") is not None
needs_jax = pytest.mark.skipif(not HAVE_JAX, reason="jax is not installed (make setup installs the jax extra)")
TIMEOUT = 300


def export(folder, names, n=64, gspmd=False, devices=8):
    """{name: (StableHLO text, inputs [x0..], XLA's outputs [y0..])} on
    `devices` host devices; `gspmd`: lowered with GSPMD instead of Shardy
    (names get `_gspmd`)."""
    cmd = [sys.executable, str(ROOT / "bench" / "jax_programs.py"), str(folder), "--n", str(n),
           "--devices", str(devices), "--debug-info", "--names", ",".join(names)] + (["--gspmd"] if gspmd else [])
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT)
    assert proc.returncode == 0, proc.stderr[-3000:]
    found = {}
    for name in (f"{x}_gspmd" for x in names) if gspmd else names:
        data = np.load(Path(folder) / f"{name}.npz")
        xs = [data[f"x{i}"] for i in range(sum(k.startswith("x") for k in data.files))]
        ys = [data[f"y{j}"] for j in range(sum(k.startswith("y") for k in data.files))]
        found[name] = ((Path(folder) / f"{name}.mlir").read_text(), xs, ys)
    return found


def export_corpus(folder, devices, names=None):
    """{name: (StableHLO text, inputs [x0..], XLA's outputs [y0..])} for the
    programs of bench/jax_corpus.py (default all) on `devices` devices."""
    cmd = [sys.executable, str(ROOT / "bench" / "jax_corpus.py"), str(folder), "--devices", str(devices)]
    cmd += ["--names", ",".join(names)] if names else []
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT)
    assert proc.returncode == 0, proc.stderr[-3000:]
    found = {}
    for mlir in sorted(Path(folder).glob("*.mlir")):
        data = np.load(mlir.with_suffix(".npz"))
        xs = [data[f"x{i}"] for i in range(sum(k.startswith("x") for k in data.files))]
        ys = [data[f"y{j}"] for j in range(sum(k.startswith("y") for k in data.files))]
        found[mlir.stem] = (mlir.read_text(), xs, ys)
    return found
