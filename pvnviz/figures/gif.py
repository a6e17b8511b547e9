"""The page animations as GIF files, drawn without a browser (Pillow) and encoded by imageio.

One function per animation, from the same result data the plotly builders take to GIF bytes:
the polytope ascent paths (Section 6.1, Fig. 3c), the probing states through training (Section 4),
and any environment's replay (Section 5). Every frame carries its own
step label, so no two frames are equal and the GIF keeps one frame per animation step.
Colours are the concept colours of ``theme``.
"""

from __future__ import annotations

from collections.abc import Sequence

import imageio.v3 as iio
import numpy as np
from PIL import Image, ImageDraw

from pvnviz.envs.scene import Part, Replay
from pvnviz.figures import theme

BACKGROUND = "white"
INK = "#333333"
PANEL = 320  # pixels per panel side


class Panel:
    """A drawing box mapping data coordinates (x right, y up) to the pixels of one image."""

    def __init__(self, draw: ImageDraw.ImageDraw, box: tuple[int, int, int, int], xlim, ylim, title: str = ""):
        self.draw, self.box, self.xlim, self.ylim = draw, box, xlim, ylim
        left, top, right, bottom = box
        draw.rectangle(box, outline="#bbbbbb")
        if title:
            draw.text((left + 4, top - 14), title, fill=INK)

    def px(self, x: float, y: float) -> tuple[float, float]:
        left, top, right, bottom = self.box
        u = (x - self.xlim[0]) / (self.xlim[1] - self.xlim[0])
        v = (y - self.ylim[0]) / (self.ylim[1] - self.ylim[0])
        return left + u * (right - left), bottom - v * (bottom - top)

    def line(self, xs: Sequence[float], ys: Sequence[float], color: str, width: int = 2) -> None:
        points = [self.px(x, y) for x, y in zip(xs, ys) if np.isfinite(x) and np.isfinite(y)]
        if len(points) > 1:
            self.draw.line(points, fill=color, width=width, joint="curve")

    def dot(self, x: float, y: float, color: str, radius: float = 4, outline: str | None = None) -> None:
        u, v = self.px(x, y)
        self.draw.ellipse((u - radius, v - radius, u + radius, v + radius), fill=color, outline=outline)


def _limits(values: np.ndarray, pad: float = 0.08) -> tuple[float, float]:
    finite = values[np.isfinite(values)]
    lo, hi = float(finite.min()), float(finite.max())
    margin = pad * (hi - lo) + 1e-6
    return lo - margin, hi + margin


def _equal_aspect(xlim, ylim, ratio: float) -> tuple[tuple[float, float], tuple[float, float]]:
    """Limits widened so that one metre is as long across as up, on a panel ``ratio`` times wider than tall."""
    width = max(xlim[1] - xlim[0], ratio * (ylim[1] - ylim[0]))
    cx, cy = sum(xlim) / 2, sum(ylim) / 2
    return (cx - width / 2, cx + width / 2), (cy - width / ratio / 2, cy + width / ratio / 2)


def encode(frames: list[Image.Image], duration_ms: int = 80) -> bytes:
    """GIF bytes of the frames (looping)."""
    stack = np.stack([np.asarray(f.convert("RGB")) for f in frames])  # (F, H, W, 3)
    return iio.imwrite("<bytes>", stack, extension=".gif", duration=duration_ms, loop=0)


def to_mp4(gif: bytes) -> bytes:
    """The same animation as an H.264 MP4 (for slides and video players), at the GIF's frame rate.

    Frames are padded to even sizes (yuv420p needs them); ffmpeg comes with the imageio-ffmpeg wheel.
    """
    import tempfile
    from pathlib import Path

    import imageio_ffmpeg

    frames = iio.imread(gif, index=None)[..., :3]  # (F, H, W, 3)
    duration_ms = float(iio.immeta(gif, index=0).get("duration", 80)) or 80.0
    height, width = frames.shape[1] + frames.shape[1] % 2, frames.shape[2] + frames.shape[2] % 2
    padded = np.full((len(frames), height, width, 3), 255, dtype=np.uint8)
    padded[:, : frames.shape[1], : frames.shape[2]] = frames
    with tempfile.TemporaryDirectory(prefix="pvn-mp4-") as tmp:
        path = Path(tmp) / "animation.mp4"
        writer = imageio_ffmpeg.write_frames(
            str(path), (width, height), fps=1000.0 / duration_ms, codec="libx264", pix_fmt_out="yuv420p",
            macro_block_size=1, output_params=["-movflags", "+faststart"],
        )  # fmt: skip
        writer.send(None)
        for frame in padded:
            writer.send(np.ascontiguousarray(frame))
        writer.close()
        return path.read_bytes()


def _canvas(width: int, height: int, caption: str) -> tuple[Image.Image, ImageDraw.ImageDraw]:
    image = Image.new("RGB", (width, height), BACKGROUND)
    draw = ImageDraw.Draw(image)
    draw.text((10, height - 18), caption, fill=INK)
    return image, draw


