"""Command-line arguments that fail in one line: the parser and number types of ``python -m pvnviz`` and its benchmarks.

A leaf module (only ``argparse``): the CLI (``pvnviz.cli.main``) and every benchmark (``pvnviz.bench.*``) use it,
so bad input anywhere ends with one line on stderr naming the flag, and exit status 2.
"""

from __future__ import annotations

import argparse

MAX_SEED = 2**63 - 1  # numpy's SeedSequence takes any non-negative int; keep seeds in one int64


SHOWN_CHARS = 40  # how much of a refused value an error line repeats
MAX_DIGITS = 30  # a whole number of more digits is named too big without being parsed


def shown(text: str) -> str:
    """``text`` as an error line repeats it: its repr, cut to ``SHOWN_CHARS`` with its full length named."""
    quoted = repr(text)
    return quoted if len(quoted) <= SHOWN_CHARS else f"{quoted[:SHOWN_CHARS]}... ({len(text)} characters)"


def _cut_words(message: str) -> str:
    """``message`` with every word longer than twice ``SHOWN_CHARS`` cut (argparse repeats refused values whole)."""
    words = message.split(" ")
    return " ".join(w if len(w) <= 2 * SHOWN_CHARS else f"{w[:SHOWN_CHARS]}... ({len(w)} characters)" for w in words)


class OneLineParser(argparse.ArgumentParser):
    """An argument parser whose errors are one line on stderr and exit status 2 (no usage block)."""

    def error(self, message: str):  # type: ignore[override]
        self.exit(2, f"{self.prog}: error: {_cut_words(message)} (see `{self.prog} --help`)\n")


def _whole(text: str) -> int:
    digits = text.strip().lstrip("+-").replace("_", "")
    if digits.isdecimal() and len(digits) > MAX_DIGITS:
        sign = "small" if text.strip().startswith("-") else "big"
        raise argparse.ArgumentTypeError(f"too {sign}: a whole number of {len(digits)} digits, {shown(text)}")
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {shown(text)}") from None


def whole_number(text: str) -> int:
    """An ``argparse`` type: any whole number (its range checked later), named too big past ``MAX_DIGITS``."""
    return _whole(text)


def positive_int(text: str) -> int:
    """An ``argparse`` type: a whole number of at least 1."""
    value = _whole(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def non_negative_int(text: str) -> int:
    """An ``argparse`` type for seeds: a whole number from 0 to 2**63 - 1."""
    value = _whole(text)
    if value > MAX_SEED:
        raise argparse.ArgumentTypeError(f"too big: the largest is 2**63 - 1, got {shown(str(value))}")
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, got {shown(str(value))}")
    return value
