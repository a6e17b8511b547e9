"""Headless runs of the paper's experiments (Section 6) from the command line.

The ``pvnviz`` command, also ``python -m pvnviz``:

    pvnviz run polytope --seed 0 --out runs/polytope
    pvnviz run polytope --preset beyond --checks 20 --episodes 100 --out runs/polytope-beyond
    pvnviz run cartpole --preset paper --seed 0 --out runs/cartpole --set horizon=200
    pvnviz settings cartpole --preset quick
    pvnviz run "gym:Pendulum-v1?g=9.81" --preset quick --out runs/pendulum   (`settings gym:` lists the IDs)
    pvnviz compare --env swimmer --seed 40 41
    pvnviz app --port 8700

Each run writes ``config.json`` and ``summary.json`` (see ``pvnviz.runs.store``) plus the
experiment's arrays and a ``manifest.json``, with terminal progress bars on stderr, and ends with a
few lines on stdout: what ran, its key numbers beside the paper's, where it is saved
(``pvnviz.cli.headline``; ``--json`` prints the summary instead). A run is
written beside ``--out`` and moved into place only when whole; an existing run is replaced
only with ``--overwrite``. ``pvnviz manifest DIR`` opens a run, every array and network,
before it vouches for it (also when it has a manifest), and gives an older run its manifest.
``pvnviz compare`` is ``pvnviz.cli.compare``; ``pvnviz app`` starts the app's server (``pvnviz.cli.serve``).
Work is sized first (``pvnviz.runs.sizing``): a run that needs more memory than is free is refused
before it starts.

Every ending is one line on stderr and a distinct exit status: 2 for bad input (the line says
what to change), 1 for a failure the line names (out of memory, a full disk, a diverging run),
130 for Ctrl-C (SIGINT) and 143 for SIGTERM, at any moment: the handlers are in place before the heavy
imports (``pvnviz.cli.endings``). An interrupted or failed run leaves the previous run in ``--out`` as it was, and
nothing beside it but the collected chunks that ``--resume`` keeps.
Settings that could fail only later are refused by the config itself, before any work.
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import functools
import json
import os
import shutil
import signal
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pvnviz.cli import collect as collect_run
from pvnviz.cli import endings, headline, listing, serve
from pvnviz.cli import polytope as polytope_run
from pvnviz.cli.argtypes import OneLineParser, non_negative_int
from pvnviz.cli.outdir import check_out
from pvnviz.core.config_fields import ConfigError, apply_overrides
from pvnviz.core.progress import ProgressFn, TerminalProgress, no_progress
from pvnviz.runs.sizing import check_memory
from pvnviz.runs.store import (
    MANIFEST,
    RunError,
    RunFailure,
    begin_run,
    chunks_dir,
    publish,
    read_run,
    write_manifest,
    write_run,
)


@dataclass(frozen=True)
class Experiment:
    """How the CLI builds, runs and saves one experiment."""

    config_cls: type
    presets: dict[str, Callable[[], Any]]
    run: Callable[..., Any]  # (config, seed, on_progress) -> result with .summary()
    save: Callable[[Any, str], None] | None = None  # (result, out_dir): extra files


def _polytope() -> Experiment:
    from pvnviz.polytope.experiment import PolytopeConfig

    return Experiment(PolytopeConfig, polytope_run.presets(), polytope_run.run, polytope_run.save)


def _environment(name: str) -> Callable[[], Experiment]:
    def factory() -> Experiment:
        from pvnviz.runs.files import save_result
        from pvnviz.runs.pipeline import ExperimentConfig
        from pvnviz.runs.presets import presets_for

        return Experiment(ExperimentConfig, presets_for(name), _run_experiment, save_result)

    return factory


def _run_experiment(config: Any, seed: int, on_progress: ProgressFn, **extra: Any) -> Any:
    from pvnviz.core.progress import Hooks
    from pvnviz.runs import pipeline

    return pipeline.run_experiment(config, seed, Hooks(on_progress), **extra)


EXPERIMENTS: dict[str, Callable[[], Experiment]] = {"polytope": _polytope}  # and one per environment:


def _experiments() -> list[str]:
    """The polytope and every registered environment that has presets (``pvnviz.runs.presets``); and gym: names."""
    from pvnviz.envs.registry import ENVIRONMENTS
    from pvnviz.runs.presets import PRESETS

    return [*EXPERIMENTS, *(name for name in ENVIRONMENTS if name in PRESETS)]


def prog() -> str:
    """The command's name as typed: ``pvnviz``, or ``python -m pvnviz``."""
    name = os.path.basename(sys.argv[0]) if sys.argv and sys.argv[0] else ""
    return "python -m pvnviz" if name in ("__main__.py", "-m", "-c", "") or name.endswith(".py") else "pvnviz"


