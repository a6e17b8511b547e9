"""The page animations as GIF files, drawn without a browser (Pillow) and encoded by imageio.

One function per animation, from the same result data the plotly builders take to GIF bytes:
the polytope ascent paths (Section 6.1, Fig. 3c), the probing states through training (Section 4),
and any environment's replay (Section 5). Every frame carries its own
step label, so no two frames are equal and the GIF keeps one frame per animation step.
Colours are the concept colours of ``theme``. A frame carries what its page figure shows: axes with tick labels
and titles, a legend, the probes' numbers, the step and the paths' J, in a TrueType font (``font``); it is drawn
``SS`` times larger and shrunk, so its lines and text are antialiased.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence

import imageio.v3 as iio
import numpy as np
from PIL import Image, ImageDraw, ImageFont

from pvnviz.envs.scene import Part, Replay
from pvnviz.figures import theme

BACKGROUND = "white"
INK = "#333333"
MUTED = "#666666"  # tick labels and axis titles
GRID = "#e6e6e6"
PANEL = 320  # pixels per panel side
SS = 3  # supersampling: frames are drawn this many times larger and shrunk, so lines and text are antialiased
FONT_PX = 13  # text; titles TITLE_PX
TITLE_PX = 14
MARGIN = dict(left=52, top=28, right=16, bottom=44)  # around a panel: tick labels, axis titles, its title


# TrueType fonts with Greek letters and arrows (the figures' labels have π, θ, Ĵ, →), where the system has one;
# else Pillow's bundled font, whose missing glyphs are spelled out (``drawable``).
FONT_FILES = (
    "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/TTF/DejaVuSans.ttf",
    "/usr/share/fonts/truetype/liberation/LiberationSans-Regular.ttf",
)
SPELLED = {"→": "->", "←": "<-", "≥": ">=", "≤": "<=", "×": "x", "—": "-", "–": "-", "‖": "||", "π": "pi",
           "θ": "theta", "γ": "gamma", "Ĵ": "J^"}  # fmt: skip


@functools.lru_cache(maxsize=8)
def font(px: int) -> ImageFont.FreeTypeFont:
    """A TrueType font at ``px`` final pixels (drawn at ``SS`` times that): real glyph advances and spaces, unlike
    Pillow's bitmap default. The first of ``FONT_FILES`` found, else Pillow's bundled one."""
    for path in FONT_FILES:
        try:
            return ImageFont.truetype(path, px * SS)
        except OSError:
            continue
    return ImageFont.load_default(size=px * SS)


@functools.lru_cache(maxsize=4096)
def drawable(text: str, px: int = FONT_PX) -> str:
    """``text`` with each character the font lacks (drawn as its empty box) spelled out (``SPELLED``) or as '?'."""
    face = font(px)
    missing = bytes(face.getmask("\ue000"))  # a private-use character: the font's empty box

    def has(c: str) -> bool:
        return c.isascii() or bytes(face.getmask(c)) != missing

    return "".join(c if has(c) else SPELLED.get(c, "?") for c in text)


def nice_ticks(lo: float, hi: float, count: int = 5) -> list[float]:
    """About ``count`` round tick values (1, 2, 2.5 or 5 times a power of ten apart) within [lo, hi]."""
    span = hi - lo
    if not math.isfinite(span) or span <= 0:
        return [lo]
    raw = span / count
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw)
    first = math.ceil(lo / step - 1e-9) * step
    return [round(first + k * step, 12) for k in range(int((hi - first) / step + 1e-9) + 1)]


def tick_label(value: float) -> str:
    return f"{value:.4g}" if abs(value) >= 1e-9 else "0"


class Canvas:
    """One frame: drawn in final-pixel coordinates on an image ``SS`` times larger, shrunk by ``frame()``."""

    def __init__(self, width: int, height: int):
        self.size = (width, height)
        self.image = Image.new("RGB", (width * SS, height * SS), BACKGROUND)
        self.draw = ImageDraw.Draw(self.image)

    def text(self, xy: tuple[float, float], text: str, px: int = FONT_PX, fill: str = INK, anchor: str = "la") -> None:
        self.draw.text((xy[0] * SS, xy[1] * SS), drawable(text, px), font=font(px), fill=fill, anchor=anchor)

    def text_width(self, text: str, px: int = FONT_PX) -> float:
        return self.draw.textlength(drawable(text, px), font=font(px)) / SS

    def vertical_text(self, xy: tuple[float, float], text: str, px: int = FONT_PX, fill: str = MUTED) -> None:
        """``text`` turned a quarter left (a y-axis title), centred on ``xy``."""
        text = drawable(text, px)
        box = font(px).getbbox(text)
        label = Image.new("RGBA", (box[2] + 4, box[3] + 4), (0, 0, 0, 0))
        ImageDraw.Draw(label).text((2, 2), text, font=font(px), fill=fill)
        label = label.rotate(90, expand=True)
        self.image.paste(label, (int(xy[0] * SS - label.width / 2), int(xy[1] * SS - label.height / 2)), label)

    def line(self, points: Sequence[tuple[float, float]], color: str, width: float = 2, dash: bool = False) -> None:
        pts = [(x * SS, y * SS) for x, y in points]
        if len(pts) < 2:
            return
        if not dash:
            self.draw.line(pts, fill=color, width=max(1, round(width * SS)), joint="curve")
            return
        on, off, carry = 6 * SS, 4 * SS, 0.0  # dash pattern in drawn pixels, carried across segments
        for (x0, y0), (x1, y1) in zip(pts, pts[1:]):
            length = math.hypot(x1 - x0, y1 - y0)
            s = -carry
            while s < length:
                a, b = max(s, 0.0), min(s + on, length)
                if b > a:
                    self.draw.line(
                        [(x0 + (x1 - x0) * a / length, y0 + (y1 - y0) * a / length),
                         (x0 + (x1 - x0) * b / length, y0 + (y1 - y0) * b / length)],
                        fill=color, width=max(1, round(width * SS)),
                    )  # fmt: skip
                s += on + off
            carry = s - length

    def dot(self, xy: tuple[float, float], color: str, radius: float = 4, outline: str | None = None,
            square: bool = False) -> None:  # fmt: skip
        u, v, r = xy[0] * SS, xy[1] * SS, radius * SS
        shape = self.draw.rectangle if square else self.draw.ellipse
        shape((u - r, v - r, u + r, v + r), fill=color, outline=outline, width=SS if outline else 0)

    def legend(self, xy: tuple[float, float], entries: Sequence[tuple[str, str, str]], width: float) -> float:
        """Entries (label, colour, kind: "line", "dash", "dot" or "square") in rows from ``xy`` within ``width``
        pixels, as plotly's horizontal legend; returns the y below them."""
        x, y = xy
        for label, color, kind in entries:
            need = 30 + self.text_width(label) + 14
            if x + need > xy[0] + width and x > xy[0]:
                x, y = xy[0], y + 18
            mid = y + 8
            if kind in ("line", "dash"):
                self.line([(x, mid), (x + 22, mid)], color, 2.5, dash=kind == "dash")
            else:
                self.dot((x + 11, mid), color, 5, outline="white", square=kind == "square")
            self.text((x + 28, mid), label, anchor="lm")
            x += need
        return y + 18

    def frame(self) -> Image.Image:
        return self.image.resize(self.size, Image.LANCZOS)


