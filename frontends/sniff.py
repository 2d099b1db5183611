"""Which frontend reads an input itself, told from its bytes before any
parse: coll's parser cannot read StableHLO's dialects, so a tool hands such
input to the frontend's own `parse`. Light on purpose (only `re`): a tool
asks this for every input, and the frontends load only when one claims it
(frontends/__init__.py)."""
import re

BYTECODE_MAGIC = b"ML\xefR"  # MLIR bytecode's first four bytes

# frontend NAME -> the pattern its input matches (generic or pretty form).
CLAIMS = {
    "stablehlo": re.compile(rb'"(?:sdy|stablehlo|mhlo|chlo)\.|^\s*(?:sdy|stablehlo|mhlo|chlo)\.'
                            rb'|mhlo\.num_partitions', re.M),
}


def claimed_by(data: bytes) -> str | None:
    """The NAME of the frontend whose pattern `data` matches, or None.
    Bytecode says nothing about its dialects here: None."""
    if data.startswith(BYTECODE_MAGIC):
        return None
    return next((name for name, pattern in CLAIMS.items() if pattern.search(data)), None)
