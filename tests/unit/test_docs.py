"""The project's documents (README.md and docs/*.md) stay true and
self-contained.

- Every ```python block of a document runs: the blocks of one file run in
  order in one namespace (a later block may use what an earlier one made),
  with the repository root as the working directory.
- Every ```console block whose first line starts with `$ coll-` runs: each
  `$ ` line is a command (bash, the venv's tools first on PATH, in the
  repository root), the lines after it up to the next `$ ` line are what it
  prints (stdout and stderr together). Trailing whitespace and trailing
  blank lines are ignored; a line that is just `...` matches any number of
  lines (timings). Other console blocks (`$ mpirun ...`) are not run.
- No tracked file refers to a document outside the repository (the design
  notes that used to live beside it), and every relative link in README.md
  and docs/*.md names a file that exists (and a heading of it, after `#`).
"""
import ast
import inspect
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = sorted((ROOT / "docs").glob("*.md"))
DOCUMENTS = [ROOT / "README.md"] + DOCS  # the README's snippets are checked like the docs'
FENCE = re.compile(r"^```(\w*)[^\n]*\n(.*?)^```[ \t]*$", re.S | re.M)


def _blocks(path, lang):
    """[(line number, text)] of the fenced blocks of `lang` in `path`."""
    text = path.read_text()
    return [(text.count("\n", 0, m.start()) + 2, m.group(2))
            for m in FENCE.finditer(text) if m.group(1) == lang]


def _console_blocks(path):
    return [(line, text) for line, text in _blocks(path, "console") if text.startswith("$ coll-")]


def test_there_are_documents():
    names = {p.name for p in DOCS}
    assert {"architecture.md", "algorithm.md", "toolchain.md", "embedding.md", "ir.md", "running.md",
            "benchmarks.md", "reliability.md", "status.md"} <= names


def test_the_readme_is_short_and_starts_with_the_two_commands():
    """A newcomer reads the README in five minutes; the reference is in docs/."""
    text = (ROOT / "README.md").read_text()
    assert len(text.splitlines()) <= 300
    first = _blocks(ROOT / "README.md", "sh")[0][1]
    assert first.startswith("make demo ") and "\nmake test " in first
    assert _console_blocks(ROOT / "README.md"), "the README's tour is tool output, checked here"


def test_the_embedding_guide_imports_coll_through_api_alone():
    """docs/embedding.md teaches the public entry points (coll.api), not
    the package's inside; an old import path (coll/__init__.py MOVED) may
    appear where the guide shows that it still works."""
    from coll import MOVED
    found = []
    for line, block in _blocks(ROOT / "docs" / "embedding.md", "python"):
        for node in ast.walk(ast.parse(block)):
            if isinstance(node, ast.ImportFrom):
                names = [node.module or ""] if node.module != "coll" else [f"coll.{a.name}" for a in node.names]
            elif isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            else:
                continue
            found += [f"line {line + node.lineno - 1}: {n}" for n in names
                      if (n == "coll" or n.startswith("coll.")) and n != "coll.api" and n not in MOVED]
    assert not found, found


def test_the_architecture_names_the_registries_as_the_code_has_them():
    # The frontends row of the registry table: FRONTENDS, in order.
    from coll.frontends import FRONTENDS
    from coll.lowering import BACKENDS
    text = (ROOT / "docs" / "architecture.md").read_text()
    row = next(line for line in text.splitlines() if line.startswith("| frontends |"))
    assert row.rsplit("|", 2)[1].strip() == ", ".join(f"`{f.NAME}`" for f in FRONTENDS), row
    # "A back end": build's signature as every back end's method has it
    # (its leading parameters; each back end's options follow).
    section = text.split("### A back end", 1)[1].split("\n### ", 1)[0]
    said = re.findall(r"`build\(([^)]*)\)`", section)
    assert said, "the back end section gives build's signature"
    leading = [p.strip() for p in said[0].split(",") if p.strip() not in ("...", "")]
    for b in BACKENDS.values():
        params = list(inspect.signature(b.build).parameters)
        assert params[:len(leading)] == leading, f"docs: build({said[0]}); {b.name}: build({', '.join(params)})"
        named = re.findall(r"`(\w+)`", section)
        assert params[len(leading)] in named, f"{b.name}'s first option {params[len(leading)]} is not named"


@pytest.mark.parametrize("path", [p for p in DOCUMENTS if _blocks(p, "python")], ids=lambda p: p.name)
def test_python_blocks_run(path, monkeypatch):
    monkeypatch.chdir(ROOT)
    namespace = {"__name__": f"docs_{path.stem}"}
    for line, code in _blocks(path, "python"):
        try:
            exec(compile(code, f"{path.relative_to(ROOT)}:{line}", "exec"), namespace)
        except Exception as e:  # noqa: BLE001 - name the block that failed
            raise AssertionError(f"the python block at {path.name}:{line} failed: "
                                 f"{type(e).__name__}: {e}") from e


