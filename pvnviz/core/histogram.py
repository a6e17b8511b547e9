"""Return histograms: the PVN's distributional target and output (Section 3).

Returns are discretised into m equal bins over [G_min, G_max] of the dataset; a policy's
target is the empirical pmf of its Monte Carlo returns, and a predicted distribution
psi (K, m) gives J_hat = sum_i psi_i (G_min + h/2 + i h), h = (G_max - G_min) / m.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class ReturnBins:
    """m equal-width bins over [g_min, g_max]."""

    g_min: float
    g_max: float
    num_bins: int

    def __post_init__(self) -> None:
        if self.num_bins < 1:
            raise ValueError(f"num_bins must be at least 1; got {self.num_bins}.")
        if not self.g_max > self.g_min:
            raise ValueError(f"need g_max > g_min; got [{self.g_min}, {self.g_max}].")

    @classmethod
    def from_returns(cls, returns: np.ndarray, num_bins: int) -> ReturnBins:
        """Bins spanning the dataset's returns (widened by 0.5 each way if all are equal)."""
        lo, hi = float(np.min(returns)), float(np.max(returns))
        if hi <= lo:
            lo, hi = lo - 0.5, hi + 0.5
        return cls(lo, hi, num_bins)

    @property
    def width(self) -> float:
        return (self.g_max - self.g_min) / self.num_bins

    @property
    def midpoints(self) -> np.ndarray:
        return self.g_min + self.width / 2 + self.width * np.arange(self.num_bins)

    @property
    def edges(self) -> np.ndarray:
        return self.g_min + self.width * np.arange(self.num_bins + 1)

    def index(self, returns: np.ndarray) -> np.ndarray:
        """Bin index of each return; G_max falls in the last bin, outside values are clipped."""
        idx = np.floor((np.asarray(returns, dtype=np.float64) - self.g_min) / self.width).astype(np.int64)
        return np.clip(idx, 0, self.num_bins - 1)

    def pmf(self, returns: np.ndarray) -> np.ndarray:
        """Empirical pmf per policy: returns (K, B) -> (K, m), rows sum to one."""
        returns = np.atleast_2d(returns)
        idx = self.index(returns)
        counts = np.zeros((returns.shape[0], self.num_bins))
        np.add.at(counts, (np.arange(returns.shape[0])[:, None], idx), 1.0)
        return counts / returns.shape[1]

    def expected(self, probabilities: np.ndarray) -> np.ndarray:
        """J_hat = probabilities (..., m) @ midpoints."""
        return np.asarray(probabilities) @ self.midpoints