def _parser() -> argparse.ArgumentParser:
    parser = OneLineParser(prog=prog(), description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="run one experiment headless and save it")
    run.add_argument("experiment", help=listing.EXPERIMENT_HELP)
    run.add_argument("--preset", default="paper", help="settings preset (default: paper)")
    run.add_argument("--seed", type=non_negative_int, default=0, help="random seed, 0 or more (default: 0)")
    run.add_argument("--out", required=True, help="folder to write the run into")
    run.add_argument(
        "--set",
        dest="overrides",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help=f"override one setting; repeatable (see `{prog()} settings NAME`)",
    )
    run.add_argument("--quiet", action="store_true", help="no progress bars")
    run.add_argument("--json", action="store_true", help="print the run's summary.json on stdout, not the headline")
    run.add_argument("--overwrite", action="store_true", help="replace the run already in --out (else: refused)")
    polytope_run.add_arguments(run)
    collect_run.add_arguments(run)
    settings = sub.add_parser("settings", help="list an experiment's presets, and a preset's settings with help texts")
    settings.add_argument("experiment", help="as for run; gym: alone lists the gymnasium IDs that qualify")
    settings.add_argument("--preset", default="paper", help="the preset whose settings to list (default: paper)")
    sub.add_parser(  # parsed by pvnviz.cli.compare itself (see main)
        "compare", help="PVN against random search (ARS) at the same env-step budget", add_help=False
    )
    manifest = sub.add_parser(
        "manifest", help="open a run (every array and network), then write its manifest if it has none"
    )
    manifest.add_argument("folder")
    app = sub.add_parser("app", help="start the app's server, as `make run` does, from any folder")
    app.add_argument("--port", default=None, help=f"the server's port (default: $PORT, else {serve.DEFAULT_PORT})")
    return parser


def _experiment(name: str) -> tuple[str, Experiment]:  # the name (a gym: one canonical) and how to run it
    names = _experiments()
    if listing.is_gym(name):  # EnvRefused (a ValueError, exit 2) says what does not qualify, in one line
        name = listing.qualified(name)
    elif name not in names:
        raise ConfigError(f"unknown experiment {name!r}; choose one of: {', '.join(names)}, or gym:ID.")
    return name, (EXPERIMENTS[name]() if name in EXPERIMENTS else _environment(name)())


def _fail(message: str, status: int = 2, progress: TerminalProgress | None = None) -> int:
    if progress is not None and progress.drawn:  # a bar may be cut mid-line: the ending starts on its own line
        progress.close()
        sys.stderr.write("\n")
    print(f"error: {message}", file=sys.stderr)
    return status


