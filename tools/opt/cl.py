"""Command lines the way LLVM's cl parses them (what mlir-opt users type).

`-name` and `--name` are the same option; values come as `--name=value` or,
for options that require one, as the next argument (`-o out.mlir`). Options
with an optional value take it only after `=` (`--split-input-file=// XX`).
Anything else that starts with `-` is handed back in order as a candidate
pass flag; the caller decides whether it names a pass.
"""
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

FLAG, VALUE, OPTIONAL, LIST = "flag", "value", "optional", "list"
_TRUE, _FALSE = ("", "true", "TRUE", "True", "1"), ("false", "FALSE", "False", "0")


class UsageError(Exception):
    """A command-line error; the message is printed after '<tool>: '."""


@dataclass
class Option:
    name: str
    kind: str
    help: str = ""
    meta: str = ""            # how the value is shown in --help
    choices: tuple[str, ...] = ()       # allowed values (empty: any)
    default: Any = None


@dataclass
class Parsed:
    values: dict[str, Any]
    positional: list[str] = field(default_factory=list)
    # [(spelling as given, name, value or None)]
    passes: list[tuple[str, str, str | None]] = field(default_factory=list)


def parse(argv: Sequence[str], options: Sequence[Option], max_positional: int = 1,
          prog: str = "coll-opt") -> Parsed:
    table = {o.name: o for o in options}
    values: dict[str, Any] = {o.name: ([] if o.kind == LIST else False if o.kind == FLAG else o.default)
                              for o in options}
    out = Parsed(values)
    args = list(argv)
    only_positional = False
    while args:
        arg = args.pop(0)
        if only_positional or arg == "-" or not arg.startswith("-"):
            out.positional.append(arg)
        elif arg == "--":
            only_positional = True
        else:
            body = arg[2:] if arg.startswith("--") else arg[1:]
            name, eq, value = body.partition("=")
            opt = table.get(name)
            if opt is None:
                out.passes.append((arg, name, value if eq else None))
                continue
            spelled = "-" + name if len(name) == 1 else "--" + name
            if opt.kind == FLAG:
                if not eq or value in _TRUE:
                    values[name] = True
                elif value in _FALSE:
                    values[name] = False
                else:
                    raise UsageError(f"for the {spelled} option: '{value}' is invalid value for boolean "
                                     "argument! Try 0 or 1")
                continue
            if opt.kind == OPTIONAL:
                value = value if eq else ""
            elif not eq:
                if not args:
                    raise UsageError(f"for the {spelled} option: requires a value!")
                value = args.pop(0)
            if opt.choices and value not in opt.choices:
                raise UsageError(f"for the {spelled} option: Cannot find option named '{value}'!")
            if opt.kind == LIST:
                values[name] += [v for v in value.split(",") if v]
            else:
                values[name] = value
    if len(out.positional) > max_positional:
        raise UsageError("Too many positional arguments specified!\n"
                         f"Can specify at most {max_positional} positional arguments: See: {prog} --help")
    return out


def help_text(options: Sequence[Option], usage: str, width: int = 44) -> str:
    lines = [usage, "", "OPTIONS:"]
    for o in options:
        short = len(o.name) == 1
        flag = ("-" if short else "--") + o.name
        if o.kind in (VALUE, LIST):
            flag += (" " if short else "=") + f"<{o.meta or 'value'}>"
        elif o.kind == OPTIONAL:
            flag += f"[=<{o.meta or 'value'}>]"
        lines.append(f"  {flag:<{width}} - {o.help}")
    return "\n".join(lines) + "\n"