class Panel:
    """Axes on a canvas: a box in final pixels mapping data coordinates (x right, y up) into it, with a grid, tick
    labels, axis titles and a title, as the page's plotly figure of the same data has them."""

    def __init__(self, canvas: Canvas, box: tuple[int, int, int, int], xlim, ylim, title: str = "",
                 x_title: str = "", y_title: str = "", axes: bool = True):  # fmt: skip
        self.canvas, self.box, self.xlim, self.ylim = canvas, box, xlim, ylim
        left, top, right, bottom = box
        if axes:
            for value in nice_ticks(*xlim):
                u = self.px(value, ylim[0])[0]
                canvas.line([(u, top), (u, bottom)], GRID, 1)
                canvas.line([(u, bottom), (u, bottom + 4)], MUTED, 1)
                canvas.text((u, bottom + 6), tick_label(value), fill=MUTED, anchor="mt")
            for value in nice_ticks(*ylim):
                v = self.px(xlim[0], value)[1]
                canvas.line([(left, v), (right, v)], GRID, 1)
                canvas.line([(left - 4, v), (left, v)], MUTED, 1)
                canvas.text((left - 6, v), tick_label(value), fill=MUTED, anchor="rm")
            canvas.line([(left, top), (left, bottom), (right, bottom)], MUTED, 1)  # the axis lines
            if x_title:
                canvas.text(((left + right) / 2, bottom + 24), x_title, fill=MUTED, anchor="mt")
            if y_title:
                canvas.vertical_text((left - 40, (top + bottom) / 2), y_title)
        else:
            canvas.line([(left, top), (right, top), (right, bottom), (left, bottom), (left, top)], "#bbbbbb", 1)
        if title:
            canvas.text((left, top - 6), title, px=TITLE_PX, anchor="ld")

    def px(self, x: float, y: float) -> tuple[float, float]:
        left, top, right, bottom = self.box
        u = (x - self.xlim[0]) / (self.xlim[1] - self.xlim[0])
        v = (y - self.ylim[0]) / (self.ylim[1] - self.ylim[0])
        return left + u * (right - left), bottom - v * (bottom - top)

    def line(self, xs: Sequence[float], ys: Sequence[float], color: str, width: float = 2, dash: bool = False) -> None:
        points = [self.px(x, y) for x, y in zip(xs, ys) if np.isfinite(x) and np.isfinite(y)]
        self.canvas.line(points, color, width, dash)

    def dot(self, x: float, y: float, color: str, radius: float = 4, outline: str | None = None,
            square: bool = False) -> None:  # fmt: skip
        self.canvas.dot(self.px(x, y), color, radius, outline, square)

    def label(self, x: float, y: float, text: str, color: str = INK, dy: float = -8) -> None:
        u, v = self.px(x, y)
        self.canvas.text((u, v + dy), text, fill=color, anchor="md")

    @property
    def draw(self) -> ImageDraw.ImageDraw:
        return self.canvas.draw


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


