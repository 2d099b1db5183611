"""Argument types for the command lines of the bench scripts and the
fuzzer (argparse `type=`): a value out of range is a usage error that names
the argument (exit 1 with coll.tools.cl.ArgumentParser), before anything is
measured, never a traceback or an empty run that looks clean.

    p.add_argument("--n", type=count(1, MAX_DEVICES), nargs="+")
    p.add_argument("--timeout", type=seconds())
"""
import argparse
import math
import os
from collections.abc import Callable

SEED_MAX = 2 ** 63 - 1  # numpy's generators take a non-negative seed below 2^63


def count(lo: int = 1, hi: int | None = None) -> Callable[[str], int]:
    """An integer in lo..hi (hi None: no upper bound)."""
    def parse(text: str) -> int:
        try:
            value = int(text, 10)
        except (TypeError, ValueError):
            raise argparse.ArgumentTypeError(f"'{text}' is not an integer") from None
        if value < lo or (hi is not None and value > hi):
            raise argparse.ArgumentTypeError(f"{value} is out of range; expected {lo}..{'' if hi is None else hi}")
        return value
    parse.__name__ = "count"  # argparse names the type in its message
    return parse


def seed() -> Callable[[str], int]:
    """A seed for numpy's generators: 0..2^63-1."""
    return count(0, SEED_MAX)


def _number(text: str) -> float:
    try:
        return float(text)
    except (TypeError, ValueError):
        raise argparse.ArgumentTypeError(f"'{text}' is not a number") from None


def seconds(hi: float = 7 * 24 * 3600, zero: bool = False) -> Callable[[str], float]:
    """A finite number of seconds, > 0 (>= 0 with `zero`) and at most `hi`."""
    def parse(text: str) -> float:
        value = _number(text)
        if not math.isfinite(value) or not (0 <= value if zero else 0 < value) or value > hi:
            raise argparse.ArgumentTypeError(f"{text} is out of range; expected seconds {'>=' if zero else '>'} 0 "
                                             f"and at most {hi:g}")
        return value
    parse.__name__ = "seconds"
    return parse


def fraction() -> Callable[[str], float]:
    """A finite number in (0, 1]."""
    def parse(text: str) -> float:
        value = _number(text)
        if not (math.isfinite(value) and 0 < value <= 1):
            raise argparse.ArgumentTypeError(f"{text} is out of range; expected a fraction in (0, 1]")
        return value
    parse.__name__ = "fraction"
    return parse


def mebibytes(hi: float) -> Callable[[str], float]:
    """A size in MiB, fractions too: finite, > 0 and at most `hi`."""
    def parse(text: str) -> float:
        value = _number(text)
        if not (math.isfinite(value) and 0 < value <= hi):
            raise argparse.ArgumentTypeError(f"{text} is out of range; expected MiB in (0, {hi:g}]")
        return value
    parse.__name__ = "mebibytes"
    return parse


def counts(lo: int = 1, hi: int | None = None) -> Callable[[str], list[int]]:
    """Integers in lo..hi, written `A..B` (A <= B) or as a comma list:
    a list of at least one."""
    one = count(lo, hi)

    def parse(text: str) -> list[int]:
        if ".." in text:
            a, _, b = text.partition("..")
            first, last = one(a), one(b)
            if first > last:
                raise argparse.ArgumentTypeError(f"'{text}' is an empty range; expected A..B with A <= B")
            return list(range(first, last + 1))
        return [one(x) for x in text.split(",")]
    parse.__name__ = "counts"
    return parse


def checkout(*needs: str) -> Callable[[str], str]:
    """A folder holding a coll checkout (its __init__.py and
    collectives/__init__.py), plus the files `needs` (paths inside it)
    that the script runs there: an empty or mistyped path would otherwise
    be measured as a checkout that failed, or silently as none."""
    def parse(text: str) -> str:
        if not os.path.isdir(text):
            raise argparse.ArgumentTypeError(f"'{text}' is not a folder; expected a coll checkout")
        for need in ("__init__.py", os.path.join("collectives", "__init__.py"), *needs):
            if not os.path.isfile(os.path.join(text, need)):
                raise argparse.ArgumentTypeError(f"'{text}' is not a coll checkout: it has no {need}")
        return text
    parse.__name__ = "checkout"
    return parse


def output_path() -> Callable[[str], str]:
    """A path a result file can be written to (its folder exists and is
    writable): refused before anything is measured, not after."""
    def parse(text: str) -> str:
        # Here, not at the top: the cost model (~8 ms measured) only for scripts that write results.
        from ..analysis.cost_model import output_path_error
        why = output_path_error(text)
        if why:
            raise argparse.ArgumentTypeError(why)
        return text
    parse.__name__ = "output path"
    return parse
