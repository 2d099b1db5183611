"""coll-opt's command line, chunk splitting and dump filter, as units."""
import pytest

from coll.tools.opt import cl
from coll.tools.opt.ir_print import filter_dumps
from coll.tools.source import split_chunks

OPTS = [cl.Option("o", cl.VALUE, default="-"), cl.Option("split-input-file", cl.OPTIONAL),
        cl.Option("emit-bytecode", cl.FLAG), cl.Option("mlir-print-ir-after", cl.LIST),
        cl.Option("mode", cl.VALUE, choices=("a", "b"))]


def test_one_or_two_dashes_are_the_same_flag():
    for argv in (["-emit-bytecode", "-o", "x"], ["--emit-bytecode", "--o=x"], ["-emit-bytecode=true", "-o=x"]):
        p = cl.parse(argv, OPTS)
        assert (p.values["emit-bytecode"], p.values["o"]) == (True, "x"), argv


def test_optional_value_only_after_equals():
    p = cl.parse(["--split-input-file", "in.mlir"], OPTS)
    assert (p.values["split-input-file"], p.positional) == ("", ["in.mlir"])
    assert cl.parse(["-split-input-file=// X"], OPTS).values["split-input-file"] == "// X"
    assert cl.parse([], OPTS).values["split-input-file"] is None


def test_lists_take_commas_and_repeats():
    p = cl.parse(["--mlir-print-ir-after=cse,canonicalize", "-mlir-print-ir-after", "coll-check-order"], OPTS)
    assert p.values["mlir-print-ir-after"] == ["cse", "canonicalize", "coll-check-order"]


def test_unknown_dashed_arguments_are_pass_candidates_in_order():
    p = cl.parse(["-cse", "--coll-lower-all-reduce=strategy=ring", "in.mlir"], OPTS)
    assert p.passes == [("-cse", "cse", None), ("--coll-lower-all-reduce=strategy=ring", "coll-lower-all-reduce", "strategy=ring")]


def test_stdin_and_double_dash_are_positional():
    assert cl.parse(["-"], OPTS).positional == ["-"]
    assert cl.parse(["--", "-weird.mlir"], OPTS).positional == ["-weird.mlir"]


@pytest.mark.parametrize("argv,message", [
    (["-o"], "for the -o option: requires a value!"),
    (["--emit-bytecode=maybe"], "for the --emit-bytecode option: 'maybe' is invalid value for boolean argument! Try 0 or 1"),
    (["--mode=c"], "for the --mode option: Cannot find option named 'c'!"),
    (["a.mlir", "b.mlir"], "Too many positional arguments specified!"),
])
def test_usage_errors_read_like_llvm(argv, message):
    with pytest.raises(cl.UsageError) as e:
        cl.parse(argv, OPTS)
    assert str(e.value).startswith(message)


def test_split_keeps_lines_and_columns_of_the_file():
    data = b"a\n// -----\nb\nx // -----  c\n"
    chunks, near = split_chunks(data, "// -----")
    assert near == []
    # Each chunk starts right after its marker (mid-line too), padded to it.
    assert [c for c, _ in chunks] == [b"a\n", b"\n" + b" " * 8 + b"\nb\nx ", b"\n\n\n" + b" " * 10 + b"  c\n"]
    assert [start for _, start in chunks] == [(1, 1), (2, 9), (4, 11)]


def test_split_near_miss_is_reported_not_split():
    chunks, near = split_chunks(b"a\n// ---\nb\n", "// -----")
    assert (len(chunks), near) == (1, [(2, 7)])


def test_split_never_cuts_bytecode():
    data = b"ML\xefR// -----xx"
    assert split_chunks(data, "// -----") == ([(data, (1, 1))], [])


def test_dump_filter_keeps_named_passes_and_reports():
    text = ("// -----// IR Dump After CSE (cse) //----- //\nA\n\n"
            "// -----// IR Dump After Canonicalizer (canonicalize) //----- //\nB\n\n"
            "// -----// IR Dump After CSE (cse) ('func.func' operation: @f) //----- //\nC\n"
            "===---===\n  ... Pass statistics report ...\n")
    out = filter_dumps(text, set(), {"cse"})
    assert "A" in out and "B" not in out and "C" in out and "statistics report" in out
    assert filter_dumps(text, set(), {"*"}) == text
