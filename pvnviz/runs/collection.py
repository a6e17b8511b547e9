"""Algorithm 1 (Appendix C) in chunks: the same dataset whatever the split, on any executor, resumable.

Algorithm 1's loop is ``pvnviz.core.collect.collect_returns``; this module is the machinery around it. The K
policies of a dataset are split into chunks of consecutive policies; each chunk is one call of the loop, on
an executor (``LocalExecutor`` here, or a Ray cluster: ``pvnviz.workers.collect_ray``), and the chunks are
joined. Every random number belongs to one policy, never to a chunk, so a dataset is bit-identical for 1 or
1,000 chunks, in one process or many.

With a ``ChunkStore`` every finished chunk is written atomically (temporary file, then ``os.replace``) as
``chunk-NNNNN.npz`` (params (n, P) float32, returns (n, B) float32, start, stop, a SHA-256 of the arrays and
the plan's digest) next to ``plan.json``; a resumed collection reloads the chunks that check out and redoes
only the others.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import time
import zipfile
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from pvnviz.core.collect import collect_counted
from pvnviz.core.policies import PolicyArch
from pvnviz.core.progress import ProgressFn, Report, Stage, no_progress
from pvnviz.envs.batched import BatchedEnv
from pvnviz.envs.registry import get_env
from pvnviz.envs.rollout import check_counts
from pvnviz.runs.dataset import PolicyDataset

DEFAULT_CHUNK_STEPS = 5_000_000  # env steps (at most) per chunk when the user does not choose a chunk size
CHUNK_PATTERN = "chunk-{:05d}.npz"


class CollectError(ValueError):
    """Chunks that cannot be resumed or joined; the message says what to do."""


@dataclass(frozen=True)
class Plan:
    """What to collect: K policies x B episodes of ``horizon`` steps, from one seed entropy."""

    env_name: str
    arch: PolicyArch
    num_policies: int
    num_episodes: int
    horizon: int
    entropy: int
    chunk_policies: int = 0  # policies per chunk (a work split only); 0 = all in one chunk

    def __post_init__(self) -> None:
        check_counts(self.num_policies, self.num_episodes, self.horizon)
        from pvnviz.envs.gym_id import is_gym_name
        from pvnviz.envs.registry import ENVIRONMENTS

        if self.env_name not in ENVIRONMENTS and not is_gym_name(self.env_name):  # a worker builds a gym: one
            raise CollectError(
                f"unknown environment {self.env_name!r}; choose one of: {', '.join(ENVIRONMENTS)}, or gym:ID."
            )
        if self.chunk_policies < 0:
            raise CollectError(f"chunk size must be at least 1 policy, got {self.chunk_policies}.")

    @property
    def chunk_size(self) -> int:
        return self.chunk_policies or self.num_policies

    def digest(self) -> str:
        """SHA-256 of everything that decides the data (not the chunk size)."""
        data = {k: v for k, v in asdict(self).items() if k != "chunk_policies"}
        return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()

    def chunks(self) -> list[ChunkSpec]:
        size = self.chunk_size
        return [
            ChunkSpec(
                self.env_name,
                self.arch,
                self.num_episodes,
                self.horizon,
                self.entropy,
                lo,
                min(lo + size, self.num_policies),
            )
            for lo in range(0, self.num_policies, size)
        ]


def default_chunk_policies(num_episodes: int, horizon: int, steps: int = DEFAULT_CHUNK_STEPS) -> int:
    """Policies per chunk so a chunk is at most ``steps`` env steps (a few minutes of work)."""
    return max(1, steps // max(1, num_episodes * horizon))


@dataclass(frozen=True)
class ChunkSpec:
    """Policies [start, stop) of a plan: all a worker needs to collect them."""

    env_name: str
    arch: PolicyArch
    num_episodes: int
    horizon: int
    entropy: int
    start: int
    stop: int


@dataclass(frozen=True, eq=False)
class Chunk:
    """The result of one chunk."""

    start: int
    stop: int
    params: np.ndarray  # (n, P) float32
    returns: np.ndarray  # (n, B) float32
    env_steps: int
    seconds: float = 0.0
    checksum: str = field(default="")
    cpu_seconds: float = 0.0  # CPU time of the process that collected it, while it did

    @staticmethod
    def hash(params: np.ndarray, returns: np.ndarray) -> str:
        return hashlib.sha256(params.tobytes() + returns.tobytes()).hexdigest()


def collect_chunk(spec: ChunkSpec, nthread: int | None = None, on_progress: ProgressFn | None = None) -> Chunk:
    """Collect one chunk with the batched collector (``nthread`` physics threads for Swimmer)."""
    start_time, start_cpu = time.perf_counter(), time.process_time()
    env = get_env(spec.env_name)
    params, returns, steps = collect_counted(  # the steps the episodes really took
        env, spec.arch, spec.entropy, spec.start, spec.stop, spec.num_episodes, spec.horizon, on_progress, nthread
    )
    returns32 = returns.astype(np.float32)
    seconds, cpu = time.perf_counter() - start_time, time.process_time() - start_cpu
    return Chunk(spec.start, spec.stop, params, returns32, steps, seconds, Chunk.hash(params, returns32), cpu)


class ChunkStore:
    """A folder of finished chunks (``plan.json`` + ``chunk-NNNNN.npz``), each written atomically."""

    def __init__(self, folder: str | Path):
        self.folder = Path(folder)

    def path(self, index: int) -> Path:
        return self.folder / CHUNK_PATTERN.format(index)

    def open(self, plan: Plan, resume: bool) -> None:
        """Start afresh (stale chunks removed) or, with ``resume``, check the folder holds this plan."""
        plan_file = self.folder / "plan.json"
        for stale in self.folder.glob(".*.tmp"):  # a write cut short (killed, disk full) leaves only these
            stale.unlink(missing_ok=True)
        if resume and plan_file.is_file():
            stored = json.loads(plan_file.read_text())
            if stored.get("digest") != plan.digest():
                raise CollectError(
                    f"{self.folder} holds chunks of other settings or another seed; run without --resume to start over."
                )
            if stored.get("chunk_policies") != plan.chunk_size:
                raise CollectError(
                    f"{self.folder} was split into chunks of {stored.get('chunk_policies')} policies; "
                    f"resume with --chunk-policies {stored.get('chunk_policies')} (or leave it out)."
                )
            return
        if self.folder.exists():
            shutil.rmtree(self.folder)
        self.folder.mkdir(parents=True)
        meta = {"digest": plan.digest(), "chunk_policies": plan.chunk_size, "plan": asdict(plan)}
        self._atomic(plan_file, lambda f: f.write(json.dumps(meta, indent=2).encode()))

    def stored_chunk_policies(self) -> int | None:
        plan_file = self.folder / "plan.json"
        try:
            return int(json.loads(plan_file.read_text())["chunk_policies"])
        except (OSError, ValueError, KeyError, TypeError):
            return None

    def _atomic(self, target: Path, write: Callable) -> None:
        tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
        with open(tmp, "wb") as handle:
            write(handle)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, target)

    def write(self, index: int, chunk: Chunk, plan: Plan) -> None:
        def save(handle) -> None:
            np.savez(
                handle,
                params=chunk.params,
                returns=chunk.returns,
                start=chunk.start,
                stop=chunk.stop,
                env_steps=chunk.env_steps,
                seconds=chunk.seconds,
                checksum=chunk.checksum,
                digest=plan.digest(),
            )

        self._atomic(self.path(index), save)

    def read(self, index: int, spec: ChunkSpec, plan: Plan) -> Chunk | None:
        """The chunk if its file is there and checks out (shapes, dtypes, plan, checksum), else None."""
        try:
            with np.load(self.path(index), allow_pickle=False) as data:
                params, returns = data["params"], data["returns"]
                ok = (
                    str(data["digest"]) == plan.digest()
                    and (int(data["start"]), int(data["stop"])) == (spec.start, spec.stop)
                    and params.dtype == np.float32
                    and returns.dtype == np.float32
                    and params.shape == (spec.stop - spec.start, spec.arch.num_params)
                    and returns.shape == (spec.stop - spec.start, spec.num_episodes)
                    and str(data["checksum"]) == Chunk.hash(params, returns)
                )
                if not ok:
                    return None
                return Chunk(
                    spec.start,
                    spec.stop,
                    params,
                    returns,
                    int(data["env_steps"]),
                    float(data["seconds"]),
                    str(data["checksum"]),
                )
        except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile):  # missing, truncated or not an npz
            return None

    def remove(self) -> None:
        shutil.rmtree(self.folder, ignore_errors=True)


class LocalExecutor:
    """Runs chunks one after another in this process (Swimmer physics on one thread per core)."""

    name = "local"

    def __init__(self, nthread: int | None = None):
        self.nthread = nthread

    def workers(self) -> int:
        return 1

    def run(self, todo: list[tuple[int, ChunkSpec]], on_done: Callable[[int, Chunk], None], on_progress=None):
        for index, spec in todo:
            on_done(index, collect_chunk(spec, self.nthread, on_progress if len(todo) == 1 else None))


ChunkFn = Callable[[int, int, int, int], None]  # (chunks done, chunks total, env steps done, workers)


def collect_plan(
    plan: Plan,
    executor=None,
    store: ChunkStore | None = None,
    resume: bool = False,
    on_progress: ProgressFn = no_progress,
    on_chunk: ChunkFn | None = None,
) -> PolicyDataset:
    """Algorithm 1 over ``plan.chunks()``; with a store, chunks on disk are kept (``resume``) and new ones saved."""
    executor = LocalExecutor() if executor is None else executor
    started = time.perf_counter()
    specs = plan.chunks()
    done: dict[int, Chunk] = {}
    if store is not None:
        store.open(plan, resume)
        if resume:
            for index, spec in enumerate(specs):
                chunk = store.read(index, spec, plan)
                if chunk is not None:
                    done[index] = chunk
    todo = [(i, spec) for i, spec in enumerate(specs) if i not in done]
    steps = [sum(c.env_steps for c in done.values())]

    def report() -> None:
        if on_chunk is not None:
            on_chunk(len(done), len(specs), steps[0], executor.workers())
        if len(specs) > 1:
            on_progress(len(done), len(specs), Report(Stage.COLLECTING, f"chunk {len(done)}/{len(specs)}"))

    def finished(index: int, chunk: Chunk) -> None:
        if store is not None:
            store.write(index, chunk, plan)
        done[index] = chunk
        steps[0] += chunk.env_steps
        report()

    report()
    executor.run(todo, finished, on_progress)
    missing = [i for i in range(len(specs)) if i not in done]
    if missing:
        raise CollectError(f"chunks {missing[:5]} did not finish; rerun with --resume to redo them.")
    chunks = [done[i] for i in range(len(specs))]
    for chunk, spec in zip(chunks, specs):
        span = (chunk.start, chunk.stop) == (spec.start, spec.stop)
        if not span or chunk.checksum != Chunk.hash(chunk.params, chunk.returns):
            raise CollectError(f"chunk of policies {spec.start}-{spec.stop} is damaged; rerun with --resume.")
    params = np.concatenate([c.params for c in chunks])
    returns = np.concatenate([c.returns for c in chunks])
    seconds = time.perf_counter() - started
    measured = sum(c.env_steps for c in chunks)  # counted by the rollouts (BatchedEnv.step_count)
    return PolicyDataset(plan.env_name, plan.arch, params, returns, plan.horizon, seconds, env_steps=measured)


def plan_from_rng(
    env_name: str,
    arch: PolicyArch,
    num_policies: int,
    num_episodes: int,
    horizon: int,
    rng: np.random.Generator,
    chunk_policies: int = 0,
) -> Plan:
    """The plan of a collection seeded by ``rng`` (one 63-bit draw: the entropy of every policy's stream)."""
    check_counts(num_policies, num_episodes, horizon)
    return Plan(
        env_name,
        arch,
        int(num_policies),
        int(num_episodes),
        int(horizon),
        int(rng.integers(2**63)),
        int(chunk_policies),
    )


def collect_dataset(
    env: BatchedEnv,
    arch: PolicyArch,
    num_policies: int,
    num_episodes: int,
    horizon: int,
    rng: np.random.Generator,
    on_progress: ProgressFn = no_progress,
    **chunking,
) -> PolicyDataset:
    """Algorithm 1: K Glorot policies, B Monte Carlo returns each, stepped as one batch.

    Goes through ``pvnviz.runs.collection`` (one stream per policy, drawn from one 63-bit draw of
    ``rng``); ``chunking`` passes ``chunk_policies``, ``executor``, ``store``, ``resume`` and
    ``on_chunk`` on to it. The data never depend on the chunking or the executor.
    """
    check_counts(num_policies, num_episodes, horizon)
    plan = plan_from_rng(env.name, arch, num_policies, num_episodes, horizon, rng, chunking.pop("chunk_policies", 0))
    return collect_plan(plan, on_progress=on_progress, **chunking)
