"""The registry of coll passes: name -> function, typed options, anchor.

A pass is a plain function `fn(op: ir.Operation, **options)` that rewrites
in place and raises PassError on failure. Modules in passes/, analysis/,
frontends/ and lowering/ register theirs with `@register`, and each of
those layers declares its passes as data in its `register.py` (name ->
"module:function"; pyproject `[project.entry-points."coll.passes"]` names
the same modules). The registry reads those tables and imports a pass's
module only when a pipeline uses the pass (`lookup`) or a listing needs its
options (`load_all`): the one place where modules are found by name, so
that core never imports a layer above it and a tool's start-up does not
pay for every pass's dependencies. Which passes exist does not depend on
what was imported first.
"""
import importlib
import importlib.util
import re
import sys
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

# An option's type: parses its text (ValueError when bad); an `expected`
# attribute, where it has one, says what it accepts.
OptionType = Callable[[str], Any]
# Where a pass runs: an op name or "any", or that of the option values.
Anchor = str | Callable[..., str]
_Fn = TypeVar("_Fn", bound=Callable[..., Any])


@dataclass
class PassInfo:
    name: str
    fn: Callable[..., Any]
    description: str = ""
    options: dict[str, tuple[OptionType, Any]] = field(default_factory=dict)  # key -> (type, default)
    # Where it may run: "any" (the op it is given: a module, a function...)
    # or "builtin.module" (it needs the whole module).
    anchor: Anchor = "any"

    def parse_options(self, text: str) -> dict[str, Any]:
        """'strategy=ring threshold=10' -> {'strategy': 'ring', 'threshold': 10}.

        Raises ValueError naming the bad option and what was expected."""
        values = {k: default for k, (_, default) in self.options.items()}
        for key, eq, raw in _option_items(text):
            if key not in self.options:
                known = ", ".join(sorted(self.options)) or "none"
                raise ValueError(f"unknown option '{key}' for pass '{self.name}'; expected one of: {known}")
            if not eq:
                raise ValueError(f"option '{key}' of pass '{self.name}' needs a value ({key}=...)")
            given = self.options[key][0]
            typ = llvm_int if given is int else given
            try:
                values[key] = typ(raw)
            except ValueError:
                expected = getattr(typ, "expected", typ.__name__)
                raise ValueError(f"invalid value '{raw}' for option '{key}' of pass '{self.name}'; "
                                 f"expected {expected}") from None
        return values

    def option_text(self, values: Mapping[str, Any]) -> str:
        """The options as pipeline text ('' when all are default)."""
        items = [f"{k}={quote_value(v)}" for k, v in values.items()
                 if k in self.options and v != self.options[k][1]]
        return "{" + " ".join(items) + "}" if items else ""


def _option_items(text: str) -> Iterator[tuple[str, str, str]]:
    """Splits 'a=1 b="x y" c={p,q}' as upstream's pass-option parser does:
    at spaces outside quotes and braces; a value's quotes or outer braces
    are not part of it. Yields (key, '=' or '', value)."""
    i, n = 0, len(text)
    while i < n:
        while i < n and text[i].isspace():
            i += 1
        if i >= n:
            return
        j = i
        while j < n and not text[j].isspace() and text[j] != "=":
            j += 1
        key = text[i:j]
        if j >= n or text[j] != "=":
            yield key, "", ""
            i = j
            continue
        j += 1
        if j < n and text[j] in "\"'":
            end = text.find(text[j], j + 1)
            end = n if end == -1 else end
            yield key, "=", text[j + 1:end]
            i = end + 1
        elif j < n and text[j] == "{":
            depth, k = 0, j
            while k < n:
                depth += {"{": 1, "}": -1}.get(text[k], 0)
                if depth == 0:
                    break
                k += 1
            yield key, "=", text[j + 1:k]
            i = k + 1
        else:
            k = j
            while k < n and not text[k].isspace():
                k += 1
            yield key, "=", text[j:k]
            i = k


def llvm_int(raw: str) -> int:
    """An integer option as upstream's command line reads it (llvm::cl,
    StringRef::getAsInteger with radix 0): decimal, 0x hex, 0b binary, 0o or
    leading-0 octal, an optional '-'; no '_' or spaces; within int64."""
    m = re.fullmatch(r"(-?)(?:0[xX]([0-9a-fA-F]+)|0[bB]([01]+)|0[oO]?([0-7]+)|([0-9]+))", raw)
    if m is None:
        raise ValueError(raw)
    sign, hx, bn, oc, dec = m.groups()
    value = int(hx, 16) if hx else int(bn, 2) if bn else int(oc, 8) if oc else int(dec)
    value = -value if sign else value
    if not -2 ** 63 <= value < 2 ** 63:
        raise ValueError(raw)
    return value


setattr(llvm_int, "expected", "an integer (int64)")  # noqa: B010 - mypy allows no new attribute on a function


