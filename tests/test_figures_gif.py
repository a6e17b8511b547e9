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