def ascent_gif(exact, learned=None, max_frames: int = 50) -> bytes:
    """Polytope page: the ascent paths on the policy square and in the value polytope, step by step."""
    paths = [(exact.ascent, theme.EXACT)] + ([(learned.ascent, theme.LEARNED)] if learned is not None else [])
    num_steps = len(exact.ascent.policies) - 1
    steps = sorted(set(np.linspace(0, num_steps, min(num_steps, max_frames) + 1).astype(int).tolist()))
    values = np.concatenate([exact.cloud_values, exact.corner_values] + [p.values for p, _ in paths])
    vx, vy = _limits(values[:, 0]), _limits(values[:, 1])
    frames = []
    for t in steps:
        image, draw = _canvas(2 * PANEL + 60, PANEL + 60, f"ascent step {t}")
        square = Panel(draw, (20, 20, 20 + PANEL, 20 + PANEL), (-0.03, 1.03), (-0.03, 1.03), "policy square")
        polytope = Panel(draw, (PANEL + 40, 20, 2 * PANEL + 40, 20 + PANEL), vx, vy, "value polytope")
        for edge in exact.edges:
            polytope.line(edge[:, 0], edge[:, 1], theme.CORNER, 1)
        for x, y in exact.corner_values:
            polytope.dot(x, y, theme.CORNER, 4, outline="white")
        for path, color in paths:
            p, v = path.policies[: t + 1], path.values[: t + 1]
            square.line(p[:, 0], p[:, 1], color)
            polytope.line(v[:, 0], v[:, 1], color)
            square.dot(*p[-1], color)
            polytope.dot(*v[-1], color)
        frames.append(image)
    return encode(frames)


def probes_gif(trained, dims: tuple[int, int], labels: Sequence[str] = ("", "")) -> bytes:
    """The probing states at every recorded training step, in two state dimensions (Section 4)."""
    snaps = trained.probe_snapshots  # (S, n, obs_dim)
    i, j = dims
    xlim, ylim = _limits(snaps[..., i]), _limits(snaps[..., j])
    frames = []
    for s, step in enumerate(trained.snapshot_steps):
        image, draw = _canvas(PANEL + 40, PANEL + 60, f"training step {int(step)}   x: {labels[0]}  y: {labels[1]}")
        panel = Panel(draw, (20, 20, 20 + PANEL, 20 + PANEL), xlim, ylim, "probing states")
        for p in range(snaps.shape[1]):
            panel.line(snaps[: s + 1, p, i], snaps[: s + 1, p, j], "#f3c6e6", 1)
            panel.dot(snaps[0, p, i], snaps[0, p, j], "#dddddd", 3)
        for p in range(snaps.shape[1]):
            panel.dot(snaps[s, p, i], snaps[s, p, j], theme.PROBE, 5, outline="white")
        frames.append(image)
    return encode(frames)


def replay_gif(replay: Replay, labels: Sequence[str]) -> bytes:
    """Any environment's replay (``pvnviz.envs.scene.Replay``), one panel per policy titled ``labels``, side by side or
    stacked as its layout says; a finished episode holds its last frame."""
    columns, n = replay.layout == "columns", len(replay.panels)
    limits = []
    for panel in replay.panels:
        if replay.fit_aspect:  # one metre as long across as up, per panel (twice as wide as tall)
            points = replay.all_points(panel)
            limits.append(_equal_aspect(_limits(points[:, 0]), _limits(points[:, 1]), 2.0))
        else:
            limits.append((replay.x_range, replay.y_range))
    frames = []
    for t in theme.frame_steps(replay.num_frames, replay.frame_every):
        if columns:
            image, draw = _canvas(n * (PANEL + 20) + 20, PANEL // 2 + 80, f"time step {t}")
        else:
            image, draw = _canvas(PANEL * 2 + 40, n * (PANEL // 2 + 30) + 50, f"time step {t}")
        for k, (panel, label) in enumerate(zip(replay.panels, labels)):
            if columns:
                left, top, width, title = 20 + k * (PANEL + 20), 30, PANEL, label[:48]
            else:
                left, top, width, title = 20, 25 + k * (PANEL // 2 + 30), 2 * PANEL, label[:80]
            box = Panel(draw, (left, top, left + width, top + PANEL // 2), *limits[k], title)
            for part in panel.parts:
                _draw_part(box, part, t)
        frames.append(image)
    return encode(frames, duration_ms=replay.frame_ms)


def _draw_part(box: Panel, part: Part, t: int) -> None:
    """One part at time step t, styled by its role (``pvnviz.envs.scene.ROLES``) as ``figures.replay`` styles it."""
    points = part.points[0, : t + 1] if part.role == "trail" else part.at(t)  # a trail grows with the episode
    xs, ys = points[:, 0], points[:, 1]
    if part.role == "body":
        box.draw.polygon([box.px(x, y) for x, y in zip(xs, ys)], fill="#888888", outline=INK)
    else:
        color, width = {"track": (theme.NEUTRAL, 1), "trail": (theme.EXACT, 1), "pole": ("#c8781e", 6)}.get(
            part.role, ("#c8781e", 5)
        )
        box.line(xs, ys, color, width)
