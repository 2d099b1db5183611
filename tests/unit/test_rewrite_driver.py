"""What the pattern sets of coll-lower-collectives, coll-to-cpu, coll-from-shard
and coll-ieee-minmax rely on in upstream's walk_and_apply_patterns (the
pinned 22.1.8 wheels; its source has changed between releases): ops are
visited in program order, post-order; a pattern may erase the op it visits;
ops a pattern puts before the visited op are not visited; an exception in a
pattern reaches the caller and stops the walk; a pattern that returns True
did not match."""
import pytest
from mlir import ir
from mlir.rewrite import RewritePatternSet, walk_and_apply_patterns

PROGRAM = """
func.func @f() {
  %0 = "t.a"() {i = 0} : () -> i32
  "t.r"() ({
    %1 = "t.a"() {i = 1} : () -> i32
    "t.y"() {i = 2} : () -> ()
  }) {i = 3} : () -> ()
  %2 = "t.a"() {i = 4} : () -> i32
  "t.b"(%0, %2) {i = 5} : (i32, i32) -> ()
  "t.c"() {i = 6} : () -> ()
  func.return
}"""


def _walk(on_a=None, on_b=None):
    ctx = ir.Context()
    ctx.allow_unregistered_dialects = True
    seen = []
    with ctx, ir.Location.unknown():
        m = ir.Module.parse(PROGRAM)

        def visit(op, rewriter):
            seen.append(op.attributes["i"].value if "i" in op.attributes else op.name)
            if op.name == "t.a" and on_a:
                on_a(op, rewriter)
            if op.name == "t.b" and on_b:
                on_b(op, rewriter)
            return None
        s = RewritePatternSet()
        for name in ("t.a", "t.b", "t.c", "t.r", "t.y", "t.new"):
            s.add(name, visit)
        try:
            walk_and_apply_patterns(m.operation, s.freeze())
        except ValueError as e:
            seen.append(str(e))
        return seen, str(m)


def test_program_order_post_order():
    seen, _ = _walk()
    assert seen == [0, 1, 2, 3, 4, 5, 6]


def test_erase_the_visited_op_and_new_ops_before_it_are_not_visited():
    def replace(op, rewriter):
        with ir.InsertionPoint(op):
            new = ir.Operation.create("t.new", results=[op.results[0].type])
        rewriter.replace_op(op, [new.results[0]])
    seen, text = _walk(on_a=replace)
    assert seen == [0, 1, 2, 3, 4, 5, 6]
    assert text.count('"t.new"') == 3 and '"t.a"' not in text


def test_an_exception_reaches_the_caller_and_stops_the_walk():
    def fail(op, rewriter):
        raise ValueError("from a pattern")
    seen, text = _walk(on_b=fail)
    assert seen == [0, 1, 2, 3, 4, 5, "from a pattern"]


def _decline(result):
    ctx = ir.Context()
    ctx.allow_unregistered_dialects = True
    with ctx, ir.Location.unknown():
        m = ir.Module.parse('"t.a"() : () -> ()')
        calls = []

        def decline(op, rewriter):
            calls.append(op.name)
            return result
        s = RewritePatternSet()
        s.add("t.a", decline)
        s.add("t.a", lambda op, rw: calls.append("second") or None, benefit=0)
        walk_and_apply_patterns(m.operation, s.freeze())
    return calls


def test_true_is_no_match_and_the_next_pattern_gets_its_turn():
    assert _decline(True) == ["t.a", "second"]
    assert _decline(None) == ["t.a"]


def test_only_a_bool_says_no_match():
    # The bindings' docstring says bool(value); 22.1.8 casts to bool strictly.
    with pytest.raises(RuntimeError, match="bad_cast"):
        _decline(1)