def quote_value(v: object) -> str:
    """A value as pipeline text: braced when it has a space, comma or brace
    (as upstream prints such values), so that the text reads back."""
    text = str(v)
    return "{" + text + "}" if any(c in text for c in " \t,{}()") else text


def choice(*values: str) -> OptionType:
    """An option type that accepts only `values`."""
    def parse(raw: str) -> str:
        if raw not in values:
            raise ValueError(raw)
        return raw
    setattr(parse, "expected", "one of: " + ", ".join(values))  # noqa: B010 - as llvm_int
    parse.__name__ = "choice"
    return parse


PASSES: dict[str, PassInfo] = {}


def register(name: str, description: str = "", anchor: Anchor = "any",
             **options: tuple[OptionType, Any]) -> Callable[[_Fn], _Fn]:
    """Decorator: register `fn` as pass `name` with typed options
    (`key=(type, default)`). `anchor`: the op it must run on ("any", or
    "builtin.module" for a pass that needs the whole module), or a function
    of the option values that gives it."""
    def wrap(fn: _Fn) -> _Fn:
        PASSES[name] = PassInfo(name, fn, description, dict(options), anchor)
        return fn
    return wrap


ENTRY_POINT_GROUP = "coll.passes"
PREFIX = "coll-"  # every coll pass's name starts with it; other names are upstream's
# coll's own modules that declare passes: the entry points pyproject.toml
# lists (tests/unit/test_registry.py checks the two agree), read here
# without scanning the installed packages' entry points (an
# importlib.metadata scan is a good share of a tool's start).
DECLARING = ("coll.passes.register", "coll.analysis.register", "coll.frontends.register",
             "coll.lowering.register")
_ROOT = Path(__file__).resolve().parents[1]  # the `coll` package: the repository root

_declared: dict[str, str] | None = None  # pass name -> "module:function"
_scanned = False  # the entry points of other packages are loaded


def _read(module: str) -> dict[str, str]:
    """The PASSES table of a declaring module, read from its file without
    importing its package: `coll.lowering`'s __init__ imports every back
    end, and `coll.frontends`' every frontend (measured: most of coll-opt's
    start-up when it still did)."""
    loaded = sys.modules.get(module)
    if loaded is None:
        path = _ROOT.joinpath(*module.split(".")[1:]).with_suffix(".py")
        spec = importlib.util.spec_from_file_location(module, path)
        assert spec is not None and spec.loader is not None, module
        loaded = importlib.util.module_from_spec(spec)  # not in sys.modules: a plain import stays plain
        spec.loader.exec_module(loaded)
    return dict(loaded.PASSES)


def declared() -> dict[str, str]:
    """Every pass coll declares: name -> "module:function" (nothing imported
    but the declaring modules' data)."""
    global _declared
    if _declared is None:
        table: dict[str, str] = {}
        for module in DECLARING:
            table.update(_read(module))
        _declared = table
    return _declared


def _import(name: str) -> PassInfo:
    """Imports the module that implements declared pass `name` (its
    `@register` fills PASSES) and checks it registered that function."""
    where = declared()[name]
    module, _, function = where.partition(":")
    mod = importlib.import_module(module)
    info = PASSES.get(name)
    if info is None or info.fn is not getattr(mod, function, None):
        raise LookupError(f"pass '{name}' is declared as '{where}', but that module does not register "
                          f"that function under this name")
    return info


def names() -> list[str]:
    """The name of every coll pass, without importing any pass module."""
    return sorted(set(declared()) | set(PASSES))


def _scan_entry_points() -> None:
    """Loads the other packages' `coll.passes` entry points (an embedder's
    own passes): a module that registers with @register, or that declares a
    PASSES table as coll's do."""
    global _scanned
    if _scanned:
        return
    _scanned = True
    from importlib.metadata import entry_points  # only for a name coll does not declare
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        if ep.value in DECLARING:
            continue
        mod = ep.load()
        table = getattr(mod, "PASSES", None)
        if isinstance(table, dict):
            declared().update({k: v for k, v in table.items() if isinstance(v, str)})


def load_all() -> dict[str, PassInfo]:
    """Every registered pass, with its options: imports every declared
    pass's module (for a listing, a fuzzer, a test)."""
    _scan_entry_points()
    for name in declared():
        if name not in PASSES:
            _import(name)
    return PASSES


class _Lookup:
    """PASSES by name for the pipeline builder: a declared pass not
    registered yet imports its one module; a `coll-` name nobody declares
    loads the other packages' entry points; an upstream name does neither."""

    def get(self, name: str) -> PassInfo | None:
        info = PASSES.get(name)
        if info is None and name in declared():
            return _import(name)
        if info is None and name.startswith(PREFIX) and not _scanned:
            _scan_entry_points()
            info = PASSES.get(name) or (_import(name) if name in declared() else None)
        return info


lookup = _Lookup()
