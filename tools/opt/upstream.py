"""What upstream registers, asked of the wheel's own mlir-opt.

The bindings cannot enumerate registered passes or dialects; the mlir-opt
shipped in the same wheels registers the same ones (every name it lists
parses in a bindings PassManager), so `--list-passes` and `--show-dialects`
come from it, with the coll passes and dialects merged in.
"""
import importlib.util
import os
import re
import subprocess
from collections.abc import Mapping
from typing import Any


def mlir_bin(tool: str) -> str:
    spec = importlib.util.find_spec("mlir")  # a namespace package: no origin
    assert spec is not None and spec.submodule_search_locations is not None, "the mlir bindings are installed"
    return os.path.join(list(spec.submodule_search_locations)[0], "bin", tool)


def _ask(flag: str) -> str:
    try:
        r = subprocess.run([mlir_bin("mlir-opt"), flag], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return r.stdout if r.returncode == 0 else ""


def pass_entries() -> tuple[dict[str, list[str]], int]:
    """{name: [lines]} of `mlir-opt --list-passes` (a pass line plus its
    option lines), and the column where descriptions start."""
    entries: dict[str, list[str]] = {}
    column, cur = 52, None
    for line in _ask("--list-passes").splitlines():
        m = re.match(r"  --([\w.-]+)\s+- ", line)
        if m:
            cur = entries.setdefault(m.group(1), [])
            column = line.index(" - ", 4 + len(m.group(1))) + 1
            cur.append(line)
        elif cur is not None and line.startswith("    "):
            cur.append(line)
    return entries, column


def _option_lines(key: str, typ: Any, default: Any, column: int) -> list[str]:
    expected = getattr(typ, "expected", "")
    meta = {"int": "int", "float": "number", "str": "string"}.get(getattr(typ, "__name__", ""), "value")
    flag = f"    --{key}=<{meta}>"
    desc = meta if default in (None, "") else f"default: {default}"
    lines = [f"{flag:<{column}}- {desc}"]
    if expected.startswith("one of: "):  # upstream's enum layout
        lines += [f"{'    =' + v:<{column - 2}}-   {v}" for v in expected[len("one of: "):].split(", ")]
    return lines


def list_passes(coll_passes: Mapping[str, Any]) -> str:
    """The text of `coll-opt --list-passes`: upstream's list with the coll
    passes (and their options) merged in, sorted by name."""
    entries, column = pass_entries()
    for name, info in coll_passes.items():
        lines = [f"{'  --' + name:<{column}}-   {info.description}".rstrip()]
        for key, (typ, default) in info.options.items():
            lines += _option_lines(key, typ, default, column)
        entries[name] = lines
    return "Passes:\n" + "".join(l + "\n" for name in sorted(entries) for l in entries[name])


def dialects() -> list[str]:
    """Dialect names upstream registers."""
    m = re.search(r"Available Dialects: (.*)", _ask("--show-dialects"))
    return [d.strip() for d in m.group(1).split(",") if d.strip()] if m else []
