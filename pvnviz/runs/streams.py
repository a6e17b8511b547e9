"""A run's random streams: every stage of a run (collection, split, probes, training, starts, ascent, fresh
re-measurements) draws from its own child of ``SeedSequence(seed)``, so changing a later stage's settings never
changes an earlier stage's result."""

from __future__ import annotations

import numpy as np

STAGES = {"collect": 0, "split": 1, "probes": 2, "train": 3, "starts": 4, "ascent": 5, "fresh": 6, "fresh-best-kept": 7}


def stage_rng(seed: int, stage: str) -> np.random.Generator:
    """The random stream of one stage of a run (``STAGES``): the same seed and stage give the same stream."""
    return np.random.default_rng(np.random.SeedSequence([seed, STAGES[stage]]))
