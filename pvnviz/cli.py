"""Headless runs of the paper's experiments (Section 6) from the command line.

    python -m pvnviz run polytope --seed 0 --out runs/polytope
    python -m pvnviz run cartpole --preset paper --seed 0 --out runs/cartpole --set horizon=200

Each run writes ``config.json`` and ``summary.json`` (see ``pvnviz.runs``) plus the
experiment's arrays and a ``manifest.json``, with terminal progress bars on stderr. A run is
written beside ``--out`` and moved into place only when whole; an existing run is replaced
only with ``--overwrite``. ``python -m pvnviz manifest DIR`` checks an older run by opening it
and gives it a manifest. Work is sized first (``pvnviz.sizing``): a run that needs more memory
than is free is refused before it starts.

Every ending is one line on stderr and a distinct exit status: 2 for bad input (the line says
what to change), 1 for a failure the line names (out of memory, a full disk, a diverging run),
130 for Ctrl-C (SIGINT) and 143 for SIGTERM. An interrupted or failed run leaves the previous
run in ``--out`` as it was.
"""

from __future__ import annotations

import argparse
import dataclasses
import errno
import functools
import json
import os
import signal
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pvnviz import collect_run
from pvnviz.argtypes import OneLineParser, non_negative_int
from pvnviz.configs import ConfigError, apply_overrides
from pvnviz.progress import TerminalProgress
from pvnviz.runs import MANIFEST, RunError, RunFailure, begin_run, check_manifest, publish, write_manifest, write_run
from pvnviz.sizing import check_memory


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
        from pvnviz.experiment import ExperimentConfig, run_experiment
        from pvnviz.presets import PRESETS
        from pvnviz.run_files import save_result

        return Experiment(ExperimentConfig, PRESETS[name], run_experiment, save_result)

    return factory


EXPERIMENTS: dict[str, Callable[[], Experiment]] = {"polytope": _polytope}  # and one per environment:


def _experiments() -> list[str]:
    """The polytope and every registered environment that has presets (``pvnviz.envs``, ``pvnviz.presets``)."""
    from pvnviz.envs import ENVIRONMENTS
    from pvnviz.presets import PRESETS

    return [*EXPERIMENTS, *(name for name in ENVIRONMENTS if name in PRESETS)]


def _parser() -> argparse.ArgumentParser:
    parser = OneLineParser(prog="python -m pvnviz", description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="run one experiment headless and save it")
    run.add_argument("experiment", help="polytope, cartpole or swimmer (any registered environment)")
    run.add_argument("--preset", default="paper", help="settings preset (default: paper)")
    run.add_argument("--seed", type=non_negative_int, default=0, help="random seed, 0 or more (default: 0)")
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
    names = _experiments()
    if name not in names:
        raise ConfigError(f"unknown experiment {name!r}; choose one of: {', '.join(names)}.")
    return EXPERIMENTS[name]() if name in EXPERIMENTS else _environment(name)()


def _fail(message: str, status: int = 2, progress: TerminalProgress | None = None) -> int:
    if progress is not None and progress.drawn:  # a bar may be cut mid-line: the ending starts on its own line
        progress.close()
        sys.stderr.write("\n")
    print(f"error: {message}", file=sys.stderr)
    return status


class Terminated(BaseException):
    """SIGTERM, raised where the process is, so the run ends as cleanly as after Ctrl-C."""


def _on_sigterm(signum, frame) -> None:
    raise Terminated


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``python -m pvnviz``; returns the exit status (see the module docstring)."""
    args = _parser().parse_args(argv)
    if args.command == "manifest":
        return _manifest(args.folder)
    previous = signal.signal(signal.SIGTERM, _on_sigterm) if _main_thread() else None
    bar = TerminalProgress() if args.command == "run" and not args.quiet else None
    fail = functools.partial(_fail, progress=bar)
    try:
        return _run(args, bar)
    except KeyboardInterrupt:
        return fail("interrupted (Ctrl-C); nothing was written to --out, a run already there is unchanged.", 130)
    except Terminated:
        return fail("terminated (SIGTERM); nothing was written to --out, a run already there is unchanged.", 143)
    except MemoryError:
        return fail("out of memory; lower num_policies, num_episodes or eval_episodes (see --set).", 1)
    except OSError as err:
        if err.errno == errno.ENOSPC:
            return fail("the disk is full; free space, then run again (a run already in --out is unchanged).", 1)
        return fail(f"{err.strerror or err} ({type(err).__name__}); a run already in --out is unchanged.", 1)
    except RunFailure as err:
        return fail(str(err), 1)
    except (ConfigError, RunError, ValueError) as err:
        return fail(str(err))
    except Exception as err:  # noqa: BLE001 - the CLI's promise: one line, never a traceback
        if os.environ.get("PVN_DEBUG"):
            raise
        return fail(f"the run failed: {type(err).__name__}: {err} (set PVN_DEBUG=1 for the traceback).", 1)
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


def _main_thread() -> bool:
    import threading

    return threading.current_thread() is threading.main_thread()


def _run(args: argparse.Namespace, bar: TerminalProgress | None) -> int:
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
    estimate = check_memory(config)  # sized before anything is allocated
    if not args.quiet and sys.stderr.isatty():  # beside the progress bars; a pipe gets the one-line endings only
        print(f"estimated: {estimate.describe()} on one core of a laptop-class CPU", file=sys.stderr)
    # a saved run's dataset (--dataset-from), checked before anything else: no collection
    saved = collect_run.dataset_from(args, config) if getattr(args, "dataset_from", None) else None
    staging = begin_run(args.out, args.overwrite)  # fail before the long work, not after it
    progress = bar if bar is not None else (lambda done, total, info: None)
    extra, cleanup = {}, None
    if saved is not None:
        extra["dataset"] = saved
    elif collect_run.collects(config):  # Algorithm 1 in chunks, locally or on Ray, resumable
        extra["dataset"], cleanup = collect_run.collect_for_cli(args, config, args.quiet)
    result = experiment.run(config, args.seed, progress, **extra)
    summary = result.summary()
    if experiment.save is not None:
        experiment.save(result, str(staging))
    write_run(staging, args.experiment, args.seed, config, summary)  # manifest.json last
    publish(staging, args.out)
    if cleanup is not None:
        cleanup()  # the run is in place, its dataset.npz holds the chunks: a kill before here can still resume
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
            if name != "polytope":
                from pvnviz.run_files import load_result

                load_result(path, name)  # every array and network opens: only then the manifest stays
        except BaseException:
            (path / MANIFEST).unlink(missing_ok=True)
            raise
    except (RunError, OSError) as err:
        return _fail(str(err))
    print(f"{folder}: a {name} run; wrote {MANIFEST}.", file=sys.stderr)
    return 0
