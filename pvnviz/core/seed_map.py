"""Many seeds of one experiment at once: the seeds spread over worker processes, one a core.

Every table of this project that counts seeds (the polytope's surveys, Section 6.1; CartPole's seed tables,
Section 6.2) runs one function of (config, seed) per seed, each seed independent of the others. ``seed_map``
runs them in fresh processes, which import pvnviz first and so compute with its pinned kernels
(``pvnviz.kernels``): the results are the ones this process would give, in seed order.
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Callable, Iterable
from concurrent.futures import ProcessPoolExecutor
from typing import Any, TypeVar

E = TypeVar("E")


def seed_map(end: Callable[[Any, int], E], config: Any, seeds: Iterable[int], processes: int | None = None) -> list[E]:
    """``end(config, seed)`` of every seed, in seed order: in ``processes`` fresh processes (default: one per
    core), or here for one process or fewer than 4 seeds. A seed's end depends on its seed alone, and every
    process imports pvnviz first (its pinned kernels, ``pvnviz.kernels``), so the ends are the same either way."""
    seeds = [int(s) for s in seeds]
    processes = min(os.cpu_count() or 1, len(seeds)) if processes is None else processes
    if processes <= 1 or len(seeds) < 4:
        return [end(config, s) for s in seeds]
    context = multiprocessing.get_context("spawn")  # no inherited threads or locks
    with ProcessPoolExecutor(processes, mp_context=context) as pool:
        return list(pool.map(end, [config] * len(seeds), seeds, chunksize=max(1, len(seeds) // (4 * processes))))
