"""The upstream tools coll drives (mlir-opt, mlir-translate, llc, FileCheck,
llvm-readelf, ...): from the pinned MLIR/LLVM wheels first, then PATH."""
import importlib.util
import shutil
from pathlib import Path


def wheel_dir(pkg: str, sub: str) -> Path | None:
    """`sub` inside an installed wheel's package (`mlir`, `llvm`), or None."""
    spec = importlib.util.find_spec(pkg)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(list(spec.submodule_search_locations)[0]) / sub


def tool(name: str) -> str:
    """Path of an upstream tool (wheels first, then PATH)."""
    for pkg in ("mlir", "llvm"):
        d = wheel_dir(pkg, "bin")
        if d and (d / name).exists():
            return str(d / name)
    found = shutil.which(name)
    if not found:
        raise FileNotFoundError(f"'{name}' not found in the MLIR/LLVM wheels or on PATH")
    return found
