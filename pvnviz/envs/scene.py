"""What a replay draws (Section 5: a policy before and after gradient ascent), as plain data.

A leaf module. An environment's ``BatchedEnv.replay`` runs one episode per policy and returns a ``Replay``:
one ``Panel`` per policy, each a few 2-D ``Part`` shapes per time step, with a style role from ``ROLES``.
``pvnviz.figures.replay`` (plotly) and ``pvnviz.figures.gif`` (Pillow) draw any ``Replay``; neither
knows which environment made it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np

ROLES = {  # role -> what it is and how the figures draw it
    "track": "a fixed line, e.g. CartPole's termination bounds (thin grey)",
    "trail": "a path over the whole episode (thin blue; the GIF draws it up to the current step)",
    "body": "a filled polygon, e.g. the cart (grey, dark outline)",
    "pole": "a thick orange polyline whose last point is marked larger, e.g. the pole and its tip",
    "links": "a thick orange chain of links with dark joints, e.g. the swimmer's capsules",
}
STATIC_ROLES = ("track", "trail")  # drawn once per panel; the other roles move with time


@dataclass(frozen=True)
class Part:
    """One shape of a panel: ``points`` (F, n, 2) is its n points (x, y) at each of F frames.

    A moving part has one row per frame the panel's episode is alive; a static part (``STATIC_ROLES``) one row.
    """

    role: str
    points: np.ndarray
    name: str = ""  # what it is, for the figure's data (not shown)

    def __post_init__(self) -> None:
        if self.role not in ROLES:
            raise ValueError(f"unknown part role {self.role!r}; use one of {sorted(ROLES)}.")
        points = np.asarray(self.points, dtype=np.float64)
        if points.ndim != 3 or points.shape[-1] != 2 or points.shape[0] < 1 or points.shape[1] < 1:
            raise ValueError(f"a part's points must be (frames, n, 2), got {points.shape}.")
        if not np.all(np.isfinite(points)):
            raise ValueError(f"the {self.role} part has non-finite points; give only the frames the episode lives.")
        if self.role in STATIC_ROLES and points.shape[0] != 1:
            raise ValueError(f"a {self.role} part is static: give points (1, n, 2), got {points.shape}.")
        object.__setattr__(self, "points", points)

    def at(self, t: int) -> np.ndarray:
        """The (n, 2) points at time step t; a finished episode keeps its last frame."""
        return self.points[min(t, len(self.points) - 1)]


@dataclass(frozen=True)
class Panel:
    """One policy's episode: its parts in drawing order, how many frames it lives, and a summary for its title."""

    parts: tuple[Part, ...]
    frames: int  # time steps 0 .. frames - 1 were reached
    summary: str  # e.g. "58 steps" or "return 120, travelled +1.20 m"

    def __post_init__(self) -> None:
        for part in self.parts:
            if part.role not in STATIC_ROLES and len(part.points) != self.frames:
                raise ValueError(f"a moving {part.role} part has {len(part.points)} frames, its panel {self.frames}.")


@dataclass(frozen=True)
class Replay:
    """One episode per policy from a shared start state, ready to draw."""

    title: str
    panels: tuple[Panel, ...]
    x_title: str
    y_title: str
    x_range: tuple[float, float] | None  # None: fit the data, one metre as long across as up
    y_range: tuple[float, float] | None
    layout: Literal["columns", "rows"]  # panels side by side, or stacked
    frame_every: int  # the figures show every frame_every-th time step (and the last)
    frame_ms: int  # milliseconds per shown frame when the animation plays
    caption: str  # "what to look at" under the replay

    def __post_init__(self) -> None:
        if self.layout not in ("columns", "rows"):
            raise ValueError(f"layout must be 'columns' or 'rows', got {self.layout!r}.")
        if not self.panels or self.frame_every < 1 or self.frame_ms < 1:
            raise ValueError("a replay needs at least one panel, frame_every >= 1 and frame_ms >= 1.")

    @property
    def num_frames(self) -> int:
        """Frames of the longest episode (shorter ones hold their last frame)."""
        return max(panel.frames for panel in self.panels)

    @property
    def fit_aspect(self) -> bool:
        return self.x_range is None or self.y_range is None

    def all_points(self, panel: Panel | None = None) -> np.ndarray:
        """(N, 2): every point of one panel, or of all panels (for ranges that fit the data)."""
        panels = self.panels if panel is None else (panel,)
        return np.concatenate([part.points.reshape(-1, 2) for p in panels for part in p.parts])