@dataclass
class _Where:
    """How far a run got: what its ending line says (set as the run goes)."""

    out: Path | None = None  # --out
    staging: Path | None = None  # the run being written, once ``begin_run`` made it
    writing: Path | None = None  # the folder being written now: the chunks, then the staging folder
    chunks: Path | None = None  # the collection's chunks, when it collects
    publishing: bool = False  # the staging folder holds the whole run and is being moved into --out
    bar: TerminalProgress | None = None

    def published(self) -> bool:
        """The new run is in --out: ``publish`` moved (or swapped out and removed) the staging folder."""
        return self.staging is not None and not self.staging.exists()

    def saved_chunks(self) -> str:
        """What a rerun with --resume keeps, if any chunk is saved."""
        count = len(list(self.chunks.glob("chunk-*.npz"))) if self.chunks is not None and self.chunks.is_dir() else 0
        if not count or self.published():
            return ""
        them = "them" if count > 1 else "it"
        return f" {count} chunk{'s' if count > 1 else ''} saved in {self.chunks}: rerun with --resume to keep {them}."


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``python -m pvnviz``; returns the exit status (see the module docstring)."""
    where = _Where()
    with endings.handled():
        try:
            argv = sys.argv[1:] if argv is None else argv
            if argv[:1] == ["compare"]:  # its own flags and help (pvnviz.cli.compare)
                from pvnviz.cli import compare

                status = compare.main(argv[1:], prog=f"{prog()} compare")
                endings.hold()
                return status
            args = _parser().parse_args(argv)
            if args.command == "manifest":
                status = _manifest(args.folder)
            elif args.command == "app":
                serve.serve(serve.port() if args.port is None else serve.check_port(args.port))
                status = 0  # not reached: the process is the server now
            else:
                where.bar = TerminalProgress() if args.command == "run" and not args.quiet else None
                status = _run(args, where)
            endings.hold()  # the ending is chosen: a signal from here on is recorded (see pvnviz.cli.endings)
            return status
        except BaseException as err:  # noqa: BLE001 - the CLI's promise: one line, never a traceback
            endings.hold()
            try:
                return _ending(err, where)  # first: its line says whether the run was published
            finally:
                _discard_staging(where, err)


def _discard_staging(where: _Where, err: BaseException) -> None:
    """After a run that did not finish: remove its staging folder (``.NAME.partial``), and the chunk folder if it
    holds no chunk. What a rerun with ``--resume`` keeps (the chunks) stays; so does a finished run that
    ``publish`` could not move into place (its line names the staging folder)."""
    kept = where.publishing and isinstance(err, RunError)  # publish's line: "it is kept in .NAME.partial"
    if where.staging is not None and where.staging.is_dir() and not kept:
        shutil.rmtree(where.staging, ignore_errors=True)
    if where.chunks is not None and where.chunks.is_dir() and not any(where.chunks.glob("chunk-*.npz")):
        shutil.rmtree(where.chunks, ignore_errors=True)


def _ending(err: BaseException, where: _Where) -> int:
    """The one line and exit status for how the run ended (see the module docstring)."""
    fail = functools.partial(_fail, progress=where.bar)
    signum = endings.received() or (signal.SIGINT if isinstance(err, KeyboardInterrupt) else None)
    if signum is not None:  # whatever the signal's exception turned into on its way out (e.g. a closed file)
        return fail(_interrupted(signum, where), endings.STATUS[signum])
    if isinstance(err, SystemExit):  # argparse wrote its line
        raise err
    if isinstance(err, MemoryError):
        return fail("out of memory; lower num_policies, num_episodes or eval_episodes (see --set).", 1)
    if isinstance(err, OSError) and err.errno == errno.ENAMETOOLONG:
        return fail(f"a file name is too long: {err.filename or where.out}; choose a shorter --out.")
    if _disk_full(err, where.writing):
        path = getattr(err, "filename", None) or where.writing or where.out  # where the run was writing
        return fail(
            f"the disk is full: cannot write {path}; free space there, then run again (a run already in --out is "
            f"unchanged).{where.saved_chunks()}",
            1,
        )
    if isinstance(err, OSError):
        return fail(f"{err.strerror or err} ({type(err).__name__}); a run already in --out is unchanged.", 1)
    if isinstance(err, RunFailure):
        return fail(str(err), 1)
    if isinstance(err, (ConfigError, RunError, ValueError)):
        return fail(str(err))
    if os.environ.get("PVN_DEBUG"):
        raise err
    return fail(f"the run failed: {type(err).__name__}: {err} (set PVN_DEBUG=1 for the traceback).", 1)


def _interrupted(signum: int, where: _Where) -> str:
    name = endings.NAMES[signum]
    if where.published():
        return f"{name} after the run was saved: {where.out} holds the whole new run."
    if where.saved_chunks():
        return f"{name}; a run already in --out is unchanged.{where.saved_chunks()}"
    if where.out is None:
        return f"{name}; nothing was written."
    return f"{name}; nothing was written to --out, a run already there is unchanged."


def _disk_full(err: BaseException, folder: Path | None) -> bool:
    """Whether ``err`` is a full disk: ENOSPC, or (torch.save says only "enforce fail at inline_container.cc")
    a failed write into ``folder`` after which the OS refuses a 64 KiB write there with ENOSPC."""
    if isinstance(err, OSError):
        return err.errno in (errno.ENOSPC, errno.EDQUOT)
    if folder is None or not isinstance(err, RuntimeError):
        return False
    probe = folder / ".space-probe"
    try:
        with open(probe, "wb") as handle:
            handle.write(bytes(65536))
            handle.flush()
            os.fsync(handle.fileno())
    except OSError as probe_err:
        return probe_err.errno in (errno.ENOSPC, errno.EDQUOT)
    finally:
        with contextlib.suppress(OSError):
            probe.unlink()
    return False


def _run(args: argparse.Namespace, where: _Where) -> int:
    if args.command == "settings" and args.experiment == "gym:":  # the gymnasium IDs that qualify
        return listing.gym_ids()
    args.experiment, experiment = _experiment(args.experiment)
    if args.command == "settings":
        return listing.settings(args.experiment, experiment.presets, args.preset)
    where.out = check_out(args.out)
    listing.check_preset(args.experiment, experiment.presets, args.preset)
    config = apply_overrides(experiment.presets[args.preset](), args.overrides)
    config = polytope_run.apply_flags(args, config)
    if getattr(config, "env_name", args.experiment) != args.experiment:
        raise ConfigError(f"the experiment name fixes env_name: run `{config.env_name}` instead of --set env_name=...")
    collect_run.check_arguments(args, config)
    estimate = check_memory(config)  # sized before anything is allocated
    if not args.quiet and sys.stderr.isatty():  # beside the progress bars; a pipe gets the one-line endings only
        print(f"estimated: {estimate.describe()} on one core of a laptop-class CPU", file=sys.stderr)
    # a saved run's dataset (--dataset-from), checked before anything else: no collection
    saved = collect_run.dataset_from(args, config) if getattr(args, "dataset_from", None) else None
    where.staging = begin_run(args.out, args.overwrite)  # fail before the long work, not after it
    progress = where.bar if where.bar is not None else no_progress
    extra, cleanup = {}, None
    if saved is not None:
        extra["dataset"] = saved
    elif collect_run.collects(config):  # Algorithm 1 in chunks, locally or on Ray, resumable
        where.chunks = where.writing = chunks_dir(args.out)
        extra["dataset"], cleanup = collect_run.collect_for_cli(args, config, args.quiet)
    where.writing = None
    result = experiment.run(config, args.seed, progress, **extra)
    summary = result.summary()
    where.writing = where.staging
    if experiment.save is not None:
        with endings.deferred():  # torch.save's C++ writer calls back into Python: no exception may start there
            experiment.save(result, str(where.staging))
    write_run(where.staging, args.experiment, args.seed, config, summary)  # manifest.json last
    where.publishing = True
    publish(where.staging, args.out)
    where.publishing = False
    if cleanup is not None:
        cleanup()  # the run is in place, its dataset.npz holds the chunks: a kill before here can still resume
    if args.json:
        print(json.dumps(summary, indent=2))
    else:
        paper_polytope = args.experiment == "polytope" and args.preset == "paper"  # Section 6.1 as the paper runs it
        preset = None if len(experiment.presets) == 1 or paper_polytope else args.preset
        print("\n".join(headline.headline(args.experiment, preset, args.seed, summary, args.out)))
    hint = collect_run.open_hint(args.experiment, args.out)
    if hint:  # beside the progress bars: stdout holds the result only
        print(hint, file=sys.stderr)
    return 0


def _manifest(folder: str) -> int:
    """``python -m pvnviz manifest DIR``: open a run, every array and network too, and only then vouch for it.

    A run without a manifest (an older one) gets one if it opens; a run with one is opened all the same, since
    a manifest that matches its files says only that they did not change since it was written.
    """
    path = Path(folder)
    existed = (path / MANIFEST).is_file()
    try:
        if not existed:
            try:
                json.loads((path / "config.json").read_text())["experiment"]
                json.loads((path / "summary.json").read_text())
            except (OSError, ValueError, TypeError, KeyError) as err:
                raise RunError(f"{folder} is not a run ({type(err).__name__}: {err}).") from None
            write_manifest(path)
        try:
            name = _open_run(path)
        except BaseException:
            if not existed:
                (path / MANIFEST).unlink(missing_ok=True)  # a run that does not open gets no manifest
            raise
    except (RunError, OSError) as err:
        return _fail(f"{folder}: {err}")
    except Exception as err:  # noqa: BLE001 - whatever a damaged file raises: the run does not open
        return _fail(f"{folder} does not open as a run ({type(err).__name__}: {err}); run it again.")
    done = f"{MANIFEST} checks out and every file opens" if existed else f"every file opens; wrote {MANIFEST}"
    print(f"{folder}: a {name} run; {done}.", file=sys.stderr)
    return 0


def _open_run(path: Path) -> str:
    """Open a run as the app does, every array and network; its experiment's name. RunError if it does not open."""
    info = read_run(path)
    if info.experiment == "polytope":  # config.json and summary.json, and a beyond run's rounds.json
        from pvnviz.polytope.rounds import ROUNDS_FILE, config_from_dict, rounds_from_dict
        from pvnviz.runs.safe_files import read_json

        try:
            config_from_dict(info.config)
        except ConfigError as err:
            raise RunError(f"config.json holds settings that do not check out: {err}") from None
        if (path / ROUNDS_FILE).exists():
            rounds_from_dict(read_json(path / ROUNDS_FILE, ROUNDS_FILE))
    else:
        from pvnviz.runs.files import load_result

        load_result(path, info.experiment)
    return info.experiment
