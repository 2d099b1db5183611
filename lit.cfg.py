# lit configuration: no CMake needed. Tools come from the active venv
# (coll-opt, coll-gen, coll-run, filecheck) and from the MLIR/LLVM wheels
# (mlir-opt, FileCheck, llc).
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

root = os.path.dirname(os.path.abspath(__file__))
bindir = os.path.dirname(sys.executable)
config.environment["PATH"] = os.pathsep.join([bindir, os.environ.get("PATH", "")])
for var in ("HOME", "TMPDIR", "CI"):
    if var in os.environ:
        config.environment[var] = os.environ[var]


def _wheel_bin(pkg):
    import importlib.util
    spec = importlib.util.find_spec(pkg)  # namespace packages: no origin
    return os.path.join(list(spec.submodule_search_locations)[0], "bin")


mlir_bin, llvm_bin = _wheel_bin("mlir"), _wheel_bin("llvm")
config.substitutions.append(("%PYTHON", sys.executable))
config.substitutions.append(("%root", root))
config.substitutions.append(("%irdl", os.path.join(root, "ir", "coll.irdl.mlir")))
config.substitutions.append(("%mlir-opt", os.path.join(mlir_bin, "mlir-opt")))
config.substitutions.append(("%llc", os.path.join(llvm_bin, "llc")))
if shutil.which("ptxas"):
    config.available_features.add("ptxas")
