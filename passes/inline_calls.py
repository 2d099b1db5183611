"""coll-inline-aliased-calls: inlines a call to a function that holds coll
ops where the call's buffers may alias: one buffer (or views of one) as
two arguments, a global the callee also names, or a buffer whose origin
is not known. A collective's checks (the verifier's placement and overlap
rules, coll-check-order, coll-check-semantics) and its lowering hold
within its function, where distinct arguments are distinct buffers:
overlapping views passed into a callee computed wrong sums that every
check took for ok (an outside attack, 2026-12-07), and one buffer as a
collective's input and output ran as if out of place (ring: FAIL).
Inlined, the callee's ops see the caller's views and are verified as if
written there; the verifier runs again on what this made (a partial
overlap is refused, an in-place collective is one). Calls whose buffers
are distinct are left as they are; a private callee no call names any
more is erased.

A call_indirect of a func.constant naming such a function becomes a
func.call first (what upstream's canonicalizer does). Ours, not upstream's
`inline`: that one leaves coll's ops (an IRDL dialect with no inliner
interface, LLVM 22). A callee of several blocks, a recursion, or a
call_indirect whose callee is a function value that flows on (through
arith.select, scf.if, an argument) and may be one of these is refused at
the call, where the buffers may alias.
"""
from collections.abc import Iterable
from typing import NoReturn

from mlir import ir
from mlir.dialects import func

from ..analysis.effects import ROOT_OPS
from ..core.errors import PassError
from ..core.registry import register
from ..ir.verifier import verify
from ..ir.views import defining_op, root_key, root_of
from ..ir.walk import OpIndex, clone_remapped, is_public

CALLS = ("func.call", "func.call_indirect")


def _name(f: ir.Operation) -> str:
    return ir.StringAttr(f.attributes["sym_name"]).value


def _enclosing_function(op: ir.Operation) -> ir.Operation | None:
    at = op.parent
    while at is not None and at.name != "func.func":
        at = at.parent
    return at


class Calls:
    """What the calls of a module reach, from one walk (an OpIndex):
    which functions hold coll ops (themselves or through calls) and which
    globals each names."""

    def __init__(self, index: OpIndex) -> None:
        self.functions = {_name(f): f for f in index.find("func.func")}
        own: dict[str, bool] = {}
        self.globals: dict[str, set[str]] = {}
        callees: dict[str, set[str]] = {}
        for op in index.ops:
            f = _enclosing_function(op)
            if f is None:
                continue
            name = _name(f)
            if op.name.startswith("coll."):
                own[name] = True
            elif op.name == "memref.get_global":
                self.globals.setdefault(name, set()).add(ir.FlatSymbolRefAttr(op.attributes["name"]).value)
            elif op.name in ("func.call", "func.constant"):
                attr = "callee" if op.name == "func.call" else "value"
                callees.setdefault(name, set()).add(ir.FlatSymbolRefAttr(op.attributes[attr]).value)
        self.calls = index.find(lambda n: n in CALLS)
        # A call_indirect of a function value that flows on (arith.select,
        # scf.if, an argument) may run any function whose func.constant
        # flows on so: the holders among them are `escaping`.
        unknown = {_name(g) for call in self.calls if call.name == "func.call_indirect"
                   and self.target(call) is None and (g := _enclosing_function(call)) is not None}
        constants = index.find("func.constant")
        self.holders, self.escaping = set(own), set[str]()
        while True:
            self._close(callees)
            self.escaping = {n for const in constants
                             if (n := ir.FlatSymbolRefAttr(const.attributes["value"]).value) in self.holders
                             and any(u.owner.operation.name != "func.call_indirect" or u.operand_number != 0
                                     for u in const.results[0].uses)}
            if all(self.escaping <= callees.get(u, set()) for u in unknown):
                break
            for u in unknown:
                callees.setdefault(u, set()).update(self.escaping)

    def _close(self, callees: dict[str, set[str]]) -> None:
        """What calls a holder holds coll ops; what it calls, it names the
        globals of."""
        changed = True
        while changed:
            changed = False
            for caller, cs in callees.items():
                if caller not in self.holders and cs & self.holders:
                    self.holders.add(caller)
                    changed = True
                for c in cs:
                    more = self.globals.get(c, set()) - self.globals.get(caller, set())
                    if more:
                        self.globals.setdefault(caller, set()).update(more)
                        changed = True

    def target(self, call: ir.Operation) -> str | None:
        """The function a call (or a call_indirect of a func.constant) runs."""
        if call.name == "func.call":
            return ir.FlatSymbolRefAttr(call.attributes["callee"]).value
        const = defining_op(call.operands[0])
        if const is not None and const.name == "func.constant":
            return ir.FlatSymbolRefAttr(const.attributes["value"]).value
        return None

    def unfollowed(self) -> list[ir.Operation]:
        """The call_indirects whose callee is not known, that may run a
        holder, on buffers that may alias: they cannot be inlined."""
        some = set().union(*(self.globals.get(n, set()) for n in self.escaping)) if self.escaping else set()
        return [call for call in self.calls if call.name == "func.call_indirect" and self.escaping
                and self.target(call) is None and _may_alias(list(call.operands)[1:], some)]

    def aliased(self) -> list[tuple[ir.Operation, ir.Operation]]:
        """[(call, callee)] for each call of a holder whose buffers may alias."""
        out = []
        for call in self.calls:
            name = self.target(call)
            callee = self.functions.get(name) if name is not None else None
            if callee is None or name not in self.holders or not len(callee.regions[0].blocks):
                continue
            args = list(call.operands)[1:] if call.name == "func.call_indirect" else list(call.operands)
            if _may_alias(args, self.globals.get(name, set())):
                out.append((call, callee))
        return out


