"""Pipeline text -> one PassManager mixing coll passes and upstream passes.

`builtin.module(coll-lower-all-reduce{strategy=ring},canonicalize,cse)`:
coll passes (from the registry) are added as Python passes, everything else
is handed to upstream's pipeline parser, all in order in one PassManager.
"""
from mlir import passmanager

from ..ir.verifier import VerifyError, verify_or_raise
from .registry import PassError, load_all


# The bindings can only emit errors: a note is an error whose message starts
# with this prefix; tools/diagnostics.py attaches it to the error before it.
NOTE_PREFIX = "note: "


class PipelineError(ValueError):
    pass


def split_top(text):
    """Splits at commas not nested in (), {} or []."""
    parts, depth, cur = [], 0, []
    for ch in text:
        if ch in "({[":
            depth += 1
        elif ch in ")}]":
            depth -= 1
            if depth < 0:
                raise PipelineError(f"unbalanced ')' in pipeline '{text}'")
        if ch == "," and depth == 0:
            parts.append("".join(cur).strip())
            cur = []
        else:
            cur.append(ch)
    if depth != 0:
        raise PipelineError(f"unbalanced parentheses in pipeline '{text}'")
    parts.append("".join(cur).strip())
    return [p for p in parts if p]


def parse_elements(text):
    """'builtin.module(a,b{x=1})' -> ['a', 'b{x=1}']."""
    text = text.strip()
    if not text:
        return []
    if not (text.startswith("builtin.module(") and text.endswith(")")):
        raise PipelineError(
            f"pipeline must be anchored on the module: expected 'builtin.module(...)', got '{text}'")
    return split_top(text[len("builtin.module("):-1])


def _split_element(elem):
    """'name{opts}' -> ('name', 'opts'); 'name' -> ('name', '')."""
    if "{" in elem and elem.endswith("}") and "(" not in elem:
        name, _, rest = elem.partition("{")
        return name.strip(), rest[:-1]
    return elem.strip(), ""


def _python_pass(info, options):
    def run(op, pass_):
        try:
            info.fn(op, **options)
            verify_or_raise(op)
        except PassError as e:
            # A PassError may carry several findings, each with notes at
            # other locations (`findings`: [(loc, message, [(loc, note)])]).
            found = getattr(e, "findings", None) or [(e.location, str(e), ())]
            for loc, msg, notes in found:
                (loc or op.location).emit_error(f"{info.name}: {msg}")
                for nloc, note in notes:
                    nloc.emit_error(NOTE_PREFIX + note)
            pass_.signal_pass_failure()
        except VerifyError as e:
            for loc, msg in e.findings:
                loc.emit_error(msg)
            pass_.signal_pass_failure()
    return run


def add_pass(pm, name, **options):
    """Appends coll pass `name` (with keyword options) to an existing
    PassManager: how a frontend puts our passes into its own pipeline."""
    info = load_all().get(name)
    if info is None:
        raise PipelineError(f"'{name}' is not a coll pass")
    values = info.parse_options(" ".join(f"{k}={v}" for k, v in options.items()))
    pm.add(_python_pass(info, values), name=name, argument=name)


def build(text, context=None):
    """A PassManager for pipeline `text` (raises PipelineError)."""
    registry = load_all()
    pm = passmanager.PassManager("builtin.module", context=context)
    for elem in parse_elements(text):
        name, opts = _split_element(elem)
        info = registry.get(name)
        if info is not None:
            try:
                values = info.parse_options(opts)
            except ValueError as e:
                raise PipelineError(str(e)) from None
            pm.add(_python_pass(info, values), name=name, argument=name)
            continue
        try:
            pm.add(elem)
        except ValueError as e:
            first = str(e).strip().splitlines()
            detail = next((l for l in first if "error:" in l), first[0] if first else "")
            detail = detail.split("error:", 1)[-1].strip()
            raise PipelineError(f"invalid pipeline element '{elem}': {detail}") from None
    return pm