def _commands(text):
    """[(command, expected lines)] of a console block."""
    out = []
    for raw in text.rstrip("\n").split("\n"):
        if raw.startswith("$ "):
            out.append((raw[2:], []))
        else:
            out[-1][1].append(raw.rstrip())
    return out


def _matches(got, want):
    """Whether lines `got` match `want`, where a `...` line matches any
    number of lines."""
    if not want:
        return not got
    if want[0] == "...":
        return any(_matches(got[i:], want[1:]) for i in range(len(got) + 1))
    return bool(got) and got[0] == want[0] and _matches(got[1:], want[1:])


def _trim(lines):
    lines = [l.rstrip() for l in lines]
    while lines and not lines[-1]:
        lines.pop()
    return lines


CONSOLE = [(p, line, text) for p in DOCUMENTS for line, text in _console_blocks(p)]


@pytest.mark.parametrize("path,line,text", CONSOLE, ids=[f"{p.name}:{l}" for p, l, _ in CONSOLE])
def test_console_blocks_print_what_they_show(path, line, text):
    env = dict(os.environ)
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    for command, expected in _commands(text):
        r = subprocess.run(["bash", "-c", command], cwd=ROOT, env=env, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True, timeout=120)
        got, want = _trim(r.stdout.split("\n")), _trim(expected)
        assert _matches(got, want), (f"{path.name}:{line}: `{command}` printed\n" + "\n".join(got)
                                     + "\n-- expected --\n" + "\n".join(want))


def test_matching_rules():
    assert _matches(["a", "b", "c"], ["a", "...", "c"])
    assert _matches(["a", "c"], ["a", "...", "c"])
    assert not _matches(["a", "b"], ["a", "c"])
    assert _commands("$ coll-x\nout\n$ coll-y\n") == [("coll-x", ["out"]), ("coll-y", [])]


# -- references --------------------------------------------------------------

# The design notes that lived outside the repository, spelled so that this
# file does not match itself.
OUTSIDE = re.compile("|".join([r"\b" + name + r"\.md\b" for name in ("DESIGN", "ALGORITHM", "TOOLCHAIN")]
                              + [r"\.\./" + "shared", "/work/" + "shared"]))


def _tracked():
    try:
        r = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True)
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout")
    return [ROOT / p for p in r.stdout.decode().split("\0") if p]


def test_no_tracked_file_refers_outside_the_repository():
    found = []
    for path in _tracked():
        if path.suffix in (".png", ".npz", ".so", ".o") or not path.is_file():
            continue
        try:
            text = path.read_text()
        except UnicodeDecodeError:
            continue
        for n, line in enumerate(text.splitlines(), 1):
            if OUTSIDE.search(line):
                found.append(f"{path.relative_to(ROOT)}:{n}: {line.strip()}")
    assert not found, "references to documents outside the repository (use docs/):\n" + "\n".join(found)


LINK = re.compile(r"\[[^\]\n]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
INLINE_CODE = re.compile(r"`[^`\n]*`")


def _links(path):
    """The link targets of a markdown file, outside code blocks and spans."""
    text = FENCE.sub("", path.read_text())
    text = INLINE_CODE.sub("", text)
    return LINK.findall(text)


def _anchors(path):
    """The anchors GitHub makes of a markdown file's headings: lower case,
    punctuation dropped, spaces to hyphens, -1, -2 ... on repeats."""
    seen, out = {}, set()
    for heading in re.findall(r"^#+[ \t]+(.+?)[ \t]*$", FENCE.sub("", path.read_text()), re.M):
        slug = re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-")
        out.add(slug if slug not in seen else f"{slug}-{seen[slug]}")
        seen[slug] = seen.get(slug, 0) + 1
    return out


def test_anchors_are_githubs():
    assert _anchors(ROOT / "docs" / "benchmarks.md") >= {"mpi-the-allreduce-against-mpi_allreduce",
                                                         "the-report-the-cost-model-compile-time"}


@pytest.mark.parametrize("path", DOCUMENTS, ids=lambda p: p.name)
def test_relative_links_point_to_files(path):
    missing = []
    for target in _links(path):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target):
            continue  # a URL
        file, _, anchor = target.partition("#")
        linked = path.parent / file if file else path
        if not linked.exists():
            missing.append(target)
        elif anchor and linked.suffix == ".md" and anchor not in _anchors(linked):
            missing.append(target)
    assert not missing, f"{path.name} links to files or headings that do not exist: {missing}"


def test_readme_lists_the_documents():
    links = set(_links(ROOT / "README.md"))
    assert {f"docs/{p.name}" for p in DOCS} <= links
