"""The IRDL definition of the coll dialect, generated from the registry.

ir/coll.irdl.mlir is this module's output, checked in (it loads into any
Context and into `mlir-opt --irdl-file=`, and a reader sees the op set in
one file); tests/unit/test_irdl.py fails when it is not current. Regenerate
with

    python -m coll.collectives.irdl > ir/coll.irdl.mlir

Each op comes from its class (ir/ops.py for the explicit level,
collectives/*.py for the collectives): the operand groups (`GROUPS`), the
results, the required attributes (a collective's `kind` when it reduces,
`devices`, `root` when rooted, its axes, its ARRAYS, its `IRDL_ATTRS`), the first
paragraph of its docstring as the comment; the reduction kinds come from
ir/kinds.py, written once as `@kind`-style constraints in every op that
takes one.
"""
import inspect

from ..ir.kinds import KINDS
from ..ir.ops import OPS, VARIADIC, CollectiveOp, OpView
from . import COLLECTIVES

HEADER = """\
// The coll dialect: its op set, generated from the registry
// (coll/collectives/irdl.py: python -m coll.collectives.irdl > ir/coll.irdl.mlir);
// do not edit by hand. Load it from Python with coll.ir.load_dialect(ctx), or
// into upstream tools with `mlir-opt --irdl-file=ir/coll.irdl.mlir`. IRDL ops
// print in generic form.
//
// IRDL binds one type per constraint variable, across a whole variadic group,
// so every variadic group below holds values of one type. That is why
// placement is an attribute at the collective level (the inputs live on
// different devices) and a memref memory space (#coll.device<i>) at the
// explicit level, where `coll.combine` splits its inputs into `lhs` and a
// homogeneous variadic `rhs`. What IRDL cannot say is checked by the Python
// verifier in ir/verifier.py.
//
// Collective level: every collective has the operand groups (inputs,
// outputs, deps) and returns a token; its optional attributes (strategy,
// threshold, to_device, groups, order) are checked in Python. In the tensor form
// (value semantics, for frontends) `outputs` is empty and the op returns its
// token and one tensor per output. `inputs` are irdl.any, checked in Python to
// be memrefs or ranked tensors: in LLVM 22.1.8 an irdl.any_of over two
// irdl.base constraints aborts the loader ("unknown IRDL constraint",
// IRDLLoading.cpp:541).
irdl.dialect @coll {
  // Ordering token returned by every asynchronous op.
  irdl.type @token {
  }

  // Placement of a buffer: used as a memref memory space.
  irdl.attribute @device {
    %id = irdl.base "#builtin.integer"
    irdl.parameters(id: %id)
  }
"""

# The base constraint of each kind of operand group and attribute.
BASES = {"memref": 'irdl.base "!builtin.memref"', "token": "irdl.base @coll::@token",
         "tensor": 'irdl.base "!builtin.tensor"', "any": "irdl.any",
         "integer": 'irdl.base "#builtin.integer"', "array": 'irdl.base "#builtin.dense_array"',
         "string": 'irdl.base "#builtin.string"'}


def _comment(cls: type[OpView], indent: str = "  ") -> str:
    doc = inspect.getdoc(cls) or ""
    first = doc.split("\n\n")[0].split()
    lines, line = [], ""
    for word in first:
        if len(indent) + 3 + len(line) + 1 + len(word) > 80 and line:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}".strip()
    if line:
        lines.append(line)
    return "".join(f"{indent}// {l}\n" for l in lines)


def _signature(cls: type[OpView]) -> tuple[list[tuple[str, str, bool]], list[tuple[str, str, bool]],
                                          list[tuple[str, str]]]:
    """(operand groups [(name, base, variadic)], results [(name, base,
    variadic)], attributes [(name, base)]) of an op class."""
    if issubclass(cls, CollectiveOp):
        groups = [("inputs", "any", True), ("outputs", "memref", True), ("deps", "token", True)]
        results = [("token", "token", False), ("values", "tensor", True)]
        attrs = ([("kind", "kind")] if cls.HAS_KIND else []) + [("devices", "array")]
        attrs += [("root", "integer")] if cls.ROOTED else []
        attrs += [(a, "integer") for a in cls.AXES]
        attrs += [(a, "array") for a in cls.ARRAYS]  # e.g. a permute's pairs
    else:
        # (a group named like a property of its view has a trailing '_': `lhs_`)
        groups = [(name.rstrip("_"), cls.IRDL_TYPES.get(name, "token" if name in ("deps", "tokens") else "memref"),
                   size == VARIADIC) for name, size in cls.GROUPS]
        results = list(cls.IRDL_RESULTS)
        attrs = []
    attrs += list(cls.IRDL_ATTRS.items())
    return groups, results, attrs


def _operation(cls: type[OpView]) -> str:
    groups, results, attrs = _signature(cls)
    out = [_comment(cls), f"  irdl.operation @{cls.NAME[len('coll.'):]} {{\n"]
    # One variable per group, result and attribute: an IRDL variable binds
    # one type (or attribute value) wherever it is used.
    names = {}
    for name, base, _ in groups + results:
        names[name] = f"%{name}"
        out.append(f"    %{name} = {BASES[base]}\n")
    attr_vars = []
    for a, base in attrs:
        if base == "kind":  # the kinds table, written once: one irdl.is each
            for k in KINDS:
                out.append(f'    %{k} = irdl.is "{k}"\n')
            out.append(f"    %{a} = irdl.any_of({', '.join('%' + k for k in KINDS)})\n")
        else:
            out.append(f"    %{a} = {BASES[base]}\n")
        attr_vars.append((a, f"%{a}"))
    if groups:
        out.append("    irdl.operands(" + ", ".join(
            f"{n}: {'variadic ' if v else ''}{names[n]}" for n, _, v in groups) + ")\n")
    if results:
        out.append("    irdl.results(" + ", ".join(
            f"{n}: {'variadic ' if v else ''}{names[n]}" for n, _, v in results) + ")\n")
    if attr_vars:
        out.append("    irdl.attributes {" + ", ".join(f'"{a}" = {v}' for a, v in attr_vars) + "}\n")
    out.append("  }\n")
    return "".join(out)


def generate() -> str:
    """The text of ir/coll.irdl.mlir."""
    explicit = [cls for name, cls in OPS.items() if not issubclass(cls, CollectiveOp)]
    body = [_operation(cls) for cls in list(COLLECTIVES) + explicit]
    return HEADER + "\n" + "\n".join(body) + "}\n"


if __name__ == "__main__":
    print(generate(), end="")
