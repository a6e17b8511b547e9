"""``python -m browserbench ui|load|redraw|upload``: the app's benchmarks in Chromium, run from the repository's root.

``python -m pvnviz.bench ui|load|redraw`` runs this program as a child process, so the benchmarks are listed in
one place while the compute package never imports ``browserbench``.
"""

from __future__ import annotations

import sys

from browserbench import load, redraw, ui, upload  # none imports Playwright before it runs
from pvnviz.cli.argtypes import OneLineParser

BENCHMARKS = {"ui": ui, "load": load, "redraw": redraw, "upload": upload}


def main(argv: list[str] | None = None) -> int:
    """Run one benchmark with the rest of the arguments (its own parser reads them); returns the exit status."""
    parser = OneLineParser(prog="python -m browserbench", description=__doc__.splitlines()[0])
    parser.add_argument("which", choices=list(BENCHMARKS))
    args, rest = parser.parse_known_args(sys.argv[1:] if argv is None else argv)
    return BENCHMARKS[args.which].main(rest)


if __name__ == "__main__":
    raise SystemExit(main())
