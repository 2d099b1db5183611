"""Inputs that crash the upstream MLIR parser (an assertion, so the whole
process aborts) are caught before parsing, as located errors.

Each entry was found by tools/fuzz.py against the LLVM 22 wheels, which are
built with assertions.
"""
import re

# (pattern, message). The error points at the start of the match.
KNOWN_CRASHES = [
    # DenseArrayAttr::parse calls getIntOrFloatBitWidth() on `index`.
    (re.compile(r"array\s*<\s*index\b"),
     "dense arrays of 'index' elements are not supported (they crash the MLIR parser); "
     "use i64"),
    # The lexer reports "@ identifier expected..." for a lone `@` but, where
    # an op is expected after a !coll.token value, parsing still succeeds:
    # the Python bindings then abort on the unhandled error (ErrorCapture).
    (re.compile(r"@(?=\s)"),
     "expected a symbol name after '@' (a lone '@' crashes the MLIR Python bindings)"),
]


def known_crashes(text):
    """[(line, col, message)] for every known parser crash in `text`."""
    out = []
    for pattern, message in KNOWN_CRASHES:
        for m in pattern.finditer(text):
            start = text.rfind("\n", 0, m.start()) + 1
            before = text[start:m.start()]
            if "//" in before or before.count('"') % 2:
                continue  # in a comment or a string
            out.append((text.count("\n", 0, m.start()) + 1, m.start() - start + 1, message))
    return out