def encode(frames: list[Image.Image | Canvas], duration_ms: int = 80) -> bytes:
    """GIF bytes of the frames (looping); a canvas is shrunk to its final size first."""
    images = [f.frame() if isinstance(f, Canvas) else f for f in frames]
    stack = np.stack([np.asarray(f.convert("RGB")) for f in images])  # (F, H, W, 3)
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


def _canvas(width: int, height: int, caption: str) -> Canvas:
    canvas = Canvas(width, height)
    canvas.text((10, height - 8), caption, anchor="ld")
    return canvas


def _panel_box(left: int, top: int, width: int, height: int) -> tuple[int, int, int, int]:
    """A panel's axes box at (left, top) of a cell ``width`` x ``height``, inside the margin its labels take."""
    return (left + MARGIN["left"], top + MARGIN["top"], left + width - MARGIN["right"], top + height - MARGIN["bottom"])


def ascent_gif(exact, learned=None, max_frames: int = 50) -> bytes:
    """Polytope page (Fig. 3c): the ascent paths on the policy square and in the value polytope, step by step, with
    the page figure's axes, legend and each path's J; the exact path is drawn over the learned one (dashed, with
    dots at its iterates), so where they coincide both show."""
    paths = [("learned ascent", learned.ascent, theme.LEARNED)] if learned is not None else []
    paths.append(("exact ascent", exact.ascent, theme.EXACT))  # last: on top
    num_steps = len(exact.ascent.policies) - 1
    steps = sorted(set(np.linspace(0, num_steps, min(num_steps, max_frames) + 1).astype(int).tolist()))
    values = np.concatenate([exact.cloud_values, exact.corner_values] + [p.values for _, p, _ in paths])
    vx, vy = _limits(values[:, 0]), _limits(values[:, 1])
    cell = PANEL + MARGIN["left"] + MARGIN["right"]
    width, height = 2 * cell + 20, PANEL + MARGIN["top"] + MARGIN["bottom"] + 70
    legend = [(name, color, "dash" if name.startswith("exact") else "line") for name, _, color in paths[::-1]]
    legend += [("corners (deterministic policies)", theme.CORNER, "square"), ("optimum", theme.OPTIMUM, "dot")]
    optimum = exact.corner_values[int(np.argmax(exact.corner_J))]
    frames = []
    for t in steps:
        numbers = ", ".join(f"{name.split()[0]} J = {p.exact_J[t]:.3f}" for name, p, _ in paths[::-1])
        canvas = _canvas(width, height, f"ascent step {t} of {num_steps}:  {numbers}  (optimum {exact.optimal_J:.3f})")
        square = Panel(canvas, _panel_box(0, 0, cell, PANEL + MARGIN["top"] + MARGIN["bottom"]), (-0.03, 1.03),
                       (-0.03, 1.03), "Policy square", "P(a1 | s1)", "P(a1 | s2)")  # fmt: skip
        polytope = Panel(canvas, _panel_box(cell + 20, 0, cell, PANEL + MARGIN["top"] + MARGIN["bottom"]), vx, vy,
                         "Value polytope", "V(s1)", "V(s2)")  # fmt: skip
        canvas.legend((MARGIN["left"], PANEL + MARGIN["top"] + MARGIN["bottom"] + 2), legend, width - 60)
        for edge in exact.edges:
            polytope.line(edge[:, 0], edge[:, 1], theme.CORNER, 1)
        for x, y in exact.corner_values:
            polytope.dot(x, y, theme.CORNER, 4, outline="white", square=True)
        polytope.dot(*optimum, theme.OPTIMUM, 6, outline="white")
        for name, path, color in paths:
            p, v = path.policies[: t + 1], path.values[: t + 1]
            exact_path = name.startswith("exact")
            for panel, points in ((square, p), (polytope, v)):
                panel.line(points[:, 0], points[:, 1], color, 2 if exact_path else 4, dash=exact_path)
                panel.dot(*points[-1], color, 4 if exact_path else 6, outline="white")
        frames.append(canvas)
    return encode(frames)


