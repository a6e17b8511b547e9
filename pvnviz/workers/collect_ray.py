"""Algorithm 1 (Appendix C) on a Ray cluster: the chunks of ``pvnviz.runs.collection`` as Ray tasks.

Each task runs the batched collector on one chunk with one physics thread per CPU it
was given (``num_cpus``); a task whose worker dies (killed, out of memory, node lost) is
retried up to ``max_retries`` times by Ray. Results come back to the driver, which
writes each chunk to its ``ChunkStore`` as it arrives, so the data end up where the
CLI runs whether or not the nodes share a disk. Joining the cluster (token included) is
``pvnviz.workers.ray_cluster``; Ray is imported only there and here.
"""

from __future__ import annotations

from collections.abc import Callable

from pvnviz.runs.collection import Chunk, ChunkSpec, collect_chunk
from pvnviz.workers.ray_cluster import connect_cluster

ChunkTask = Callable[[ChunkSpec, int], Chunk]


def connect(address: str | None = None, num_cpus: int | None = None) -> bool:
    """Join the cluster at ``address`` ("auto", "HOST:PORT") or start a local one; True if this call started Ray.

    ``pvnviz.workers.ray_cluster.connect_cluster``: a running connection is reused, the token is handled,
    and every failure is a ValueError of one line.
    """
    return connect_cluster(address, num_cpus=num_cpus)


class RayExecutor:
    """Runs chunks as Ray tasks of ``num_cpus`` CPUs each, retried ``max_retries`` times if a worker dies."""

    name = "ray"

    def __init__(
        self,
        address: str | None = None,
        num_cpus: int = 1,
        max_retries: int = 3,
        task: ChunkTask | None = None,
        local_cpus: int | None = None,
    ):
        if num_cpus < 1:
            raise ValueError(f"CPUs per Ray task must be at least 1, got {num_cpus}.")
        self.address, self.num_cpus, self.max_retries = address, int(num_cpus), int(max_retries)
        self.task = task or _run_chunk
        self.local_cpus = local_cpus
        self.started = False

    def workers(self) -> int:
        """Tasks that can run at once: CPUs of the nodes alive, divided by CPUs per task."""
        import ray

        if not ray.is_initialized():
            return 0
        cpus = sum(n.get("Resources", {}).get("CPU", 0.0) for n in ray.nodes() if n.get("Alive"))
        return int(cpus // self.num_cpus)

    def run(self, todo: list[tuple[int, ChunkSpec]], on_done: Callable[[int, Chunk], None], on_progress=None):
        import ray

        self.started = connect(self.address, self.local_cpus) or self.started
        remote = ray.remote(num_cpus=self.num_cpus, max_retries=self.max_retries)(self.task)
        pending = {remote.remote(spec, self.num_cpus): index for index, spec in todo}
        try:
            while pending:
                ready, _ = ray.wait(list(pending), num_returns=1)
                for ref in ready:
                    on_done(pending.pop(ref), ray.get(ref))
        finally:
            for ref in pending:
                ray.cancel(ref, force=True)
            if self.started:
                self.shutdown()

    def shutdown(self) -> None:
        import ray

        if self.started and ray.is_initialized():
            ray.shutdown()
        self.started = False


def _run_chunk(spec: ChunkSpec, nthread: int) -> Chunk:
    return collect_chunk(spec, nthread)
