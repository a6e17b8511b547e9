"""The CLI's collection stage (Algorithm 1, Appendix C): chunk folder, executor, progress, resume.

``python -m pvnviz run cartpole|swimmer --backend local|ray [--address auto|HOST:PORT]
[--resume] [--chunk-policies N] [--cpus-per-task N]`` collects the dataset chunk by chunk
into ``chunks_dir(out)`` (see ``pvnviz.runs.collection``), then the experiment
trains on it as usual. A new run clears stale chunks; ``--resume`` keeps the chunks
that check out and redoes the others; a finished run removes its chunks.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pvnviz.cli import endings
from pvnviz.cli.argtypes import whole_number
from pvnviz.core.config_fields import ConfigError
from pvnviz.runs.collection import ChunkStore, LocalExecutor, default_chunk_policies
from pvnviz.runs.dataset import PolicyDataset
from pvnviz.runs.store import chunks_dir

BACKENDS = ("local", "ray")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The collection flags of ``python -m pvnviz run``."""
    parser.add_argument("--backend", default="local", help="where to collect the dataset: local (default) or ray")
    parser.add_argument("--address", default=None, help="Ray cluster to join: auto or HOST:PORT (default: start one)")
    parser.add_argument("--resume", action="store_true", help="keep the chunks already collected for this --out")
    parser.add_argument(
        "--chunk-policies",
        type=whole_number,
        default=None,
        help="policies per chunk: a work split only, the data do not change",
    )
    parser.add_argument(
        "--cpus-per-task", type=whole_number, default=1, help="Ray: CPUs (physics threads) per chunk task"
    )
    parser.add_argument(
        "--dataset-from",
        default=None,
        metavar="RUN",
        help="reuse the dataset of a saved run with the same seed and dataset settings (no collection)",
    )


def collects(config: Any) -> bool:
    """Whether the experiment starts with Algorithm 1 (CartPole, Swimmer, any gym: environment)."""
    from pvnviz.envs.gym_id import is_gym_name
    from pvnviz.envs.registry import ENVIRONMENTS

    name = getattr(config, "env_name", None)
    return (name in ENVIRONMENTS or is_gym_name(name)) and hasattr(config, "num_policies")


class ChunkBar:
    """One tqdm bar over all chunks on stderr: env-steps/s, ETA and workers alive."""

    def __init__(self, label: str = "collect", disable: bool = False):
        self.label, self.disable = label, disable
        self.bar = None
        self.started = time.perf_counter()
        self.first_steps: int | None = None
        self.on_start: Callable[[int, int], None] | None = None  # (chunks already done, total), before the bar

    def __call__(self, done: int, total: int, steps: int, workers: int) -> None:
        from tqdm import tqdm

        if self.bar is None:
            if self.on_start is not None:
                self.on_start(done, total)
            self.bar = tqdm(total=total, initial=done, desc=self.label, unit="chunk", disable=self.disable)
            self.first_steps = steps
        else:
            self.bar.update(done - self.bar.n)
        rate = (steps - (self.first_steps or 0)) / max(time.perf_counter() - self.started, 1e-9)
        self.bar.set_postfix_str(f"{rate:,.0f} env-steps/s, {workers} workers alive")
        if done >= total:
            self.close()

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def check_arguments(args: argparse.Namespace, config: Any) -> None:
    """ConfigError, saying what to change, for flags that do not fit."""
    if args.backend not in BACKENDS:
        raise ConfigError(f"unknown --backend {args.backend!r}; choose local or ray.")
    chosen = args.backend != "local" or args.resume or args.address or args.chunk_policies is not None
    if chosen and not collects(config):
        raise ConfigError(
            f"{args.experiment} collects no dataset; --backend/--address/--resume/--chunk-policies are "
            "for cartpole and swimmer."
        )
    if args.address and args.backend != "ray":
        raise ConfigError("--address needs --backend ray.")
    if args.chunk_policies is not None and args.chunk_policies < 1:
        raise ConfigError(f"--chunk-policies must be at least 1, got {args.chunk_policies}.")
    if args.cpus_per_task < 1:
        raise ConfigError(f"--cpus-per-task must be at least 1, got {args.cpus_per_task}.")
    if args.dataset_from is not None and (chosen or not collects(config)):
        raise ConfigError("--dataset-from replaces the collection: drop --backend/--resume/--chunk-policies.")


def dataset_from(args: argparse.Namespace, config: Any) -> PolicyDataset:
    """The dataset of the run ``--dataset-from`` (``saved_dataset``)."""
    return saved_dataset(args.dataset_from, args.experiment, args.seed, config)


