"""The page animations as GIF and MP4 files (``pvnviz.figures.gif``), decoded again by imageio and ffmpeg:
one frame per animation step, the longer episode setting a replay's length, the MP4 holding the GIF's frames."""

import imageio.v3 as iio
import numpy as np
import pytest

from pvnviz.envs.scene import Panel, Part, Replay
from pvnviz.figures import gif
from pvnviz.runs.files import load_result

pytestmark = pytest.mark.slow  # worker processes, page runs or subprocesses: `make test` runs it


@pytest.fixture(scope="module")
def quick_run():
    return load_result("data/cartpole-quick", "cartpole")


def test_gifs_decode_with_one_frame_per_animation_step(quick_run):
    trained = quick_run.trained["fingerprint"]
    frames = iio.imread(gif.probes_gif(trained, (0, 2)), index=None)
    assert frames.shape[0] == len(trained.snapshot_steps)
    rng = np.random.default_rng(0)
    track = Part("track", np.array([[[-2.4, 0.0], [2.4, 0.0]]]))
    short, long = (Panel((track, Part("pole", rng.normal(size=(n, 2, 2)))), n, f"{n} frames") for n in (21, 31))
    columns = Replay("t", (short, long), "x", "y", (-3, 3), (-1, 1), "columns", 2, 40, "")
    frames = iio.imread(gif.replay_gif(columns, ["a", "b"]), index=None)
    assert frames.shape[0] == 16  # steps 0, 2, ..., 30: the longer episode sets the length
    assert not np.array_equal(frames[0], frames[-1])
    stacked = [Panel((Part("links", rng.normal(size=(21, 4, 2))),), 21, "") for _ in range(2)]
    rows = Replay("t", tuple(stacked), "x", "y", None, None, "rows", 10, 50, "")
    frames = iio.imread(gif.replay_gif(rows, ["a", "b"]), index=None)
    assert frames.shape[0] == 3
    assert frames.shape[1] > frames.shape[2] / 2  # panels stacked: taller than a row of panels


def test_polytope_ascent_gif_has_a_frame_per_shown_step():
    from pvnviz.polytope.experiment import PolytopeConfig, exact_view

    exact = exact_view(PolytopeConfig(ascent_steps=30, num_polytope_points=200), 4)
    frames = iio.imread(gif.ascent_gif(exact), index=None)
    assert frames.shape[0] == 31


def test_mp4_export_holds_the_gifs_frames():
    """The MP4 download decodes (ffmpeg, independently of the encoder's code path) to the GIF's frames."""
    import imageio_ffmpeg

    from pvnviz.polytope.experiment import PolytopeConfig, exact_view

    animation = gif.ascent_gif(exact_view(PolytopeConfig(ascent_steps=30, num_polytope_points=200), 4))
    frames = iio.imread(animation, index=None)[..., :3].astype(int)
    video = gif.to_mp4(animation)
    reader = imageio_ffmpeg.read_frames(_tmp_file(video))
    meta = reader.__next__()
    width, height = meta["size"]
    assert width % 2 == 0 and height % 2 == 0 and width >= frames.shape[2] and height >= frames.shape[1]
    rows, cols = frames.shape[1:3]
    decoded = [np.frombuffer(f, np.uint8).reshape(height, width, 3)[:rows, :cols] for f in reader]
    assert len(decoded) == len(frames)
    for shown, original in ((decoded[0], frames[0]), (decoded[-1], frames[-1])):
        assert np.abs(shown.astype(int) - original).mean() < 8  # lossy H.264, same picture


def _tmp_file(data: bytes) -> str:
    import tempfile

    handle = tempfile.NamedTemporaryFile(suffix=".mp4", delete=False)
    handle.write(data)
    handle.close()
    return handle.name


def _ink_runs(row: np.ndarray) -> list[tuple[int, int]]:
    """(start, end) column runs of a grey image row (H, W) holding ink (darker than 200 somewhere in the column)."""
    inked = (row < 200).any(axis=0)
    runs, start = [], None
    for x, on in enumerate(inked):
        if on and start is None:
            start = x
        elif not on and start is not None:
            runs.append((start, x))
            start = None
    return runs + ([(start, len(inked))] if start is not None else [])


def _ascent_frames():
    from types import SimpleNamespace

    from pvnviz.polytope.experiment import PolytopeConfig, exact_view

    exact = exact_view(PolytopeConfig(ascent_steps=30, num_polytope_points=200), 4)
    learned = SimpleNamespace(ascent=exact.ascent)  # the same path: where they coincide the exact one must show
    return exact, iio.imread(gif.ascent_gif(exact, learned), index=None)[..., :3].astype(int)


