# lit configuration: no CMake needed. Tools come from the active venv
# (coll-opt, coll-gen, coll-run) and from the MLIR/LLVM wheels
# (mlir-opt, mlir-translate, FileCheck, not, llc), all on PATH. The code
# under test is always this checkout's, whichever venv runs lit.
import importlib.util
import os
import shutil
import sys

import lit.formats

config.name = "coll"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".mlir"]
# Tests live in tests/lit; run `lit tests/lit`. lit matches excludes against
# directory names at any depth, so only names that never occur under
# tests/lit are listed (for when lit is pointed at the root).
config.test_source_root = os.path.dirname(os.path.abspath(__file__))
config.test_exec_root = config.test_source_root
config.excludes = ["Inputs", "Output", ".venv", "examples", "ir", "build", "bench"]

root = os.path.dirname(os.path.realpath(__file__))
bindir = os.path.dirname(sys.executable)
for var in ("HOME", "TMPDIR", "CI"):
    if var in os.environ:
        config.environment[var] = os.environ[var]


def _wheel_bin(pkg):
    import importlib.util
    spec = importlib.util.find_spec(pkg)  # namespace packages: no origin
    return os.path.join(list(spec.submodule_search_locations)[0], "bin")


mlir_bin, llvm_bin = _wheel_bin("mlir"), _wheel_bin("llvm")
config.environment["PATH"] = os.pathsep.join([bindir, mlir_bin, llvm_bin, os.environ.get("PATH", "")])


def _checkout_on_pythonpath():
    """build/lit-pythonpath/coll -> this checkout, first on PYTHONPATH.

    The repository root is the `coll` package (package-dir) and the clone
    may have any name, so a venv's editable install may point at another
    clone; the symlink makes `import coll` (and so the venv's console
    scripts) load this one. Replaced atomically: lit runs may overlap."""
    folder = os.path.join(root, "build", "lit-pythonpath")
    os.makedirs(folder, exist_ok=True)
    link = os.path.join(folder, "coll")
    if not (os.path.islink(link) and os.readlink(link) == root):
        tmp = f"{link}.{os.getpid()}"
        os.symlink(root, tmp)
        os.replace(tmp, link)
    return folder


pythonpath = _checkout_on_pythonpath()
config.environment["PYTHONPATH"] = os.pathsep.join(
    p for p in [pythonpath, os.environ.get("PYTHONPATH", "")] if p)
config.substitutions.append(("%coll_pythonpath", pythonpath))
config.substitutions.append(("%PYTHON", sys.executable))
config.substitutions.append(("%root", root))
config.substitutions.append(("%irdl", os.path.join(root, "ir", "coll.irdl.mlir")))
config.substitutions.append(("%mlir-opt", os.path.join(mlir_bin, "mlir-opt")))
config.substitutions.append(("%llc", os.path.join(llvm_bin, "llc")))
if shutil.which("ptxas"):
    config.available_features.add("ptxas")
if shutil.which("mpirun") and shutil.which("mpicc"):  # coll-run --backend=mpi
    config.available_features.add("mpi")
# jaxlib runs stablehlo-legalize-to-linalg for the StableHLO frontend (the
# `jax` extra of pyproject.toml, which make setup installs).
if importlib.util.find_spec("jaxlib") is not None:
    config.available_features.add("jaxlib")
