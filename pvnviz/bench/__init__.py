"""Benchmarks: ``python -m pvnviz.bench polytope|cartpole|swimmer|envs|ray|ui|load|redraw|upload|all``.

Every benchmark times our code and a baseline in the same process and prints the
measurements and their ratio (a goal, where there is one, is printed as a number next to
the measurement; nothing here passes or fails). One module per benchmark:

* ``core``: Section 6.1's exact view and PVN training, and Section 6.2's CartPole collector
  against a gymnasium loop (with the whole Paper pipeline's time);
* ``swimmer``: Section 6.3's Swimmer collector against gymnasium and the MuJoCo physics limit,
  and the ``mujoco.rollout`` engine kept for comparison;
* ``envs``: Algorithm 1's collector on any gymnasium environment (``gym:ID``), each family's batched step and the
  generic vector path against gymnasium's own ``make_vec`` with the same policies, one row per environment;
* ``ray``: Algorithm 1 (Appendix C) locally and on a local Ray cluster;
* ``ui``, ``load``, ``redraw`` and ``upload`` are the app's, in Chromium: they live outside the compute package, in the
  top-level package ``browserbench`` (with its harness, ``browserbench.browser``, which the browser tests share),
  and run from the repository's root: ``ui`` the pages' input-to-redraw, playback and first-open times; ``load``
  N Chromium sessions pressing Run at once on one server (the job queue and its workers); ``redraw`` plotly.js
  redraws in the browser after an ``input`` event (the plotly components, ui/components.py); ``upload`` the server's
  memory through an upload over the app's cap. This command runs
  them as the program ``python -m browserbench`` in a child process: ``pvnviz`` never imports ``browserbench``
  (which imports ``pvnviz``).

Bad numbers on the command line print one line on stderr and exit with status 2.
"""

from __future__ import annotations

import argparse
import importlib.util
import subprocess
import sys

from pvnviz.cli.argtypes import OneLineParser, non_negative_int

BENCHMARKS = ("polytope", "cartpole", "swimmer", "envs", "ray", "ui", "load", "redraw", "upload", "all")


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``python -m pvnviz.bench``; returns the exit status."""
    parser = OneLineParser(prog="python -m pvnviz.bench", description=__doc__.splitlines()[0])
    parser.add_argument("which", choices=BENCHMARKS)
    parser.add_argument("--seed", type=non_negative_int, default=0)
    parser.add_argument("--no-pipeline", action="store_true", help="CartPole: skip timing the Paper pipeline")
    args, rest = parser.parse_known_args(argv)
    try:
        return _run(args, rest)
    except ValueError as error:  # ConfigError, CollectError and the rollout checks: what to change
        print(f"python -m pvnviz.bench {args.which}: error: {error}", file=sys.stderr)
        return 2


def _browser_benchmark(which: str, rest: list[str]) -> int:
    """``ui``, ``load``, ``redraw`` or ``upload`` (not in "all": each starts a server and Chromium):
    ``python -m browserbench`` in a child process, its exit status returned (2 for bad input, its one line on
    stderr)."""
    if importlib.util.find_spec("browserbench") is None:  # found, not imported
        where = "run it from the repository's root, where browserbench/ is"
        print(f"python -m pvnviz.bench {which}: error: {where}", file=sys.stderr)
        return 2
    return subprocess.call([sys.executable, "-m", "browserbench", which, *rest])


def _run(args: argparse.Namespace, rest: list[str]) -> int:
    if args.which in ("ui", "load", "redraw", "upload"):
        return _browser_benchmark(args.which, rest)
    if args.which == "envs":  # not in "all": a dozen environments, minutes
        from pvnviz.bench import envs

        return envs.main(rest)
    if args.which == "ray":  # not in "all": it starts Ray clusters
        from pvnviz.bench import ray

        return ray.main(rest)
    swimmer_args = None
    if args.which in ("swimmer", "all"):  # parsed first: a bad number stops before any benchmark runs
        from pvnviz.bench import swimmer

        swimmer_args = swimmer.parse_args([*rest, "--seed", str(args.seed)])
    elif rest:
        OneLineParser(prog=f"python -m pvnviz.bench {args.which}").error(f"unrecognized arguments: {' '.join(rest)}")
    from pvnviz.bench import core

    if args.which in ("polytope", "all"):
        print(core.format_polytope(core.bench_polytope()), flush=True)
    if args.which in ("cartpole", "all"):
        print(core.format_cartpole(core.bench_cartpole(seed=args.seed, pipeline=not args.no_pipeline)), flush=True)
    if swimmer_args is not None:
        swimmer.run(swimmer_args)
    return 0