def test_ascent_gif_carries_axes_ticks_legend_and_numbers_in_a_real_font():
    exact, frames = _ascent_frames()
    last = frames[-1]
    grey = last.mean(axis=2)
    height, width = grey.shape
    # the policy square's axes: a long dark vertical line (y axis) and horizontal line (x axis) in its panel
    left_panel = grey[:, : width // 2]
    assert ((left_panel < 160).sum(axis=0) > 0.5 * gif.PANEL).any(), "no y-axis line"
    assert ((left_panel < 160).sum(axis=1) > 0.5 * gif.PANEL).any(), "no x-axis line"
    # tick labels left of the y axis, below the x axis: ink in the margins
    axis_x = int(np.argmax((left_panel < 160).sum(axis=0)))
    assert (grey[: gif.PANEL, 10 : axis_x - 4] < 160).sum() > 100, "no tick labels on the y axis"
    # the legend: a row below the panels holding the exact path's blue and the learned path's orange
    legend = last[gif.PANEL + gif.MARGIN["top"] + gif.MARGIN["bottom"] : height - 30]
    for color in (theme_rgb("EXACT"), theme_rgb("LEARNED")):
        assert (np.abs(legend - color).sum(axis=2) < 60).sum() > 20, f"no legend swatch of {color}"
    # the caption names the step and each path's J, words apart: ink runs separated by gaps as wide as a space
    caption = grey[height - 26 : height - 4]
    runs = _ink_runs(caption)
    gaps = [b[0] - a[1] for a, b in zip(runs, runs[1:])]
    assert sum(gap >= 3 for gap in gaps) >= 8, gaps  # "ascent step 30 of 30: exact J = ..., learned J = ..."


def test_ascent_gif_draws_the_exact_path_over_the_learned_one():
    exact, frames = _ascent_frames()
    last = frames[-1]
    panels = last[: int(0.7 * len(last))]  # above the legend and the caption
    near = lambda c: (np.abs(panels - c).sum(axis=2) < 90).sum()  # noqa: E731
    assert near(theme_rgb("EXACT")) > 150  # the exact path shows along the whole path it shares with the learned one
    assert near(theme_rgb("LEARNED")) > 150  # and the learned one beside it


def test_replay_gif_lines_are_antialiased():
    """A slanted pole is drawn with intermediate shades along its edges, not as a two-colour staircase."""
    pole = np.array([[[0.0, 0.0], [0.7, 0.9]]])  # one frame, slanted
    track = Part("track", np.array([[[-2.4, 0.0], [2.4, 0.0]]]))
    replay = Replay("t", (Panel((track, Part("pole", pole)), 1, "x"),), "x", "y", (-1, 1), (-0.2, 1.2), "columns",
                    1, 40, "")  # fmt: skip
    frame = iio.imread(gif.replay_gif(replay, ["a"]), index=None)[0][..., :3].astype(int)
    pole_rgb = np.array([0xC8, 0x78, 0x1E])
    shades = frame.reshape(-1, 3)
    between = [
        c for c in np.unique(shades, axis=0) if 40 < np.abs(c - pole_rgb).sum() < np.abs(c - 255).sum() + 300
        and c[0] > c[2] + 30  # orange-ish: between the pole's colour and the white background
    ]  # fmt: skip
    assert len(between) >= 6, len(between)


def theme_rgb(name: str) -> np.ndarray:
    from pvnviz.figures import theme

    value = getattr(theme, name)
    return np.array([int(value[i : i + 2], 16) for i in (1, 3, 5)])


def test_gif_text_has_no_empty_glyph_boxes():
    """Labels hold arrows and Greek letters (x (m), forward →; π=(a1,a2); Ĵ): each is drawn with a glyph of the font,
    or spelled out where the font has none, never as the font's empty box."""
    face = gif.font(gif.FONT_PX)
    empty = bytes(face.getmask("\ue000"))
    for label in ("x (m), forward →", "π=(a1,a2)", "PVN's Ĵ", "pole angle θ"):
        shown = gif.drawable(label)
        assert all(c.isascii() or bytes(face.getmask(c)) != empty for c in shown), (label, shown)
        assert shown.replace(" ", "") != "" and "forward" in gif.drawable("x (m), forward →")


def test_without_a_system_font_missing_glyphs_are_spelled_out(monkeypatch):
    monkeypatch.setattr(gif, "FONT_FILES", ())
    gif.font.cache_clear()
    gif.drawable.cache_clear()
    try:
        assert gif.drawable("forward →") == "forward ->"  # Pillow's bundled font has no arrow
        assert gif.Canvas(10, 10).text_width("a b") > gif.Canvas(10, 10).text_width("ab") + 2  # a space is a space
    finally:
        gif.font.cache_clear()
        gif.drawable.cache_clear()
