"""Datasets of random policies and their Monte Carlo returns (Appendix C, Algorithm 1).

K policies are Glorot-initialised (``pvnviz.core.policies``) and each is rolled out B times;
all K x B episodes advance in lockstep in the batched environment (``pvnviz.core.collect``), in chunks
of policies that do not change the data (``pvnviz.runs.collection.collect_dataset``). The dataset keeps
the list of returns per policy; a training-set filter (Section 6.2) drops the policies
whose mean return exceeds a limit, and the dropped ones are kept for the histogram.

Layout: params (K, P) float32, returns (K, B) float32; saved as ``pvnviz.runs.schema.DATASET`` declares.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from pvnviz.core.histogram import ReturnBins
from pvnviz.core.policies import PolicyArch
from pvnviz.runs import schema


@dataclass(frozen=True, eq=False)
class PolicyDataset:
    """Policies and the returns of their rollouts."""

    env_name: str
    arch: PolicyArch
    params: np.ndarray  # (K, P)
    returns: np.ndarray  # (K, B)
    horizon: int
    seconds: float = 0.0
    env_steps: int | None = None  # the steps the rollouts counted; None (runs saved before they were): from returns

    @property
    def mean_returns(self) -> np.ndarray:
        return self.returns.mean(axis=1)

    @property
    def num_env_steps(self) -> int:
        """Environment steps spent: as the rollouts counted them, or, for a dataset saved without the count, as its
        environment's ``episode_steps`` reads them off the returns (CartPole: a return is its length)."""
        if self.env_steps is not None:
            return int(self.env_steps)
        from pvnviz.envs.registry import get_env  # a saved dataset names its environment

        return get_env(self.env_name).episode_steps(self.returns, self.horizon)

    def kept(self, return_limit: float | None) -> np.ndarray:
        """Mask of policies the training-set filter keeps (mean return <= limit)."""
        if return_limit is None:
            return np.ones(len(self.params), dtype=bool)
        return self.mean_returns <= return_limit

    def save(self, path: str | Path) -> None:
        """``dataset.npz``: the arrays ``pvnviz.runs.schema.DATASET`` declares (the run folders' writer too)."""
        np.savez_compressed(path, **schema.to_arrays(schema.DATASET, {"dataset": self}))

    @classmethod
    def load(cls, path: str | Path) -> PolicyDataset:
        with np.load(path, allow_pickle=False) as data:
            return cls.from_arrays({key: data[key] for key in data.files})

    @classmethod
    def from_arrays(cls, data: dict[str, np.ndarray]) -> PolicyDataset:
        """The dataset from the arrays ``save`` writes (``pvnviz.runs.files`` checks them first)."""
        return cls(**schema.from_arrays(schema.DATASET, data, "dataset"))


@dataclass(frozen=True)
class Split:
    """A dataset's training-set filter, the histogram bins and the train/validation split
    (``pvnviz.runs.pipeline.split``)."""

    kept: np.ndarray  # (K,) bool
    bins: ReturnBins
    train_idx: np.ndarray  # indices into the dataset
    val_idx: np.ndarray
