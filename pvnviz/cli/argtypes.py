"""Command-line arguments that fail in one line: the parser and number types of ``python -m pvnviz`` and its benchmarks.

A leaf module (only ``argparse``): the CLI (``pvnviz.cli.main``) and every benchmark (``pvnviz.bench.*``) use it,
so bad input anywhere ends with one line on stderr naming the flag, and exit status 2.
"""

from __future__ import annotations

import argparse

MAX_SEED = 2**63 - 1  # numpy's SeedSequence takes any non-negative int; keep seeds in one int64


class OneLineParser(argparse.ArgumentParser):
    """An argument parser whose errors are one line on stderr and exit status 2 (no usage block)."""

    def error(self, message: str):  # type: ignore[override]
        self.exit(2, f"{self.prog}: error: {message} (see `{self.prog} --help`)\n")


def _whole(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None


def positive_int(text: str) -> int:
    """An ``argparse`` type: a whole number of at least 1."""
    value = _whole(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def non_negative_int(text: str) -> int:
    """An ``argparse`` type for seeds: a whole number from 0 to 2**63 - 1."""
    value = _whole(text)
    if not 0 <= value <= MAX_SEED:
        raise argparse.ArgumentTypeError(f"must be between 0 and 2**63 - 1, got {value}")
    return value