def _origin(v: ir.Value) -> object:
    """What tells buffers apart (ir/views.py root_key): the root value (an
    argument of a function's entry block, an allocation), a global's name,
    or None (not known: may alias anything)."""
    root = root_of(v)[0]
    if isinstance(root, ir.BlockArgument):
        block = ir.BlockArgument(root).owner
        owner = block.owner
        entry = owner is not None and owner.operation.name == "func.func" and block == owner.regions[0].blocks[0]
        return root if entry else None
    return root_key(root) if root.owner.operation.name in ROOT_OPS else None


def _may_alias(args: Iterable[ir.Value], callee_globals: set[str]) -> bool:
    origins = [_origin(v) for v in args if isinstance(v.type, ir.MemRefType)]
    if any(o is None for o in origins):
        return len(origins) > 1 or bool(callee_globals)
    named = {"@" + g for g in callee_globals}
    return len(set(origins)) < len(origins) or any(o in named for o in origins)


def _direct(call: ir.Operation, name: str) -> ir.Operation:
    """A func.call in place of a call_indirect of func.constant @name."""
    with ir.InsertionPoint(call), call.location:
        new = func.CallOp([r.type for r in call.results], ir.FlatSymbolRefAttr.get(name),
                          list(call.operands)[1:]).operation
    for old, res in zip(call.results, new.results):
        old.replace_all_uses_with(res)
    const = call.operands[0].owner
    call.erase()
    if not list(const.results[0].uses):
        const.erase()
    return new


def _inline(call: ir.Operation, callee: ir.Operation) -> None:
    """The callee's body in place of `call`, on the call's operands; the
    cloned ops located at callsite(their place in the callee, the call)."""
    if len(callee.regions[0].blocks) != 1:
        raise PassError(f"the call's buffers may alias and '@{_name(callee)}' holds coll ops: it is inlined to "
                        "check them, but its body has several blocks; expected one block, or distinct buffers",
                        call.location, [(callee.location, f"@{_name(callee)} is here")])
    body = callee.regions[0].blocks[0]
    mapping: dict[ir.Value, ir.Value] = dict(zip(body.arguments, call.operands))
    ip = ir.InsertionPoint(call)
    results: list[ir.Value] = []
    for op in list(body.operations):  # (listed first: a recursive callee is the caller)
        if op.operation.name == "func.return":
            results = [mapping.get(v, v) for v in op.operands]
            break
        new = clone_remapped(op.operation, ip, mapping)
        new.location = ir.Location.callsite(op.location, [call.location])
    for old, res in zip(call.results, results):
        old.replace_all_uses_with(res)
    call.erase()


def _recursion(call: ir.Operation, callee: ir.Operation, how: str) -> NoReturn:
    raise PassError(f"the call's buffers may alias and '@{_name(callee)}' holds coll ops, but it cannot be "
                    f"inlined to check them: {how} (a recursion); expected distinct buffers",
                    call.location, [(callee.location, f"@{_name(callee)} is here")])


def _erase_unused(names: set[str], module_op: ir.Operation) -> None:
    """Erases the private functions among `names` that nothing names any
    more (as upstream's inliner erases a callee it inlined everywhere),
    callers first (a callee may be named by a caller erased here)."""
    while True:
        index = OpIndex(module_op)
        named = {ir.FlatSymbolRefAttr(op.attributes["callee" if op.name == "func.call" else "value"]).value
                 for op in index.find(lambda n: n in ("func.call", "func.constant"))}
        dead = [f for f in index.find("func.func") if _name(f) in names - named and not is_public(f)]
        if not dead:
            return
        for f in dead:
            f.erase()


@register("coll-inline-aliased-calls",
          "Inline calls to functions holding coll ops whose buffer arguments may alias, and verify the result",
          anchor="builtin.module")
def inline_aliased_calls(module_op: ir.Operation) -> None:
    inlined: list[tuple[ir.Location, str, ir.Location]] = []
    rounds = len(Calls(OpIndex(module_op)).functions) + 1  # (a chain of calls is inlined one level a round)
    for _ in range(rounds):
        found = Calls(OpIndex(module_op))
        for call in found.unfollowed():
            names = ", ".join(f"'@{n}'" for n in sorted(found.escaping))
            raise PassError(f"the call's buffers may alias and it may run a function holding coll ops ({names}) "
                            "through a function value this pass cannot follow (a func.constant that flows through "
                            "arith.select, scf.if or an argument); expected func.call, or call_indirect of a "
                            "func.constant", call.location)
        calls = found.aliased()
        if not calls:
            break
        for call, callee in calls:
            if _enclosing_function(call) == callee:
                _recursion(call, callee, "it calls itself")
            if call.name == "func.call_indirect":
                call = _direct(call, _name(callee))
            inlined.append((call.location, _name(callee), callee.location))
            _inline(call, callee)
    else:
        left = Calls(OpIndex(module_op)).aliased()
        if left:
            _recursion(*left[0], f"inlining did not end in {rounds} rounds")
    if not inlined:
        return
    _erase_unused({name for _, name, _ in inlined}, module_op)
    # (core/pipeline.py verifies after every pass too; here, to note the calls)
    findings = verify(module_op)
    if findings:
        notes = [(loc, f"'@{name}' inlined here, its arguments' buffers may alias") for loc, name, _ in inlined]
        raise PassError(findings[0][1], findings[0][0], notes,
                        findings=[(loc, msg, notes) for loc, msg in findings])


def may_need(index: OpIndex) -> bool:
    """Whether a module (its OpIndex) has a call for coll-inline-aliased-calls
    to inline: what the lowering driver asks before adding it to the route."""
    if not index.find(lambda n: n in CALLS):
        return False
    calls = Calls(index)
    return bool(calls.aliased() or calls.unfollowed())
