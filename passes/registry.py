"""Registry of coll passes by pipeline name (used by coll-opt and frontends).

A pass is a plain function `fn(module_op: ir.Operation, **options)` that
rewrites in place and raises `PassError` (with an op/location) on failure.
Options are declared with their types and defaults so that
`name{key=value ...}` pipeline text is parsed and checked in one place.
"""
from dataclasses import dataclass, field


class PassError(Exception):
    """A pass failure with a location: reported as an MLIR error diagnostic."""

    def __init__(self, message, location=None):
        super().__init__(message)
        self.location = location


@dataclass
class PassInfo:
    name: str
    fn: object
    description: str = ""
    options: dict = field(default_factory=dict)  # key -> (type, default)

    def parse_options(self, text):
        """'strategy=ring threshold=10' -> {'strategy': 'ring', 'threshold': 10}.

        Raises ValueError naming the bad option and what was expected."""
        values = {k: default for k, (_, default) in self.options.items()}
        for item in text.split():
            key, eq, raw = item.partition("=")
            if key not in self.options:
                known = ", ".join(sorted(self.options)) or "none"
                raise ValueError(f"unknown option '{key}' for pass '{self.name}'; expected one of: {known}")
            if not eq:
                raise ValueError(f"option '{key}' of pass '{self.name}' needs a value ({key}=...)")
            typ = self.options[key][0]
            try:
                values[key] = typ(raw)
            except ValueError:
                expected = getattr(typ, "expected", typ.__name__)
                raise ValueError(f"invalid value '{raw}' for option '{key}' of pass '{self.name}'; expected {expected}") from None
        return values


def choice(*values):
    """An option type that accepts only `values`."""
    def parse(raw):
        if raw not in values:
            raise ValueError(raw)
        return raw
    parse.expected = "one of: " + ", ".join(values)
    parse.__name__ = "choice"
    return parse


PASSES = {}


def register(name, description="", **options):
    """Decorator: register `fn` as pass `name` with typed options
    (`key=(type, default)`)."""
    def wrap(fn):
        PASSES[name] = PassInfo(name, fn, description, dict(options))
        return fn
    return wrap


# Modules whose import registers passes (each calls `register`).
PASS_MODULES = [
    "coll.passes.builtin_passes",
    "coll.passes.cost_passes",
    "coll.passes.check_order",
    "coll.passes.shuffle",
    "coll.lowering.gpu",
    "coll.lowering.cpu",
]


def load_all():
    """Imports every module that registers passes; returns the registry."""
    import importlib
    for name in PASS_MODULES:
        importlib.import_module(name)
    return PASSES
