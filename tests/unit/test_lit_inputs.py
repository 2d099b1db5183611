"""The lit tests' stored coll-gen outputs (tests/lit/*/Inputs/gen, written by
tests/lit/gen_inputs.py from the tests' GEN lines) are what coll-gen makes
now, and every RUN line that reads one names a GEN line of its own test."""
import re
import sys
from pathlib import Path

import pytest

LIT = Path(__file__).resolve().parents[1] / "lit"
sys.path.insert(0, str(LIT))
import gen_inputs  # noqa: E402


def test_stored_inputs_are_current():
    problems = gen_inputs.stale()
    assert not problems, "run `python tests/lit/gen_inputs.py`:\n" + "\n".join(
        f"{p.relative_to(LIT)}: {why}" for p, why in problems)


def test_every_stored_input_read_has_its_gen_line():
    made = {(test, p.name) for p, (test, _, _) in gen_inputs.specs().items()}
    read = 0
    for test in LIT.rglob("*.mlir"):
        if "Inputs" in test.parts or "Output" in test.parts:  # (Output: what lit's runs wrote)
            continue
        for name in re.findall(r"%S/Inputs/gen/([\w.-]+\.mlir)", test.read_text()):
            assert name.startswith(test.stem + ".") and (test, name) in made, f"{test.name} reads {name}"
            read += 1
    assert read > 100


def test_a_changed_generator_is_caught(tmp_path):
    """The check fails on a stored input that differs, one without a GEN
    line, and a GEN line without its input."""
    (tmp_path / "t.mlir").write_text("// GEN: a = coll-gen all-reduce --devices 2 --shape 4\n"
                                     "// GEN: b = coll-gen all-reduce --devices 3 --shape 4\n")
    gen = tmp_path / "Inputs" / "gen"
    gen.mkdir(parents=True)
    (gen / "t.a.mlir").write_text(gen_inputs.generate(["all-reduce", "--devices", "2", "--shape", "5"]))
    (gen / "t.c.mlir").write_text("")
    why = {p.name: w for p, w in gen_inputs.stale(tmp_path)}
    assert set(why) == {"t.a.mlir", "t.b.mlir", "t.c.mlir"}
    assert "differs" in why["t.a.mlir"] and "missing" in why["t.b.mlir"] and "no GEN line" in why["t.c.mlir"]
    gen_inputs.write(tmp_path)
    assert gen_inputs.stale(tmp_path) == [] and not (gen / "t.c.mlir").exists()
    with pytest.raises(ValueError, match="coll-gen all-reduce --devices 0 failed"):
        gen_inputs.generate(["all-reduce", "--devices", "0"])