def saved_dataset(folder: str | Path, experiment: str, seed: int, config: Any) -> PolicyDataset:
    """A saved run's dataset, checked, and the one ``collect(config, seed)`` would give.

    The run must have the same experiment, seed and every setting the dataset depends on
    (``dataset_config``); its files are checked as the app checks them before any is used.
    """
    from pvnviz.runs.config import dataset_config
    from pvnviz.runs.files import check_run
    from pvnviz.runs.store import read_run

    info = read_run(folder, experiment)
    checked = check_run(Path(folder), info, experiment)
    if info.seed != seed:
        raise ConfigError(f"--dataset-from holds seed {info.seed}'s dataset; pass --seed {info.seed}.")
    mine, theirs = dataset_config(config), dataset_config(checked.config)
    if mine != theirs:
        differ = [f for f in dataclasses.fields(mine) if getattr(mine, f.name) != getattr(theirs, f.name)]
        names = ", ".join(f"{f.name} ({getattr(theirs, f.name)!r} there)" for f in differ)
        raise ConfigError(f"--dataset-from was collected with other dataset settings: {names}.")
    return checked.dataset


def collect_for_cli(args: argparse.Namespace, config: Any, quiet: bool) -> tuple[PolicyDataset, Callable[[], None]]:
    """The run's dataset, collected in chunks, and a function removing the chunks (call once the run is in place)."""
    from pvnviz.runs.pipeline import collect

    store = ChunkStore(chunks_dir(args.out))
    chunk_policies = args.chunk_policies
    if chunk_policies is None:
        stored = store.stored_chunk_policies() if args.resume else None
        chunk_policies = stored or default_chunk_policies(config.num_episodes, config.horizon)
    if args.backend == "ray":
        from pvnviz.workers.collect_ray import RayExecutor, connect

        executor = RayExecutor(args.address, num_cpus=args.cpus_per_task)
        executor.started = connect(args.address)  # fail (one line) before the progress bar; shut down at the end
        endings.reclaim()  # ray.init took SIGTERM over: 143 and one line again (Ray still shuts down, at exit)
    else:
        executor = LocalExecutor()
    bar = ChunkBar(f"{args.experiment} dataset ({args.backend})", disable=quiet)
    if args.resume:
        bar.on_start = lambda done, total: print(
            f"resuming: {done} of {total} chunks are already collected; collecting the other {total - done}.",
            file=sys.stderr,
        )
    try:
        dataset = collect(
            config,
            args.seed,
            chunk_policies=chunk_policies,
            executor=executor,
            store=store,
            resume=args.resume,
            on_chunk=bar,
        )
    except Exception as err:  # Ctrl-C, SIGTERM and OSError (a full disk): the CLI's ending names the saved chunks
        if type(err).__module__.startswith("ray"):  # a task failed after its retries, or the cluster went away
            raise ValueError(
                f"Ray collection stopped ({type(err).__name__}: {str(err).splitlines()[0][:200]}); "
                f"finished chunks are kept in {store.folder}, rerun with --resume."
            ) from None
        raise
    finally:
        bar.close()

    def cleanup() -> None:
        store.remove()

    return dataset, cleanup


GYM_PAGE = "any_env"  # the app page of gym: runs (its url_path)


def open_hint(experiment: str, out: str) -> str:
    """How to open a saved run in the app (which lists the runs under its runs folders only), at the port the app
    starts on (``pvnviz.cli.serve``): the page's "Open a saved run" box, and for the environments a link."""
    from pvnviz.cli import serve
    from pvnviz.envs.registry import ENVIRONMENTS
    from pvnviz.runs.store import list_runs

    path = Path(out).resolve()
    name = next((n for n, folder in list_runs(experiment).items() if folder.resolve() == path), None)
    start = serve.start_command()
    if experiment.startswith("gym:"):  # the Any environment page (any_env) opens every gym: run
        place = f"save it under runs/ first, e.g. --out runs/{path.name}" if name is None else name
        page = serve.url(GYM_PAGE)
        return f"Open it in the app: `{start}`, the Any environment page ({page}), 'Open a saved run': {place}"
    link = experiment in ENVIRONMENTS  # the polytope page opens a run from its sidebar only (its link holds settings)
    if name is None:
        page = serve.url(experiment)
        where = f"or {page}?{experiment}_run=runs/{path.name}" if link else f"at {page}"
        return (
            f"To open it in the app, save it under runs/ (e.g. --out runs/{path.name}); then `{start}`, "
            f"the {experiment} page, 'Open a saved run', {where}"
        )
    where = f", or {serve.url(experiment)}?{experiment}_run={name}" if link else f" (at {serve.url(experiment)})"
    return f"Open it in the app: `{start}`, the {experiment} page, 'Open a saved run': {name}{where}"
