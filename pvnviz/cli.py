"""Headless runs of the paper's experiments (Section 6) from the command line.

    python -m pvnviz run polytope --seed 0 --out runs/polytope
    python -m pvnviz run cartpole --preset paper --seed 0 --out runs/cartpole --set horizon=200

Each run writes ``config.json`` and ``summary.json`` (see ``pvnviz.runs``) plus the
experiment's arrays and a ``manifest.json``, with terminal progress bars on stderr. A run is
written beside ``--out`` and moved into place only when whole; an existing run is replaced
only with ``--overwrite``. ``python -m pvnviz manifest DIR`` checks an older run by opening it
and gives it a manifest. Bad input prints one line on stderr and exits with status 2.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pvnviz import collect_run
from pvnviz.configs import ConfigError, apply_overrides
from pvnviz.progress import TerminalProgress
from pvnviz.runs import MANIFEST, RunError, begin_run, check_manifest, publish, write_manifest, write_run


@dataclass(frozen=True)
class Experiment:
    """How the CLI builds, runs and saves one experiment."""

    config_cls: type
    presets: dict[str, Callable[[], Any]]
    run: Callable[..., Any]  # (config, seed, on_progress) -> result with .summary()
    save: Callable[[Any, str], None] | None = None  # (result, out_dir): extra files


def _polytope() -> Experiment:
    from pvnviz.polytope import PolytopeConfig, run_polytope

    return Experiment(PolytopeConfig, {"paper": PolytopeConfig}, run_polytope)


def _environment(name: str) -> Callable[[], Experiment]:
    def factory() -> Experiment:
        from pvnviz.experiment import PRESETS, ExperimentConfig, run_experiment, save_result

        return Experiment(ExperimentConfig, PRESETS[name], run_experiment, save_result)

    return factory


EXPERIMENTS: dict[str, Callable[[], Experiment]] = {
    "polytope": _polytope,
    "cartpole": _environment("cartpole"),
    "swimmer": _environment("swimmer"),
}


def register(name: str, factory: Callable[[], Experiment]) -> None:
    """Add an experiment to the CLI (imported lazily when run)."""
    EXPERIMENTS[name] = factory


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m pvnviz", description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="run one experiment headless and save it")
    run.add_argument("experiment", help=f"one of: {', '.join(EXPERIMENTS)}")
    run.add_argument("--preset", default="paper", help="settings preset (default: paper)")
    run.add_argument("--seed", type=int, default=0, help="random seed (default: 0)")
    run.add_argument("--out", required=True, help="folder to write the run into")
    run.add_argument(
        "--set",
        dest="overrides",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override one setting; repeatable (see `python -m pvnviz settings NAME`)",
    )
    run.add_argument("--quiet", action="store_true", help="no progress bars")
    run.add_argument("--overwrite", action="store_true", help="replace the run already in --out (else: refused)")
    collect_run.add_arguments(run)
    settings = sub.add_parser("settings", help="list an experiment's settings and help texts")
    settings.add_argument("experiment")
    manifest = sub.add_parser("manifest", help="check an older run folder by opening it, then write its manifest")
    manifest.add_argument("folder")
    return parser


def _experiment(name: str) -> Experiment:
    if name not in EXPERIMENTS:
        raise ConfigError(f"unknown experiment {name!r}; choose one of: {', '.join(EXPERIMENTS)}.")
    return EXPERIMENTS[name]()


def _fail(message: str) -> int:
    print(f"error: {message}", file=sys.stderr)
    return 2


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``python -m pvnviz``; returns the exit status."""
    args = _parser().parse_args(argv)
    if args.command == "manifest":
        return _manifest(args.folder)
    try:
        experiment = _experiment(args.experiment)
        if args.command == "settings":
            config = next(iter(experiment.presets.values()))()
            for f in dataclasses.fields(config):
                print(f"{f.name} = {json.dumps(getattr(config, f.name))}  # {f.metadata.get('help', '')}")
            return 0
        if args.preset not in experiment.presets:
            raise ConfigError(
                f"unknown preset {args.preset!r} for {args.experiment}; choose one of: {', '.join(experiment.presets)}."
            )
        config = apply_overrides(experiment.presets[args.preset](), args.overrides)
        if getattr(config, "env", args.experiment) != args.experiment:
            raise ConfigError(f"env is fixed by the experiment name: run `{config.env}` instead of --set env=...")
        collect_run.check_arguments(args, config)
        staging = begin_run(args.out, args.overwrite)  # fail before the long work, not after it
        progress = (lambda done, total, info: None) if args.quiet else TerminalProgress()
        extra, cleanup = {}, None
        if collect_run.collects(config):  # Algorithm 1 in chunks, locally or on Ray, resumable
            extra["dataset"], cleanup = collect_run.collect_for_cli(args, config, args.quiet)
        result = experiment.run(config, args.seed, progress, **extra)
        summary = result.summary()
        if experiment.save is not None:
            experiment.save(result, str(staging))
        write_run(staging, args.experiment, args.seed, config, summary)  # manifest.json last
        publish(staging, args.out)
        if cleanup is not None:
            cleanup()  # the run is in place, its dataset.npz holds the chunks: a kill before here can still resume
    except (ConfigError, RunError, ValueError) as err:
        return _fail(str(err))
    print(json.dumps(summary, indent=2))
    if cleanup is not None:
        print(collect_run.open_hint(args.experiment, args.out), file=sys.stderr)
    return 0


def _manifest(folder: str) -> int:
    """``python -m pvnviz manifest DIR``: open an older run (arrays and networks too), then write its manifest."""
    from pathlib import Path

    path = Path(folder)
    try:
        if (path / MANIFEST).is_file():
            check_manifest(path)
            print(f"{folder}: {MANIFEST} already checks out.", file=sys.stderr)
            return 0
        try:
            meta = json.loads((path / "config.json").read_text())
            json.loads((path / "summary.json").read_text())
            name = meta["experiment"]
        except (OSError, ValueError, TypeError, KeyError) as err:
            raise RunError(f"{folder} is not a run ({type(err).__name__}: {err}).") from None
        write_manifest(path)
        try:
            if name in ("cartpole", "swimmer"):
                from pvnviz.experiment import load_result

                load_result(path, name)  # every array and network opens: only then the manifest stays
        except BaseException:
            (path / MANIFEST).unlink(missing_ok=True)
            raise
    except (RunError, OSError) as err:
        return _fail(str(err))
    print(f"{folder}: a {name} run; wrote {MANIFEST}.", file=sys.stderr)
    return 0