def probes_gif(trained, dims: tuple[int, int], labels: Sequence[str] = ("", "")) -> bytes:
    """The probing states at every recorded training step, in two state dimensions (Section 4), numbered as on the
    page, with its axes and legend."""
    snaps = trained.probe_snapshots  # (S, n, obs_dim)
    i, j = dims
    xlim, ylim = _limits(snaps[..., i]), _limits(snaps[..., j])
    cell_h = PANEL + MARGIN["top"] + MARGIN["bottom"]
    width, height = PANEL + MARGIN["left"] + MARGIN["right"], cell_h + 70
    legend = [
        ("initial probes", "#bbbbbb", "dot"),
        ("paths", "#f3c6e6", "line"),
        ("probing states", theme.PROBE, "dot"),
    ]
    frames = []
    for s, step in enumerate(trained.snapshot_steps):
        canvas = _canvas(width, height, f"training step {int(step)}")
        panel = Panel(canvas, _panel_box(0, 0, width, cell_h), xlim, ylim, "Probing states through training",
                      labels[0], labels[1])  # fmt: skip
        canvas.legend((MARGIN["left"], cell_h + 2), legend, width - MARGIN["left"])
        for p in range(snaps.shape[1]):
            panel.line(snaps[: s + 1, p, i], snaps[: s + 1, p, j], "#f3c6e6", 1)
            panel.dot(snaps[0, p, i], snaps[0, p, j], "#dddddd", 3)
        for p in range(snaps.shape[1]):
            panel.dot(snaps[s, p, i], snaps[s, p, j], theme.PROBE, 5, outline="white")
            panel.label(snaps[s, p, i], snaps[s, p, j], str(p + 1))
        frames.append(canvas)
    return encode(frames)


def replay_gif(replay: Replay, labels: Sequence[str]) -> bytes:
    """Any environment's replay (``pvnviz.envs.scene.Replay``), one panel per policy titled ``labels``, side by side or
    stacked as its layout says, with the page figure's axes; a finished episode holds its last frame."""
    columns, n = replay.layout == "columns", len(replay.panels)
    limits = []
    for panel in replay.panels:
        if replay.fit_aspect:  # one metre as long across as up, per panel (twice as wide as tall)
            points = replay.all_points(panel)
            limits.append(_equal_aspect(_limits(points[:, 0]), _limits(points[:, 1]), 2.0))
        else:
            limits.append((replay.x_range, replay.y_range))
    inner_w = PANEL if columns else 2 * PANEL
    cell_w, cell_h = inner_w + MARGIN["left"] + MARGIN["right"], PANEL // 2 + MARGIN["top"] + MARGIN["bottom"]
    width = n * cell_w if columns else cell_w
    height = (cell_h if columns else n * cell_h) + 30
    frames = []
    for t in theme.frame_steps(replay.num_frames, replay.frame_every):
        canvas = _canvas(width, height, f"time step {t}")
        for k, (panel, label) in enumerate(zip(replay.panels, labels)):
            left, top = (k * cell_w, 0) if columns else (0, k * cell_h)
            title = _fit(canvas, label, inner_w)
            box = Panel(canvas, _panel_box(left, top, cell_w, cell_h), *limits[k], title, replay.x_title,
                        replay.y_title)  # fmt: skip
            for part in panel.parts:
                _draw_part(box, part, t)
        frames.append(canvas)
    return encode(frames, duration_ms=replay.frame_ms)


def _fit(canvas: Canvas, text: str, width: float) -> str:
    """``text`` cut at a word to fit ``width`` pixels of title text (with an ellipsis when cut)."""
    if canvas.text_width(text, TITLE_PX) <= width:
        return text
    words = text.split()
    while words and canvas.text_width(" ".join(words) + " …", TITLE_PX) > width:
        words.pop()
    return " ".join(words) + " …"


def _draw_part(box: Panel, part: Part, t: int) -> None:
    """One part at time step t, styled by its role (``pvnviz.envs.scene.ROLES``) as ``figures.replay`` styles it."""
    points = part.points[0, : t + 1] if part.role == "trail" else part.at(t)  # a trail grows with the episode
    xs, ys = points[:, 0], points[:, 1]
    if part.role == "body":
        box.draw.polygon([(u * SS, v * SS) for u, v in (box.px(x, y) for x, y in zip(xs, ys))], fill="#888888",
                         outline=INK, width=SS)  # fmt: skip
    else:
        color, width = {"track": (theme.NEUTRAL, 1), "trail": (theme.EXACT, 1), "pole": ("#c8781e", 6)}.get(
            part.role, ("#c8781e", 5)
        )
        box.line(xs, ys, color, width)
        if part.role == "pole":  # its tip, marked larger as on the page
            box.dot(xs[-1], ys[-1], "#c8781e", 5)
        elif part.role == "links":
            for x, y in zip(xs, ys):
                box.dot(x, y, INK, 2.5)
